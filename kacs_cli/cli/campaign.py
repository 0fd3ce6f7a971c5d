"""A campaign on the console (`kacs run`, `kacs scale`): what it does, its progress, its results.

The runner (kacs_cli/experiments/campaign/runner.py) tells its Reporter what happens; this one shows
it: a bar on a terminal, plain unwrapped lines in a log (a batch job's, a pipe), and the
summary table of the finished runs. Imported only when a campaign starts, as the runner is.
"""

from __future__ import annotations

import math
import os
import time
from typing import Sequence

import pandas as pd
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.config import ExperimentConfig
from kacs_cli.experiments.campaign.runner import Plan, Reporter, RunProgress
from kacs_cli.experiments.campaign.tasks import Eta, Task
from kacs_cli.experiments.campaign.workers import Runs

# How long a log waits for a run to finish before it reports progress anyway.
PROGRESS_TICK_S = 30.0
# The width of the tables in a log (no terminal): wide enough for any summary table.
LOG_WIDTH = 200


class ConsoleReporter(Reporter):
    """A campaign on the console: what it does, a progress bar on a terminal or plain lines
    in a log, and the summary table of its results."""

    def __init__(self, console: Console | None = None, progress: bool = True):
        self.console = console or _console()
        self.show_progress = progress

    def warning(self, text: str) -> None:
        self.console.print(f"warning: {text}", markup=False)

    def skipped(self, labels: list[str]) -> None:
        self.console.print(f"[yellow]skipping {', '.join(labels)}: data missing (--skip-missing)[/yellow]")

    def copied(self, count: int, sources: Sequence[str]) -> None:
        self.console.print(f"{count} run(s) copied from identical runs in {', '.join(sources)} (reuse)")

    def nothing_to_do(self, plan: Plan, frame: pd.DataFrame) -> None:
        self.console.print(
            f"Nothing to do: all {len(plan.selected)} selected runs of experiment {plan.config.experiment} "
            f"are already finished in {plan.out} ({results.RUNS_FILE} is up to date; --force starts over)."
        )
        self.console.print(_summary_table(plan.config, frame))

    def started(self, plan: Plan, todo: list[Task], jobs: int, backend: str, scheduler: str | None) -> None:
        where = f"Dask at {scheduler}" if scheduler else (
            f"a local Dask cluster of {jobs} worker(s)" if backend == "dask" else f"{jobs} local process(es)")
        resumed = f", {plan.already} already finished" if plan.already else ""
        self.console.print(
            f"Experiment {plan.config.experiment}: {len(todo)} run(s) to do of {len(plan.selected)} selected{resumed}; "
            f"{plan.config.iterations} iterations each, on {where} -> {plan.out}"
        )

    def progress(self, todo: list[Task], jobs: int, runs: Runs) -> RunProgress:
        return _progress(self.console, todo, jobs, runs, enabled=self.show_progress)

    def finished(self, plan: Plan, frame: pd.DataFrame, ran: int) -> None:
        self.console.print(_summary_table(plan.config, frame))
        self.console.print(f"{ran} run(s) finished; results in {results.runs_path(plan.out)}")


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


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class _progress(RunProgress):
    """Progress of a campaign: on a terminal a rich bar (runs done/total, elapsed, ETA), else
    one plain line every PLAIN_EVERY_FRACTION of the runs or every PROGRESS_TICK_S seconds,
    for the logs of a batch job (rich draws nothing there); nothing when disabled. The ETA is
    Eta's."""

    PLAIN_EVERY_FRACTION = 0.05

    def __init__(self, console, todo: list[Task], jobs: int, runs: Runs, enabled: bool = True):
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
