"""`kacs bench`: a smoke test on a tiny budget (the reference workload, 100 iterations)."""

import json
import math

from kacs_cli.cli import main


def kacs(capsys, *args):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


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
