"""The experiment runner: tasks of a resolved config, fan-out, resumable atomic results.

A task is one run: (cell, method, run index) with the split seed and learner seed of the
protocol's run plan. Both methods of one run share the split seed, so XCSF and KACS see
the identical split (SPEC section 9).

The output folder (`--out`) and its files are results.py's. Workers only compute; the
parent process writes every file, so a Dask worker on another machine needs the data but
not the output folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
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

from kacs_cli import baselines
from kacs_cli.experiments import curvestore, results, reuse
from kacs_cli.experiments.config import Cell, ExperimentConfig
from kacs_cli.engine import registry
from kacs_cli.errors import UserError
from kacs_cli.experiments.protocols import Protocol, make_split

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
        return results.run_key(self.cell.label, self.method, self.run)

    @property
    def identity(self) -> tuple:
        """The values of results.IDENTITY_COLUMNS that the task's row holds."""
        return (self.cell.label, self.method, self.run, self.split_seed, self.seed)


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


def execute_task(task: Task, settings: RunSettings) -> results.RunOutput:
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
    for key in results.FINAL_KEYS:
        record[key] = _plain(result.final[key])
    for key in ("rules", "micro", "params"):
        record[key] = int(record[key])
    record["seconds"] = float(result.seconds)
    # The budget at the end of the run: N itself unless budget: adaptive grew it.
    record["final_N"] = int(result.final["final_N"])
    return results.RunOutput(task.key, record, result.curve, result.population)


def _execute_baseline(task: Task, settings: RunSettings, X: np.ndarray, split) -> results.RunOutput:
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
    return results.RunOutput(task.key, record, pd.DataFrame(columns=list(CURVE_COLUMNS)), pd.DataFrame())


# --------------------------------------------------------------------------- files


def write_curves_aggregate(out: Path, order: list[str], records: dict[str, dict]) -> None:
    """curves.csv.gz beside runs.csv: the finished runs' curves in runs.csv order, the compact
    form that is committed with the results (see kacs_cli.experiments.curvestore)."""
    curvestore.update_aggregate(out, [key for key in order if key in records])


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
    new = _resolved(config)
    folder, more_runs = config, False
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder; choose another --out")
    if force:
        results.clear(out)
    elif results.config_path(out).is_file():
        try:
            old = results.read_config(out)
        except results.UnreadableConfig:
            old = None
        if not isinstance(old, dict):
            raise UserError(f"{results.config_path(out)} is unreadable, so the results in {out} cannot be "
                            f"matched to this config; use --force to start over there or choose another --out")
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
    elif results.has_records(out):
        raise UserError(f"{out} holds run records but no {results.CONFIG_FILE}, so they cannot be matched to "
                        f"this config; use --force to start over there or choose another --out")
    results.make_run_dirs(out)
    kept = results.config_path(out).is_file()
    if not kept or more_runs:
        results.write_config(out, folder.to_yaml())
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


def _execute_in_worker(task: Task, settings: RunSettings, parent_pid: int) -> results.RunOutput:
    _die_with_parent(parent_pid)
    return execute_task(task, settings)


def _run_local(todo: list[Task], settings: RunSettings, jobs: int) -> Iterator[results.RunOutput]:
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


def _run_dask(todo: list[Task], settings: RunSettings, jobs: int, client=None) -> Iterator[results.RunOutput]:
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


def _copy_reused(out: Path, config: ExperimentConfig, todo: list[Task], records: dict[str, dict]) -> dict:
    """Copy the runs of `todo` that a `reuse:` folder holds (row and curve) into `out`."""
    if not config.reuse_dirs or not todo:
        return {}
    copied = reuse.find(_resolved(config), todo, reuse.sources(config.reuse_dirs))
    for key, item in copied.items():
        if item.curve is not None:
            results.write_curve(out, key, item.curve)
        results.fill_later_columns(item.record)
        records[key] = {c: item.record[c] for c in results.RUN_COLUMNS}
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
    if config.reuse_dirs or (not force and results.config_path(out).is_file()):
        wanted = expand_tasks(config, cells, chosen_methods)
        done = results.load_records(out, wanted) if not force and results.config_path(out).is_file() else {}
        wanted = [t for t in wanted if t.key not in done]
        copyable = reuse.find(_resolved(config), wanted, reuse.sources(config.reuse_dirs)) if config.reuse_dirs else {}
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
        stack.enter_context(results.exclusive(out))
        kept, folder = prepare_out_dir(out, config, force)
        all_tasks = expand_tasks(folder)
        row_order = [t.key for t in all_tasks]
        records = results.load_records(out, all_tasks) if kept else {}
        selected = expand_tasks(config, cells, chosen_methods)
        todo = [t for t in selected if t.key not in records]
        already = len(selected) - len(todo)
        copied = _copy_reused(out, config, todo, records)
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

        stream = _run_dask(todo, settings, jobs, client) if backend == "dask" else _run_local(todo, settings, jobs)
        ran = 0
        last_write = time.monotonic()
        try:
            with _progress(console, len(todo), enabled=progress) as advance:
                for output in stream:
                    results.save_output(out, output)
                    records[output.key] = output.record
                    ran += 1
                    advance(output.key)
                    if time.monotonic() - last_write > RUNS_CSV_EVERY_S:
                        results.write_runs_csv(out, records, row_order)
                        last_write = time.monotonic()
        finally:
            frame = results.write_runs_csv(out, records, row_order)
            write_curves_aggregate(out, row_order, records)
        console.print(_summary_table(config, frame))
        console.print(f"{ran} run(s) finished; results in {results.runs_path(out)}")
        return CampaignResult(out, len(selected), already, ran, frame, skipped, len(copied))


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
