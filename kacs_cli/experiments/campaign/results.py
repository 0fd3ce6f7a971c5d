"""The results folder of a campaign: the one module that knows its files, their columns and formats.

Layout (`kacs run --out`)::

    engine.yaml                          what produced the rows: engine fingerprint, kernels, commit
    config.yaml                          the resolved config (every hyperparameter)
    runs.csv                             one row per finished run, RUN_COLUMNS, in result order
    runs/<cell>__<method>__<run>.json    the finished run's row: the mark of completion
    curves/<cell>__<method>__<run>.csv   its learning curve (engine CURVE_COLUMNS)
    curves.csv.gz                        every finished run's curve, compact (curvestore.py)
    populations/<cell>__<method>__<run>.csv   its final rules
    .lock                                held by the campaign writing the folder

Every file is written to a temporary name and moved into place with os.replace, the
record last, so a run killed at any instant is either complete on disk or redone on the
next start. The campaign's parent process writes every file; workers only compute.
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

import pandas as pd
import yaml

from kacs_cli import atomic
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import metrics
from kacs_cli.experiments.campaign.resolved import Include, ResolvedCell

try:
    import fcntl
except ImportError:  # not POSIX: campaigns run without the folder lock
    fcntl = None

CONFIG_FILE = "config.yaml"
ENGINE_FILE = "engine.yaml"
RUNS_FILE = "runs.csv"
LOCK_FILE = ".lock"
RECORD_DIR = "runs"
CURVE_DIR = "curves"
POPULATION_DIR = "populations"
AGGREGATE_FILE = "curves.csv.gz"
RUN_DIRS = (RECORD_DIR, CURVE_DIR, POPULATION_DIR)
# What --force deletes: the runner's own files, nothing else a user keeps in the folder.
OWNED = (ENGINE_FILE, CONFIG_FILE, RUNS_FILE, *RUN_DIRS, AGGREGATE_FILE)


def _count_column(least: int):
    """A RunRecord field written as a whole number >= least (an empty field where a run has none)."""
    return field(metadata={"least": least})


@dataclass
class RunRecord:
    """One finished run as its record file and its runs.csv row hold it, for a learner and a
    baseline alike: what says which run it is and how it ran (these fields, in runs.csv's
    order), then what it measured (metrics.py declares each column)."""

    experiment: str
    benchmark: str                    # the cell label
    variant: str                      # "" for the plain function
    method: str
    run: int = _count_column(0)
    split_seed: int = _count_column(0)
    seed: int = _count_column(0)
    n: int = _count_column(1)
    samples: int = _count_column(1)
    N: int | None = _count_column(1)             # the budget; None for a baseline
    iterations: int | None = _count_column(1)
    # metrics.FINAL and SECONDS always, metrics.OPTIONAL where the run measured them.
    measured: dict
    final_N: int | None = _count_column(1)       # the budget at the end (N unless adaptive)

    def as_dict(self) -> dict:
        """The record file's content: RUN_COLUMNS, then the OPTIONAL_COLUMNS the run has."""
        head = {f.name: getattr(self, f.name) for f in _RECORD_FIELDS if f.name != "measured"}
        out = {c: head[c] if c in head else self.measured[c] for c in RUN_COLUMNS}
        out.update((c, self.measured[c]) for c in OPTIONAL_COLUMNS if c in self.measured)
        return out


_RECORD_FIELDS = fields(RunRecord)
# runs.csv's columns: the record's fields with the metrics every run has in place of `measured`.
RUN_COLUMNS = tuple(c for f in _RECORD_FIELDS for c in (
    (*(m.name for m in metrics.FINAL), metrics.SECONDS.name) if f.name == "measured" else (f.name,)))
# Columns only some runs have (a refined KACS: its evolved errors and the refinement's work).
# runs.csv carries one only when some run of the folder has it, so the runs.csv of a folder
# without such runs has none of these columns; the other rows leave it empty.
OPTIONAL_COLUMNS = tuple(m.name for m in metrics.OPTIONAL)
# The counts among the record's fields, each with the least value it may take.
COUNT_COLUMNS = {f.name: f.metadata["least"] for f in _RECORD_FIELDS if "least" in f.metadata}
INT_COLUMNS = (*COUNT_COLUMNS, *(m.name for m in metrics.ALL if m.integer))
# The columns that say which run a row is (the rest are what it measured).
IDENTITY_COLUMNS = ("benchmark", "method", "run", "split_seed", "seed")


def row_identity(row: dict) -> tuple:
    """The IDENTITY_COLUMNS values of a record or runs.csv row, typed as a RunRef's identity."""
    return tuple(int(row[c]) if c in COUNT_COLUMNS else str(row[c]) for c in IDENTITY_COLUMNS)


class RunRef(Protocol):
    """A run as the folder knows it: its key (the stem of its files) and its IDENTITY_COLUMNS values."""

    @property
    def key(self) -> str: ...

    @property
    def identity(self) -> tuple: ...


@dataclass
class RunOutput:
    """What one finished run leaves in the folder."""

    key: str
    record: dict
    curve: pd.DataFrame
    population: pd.DataFrame


def run_key(cell: str, method: str, run: int | str) -> str:
    """The stem of a run's record, curve and population files: <cell>__<method>__<run>."""
    return f"{cell}__{method}__{run}"


def parse_run_key(stem: str) -> tuple[str, str, int] | None:
    """(cell, method, run) of a file stem written by `run_key`; None for any other name."""
    parts = stem.rsplit("__", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return parts[0], parts[1].lower(), int(parts[2])


# --------------------------------------------------------------------------- what a folder holds


def config_path(folder: Path) -> Path:
    return Path(folder) / CONFIG_FILE


def runs_path(folder: Path) -> Path:
    return Path(folder) / RUNS_FILE


def aggregate_path(folder: Path) -> Path:
    return Path(folder) / AGGREGATE_FILE


def has_runs(folder: Path) -> bool:
    """A runs.csv marks an experiment folder (the report's, the include's and the index's test)."""
    return runs_path(folder).is_file()


def is_results_folder(folder: Path) -> bool:
    """A finished campaign's folder as `reuse:` needs it: its resolved config and its runs."""
    return config_path(folder).is_file() and has_runs(folder)


def has_records(folder: Path) -> bool:
    records = Path(folder) / RECORD_DIR
    return records.is_dir() and any(records.iterdir())


class UnreadableConfig(UserError):
    """A folder's config.yaml that cannot be read, is not YAML or holds no settings; the
    message names the file and the reason, the caller says what to do about it."""


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _names(value: Any) -> tuple[str, ...]:
    """Method names, lower case, from a list (of names or {name: ...}), a text or a mapping."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, dict):
        items = list(value)
    elif isinstance(value, (list, tuple)):
        items = [m.get("name", m.get("method")) if isinstance(m, dict) else m for m in value]
    else:
        items = []
    return tuple(str(m).strip().lower() for m in items if m is not None and str(m).strip())


@dataclass(frozen=True)
class ResolvedConfig:
    """A results folder's config.yaml: what `kacs run` writes there (ExperimentConfig.to_yaml,
    every hyperparameter spelled out), read in one place for the runner, `reuse:` and the
    report. The report also reads folders whose config was written by hand, so every field
    may be absent: a setting of another form reads as None (or empty), not as an error."""

    # Every key as written: the runner compares two configs by all of them, and a run's
    # identity (reuse.py) is all of them.
    data: dict
    experiment: str | None
    protocol: str                   # the protocol's name, lower case ("" when none is named)
    runs: int | None                # the protocol's run count
    iterations: int | None
    semantics: str | None
    methods: tuple[str, ...]
    # The runner's cells, those written as a mapping with a label; None where the file lists
    # none (a hand-written config lists `benchmarks` instead).
    cells: tuple[ResolvedCell, ...] | None
    benchmarks: tuple[Any, ...]     # a hand-written config's benchmark entries, as written
    method_engines: dict            # method label -> its engine or baseline, where they differ
    includes: tuple[Include, ...]   # `report: {include: ...}` entries naming an experiment

    @classmethod
    def of(cls, data: dict) -> "ResolvedConfig":
        protocol = data.get("protocol")
        name = protocol.get("name") if isinstance(protocol, dict) else protocol
        cells = data.get("cells")
        report = data.get("report")
        includes = report.get("include") if isinstance(report, dict) else None
        if isinstance(includes, dict):
            includes = [includes]
        return cls(
            data=data,
            experiment=None if data.get("experiment") is None else str(data["experiment"]),
            protocol=str(name).strip().lower() if name else "",
            runs=_count(protocol.get("runs")) if isinstance(protocol, dict) else None,
            iterations=_count(data.get("iterations")),
            semantics=None if data.get("semantics") is None else str(data["semantics"]),
            methods=_names(data.get("methods")),
            cells=(tuple(ResolvedCell.of(c) for c in cells if isinstance(c, dict) and c.get("label"))
                   if isinstance(cells, list) else None),
            benchmarks=tuple(data["benchmarks"]) if isinstance(data.get("benchmarks"), list) else (),
            method_engines=data.get("method_engines") if isinstance(data.get("method_engines"), dict) else {},
            includes=tuple(Include.of(i) for i in includes or () if isinstance(i, dict) and i.get("experiment")),
        )

    @classmethod
    def parse(cls, text: str, path: Path | str = CONFIG_FILE) -> "ResolvedConfig":
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UnreadableConfig(f"{path} is not valid YAML ({exc.__class__.__name__})") from None
        if not isinstance(data, dict):
            raise UnreadableConfig(f"{path} holds no settings (not a YAML mapping), so it is no config "
                                   f"`kacs run` wrote")
        return cls.of(data)

    @classmethod
    def read(cls, folder: Path) -> "ResolvedConfig | None":
        """The folder's config.yaml, None when there is none; UnreadableConfig when it cannot
        be read, is not YAML or holds no settings."""
        path = config_path(folder)
        if not path.is_file():
            return None
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UnreadableConfig(f"cannot read {path} ({exc})") from None
        return cls.parse(text, path)

    def with_cells(self, cells: Iterable[ResolvedCell]) -> "ResolvedConfig":
        """These settings with other cells."""
        return ResolvedConfig.of({**self.data, "cells": [c.written for c in cells]})

    def without_runs(self) -> dict:
        """The settings without the run count, which may grow in a finished folder: run r has
        the same seeds whatever the count."""
        if self.runs is None:
            return self.data
        return {**self.data, "protocol": {k: v for k, v in self.data["protocol"].items() if k != "runs"}}


def write_config(folder: Path, text: str) -> None:
    """config.yaml: `text` is ExperimentConfig.to_yaml(), which ResolvedConfig reads back."""
    atomic.write_text(config_path(folder), text)


# --------------------------------------------------------------------------- engine.yaml


def engine_path(folder: Path) -> Path:
    return Path(folder) / ENGINE_FILE


_ENGINE_HEADER = (
    "# What produced the rows of this folder (docs/results-folder.md):\n"
    "# resuming here or copying these rows with `reuse:` under another engine fingerprint or\n"
    "# BLAS kernel family is refused unless --allow-engine-change.\n"
)


def write_engine_record(folder: Path, record: dict) -> None:
    """engine.yaml: `record` is provenance.EngineRecord.as_dict()."""
    atomic.write_text(engine_path(folder), _ENGINE_HEADER + yaml.safe_dump(record, sort_keys=False))


def read_engine_record(folder: Path) -> dict | None:
    """The folder's engine.yaml as written; None when there is none (a folder written before
    the record existed); a UserError when it cannot be read or holds no mapping."""
    path = engine_path(folder)
    if not path.is_file():
        return None
    fix = (f"restore it, or delete it and the folder counts as one written before the record existed "
           f"(docs/results-folder.md)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"cannot read {path} ({exc.__class__.__name__}); {fix}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} holds no engine record (not a YAML mapping); {fix}")
    return data


# --------------------------------------------------------------------------- runs.csv


def read_runs_csv(path: Path) -> pd.DataFrame:
    """A runs.csv as a frame, every row checked first; a damaged row is a UserError naming its line.

    pandas pads a short row with NaN, so unchecked, a truncated last line (`main,f`) would read
    as a run of a phantom cell (benchmark "f", method "nan"). Columns a runs.csv lacks are the
    reader's business (the report shows them as n/a).
    """
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is not None:
                for row in reader:
                    if row:
                        _check_runs_row(path, reader.line_num, header, row)
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text, so not a runs.csv written by `kacs run`; "
                        f"restore it or rerun the campaign") from None
    except csv.Error as exc:
        raise UserError(f"{path}: not a readable CSV ({exc}); restore it or rerun the campaign") from None
    return pd.read_csv(path)


def _check_runs_row(path: Path, line: int, header: list[str], row: list[str]) -> None:
    """The fields that say which run a row is; the metrics are the reader's to judge."""
    fix = "fix or delete that line (`kacs run` redoes a run whose row and record are gone)"
    if len(row) != len(header):
        raise UserError(f"{path}:{line}: {len(row)} fields where the header has {len(header)} (a cut "
                        f"or hand-edited row); {fix}")
    values = dict(zip(header, (v.strip() for v in row)))
    for name in ("benchmark", "method"):
        if name in values and not values[name]:
            raise UserError(f"{path}:{line}: the {name} is empty; {fix}")
    if "run" in values:
        try:
            ok = float(values["run"]).is_integer() and float(values["run"]) >= 0
        except ValueError:
            ok = False
        if not ok:
            raise UserError(f"{path}:{line}: run is {values['run']!r}, not a run number (0, 1, ...); {fix}")


def fill_later_columns(record: dict) -> None:
    """A run finished before `final_N` was recorded had a fixed budget: final_N = N (such a
    record or runs.csv row still counts as a finished run)."""
    if "final_N" not in record and "N" in record:
        record["final_N"] = record["N"]


def run_row(record: dict) -> dict:
    """The values of a record that runs.csv holds: RUN_COLUMNS and the OPTIONAL_COLUMNS it has
    (an empty optional field, as pandas reads it back, is not had)."""
    row = {c: record[c] for c in RUN_COLUMNS}
    for c in OPTIONAL_COLUMNS:
        value = record.get(c)
        if value is not None and not (isinstance(value, float) and value != value):
            row[c] = value
    return row


def records_frame(records: dict[str, dict], order: Sequence[str]) -> pd.DataFrame:
    """runs.csv content: RUN_COLUMNS, then the OPTIONAL_COLUMNS some record has, one row per
    record, in the order of the run keys `order` (the config's result order: cell, method,
    run)."""
    if not records:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    ordered = set(order)
    keys = [k for k in order if k in records] + [k for k in records if k not in ordered]
    rows = [run_row(records[k]) for k in keys]
    columns = [*RUN_COLUMNS, *(c for c in OPTIONAL_COLUMNS if any(c in r for r in rows))]
    frame = pd.DataFrame(rows, columns=columns)
    for c in (c for c in INT_COLUMNS if c in columns):
        # Nullable: a baseline has no rules, budget or iterations, written as empty fields.
        frame[c] = pd.to_numeric(frame[c]).astype("Int64")
    return frame


def write_runs_csv(out: Path, records: dict[str, dict], order: Sequence[str]) -> pd.DataFrame:
    frame = records_frame(records, order)
    _write_csv(runs_path(out), frame)
    return frame


# --------------------------------------------------------------------------- per-run files


def _write_csv(path: Path, frame: pd.DataFrame) -> None:
    with atomic.replacing(path) as tmp:
        frame.to_csv(tmp, index=False)


_SUFFIX = {RECORD_DIR: ".json", CURVE_DIR: ".csv", POPULATION_DIR: ".csv"}


def _run_file(out: Path, folder: str, key: str) -> Path:
    return Path(out) / folder / f"{key}{_SUFFIX[folder]}"


def write_curve(out: Path, key: str, curve: pd.DataFrame) -> None:
    _write_csv(_run_file(out, CURVE_DIR, key), curve)


def curve_files(folder: Path) -> list[Path]:
    """The per-run curve files of a folder, sorted by name."""
    curves = Path(folder) / CURVE_DIR
    return sorted(curves.glob("*.csv")) if curves.is_dir() else []


def save_output(out: Path, output: RunOutput) -> None:
    """Curve, population, then the record: the record's presence means the run is complete."""
    try:
        write_curve(out, output.key, output.curve)
        _write_csv(_run_file(out, POPULATION_DIR, output.key), output.population)
        # json writes NaN as a bare token (cover_rate_inner/outer of XCSF); json.loads reads it back.
        atomic.write_text(_run_file(out, RECORD_DIR, output.key), json.dumps(output.record, indent=1) + "\n")
    except BaseException:
        # A failed write (disk full, no permission) or a stop midway: no curve or population
        # without its record, which a report would otherwise draw as a run not in runs.csv.
        for folder in (CURVE_DIR, POPULATION_DIR):
            try:
                _run_file(out, folder, output.key).unlink(missing_ok=True)
            except OSError:
                pass
        raise


def load_records(out: Path, runs: Iterable[RunRef]) -> dict[str, dict]:
    """Finished runs among `runs`: a readable record that matches the run, with its files."""
    runs = list(runs)
    found: dict[str, dict] = {}
    for run in runs:
        path = _run_file(out, RECORD_DIR, run.key)
        if not path.is_file():
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable: the run is simply done again
        if not isinstance(record, dict):
            continue
        fill_later_columns(record)
        if any(c not in record for c in RUN_COLUMNS):
            continue
        if tuple(record[c] for c in IDENTITY_COLUMNS) != run.identity:
            continue
        if not (_run_file(out, CURVE_DIR, run.key).is_file() and _run_file(out, POPULATION_DIR, run.key).is_file()):
            continue
        found[run.key] = record
    found.update(_runs_csv_records(out, runs, found))
    return found


def _runs_csv_records(out: Path, runs: Iterable[RunRef], found: dict[str, dict]) -> dict[str, dict]:
    """Rows of an existing runs.csv whose run records are absent: finished runs all the same.

    runs.csv only ever holds finished runs, and a results folder may be shipped without the
    per-run records, curves and populations (as results/paper/ is committed). Without this,
    resuming there would rewrite runs.csv from nothing and redo every run.
    """
    path = runs_path(out)
    if not path.is_file():
        return {}
    try:
        frame = read_runs_csv(path)
    except UserError:
        raise  # a damaged row: guessing which runs it held would redo or lose them
    except (OSError, ValueError):
        return {}
    if "final_N" not in frame.columns and "N" in frame.columns:
        frame["final_N"] = frame["N"]
    if any(c not in frame.columns for c in RUN_COLUMNS) or frame.empty:
        return {}
    frame["variant"] = frame["variant"].astype(object).where(frame["variant"].notna(), "").astype(str)
    columns = [*RUN_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in frame.columns)]
    rows = {
        row_identity(r): run_row(r)
        for r in frame[columns].to_dict("records")
    }
    extra: dict[str, dict] = {}
    for run in runs:
        if run.key in found:
            continue
        row = rows.get(run.identity)
        if row is not None:
            extra[run.key] = row
    return extra


# --------------------------------------------------------------------------- the folder itself


def clear(out: Path) -> None:
    """Delete the runner's own files in `out` (--force), and nothing else."""
    for name in OWNED:
        target = Path(out) / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def make_run_dirs(out: Path) -> None:
    """The per-run folders, emptied of the temporary files of a killed campaign (their runs
    will be redone)."""
    out = Path(out)
    try:
        for sub in RUN_DIRS:
            (out / sub).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the output folder {out}: {exc.strerror or exc}; choose another --out") from None
    for sub in (out, *(out / d for d in RUN_DIRS)):
        for tmp in sub.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)


class exclusive:
    """Hold an advisory lock on the output folder: two campaigns writing (or one --force
    deleting) the same folder at once would waste work or remove the other's results. The
    kernel drops the lock when the process dies, even by SIGKILL."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self._fh = None

    def __enter__(self):
        if fcntl is None:
            return self
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.out / LOCK_FILE, "a")
        except OSError as exc:
            raise UserError(f"cannot create the output folder {self.out}: {exc.strerror or exc}; "
                            f"choose another --out") from None
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._fh.close()
            self._fh = None
            raise UserError(f"another `kacs run` is writing to {self.out} right now; wait for it to "
                            f"finish or choose another --out") from None
        return self

    def __exit__(self, *exc):
        if self._fh is not None:
            self._fh.close()  # closing releases the lock
        return False
