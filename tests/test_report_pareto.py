"""The accuracy-against-size section of `kacs report` (reporting/pareto.py): the readable front
computed by hand on small frames, a compacted method's point from its compacted_* columns, the
paired-run restriction, and the section written for a tiny hand-built campaign."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from kacs_cli import baselines
from kacs_cli.reporting import pareto
from kacs_cli.reporting.build import build_report
from test_report import PNG_SIGNATURE, run_row


def _method_row(md: str, method: str) -> list[str]:
    """The cells after the first of the Markdown table row of `method`."""
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == method:
            return cells[1:]
    raise AssertionError(f"no row of {method!r}")


def _points(*rows: tuple[str, str, float, float]) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, "kind": k, "test_error": e, "params": p} for m, k, e, p in rows])


def test_the_front_by_hand_with_a_tie_a_dominated_point_and_a_reference():
    R, REF = pareto.READABLE, pareto.REFERENCE
    out = pareto.front(_points(
        ("a", R, 0.10, 100.0),   # on the front
        ("a2", R, 0.10, 100.0),  # the very same point: on it too, tied with a
        ("b", R, 0.20, 50.0),    # fewest parameters: on the front
        ("c", R, 0.20, 200.0),   # dominated by a, a2 and b; a (and a2) the most accurate of them
        ("d", R, 0.30, 50.0),    # as large as b and worse: dominated by b only
        ("e", R, 0.05, 1000.0),  # most accurate: on the front
        ("g", REF, 0.01, 10.0),  # dominates every readable point, but is no readable model
    )).set_index("method")
    assert out["on_front"].to_dict() == {"a": True, "a2": True, "b": True, "c": False, "d": False, "e": True,
                                         "g": None}
    assert out.loc["a", "tied_with"] == "a2" and out.loc["a2", "tied_with"] == "a"
    assert out.loc["b", "tied_with"] == "" and out.loc["e", "dominated_by"] == ""
    # c: 0.20 / 0.10 and 200 / 100 against a (before a2 by name, the same point)
    assert out.loc["c", "dominated_by"] == "a"
    assert out.loc["c", ["error_ratio", "params_ratio"]].tolist() == pytest.approx([2.0, 2.0])
    # d: 0.30 / 0.20 = 1.5 times the error of b at the same size
    assert out.loc["d", "dominated_by"] == "b"
    assert out.loc["d", ["error_ratio", "params_ratio"]].tolist() == pytest.approx([1.5, 1.0])
    assert out.loc["g", "dominated_by"] == "" and math.isnan(out.loc["g", "error_ratio"])


def test_equal_error_and_fewer_parameters_dominates():
    assert pareto.dominates((0.2, 10.0), (0.2, 11.0))
    assert not pareto.dominates((0.2, 10.0), (0.2, 10.0))
    assert not pareto.dominates((0.1, 20.0), (0.2, 10.0))


def test_which_methods_are_readable_is_the_registry_entry():
    assert [n for n in baselines.names() if baselines.get(n).readable] == ["xkan", "ebm", "figs", "rulefit"]
    assert not baselines.get("gbr").readable and not baselines.get("kan").readable


def _campaign(path: Path, rows: list[dict], methods: list[str], engines: dict | None = None) -> Path:
    path.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(path / "runs.csv", index=False)
    engines = "".join(f"  {k}: {v}\n" for k, v in (engines or {}).items())
    (path / "config.yaml").write_text(f"experiment: sizes\nmethods: [{', '.join(methods)}]\n"
                                      + (f"method_engines:\n{engines}" if engines else "")
                                      + "protocol: {name: main, runs: 3}\n")
    return path


def _compacted(r: int, mae: float, params: int) -> dict:
    """A compacted run: the trained model (0.5, 5000 params) and its compacted model."""
    return dict(train_mae=0.4, test_mae=0.5, train_mse=0.3, test_mse=0.3, rules=2500, params=5000,
                compacted_train_mae=mae, compacted_test_mae=mae, compacted_train_mse=mae ** 2,
                compacted_test_mse=mae ** 2, compacted_rules=params // 2, compacted_params=params,
                compacted_seconds=0.1)


def _tiny_rows() -> list[dict]:
    """f1: three runs of each method but figs-small, which has runs 0 and 1 only. By run r:
    kacs (trained, a reference) 0.30 + r/100 at 3000 params; kacs-r10 compacted to 0.20 + r/100
    at 200 + 10 r; figs-small 0.40 + r/100 at 50; figs 0.25 at 400 + 2 r; gbr 0.10 at 9000.
    f2: kacs-r10 0.30 at 100, figs 0.30 at 100 (a tie), gbr 0.2 at 9000, three runs each."""
    rows = []
    for r in range(3):
        rows += [
            run_row("sizes", "f1", "kacs", r, train_mae=0.2, test_mae=0.30 + r / 100, train_mse=0.1,
                    test_mse=0.1, rules=1500, params=3000),
            run_row("sizes", "f1", "kacs-r10", r, **_compacted(r, 0.20 + r / 100, 200 + 10 * r)),
            run_row("sizes", "f1", "figs", r, N=math.nan, train_mae=0.2, test_mae=0.25, train_mse=0.1,
                    test_mse=0.1, params=400 + 2 * r),
            run_row("sizes", "f1", "gbr", r, N=math.nan, train_mae=0.05, test_mae=0.10, train_mse=0.01,
                    test_mse=0.02, params=9000),
            run_row("sizes", "f2", "kacs-r10", r, **_compacted(r, 0.30, 100)),
            run_row("sizes", "f2", "figs", r, N=math.nan, train_mae=0.2, test_mae=0.30, train_mse=0.1,
                    test_mse=0.1, params=100),
            run_row("sizes", "f2", "gbr", r, N=math.nan, train_mae=0.05, test_mae=0.2, train_mse=0.01,
                    test_mse=0.04, params=9000),
        ]
        if r < 2:
            rows.append(run_row("sizes", "f1", "figs-small", r, N=math.nan, train_mae=0.3, test_mae=0.40 + r / 100,
                                train_mse=0.1, test_mse=0.2, params=50))
    return rows


@pytest.mark.slow
def test_the_section_of_a_tiny_campaign(tmp_path):
    exp = _campaign(tmp_path / "sizes", _tiny_rows(), ["kacs", "kacs-r10", "figs-small", "figs", "gbr"],
                    {"kacs-r10": "kacs", "figs-small": "figs"})
    summary = build_report(exp)
    out = exp / "report"
    points = pd.read_csv(out / "sizes_pareto.csv").set_index(["cell", "method"])
    f1 = points.loc["f1"]
    # paired: runs 0 and 1 only (figs-small lacks run 2)
    assert (f1["runs"] == 2).all()
    # kacs-r10: its compacted model over runs 0, 1: MAE (0.20 + 0.21) / 2, params (200 + 210) / 2
    assert f1.loc["kacs-r10", ["test_error", "params"]].tolist() == pytest.approx([0.205, 205.0])
    assert f1.loc["kacs-r10", "source"] == "compacted_test_mae, compacted_params"
    assert f1.loc["kacs", ["test_error", "params"]].tolist() == pytest.approx([0.305, 3000.0])
    assert f1.loc["kacs", "source"] == "test_mae, params" and f1.loc["kacs", "kind"] == "reference"
    assert f1.loc["figs", ["test_error", "params"]].tolist() == pytest.approx([0.25, 401.0])
    assert f1.loc["figs-small", ["test_error", "params"]].tolist() == pytest.approx([0.405, 50.0])
    assert f1["kind"].to_dict() == {"kacs-r10": "readable", "figs-small": "readable", "figs": "readable",
                                    "kacs": "reference", "gbr": "reference"}
    # front: figs-small (fewest params) and kacs-r10 (lowest readable MAE at 205); figs is
    # dominated by kacs-r10: 0.25 / 0.205 and 401 / 205
    readable = f1[f1["kind"] == "readable"]
    assert readable["on_front"].to_dict() == {"figs-small": True, "kacs-r10": True, "figs": False}
    assert f1.loc[["kacs", "gbr"], "on_front"].isna().all()  # references: empty
    assert f1.loc["figs", "dominated_by"] == "kacs-r10"
    assert f1.loc["figs", ["error_ratio", "params_ratio"]].tolist() == pytest.approx([0.25 / 0.205, 401 / 205])
    # f2: figs and kacs-r10 at the same point, both on the front, tied
    f2 = points.loc["f2"]
    assert (f2["runs"] == 3).all() and f2.loc["figs", "tied_with"] == "kacs-r10"

    md = (out / "report.md").read_text()
    table = md.split("### sizes: accuracy against size, f1")[1].split("###")[0]
    assert "means over the 2 runs that every method here has" in table
    assert _method_row(table, "figs") == ["readable", "no", "kacs-r10", "test_mae, params", "0.2500", "401",
                                          "1.22", "1.96"]
    assert _method_row(table, "kacs-r10")[:6] == ["readable", "yes", "", "compacted_test_mae, compacted_params",
                                                  "0.2050", "205"]
    assert _method_row(table, "gbr")[1] == "reference"
    f2_table = md.split("### sizes: accuracy against size, f2")[1].split("###")[0]
    assert _method_row(f2_table, "figs")[1] == "yes (tied with kacs-r10)"
    front = md.split("### sizes: the readable front")[1].split("###")[0]
    # kind, on front (of the cells with a point), which cells
    assert _method_row(front, "kacs-r10") == ["readable", "2 of 2", "f1, f2"]
    assert _method_row(front, "figs") == ["readable", "1 of 2", "f2"]
    assert _method_row(front, "figs-small") == ["readable", "1 of 1", "f1"]
    assert _method_row(front, "gbr") == ["reference", "", ""]
    assert "f1: 2 run(s) that every method has, of up to 3 a method has" in md
    assert (out / "figures" / "sizes_pareto.png").read_bytes().startswith(PNG_SIGNATURE)
    assert "the readable front" in summary.console_markdown


@pytest.mark.slow
def test_a_campaign_without_a_readable_baseline_gets_no_section(tmp_path):
    """A compaction campaign (compacted learners only) keeps its own table and figure."""
    rows = [r for r in _tiny_rows() if r["method"] in ("kacs", "kacs-r10")]
    exp = _campaign(tmp_path / "sizes", rows, ["kacs", "kacs-r10"], {"kacs-r10": "kacs"})
    build_report(exp)
    assert not (exp / "report" / "sizes_pareto.csv").exists()
    assert not (exp / "report" / "figures" / "sizes_pareto.png").exists()
    assert "accuracy against size" not in (exp / "report" / "report.md").read_text()


def test_a_planned_readable_baseline_without_runs_yet_opens_the_section(tmp_path):
    """configs/readable.yaml's reused runs come first: the section is there before FIGS's."""
    rows = [r for r in _tiny_rows() if r["method"] in ("kacs", "kacs-r10", "gbr")]
    exp = _campaign(tmp_path / "sizes", rows, ["kacs", "kacs-r10", "figs", "gbr"], {"kacs-r10": "kacs"})
    build_report(exp, formats=("md",), figures=False)
    front = (exp / "report" / "report.md").read_text().split("### sizes: the readable front")[1]
    assert _method_row(front, "kacs-r10") == ["readable", "2 of 2", "f1, f2"]
