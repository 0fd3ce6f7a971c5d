"""A campaign: every selected run of a resolved config, done, resumed or copied into one folder.

`run_campaign` picks the runs still to do (tasks.py), copies those a `reuse:` folder holds
(reuse.py), checks that the data of the rest are present, fans them out (workers.py) and
saves each finished run as it arrives (results.py, which owns the folder's files). An
interrupted campaign resumes where it stopped; a folder holding another config is refused.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pandas as pd
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kacs_cli import atomic, baselines
from kacs_cli.errors import UserError
from kacs_cli.scaling import collapse_message, collapsed
from kacs_cli.experiments import curvestore, results, reuse, workers
from kacs_cli.experiments.cells import Cell
from kacs_cli.experiments.config import ExperimentConfig
from kacs_cli.experiments.execution import RunSettings, load_cell_data, missing_data, missing_message
from kacs_cli.experiments.protocols import make_split
from kacs_cli.experiments.tasks import Task, estimate_cost, expand_tasks, select_cells, select_methods

# runs.csv is rebuilt from the finished records at most this often during a campaign
# (and always at the end), so a long campaign can be inspected while it runs.
RUNS_CSV_EVERY_S = 10.0
# How long a log waits for a run to finish before it reports progress anyway, and how often
# the runner wakes without one (the bar's ETA counts down between finished runs).
PROGRESS_TICK_S = 30.0
WAKE_S = 1.0
# The width of the tables in a log (no terminal): wide enough for any summary table.
LOG_WIDTH = 200


# --------------------------------------------------------------------------- the folder


def write_curves_aggregate(out: Path, row_order: list[str], records: dict[str, dict]) -> None:
    """curves.csv.gz beside runs.csv: the finished runs' curves in runs.csv order, the compact
    form that is committed with the results (see kacs_cli.experiments.curvestore)."""
    curvestore.update_aggregate(out, [key for key in row_order if key in records])


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


def _unavailable(config: ExperimentConfig) -> dict[str, str]:
    """{method: how to install it} of the config's baselines whose optional extra is missing."""
    return {method: spec.missing for cell in config.cells for method, spec in cell.params.items()
            if isinstance(spec, baselines.Spec) and spec.missing}


def _as_recorded(old: results.ResolvedConfig, new: results.ResolvedConfig,
                 unavailable: dict[str, str]) -> results.ResolvedConfig:
    """`new` with the folder's own record of each method in `unavailable`, where that record
    agrees with everything the config says of it: without its extra the method's class cannot
    be asked for its other parameters, and a finished folder must not be refused for that."""
    if not unavailable or old.cells is None or new.cells is None:
        return new
    recorded = {c["label"]: c for c in old.cells}
    cells = []
    for cell in new.cells:
        before = recorded.get(cell["label"], {}).get("hyperparameters") or {}
        hyper = dict(cell.get("hyperparameters") or {})
        for method in unavailable:
            mine, theirs = hyper.get(method), before.get(method) if isinstance(before, dict) else None
            if (isinstance(mine, dict) and isinstance(theirs, dict) and mine.get("estimator") == theirs.get("estimator")
                    and isinstance(theirs.get("params"), dict)
                    and all(theirs["params"].get(k) == v for k, v in (mine.get("params") or {}).items())):
                hyper[method] = theirs
        cells.append({**cell, "hyperparameters": hyper} if "hyperparameters" in cell else cell)
    return results.ResolvedConfig.of({**new.data, "cells": cells})


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
    new = _resolved(config)
    folder, more_runs = config, False
    atomic.output_folder(out)
    if force:
        results.clear(out)
    elif results.config_path(out).is_file():
        try:
            old = results.ResolvedConfig.read(out)
        except results.UnreadableConfig:
            old = None
        if old is None:
            raise UserError(f"{results.config_path(out)} is unreadable, so the results in {out} cannot be "
                            f"matched to this config; use --force to start over there or choose another --out")
        diffs = _config_differences(old.without_runs(), _as_recorded(old, new, _unavailable(config)).without_runs())
        if diffs:
            raise UserError(
                f"{out} holds results of a different config (differs in: {', '.join(diffs)}); "
                f"use --force to discard them and start over, or choose another --out"
            )
        if old.runs is not None and old.runs > config.protocol.runs:
            folder = with_runs(config, old.runs)
        more_runs = old.runs is not None and old.runs < config.protocol.runs
    elif results.has_records(out):
        raise UserError(f"{out} holds run records but no {results.CONFIG_FILE}, so they cannot be matched to "
                        f"this config; use --force to start over there or choose another --out")
    results.make_run_dirs(out)
    kept = results.config_path(out).is_file()
    if not kept or more_runs:
        results.write_config(out, folder.to_yaml())
    return kept, folder


# --------------------------------------------------------------------------- campaign


def _resolved(config: ExperimentConfig) -> results.ResolvedConfig:
    """The config as config.yaml holds it (what kacs_cli.experiments.reuse compares runs by)."""
    return results.ResolvedConfig.parse(config.to_yaml())


def _copy_reused(out: Path, todo: list[Task], copyable: dict, records: dict[str, dict]) -> dict:
    """Copy the runs of `todo` that a `reuse:` folder holds (row and curve) into `out`."""
    copied = {t.key: copyable[t.key] for t in todo if t.key in copyable}
    for key, item in copied.items():
        if item.curve is not None:
            results.write_curve(out, key, item.curve)
        results.fill_later_columns(item.record)
        records[key] = results.run_row(item.record)
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


def _preflight(cells: list[Cell], settings: RunSettings,
               plan: list[tuple[int, int, int]], console) -> dict[str, tuple[int, int]]:
    """Load every selected dataset and build one split, so bad data stops the campaign before
    any run; returns (rows, n) per cell label for scheduling. Columns whose min-max scale
    one extreme value collapses (kacs_cli.scaling.collapsed) are worth a warning, not a stop."""
    shapes = {}
    for cell in cells:
        try:
            X, y = load_cell_data(cell, settings.data_dir)
            make_split(X, y, settings.protocol, plan[0][1], settings.protocol.train_fraction)
        except UserError as exc:
            raise UserError(f"benchmark {cell.label}: {exc}") from None
        shapes[cell.label] = (int(X.shape[0]), int(X.shape[1]))
        for what, values in (("input column {}", X), ("the target", y)):
            for j, share, extreme in collapsed(values):
                console.print(f"warning: benchmark {cell.label}: "
                              f"{collapse_message(what.format(j + 1), share, extreme)}", markup=False)
    return shapes


def _summary_table(config: ExperimentConfig, frame: pd.DataFrame) -> Table:
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


def _console() -> Console:
    """The campaign's console: a terminal's width, or for a log (a batch job's, a pipe) lines
    that are never wrapped, where rich would cut every line at 80 columns."""
    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(soft_wrap=True, width=LOG_WIDTH)


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
    console = console or _console()
    # Before the folder lock, whose mkdir would otherwise say only "File exists".
    out = atomic.output_folder(out)
    if backend not in workers.BACKENDS:
        raise UserError(f"--backend must be one of {', '.join(workers.BACKENDS)}, got {backend!r}")
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
    pending_cells, copyable = cells, {}
    unavailable = _unavailable(config)
    if config.reuse_dirs or unavailable or (not force and results.config_path(out).is_file()):
        wanted = expand_tasks(config, cells, chosen_methods)
        done = results.load_records(out, wanted) if not force and results.config_path(out).is_file() else {}
        wanted = [t for t in wanted if t.key not in done]
        copyable = reuse.find(_resolved(config), wanted, reuse.sources(config.reuse_dirs)) if config.reuse_dirs else {}
        pending = {t.cell.label for t in wanted if t.key not in copyable}
        pending_cells = [c for c in cells if c.label in pending]
        # A method whose optional extra is missing is needed only for runs still to do: a
        # finished folder (committed results on a fresh clone) resumes without it.
        blocked = [t for t in wanted if t.key not in copyable and t.method in unavailable]
        if blocked:
            raise UserError(f"{unavailable[blocked[0].method]} ({sum(t.method == blocked[0].method for t in blocked)} "
                            f"of its runs are still to do in {out})")
    missing = missing_data(pending_cells, data_dir)
    if missing:
        if not skip_missing:
            raise UserError(missing_message(missing, data_dir))
        skipped = [c.label for c in missing]
        cells = [c for c in cells if c not in missing]
        pending_cells = [c for c in pending_cells if c not in missing]
        console.print(f"[yellow]skipping {', '.join(skipped)}: data missing (--skip-missing)[/yellow]")
        if not cells:
            raise UserError("every selected benchmark misses its data; " + missing_message(missing, data_dir))

    settings = RunSettings(config.experiment, config.protocol, config.iterations, config.eval_every,
                           None if data_dir is None else str(data_dir),
                           preload=tuple(s for s in baselines.specs_of(t.cell.params[t.method]
                                                                       for t in expand_tasks(config, cells, chosen_methods))
                                         if not s.missing))
    plan = config.plan()
    shapes = _preflight(pending_cells, settings, plan, console)
    with contextlib.ExitStack() as stack:
        # Before the first write, so that a bad address or a missing package leaves nothing behind.
        client = None
        if backend == "dask" and scheduler:
            client = workers.connect_scheduler(scheduler)
            stack.callback(client.close)
        elif backend == "dask":
            workers.require_dask()
        # Held from the first write to the last, so two campaigns never share a folder.
        stack.enter_context(results.exclusive(out))
        kept, folder = prepare_out_dir(out, config, force)
        all_tasks = expand_tasks(folder)
        row_order = [t.key for t in all_tasks]  # runs.csv's: cell, method, run
        records = results.load_records(out, all_tasks) if kept else {}
        selected = expand_tasks(config, cells, chosen_methods)
        todo = [t for t in selected if t.key not in records]
        already = len(selected) - len(todo)
        copied = _copy_reused(out, todo, copyable, records)
        if copied:
            todo = [t for t in todo if t.key not in copied]
            results.write_runs_csv(out, records, row_order)
            console.print(f"{len(copied)} run(s) copied from identical runs in {', '.join(config.reuse)} (reuse)")

        if not todo:
            frame = results.write_runs_csv(out, records, row_order)
            write_curves_aggregate(out, row_order, records)
            console.print(
                f"Nothing to do: all {len(selected)} selected runs of experiment {config.experiment} "
                f"are already finished in {out} ({results.RUNS_FILE} is up to date; --force starts over)."
            )
            console.print(_summary_table(config, frame))
            return CampaignResult(out, len(selected), already, 0, frame, skipped, len(copied))

        todo = [
            Task(t.cell, t.method, t.run, t.split_seed, t.seed,
                 estimate_cost(t, config.iterations, config.eval_every, *shapes[t.cell.label]))
            for t in todo
        ]
        # Longest first, ties in result order: the slowest runs do not end up alone at the end.
        position = {t.key: i for i, t in enumerate(todo)}
        todo.sort(key=lambda t: (-t.cost, position[t.key]))
        jobs = min(jobs, len(todo))
        where = f"Dask at {scheduler}" if scheduler else (
            f"a local Dask cluster of {jobs} worker(s)" if backend == "dask" else f"{jobs} local process(es)")
        resumed = f", {already} already finished" if already else ""
        console.print(
            f"Experiment {config.experiment}: {len(todo)} run(s) to do of {len(selected)} selected{resumed}; "
            f"{config.iterations} iterations each, on {where} -> {out}"
        )

        runs = (workers.run_dask(todo, settings, jobs, client, tick=WAKE_S) if backend == "dask"
                else workers.run_local(todo, settings, jobs, tick=WAKE_S))
        saved = _Saver(out, records, row_order)
        try:
            with _progress(console, todo, jobs, runs, enabled=progress) as shown:
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
        console.print(_summary_table(config, frame))
        console.print(f"{saved.ran} run(s) finished; results in {results.runs_path(out)}")
        return CampaignResult(out, len(selected), already, saved.ran, frame, skipped, len(copied))


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


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Eta:
    """Time left from the runner's cost model (Task.cost, tasks.estimate_cost), not from the
    first runs' average: the longest runs start first, so an average over the first runs to
    finish says little about the rest (2 of 52 runs done: "ETA 0:00:25" with 3 min 13 s left).

    The model's costs are estimates; the finished runs calibrate them: seconds per unit of
    cost = their training seconds over their cost, taken from the finished runs of the same
    cell and method (whose runs all cost the same), else of the same method (the model weighs
    the learners and the baselines by different formulas), else of all finished runs. The
    time left is the cost not done yet spread over the workers, and at least the longest run
    still in flight (runs in flight are credited with the seconds they have been running).
    """

    def __init__(self, todo: list[Task], jobs: int):
        self.cost = {t.key: max(t.cost, 1e-12) for t in todo}
        # Most specific first: (cell, method), method, everything.
        self.groups = {t.key: ((t.cell.label, t.method), t.method, None) for t in todo}
        self.jobs = max(1, jobs)
        self.finished: set[str] = set()
        self._spent: dict = {None: [0.0, 0.0]}  # group: [cost, seconds] of its finished runs

    def finish(self, key: str, seconds: float) -> None:
        if key in self.cost and key not in self.finished:
            self.finished.add(key)
            for group in self.groups[key]:
                spent = self._spent.setdefault(group, [0.0, 0.0])
                spent[0] += self.cost[key]
                spent[1] += max(float(seconds), 0.0)

    def _per_cost(self, key: str) -> float:
        for group in self.groups[key]:
            cost, seconds = self._spent.get(group, (0.0, 0.0))
            if seconds > 0:
                return seconds / cost
        return 0.0

    def left(self, running: dict[str, float]) -> float | None:
        """Seconds left, given the runs in flight and how long each has been running; None
        until a run has finished (nothing to calibrate the model with yet)."""
        if self._spent[None][1] <= 0:
            return None
        remaining, longest = 0.0, 0.0
        for key, cost in self.cost.items():
            if key in self.finished:
                continue
            expected = cost * self._per_cost(key)
            if key in running:
                expected = max(expected - running[key], 0.0)
                longest = max(longest, expected)
            remaining += expected
        return max(remaining / self.jobs, longest)


class _progress:
    """Progress of a campaign: on a terminal a rich bar (runs done/total, elapsed, ETA), else
    one plain line every PLAIN_EVERY_FRACTION of the runs or every PROGRESS_TICK_S seconds,
    for the logs of a batch job (rich draws nothing there); nothing when disabled. The ETA is
    Eta's."""

    PLAIN_EVERY_FRACTION = 0.05

    def __init__(self, console, todo: list[Task], jobs: int, runs: workers.Runs, enabled: bool = True):
        self.console, self.total, self.enabled, self.runs = console, len(todo), enabled, runs
        self.eta = Eta(todo, min(jobs, len(todo)))
        self.done = 0
        self.last_key = ""
        self._bar = None
        self._task_id = None
        self._start = time.monotonic()
        self._printed_at = self._start
        self._printed_done = 0

    def __enter__(self):
        if self.enabled and self.console.is_terminal:
            self._bar = Progress(
                TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
                TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                TextColumn("[dim]{task.fields[last]}"), console=self.console,
            )
            self._bar.__enter__()
            self._task_id = self._bar.add_task("", total=self.total, eta="-", last="")
        return self

    def _eta_text(self) -> str:
        left = self.eta.left(self.runs.running())
        return "-" if left is None else _clock(left)

    def advance(self, output: results.RunOutput) -> None:
        self.done += 1
        self.last_key = output.key
        self.eta.finish(output.key, output.record.get("seconds") or 0.0)
        self._show(finished=True)

    def tick(self) -> None:
        """No run finished for a while: say so, with the time left."""
        self._show(finished=False)

    def _show(self, finished: bool) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task_id, completed=self.done, eta=self._eta_text(),
                             last=f"last: {self.last_key}" if self.last_key else "")
            return
        now = time.monotonic()
        every = max(1, math.ceil(self.total * self.PLAIN_EVERY_FRACTION))
        if (finished and (self.done - self._printed_done >= every or self.done == self.total)) \
                or now - self._printed_at >= PROGRESS_TICK_S:
            self._printed_at, self._printed_done = now, self.done
            last = f", last: {self.last_key}" if self.last_key else ""
            # print() rather than the console: a log line is never wrapped or marked up.
            print(f"runs {self.done}/{self.total} ({100 * self.done // max(self.total, 1)} %), "
                  f"elapsed {_clock(now - self._start)}, ETA {self._eta_text()}{last}",
                  file=self.console.file, flush=True)

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False
