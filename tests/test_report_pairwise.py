"""The pairwise table of `kacs report`: every two methods per cell, paired by run, Holm over
the pair's cells, against values computed by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from kacs_cli.reporting.build import build_report

from test_report import run_row, write_experiment

RUNS = 7


def _rows() -> list[dict]:
    rows = []
    for r in range(RUNS):
        # f1: XCSF above KACS in every run by distinct amounts (0.2 - 0.01 r): exact two-sided
        # Wilcoxon p = 2 / 2^7; f2: the same values for both, so p = 1 and every pair equal.
        rows.append(run_row("pw", "f1", "xcsf", r, test_mae=0.5 + 0.01 * r, train_mae=0.1, rules=10, params=10))
        rows.append(run_row("pw", "f1", "kacs", r, test_mae=0.3 + 0.02 * r, train_mae=0.1, rules=10, params=10,
                            compacted_test_mae=0.4, compacted_rules=1))
        for method in ("xcsf", "kacs"):
            rows.append(run_row("pw", "f2", method, r, test_mae=0.2 + 0.01 * r, train_mae=0.1, rules=10, params=10))
    return rows


def test_pairwise_table_pairs_runs_and_holm_adjusts_over_the_cells(tmp_path) -> None:
    exp = write_experiment(tmp_path / "pw", "pw", _rows(), [{"name": "f1"}, {"name": "f2"}], runs=RUNS)
    build_report(exp, formats=("csv",), figures=False)
    table = pd.read_csv(exp / "report" / "pw_pairwise.csv").set_index("cell_id")
    # one metric: the compacted error is compared only where both methods were compacted
    assert list(table.metric) == ["test_mae", "test_mae"]
    assert list(table.a) == ["xcsf", "xcsf"] and list(table.b) == ["kacs", "kacs"]  # the config's order
    f1, f2 = table.loc["f1"], table.loc["f2"]
    assert f1.n_pairs == RUNS and f1.identical == 0 and f2.identical == RUNS
    assert f1.a_mean == pytest.approx(0.53) and f1.b_mean == pytest.approx(0.36)
    assert f1.change_pct == pytest.approx(100 * (0.53 / 0.36 - 1))
    assert f1.p == pytest.approx(2 / 2 ** RUNS) and f2.p == 1.0
    # Holm over the pair's two cells: the smaller p doubled, the larger kept at 1
    assert f1.p_holm == pytest.approx(2 * 2 / 2 ** RUNS) and f2.p_holm == 1.0
    assert (f1.verdict, f2.verdict) == ("worse", "level")  # XCSF's error is the higher
