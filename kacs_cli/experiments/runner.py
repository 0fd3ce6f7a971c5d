"""The experiment runner: tasks of a resolved config, fan-out, resumable atomic results.

A task is one run: (cell, method, run index) with the split seed and learner seed of the
protocol's run plan. Both methods of one run share the split seed, so XCSF and KACS see
the identical split (SPEC section 9).

Output folder layout (`--out`)::

    config.yaml                          the resolved config (every hyperparameter)
    runs.csv                             one row per finished run, RUN_COLUMNS, sorted
    runs/<cell>__<method>__<run>.json    the finished run's row: the mark of completion
    curves/<cell>__<method>__<run>.csv   its learning curve (engine CURVE_COLUMNS)
    curves.csv.gz                        every finished run's curve, compact (kacs_cli.experiments.curvestore)
    populations/<cell>__<method>__<run>.csv   its final rules

Every file is written to a temporary name and moved into place with os.replace, the
record last, so a run killed at any instant is either complete on disk or redone on the
next start. Workers only compute; the parent process writes every file, so a Dask worker
on another machine needs the data but not the output folder.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import os
import shutil
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pandas as pd
import yaml

from kacs_cli import atomic, baselines
from kacs_cli.experiments import reuse
from kacs_cli.experiments.config import Cell, ExperimentConfig
from kacs_cli.engine import registry
from kacs_cli.experiments.curvestore import AGGREGATE_FILE  # the compact curves committed with results
from kacs_cli.errors import UserError
from kacs_cli.experiments.protocols import Protocol, make_split

RUN_COLUMNS = (
    "experiment", "benchmark", "variant", "method", "run", "split_seed", "seed", "n", "samples",
    "N", "iterations", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro",
    "params", "aic", "cover_rate", "cover_rate_inner", "cover_rate_outer", "seconds", "final_N",
)
# final_N came after results were committed: a record or runs.csv without it still counts as
# a finished run, with final_N = N (a fixed budget; see `_fill_later_columns`).
FINAL_KEYS = (
    "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params", "aic",
    "cover_rate", "cover_rate_inner", "cover_rate_outer",
)
INT_COLUMNS = ("run", "split_seed", "seed", "n", "samples", "N", "iterations", "rules", "micro", "params",
               "final_N")

CONFIG_FILE = "config.yaml"
RUNS_FILE = "runs.csv"
LOCK_FILE = ".lock"
RECORD_DIR = "runs"
CURVE_DIR = "curves"
POPULATION_DIR = "populations"
OWNED = (CONFIG_FILE, RUNS_FILE, RECORD_DIR, CURVE_DIR, POPULATION_DIR, AGGREGATE_FILE)

BACKENDS = ("local", "dask")
# runs.csv is rebuilt from the finished records at most this often during a campaign
# (and always at the end), so a long campaign can be inspected while it runs.
RUNS_CSV_EVERY_S = 10.0


# --------------------------------------------------------------------------- tasks


@dataclass(frozen=True, eq=False)
class Task:
    cell: Cell
    method: str
    run: int
    split_seed: int
    seed: int
    cost: float = 0.0  # rough relative duration, only for longest-first scheduling

    @property
    def key(self) -> str:
        return f"{self.cell.label}__{self.method}__{self.run}"


@dataclass(frozen=True)
class RunSettings:
    """What every task of a campaign shares; sent to the workers with each task."""

    experiment: str
    protocol: Protocol
    iterations: int
    eval_every: int
    data_dir: str | None
    # The baselines of the campaign (baselines.Spec), imported by each worker before its
    # first run: loky restarts a worker whose memory grows by 300 MB after its first task,
    # as importing torch for a later `kan` run does, and no run's seconds include imports.
    preload: tuple = ()


@dataclass
class TaskOutput:
    key: str
    record: dict
    curve: pd.DataFrame
    population: pd.DataFrame


def select_cells(config: ExperimentConfig, benchmarks: Iterable[str] | None) -> list[Cell]:
    """Cells picked by --benchmarks: a term matches a cell label or a benchmark name."""
    if not benchmarks:
        return list(config.cells)
    terms = [t.strip() for t in benchmarks if t and t.strip()]
    chosen: list[Cell] = []
    for term in terms:
        hits = [c for c in config.cells if term.lower() in (c.label.lower(), c.benchmark.lower())]
        if not hits:
            known = ", ".join(dict.fromkeys([c.label for c in config.cells] + [c.benchmark for c in config.cells]))
            raise UserError(f"--benchmarks: {term!r} is not in experiment {config.experiment}; choose from {known}")
        chosen.extend(c for c in hits if c not in chosen)
    return [c for c in config.cells if c in chosen]


def select_methods(config: ExperimentConfig, methods: Iterable[str] | None) -> list[str]:
    if not methods:
        return list(config.methods)
    chosen = []
    for m in methods:
        key = m.strip().lower()
        if not key:
            continue
        if key not in config.methods:
            raise UserError(f"--methods: {m!r} is not a method of experiment {config.experiment}; "
                            f"choose from {', '.join(config.methods)}")
        if key not in chosen:
            chosen.append(key)
    if not chosen:
        raise UserError(f"--methods: name at least one of {', '.join(config.methods)}")
    return [m for m in config.methods if m in chosen]


def expand_tasks(
    config: ExperimentConfig,
    cells: Iterable[Cell] | None = None,
    methods: Iterable[str] | None = None,
) -> list[Task]:
    """Tasks in result order: cell order, then method order, then run."""
    cells = list(config.cells if cells is None else cells)
    methods = list(config.methods if methods is None else methods)
    plan = config.plan()
    return [
        Task(cell, method, run, split_seed, seed)
        for cell in cells
        for method in methods
        if not cell.methods or method in cell.methods
        for run, split_seed, seed in plan
    ]


def estimate_cost(task: Task, iterations: int, eval_every: int, rows: int, n: int) -> float:
    """Relative run time, only to start the longest runs first.

    Per iteration as the learner's registry entry estimates it (`Learner.cost`). Evaluation
    passes over all rows add the rest (what makes CCPP's 9568 rows slow).
    """
    baseline = baselines.find(task.cell.engine(task.method))
    if baseline is not None:  # one batch fit, whatever the iterations
        return baseline.cost(rows, n)
    N = task.cell.params[task.method].N
    per_iteration = registry.get(task.cell.engine(task.method)).cost(n, N)
    evaluations = iterations // eval_every + 1
    return iterations * per_iteration + evaluations * rows * per_iteration * 0.3


# --------------------------------------------------------------------------- data


# Per-process cache: a worker runs many tasks on the same dataset, and reading CCPP or
# generating f3 at n = 20 for each of them would be wasted work.
_DATA_CACHE: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def load_cell_data(cell: Cell, data_dir: str | Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a cell, loaded or generated once per process."""
    from kacs_cli.experiments import benchmarks, datasets

    key = (cell.dataset_id, str(datasets.resolve_data_dir(data_dir)) if cell.kind == "dataset" else None)
    if key not in _DATA_CACHE:
        if cell.kind == "function":
            X, y = benchmarks.generate(cell.benchmark, cell.n, cell.samples, seed=cell.dataset_seed,
                                       variant=cell.variant)
        elif cell.kind == "dataset":
            X, y = datasets.load_dataset(cell.benchmark, data_dir)
        else:
            X, y = datasets.load_dataset(Path(cell.path), data_dir)
        X.setflags(write=False)
        y.setflags(write=False)
        _DATA_CACHE[key] = (X, y)
    return _DATA_CACHE[key]


def missing_data(cells: Iterable[Cell], data_dir: str | Path | None) -> list[Cell]:
    """Cells whose data file is absent (or fails its checksum); generated cells never are."""
    from kacs_cli.experiments import datasets

    out = []
    for cell in cells:
        if cell.kind == "dataset" and datasets.missing_datasets([cell.benchmark], data_dir):
            out.append(cell)
        elif cell.kind == "csv" and not Path(cell.path).is_file():
            out.append(cell)
    return out


def _missing_message(missing: list[Cell], data_dir: str | Path | None) -> str:
    from kacs_cli.experiments import datasets

    named = list(dict.fromkeys(c.benchmark for c in missing if c.kind == "dataset"))
    files = list(dict.fromkeys(c.path for c in missing if c.kind == "csv"))
    parts = []
    if named:
        where = datasets.resolve_data_dir(data_dir)
        parts.append(
            f"missing dataset(s) {', '.join(named)} in {where} (absent, or not matching the registry "
            f"checksum): get them with `kacs data fetch` "
            f"(needs internet) or `kacs data import DIR` (from a folder holding the CSVs), or point "
            f"--data-dir / ${datasets.DATA_DIR_ENV} at the folder that has them"
        )
    if files:
        parts.append(f"CSV file(s) not found: {', '.join(files)} (check the path in the config)")
    return "; ".join(parts) + "; or pass --skip-missing to run the other benchmarks"


# --------------------------------------------------------------------------- one run


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


def _record_head(task: Task, settings: RunSettings, X: np.ndarray) -> dict:
    """The columns that say which run a record is, shared by learners and baselines."""
    return {
        "experiment": settings.experiment,
        "benchmark": task.cell.label,
        "variant": task.cell.variant or "",
        "method": task.method,
        "run": task.run,
        "split_seed": task.split_seed,
        "seed": task.seed,
        "n": int(X.shape[1]),
        "samples": int(X.shape[0]),
    }


def execute_task(task: Task, settings: RunSettings) -> TaskOutput:
    """Train one run and return its record, curve and population (nothing is written here)."""
    from kacs_cli.engine.train import train_run

    cell = task.cell
    baselines.preload(settings.preload)
    X, y = load_cell_data(cell, settings.data_dir)
    split = make_split(X, y, settings.protocol, task.split_seed, settings.protocol.train_fraction)
    params = cell.params[task.method]
    if baselines.find(cell.engine(task.method)) is not None:
        return _execute_baseline(task, settings, X, split)
    result = train_run(
        cell.engine(task.method), split.X_train, split.y_train, split.X_test, split.y_test,
        params=params, iterations=settings.iterations, eval_every=settings.eval_every, seed=task.seed,
    )
    record = _record_head(task, settings, X)
    record["N"] = int(params.N)
    record["iterations"] = settings.iterations
    for key in FINAL_KEYS:
        record[key] = _plain(result.final[key])
    for key in ("rules", "micro", "params"):
        record[key] = int(record[key])
    record["seconds"] = float(result.seconds)
    # The budget at the end of the run: N itself unless budget: adaptive grew it.
    record["final_N"] = int(result.final["final_N"])
    return TaskOutput(task.key, record, result.curve, result.population)


def _execute_baseline(task: Task, settings: RunSettings, X: np.ndarray, split) -> TaskOutput:
    """One run of a baseline (kacs_cli/baselines): fitted once on the run's split, with the
    run's learner seed; the learners' metrics, no curve, no rules (empty fields)."""
    from kacs_cli.engine.train import CURVE_COLUMNS, aic

    spec = task.cell.params[task.method]
    fitted = baselines.fit_predict(spec, task.seed, split.X_train, split.y_train, split.X_test)
    record = _record_head(task, settings, X)
    record.update(N=None, iterations=spec.iterations)
    record["train_mae"], record["train_mse"] = baselines.errors(fitted.y_train, split.y_train)
    record["test_mae"], record["test_mse"] = baselines.errors(fitted.y_test, split.y_test)
    record.update(rules=None, micro=None, params=fitted.params)
    record["aic"] = (math.nan if fitted.params is None
                     else float(aic(split.X_train.shape[0], record["train_mse"], fitted.params)))
    for key in ("cover_rate", "cover_rate_inner", "cover_rate_outer"):
        record[key] = math.nan
    record["seconds"] = float(fitted.seconds)
    record["final_N"] = None
    return TaskOutput(task.key, record, pd.DataFrame(columns=list(CURVE_COLUMNS)), pd.DataFrame())


# --------------------------------------------------------------------------- files


def _write_csv_atomic(path: Path, frame: pd.DataFrame) -> None:
    with atomic.replacing(path) as tmp:
        frame.to_csv(tmp, index=False)


def save_output(out: Path, output: TaskOutput) -> None:
    """Curve, population, then the record: the record's presence means the run is complete."""
    _write_csv_atomic(out / CURVE_DIR / f"{output.key}.csv", output.curve)
    _write_csv_atomic(out / POPULATION_DIR / f"{output.key}.csv", output.population)
    # json writes NaN as a bare token (cover_rate_inner/outer of XCSF); json.loads reads it back.
    atomic.write_text(out / RECORD_DIR / f"{output.key}.json", json.dumps(output.record, indent=1) + "\n")


def load_records(out: Path, tasks: Iterable[Task]) -> dict[str, dict]:
    """Finished runs among `tasks`: a readable record that matches the task, with its files."""
    found: dict[str, dict] = {}
    for task in tasks:
        path = out / RECORD_DIR / f"{task.key}.json"
        if not path.is_file():
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable: the run is simply done again
        if not isinstance(record, dict):
            continue
        _fill_later_columns(record)
        if any(c not in record for c in RUN_COLUMNS):
            continue
        if (record["benchmark"], record["method"], record["run"], record["split_seed"], record["seed"]) != (
            task.cell.label, task.method, task.run, task.split_seed, task.seed
        ):
            continue
        if not (out / CURVE_DIR / f"{task.key}.csv").is_file() or not (out / POPULATION_DIR / f"{task.key}.csv").is_file():
            continue
        found[task.key] = record
    found.update(_runs_csv_records(out, tasks, found))
    return found


def read_runs_csv(path: Path) -> pd.DataFrame:
    """A runs.csv as a frame, every row checked first; a damaged row is a UserError naming its line.

    pandas pads a short row with NaN, so a hand-truncated last line (`main,f`) became a run of
    a phantom cell (benchmark "f", method "nan") in the report, and a crash in the runner.
    Columns a runs.csv lacks are the reader's business (the report shows them as n/a).
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


def _runs_csv_records(out: Path, tasks: Iterable[Task], found: dict[str, dict]) -> dict[str, dict]:
    """Rows of an existing runs.csv whose run records are absent: finished runs all the same.

    runs.csv only ever holds finished runs, and a results folder may be shipped without the
    per-run records, curves and populations (as results/paper/ is committed). Without this,
    resuming there would rewrite runs.csv from nothing and redo every run.
    """
    path = out / RUNS_FILE
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
    rows = {
        (r["benchmark"], r["method"], int(r["run"]), int(r["split_seed"]), int(r["seed"])): r
        for r in frame[list(RUN_COLUMNS)].to_dict("records")
    }
    extra: dict[str, dict] = {}
    for task in tasks:
        if task.key in found:
            continue
        row = rows.get((task.cell.label, task.method, task.run, task.split_seed, task.seed))
        if row is not None:
            extra[task.key] = row
    return extra


def _fill_later_columns(record: dict) -> None:
    """A run finished before `final_N` was recorded had a fixed budget: final_N = N."""
    if "final_N" not in record and "N" in record:
        record["final_N"] = record["N"]


def records_frame(config: ExperimentConfig, records: dict[str, dict]) -> pd.DataFrame:
    """runs.csv content: RUN_COLUMNS, sorted by cell order, method order, run."""
    if not records:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    frame = pd.DataFrame([{c: r[c] for c in RUN_COLUMNS} for r in records.values()], columns=list(RUN_COLUMNS))
    cell_order = {c.label: i for i, c in enumerate(config.cells)}
    method_order = {m: i for i, m in enumerate(config.methods)}
    frame["_c"] = frame["benchmark"].map(cell_order)
    frame["_m"] = frame["method"].map(method_order)
    frame = frame.sort_values(["_c", "_m", "run"], kind="stable").drop(columns=["_c", "_m"])
    for c in INT_COLUMNS:
        # Nullable: a baseline has no rules, budget or iterations, written as empty fields.
        frame[c] = pd.to_numeric(frame[c]).astype("Int64")
    return frame.reset_index(drop=True)


def write_runs_csv(out: Path, config: ExperimentConfig, records: dict[str, dict]) -> pd.DataFrame:
    frame = records_frame(config, records)
    _write_csv_atomic(out / RUNS_FILE, frame)
    return frame


def write_curves_aggregate(out: Path, config: ExperimentConfig, records: dict[str, dict]) -> None:
    """curves.csv.gz beside runs.csv: the finished runs' curves in runs.csv order, the compact
    form that is committed with the results (see kacs_cli.experiments.curvestore)."""
    from kacs_cli.experiments import curvestore

    curvestore.update_aggregate(out, [t.key for t in expand_tasks(config) if t.key in records])


def _config_differences(old: dict, new: dict) -> list[str]:
    diffs = []
    for key in sorted(set(old) | set(new), key=lambda k: list(new).index(k) if k in new else 99):
        # description, report settings and reused folders change no run: results stay valid
        # across them
        if key in ("description", "report", "reuse") or old.get(key) == new.get(key):
            continue
        if key == "cells" and isinstance(old.get(key), list) and isinstance(new.get(key), list):
            old_cells = {c.get("label"): c for c in old[key] if isinstance(c, dict)}
            new_cells = {c.get("label"): c for c in new[key]}
            changed = [l for l in new_cells if l in old_cells and old_cells[l] != new_cells[l]]
            added = [l for l in new_cells if l not in old_cells]
            removed = [l for l in old_cells if l not in new_cells]
            detail = []
            if changed:
                detail.append("changed " + ", ".join(map(str, changed)))
            if added:
                detail.append("new " + ", ".join(map(str, added)))
            if removed:
                detail.append("without " + ", ".join(map(str, removed)))
            diffs.append(f"benchmarks ({'; '.join(detail) or 'order'})")
        elif key == "protocol" and isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            diffs.extend(f"protocol.{k}" for k in new[key] if old[key].get(k) != new[key].get(k))
            diffs.extend(f"protocol.{k}" for k in old[key] if k not in new[key])
        else:
            diffs.append(str(key))
    return diffs


def _protocol_runs(resolved: dict) -> int | None:
    runs = resolved.get("protocol", {}).get("runs") if isinstance(resolved.get("protocol"), dict) else None
    return runs if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1 else None


def _without_runs(resolved: dict) -> dict:
    if _protocol_runs(resolved) is None:
        return resolved
    return {**resolved, "protocol": {k: v for k, v in resolved["protocol"].items() if k != "runs"}}


def with_runs(config: ExperimentConfig, runs: int) -> ExperimentConfig:
    """`config` with another run count (run r keeps its seeds whatever the count)."""
    return dataclasses.replace(config, protocol=dataclasses.replace(config.protocol, runs=runs))


def prepare_out_dir(out: Path, config: ExperimentConfig, force: bool) -> tuple[bool, ExperimentConfig]:
    """Make `out` hold this config's campaign. Returns (earlier results kept, the folder's config).

    A folder holding another config's results is refused unless force, which deletes the
    runner's own files there (and nothing else) and starts over. A run count alone may
    differ: run r has the same seeds whatever the count, so the folder's config takes the
    larger count, finished runs keep their numbers and only the requested ones are run now.
    """
    config_path = out / CONFIG_FILE
    new = yaml.safe_load(config.to_yaml())
    folder, more_runs = config, False
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder; choose another --out")
    if force:
        for name in OWNED:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    elif config_path.is_file():
        try:
            old = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            old = None
        if not isinstance(old, dict):
            raise UserError(f"{config_path} is unreadable, so the results in {out} cannot be matched to "
                            f"this config; use --force to start over there or choose another --out")
        diffs = _config_differences(_without_runs(old), _without_runs(new))
        if diffs:
            raise UserError(
                f"{out} holds results of a different config (differs in: {', '.join(diffs)}); "
                f"use --force to discard them and start over, or choose another --out"
            )
        old_runs = _protocol_runs(old)
        if old_runs is not None and old_runs > config.protocol.runs:
            folder = with_runs(config, old_runs)
        more_runs = old_runs is not None and old_runs < config.protocol.runs
    elif (out / RECORD_DIR).is_dir() and any((out / RECORD_DIR).iterdir()):
        raise UserError(f"{out} holds run records but no {CONFIG_FILE}, so they cannot be matched to this "
                        f"config; use --force to start over there or choose another --out")
    try:
        for sub in (RECORD_DIR, CURVE_DIR, POPULATION_DIR):
            (out / sub).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the output folder {out}: {exc.strerror or exc}; choose another --out") from None
    # Temporary files of a killed campaign are garbage: their runs will be redone.
    for sub in (out, out / RECORD_DIR, out / CURVE_DIR, out / POPULATION_DIR):
        for tmp in sub.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)
    kept = config_path.is_file()
    if not kept or more_runs:
        atomic.write_text(config_path, folder.to_yaml())
    return kept, folder


# --------------------------------------------------------------------------- fan-out


_PARENT_GUARD: int | None = None  # the campaign pid this worker process already watches


def _die_with_parent(parent_pid: int) -> None:
    """End this worker process as soon as the campaign process `parent_pid` dies, even by SIGKILL.

    Nothing in loky tells a worker that its parent is gone: it holds both ends of its task
    queue's pipe, so it never sees EOF, and it lived on (with the resource trackers, which wait
    for every worker to close their pipe) long after a `kill -9`. On Linux the kernel sends
    the worker PR_SET_PDEATHSIG's SIGKILL the instant the parent dies, whatever the worker is
    doing; a thread polling the parent could not, since a numba run holds the GIL between
    evaluations. The signal follows the thread that forked the worker: loky forks them from
    the campaign's main thread, or from its executor manager thread, which outlives them.
    Elsewhere, or if loky ever starts workers through an intermediate process (PDEATHSIG
    would then watch the wrong one), a daemon thread polls the campaign pid instead.
    """
    global _PARENT_GUARD
    if _PARENT_GUARD == parent_pid:
        return
    _PARENT_GUARD = parent_pid
    direct = os.getppid() == parent_pid
    armed = False
    if direct and sys.platform.startswith("linux"):
        try:
            import ctypes

            PR_SET_PDEATHSIG = 1
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False

    def parent_alive() -> bool:
        if direct:  # orphans are adopted by another process
            return os.getppid() == parent_pid
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    # The parent may have died before the signal was armed: the worker is an orphan already.
    if not parent_alive():
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while parent_alive():
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="kacs-parent-watch", daemon=True).start()


def _execute_in_worker(task: Task, settings: RunSettings, parent_pid: int) -> TaskOutput:
    _die_with_parent(parent_pid)
    return execute_task(task, settings)


def _run_local(todo: list[Task], settings: RunSettings, jobs: int) -> Iterator[TaskOutput]:
    if jobs == 1:
        for task in todo:
            yield execute_task(task, settings)
        return
    from joblib import Parallel, delayed

    # batch_size=1 keeps the longest-first order meaningful; loky processes sidestep the GIL.
    parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered", batch_size=1)
    parent = os.getpid()
    yield from parallel(delayed(_execute_in_worker)(task, settings, parent) for task in todo)


_DASK_MISSING = "--backend dask needs the packages dask and distributed: pip install 'kacs[dask]'"


def connect_scheduler(scheduler: str):
    """A Client of the running Dask scheduler at `scheduler`, or a UserError.

    Called before the output folder is touched, so that a wrong address leaves nothing behind.
    """
    try:
        from dask.distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise UserError(_DASK_MISSING) from None
    hint = "check the address (e.g. tcp://host:8786) and that the scheduler is running"
    try:
        scheme, location = parse_address(scheduler)
        host_port = parse_host_port(location, 8786) if scheme in ("tcp", "tls") else None
    except (ValueError, TypeError) as exc:
        raise UserError(f"--scheduler {scheduler!r} is not a scheduler address ({exc}); {hint}") from None
    if host_port is not None:
        # A refused connection or an unknown host fails here at once; Client would retry for 20 s.
        try:
            socket.create_connection(host_port, timeout=10).close()
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise UserError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({reason}); {hint}") from None
    try:
        return Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({reason}); {hint}") from None


def _run_dask(todo: list[Task], settings: RunSettings, jobs: int, client=None) -> Iterator[TaskOutput]:
    """Fan out on `client` (connected to a scheduler), or else on a local cluster of `jobs` workers."""
    try:
        import joblib
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UserError(_DASK_MISSING) from None
    from joblib import Parallel, delayed

    cluster = None
    if client is None:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        with joblib.parallel_config(backend="dask"):
            parallel = Parallel(n_jobs=-1, return_as="generator_unordered", batch_size=1)
            yield from parallel(delayed(execute_task)(task, settings) for task in todo)
    finally:
        if cluster is not None:  # a client of a remote scheduler is its caller's to close
            client.close()
            cluster.close()


# --------------------------------------------------------------------------- campaign


def _resolved(config: ExperimentConfig) -> dict:
    """The config as config.yaml holds it (what kacs_cli.experiments.reuse compares runs by)."""
    return yaml.safe_load(config.to_yaml())


def _reuse_sources(config: ExperimentConfig) -> list[reuse.Source]:
    sources = []
    for folder in map(Path, config.reuse_dirs):
        try:
            resolved = yaml.safe_load((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise UserError(f"reuse: cannot read {folder / CONFIG_FILE} ({exc}); fix or remove that folder "
                            f"from `reuse`") from None
        if not isinstance(resolved, dict) or not isinstance(resolved.get("cells"), list):
            raise UserError(f"reuse: {folder / CONFIG_FILE} is not the resolved config `kacs run` writes; "
                            f"fix or remove that folder from `reuse`")
        sources.append(reuse.Source(folder, resolved, read_runs_csv(folder / RUNS_FILE)))
    return sources


def _copy_reused(out: Path, config: ExperimentConfig, todo: list[Task], records: dict[str, dict]) -> dict:
    """Copy the runs of `todo` that a `reuse:` folder holds (row and curve) into `out`."""
    if not config.reuse_dirs or not todo:
        return {}
    copied = reuse.find(_resolved(config), todo, _reuse_sources(config))
    for key, item in copied.items():
        if item.curve is not None:
            _write_csv_atomic(out / CURVE_DIR / f"{key}.csv", item.curve)
        _fill_later_columns(item.record)
        records[key] = {c: item.record[c] for c in RUN_COLUMNS}
    return copied


@dataclass
class CampaignResult:
    out: Path
    total: int          # selected runs
    already: int        # of them finished before this call
    ran: int            # finished by this call
    runs: pd.DataFrame  # runs.csv as written (all finished runs of the config)
    skipped: list[str] = field(default_factory=list)  # cell labels left out by --skip-missing
    reused: int = 0     # of the runs to do, copied from `reuse:` folders (kacs_cli.experiments.reuse)


def _preflight(cells: list[Cell], settings: RunSettings, plan: list[tuple[int, int, int]]) -> dict[str, tuple[int, int]]:
    """Load every selected dataset and build one split, so bad data stops the campaign before
    any run; returns (rows, n) per cell label for scheduling."""
    shapes = {}
    for cell in cells:
        try:
            X, y = load_cell_data(cell, settings.data_dir)
            make_split(X, y, settings.protocol, plan[0][1], settings.protocol.train_fraction)
        except UserError as exc:
            raise UserError(f"benchmark {cell.label}: {exc}") from None
        shapes[cell.label] = (int(X.shape[0]), int(X.shape[1]))
    return shapes


def _summary_table(config: ExperimentConfig, frame: pd.DataFrame):
    from rich.table import Table

    metric = config.protocol.metric
    table = Table(title=f"{config.experiment}: final test {metric.upper()} and rules (mean ± SD over runs)")
    table.add_column("benchmark")
    table.add_column("method")
    table.add_column("runs", justify="right")
    table.add_column(f"test {metric.upper()}", justify="right")
    table.add_column("rules", justify="right")
    if frame.empty:
        return table
    for cell in config.cells:
        for method in config.methods:
            sub = frame[(frame["benchmark"] == cell.label) & (frame["method"] == method)]
            if sub.empty:
                continue
            err = sub[f"test_{metric}"].astype(float)
            rules = sub["rules"].astype(float)
            sd = err.std(ddof=1) if len(sub) > 1 else math.nan
            sd_r = rules.std(ddof=1) if len(sub) > 1 else math.nan
            table.add_row(
                cell.label, method, str(len(sub)),
                f"{err.mean():.4f}" + ("" if math.isnan(sd) else f" ± {sd:.4f}"),
                # a baseline has no rules
                "-" if rules.isna().all() else f"{rules.mean():.1f}" + ("" if math.isnan(sd_r) else f" ± {sd_r:.1f}"),
            )
    return table


def run_campaign(
    config: ExperimentConfig,
    out: str | Path,
    *,
    jobs: int | None = None,
    data_dir: str | Path | None = None,
    force: bool = False,
    skip_missing: bool = False,
    benchmarks: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    console=None,
    progress: bool = True,
) -> CampaignResult:
    """Run (or resume) every selected run of `config` into `out`; see the module docstring.

    benchmarks / methods / skip_missing only choose which runs to do now: the folder's
    config.yaml is always the whole config, so a later call without them completes it.
    """
    from rich.console import Console

    console = console or Console()
    out = Path(out)
    if backend not in BACKENDS:
        raise UserError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if scheduler and backend != "dask":
        backend = "dask"  # an address only means something to Dask
    if jobs is None:
        jobs = os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UserError(f"--jobs must be a whole number >= 1, got {jobs!r}")

    cells = select_cells(config, benchmarks)
    chosen_methods = select_methods(config, methods)
    skipped: list[str] = []
    # Data are needed only where runs remain: a finished folder (committed results on a fresh
    # clone) still resumes, rebuilding runs.csv and curves.csv.gz, without the datasets.
    # Runs that `reuse:` copies need no data either.
    pending_cells = cells
    if config.reuse_dirs or (not force and (out / CONFIG_FILE).is_file()):
        wanted = expand_tasks(config, cells, chosen_methods)
        done = load_records(out, wanted) if not force and (out / CONFIG_FILE).is_file() else {}
        wanted = [t for t in wanted if t.key not in done]
        copyable = reuse.find(_resolved(config), wanted, _reuse_sources(config)) if config.reuse_dirs else {}
        pending = {t.cell.label for t in wanted if t.key not in copyable}
        pending_cells = [c for c in cells if c.label in pending]
    missing = missing_data(pending_cells, data_dir)
    if missing:
        if not skip_missing:
            raise UserError(_missing_message(missing, data_dir))
        skipped = [c.label for c in missing]
        cells = [c for c in cells if c not in missing]
        pending_cells = [c for c in pending_cells if c not in missing]
        console.print(f"[yellow]skipping {', '.join(skipped)}: data missing (--skip-missing)[/yellow]")
        if not cells:
            raise UserError("every selected benchmark misses its data; " + _missing_message(missing, data_dir))

    settings = RunSettings(config.experiment, config.protocol, config.iterations, config.eval_every,
                           None if data_dir is None else str(data_dir),
                           preload=baselines.specs_of(t.cell.params[t.method]
                                                      for t in expand_tasks(config, cells, chosen_methods)))
    plan = config.plan()
    shapes = _preflight(pending_cells, settings, plan)
    with contextlib.ExitStack() as stack:
        # Before the first write, so that a bad address or a missing package leaves nothing behind.
        client = None
        if backend == "dask" and scheduler:
            client = connect_scheduler(scheduler)
            stack.callback(client.close)
        elif backend == "dask":
            try:
                import dask.distributed  # noqa: F401
            except ImportError:
                raise UserError(_DASK_MISSING) from None
        # Held from the first write to the last, so two campaigns never share a folder.
        stack.enter_context(_exclusive(out))
        kept, folder = prepare_out_dir(out, config, force)
        all_tasks = expand_tasks(folder)
        records = load_records(out, all_tasks) if kept else {}
        selected = expand_tasks(config, cells, chosen_methods)
        todo = [t for t in selected if t.key not in records]
        already = len(selected) - len(todo)
        copied = _copy_reused(out, config, todo, records)
        if copied:
            todo = [t for t in todo if t.key not in copied]
            write_runs_csv(out, folder, records)
            console.print(f"{len(copied)} run(s) copied from identical runs in {', '.join(config.reuse)} (reuse)")

        if not todo:
            frame = write_runs_csv(out, folder, records)
            write_curves_aggregate(out, folder, records)
            console.print(
                f"Nothing to do: all {len(selected)} selected runs of experiment {config.experiment} "
                f"are already finished in {out} (runs.csv is up to date; --force starts over)."
            )
            console.print(_summary_table(config, frame))
            return CampaignResult(out, len(selected), already, 0, frame, skipped, len(copied))

        todo = [
            Task(t.cell, t.method, t.run, t.split_seed, t.seed,
                 estimate_cost(t, config.iterations, config.eval_every, *shapes[t.cell.label]))
            for t in todo
        ]
        # Longest first, ties in result order: the slowest runs do not end up alone at the end.
        order = {t.key: i for i, t in enumerate(todo)}
        todo.sort(key=lambda t: (-t.cost, order[t.key]))
        jobs = min(jobs, len(todo))
        where = f"Dask at {scheduler}" if scheduler else (
            f"a local Dask cluster of {jobs} worker(s)" if backend == "dask" else f"{jobs} local process(es)")
        resumed = f", {already} already finished" if already else ""
        console.print(
            f"Experiment {config.experiment}: {len(todo)} run(s) to do of {len(selected)} selected{resumed}; "
            f"{config.iterations} iterations each, on {where} -> {out}"
        )

        stream = _run_dask(todo, settings, jobs, client) if backend == "dask" else _run_local(todo, settings, jobs)
        ran = 0
        last_write = time.monotonic()
        try:
            with _progress(console, len(todo), enabled=progress) as advance:
                for output in stream:
                    save_output(out, output)
                    records[output.key] = output.record
                    ran += 1
                    advance(output.key)
                    if time.monotonic() - last_write > RUNS_CSV_EVERY_S:
                        write_runs_csv(out, folder, records)
                        last_write = time.monotonic()
        finally:
            frame = write_runs_csv(out, folder, records)
            write_curves_aggregate(out, folder, records)
        console.print(_summary_table(config, frame))
        console.print(f"{ran} run(s) finished; results in {out / RUNS_FILE}")
        return CampaignResult(out, len(selected), already, ran, frame, skipped, len(copied))


class _exclusive:
    """Hold an advisory lock on the output folder: two campaigns writing (or one --force
    deleting) the same folder at once would waste work or remove the other's results. The
    kernel drops the lock when the process dies, even by SIGKILL."""

    def __init__(self, out: Path):
        self.out = out
        self._fh = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # not POSIX: run without the guard
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


class _progress:
    """A rich progress bar (runs done/total, elapsed, ETA) or nothing when disabled."""

    def __init__(self, console, total: int, enabled: bool = True):
        self.console, self.total, self.enabled = console, total, enabled
        self._bar = None

    def __enter__(self):
        if not self.enabled:
            return lambda key: None
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self._bar = Progress(
            TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("[dim]{task.description}"), console=self.console,
        )
        self._bar.__enter__()
        task_id = self._bar.add_task("", total=self.total)

        def advance(key: str) -> None:
            self._bar.update(task_id, advance=1, description=f"last: {key}")

        return advance

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False
