"""`kacs bench`: workloads, the --repeat median and the fingerprint check (no timing asserts)."""

import json
import math
from pathlib import Path

import pytest

from cli_support import run_kacs
from kacs_cli.errors import UserError
from kacs_cli.experiments import bench
from kacs_cli.experiments.bench import Timing, WORKLOADS, get_workload, median_timing


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
                        lambda m, split, its, N: Timing(m, next(seconds), its, 0.25, 100))
    timing, runs = median_timing("kacs", None, 1000, 6400, 3)
    assert (timing.seconds, runs, timing.test_mae, timing.rules) == (2.0, [3.0, 1.0, 2.0], 0.25, 100)
    fingerprints = iter([(0.25, 100), (0.25, 101)])

    def flaky(m, split, its, N):
        mae, rules = next(fingerprints)
        return Timing(m, 1.0, its, mae, rules)

    monkeypatch.setattr(bench, "time_engine", flaky)
    with pytest.raises(RuntimeError, match="not deterministic"):
        median_timing("xcsf", None, 1000, 6400, 2)


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


def test_the_performance_table_shows_what_kacs_bench_prints(capsys):
    """docs/performance.md's fingerprints (test MAE, rules of the reference workload) are the
    numbers a user gets from `kacs bench`: a full 100,000-iteration run of each learner (about 5 s)."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "performance.md").read_text(encoding="utf-8")
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
