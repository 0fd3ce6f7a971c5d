"""Faults a campaign or a report meets on the way: writes that fail (disk full, no permission,
a folder deleted midway). Each ends in one line naming the path and the cause, exit code 2,
and a folder whose runs.csv rows are exactly its run records, ready to resume.

The machines run the tests as root, for whom a read-only folder is writable all the same, so
the failures are injected where the project creates every file it writes (atomic.mkstemp).
"""

import errno
import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from cli_support import run_kacs
from kacs_cli import atomic
from kacs_cli.experiments.campaign import results

CONFIG = ("experiment: faults\nbenchmarks: [{name: f3, n: 2, samples: 100}, {name: f1, n: 2, samples: 100}]\n"
          "hyperparameters: {N: 200}\nprotocol: {runs: 3}\niterations: 2000\n")
TOTAL = 12


@pytest.fixture
def cfg(tmp_path) -> Path:
    path = tmp_path / "faults.yaml"
    path.write_text(CONFIG)
    return path


def fail_writes(monkeypatch, cause: OSError, *, where, after: int = 0) -> list:
    """Every file the project creates in a folder for which `where(folder)` holds fails with
    `cause`, once `after` of them were written; returns the list of refused targets."""
    real = atomic.mkstemp
    seen, refused = [0], []

    def mkstemp(*, dir, prefix, suffix):
        if where(Path(dir)):
            seen[0] += 1
            if seen[0] > after:
                refused.append(Path(dir) / prefix)
                raise cause
        return real(dir=dir, prefix=prefix, suffix=suffix)

    monkeypatch.setattr(atomic, "mkstemp", mkstemp)
    return refused


def keys_on_disk(out: Path) -> set[str]:
    return {p.stem for p in (out / results.RECORD_DIR).glob("*.json")}


def keys_in_runs_csv(out: Path) -> set[str]:
    frame = pd.read_csv(out / results.RUNS_FILE)
    return {results.run_key(b, m, r) for b, m, r in zip(frame.benchmark, frame.method, frame.run)}


def assert_consistent(out: Path) -> set[str]:
    """runs.csv holds exactly the runs recorded on disk, each with its curve and population,
    and no file lacks its record; returns the recorded keys."""
    recorded = keys_on_disk(out)
    assert keys_in_runs_csv(out) == recorded
    for folder in (results.CURVE_DIR, results.POPULATION_DIR):
        assert {p.stem for p in (out / folder).glob("*.csv")} == recorded, folder
    assert not list(out.rglob("*.tmp"))
    return recorded


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.slow
@pytest.mark.parametrize("cause, reason", [
    (OSError(errno.ENOSPC, "No space left on device"), "no space left on the device"),
    (PermissionError(errno.EACCES, "Permission denied"), "permission denied"),
])
def test_a_failed_run_record_write_keeps_every_finished_run_and_resumes(capsys, tmp_path, monkeypatch, cfg,
                                                                        cause, reason):
    out = tmp_path / "out"
    # The 4th run's files cannot be written (runs/ read-only, or the disk full from then on).
    fail_writes(monkeypatch, cause, where=lambda d: d == out / results.RECORD_DIR, after=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"error: cannot write {out / results.RECORD_DIR}/") and reason in line, line
    assert "recorded in" in line and "run the same command again" in line, line
    # no run finished but not yet handed over is dropped (joblib warns "not used" when it drops one)
    assert not [w for w in caught if "not used" in str(w.message)]
    recorded = assert_consistent(out)
    assert len(recorded) == 3
    assert (out / results.AGGREGATE_FILE).is_file()

    monkeypatch.undo()
    code, out_text, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 0, err
    assert "9 run(s) to do of 12 selected, 3 already finished" in " ".join(out_text.split())
    assert len(assert_consistent(out)) == TOTAL


@pytest.mark.slow
def test_runs_csv_that_cannot_be_written_is_rebuilt_by_the_next_run(capsys, tmp_path, monkeypatch, cfg):
    out = tmp_path / "out"
    # The output folder itself read-only after engine.yaml and config.yaml: runs/, curves/ and
    # populations/ take the runs, runs.csv and curves.csv.gz cannot be written.
    fail_writes(monkeypatch, PermissionError(errno.EACCES, "Permission denied"), where=lambda d: d == out, after=2)
    code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"error: cannot write {out / results.RUNS_FILE}: permission denied"), line
    # runs.csv is first written once every run has finished or after its first interval,
    # whichever comes first: on a slow machine fewer than all runs may precede the error.
    recorded = re.search(r"the (\d+) run\(s\) finished before it are recorded in (.+?)(?:;|$)", line)
    assert recorded and recorded.group(2).startswith(str(out)), line
    finished = int(recorded.group(1))
    assert 1 <= finished <= TOTAL
    assert len(keys_on_disk(out)) == finished and not (out / results.RUNS_FILE).exists()
    monkeypatch.undo()
    code, text, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 0, err
    assert finished < TOTAL or "Nothing to do" in text, text
    assert len(assert_consistent(out)) == TOTAL


@pytest.mark.slow
def test_a_vanished_output_folder_is_one_line(capsys, tmp_path, monkeypatch, cfg):
    out = tmp_path / "out"
    real = results.save_output
    calls = [0]

    def save_then_vanish(folder, output):
        calls[0] += 1
        if calls[0] == 3:
            shutil.rmtree(folder)  # deleted by hand, or its disk unmounted
        return real(folder, output)

    monkeypatch.setattr(results, "save_output", save_then_vanish)
    code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"error: cannot write {out / results.CURVE_DIR}/"), line
    assert f"its folder {out / results.CURVE_DIR} no longer exists" in line, line


def test_a_failed_write_with_one_job_is_the_same_line(capsys, tmp_path, monkeypatch, cfg):
    out = tmp_path / "out"
    fail_writes(monkeypatch, OSError(errno.ENOSPC, "No space left on device"),
                where=lambda d: d == out / results.CURVE_DIR, after=2)
    code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 1)
    assert code == 2 and "no space left on the device" in one_line(err)
    assert len(assert_consistent(out)) == 2


@pytest.fixture
def finished(tmp_path, cfg, capsys) -> Path:
    out = tmp_path / "finished"
    # One process, no worker pool to start: the tests that read this folder are about the report.
    code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", 1, "--runs", 2)
    assert code == 0, err
    return out


@pytest.mark.parametrize("figures", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_report_that_cannot_be_written_is_one_line_and_no_half_file(capsys, monkeypatch, finished, figures):
    report = finished / "report"
    refused = fail_writes(monkeypatch, OSError(errno.ENOSPC, "No space left on device"),
                          where=lambda d: d == report or report in d.parents, after=1)
    code, _, err = run_kacs(capsys, "report", finished, *([] if figures else ["--no-figures"]))
    assert code == 2 and refused
    line = one_line(err)
    assert line.startswith(f"error: cannot write {report}") and "no space left on the device" in line, line
    assert not list(report.rglob("*.tmp"))


def test_a_report_folder_that_cannot_be_created_is_one_line(capsys, tmp_path, finished):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, where the report wants a folder\n")
    code, _, err = run_kacs(capsys, "report", finished, "--out", blocker / "report", "--no-figures")
    assert code == 2
    assert one_line(err) == (f"error: --out {blocker / 'report'}: {blocker} is a file, where a folder is "
                             f"expected; choose another --out")
    code, _, err = run_kacs(capsys, "report", finished, "--out", blocker, "--no-figures")
    assert code == 2
    assert one_line(err) == f"error: --out {blocker} is a file, where a folder is expected; choose another --out"


def test_write_failed_names_the_target_not_the_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "gone" / "runs.csv"
    with pytest.raises(atomic.WriteFailed) as info:
        atomic.write_text(target, "x\n")
    assert info.value.filename == str(target) and isinstance(info.value, OSError)
    assert str(info.value) == f"cannot write {target}: its folder {target.parent} no longer exists"
    # An error of the caller's own (a download's connection refused) is not a write failure.
    with pytest.raises(ConnectionRefusedError):
        with atomic.replacing(tmp_path / "x.csv"):
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert not list(tmp_path.glob(".*"))


def test_ctrl_c_in_any_command_is_one_line_and_exit_130(capsys, monkeypatch, finished):
    import os
    import signal
    import time

    from kacs_cli.reporting import build

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # as the terminal sends it
        time.sleep(10)
        raise AssertionError("the signal did not stop the command")

    monkeypatch.setattr(build, "build_report", interrupted)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    code, out, err = run_kacs(capsys, "report", finished)
    assert code == 130 and err == "interrupted (Ctrl-C)\n" and out == "", (code, err)
    # The command's handlers are gone with it.
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def damage(runs_csv: Path, line: int, column: str, value: str) -> None:
    frame = pd.read_csv(runs_csv, dtype=str, keep_default_na=False)
    frame.loc[line - 2, column] = value
    frame.to_csv(runs_csv, index=False)


@pytest.mark.parametrize("column, value, problem", [
    ("test_mae", "abc", "not a number >= 0"),
    ("test_mae", "", "where every finished run has a number >= 0"),
    ("train_mse", "-0.5", "not a number >= 0"),
    ("seed", "12.5", "not a whole number >= 0"),
    ("rules", "-3", "not a number >= 0"),
    ("cover_rate", "1.5", "not a number >= 0 and <= 1"),
    ("samples", "0", "not a whole number >= 1"),
])
def test_a_damaged_cell_of_runs_csv_stops_the_report_at_its_line(capsys, finished, column, value, problem):
    runs_csv = finished / results.RUNS_FILE
    damage(runs_csv, 3, column, value)
    code, out, err = run_kacs(capsys, "report", finished, "--no-figures")
    assert code == 2 and out == ""
    assert one_line(err) == (f"error: {runs_csv}:3: {column} is {value!r}, {problem}; fix or delete that line "
                             f"(`kacs run` redoes a run whose row and record are gone)")
    assert not (finished / "report").exists()


def test_the_runs_column_counts_the_runs_the_means_use(capsys, finished):
    code, _, err = run_kacs(capsys, "report", finished, "--no-figures", "--format", "csv")
    assert code == 0, err
    summary = pd.read_csv(finished / "report" / "faults_summary.csv")
    runs = pd.read_csv(finished / results.RUNS_FILE)
    for (cell, method), part in runs.groupby(["benchmark", "method"]):
        row = summary[(summary["cell"].str.startswith(cell)) & (summary["metric"] == "test_mae")].iloc[0]
        assert row[f"{method}_runs"] == len(part)
        assert row[f"{method}_mean"] == pytest.approx(part["test_mae"].mean(), rel=1e-9)


@pytest.mark.slow
def test_no_figure_draws_curves_whose_runs_are_not_in_runs_csv(capsys, finished):
    figures = finished / "report" / "figures"
    code, _, err = run_kacs(capsys, "report", finished)
    assert code == 0, err
    assert (figures / "faults_test_error.png").is_file()
    # A 0-byte runs.csv (emptied by hand, or a disk that filled up before atomic writes):
    # no finished runs, so no curve figures, whatever curves/ and curves.csv.gz hold.
    (finished / results.RUNS_FILE).write_bytes(b"")
    code, out, err = run_kacs(capsys, "report", finished)
    assert code == 0, err
    assert "no finished runs" in out
    assert not list(figures.glob("faults_*_error.png")) and not (figures / "faults_covering.png").exists()
    report = (finished / "report" / "report.md").read_text()
    assert "8 run curve(s)" in report and "left out: their runs are not in runs.csv" in report


@pytest.mark.slow
def test_a_curve_without_its_row_is_left_out(capsys, finished, monkeypatch):
    from kacs_cli.reporting import figures

    runs_csv = finished / results.RUNS_FILE
    frame = pd.read_csv(runs_csv)
    frame.iloc[:-1].to_csv(runs_csv, index=False)  # the last run's row lost, its curve kept
    drawn = []
    real = figures.curve_figure
    monkeypatch.setattr(figures, "curve_figure",
                        lambda curves, *a, **k: drawn.append(curves) or real(curves, *a, **k))
    code, _, err = run_kacs(capsys, "report", finished)
    assert code == 0, err
    last = frame.iloc[-1]
    assert drawn and all(len(curves[last.benchmark][last.method]) == 1 for curves in drawn)
    assert "1 run curve(s)" in (finished / "report" / "report.md").read_text()
