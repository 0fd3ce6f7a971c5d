"""`kacs bench`: workloads, the --repeat median, the fingerprint check and the per-phase
profile (no timing asserts)."""

import json
import math
import re
import sys

import numpy as np
import pytest

from cli_support import run_kacs
from kacs_cli.errors import UserError
from kacs_cli.cli import timing as bench
from kacs_cli.engine import Hyperparameters, Model, train_run
from kacs_cli.engine.kacs import PHASES
from kacs_cli.engine.population import S_DELETIONS, S_P
from kacs_cli.engine.train import Profile
from kacs_cli.cli.timing import Timing, WORKLOADS, get_workload, median_timing, phase_profile
from repo_support import REPO
from test_engine_support import snapshot


kacs = run_kacs


def test_workloads_are_the_scaling_cells_and_the_reference():
    assert {name: (w.n, w.N) for name, w in WORKLOADS.items()} == {
        "reference": (10, 6400), "n18-N15984": (18, 15984), "n20-N6400": (20, 6400),
        "n20-N19680": (20, 19680)}
    with pytest.raises(UserError, match="unknown workload 'n30'.*reference"):
        get_workload("n30")


def test_unknown_workload_is_one_line_and_exit_2(capsys):
    code, out, err = kacs(capsys, "bench", "--workload", "reference,n30")
    assert code == 2
    assert "unknown workload 'n30'" in err and "Traceback" not in err
    assert out == ""   # refused before anything ran


def test_repeat_reports_the_median_and_refuses_disagreeing_runs(monkeypatch):
    seconds = iter([3.0, 1.0, 2.0])
    monkeypatch.setattr(bench, "time_engine",
                        lambda m, split, its, N, profile: Timing(m, next(seconds), its, 0.25, 100))
    timing, runs = median_timing("kacs", None, 1000, 6400, 3)
    assert (timing.seconds, runs, timing.test_mae, timing.rules) == (2.0, [3.0, 1.0, 2.0], 0.25, 100)
    fingerprints = iter([(0.25, 100), (0.25, 101)])

    def flaky(m, split, its, N, profile):
        mae, rules = next(fingerprints)
        return Timing(m, 1.0, its, mae, rules)

    monkeypatch.setattr(bench, "time_engine", flaky)
    with pytest.raises(RuntimeError, match="not deterministic"):
        median_timing("xcsf", None, 1000, 6400, 2)



def test_the_xcsf_library_is_timed_as_often_as_the_engines(monkeypatch):
    # The engines' medians are 2.0 s (XCSF) and the library's runs 40, 60 and 50 s: its median
    # is 50 s, so our XCSF runs 25 times its rate (a single library run would say 20 or 30).
    monkeypatch.setattr(bench, "time_engine",
                        lambda m, split, its, N, profile: Timing(m, 2.0, its, 0.25, 100))
    library = iter([40.0, 60.0, 50.0])
    monkeypatch.setattr(bench, "time_xcsf_library",
                        lambda split, its, N: Timing("xcsf-lib", next(library), its, 0.3, 500))
    out = bench.run_bench(iterations=1000, vs_xcsf_lib=True, repeat=3)
    assert out["xcsf_lib_runs_seconds"] == [40.0, 60.0, 50.0]
    assert out["xcsf_lib_seconds"] == 50.0 and out["xcsf_lib_its_per_s"] == 20.0
    assert out["xcsf_speedup_vs_lib"] == pytest.approx(25.0)

@pytest.mark.slow
def test_a_short_scaling_bench_runs_both_learners_on_its_cell(capsys):
    code, out, err = kacs(capsys, "bench", "--workload", "n20-N6400", "--iterations", "300",
                          "--repeat", "2", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert (result["workload"], result["n"], result["N"], result["repeat"]) == ("n20-N6400", 20, 6400, 2)
    for m in ("kacs", "xcsf"):
        assert len(result[f"{m}_runs_seconds"]) == 2
        assert result[f"{m}_rules"] > 0 and result[f"{m}_test_mae"] > 0.0


def test_bench_runs_both_learners_and_prints_what_it_measured(capsys):
    code, out, err = kacs(capsys, "bench", "--iterations", 100, "--json")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines
    result = json.loads(lines[0])
    assert result["iterations"] == 100
    for m in ("kacs", "xcsf"):
        assert result[f"{m}_seconds"] > 0 and math.isfinite(result[f"{m}_seconds"])
        assert math.isclose(result[f"{m}_its_per_s"], 100 / result[f"{m}_seconds"])
        assert math.isfinite(result[f"{m}_test_mae"]) and result[f"{m}_test_mae"] >= 0
        assert result[f"{m}_rules"] >= 1
    assert result["peak_memory_mib"] > 0

    # The table shows the same run: the learners are seeded, so test MAE and rules repeat.
    code, out, err = kacs(capsys, "bench", "--iterations", 100)
    assert code == 0, err
    assert "100 iterations" in out and "peak memory" in out
    for m in ("kacs", "xcsf"):
        row = next(line for line in out.splitlines() if f" {m.upper()} " in line)
        assert f"{result[f'{m}_test_mae']:.4f}" in row and f"{result[f'{m}_rules']:,}" in row, row


@pytest.mark.slow
def test_the_performance_table_shows_what_kacs_bench_prints(capsys):
    """docs/performance.md's fingerprints (test MAE, rules of the reference workload) are the
    numbers a user gets from `kacs bench`: a full 100,000-iteration run of each learner (about 5 s)."""
    readme = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    table = readme[readme.index("| workload | learner |"):].splitlines()
    assert table[2].startswith("| reference") and "| KACS |" in table[2] and "| XCSF |" in table[3]
    rows = {}
    for name, row in (("kacs", table[2]), ("xcsf", table[3])):
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        rows[name] = (cells[-2], cells[-1])  # the table's last columns: test MAE, rules
    code, out, err = kacs(capsys, "bench", "--json")
    assert code == 0, err
    result = json.loads(out.splitlines()[0])
    for name in ("kacs", "xcsf"):
        assert rows[name] == (f"{result[f'{name}_test_mae']:.4f}", f"{result[f'{name}_rules']:,}"), name


def test_a_profile_is_pooled_over_the_runs():
    phases = (("a", "phase a"), ("b", "phase b"))
    runs = [Profile(phases, (100, 300), 1000), Profile(phases, (300, 100), 1000)]
    profile = phase_profile(runs, 10)   # 10 iterations per run
    assert profile["cycles_per_iteration"] == 100.0
    assert profile["phases"] == {
        "a": {"label": "phase a", "cycles_per_iteration": 20.0, "share": 0.2},
        "b": {"label": "phase b", "cycles_per_iteration": 20.0, "share": 0.2},
        "rest": {"label": "rest of the run", "cycles_per_iteration": 60.0, "share": 0.6}}


@pytest.mark.slow
def test_profile_reports_every_phase_of_kacs_and_changes_no_number(capsys):
    code, out, err = kacs(capsys, "bench", "--iterations", 300, "--profile", "--json")
    assert code == 0, err
    result = json.loads(out)
    profile = result["kacs_profile"]
    assert "xcsf_profile" not in result
    assert list(profile["phases"]) == [key for key, _ in PHASES] + ["rest"]
    cycles = [phase["cycles_per_iteration"] for phase in profile["phases"].values()]
    assert all(c >= 0 for c in cycles) and profile["cycles_per_iteration"] > 0
    assert math.isclose(sum(cycles), profile["cycles_per_iteration"])
    assert math.isclose(sum(p["share"] for p in profile["phases"].values()), 1.0)
    # The same run as without the profile, and the counters cover the KACS run that was timed.
    code, out, err = kacs(capsys, "bench", "--iterations", 300, "--json")
    assert code == 0, err
    plain = json.loads(out)
    assert "kacs_profile" not in plain
    for key in ("kacs_test_mae", "kacs_rules", "xcsf_test_mae", "xcsf_rules"):
        assert result[key] == plain[key], key

    code, out, err = kacs(capsys, "bench", "--iterations", 300, "--profile")
    assert code == 0, err
    assert "KACS: cycles per iteration by phase" in out
    for _, label in PHASES + (("rest", "rest of the run"), ("", "whole run")):
        assert label in out, label


def test_profile_is_documented_as_kacs_only(capsys):
    code, out, err = kacs(capsys, "bench", "--help")
    words = " ".join(out.replace("\u2502", " ").split())  # the help's box, however it wraps
    assert code == 0 and re.search(r"--profile (<bool> )?KACS only:", words), words


# ------------------------------------------------ the rows workload


def test_the_rows_data_are_the_generator_and_its_further_rows():
    X, y, X_test, y_test = bench.rows_data(40)
    assert X.shape == (40, 8) and y.shape == (40,) and X_test.shape == (bench.TEST_ROWS, 8)
    assert ((0 <= X) & (X < 1)).all() and ((0 <= X_test) & (X_test < 1)).all()
    signal = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] * X[:, 3]
    assert 0.05 < np.std(y - signal) < 0.15  # the 0.1 N(0, 1) noise
    again = bench.rows_data(40)
    assert all(np.array_equal(a, b) for a, b in zip((X, y, X_test, y_test), again))
    assert np.array_equal(bench.rows_data(80)[0][:40], X)  # the inputs are drawn first


def test_the_rows_workload_reports_the_median_fit_and_refuses_disagreeing_fits(monkeypatch):
    class Fitted:
        capacity_N_ = 12800

        def fit(self, X, y):
            return self

    monkeypatch.setattr(bench, "rows_data", lambda rows, seed=0: (np.zeros((rows, 8)),) * 4)
    monkeypatch.setattr(bench, "recommended_kacs", lambda iterations=100_000: Fitted())
    timed = iter([(3.0, 0.09), (0.4, 0.08), (1.0, 0.09), (0.2, 0.08), (2.0, 0.09), (0.3, 0.08)])
    monkeypatch.setattr(bench, "_timed_fit", lambda model, data: next(timed))
    result = bench.run_rows_bench(500, iterations=300, repeat=3)
    assert (result["rows"], result["kacs_seconds"], result["kacs_runs_seconds"]) == (500, 2.0, [3.0, 1.0, 2.0])
    assert (result["gbr_seconds"], result["gbr_runs_seconds"]) == (0.3, [0.4, 0.2, 0.3])
    assert (result["kacs_test_mae"], result["gbr_test_mae"], result["kacs_N"]) == (0.09, 0.08, 12800)
    assert result["kacs_over_gbr"] == pytest.approx(2.0 / 0.3)
    timed = iter([(1.0, 0.09), (0.4, 0.08), (1.0, 0.0901), (0.2, 0.08)])
    with pytest.raises(RuntimeError, match="not deterministic"):
        bench.run_rows_bench(500, iterations=300, repeat=2)


@pytest.mark.parametrize("arguments, message", [
    (["--rows", "1e6"], "--rows takes whole numbers of at least 10 separated by commas, got '1e6'"),
    (["--rows", "1000,5"], "got '5'"),
    (["--profile"], "--profile acts on the engine workloads; drop it for the rows workload"),
    (["--vs-xcsf-lib"], "--vs-xcsf-lib acts on the engine workloads"),
])
def test_the_rows_workload_refuses_bad_options_in_one_line(capsys, arguments, message):
    code, out, err = kacs(capsys, "bench", "--workload", "rows", *arguments)
    assert code == 2 and message in err and "Traceback" not in err
    assert out == ""


@pytest.mark.slow
def test_the_rows_workload_fits_the_recommended_kacs_beside_boosting(capsys):
    code, out, err = kacs(capsys, "bench", "--workload", "rows", "--rows", "300,400", "--iterations", 200, "--json")
    assert code == 0, err
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["rows"] for r in results] == [300, 400]
    X, y, X_test, y_test = bench.rows_data(300)
    model = bench.recommended_kacs(200).fit(X, y)
    first = results[0]
    assert first["kacs_test_mae"] == float(np.mean(np.abs(model.predict(X_test) - y_test)))
    assert first["kacs_N"] == model.capacity_N_ and first["test_rows"] == bench.TEST_ROWS
    assert first["kacs_over_gbr"] == first["kacs_seconds"] / first["gbr_seconds"]
    assert 0 < first["gbr_test_mae"] < 1
    code, out, err = kacs(capsys, "bench", "--workload", "rows", "--rows", "300", "--iterations", 200)
    assert code == 0, err
    assert "HistGradientBoostingRegressor" in out and "300" in out


# The profile's specialisation of the engine (engine/cycles.py) computes the numbers of the
# ordinary one; these tests live beside `kacs bench --profile` so that one worker compiles it.

def test_a_profiled_run_is_the_unprofiled_run_bit_for_bit():
    n = 3
    rng = np.random.default_rng(11)
    X = rng.random((120, n))
    y = np.sin(3.0 * X[:, 0]) + X[:, 1] * X[:, 2]
    runs = []
    for clock in (None, np.zeros(len(PHASES), np.int64)):
        model = Model("kacs", n, Hyperparameters(N=300))
        curve = model.train(X[:100], y[:100], 1500, seed=5, X_test=X[100:], y_test=y[100:],
                            eval_every=500, clock=clock)
        runs.append((model, curve, clock))
    (plain, plain_curve, _), (profiled, profiled_curve, clock) = runs
    # Covering, deletions and GA events ran, so every phase had work to do.
    assert int(plain.pop.scal[S_DELETIONS]) > 0
    np.testing.assert_array_equal(profiled_curve, plain_curve)
    assert int(profiled.pop.scal[S_P]) == int(plain.pop.scal[S_P])
    for name, values in snapshot(plain.pop).items():
        np.testing.assert_array_equal(snapshot(profiled.pop)[name], values, err_msg=name)
    np.testing.assert_array_equal(profiled.pop.scal, plain.pop.scal)
    np.testing.assert_array_equal(profiled.predict(X), plain.predict(X))
    assert np.all(clock >= 0) and clock[PHASES.index(("rule_update", "rule update"))] > 0


def test_a_profile_splits_the_run_into_phases_and_the_rest():
    rng = np.random.default_rng(12)
    X = rng.random((80, 2))
    y = X[:, 0] - X[:, 1]
    result = train_run("kacs", X[:60], y[:60], X[60:], y[60:], params=Hyperparameters(N=200),
                       iterations=600, eval_every=200, seed=1, profile=True)
    profile = result.profile
    assert profile.phases == PHASES
    assert len(profile.cycles) == len(PHASES) and all(c >= 0 for c in profile.cycles)
    assert sum(profile.cycles) <= profile.total and profile.rest == profile.total - sum(profile.cycles)
    assert train_run("kacs", X[:60], y[:60], X[60:], y[60:], params=Hyperparameters(N=200),
                     iterations=600, eval_every=200, seed=1).profile is None


def _fake_kacs(tmp_path, seconds):
    """An executable standing for another installation's kacs: each call prints the next of
    `seconds` (KACS, XCSF) as its bench result, with fixed fingerprints."""
    state = tmp_path / "calls"
    state.write_text("0")
    script = tmp_path / "other-kacs"
    script.write_text(f"""#!{sys.executable}
import json, pathlib, sys
state = pathlib.Path({str(state)!r})
k = int(state.read_text()); state.write_text(str(k + 1))
assert sys.argv[1:3] == ["bench", "--json"] and "--workload" in sys.argv
kacs, xcsf = {seconds!r}[k]
print("noise on stdout first")
print(json.dumps({{"kacs_seconds": kacs, "xcsf_seconds": xcsf, "kacs_test_mae": 0.5, "xcsf_test_mae": 0.6,
                  "kacs_rules": 10, "xcsf_rules": 20}}))
""")
    script.chmod(0o755)
    return script


def test_against_pairs_the_rounds_and_reports_each_speed_up(monkeypatch, capsys, tmp_path):
    mine = iter([(2.0, 4.0), (1.0, 5.0), (4.0, 2.0)])

    def this_code(iterations, workload_name):
        kacs_s, xcsf_s = next(mine)
        return {"workload": workload_name, "n": 10, "N": 6400, "repeat": 1, "iterations": iterations,
                "kacs_seconds": kacs_s, "xcsf_seconds": xcsf_s, "kacs_test_mae": 0.4, "xcsf_test_mae": 0.6,
                "kacs_rules": 11, "xcsf_rules": 20, "kacs_its_per_s": 1.0, "xcsf_its_per_s": 1.0,
                "kacs_runs_seconds": [kacs_s], "xcsf_runs_seconds": [xcsf_s], "peak_memory_mib": 1.0}

    monkeypatch.setattr(bench, "run_bench", this_code)
    other = _fake_kacs(tmp_path, [(3.0, 4.0), (3.0, 4.0), (2.0, 4.0)])
    code, out, err = kacs(capsys, "bench", "--against", str(other), "--repeat", "3", "--json", "--iterations", "1000")
    assert code == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    # Each round's speed-up is the other's seconds over this code's of that round, not a ratio of medians.
    assert result["kacs_speedups"] == [1.5, 3.0, 0.5] and result["kacs_speedup"] == 1.5
    assert result["xcsf_speedups"] == [1.0, 0.8, 2.0] and result["xcsf_speedup"] == 1.0
    assert (result["kacs_seconds"], result["kacs_against_seconds"]) == (2.0, 3.0)
    assert (result["kacs_rules"], result["kacs_against_rules"], result["against"]) == (11, 10, str(other))
    mine = iter([(2.0, 4.0)])
    _fake_kacs(tmp_path, [(3.0, 4.0)])
    code, out, err = kacs(capsys, "bench", "--against", str(other), "--iterations", "1000")
    assert code == 0 and "1.50x" in out and "3.00" in out


@pytest.mark.parametrize("arguments, message", [
    (["--profile"], "--against times the two codes alone; drop --profile"),
    (["--vs-xcsf-lib"], "--against times the two codes alone; drop --vs-xcsf-lib"),
    (["--workload", "rows"], "--against acts on the engine workloads; drop it for the rows workload"),
])
def test_against_refuses_what_it_cannot_pair_in_one_line(capsys, arguments, message):
    code, out, err = kacs(capsys, "bench", "--against", "/bin/true", *arguments)
    assert code == 2 and message in err and "Traceback" not in err


def test_against_a_command_that_cannot_run_or_fails_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(bench, "run_bench", lambda iterations, workload_name: {"kacs_seconds": 1.0})
    code, _, err = kacs(capsys, "bench", "--against", str(tmp_path / "nowhere"), "--iterations", "1000")
    assert code == 2 and "cannot run it" in err and "Traceback" not in err
    code, _, err = kacs(capsys, "bench", "--against", "/bin/false", "--iterations", "1000")
    assert code == 2 and "its kacs bench failed (exit 1" in err
