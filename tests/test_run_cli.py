"""`kacs run` and `kacs scale` end to end: exit codes, messages, a SIGKILLed campaign, scaling."""

import os
import re
import shutil
import signal
import subprocess
import threading
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from cli_support import run_kacs
from kacs_cli.experiments.campaign.results import RUN_COLUMNS

NUMBERS = [c for c in RUN_COLUMNS if c != "seconds"]


def kacs(capsys, *argv) -> tuple[int, str, str]:
    """run_kacs with stdout's whitespace collapsed (rich wraps lines at the terminal width)."""
    code, out, err = run_kacs(capsys, *argv)
    return code, " ".join(out.split()), err


def write_config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path



def _wait_until_the_group_is_gone(pgid: int, how: str) -> None:
    """Up to 5 s for every process of a campaign's group (its loky workers) to end."""
    for _ in range(500):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    pytest.fail(f"worker processes of the {how} campaign are still alive")

def test_help_lists_the_commands_and_options(capsys):
    code, out, _ = kacs(capsys, "--help")
    assert code == 0 and " run " in out and " scale " in out
    code, out, _ = kacs(capsys, "run", "--help")
    for option in ("--out", "--jobs", "--runs", "--iterations", "--benchmarks", "--methods",
                   "--data-dir", "--force", "--skip-missing", "--backend", "--scheduler", "--allow-engine-change"):
        assert option in out, option
    code, out, _ = kacs(capsys, "scale", "--help")
    for option in ("--dim", "--samples", "--guideline", "--out", "--jobs", "--runs", "--iterations",
                   "--force", "--methods", "--allow-engine-change"):
        assert option in out, option


def test_bad_config_exits_2_with_one_line_naming_the_key(capsys, tmp_path):
    cfg = write_config(tmp_path / "bad.yaml", "benchmarks:\n  - f3\n  - {name: f1, N: -5}\n")
    code, out, err = kacs(capsys, "run", cfg, "--out", tmp_path / "out")
    assert code == 2
    assert err.strip() == f"error: {cfg}: benchmarks[1].N: must be a whole number >= 1, got -5"
    assert not (tmp_path / "out").exists()
    code, _, err = kacs(capsys, "run", cfg, "--jobs", "0")
    assert code == 2 and err.startswith("error: --jobs must be a whole number >= 1")


def test_rerun_says_nothing_to_do_and_other_config_is_refused(capsys, tmp_path):
    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 2}\niterations: 400\n")
    out = tmp_path / "out"
    code, text, _ = kacs(capsys, "run", cfg, "--out", out, "--jobs", 1)
    assert code == 0 and "4 run(s) to do of 4 selected" in text
    first = pd.read_csv(out / "runs.csv")
    code, text, _ = kacs(capsys, "run", cfg, "--out", out, "--jobs", 1)
    assert code == 0 and "Nothing to do: all 4 selected runs of experiment exp are already finished" in text
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--iterations", 300)
    assert code == 2 and "different config (differs in: iterations)" in err and "--force" in err
    code, text, _ = kacs(capsys, "run", cfg, "--out", out, "--iterations", 300, "--force", "--jobs", 1)
    assert code == 0 and "4 run(s) to do of 4 selected" in text
    assert pd.read_csv(out / "runs.csv")["iterations"].eq(300).all() and len(first) == 4


def test_missing_dataset_exits_2_before_running_and_skip_missing_runs_the_rest(capsys, tmp_path, shared_data_dir):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(shared_data_dir / "eec.csv", data / "eec.csv")
    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f1, source: published}, eec, ccpp]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 1}\niterations: 300\n")
    out = tmp_path / "out"
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--data-dir", data)
    assert code == 2 and err.count("\n") == 1
    assert "missing dataset(s) f1, ccpp" in err and "kacs data fetch" in err and "kacs data import DIR" in err
    assert not out.exists()
    code, text, _ = kacs(capsys, "run", cfg, "--out", out, "--data-dir", data, "--skip-missing", "--jobs", 1)
    assert code == 0 and "skipping f1, ccpp" in text
    runs = pd.read_csv(out / "runs.csv")
    assert list(runs["benchmark"]) == ["eec", "eec"] and list(runs["n"]) == [8, 8]


def test_scale_dim_makes_one_cell_per_n_and_guideline_sets_the_budget(capsys, tmp_path):
    out = tmp_path / "dim"
    code, _, err = kacs(capsys, "scale", "--dim", "2,4", "--runs", 1, "--iterations", 500, "--out", out, "--jobs", 2)
    assert code == 0, err
    runs = pd.read_csv(out / "runs.csv")
    assert list(zip(runs.benchmark, runs.method, runs.n, runs.N)) == [
        ("f3-n2", "xcsf", 2, 6400), ("f3-n2", "kacs", 2, 6400),
        ("f3-n4", "xcsf", 4, 6400), ("f3-n4", "kacs", 4, 6400)]
    assert set(runs["samples"]) == {1000} and set(runs["experiment"]) == {"dim_scaling"}

    guided = tmp_path / "guided"
    code, _, err = kacs(capsys, "scale", "--dim", "4,12", "--guideline", "--runs", 1, "--iterations", 100,
                        "--methods", "kacs", "--out", guided, "--jobs", 1)
    assert code == 0, err
    runs = pd.read_csv(guided / "runs.csv")
    assert list(zip(runs.benchmark, runs.n, runs.N)) == [("f3-n4", 4, 6400), ("f3-n12-N7200", 12, 7200)]

    code, _, err = kacs(capsys, "scale", "--runs", 1)
    assert code == 2 and "choose one sweep" in err
    code, _, err = kacs(capsys, "scale", "--dim", "1..4")
    assert code == 2 and "--dim: f3 needs n >= 2" in err


def test_scale_samples_doubles(capsys, tmp_path):
    out = tmp_path / "samples"
    code, _, err = kacs(capsys, "scale", "--samples", "125..250", "--runs", 1, "--iterations", 200,
                        "--methods", "xcsf", "--out", out, "--jobs", 1)
    assert code == 0, err
    runs = pd.read_csv(out / "runs.csv")
    assert list(zip(runs.benchmark, runs.samples, runs.n)) == [("f3-s125", 125, 10), ("f3-s250", 250, 10)]


KILL_CONFIG = """\
experiment: killed
hyperparameters: {N: 400}
benchmarks:
  - {name: f3, n: 5, samples: 300}
protocol: {name: main, runs: 6}
iterations: 20000
eval_every: 5000
"""


@pytest.mark.slow
def test_sigkilled_campaign_resumes_to_the_uninterrupted_result(capsys, tmp_path):
    cfg = write_config(tmp_path / "killed.yaml", KILL_CONFIG)
    reference = tmp_path / "reference"
    code, _, err = kacs(capsys, "run", cfg, "--out", reference, "--jobs", 2)
    assert code == 0, err
    total = len(pd.read_csv(reference / "runs.csv"))
    assert total == 12

    out = tmp_path / "killed"
    records = out / "runs"
    # Its own session, so that killing the group also kills the loky worker processes.
    proc = start_campaign(cfg, out)
    try:
        wait_for_a_finished_run(proc, out)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finished = len(list(records.glob("*.json")))
    assert 1 <= finished < total, finished
    # The loky workers were in the group too: none may outlive the kill.
    _wait_until_the_group_is_gone(proc.pid, "killed")
    # SIGKILL to the whole group also kills loky's resource tracker, the process that would
    # have unlinked the campaign's semaphores: nothing is left to do it, so the test does.
    for leftover in Path("/dev/shm").glob(f"sem.loky-{proc.pid}-*"):
        leftover.unlink(missing_ok=True)

    code, text, err = kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 0, err
    match = re.search(r"(\d+) run\(s\) to do of 12 selected, (\d+) already finished", text)
    assert match and int(match.group(2)) >= finished and int(match.group(1)) + int(match.group(2)) == 12
    pd.testing.assert_frame_equal(pd.read_csv(out / "runs.csv")[NUMBERS],
                                  pd.read_csv(reference / "runs.csv")[NUMBERS], check_exact=True)
    for curve in (reference / "curves").glob("*.csv"):
        assert (out / "curves" / curve.name).read_bytes() == curve.read_bytes()
    assert not list(out.rglob("*.tmp"))


def start_campaign(cfg: Path, out: Path) -> subprocess.Popen:
    """`kacs run CFG --out OUT --jobs 2` as a real process in a session of its own."""
    return subprocess.Popen(
        [sys.executable, "-c", "from kacs_cli.cli import main; main()", "run", str(cfg),
         "--out", str(out), "--jobs", "2"],
        start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def wait_for_a_finished_run(proc: subprocess.Popen, out: Path) -> None:
    """Until the campaign has written its first run record; it must still be running then."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "runs").is_dir() and any((out / "runs").glob("*.json")):
            break
        time.sleep(0.01)
    assert proc.poll() is None, f"the campaign ended before it could be killed: {proc.stderr.read()}"


def shm_files() -> set[str]:
    shm = Path("/dev/shm")
    return {p.name for p in shm.iterdir()} if shm.is_dir() else set()


@pytest.mark.slow
@pytest.mark.parametrize("signum, group", [(signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGTERM, True),
                                           (signal.SIGINT, True)])
def test_sigterm_and_sighup_stop_like_ctrl_c(capsys, tmp_path, signum, group):
    """`kill PID` (the parent alone), or a scheduler's SIGTERM and a terminal's Ctrl-C (the
    whole process group): one line, exit 128 + signum, the finished runs flushed."""
    cfg = write_config(tmp_path / "killed.yaml", KILL_CONFIG)
    out = tmp_path / "out"
    before = shm_files()
    proc = start_campaign(cfg, out)
    try:
        wait_for_a_finished_run(proc, out)
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        # Allowance for a fresh clone, whose engines compile while the campaign runs.
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    err = err.decode()
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err
    assert err == f"interrupted ({name}): finished runs are kept in {out}; run the same command again to resume\n"
    recorded = {p.stem for p in (out / "runs").glob("*.json")}
    rows = pd.read_csv(out / "runs.csv")
    assert 1 <= len(recorded) < 12
    assert {f"{b}__{m}__{r}" for b, m, r in zip(rows.benchmark, rows.method, rows.run)} == recorded
    assert (out / "curves.csv.gz").is_file()
    assert {p.stem for p in (out / "curves").glob("*.csv")} == recorded
    _wait_until_the_group_is_gone(proc.pid, "stopped")  # the workers are gone with the campaign
    assert not {f for f in shm_files() - before if f.startswith(f"sem.loky-{proc.pid}-")}

    code, text, err = kacs(capsys, "run", cfg, "--out", out, "--jobs", 2)
    assert code == 0, err
    assert f"{12 - len(recorded)} run(s) to do of 12 selected, {len(recorded)} already finished" in text


@pytest.mark.slow
def test_a_stop_just_after_a_submit_ends_the_pool_cleanly(monkeypatch):
    """The race behind a campaign that once did not exit after SIGHUP: a stop while the id of
    a run just submitted still waits in loky's queue. The manager thread sleeps until it is
    woken, so an id put there without waking it stays there, as in the race, until the stop
    wakes it: the pool must still end its workers and its manager thread without an error."""
    from kacs_cli.experiments.campaign import workers

    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    pool = workers._LocalPool([], settings=None, jobs=1, tick=None)
    running = pool._executor.submit(time.sleep, 60)
    pool._pending.add(running)
    while not running.running():
        time.sleep(0.01)
    manager = pool._executor._executor_manager_thread
    pool._executor._work_ids.put(10**6)  # an id whose work item the shutdown drops
    start = time.monotonic()
    pool.close()
    manager.join(timeout=30)
    assert not manager.is_alive() and errors == []
    assert time.monotonic() - start < 30  # the running run was killed, not waited for


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_numbers(capsys, tmp_path):
    pytest.importorskip("distributed")
    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 3, samples: 150}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 2}\niterations: 500\n")
    code, _, err = kacs(capsys, "run", cfg, "--out", tmp_path / "local", "--jobs", 1)
    assert code == 0, err
    # No --scheduler: the runner starts (and stops) a LocalCluster of --jobs worker processes.
    code, text, err = kacs(capsys, "run", cfg, "--out", tmp_path / "dask", "--jobs", 1, "--backend", "dask")
    assert code == 0, err
    assert "a local Dask cluster of 1 worker(s)" in text
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "dask" / "runs.csv")[NUMBERS],
                                  pd.read_csv(tmp_path / "local" / "runs.csv")[NUMBERS], check_exact=True)


@pytest.mark.slow
def test_sigkill_of_the_parent_alone_leaves_no_worker_alive(tmp_path):
    psutil = pytest.importorskip("psutil")
    cfg = write_config(tmp_path / "killed.yaml", KILL_CONFIG)
    out = tmp_path / "out"
    # Its own session only so that the test can clean up if the workers do outlive the kill;
    # the kill itself goes to the parent process alone, as `kill -9 PID` would.
    proc = start_campaign(cfg, out)
    try:
        parent = psutil.Process(proc.pid)
        # After the first finished run every worker has had a task and is busy with another.
        wait_for_a_finished_run(proc, out)
        children = parent.children(recursive=True)
        assert len(children) >= 2, children  # the two loky workers (and the resource tracker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        _, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, f"still alive after the parent was killed: {[p.cmdline() for p in alive]}"
        # The resource tracker outlived the parent long enough to unlink its semaphores.
        assert not list(Path("/dev/shm").glob(f"sem.loky-{proc.pid}-*"))
    finally:
        if proc.poll() is None:
            proc.kill()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
        proc.stderr.close()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status (Linux)")
def test_workers_with_a_run_leave_the_stop_signals_to_the_campaign(tmp_path):
    """A worker killed by Ctrl-C halfway through writing its result left loky's manager
    thread waiting forever for the rest (a campaign that never exited): the workers ignore
    the stop signals, and the campaign process stops them. Read from the kernel: the
    SigIgn mask of every worker (the processes running loky's worker module)."""
    psutil = pytest.importorskip("psutil")
    cfg = write_config(tmp_path / "killed.yaml", KILL_CONFIG)
    out = tmp_path / "out"
    proc = start_campaign(cfg, out)
    try:
        wait_for_a_finished_run(proc, out)
        workers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                   if "popen_loky_posix" in " ".join(p.cmdline())]
        assert len(workers) == 2, [p.cmdline() for p in workers]

        def ignored(worker) -> int:
            status = Path(f"/proc/{worker.pid}/status").read_text()
            return int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.M).group(1), 16)

        # A worker sets the mask when its first run starts; on a loaded machine the second
        # worker may start its first run only after the other has finished one, so wait for it.
        stops = sum(1 << (signum - 1) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(ignored(w) & stops == stops for w in workers):
            time.sleep(0.2)
        for worker in workers:
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                assert ignored(worker) >> (signum - 1) & 1, f"worker {worker.pid} does not ignore {signum.name}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()


def test_unreachable_scheduler_is_one_line_and_leaves_no_output_folder(capsys, tmp_path):
    pytest.importorskip("distributed")
    import socket

    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 1}\niterations: 100\n")
    with socket.socket() as s:  # a port nobody listens on once it is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "out"
    for address in (f"tcp://127.0.0.1:{port}", "no-such-host.invalid:8786"):
        code, _, err = kacs(capsys, "run", cfg, "--out", out, "--scheduler", address)
        assert code == 2 and err.count("\n") == 1, err
        assert f"--scheduler {address}: cannot reach the Dask scheduler" in err
        assert not out.exists()


def test_a_running_scheduler_gives_the_local_numbers(capsys, tmp_path):
    pytest.importorskip("distributed")
    from dask.distributed import LocalCluster

    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 2}\niterations: 300\n")
    code, _, err = kacs(capsys, "run", cfg, "--out", tmp_path / "local", "--jobs", 1)
    assert code == 0, err
    # Two threads: both runs train at the same time in one worker and still give the same numbers.
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        code, text, err = kacs(capsys, "run", cfg, "--out", tmp_path / "remote", "--scheduler",
                               cluster.scheduler_address)
    assert code == 0, err
    assert f"Dask at {cluster.scheduler_address}" in text
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "remote" / "runs.csv")[NUMBERS],
                                  pd.read_csv(tmp_path / "local" / "runs.csv")[NUMBERS], check_exact=True)


def test_scale_has_its_own_default_folder_and_takes_more_runs_later(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scale = ["scale", "--dim", "2..4", "--iterations", 100, "--methods", "kacs", "--jobs", 1]
    code, _, err = kacs(capsys, *scale, "--runs", 1)
    assert code == 0, err
    assert (tmp_path / "results" / "scale_dim_2-4" / "runs.csv").is_file()
    assert not (tmp_path / "results" / "dim_scaling").exists()  # configs/dim_scaling.yaml's folder
    code, text, err = kacs(capsys, *scale, "--runs", 2)
    assert code == 0, err
    assert "2 run(s) to do of 4 selected, 2 already finished" in text
    runs = pd.read_csv(tmp_path / "results" / "scale_dim_2-4" / "runs.csv")
    assert list(zip(runs.benchmark, runs.run)) == [("f3-n2", 0), ("f3-n2", 1), ("f3-n4", 0), ("f3-n4", 1)]


def test_more_or_fewer_runs_in_an_existing_folder_keep_the_finished_ones(capsys, tmp_path):
    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 5}\niterations: 300\n")
    out = tmp_path / "out"
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--runs", 2, "--jobs", 1)
    assert code == 0, err
    first = pd.read_csv(out / "runs.csv")
    code, text, err = kacs(capsys, "run", cfg, "--out", out, "--runs", 3, "--jobs", 1)
    assert code == 0, err
    assert "2 run(s) to do of 6 selected, 4 already finished" in text
    grown = pd.read_csv(out / "runs.csv")
    assert sorted(grown["run"]) == [0, 0, 1, 1, 2, 2]
    pd.testing.assert_frame_equal(grown[grown["run"] < 2].reset_index(drop=True)[NUMBERS], first[NUMBERS])
    assert "runs: 3" in (out / "config.yaml").read_text()
    # Fewer runs now: nothing to do, and the third run stays in the folder.
    code, text, err = kacs(capsys, "run", cfg, "--out", out, "--runs", 2, "--jobs", 1)
    assert code == 0 and "Nothing to do: all 4 selected runs" in text, err
    assert len(pd.read_csv(out / "runs.csv")) == 6 and "runs: 3" in (out / "config.yaml").read_text()
    # Any other difference is still refused, naming the key.
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--runs", 4, "--iterations", 200)
    assert code == 2 and "differs in: iterations)" in err and "--force" in err
    other = write_config(tmp_path / "other.yaml", cfg.read_text().replace("runs: 5", "runs: 5, train_fraction: 0.8"))
    code, _, err = kacs(capsys, "run", other, "--out", out, "--runs", 3)
    assert code == 2 and "differs in: protocol.train_fraction)" in err
    assert len(pd.read_csv(out / "runs.csv")) == 6


def test_a_directory_as_config_says_so(capsys, tmp_path):
    write_config(tmp_path / "exp.yaml", "benchmarks: [f3]\n")
    code, _, err = kacs(capsys, "run", tmp_path)
    assert code == 2 and err.count("\n") == 1
    assert f"{tmp_path} is a directory" in err and "YAML config" in err and "exp.yaml" in err


def _one_run_campaign(capsys, tmp_path) -> tuple[Path, Path]:
    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 1}\niterations: 200\n")
    out = tmp_path / "out"
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--jobs", 1)
    assert code == 0, err
    return cfg, out


def test_one_planned_run_is_singular_in_the_report(capsys, tmp_path):
    _, out = _one_run_campaign(capsys, tmp_path)
    code, _, err = kacs(capsys, "report", out, "--no-figures")
    assert code == 0, err
    text = (out / "report" / "report.md").read_text()
    assert "1 run per cell planned" in text and "1 runs" not in text


def test_a_damaged_runs_csv_row_is_refused_with_its_line(capsys, tmp_path):
    cfg, out = _one_run_campaign(capsys, tmp_path)
    runs = out / "runs.csv"
    lines = runs.read_text().splitlines()
    assert len(lines) == 3
    for damaged, what in ((lines[2][:6], "fields where the header has"),
                          (lines[2].replace(",kacs,0,", ",kacs,zero,", 1), "run is 'zero'")):
        runs.write_text("\n".join(lines[:2] + [damaged]) + "\n")
        for argv in (["report", out, "--no-figures"], ["run", cfg, "--out", out, "--jobs", 1]):
            code, _, err = kacs(capsys, *argv)
            assert code == 2 and err.count("\n") == 1, (argv, err)
            assert f"{runs}:3: " in err and what in err and "delete that line" in err, (argv, err)


def test_dask_backend_without_dask_installed_leaves_no_output_folder(capsys, tmp_path, monkeypatch):
    cfg = write_config(tmp_path / "exp.yaml",
                       "experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                       "hyperparameters: {N: 200}\nprotocol: {runs: 1}\niterations: 100\n")
    # A None entry makes `import distributed` fail as if the package were not installed.
    for name in ("dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    out = tmp_path / "out"
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--backend", "dask", "--jobs", 1)
    assert code == 2 and err.count("\n") == 1 and "pip install 'kacs[dask]'" in err, err
    assert not out.exists()
