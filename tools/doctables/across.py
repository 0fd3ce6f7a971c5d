"""The documents' own tables and values: what sets several campaigns side by side (the summary
of docs/results-summary.md, the iteration budgets, the rule budget swept beside single-winner,
the suite's fixed settings beside the recommended XCSF), a range over chosen points of the
readable front, and a folder's runs and run time."""

from __future__ import annotations

from fnmatch import fnmatch

import pandas as pd

from kacs_cli.experiments.data.registry import MAIN_TABLE as MAIN_BENCHMARKS
from kacs_cli.reporting.quoted.common import REAL, name

from tools.doctables.common import Runs, integer, table


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def v_time(runs: Runs, folder: str) -> str:
    total = float(runs(folder).seconds.sum())
    return f"{_hours(total)} of run time recorded, about {_hours(total / 2)} at --jobs 2"


def v_runs(runs: Runs, folder: str) -> str:
    return integer(len(runs(folder)))


# One line per experiment of docs/results-summary.md: its page (relative to docs/) and folder;
# the headline is the one its report quotes.
SUMMARY = (("[main](experiments.md#1-main-experiment)", "paper/main"),
           ("[main, the article's prose](algorithm.md#two-semantics)", "main_article"),
           ("[prose against code, one switch at a time](algorithm.md#two-semantics)", "ablation_semantics"),
           ("[sample-size scaling](experiments.md#2-sample-size-scaling)", "paper/sample_scaling"),
           ("[dimensional scaling](experiments.md#3-dimensional-scaling)", "paper/dim_scaling"),
           ("[f3 variants](experiments.md#4-f3-variants)", "paper/f3_variants"),
           ("[alternative protocol](experiments.md#5-alternative-protocol)", "paper/alt_protocol"),
           ("[SupRB comparison](experiments.md#6-suprb-comparison)", "paper/suprb"),
           ("[adaptive budget](experiments.md#7-adaptive-budget-beyond-the-article)", "adaptive"),
           ("[baselines](baselines.md#results)", "baselines"),
           ("[regressors](baselines.md#with-refinement-and-a-converged-mlp)", "regressors"),
           ("[robustness](refinement.md#2-input-transforms)", "robustness"),
           ("[compaction](compaction.md#5-the-campaign)", "compaction"))


def t_summary(runs: Runs) -> str:
    """One line per experiment: its page, runs and headline (the article's prose set beside the
    authors' code, the default)."""
    rows = []
    for link, folder in SUMMARY:
        headline = runs.quote(folder, "headline")
        if folder == "main_article":
            headline += (f", against {runs.quote('paper/main', 'fidelity-inside')} of "
                         f"{runs.quote('paper/main', 'fidelity-total')} under the authors' code (the default)")
        rows.append([link, v_runs(runs, folder), headline])
    return table(["experiment", "runs", "headline (from the committed runs)"], rows, "lrl")


BUDGETS = ("100k", "200k", "400k")


def t_budget(runs: Runs) -> str:
    """Refined KACS at three iteration budgets (one folder each): evolved and refined mean test MAE."""
    present = {b: runs.report(f"budget/{b}", "refinement").set_index("cell") for b in BUDGETS if runs.has(f"budget/{b}")}
    rows = [[name(bench)] + [f"{present[b].loc[bench, k]:.4f}" if b in present else "—"
                             for b in BUDGETS for k in ("evolved_mean", "refined_mean")] for bench in MAIN_BENCHMARKS]
    head = ["benchmark"] + [f"{b} {kind}" for b in BUDGETS for kind in ("evolved", "refined")]
    return table(head, rows, "l" + "r" * 2 * len(BUDGETS))


SWEEP = (("kacs-r20", "20 %"), ("kacs-r10", "10 %"), ("kacs-r05", "5 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))


def _swept(runs: Runs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sweep's compaction table by (cell, method), and results/compaction's single-winner
    runs of the sweep's run ids: mean kept rules and test MAE."""
    c, top = runs("compaction"), runs("compaction_sweep").run.max()
    c = c[(c.run <= top) & (c.method == "kacs-single-winner")]
    return (runs.report("compaction_sweep", "compaction").set_index(["cell", "method"]),
            c.groupby("benchmark")[["compacted_rules", "compacted_test_mae"]].mean())


def t_compaction_sweep(runs: Runs) -> str:
    """The rule budget swept (runs 0-9): mean compacted rules and test MAE per budget, the
    trained model's and single-winner's beside them (the same runs of results/compaction)."""
    c, sw = _swept(runs)
    rows = []
    for b in MAIN_BENCHMARKS:
        first = c.loc[(b, SWEEP[0][0])]
        rows.append([name(b), f"{integer(first.rules)} / {first.error_mean:.4f}"]
                    + [f"{c.loc[(b, m)].compacted_rules:.0f} / {c.loc[(b, m)].compacted_mean:.4f}" for m, _ in SWEEP]
                    + [f"{sw.compacted_rules[b]:.0f} / {sw.compacted_test_mae[b]:.4f}"])
    head = ["benchmark", "trained"] + [f"piecewise {label}" for _, label in SWEEP] + ["single-winner"]
    return table(head, rows, "l" + "r" * (len(SWEEP) + 2))


def v_compaction_vs_single_winner(runs: Runs, _=None) -> str:
    """Per benchmark, the smallest swept piecewise model whose mean test MAE is within 1 % of
    single-winner's (or lower), against single-winner's rules, over the sweep's runs."""
    c, sw = _swept(runs)
    fewer, cases = 0, []
    for b in MAIN_BENCHMARKS:
        ok = [c.loc[(b, m)].compacted_rules for m, _ in SWEEP
              if c.loc[(b, m)].compacted_mean <= 1.01 * sw.compacted_test_mae[b]]
        if ok:
            fewer += min(ok) < sw.compacted_rules[b]
            cases.append(f"{name(b)} {min(ok):.0f} against {sw.compacted_rules[b]:.0f}")
        else:
            cases.append(f"{name(b)} none")
    return f"{fewer} of 8 ({', '.join(cases)})"


def v_suite_best_fixed(runs: Runs, _arg) -> str:
    """On the suite, the datasets where the best of the capacity study's six fixed settings,
    picked by its test MAE (a bound no selector over them can beat), has a lower mean test MAE
    than the recommended XCSF over the study's runs: 'k of D (names)'."""
    r, study = runs("suite_recommended"), runs("suite_capacity")
    fixed = study.method.unique()
    datasets = list(dict.fromkeys(runs.report("suite_recommended", "kmethods").cell))
    ahead = []
    for b in datasets:
        s = study[study.benchmark == b]
        best = s.groupby("method").test_mae.mean()[list(fixed)].min()
        x = r[(r.benchmark == b) & (r.method == "xcsf-recommended") & r.run.isin(s.run)]
        if best < x.test_mae.mean():
            ahead.append(b)
    return f"{len(ahead)} of {len(datasets)} ({', '.join(ahead)})"


def _xkan_rules(params: float, n: int) -> float:
    """X-KAN records its parameters, not its rules: every rule holds one KAN of [n, 2n + 1, 1]
    at the estimator's grid and order, which the readable config leaves at their defaults."""
    from kacs_cli.baselines.spline_kan import count_parameters
    from kacs_cli.baselines.xkan import XKANRegressor
    est = XKANRegressor()
    return params / count_parameters(n, 2 * n + 1, est.grid, est.k)


def _count(x: float) -> str:
    """Parameters: whole below a thousand, else two significant figures (2,400; 76,000)."""
    return f"{x:,.0f}" if x < 1000 else f"{float(f'{x:.2g}'):,.0f}"


def _rules(x: float) -> str:
    """Mean rules: one decimal below ten (3.7), whole above (32)."""
    return f"{x:.1f}" if x < 10 else f"{x:,.0f}"


def v_readable_range(runs: Runs, arg: str) -> str:
    """METRIC:METHODS:BENCHES over the readable points of results/readable: the smallest and
    largest, 'X to Y' ('X' when they show alike). METHODS is a comma-separated list of shell
    patterns; BENCHES "all", "real", "front" (the points on the front) or a comma-separated list."""
    metric, methods, benches = arg.split(":")
    p = runs.report("readable", "pareto")
    p = p[p.kind == "readable"]
    chosen = (set(MAIN_BENCHMARKS) if benches == "all" else set(MAIN_BENCHMARKS) & set(REAL) if benches == "real"
              else None if benches == "front" else set(benches.split(",")))
    matching = p.method.map(lambda m: any(fnmatch(m, w) for w in methods.split(",")))
    sel = p[matching & (p.on_front == True if chosen is None else p.cell.isin(chosen))]  # noqa: E712 - object column
    if sel.empty:
        raise ValueError(f"readable-range {arg}: no points")
    if metric == "mae":
        got, show = sel.test_error, (lambda x: f"{x:.2f}")
    elif metric == "params":
        got, show = sel.params, _count
    elif metric == "rules" and methods == "xkan":
        n = runs("readable").groupby("benchmark").n.first()
        got, show = sel.apply(lambda r: _xkan_rules(r.params, int(n[r.cell])), axis=1), _rules
    else:
        raise ValueError(f"readable-range {arg}: metric {metric!r} is one of mae, params, rules (X-KAN's)")
    low, high = show(got.min()), show(got.max())
    return low if low == high else f"{low} to {high}"
