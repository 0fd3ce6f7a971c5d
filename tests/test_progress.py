"""What a campaign shows while it runs: plain lines in a log, a bar on a terminal, and an ETA
from the runner's cost model calibrated by the runs that finished."""

import io
import re

import pandas as pd
from rich.console import Console

from cli_support import run_kacs
from kacs_cli.cli import campaign
from kacs_cli.experiments.campaign.cells import Cell
from kacs_cli.cli.campaign import _progress
from kacs_cli.experiments.campaign.tasks import Eta, Task

# ", last: ..." once a run has finished; before that a line can only be the tick of a slow
# start (a process compiling the engines), every PROGRESS_TICK_S seconds.
LINE = re.compile(r"^runs (\d+)/(\d+) \(\d+ %\), elapsed \d+:\d\d:\d\d, ETA (?:\d+:\d\d:\d\d|-)(, last: \S+)?$")


def test_a_campaign_without_a_terminal_logs_plain_unwrapped_lines(capsys, tmp_path, monkeypatch):
    # A log has neither a terminal nor COLUMNS (which asks for that width); pytest-xdist's
    # workers run with COLUMNS set.
    monkeypatch.delenv("COLUMNS", raising=False)
    cfg = tmp_path / "a-config-with-a-rather-long-name-so-that-the-header-is-wide.yaml"
    cfg.write_text("experiment: logged\nbenchmarks: [{name: f3, n: 2, samples: 100}, {name: f1, n: 2, samples: 100}]\n"
                   "hyperparameters: {N: 200}\nprotocol: {runs: 5}\niterations: 1000\n")
    out = tmp_path / "a-results-folder-with-a-long-name" / "logged"
    code, text, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 0, err
    lines = text.splitlines()
    # The header is one line, however long: a log has no width to wrap at.
    header = [line for line in lines if line.startswith("Experiment logged:")]
    assert len(header) == 1 and header[0].endswith(f"-> {out}") and len(header[0]) > 80
    progress = [LINE.match(line) for line in lines if line.startswith("runs ")]
    assert progress and all(progress), lines
    assert all((m.group(3) is None) == (m.group(1) == "0") for m in progress), lines
    done = [int(m.group(1)) for m in progress]
    # every 5 % of 20 runs: a line for each one (a tick may repeat a count while runs are slow)
    assert done == sorted(done) and sorted(set(done) - {0}) == list(range(1, 21))
    assert "\x1b[" not in text  # no terminal control sequences in a log
    assert len(pd.read_csv(out / "runs.csv")) == 20


def task(cell: str, method: str, run: int, cost: float) -> Task:
    return Task(Cell(index=0, label=cell, data=None), method, run, 0, 0, cost)


def test_eta_comes_from_the_cost_model_not_the_first_runs_average():
    # The longest runs go first; 2 of 52 runs done.
    todo = [task("big", "kacs", r, 10.0) for r in range(2)] + [task("small", "kacs", r, 1.0) for r in range(50)]
    eta = Eta(todo, jobs=2)
    assert eta.left({}) is None  # nothing finished: nothing to calibrate with
    eta.finish(todo[0].key, 100.0)
    eta.finish(todo[1].key, 100.0)
    # 10 s per unit of cost; 50 units left on 2 workers. The first runs' average (100 s a run)
    # would say 50 * 100 / 2 = 2500 s.
    assert eta.left({}) == 250.0
    # A run in flight for 6 s of its expected 10.
    assert eta.left({todo[2].key: 6.0}) == (500.0 - 6.0) / 2


def test_eta_calibrates_each_cell_and_method_by_its_own_finished_runs():
    todo = [task("a", "kacs", 0, 4.0), task("a", "kacs", 1, 4.0), task("a", "xcsf", 0, 1.0), task("a", "xcsf", 1, 1.0)]
    eta = Eta(todo, jobs=1)
    eta.finish(todo[0].key, 8.0)  # 2 s per unit: the rest is costed at that rate
    assert eta.left({}) == 8.0 + 2.0 + 2.0
    eta.finish(todo[2].key, 5.0)  # xcsf is slower per unit than the model says: its own rate
    assert eta.left({}) == 8.0 + 5.0
    # With fewer runs left than workers, the longest run in flight bounds the time left.
    eta = Eta(todo, jobs=4)
    eta.finish(todo[0].key, 8.0)
    assert eta.left({todo[1].key: 1.0}) == 7.0


def test_plain_progress_is_printed_every_30_s_even_without_a_finished_run(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(campaign.time, "monotonic", lambda: now[0])

    class NoRuns:
        def running(self):
            return {}

    buffer = io.StringIO()
    todo = [task("a", "kacs", r, 1.0) for r in range(100)]
    with _progress(Console(file=buffer), todo, 2, NoRuns()) as shown:
        now[0] += 10
        shown.tick()
        assert buffer.getvalue() == ""
        now[0] += campaign.PROGRESS_TICK_S
        shown.tick()
    assert buffer.getvalue() == "runs 0/100 (0 %), elapsed 0:00:40, ETA -\n"
