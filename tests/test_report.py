"""`kacs report`: tables, figures and the CLI on fabricated results directories.

Every fixture is built in tmp_path with values chosen so that the expected means, symbols,
best cells and daggers are known by construction (see the comments at each builder).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import curvestore
from kacs_cli.reporting import figures, tables
from kacs_cli.reporting.build import build_report
from kacs_cli.reporting.paper import load_paper_table

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RUN_COLUMNS = [
    "experiment", "benchmark", "variant", "method", "run", "split_seed", "seed", "n", "samples",
    "N", "iterations", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro",
    "params", "aic", "cover_rate", "cover_rate_inner", "cover_rate_outer", "seconds",
]
CURVE_COLUMNS = [
    "iteration", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params",
    "aic", "covers", "covers_inner", "covers_outer", "deletions", "cover_rate",
    "cover_rate_inner", "cover_rate_outer",
]


def run_row(experiment: str, benchmark: str, method: str, run: int, *, n: int = 10, samples: int = 1000,
            N: int = 6400, variant: str = "", **metrics: float) -> dict:
    row = {c: math.nan for c in RUN_COLUMNS}
    row.update(experiment=experiment, benchmark=benchmark, variant=variant, method=method, run=run,
               split_seed=run, seed=run, n=n, samples=samples, N=N, iterations=6000, seconds=1.0)
    row.update(metrics)
    return row


def write_experiment(path: Path, name: str, rows: list[dict], benchmarks: list[dict], runs: int,
                     protocol: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    config = {
        "experiment": name,
        "protocol": {"name": protocol, "runs": runs, "train_fraction": 0.9},
        "iterations": 6000,
        "eval_every": 2000,
        "methods": ["xcsf", "kacs"],
        "benchmarks": benchmarks,
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    pd.DataFrame(rows, columns=RUN_COLUMNS).to_csv(path / "runs.csv", index=False)
    return path


def write_curves(path: Path, cell: str, method: str, runs: int, offset: float) -> None:
    folder = path / "curves"
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(runs):
        it = np.array([2000, 4000, 6000])
        frame = pd.DataFrame({c: 0.0 for c in CURVE_COLUMNS}, index=range(3))
        frame["iteration"] = it
        frame["test_mae"] = offset + 0.3 / np.sqrt(it / 2000) + 0.01 * r
        frame["train_mae"] = frame["test_mae"] - 0.02
        frame["params"] = (1000 + 300 * np.arange(3) + 10 * r) * (2 if method == "kacs" else 11)
        frame["cover_rate"] = offset * 0.4 / (1 + np.arange(3)) + 0.001 * r
        if method == "kacs":
            frame["cover_rate_inner"] = frame["cover_rate"] * 0.5
            frame["cover_rate_outer"] = frame["cover_rate"] * 2.0
        else:
            frame["cover_rate_inner"] = math.nan
            frame["cover_rate_outer"] = math.nan
        frame.to_csv(folder / f"{cell}__{method}__{r}.csv", index=False)


# Two cells (f1, f2) x two methods x six runs (six, because with five pairs the smallest
# exact two-sided Wilcoxon p is 2/32 = 0.0625 and no symbol could be significant).
#   f1 train_mae: KACS = XCSF + (1..6)/1000     -> every difference negative, exact p = 2/64 = 0.03125 -> '+'
#   f1 test_mae:  KACS = XCSF - (1..6)/100      -> every difference positive, p = 0.03125 -> '-'
#   f2 train/test: XCSF - KACS = +.01 -.02 +.03 -.04 +.05 -.06 -> R+ = 9, R- = 12, not significant -> '~',
#                  mean difference -0.005, so XCSF has the better (bold) mean
#   rules/params/aic: KACS far lower in every run -> '-' in both cells
# Means: f1 test XCSF = 0.30 + 0.01 * 2.5 = 0.3250, KACS = 0.3250 - 0.035 = 0.2900;
#        f1 rules XCSF 4000 + 10 * 2.5 = 4025, KACS 1300 + 5 * 2.5 = 1312.5 (printed 1312).
F2_DIFFS = np.array([0.01, -0.02, 0.03, -0.04, 0.05, -0.06])


def small_main_rows(name: str = "small") -> list[dict]:
    rows = []
    for r in range(6):
        base = 0.30 + 0.01 * r
        specs = {
            "f1": {
                "xcsf": dict(train_mae=0.10 + 0.01 * r, test_mae=base),
                "kacs": dict(train_mae=0.10 + 0.01 * r + (r + 1) / 1000, test_mae=base - (r + 1) / 100),
            },
            "f2": {
                "xcsf": dict(train_mae=0.20 + 0.01 * r + F2_DIFFS[r], test_mae=0.25 + 0.01 * r + F2_DIFFS[r]),
                "kacs": dict(train_mae=0.20 + 0.01 * r, test_mae=0.25 + 0.01 * r),
            },
        }
        for bench, methods in specs.items():
            for method, m in methods.items():
                rules = 4000 + 10 * r if method == "xcsf" else 1300 + 5 * r
                params = rules * (11 if method == "xcsf" else 2)
                rows.append(run_row(name, bench, method, r, rules=rules, micro=6400, params=params,
                                    aic=-1000 + 2 * (params + 1), cover_rate=0.01,
                                    cover_rate_inner=0.005 if method == "kacs" else math.nan,
                                    cover_rate_outer=0.02 if method == "kacs" else math.nan, **m))
    return rows


@pytest.fixture()
def small_main(tmp_path: Path) -> Path:
    exp = write_experiment(tmp_path / "small", "small", small_main_rows(),
                           [{"name": "f1", "n": 10}, {"name": "f2", "n": 10}], runs=6)
    for cell in ("f1", "f2"):
        for method, offset in (("xcsf", 0.2), ("kacs", 0.1)):
            write_curves(exp, cell, method, runs=3, offset=offset)
    return exp


def _row(md: str, startswith: str) -> list[str]:
    """Cells of the first Markdown table row whose first cell starts with `startswith`."""
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].startswith(startswith):
            return cells
    raise AssertionError(f"no row starting with {startswith!r}")


def _rows_after(md: str, startswith: str | tuple[str, ...], count: int) -> list[list[str]]:
    """`count` table rows from the first whose first cell(s) match `startswith`."""
    rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in md.splitlines() if l.startswith("|")]
    for i, cells in enumerate(rows):
        hit = cells[: len(startswith)] == list(startswith) if isinstance(startswith, tuple) else cells[0].startswith(startswith)
        if hit:
            return rows[i : i + count]
    raise AssertionError(f"no row starting with {startswith!r}")


@pytest.mark.slow
def test_summary_tables_means_symbols_best_and_files(small_main: Path) -> None:
    out = small_main / "out"
    summary = build_report(small_main, out_dir=out, formats=("md", "tex", "csv"))
    md = (out / "report.md").read_text()
    table = summary.experiments[0].summary_markdown
    # columns: cell, method, train MAE, test MAE, rules, params, AIC, runs
    f1_x, f1_k = _rows_after(table, "f1", 2)
    assert f1_x[:2] == ["f1", "XCSF"] and f1_k[1] == "KACS"
    assert f1_x[2] == "**0.1250** +"  # XCSF better on train: bold and '+'
    assert f1_k[2] == "0.1285"
    assert f1_x[3] == "0.3250 -" and f1_k[3] == "**0.2900**"
    assert f1_x[4] == "4025 -" and f1_k[4] == "**1312**"
    assert f1_x[7] == "6" and f1_k[7] == "6"
    f2_x, f2_k = _rows_after(table, "f2", 2)
    assert f2_x[3].endswith(" ~") and f2_x[3].startswith("**")  # XCSF's mean lower, not significant
    assert f2_k[3] == f"{0.25 + 0.025:.4f}"
    # across the two cells: XCSF best on train twice; test split 1/1; rules KACS twice
    rank_x, rank_k = _rows_after(table, "avg rank", 2)
    assert rank_x[2:5] == ["1.00", "1.50", "2.00"] and rank_k[2:5] == ["2.00", "1.50", "1.00"]
    counts = _row(table, "+/-/~")
    assert counts[2:7] == ["1/0/1", "0/1/1", "0/2/0", "0/2/0", "0/2/0"]
    p_row = _row(table, "Wilcoxon p")
    assert p_row[4] == "0.5"  # two cells, both favouring KACS: exact p = 2/4; no dagger
    assert "†" not in table
    assert table in md and "### small: detailed" in md
    # detailed: exact p of six same-signed differences, effect sizes of the construction
    cs = pd.read_csv(out / "small_summary.csv").set_index(["cell", "metric"])
    assert cs.loc[("f1", "test_mae"), "wilcoxon_p"] == pytest.approx(0.03125)
    assert cs.loc[("f1", "test_mae"), "effect_size"] == pytest.approx(1.0)
    assert cs.loc[("f1", "train_mae"), "effect_size"] == pytest.approx(-1.0)
    assert cs.loc[("f2", "test_mae"), "effect_size"] == pytest.approx((9 - 12) / 21)
    assert cs.loc[("f1", "test_mae"), "symbol"] == "-" and cs.loc[("f1", "train_mae"), "symbol"] == "+"
    assert cs.loc[("f1", "test_mae"), "best"] == "kacs"
    assert cs.loc[("f1", "rules"), "xcsf_sd"] == pytest.approx(np.std(10 * np.arange(6), ddof=1))
    assert (cs["n_pairs"] == 6).all()
    assert "0.325 ± 0.0187" not in md and "0.3250 ± 0.0187" in md  # mean ± SD formatting
    across = pd.read_csv(out / "small_across.csv").set_index("metric")
    assert across.loc["rules", "across_p"] == pytest.approx(0.5)
    # LaTeX: booktabs, bold best, symbols in math mode
    tex = (out / "report.tex").read_text()
    for needle in (r"\toprule", r"\midrule", r"\bottomrule", r"\textbf{0.2900}", r"0.3250 $-$", r"\textbf{0.1250} $+$"):
        assert needle in tex
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 2  # summary + detailed
    # figures: valid PNGs, bounded count, linked from the Markdown
    pngs = sorted((out / "figures").glob("*.png"))
    assert {p.name for p in pngs} == {"small_train_error.png", "small_test_error.png", "small_params.png",
                                      "small_covering.png"}
    for p in pngs:
        data = p.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 2000
        assert f"figures/{p.name}" in md
    assert set(summary.files) >= {out / "report.md", out / "report.tex", out / "small_summary.csv", *pngs}
    assert not list(out.rglob("*.tmp"))  # atomic writes leave no temporaries
    assert summary.missing == []


def test_format_selection_and_default_out_dir(small_main: Path) -> None:
    summary = build_report(small_main, formats="csv", figures=False)
    out = small_main / "report"
    assert summary.out_dir == out
    assert (out / "small_summary.csv").exists()
    assert not (out / "report.md").exists() and not (out / "report.tex").exists()
    with pytest.raises(UserError, match="unknown report format 'pdf'"):
        build_report(small_main, formats="md,pdf")


def test_dagger_when_across_benchmark_test_is_significant(tmp_path: Path) -> None:
    # Six cells, two runs each. Rules: KACS lower in all six cells -> exact p = 2/64 = 0.03125 < 0.05
    # -> dagger. Test MAE: XCSF lower in 3 cells, KACS in 3 -> not significant -> no dagger.
    rows = []
    benches = ["f1", "f2", "f3", "f4", "asn", "ccpp"]
    for i, bench in enumerate(benches):
        for r in range(2):
            sign = 1 if i % 2 else -1
            rows.append(run_row("six", bench, "xcsf", r, test_mae=0.2 + sign * 0.01 * (i + 1), train_mae=0.1,
                                rules=3000 + 100 * i + r, params=1, aic=1))
            rows.append(run_row("six", bench, "kacs", r, test_mae=0.2, train_mae=0.1,
                                rules=1000 + r, params=1, aic=1))
    exp = write_experiment(tmp_path / "six", "six", rows, [{"name": b} for b in benches], runs=2)
    summary = build_report(exp, formats=("md", "tex"), figures=False)
    table = summary.experiments[0].summary_markdown
    p_row = _row(table, "Wilcoxon p")
    # columns: cell, method, train, test, rules, params, aic, runs
    assert p_row[4] == "0.0312 †"
    assert "†" not in p_row[3] and p_row[2] == "1"  # identical train means: all-zero differences
    assert p_row[5] == "1" and "†" not in p_row[5]
    tex = (exp / "report" / "report.tex").read_text()
    assert r"0.0312$^\dagger$" in tex
    # the benchmark order of the article, whatever the order of rows
    order = [l.split("|")[1].strip() for l in table.splitlines()[2:] if l.split("|")[1].strip()]
    assert order[:6] == benches


@pytest.mark.slow
def test_scaling_experiment_table_keyed_by_n_and_figure(tmp_path: Path) -> None:
    # f3 at n = 2, 4, 6 with N = 6400, plus n = 6 at the guideline budget N = 12672.
    rows = []
    cells = [(2, 6400), (4, 6400), (6, 6400), (6, 12672)]
    for n, N in cells:
        for r in range(3):
            for method, err in (("xcsf", 0.1 * n), ("kacs", 0.05 * n)):
                rules = (500 * n if method == "xcsf" else 200 * n) + r + (N // 100 if N != 6400 else 0)
                rows.append(run_row("dim", "f3", method, r, n=n, N=N, train_mae=err, test_mae=err + 0.01 * r,
                                    rules=rules, params=rules * ((n + 1) if method == "xcsf" else 2), aic=1.0))
    benchmarks = [{"name": "f3", "n": n, "N": N} for n, N in cells]
    exp = write_experiment(tmp_path / "dim", "dim_scaling", rows, benchmarks, runs=3)
    for label in ("f3-n2", "f3-n4"):
        for method in ("xcsf", "kacs"):
            write_curves(exp, label, method, runs=2, offset=0.1)
    summary = build_report(exp, formats=("md", "csv"))
    e = summary.experiments[0]
    assert [c.label for c in e.cells] == ["f3 (n=2)", "f3 (n=4)", "f3 (n=6)", "f3 (n=6, N=12672)"]
    md = (exp / "report" / "report.md").read_text()
    assert "### dim_scaling: scaling of f3" in md
    scaling_md = md.split("### dim_scaling: scaling of f3")[1].split("###")[0]
    header = _row(scaling_md, "n")
    # one row per (n, N), both methods side by side per metric
    assert header == ["n", "N", "test MAE XCSF", "KACS", "rules XCSF", "KACS", "params XCSF", "KACS", "runs"]
    body = [r for r in (_rows_after(scaling_md, ("2",), 4)) if r]
    assert [r[:2] for r in body] == [["2", "6400"], ["4", "6400"], ["6", "6400"], ["6", "12672"]]
    g6 = body[3]  # the guideline row right below the N = 6400 row of n = 6
    assert g6[2] == "0.6100 ± 0.0100 ~"  # three runs cannot be significant
    assert g6[3].startswith("**0.3100")
    assert g6[4] == "3127 ± 1 ~" and g6[5] == "**1327 ± 1**" and g6[8] == "3"  # 3000 + 126 + r
    csv = pd.read_csv(exp / "report" / "dim_scaling_scaling-f3.csv")
    assert list(csv["n"]) == [2, 4, 6, 6] and list(csv["N"]) == [6400, 6400, 6400, 12672]
    assert csv["rules_kacs_mean"].iloc[0] == pytest.approx(401)
    png = exp / "report" / "figures" / "dim_scaling_scaling.png"
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    assert png in summary.files
    assert "scaling of f3" in summary.console_markdown


def test_sample_scaling_labels(tmp_path: Path) -> None:
    rows = [run_row("ns", "f3", m, r, samples=s, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1)
            for s in (250, 125) for m in ("xcsf", "kacs") for r in range(2)]
    exp = write_experiment(tmp_path / "ns", "sample_scaling", rows, [{"name": "f3", "samples": s} for s in (125, 250)], runs=2)
    e = build_report(exp, formats="md", figures=False).experiments[0]
    assert [c.label for c in e.cells] == ["f3 (N_S=125)", "f3 (N_S=250)"]
    assert e.scaling and e.scaling[0].variables == ("samples",)
    assert _row((exp / "report" / "report.md").read_text().split("scaling of f3")[1], "N_S")[0] == "N_S"


def test_cells_differing_in_n_without_xcsf_or_kacs_get_no_scaling_table(tmp_path: Path) -> None:
    # A dataset read one-hot (n = 8) and with its nominal columns merged (n = 7) by methods
    # other than XCSF and KACS: the scaling table sets XCSF beside KACS, so it would be all n/a.
    rows = [run_row("cat", "auto", m, r, n=n, samples=392, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1)
            for n in (7, 8) for m in ("gbr", "rf") for r in range(2)]
    exp = write_experiment(tmp_path / "cat", "cat", rows, [{"name": "auto"}, {"name": "auto"}], runs=2)
    config = yaml.safe_load((exp / "config.yaml").read_text())
    config["methods"] = ["gbr", "rf"]
    (exp / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    e = build_report(exp, formats="md", figures=False).experiments[0]
    assert len(e.cells) == 2 and e.scaling == []
    assert "scaling of auto" not in (exp / "report" / "report.md").read_text()


def paper_rows(runs: int = 4) -> list[dict]:
    """Runs whose mean and SD (ddof 1) equal the published ones for every cell and method."""
    table = load_paper_table()
    u = np.arange(runs) - (runs - 1) / 2
    u = u / np.std(u, ddof=1)  # mean 0, SD 1
    n_of = {"f1": 10, "f2": 10, "f3": 10, "f4": 10, "asn": 5, "ccpp": 4, "cs": 8, "eec": 8}
    rows = []
    for bench in n_of:
        part = table[table["benchmark"] == bench].set_index("metric")
        for method in ("xcsf", "kacs"):
            for r in range(runs):
                metrics = {m: part.loc[m, f"{method}_mean"] + part.loc[m, f"{method}_sd"] * u[r] for m in part.index}
                rows.append(run_row("main", bench, method, r, n=n_of[bench], **metrics))
    return rows


def test_paper_comparison_with_published_means(tmp_path: Path) -> None:
    benches = ["f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec"]
    exp = write_experiment(tmp_path / "main", "main", paper_rows(), [{"name": b} for b in benches], runs=4)
    summary = build_report(exp, formats=("md", "csv"), paper=True, figures=False)
    e = summary.experiments[0]
    paper = pd.read_csv(exp / "report" / "main_paper.csv")
    assert len(paper) == 8 * 5
    assert paper["xcsf_z"].abs().max() < 1e-9 and paper["kacs_z"].abs().max() < 1e-9
    assert paper["xcsf_within"].all() and paper["kacs_within"].all()
    # published verdicts from p < 0.05 and the sign of the mean difference (the published
    # table's counts: train MAE 1/3/4, test MAE 0/5/3, rules 0/7/1, params 0/8/0, AIC 0/8/0)
    counts = paper.groupby("metric")["symbol_paper"].agg(lambda s: "/".join(str((s == c).sum()) for c in "+-~"))
    assert counts.to_dict() == {"train_mae": "1/3/4", "test_mae": "0/5/3", "rules": "0/7/1",
                                "params": "0/8/0", "aic": "0/8/0"}
    # four runs can never be significant (smallest exact p = 2/16), so ours are all '~' and
    # agree exactly where the published verdict is '~'
    assert e.fidelity is not None
    assert "80 of 80 means within" in e.fidelity
    assert "test MAE 3/8" in e.fidelity and "rules 1/8" in e.fidelity and "params 0/8" in e.fidelity
    md = (exp / "report" / "report.md").read_text()
    assert e.fidelity in md and e.fidelity in summary.console_markdown
    f1_train = _row(md.split("fidelity to the published table")[1], "f1")
    assert f1_train[2:6] == ["0.2033", "0.2033", "0.00", "yes"] and f1_train[-2:] == ["~", "+"]
    # across-benchmark figures recomputed from the published means (tests/test_stats.py has
    # them from the same means)
    across = _rows_after(md.split("across benchmarks vs the paper")[1], "train MAE", 5)
    paper_cols = {row[0]: (row[2], row[4], row[6]) for row in across}
    assert paper_cols["train MAE"] == ("1.62 / 1.38", "1/3/4", "0.383")
    assert paper_cols["test MAE"] == ("1.88 / 1.12", "0/5/3", "0.0391 †")
    assert paper_cols["rules"] == ("2.00 / 1.00", "0/7/1", "0.00781 †")


def test_paper_flag_only_compares_the_main_experiment(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    write_experiment(campaign / "main", "main", paper_rows(), [{"name": "f1"}], runs=4)
    write_experiment(campaign / "variants", "f3_variants",
                     [run_row("f3_variants", "f3", m, r, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1)
                      for m in ("xcsf", "kacs") for r in range(2)], [{"name": "f3"}], runs=2)
    summary = build_report(campaign, formats="csv", paper=True, figures=False)
    names = {e.name: e for e in summary.experiments}
    assert set(names) == {"main", "f3_variants"}
    assert names["main"].paper is not None and names["f3_variants"].paper is None
    assert (campaign / "report" / "main_summary.csv").exists()
    assert (campaign / "report" / "f3_variants_summary.csv").exists()


def test_incomplete_campaign_reports_what_is_there_and_lists_the_rest(tmp_path: Path, capsys) -> None:
    # config: f1, f2, f3, f4 with 6 runs. f1 complete; f2 KACS lacks runs 4, 5; f3 never ran;
    # f4 has XCSF only.
    rows = []
    for r in range(6):
        rows.append(run_row("inc", "f1", "xcsf", r, test_mae=0.3 + 0.01 * r, train_mae=0.1, rules=10, params=1, aic=1))
        rows.append(run_row("inc", "f1", "kacs", r, test_mae=0.2 + 0.01 * r, train_mae=0.1, rules=5, params=1, aic=1))
        rows.append(run_row("inc", "f2", "xcsf", r, test_mae=0.3 + 0.001 * r, train_mae=0.1, rules=10, params=1, aic=1))
        if r < 4:
            rows.append(run_row("inc", "f2", "kacs", r, test_mae=0.2 + 0.002 * r, train_mae=0.1, rules=5, params=1, aic=1))
        rows.append(run_row("inc", "f4", "xcsf", r, test_mae=0.3, train_mae=0.1, rules=10, params=1, aic=1))
    exp = write_experiment(tmp_path / "inc", "inc", rows, [{"name": b} for b in ("f1", "f2", "f3", "f4")], runs=6)
    summary = build_report(exp, formats=("md", "csv"), figures=False)
    assert summary.missing == [
        "inc: f3: no finished runs",
        "inc: f2 KACS: 4 of 6 runs",
        "inc: f2: run(s) 4, 5 only for XCSF (left out of the paired tests)",
        "inc: f4: no KACS runs",
    ]
    md = (exp / "report" / "report.md").read_text()
    assert "Incomplete campaign" in md and "- f3: no finished runs" in md
    cs = pd.read_csv(exp / "report" / "inc_summary.csv").set_index(["cell", "metric"])
    assert cs.loc[("f2", "test_mae"), "n_pairs"] == 4
    assert cs.loc[("f2", "test_mae"), "xcsf_runs"] == 6 and cs.loc[("f2", "test_mae"), "kacs_runs"] == 4
    assert cs.loc[("f2", "test_mae"), "xcsf_mean"] == pytest.approx(0.3025)  # all six XCSF runs
    assert cs.loc[("f4", "test_mae"), "n_pairs"] == 0 and pd.isna(cs.loc[("f4", "test_mae"), "kacs_mean"])
    f4_x, f4_k = _rows_after(summary.experiments[0].summary_markdown, "f4", 2)
    assert f4_x[3] == "0.3000" and f4_k[3] == "n/a"  # nothing to compare: no bold, no symbol
    # ranks and the across test use the cells with both methods only (f1, f2)
    across = pd.read_csv(exp / "report" / "inc_across.csv").set_index("metric")
    assert across.loc["test_mae", "n_benchmarks"] == 2
    # the CLI prints the same list on the console
    from kacs_cli.cli import main

    main(["report", str(exp), "--format", "md", "--no-figures", "--out", str(tmp_path / "cli_out")])
    out = capsys.readouterr().out
    assert "missing" in out and "f2 KACS: 4 of 6 runs" in out
    assert "| f1" in out and str(tmp_path / "cli_out" / "report.md") in out


def test_duplicate_rows_use_the_last_and_are_listed(tmp_path: Path) -> None:
    rows = [run_row("d", "f1", m, r, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1)
            for m in ("xcsf", "kacs") for r in range(2)]
    rows.append(run_row("d", "f1", "kacs", 1, test_mae=0.5, train_mae=0.1, rules=1, params=1, aic=1))
    exp = write_experiment(tmp_path / "d", "d", rows, [{"name": "f1"}], runs=2)
    e = build_report(exp, formats="csv", figures=False).experiments[0]
    assert any("run(s) 1 appear more than once" in m for m in e.missing)
    kacs_mean = e.cell_stats.set_index("metric").loc["test_mae", "kacs_mean"]
    assert kacs_mean == pytest.approx((0.2 + 0.5) / 2)


def test_markdown_table_alignment() -> None:
    table = tables.Table("t", "c", ["cell", "value"], [[tables.TCell("f1"), tables.TCell("0.1", True, "+")],
                                                    [tables.TCell("ccpp"), tables.TCell("12.3456")]])
    assert tables.render_markdown(table).splitlines() == [
        "| cell |     value |",
        "|:-----|----------:|",
        "| f1   | **0.1** + |",
        "| ccpp |   12.3456 |",
    ]


def test_value_formatting() -> None:
    assert tables.fmt_value("test_mae", 0.264213) == "0.2642"
    assert tables.fmt_value("test_mse", 0.000412345) == "0.0004123"
    assert tables.fmt_value("rules", 4161.6) == "4162"
    assert tables.fmt_value("aic", -17358.4) == "-17358"
    assert tables.fmt_sd("params", 633.52) == "633.5" and tables.fmt_sd("aic", 12660.4) == "12660"
    assert tables.fmt_value("test_mae", math.nan) == "n/a"
    assert tables.fmt_sd("test_mae", 0.0016) == "0.0016" and tables.fmt_sd("test_mae", 2.5e-17) == "0.0000"


def test_cli_missing_runs_csv_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    from kacs_cli.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"no runs.csv under {tmp_path}: run `kacs run CONFIG` first" in err


def test_cli_unknown_format_is_one_line_exit_2(small_main: Path, capsys) -> None:
    from kacs_cli.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["report", str(small_main), "--format", "md,docx"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "docx" in err
    assert not (small_main / "report").exists()  # rejected before anything was written


def test_campaign_stopped_early_is_one_missing_line(tmp_path: Path) -> None:
    # 3 of 30 planned runs everywhere: one line, not one per cell and method.
    rows = [run_row("early", b, m, r, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1)
            for b in ("f1", "f2") for m in ("xcsf", "kacs") for r in range(3)]
    exp = write_experiment(tmp_path / "early", "early", rows, [{"name": "f1"}, {"name": "f2"}], runs=30)
    e = build_report(exp, formats="csv", figures=False).experiments[0]
    assert e.missing == ["every cell (2): 3 of 30 runs per method"]


def test_alternative_protocol_reports_mse(tmp_path: Path) -> None:
    rows = [run_row("alt", "f1", m, r, train_mse=0.01 * (r + 1), test_mse=(0.02 if m == "xcsf" else 0.01) * (r + 1),
                    rules=1, params=1, aic=1) for m in ("xcsf", "kacs") for r in range(6)]
    exp = write_experiment(tmp_path / "alt", "alternative", rows, [{"name": "f1"}], runs=64, protocol="alternative")
    write_curves(exp, "f1", "xcsf", runs=2, offset=0.1)
    summary = build_report(exp, formats="md")
    table = summary.experiments[0].summary_markdown
    assert table.splitlines()[0].split("|")[3].strip() == "train MSE"
    f1_x, f1_k = _rows_after(table, "f1", 2)
    # test MSE: XCSF doubles KACS in all six runs -> '-'; train MSE identical -> '~', both bold
    assert f1_x[3] == "0.0700 -" and f1_k[3] == "**0.0350**"
    assert f1_x[2] == "**0.0350** ~" and f1_k[2] == "**0.0350**"
    assert summary.missing == ["alternative: f1: 6 of 64 runs per method"]
    assert (exp / "report" / "figures" / "alternative_test_error.png").exists()


def test_variants_experiment_labels_and_missing_variant(tmp_path: Path) -> None:
    # config: plain f3 and three variants; the translated one never ran.
    rows = [run_row("var", "f3", m, r, variant=v, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1)
            for v in ("scaled", "", "rotated") for m in ("xcsf", "kacs") for r in range(2)]
    entries = [{"name": "f3"}] + [{"name": "f3", "variant": v} for v in ("rotated", "translated", "scaled")]
    exp = write_experiment(tmp_path / "var", "f3_variants", rows, entries, runs=2)
    e = build_report(exp, formats="md", figures=False).experiments[0]
    assert [c.label for c in e.cells] == ["f3", "f3 rotated", "f3 scaled"]  # config order
    assert e.missing == ["f3 translated: no finished runs"]
    assert e.scaling == []  # variants are not a scaling series


@pytest.mark.slow
def test_runner_layout_cell_labels_and_resolved_cells(tmp_path: Path) -> None:
    # What `kacs run` writes: runs.csv's benchmark column holds the cell label (f3-n4-N864),
    # config.yaml lists resolved `cells` with the benchmark name and per-method N.
    exp = tmp_path / "dim_tiny"
    exp.mkdir()
    def cell(label, n, N):
        return {"label": label, "benchmark": "f3", "kind": "function", "source": "generated", "n": n,
                "samples": 200, "dataset_seed": 0, "variant": None, "real_world": False,
                "hyperparameters": {"xcsf": {"N": N}, "kacs": {"N": N}}}
    cells = [cell("f3-n2", 2, 6400), cell("f3-n4", 4, 6400), cell("f3-n4-N864", 4, 864), cell("f3-n6", 6, 6400)]
    config = {"experiment": "dim_tiny", "methods": ["xcsf", "kacs"],
              "protocol": {"name": "main", "runs": 2, "train_fraction": 0.9, "target": "minmax", "metric": "mae"},
              "iterations": 6000, "eval_every": 2000, "cells": cells}
    (exp / "config.yaml").write_text("# Resolved config\n" + yaml.safe_dump(config, sort_keys=False))
    rows = [run_row("dim_tiny", c["label"], m, r, n=c["n"], samples=200, N=c["hyperparameters"]["xcsf"]["N"],
                    test_mae=0.5, train_mae=0.4, rules=10, params=20, aic=1.0)
            for c in cells[:3] for m in ("xcsf", "kacs") for r in range(2)]
    pd.DataFrame(rows, columns=RUN_COLUMNS).to_csv(exp / "runs.csv", index=False)
    for label in ("f3-n4-N864", "f3-n2"):
        write_curves(exp, label, "kacs", runs=2, offset=0.1)
    summary = build_report(exp, formats="md")
    e = summary.experiments[0]
    assert [(c.cell_id, c.benchmark, c.label) for c in e.cells] == [
        ("f3-n2", "f3", "f3 (n=2)"), ("f3-n4", "f3", "f3 (n=4)"), ("f3-n4-N864", "f3", "f3 (n=4, N=864)")]
    assert e.missing == ["f3 (n=6, samples=200, N=6400) [f3-n6]: no finished runs"]
    assert e.scaling and e.scaling[0].variables == ("n",)
    # curve panels in table order and titled with the table labels
    assert figures.curve_panels(e, curvestore.load_curves(exp)) == [("f3-n2", "f3 (n=2)"), ("f3-n4-N864", "f3 (n=4, N=864)")]
    assert (exp / "report" / "figures" / "dim_tiny_test_error.png").exists()
