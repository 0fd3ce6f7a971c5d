"""A campaign: every selected run of a resolved config, done, resumed or copied into one folder.

`run_campaign` goes in three steps. `plan_campaign` reads what there is: the runs the config
asks for (tasks.py), the finished ones in the folder, the ones a `reuse:` folder holds
(reuse.py), and whether the data of the rest are present; it writes nothing. `prepare_data`
loads the data once and `prepare_folder` makes the folder hold this config's campaign, with
the reused runs copied in. `execute` fans the rest out (workers.py) and saves each finished
run as it arrives (results.py, which owns the folder's files). What a campaign has to say
goes to its `Reporter`: the command line shows it (kacs_cli/cli/campaign.py), a campaign
run from Python keeps quiet. An interrupted campaign resumes where it stopped; a folder
holding another config is refused, and so are a folder and `reuse:` rows of another engine
(provenance.py) unless allow_engine_change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from kacs_cli import atomic, baselines
from kacs_cli.errors import UserError
from kacs_cli.scaling import collapse_message, collapsed
from kacs_cli.experiments.campaign import curvestore, provenance, results, reuse, workers
from kacs_cli.experiments.campaign.cells import Cell
from kacs_cli.experiments.campaign.config import ExperimentConfig
from kacs_cli.experiments.campaign.resolved import MethodSettings, ResolvedCell
from kacs_cli.experiments.campaign.execution import RunSettings, missing_data, missing_message, run_rows
from kacs_cli.experiments.data.protocols import make_split
from kacs_cli.experiments.campaign.tasks import Task, estimate_cost, expand_tasks, select_cells, select_methods

# runs.csv is rebuilt from the finished records at most this often during a campaign
# (and always at the end), so a long campaign can be inspected while it runs.
RUNS_CSV_EVERY_S = 10.0
# How often the runner wakes without a finished run, for its reporter (whose ETA counts down
# between finished runs).
WAKE_S = 1.0


class RunProgress:
    """Progress while the runs execute, entered around them; this one shows none."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def advance(self, output: results.RunOutput) -> None:
        """A run finished (and is saved)."""

    def tick(self) -> None:
        """No run finished for WAKE_S."""


class Reporter:
    """What a campaign has to say as it goes. This one keeps quiet (a campaign run from
    Python); the command line's shows it on its console (kacs_cli/cli/campaign.py)."""

    def warning(self, text: str) -> None:
        """Something about the data worth a look, not a stop."""

    def skipped(self, labels: list[str]) -> None:
        """Benchmarks left out because their data are missing (--skip-missing)."""

    def copied(self, count: int, sources: Sequence[str]) -> None:
        """Runs copied from identical runs of the `reuse:` folders `sources`."""

    def nothing_to_do(self, plan: Plan, frame: pd.DataFrame) -> None:
        """Every selected run was finished already; `frame` is runs.csv as written."""

    def started(self, plan: Plan, todo: list[Task], jobs: int, backend: str, scheduler: str | None) -> None:
        """The runs to do now, longest first, and where they run."""

    def progress(self, todo: list[Task], jobs: int, runs: workers.Runs) -> RunProgress:
        return RunProgress()

    def finished(self, plan: Plan, frame: pd.DataFrame, ran: int) -> None:
        """`ran` runs finished now; `frame` is runs.csv as written."""


# --------------------------------------------------------------------------- the folder


def write_curves_aggregate(out: Path, row_order: list[str], records: dict[str, dict]) -> None:
    """curves.csv.gz beside runs.csv: the finished runs' curves in runs.csv order, the compact
    form that is committed with the results (see kacs_cli.experiments.campaign.curvestore)."""
    curvestore.update_aggregate(out, [key for key in row_order if key in records])


def _config_differences(old: results.ResolvedConfig, new: results.ResolvedConfig) -> list[str]:
    """The settings that differ between two resolved configs, the run count left out: run r
    has the same seeds whatever the count."""
    old_data, new_data = old.without_runs(), new.without_runs()
    diffs = []
    for key in sorted(set(old_data) | set(new_data), key=lambda k: list(new_data).index(k) if k in new_data else 99):
        # description, report settings and reused folders change no run: results stay valid
        # across them
        if key in ("description", "report", "reuse") or old_data.get(key) == new_data.get(key):
            continue
        if key == "cells" and old.cells is not None and new.cells is not None:
            diffs.append(f"benchmarks ({_cell_differences(old.cells, new.cells)})")
        elif key == "protocol" and isinstance(old_data.get(key), dict) and isinstance(new_data.get(key), dict):
            diffs.extend(f"protocol.{k}" for k in new_data[key] if old_data[key].get(k) != new_data[key].get(k))
            diffs.extend(f"protocol.{k}" for k in old_data[key] if k not in new_data[key])
        else:
            diffs.append(str(key))
    return diffs


def _cell_differences(old: Iterable[ResolvedCell], new: Iterable[ResolvedCell]) -> str:
    """Which cells changed, came or went (by label); "order" when only their order differs."""
    old_cells = {c.label: c.written for c in old}
    new_cells = {c.label: c.written for c in new}
    detail = []
    for word, labels in (("changed", [l for l in new_cells if l in old_cells and old_cells[l] != new_cells[l]]),
                         ("new", [l for l in new_cells if l not in old_cells]),
                         ("without", [l for l in old_cells if l not in new_cells])):
        if labels:
            detail.append(f"{word} {', '.join(labels)}")
    return "; ".join(detail) or "order"


def _unavailable(config: ExperimentConfig) -> dict[str, str]:
    """{method: how to install it} of the config's baselines whose optional extra is missing."""
    return {method: spec.missing for cell in config.cells for method, spec in cell.params.items()
            if isinstance(spec, baselines.Spec) and spec.missing}


def _as_recorded(old: results.ResolvedConfig, new: results.ResolvedConfig) -> tuple[results.ResolvedConfig, bool]:
    """(`new` with the folder's own record of each baseline where one of the two was resolved
    without its optional extra and the other agrees with everything it says, whether a record
    of the folder's is to be completed). Without its extra a method's class cannot be asked
    for its other parameters: a finished folder must not be refused for that, and a folder
    started without an extra must not be refused once the extra is installed."""
    if old.cells is None or new.cells is None:
        return new, False
    recorded = {c.label: c for c in old.cells}
    cells, completed = [], False
    for cell in new.cells:
        before = recorded[cell.label].settings if cell.label in recorded else {}
        settings = dict(cell.settings)
        for method, mine in cell.settings.items():
            theirs = before.get(method)
            if theirs is None or theirs.partial == mine.partial:
                continue
            # the complete record of the two must hold everything the partial one says
            complete, partial = (theirs, mine) if mine.partial else (mine, theirs)
            if _stands_for(complete, partial):
                settings[method] = theirs
                completed = completed or theirs.partial
        cells.append(cell.with_settings(settings))
    return new.with_cells(cells), completed


def _stands_for(recorded: MethodSettings, asked: MethodSettings) -> bool:
    """A baseline's recorded settings stand for the asked ones: the same estimator, and every
    parameter the config gives recorded with that value."""
    return (isinstance(recorded.written, dict) and isinstance(asked.written, dict)
            and recorded.estimator == asked.estimator and recorded.params is not None
            and all(recorded.params.get(k) == v for k, v in (asked.params or {}).items()))


def folder_differences(old: results.ResolvedConfig, config: ExperimentConfig) -> list[str]:
    """The settings in which `config` is not the campaign a folder's config.yaml records (the
    run count, description, report settings and reused folders left out: they change no run);
    empty when its runs are the folder's."""
    return _config_differences(old, _as_recorded(old, _resolved(config))[0])


def with_runs(config: ExperimentConfig, runs: int) -> ExperimentConfig:
    """`config` with another run count (run r keeps its seeds whatever the count)."""
    return dataclasses.replace(config, protocol=dataclasses.replace(config.protocol, runs=runs))


def _folder_config(out: Path, config: ExperimentConfig, force: bool) -> tuple[ExperimentConfig, bool, bool]:
    """(the config the folder is to hold, its earlier results kept, config.yaml to write).

    A folder holding another config's results is refused unless force, which starts over
    there (prepare_folder deletes the runner's own files, nothing else). A run count alone
    may differ: run r has the same seeds whatever the count, so the folder's config takes
    the larger count, finished runs keep their numbers and only the requested ones are run.
    """
    if force:
        return config, False, True
    if not results.config_path(out).is_file():
        if results.has_records(out):
            raise UserError(f"{out} holds run records but no {results.CONFIG_FILE}, so they cannot be matched to "
                            f"this config; use --force to start over there or choose another --out")
        return config, False, True
    try:
        old = results.ResolvedConfig.read(out)
    except results.UnreadableConfig:
        old = None
    if old is None:
        raise UserError(f"{results.config_path(out)} is unreadable, so the results in {out} cannot be "
                        f"matched to this config; use --force to start over there or choose another --out")
    comparable, completed = _as_recorded(old, _resolved(config))
    diffs = _config_differences(old, comparable)
    if diffs:
        raise UserError(
            f"{out} holds results of a different config (differs in: {', '.join(diffs)}); "
            f"use --force to discard them and start over, or choose another --out"
        )
    folder = with_runs(config, old.runs) if old.runs is not None and old.runs > config.protocol.runs else config
    return folder, True, completed or (old.runs is not None and old.runs < config.protocol.runs)


def _other_engine(folder: Path, recorded: provenance.EngineRecord | None, running: provenance.EngineRecord,
                  allow_engine_change: bool, reporter: Reporter, *, reused: bool) -> provenance.EngineRecord | None:
    """`folder`'s engine record where it names another engine than `running` and
    allow_engine_change lets its rows in; None where it names this engine, or none (a folder
    written before the record existed: its rows are let in unchecked, with a warning).
    Another engine without allow_engine_change is refused in one line naming both."""
    where = f"reuse: {folder}" if reused else str(folder)
    if recorded is None:
        reporter.warning(f"{where} has no {results.ENGINE_FILE} (written before the record existed), so its rows "
                         f"are {'copied' if reused else 'resumed'} without checking they are of this engine "
                         f"({running.describe()}); see docs/results-folder.md")
        return None
    if recorded.same_engine(running):
        return None
    if not allow_engine_change:
        fix = ("run with --allow-engine-change to copy them anyway, or remove that folder from `reuse`" if reused
               else "run with --allow-engine-change to add rows of this engine anyway, --force to start over, "
                    "or choose another --out")
        raise UserError(f"{where} holds rows of another engine ({recorded.describe()}) than this one "
                        f"({running.describe()}); {fix}")
    return recorded


def _engine_record(out: Path, kept: bool, running: provenance.EngineRecord, others: list[provenance.EngineRecord],
                   allow_engine_change: bool, reporter: Reporter) -> provenance.EngineRecord | None:
    """The engine.yaml the folder is to hold once this campaign adds its rows (None: leave it
    as it is). A new folder records the running engine; a kept folder keeps its record,
    naming any other engine whose rows come in now among its others."""
    if not kept:
        recorded = running
    else:
        recorded = provenance.read(out)
        other = _other_engine(out, recorded, running, allow_engine_change, reporter, reused=False)
        if recorded is None:
            return None  # a folder written before the record existed stays without one
        if other is not None:
            recorded = running.joined(other)
        elif not others:
            return None
    for other in others:
        recorded = recorded.joined(other)
    return recorded


# --------------------------------------------------------------------------- plan


@dataclass
class Plan:
    """What a campaign is to do, read from its config and its folder before anything is written."""

    config: ExperimentConfig        # as asked
    folder: ExperimentConfig        # as the folder holds it: the larger run count of the two
    out: Path
    force: bool
    write_config: bool              # config.yaml to write: a new folder, --force or more runs
    settings: RunSettings
    selected: list[Task]            # the runs chosen now, in result order
    row_order: list[str]            # runs.csv's: every run of the folder's config (cell, method, run)
    records: dict[str, dict]        # the finished runs, by key; every run saved joins them
    already: int                    # of the selected runs, finished before this call
    copyable: dict[str, reuse.Reused]  # selected runs still to do that a `reuse:` folder holds
    pending: list[Cell]             # cells with runs to do here, whose data are needed
    engine: provenance.EngineRecord | None  # engine.yaml to write (None: the folder's stays as it is)
    skipped: list[str] = field(default_factory=list)  # cell labels left out by --skip-missing


def plan_campaign(
    config: ExperimentConfig,
    out: Path,
    *,
    data_dir: str | Path | None = None,
    force: bool = False,
    skip_missing: bool = False,
    benchmarks: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
    allow_engine_change: bool = False,
    reporter: Reporter | None = None,
) -> Plan:
    """The runs of `config` that `out` holds, finishes now or copies; refuses a folder of
    another config, a folder or `reuse:` rows of another engine (unless allow_engine_change)
    and runs whose data or optional extra are missing."""
    reporter = reporter or Reporter()
    cells = select_cells(config, benchmarks)
    chosen_methods = select_methods(config, methods)
    folder, kept, write_config = _folder_config(out, config, force)
    row_tasks = expand_tasks(folder)
    records = results.load_records(out, row_tasks) if kept else {}
    selected = expand_tasks(config, cells, chosen_methods)
    wanted = [t for t in selected if t.key not in records]
    copyable = reuse.find(_resolved(config), wanted, reuse.sources(config.reuse_dirs)) if config.reuse_dirs else {}
    todo = [t for t in wanted if t.key not in copyable]
    # Only a campaign that adds rows checks the engine: a finished folder resumes anywhere.
    running = provenance.EngineRecord.current() if wanted else None
    copied_from = dict.fromkeys(item.source for item in copyable.values())
    others = [other for source in copied_from
              if (other := _other_engine(source, provenance.read(source), running, allow_engine_change, reporter,
                                         reused=True)) is not None]
    engine = _engine_record(out, kept, running, others, allow_engine_change, reporter) if wanted else None
    # A method whose optional extra is missing is needed only for runs still to do: a
    # finished folder (committed results on a fresh clone) resumes without it.
    unavailable = _unavailable(config)
    blocked = [t for t in todo if t.method in unavailable]
    if blocked:
        raise UserError(f"{unavailable[blocked[0].method]} ({sum(t.method == blocked[0].method for t in blocked)} "
                        f"of its runs are still to do in {out})")
    # Data are needed only where runs remain: a finished folder (committed results on a fresh
    # clone) still resumes, rebuilding runs.csv and curves.csv.gz, without the datasets.
    # Runs that `reuse:` copies need no data either.
    pending = [c for c in cells if c.label in {t.cell.label for t in todo}]
    missing = missing_data(pending, data_dir)
    skipped: list[str] = []
    if missing:
        if not skip_missing:
            raise UserError(missing_message(missing, data_dir))
        skipped = [c.label for c in missing]
        cells = [c for c in cells if c not in missing]
        pending = [c for c in pending if c not in missing]
        reporter.skipped(skipped)
        if not cells:
            raise UserError("every selected benchmark misses its data; " + missing_message(missing, data_dir))
        selected = [t for t in selected if t.cell.label not in skipped]
    settings = RunSettings(config.experiment, config.protocol, config.iterations, config.eval_every,
                           None if data_dir is None else str(data_dir),
                           preload=tuple(s for s in baselines.specs_of(t.cell.params[t.method] for t in selected)
                                         if not s.missing))
    return Plan(config, folder, out, force, write_config, settings, selected, [t.key for t in row_tasks], records,
                sum(t.key in records for t in selected), copyable, pending, engine, skipped)


def _resolved(config: ExperimentConfig) -> results.ResolvedConfig:
    """The config as config.yaml holds it (what kacs_cli.experiments.campaign.reuse compares runs by)."""
    return results.ResolvedConfig.parse(config.to_yaml())


# --------------------------------------------------------------------------- prepare


def prepare_data(plan: Plan, reporter: Reporter | None = None) -> dict[str, tuple[int, int]]:
    """Load every dataset with runs to do and build one split, so bad data stops the campaign
    before any run; returns (rows, n) per cell label for scheduling. Columns whose min-max
    scale one extreme value collapses (kacs_cli.scaling.collapsed) are worth a warning, not
    a stop."""
    reporter = reporter or Reporter()
    first_split = plan.config.plan()[0][1]
    shapes = {}
    for cell in plan.pending:
        try:
            X, y, _ = run_rows(cell, first_split, plan.settings.data_dir)
            make_split(X, y, plan.settings.protocol, first_split, plan.settings.protocol.train_fraction)
            _refuse_missing_for_baselines(cell, X)
        except UserError as exc:
            raise UserError(f"benchmark {cell.label}: {exc}") from None
        shapes[cell.label] = (int(X.shape[0]), int(X.shape[1]))
        for what, values in (("input column {}", X), ("the target", y)):
            for j, share, extreme in collapsed(values):
                reporter.warning(f"benchmark {cell.label}: {collapse_message(what.format(j + 1), share, extreme)}")
    return shapes


def _refuse_missing_for_baselines(cell: Cell, X) -> None:
    """The learners take missing inputs (NaN; docs/algorithm.md section 12); a baseline only
    when its estimator says it does (baselines.takes_missing) or its inputs are filled first
    (`impute: mean`)."""
    missing = int(np.count_nonzero(np.isnan(X)))
    if not missing:
        return
    refused = [method for method in (cell.methods or cell.params) if baselines.find(cell.engine(method)) is not None
               and cell.params[method].impute == "none" and not baselines.takes_missing(cell.params[method])]
    if refused:
        raise UserError(f"{missing} input value{'s are' if missing != 1 else ' is'} missing (NaN), which "
                        f"{', '.join(refused)} cannot take; leave {'them' if len(refused) > 1 else 'it'} out "
                        f"of this benchmark's methods or fill the missing values in")


def prepare_folder(plan: Plan, reporter: Reporter | None = None) -> list[Task]:
    """Make the folder hold the plan's campaign (--force: the runner's own files deleted
    first), copy in the runs `reuse:` folders hold; returns the runs left to do."""
    reporter = reporter or Reporter()
    out = plan.out
    if plan.force:
        results.clear(out)
    results.make_run_dirs(out)
    # Before config.yaml: a folder whose config is written always has its record.
    if plan.engine is not None:
        provenance.write(out, plan.engine)
    if plan.write_config:
        results.write_config(out, plan.folder.to_yaml())
    todo = [t for t in plan.selected if t.key not in plan.records]
    copied = [t for t in todo if t.key in plan.copyable]
    for task in copied:
        item = plan.copyable[task.key]
        if item.curve is not None:
            results.write_curve(out, task.key, item.curve)
        results.fill_later_columns(item.record)
        plan.records[task.key] = results.run_row(item.record)
    if copied:
        results.write_runs_csv(out, plan.records, plan.row_order)
        reporter.copied(len(copied), plan.config.reuse)
    return [t for t in todo if t.key not in plan.copyable]


# --------------------------------------------------------------------------- campaign


@dataclass
class CampaignResult:
    out: Path
    total: int          # selected runs
    already: int        # of them finished before this call
    ran: int            # finished by this call
    runs: pd.DataFrame  # runs.csv as written (all finished runs of the config)
    skipped: list[str] = field(default_factory=list)  # cell labels left out by --skip-missing
    reused: int = 0     # of the runs to do, copied from `reuse:` folders (kacs_cli.experiments.campaign.reuse)


def _check_options(backend: str, scheduler: str | None, jobs: int | None) -> tuple[str, int]:
    if backend not in workers.BACKENDS:
        raise UserError(f"--backend must be one of {', '.join(workers.BACKENDS)}, got {backend!r}")
    if scheduler and backend != "dask":
        backend = "dask"  # an address only means something to Dask
    if jobs is None:
        jobs = os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UserError(f"--jobs must be a whole number >= 1, got {jobs!r}")
    return backend, jobs


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
    allow_engine_change: bool = False,
    reporter: Reporter | None = None,
) -> CampaignResult:
    """Run (or resume) every selected run of `config` into `out`; see the module docstring.

    benchmarks / methods / skip_missing only choose which runs to do now: the folder's
    config.yaml is always the whole config, so a later call without them completes it.
    allow_engine_change resumes a folder, and copies `reuse:` rows, of another engine
    (provenance.py); the folder's engine.yaml then names both.
    """
    reporter = reporter or Reporter()
    # Before the folder lock, whose mkdir would otherwise say only "File exists".
    out = atomic.output_folder(out)
    backend, jobs = _check_options(backend, scheduler, jobs)
    with contextlib.ExitStack() as stack:
        # Held from the first read of the folder's runs to the last write, so two campaigns
        # never share a folder and the plan's finished runs are the ones on disk. A new folder
        # is locked (and so created) only at the first write: a refused campaign leaves nothing.
        locked = out.is_dir()
        if locked:
            stack.enter_context(results.exclusive(out))
        plan = plan_campaign(config, out, data_dir=data_dir, force=force, skip_missing=skip_missing,
                             benchmarks=benchmarks, methods=methods, allow_engine_change=allow_engine_change,
                             reporter=reporter)
        shapes = prepare_data(plan, reporter)
        # Before the first write, so that a bad address or a missing package leaves nothing behind.
        client = None
        if backend == "dask" and scheduler:
            client = workers.connect_scheduler(scheduler)
            stack.callback(client.close)
        elif backend == "dask":
            workers.require_dask()
        if not locked:
            stack.enter_context(results.exclusive(out))
            if not force and (results.config_path(out).is_file() or results.has_records(out)):
                raise UserError(f"another `kacs run` wrote to {out} while this one was starting; run the same "
                                f"command again to resume there")
        todo = prepare_folder(plan, reporter)
        reused = len(plan.selected) - plan.already - len(todo)
        if not todo:
            frame = results.write_runs_csv(out, plan.records, plan.row_order)
            write_curves_aggregate(out, plan.row_order, plan.records)
            reporter.nothing_to_do(plan, frame)
            return CampaignResult(out, len(plan.selected), plan.already, 0, frame, plan.skipped, reused)
        frame, ran = execute(plan, todo, shapes, jobs=jobs, backend=backend, scheduler=scheduler, client=client,
                             reporter=reporter)
        return CampaignResult(out, len(plan.selected), plan.already, ran, frame, plan.skipped, reused)


def execute(plan: Plan, todo: list[Task], shapes: dict[str, tuple[int, int]], *, jobs: int, backend: str = "local",
            scheduler: str | None = None, client=None, reporter: Reporter | None = None) -> tuple[pd.DataFrame, int]:
    """Run `todo`, longest first, saving each run as it finishes and runs.csv as it goes;
    returns runs.csv as written at the end and the number of runs finished."""
    reporter = reporter or Reporter()
    config, out = plan.config, plan.out
    todo = [
        Task(t.cell, t.method, t.run, t.split_seed, t.seed,
             estimate_cost(t, config.iterations, config.eval_every, *shapes[t.cell.label]))
        for t in todo
    ]
    # Longest first, ties in result order: the slowest runs do not end up alone at the end.
    position = {t.key: i for i, t in enumerate(todo)}
    todo.sort(key=lambda t: (-t.cost, position[t.key]))
    jobs = min(jobs, len(todo))
    reporter.started(plan, todo, jobs, backend, scheduler)

    runs = (workers.run_dask(todo, plan.settings, jobs, client, tick=WAKE_S) if backend == "dask"
            else workers.run_local(todo, plan.settings, jobs, tick=WAKE_S))
    saved = _Saver(out, plan.records, plan.row_order)
    try:
        with reporter.progress(todo, jobs, runs) as shown:
            try:
                for output in runs:
                    if output is None:
                        shown.tick()
                        continue
                    saved.save(output)
                    shown.advance(output)
            except BaseException:
                # Ctrl-C, a signal or a failed write: keep what finished meanwhile, then stop.
                saved.rescue(runs.stop())
                raise
            finally:
                runs.close()
        frame = saved.flush()
    except atomic.WriteFailed as exc:
        saved.flush(quiet=True)
        raise UserError(_write_failure(exc, out, saved.ran)) from None
    except BaseException:
        # Also a stop that arrived during the flush above: the signal handlers ignore the
        # next ones, so this second flush completes.
        saved.flush(quiet=True)
        raise
    reporter.finished(plan, frame, saved.ran)
    return frame, saved.ran


def _write_failure(exc: atomic.WriteFailed, out: Path, ran: int) -> str:
    """One line: what could not be written and why, what is kept, how to go on."""
    kept = (f"the {ran} run(s) finished before it are recorded in {out}" if ran
            else f"the finished runs in {out} are kept")
    return (f"{exc}; {kept}; free space or fix the permissions, then run the same command again "
            f"to resume")


class _Saver:
    """Saves each finished run into the folder as it arrives, and runs.csv every
    RUNS_CSV_EVERY_S and at the end (flush), from the same records: whatever stops the
    campaign, the rows of runs.csv are the records on disk."""

    def __init__(self, out: Path, records: dict[str, dict], row_order: list[str]):
        self.out, self.records, self.row_order = out, records, row_order
        self.ran = 0
        self._last_write = time.monotonic()

    def save(self, output: results.RunOutput) -> None:
        results.save_output(self.out, output)
        self.records[output.key] = output.record
        self.ran += 1
        if time.monotonic() - self._last_write > RUNS_CSV_EVERY_S:
            results.write_runs_csv(self.out, self.records, self.row_order)
            self._last_write = time.monotonic()

    def rescue(self, outputs: list[results.RunOutput]) -> None:
        """Save the runs that finished while the campaign was being stopped, as far as the
        folder takes them (a failed write ends the attempt; those runs are redone next time)."""
        for output in outputs:
            try:
                self.save(output)
            except OSError:
                return

    def flush(self, quiet: bool = False) -> pd.DataFrame | None:
        """runs.csv and curves.csv.gz from the records; quiet: on the way out of another error,
        whose message matters more than this one (a folder that failed once fails again)."""
        try:
            frame = results.write_runs_csv(self.out, self.records, self.row_order)
            write_curves_aggregate(self.out, self.row_order, self.records)
        except OSError:
            if not quiet:
                raise
            return None
        return frame
