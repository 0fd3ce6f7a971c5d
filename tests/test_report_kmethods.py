"""The k-method section of `kacs report` against independent computations.

The campaigns are written by the runner's own functions (resolve_config, expand_tasks,
write_runs_csv, ExperimentConfig.to_yaml) with test errors drawn here, so every expected
number comes from those draws through scipy (friedmanchisquare, wilcoxon, rankdata, the F
distribution), Holm's step-down by hand and Demšar's (2006) Table 5(a) for q_alpha, never
from kacs_cli.reporting.kstats.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from cli_support import run_kacs
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.results import write_runs_csv
from kacs_cli.experiments.campaign.tasks import expand_tasks
from kacs_cli.reporting.build import build_report
from test_report import PNG_SIGNATURE, _row, _rows_after, run_row

METHODS = ["xcsf", "kacs", "kacs-small", "kacs-big"]
NS = [2, 3, 4, 5, 6, 7, 8]  # the f3 cells with all four methods: seven benchmarks, the fewest
# whose across-benchmark Holm family of 3 can reject (3 x 2/2^7 = 0.047 < 0.05)
RUNS = 8  # eight pairs: the exact two-sided Wilcoxon p can reach 2/256
# Demšar (2006) Table 5(a): q_0.05 for k = 2..10
Q_005 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850}


def _draws(seed: int = 7) -> np.ndarray:
    """test MAE[benchmark, method, run]: a method effect plus noise, no ties anywhere."""
    rng = np.random.default_rng(seed)
    effect = np.array([0.30, 0.25, 0.32, 0.20])
    return (0.1 * rng.uniform(size=(len(NS), 1, 1)) + effect[None, :, None]
            + 0.03 * rng.normal(size=(len(NS), len(METHODS), RUNS)))


def write_campaign(out: Path, values: np.ndarray, drop: tuple[str, str] | None = None) -> Path:
    """A resolved config and runs.csv as `kacs run` writes them: the f3 cells run all four
    methods (kacs-small and kacs-big at their own N), f1 only XCSF and KACS (per-cell
    methods). `drop` = (cell label, method): that method's runs are missing there."""
    raw = {"experiment": "budgets",
           "methods": {"xcsf": None, "kacs": None, "kacs-small": {"method": "kacs", "N": 100},
                       "kacs-big": {"method": "kacs", "N": 400}},
           "hyperparameters": {"N": 200},
           "benchmarks": [{"name": "f3", "n": n, "samples": 100} for n in NS]
           + [{"name": "f1", "n": 2, "samples": 100, "methods": ["xcsf", "kacs"]}],
           "protocol": {"name": "main", "runs": RUNS}, "iterations": 400, "eval_every": 200}
    config = resolve_config(json.loads(json.dumps(raw)))
    records = {}
    for task in expand_tasks(config):
        cell = task.cell
        if drop == (cell.label, task.method):
            continue
        i = [c.label for c in config.cells].index(cell.label)
        mae = float(values[i, METHODS.index(task.method), task.run]) if i < len(NS) else 0.3 + 0.01 * task.run
        N = int(cell.params[task.method].N)
        records[task.key] = {
            "experiment": config.experiment, "benchmark": cell.label, "variant": "", "method": task.method,
            "run": task.run, "split_seed": task.split_seed, "seed": task.seed, "n": cell.data.n, "samples": 100,
            "N": N, "iterations": 400, "train_mae": mae - 0.01, "test_mae": mae, "train_mse": mae**2,
            "test_mse": mae**2, "rules": 10 + task.run, "micro": N, "params": 30 + task.run, "aic": 1.0,
            "cover_rate": 0.0, "cover_rate_inner": math.nan, "cover_rate_outer": math.nan, "seconds": 1.0,
            "final_N": N,
        }
    out.mkdir(parents=True)
    (out / "config.yaml").write_text(config.to_yaml())
    write_runs_csv(out, records, [t.key for t in expand_tasks(config)])
    return out


def holm(p: list[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, by hand."""
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        adjusted[j] = running
    return adjusted


@pytest.mark.slow
def test_k_method_statistics_match_scipy_and_hand_computations(tmp_path) -> None:
    values = _draws()
    exp = write_campaign(tmp_path / "budgets", values)
    summary = build_report(exp, formats=("md", "tex", "csv"))
    out = exp / "report"
    means = values.mean(axis=2)  # benchmark x method
    k, b = len(METHODS), len(NS)
    control = METHODS.index("kacs")

    per = pd.read_csv(out / "budgets_kmethods.csv")
    assert list(per["methods"].unique()) == [",".join(METHODS)]
    labels = [f"f3 (n={n})" for n in NS]  # one benchmark per runner cell, whatever each method's N
    assert list(per["cell"].unique()) == labels
    per = per.set_index(["cell", "method"])
    for i, label in enumerate(labels):
        ranks = sps.rankdata(means[i])
        others = [j for j in range(k) if j != control]
        raw = [sps.wilcoxon(values[i, j], values[i, control]).pvalue for j in others]
        for j, method in enumerate(METHODS):
            row = per.loc[(label, method)]
            assert row["test_mae_mean"] == pytest.approx(means[i, j], rel=1e-9)
            assert row["test_mae_sd"] == pytest.approx(values[i, j].std(ddof=1), rel=1e-8)
            assert row["rank"] == ranks[j]
        for j, p, p_holm in zip(others, raw, holm(raw)):
            row = per.loc[(label, METHODS[j])]
            assert row["p"] == pytest.approx(p, rel=1e-8) and row["p_holm"] == pytest.approx(p_holm, rel=1e-8)
            assert row["n_pairs"] == RUNS
            d = means[i, j] - means[i, control]
            assert row["symbol"] == ("~" if p_holm >= 0.05 else ("+" if d < 0 else "-"))
    # at least one per-benchmark verdict is significant after Holm, so the symbols are tested
    assert set(per["symbol"].dropna()) - {"~"}

    across = pd.read_csv(out / "budgets_kmethods-across.csv").set_index("method")
    ranks = np.array([sps.rankdata(row) for row in means]).mean(axis=0)
    np.testing.assert_allclose(across.loc[METHODS, "avg_rank"], ranks, rtol=1e-9)  # CSVs hold 10 significant digits
    chi2, p_chi2 = sps.friedmanchisquare(*means.T)  # no ties: scipy's tie correction is 1
    f_f = (b - 1) * chi2 / (b * (k - 1) - chi2)
    first = across.iloc[0]
    assert first["chi2_f"] == pytest.approx(chi2, rel=1e-8) and first["p_chi2"] == pytest.approx(p_chi2, rel=1e-6)
    assert first["f_f"] == pytest.approx(f_f, rel=1e-8)
    assert first["p_f"] == pytest.approx(sps.f.sf(f_f, k - 1, (k - 1) * (b - 1)), rel=1e-6)
    cd = Q_005[k] * math.sqrt(k * (k + 1) / (6 * b))
    assert first["cd"] == pytest.approx(cd, rel=1e-3)  # the table's q has three decimals
    others = [j for j in range(k) if j != control]
    raw = [sps.wilcoxon(means[:, j], means[:, control]).pvalue for j in others]
    for j, p, p_holm in zip(others, raw, holm(raw)):
        assert across.loc[METHODS[j], "p"] == pytest.approx(p, rel=1e-8)
        assert across.loc[METHODS[j], "p_holm"] == pytest.approx(p_holm, rel=1e-8)
        assert across.loc[METHODS[j], "n_benchmarks"] == b

    md = (out / "report.md").read_text()
    # the same numbers as printed: ranks, p-values, the tests table
    assert "### budgets: 4 methods per benchmark" in md and "### budgets: 4 methods across benchmarks" in md
    table = md.split("### budgets: 4 methods across benchmarks")[1].split("###")[0]
    assert "over the 7 benchmarks with all 4 methods (f3 (n=2), f3 (n=3)" in table
    assert _row(table, "KACS (control)")[1:] == [f"{ranks[control]:.2f}", "—", "—", "—", "—"]
    assert _row(table, "kacs-big")[1] == f"{ranks[3]:.2f}"
    tests = md.split("Friedman and Nemenyi")[1].split("###")[0]
    assert _row(tests, "Friedman χ²")[1:3] == [f"{chi2:.3f}", "df 3"]
    assert _row(tests, "Iman-Davenport F")[1:3] == [f"{f_f:.3f}", "df (3, 18)"]
    assert _row(tests, "Nemenyi CD")[2] == "q = 2.569, k = 4, N = 7"
    # f1 has two methods: its two-method tables stay, it is named as outside this section
    assert "Cells without all 4 methods are not in this table: f1." in md
    assert "| f1 " in md.split("### budgets: summary")[1].split("###")[0]
    first_rows = _rows_after(md.split("### budgets: 4 methods per benchmark")[1], "f3 (n=2)", 4)
    assert [r[1] for r in first_rows] == ["XCSF", "KACS (control)", "kacs-small", "kacs-big"]
    assert [r[5] for r in first_rows] == [f"{r:.2f}" for r in sps.rankdata(means[0])]
    tex = (out / "report.tex").read_text()
    assert r"\label{tab:budgets-kmethods-tests}" in tex and r"Friedman $\chi$$^2$" in tex
    # the CD diagram: a PNG, listed in the report
    png = out / "figures" / "budgets_cd.png"
    assert png.read_bytes().startswith(PNG_SIGNATURE) and "figures/budgets_cd.png" in md
    assert png in summary.files


@pytest.mark.slow
def test_control_option_changes_the_comparisons(tmp_path, capsys) -> None:
    values = _draws()
    exp = write_campaign(tmp_path / "budgets", values)
    code, out, err = run_kacs(capsys, "report", exp, "--control", "kacs-small", "--no-figures", "--format", "md,csv")
    assert code == 0, err
    assert "kacs-small (control)" in out  # the across-benchmark tables are printed too
    assert "budgets: 4 methods across benchmarks" in out and "4 methods per benchmark" not in out
    across = pd.read_csv(exp / "report" / "budgets_kmethods-across.csv").set_index("method")
    assert list(across.index[across["control"]]) == ["kacs-small"]
    means = values.mean(axis=2)
    control = METHODS.index("kacs-small")
    others = [j for j in range(len(METHODS)) if j != control]
    raw = [sps.wilcoxon(means[:, j], means[:, control]).pvalue for j in others]
    for j, p_holm in zip(others, holm(raw)):
        assert across.loc[METHODS[j], "p_holm"] == pytest.approx(p_holm, rel=1e-8)
    per = pd.read_csv(exp / "report" / "budgets_kmethods.csv").set_index(["cell", "method"])
    row = per.loc[("f3 (n=2)", "kacs")]
    assert row["p"] == pytest.approx(sps.wilcoxon(values[0, 1], values[0, control]).pvalue, rel=1e-8)
    md = (exp / "report" / "report.md").read_text()
    assert "Control: kacs-small." in md and "KACS (control)" not in md


@pytest.mark.slow
def test_unknown_control_is_one_line_exit_2_and_nothing_written(tmp_path, capsys) -> None:
    exp = write_campaign(tmp_path / "budgets", _draws())
    target = tmp_path / "out"
    code, out, err = run_kacs(capsys, "report", exp, "--control", "ridge", "--out", target)
    assert code == 2
    assert err.strip().splitlines() == [
        "error: unknown control method 'ridge'; the methods here are: kacs, kacs-big, kacs-small, xcsf"]
    assert not target.exists()


@pytest.mark.slow
def test_missing_runs_too_few_benchmarks_and_empty_rules_are_stated(tmp_path) -> None:
    # kacs-big has no runs on f3-n3: that benchmark is shown but left out of the ranks
    exp = write_campaign(tmp_path / "budgets", _draws(), drop=("f3-n3", "kacs-big"))
    build_report(exp, formats=("md", "csv"), figures=False)
    md = (exp / "report" / "report.md").read_text()
    assert "over the 6 benchmarks with all 4 methods" in md
    assert "left out: f3 (n=3) (no runs of kacs-big)" in md
    # six benchmarks and three comparisons: 3 x 2/2^6 = 0.094 > 0.05, so the across-benchmark
    # tests are not run (they could not reject), and the table says why
    ranks = md.split("### budgets: 4 methods across benchmarks")[1].split("###")[0]
    assert _row(ranks, "XCSF")[2:5] == ["not run"] * 3
    assert ("Not run: over 6 benchmarks the smallest two-sided Wilcoxon p is 2/2^6 = 0.0312, and Holm over "
            "the 3 comparisons makes it at least 0.0938 > α = 0.05") in ranks
    across = pd.read_csv(exp / "report" / "budgets_kmethods-across.csv")
    assert across["p"].isna().all()
    per = pd.read_csv(exp / "report" / "budgets_kmethods.csv").set_index(["cell", "method"])
    assert math.isnan(per.loc[("f3 (n=3)", "xcsf"), "rank"]) and per.loc[("f3 (n=3)", "kacs-big"), "runs"] == 0

    # Three methods, one of them a baseline without rules (empty rules, micro, N), on a single
    # benchmark, plus a cell with two methods only: nothing across benchmarks can be computed.
    rows = []
    for r in range(4):
        for m, mae in (("xcsf", 0.3), ("kacs", 0.2), ("ridge", 0.25)):
            rules = math.nan if m == "ridge" else 10 + r
            rows.append(run_row("base", "f1", m, r, N=math.nan if m == "ridge" else 6400, test_mae=mae + 0.01 * r,
                                train_mae=mae, rules=rules, params=5 + r, aic=1.0))
        for m in ("xcsf", "kacs"):
            rows.append(run_row("base", "f2", m, r, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1.0))
    base = tmp_path / "base"
    base.mkdir()
    pd.DataFrame(rows).to_csv(base / "runs.csv", index=False)
    (base / "config.yaml").write_text(
        "experiment: base\nmethods: [xcsf, kacs, ridge]\nprotocol: {name: main, runs: 4}\n"
        "benchmarks: [{name: f1}, {name: f2}]\n")
    summary = build_report(base, formats=("md", "csv"))
    md = (base / "report" / "report.md").read_text()
    section = md.split("### base: 3 methods per benchmark")[1].split("###")[0]
    assert _row(section, "f1")[1:5] == ["XCSF", "0.3150 ± 0.0129", "12", "6"]
    assert _rows_after(section, "f1", 3)[2][1:5] == ["ridge", "0.2650 ± 0.0129", "—", "6"]
    assert "With fewer than 6 paired runs a two-sided Wilcoxon p cannot fall below 0.05 (here as few as 4)." in section
    assert "not in this table: f2." in section
    assert ("Not computed: the Friedman test, the across-benchmark Wilcoxon tests and the critical difference "
            "need at least 2 benchmarks with all 3 methods, here 1.") in md
    assert _row(md.split("Friedman and Nemenyi")[1], "Friedman χ²")[1:] == ["n/a", "df 2", "n/a"]
    assert not (base / "report" / "figures" / "base_cd.png").exists()
    assert "Critical-difference diagram (XCSF, KACS, ridge): not drawn, 1 benchmark(s) with all 3 methods" in md
    assert summary.experiments[0].kmethods.sets[0].friedman is None


def test_two_method_experiments_get_no_k_method_section(tmp_path) -> None:
    rows = [run_row("pair", b, m, r, test_mae=0.2 + 0.01 * r, train_mae=0.1, rules=1, params=1, aic=1.0)
            for b in ("f1", "f2") for m in ("xcsf", "kacs") for r in range(3)]
    exp = tmp_path / "pair"
    exp.mkdir()
    pd.DataFrame(rows).to_csv(exp / "runs.csv", index=False)
    summary = build_report(exp, formats=("md", "csv"), figures=False)
    assert summary.experiments[0].kmethods.sets == []
    assert "methods per benchmark" not in (exp / "report" / "report.md").read_text()
    assert not list((exp / "report").glob("*kmethods*"))


@pytest.mark.slow
def test_each_method_set_gets_its_own_statistics(tmp_path) -> None:
    """Cells with different sets of more than two methods: one section per set, over the
    benchmarks that have all of its methods; a set without the control says so."""
    plan = [("f1", ["xcsf", "kacs", "ridge"]), ("f2", ["xcsf", "kacs", "ridge"]), ("f3", ["xcsf", "kacs"]),
            ("f4", ["ridge", "rf", "knn"]), ("asn", ["ridge", "rf", "knn"])]
    rows = [run_row("sets", b, m, r, test_mae=0.1 * (1 + i) + 0.01 * r + 0.001 * j, train_mae=0.1, params=3, aic=1.0)
            for b, methods in plan for i, m in enumerate(methods) for j, r in enumerate(range(3))]
    exp = tmp_path / "sets"
    exp.mkdir()
    pd.DataFrame(rows).to_csv(exp / "runs.csv", index=False)
    (exp / "config.yaml").write_text("experiment: sets\nmethods: [xcsf, kacs, ridge, rf, knn]\n")
    summary = build_report(exp, formats=("md", "csv"), figures=False)
    sets = summary.experiments[0].kmethods.sets
    assert [(s.methods, s.complete, s.others) for s in sets] == [
        (("xcsf", "kacs", "ridge"), ["f1", "f2"], ["f3", "f4", "asn"]),
        (("ridge", "rf", "knn"), ["f4", "asn"], ["f1", "f2", "f3"]),
    ]
    md = (exp / "report" / "report.md").read_text()
    assert "### sets: XCSF, KACS, ridge per benchmark" in md and "### sets: ridge, rf, knn across benchmarks" in md
    assert md.count("The control kacs is not among these methods") == 2  # the second set: per benchmark, across
    across = pd.read_csv(exp / "report" / "sets_kmethods-across.csv")
    assert list(across["methods"].unique()) == ["xcsf,kacs,ridge", "ridge,rf,knn"]
    # every benchmark ranks the methods alike: average ranks 1, 2, 3
    assert list(across["avg_rank"]) == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]


def test_every_method_table_shows_a_compaction_variant_by_its_compacted_model(tmp_path) -> None:
    """A compaction variant's runs record the trained model in the generic columns and the
    compacted one in compacted_*: the other-methods and k-method tables show the compacted
    model (AIC, not measured on it, n/a); a refined variant (generic columns: the refined
    model) and XCSF and KACS are shown as recorded; the compaction table keeps both models."""
    def kacs_model(r):  # KACS's trained model, which kacs-piecewise trains too (same seed)
        return dict(train_mae=0.19, test_mae=0.20 + 0.01 * r, train_mse=0.04, test_mse=0.05, rules=1400,
                    params=2800, aic=500.0)

    rows = []
    for b in ("f1", "f2"):
        for r in range(6):
            rows += [
                run_row("squeeze", b, "xcsf", r, train_mae=0.29, test_mae=0.30 + 0.01 * r, train_mse=0.09,
                        test_mse=0.1, rules=4000, params=40000, aic=900.0),
                run_row("squeeze", b, "kacs", r, **kacs_model(r)),
                run_row("squeeze", b, "kacs-piecewise", r, **kacs_model(r), compacted_train_mae=0.14,
                        compacted_test_mae=0.15 + 0.01 * r, compacted_train_mse=0.02, compacted_test_mse=0.03,
                        compacted_rules=140 + 2 * r, compacted_params=280 + 4 * r, compacted_seconds=0.1),
                run_row("squeeze", b, "kacs-refined", r, train_mae=0.17, test_mae=0.18 + 0.01 * r, train_mse=0.03,
                        test_mse=0.04, rules=1400, params=2800, aic=450.0, evolved_train_mae=0.19,
                        evolved_test_mae=0.20 + 0.01 * r, evolved_train_mse=0.04, evolved_test_mse=0.05,
                        evolved_aic=500.0, refine_iterations=10, refine_seconds=0.5),
            ]
    exp = tmp_path / "squeeze"
    exp.mkdir()
    pd.DataFrame(rows).to_csv(exp / "runs.csv", index=False)
    (exp / "config.yaml").write_text("experiment: squeeze\nmethods: [xcsf, kacs, kacs-piecewise, kacs-refined]\n"
                                     "protocol: {name: main, runs: 6}\n")
    build_report(exp, formats=("md",), figures=False)
    md = (exp / "report" / "report.md").read_text()

    # test MAE over r = 0..5: base + 0.025 ± 0.0187; kacs-piecewise's rules 140 + 2r -> 145 ± 3.742,
    # params 280 + 4r -> 290 ± 7.483
    others = md.split("### squeeze: other methods")[1].split("###")[0]
    # columns: cell, method, train MAE, test MAE, rules, params, AIC, runs
    assert _row(others, "f1")[1:] == ["kacs-piecewise", "0.1400 ± 0.0000", "0.1750 ± 0.0187", "145 ± 3.742",
                                      "290 ± 7.483", "n/a", "6"]
    assert _rows_after(others, "f1", 2)[1][1:] == ["kacs-refined", "0.1700 ± 0.0000", "0.2050 ± 0.0187",
                                                   "1400 ± 0", "2800 ± 0", "450 ± 0", "6"]
    assert "Compaction variants are shown by their compacted model (kacs-piecewise; AIC n/a" in others

    per = md.split("### squeeze: 4 methods per benchmark")[1].split("###")[0]
    # columns: cell, method, test MAE mean ± SD, rules, params, rank, runs, p, p Holm, sym, pairs
    f1 = {r[1]: r[2:7] for r in _rows_after(per, "f1", 4)}
    assert f1 == {"XCSF": ["0.3250 ± 0.0187", "4000", "40000", "4.00", "6"],
                  "KACS (control)": ["0.2250 ± 0.0187", "1400", "2800", "3.00", "6"],
                  "kacs-piecewise": ["**0.1750 ± 0.0187**", "145", "290", "1.00", "6"],
                  "kacs-refined": ["0.2050 ± 0.0187", "1400", "2800", "2.00", "6"]}
    assert "Compaction variants are shown by their compacted model (kacs-piecewise)." in per
    ranks = md.split("### squeeze: 4 methods across benchmarks")[1].split("###")[0]
    assert _row(ranks, "kacs-piecewise")[1] == "1.00" and "(kacs-piecewise)." in ranks

    # XCSF and KACS as recorded, and no note where no compaction variant is shown
    summary = md.split("### squeeze: summary")[1].split("###")[0]
    assert _row(summary, "f1")[3] == "0.3250 -" and _rows_after(summary, "f1", 2)[1][3] == "**0.2250**"
    assert _rows_after(summary, "f1", 2)[1][6] == "**500**" and "compacted model" not in summary
    # the compaction table: the trained model (KACS's numbers) before, the compacted one after
    compaction = md.split("### squeeze: compaction")[1].split("###")[0]
    assert _row(compaction, "f1")[3:8] == ["1400", "145.0", "10.4 %", "0.2250 ± 0.0187", "0.1750 ± 0.0187"]


def test_capacity_table_counts_the_chosen_budgets_and_the_cost_in_fits(tmp_path) -> None:
    """A searching method's runs record the budget chosen and the search's seconds: the table
    counts each budget and divides the search by the run's own fit (evolution plus refinement);
    a method that did not search gets no row."""
    rows = []
    for r in range(4):
        common = dict(train_mae=0.19, test_mae=0.20 + 0.01 * r, train_mse=0.04, test_mse=0.05, rules=1400,
                      params=2800, aic=500.0)
        rows += [run_row("sized", "f1", "xcsf", r, **common), run_row("sized", "f1", "kacs", r, **common),
                 run_row("sized", "f1", "kacs-search", r, **common, seconds=4.0 + r, refine_seconds=1.0,
                         capacity_N=6400 if r < 3 else 12800, capacity_seconds=10.0 + 5 * r)]
    exp = tmp_path / "sized"
    exp.mkdir()
    pd.DataFrame(rows).to_csv(exp / "runs.csv", index=False)
    (exp / "config.yaml").write_text("experiment: sized\nmethods: [xcsf, kacs, kacs-search]\n"
                                     "protocol: {name: main, runs: 4}\n")
    build_report(exp, formats=("md", "csv"), figures=False)
    section = (exp / "report" / "report.md").read_text().split("### sized: capacity search")[1].split("###")[0]
    # fits 5, 6, 7, 8 s (mean 6.5); searches 10, 15, 20, 25 s (mean 17.5); ratios 2, 2.5, 2.857, 3.125
    assert _rows_after(section, "f1", 1)[0] == ["f1", "kacs-search", "6400 x 3, 12800 x 1", "4", "17.5", "6.5",
                                                f"{(2 + 2.5 + 20 / 7 + 3.125) / 4:.2f}", "3.12"]
    assert "kacs |" not in section and "xcsf" not in section
    frame = pd.read_csv(exp / "report" / "sized_capacity.csv")
    assert frame["chosen_median"].tolist() == [6400.0]
