"""The adaptive population budget (docs/experiments.md section 7, docs/adaptive_budget.md):
adaptive KACS against the fixed and the guideline budgets."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kacs_cli.reporting import kstats, stats

from tools.doctables.common import (MAIN_BENCHMARKS, Runs, integer, mean, p_text, pair, table, values)

LABELS = {"xcsf": "XCSF", "kacs": "N = 6400", "kacs-guideline": "guideline N", "kacs-adaptive": "adaptive"}


def _f3_cells(r: pd.DataFrame) -> list[str]:
    return [b for b in r.benchmark.unique() if b.startswith("f3-n")]


def adaptive_f3(runs: Runs) -> str:
    r = runs("adaptive")
    cells = _f3_cells(r)
    cells.sort(key=lambda b: int(b[4:]))
    methods = ("xcsf", "kacs", "kacs-guideline", "kacs-adaptive")
    rows = []
    for bench in cells:
        means = {m: mean(r, bench, m, "test_mae") for m in methods}
        best = min(round(v, 3) for v in means.values())
        row = [bench[4:]]
        for m in methods:
            txt = f"{means[m]:.3f}"
            row.append((f"**{txt}**" if round(means[m], 3) == best else txt) + f" ({integer(mean(r, bench, m, 'rules'))})")
        row.append(integer(mean(r, bench, "kacs-adaptive", "final_N")))
        for other in ("kacs-guideline", "kacs"):
            x, y = pair(r, bench, "kacs-adaptive", other, "test_mae")
            row.append("1 (same runs)" if np.array_equal(x, y) else p_text(stats.wilcoxon_p(x, y)))
        rows.append(row)
    return table(["n", "XCSF", "KACS N = 6400", "KACS guideline N", "adaptive KACS", "final N (mean)",
                  "p vs guideline", "p vs 6400"], rows, ["r"] * 8)


def _grew(r: pd.DataFrame, bench: str) -> int:
    """How many adaptive runs of a cell ended with a larger budget than they began with."""
    return int((values(r, bench, "kacs-adaptive", "final_N") > values(r, bench, "kacs-adaptive", "N")).sum())


def _main_benchmarks_row(r: pd.DataFrame) -> list[str]:
    """The eight main benchmarks, pooled: whether adaptive runs equal the N = 6400 ones."""
    grew, total, same = 0, 0, True
    for bench in MAIN_BENCHMARKS:
        b = bench if bench != "f3" else "f3-published"
        v = r[(r.benchmark == b) & (r.method == "kacs-adaptive")]
        grew += int((v.final_N > v.N).sum())
        total += len(v)
        for metric in ("test_mae", "train_mae", "rules"):
            same = same and np.array_equal(*pair(r, b, "kacs-adaptive", "kacs", metric))
    return ["eight main benchmarks", "N = 6400", "", "", "identical runs" if same else "differ", "", "",
            f"{grew} of {total}"]


def adaptive_targets(runs: Runs) -> str:
    """Adaptive KACS against the budget each target names, at 30 paired runs."""
    r = runs("adaptive")
    rows = []
    for bench, other in [("f3-n14", "kacs"), ("f3-n16", "kacs-guideline"), ("f3-n18", "kacs-guideline"),
                         ("f3-n20", "kacs-guideline")]:
        x, y = pair(r, bench, "kacs-adaptive", other, "test_mae")
        rx, ry = pair(r, bench, "kacs-adaptive", other, "rules")
        diff = x.mean() - y.mean()
        rows.append([f"f3, n = {bench[4:]}", "guideline N" if other == "kacs-guideline" else "N = 6400",
                     f"{x.mean():.3f}", f"{y.mean():.3f}", f"{diff:+.3f} ({100 * diff / y.mean():+.1f} %)",
                     p_text(stats.wilcoxon_p(x, y)), f"{100 * rx.mean() / ry.mean():.0f} %",
                     f"{_grew(r, bench)} of {len(x)}"])
    rows.append(_main_benchmarks_row(r))
    return table(["cell", "against", "test MAE adaptive", "test MAE other", "difference", "p",
                  "macro-rules, adaptive / other", "runs whose budget grew"], rows,
                 ["l", "l", "r", "r", "r", "r", "r", "r"])


def adaptive_warmup(runs: Runs) -> str:
    """Test MAE at iteration 10,000 (the curves), adaptive KACS against N = 6400."""
    curves = runs.curves("adaptive")
    at = curves[curves.iteration == 10_000]

    def at_10k(cell: str, method: str) -> pd.Series:
        return at[(at.cell == cell) & (at.method == method)].set_index("run").test_mae.sort_index()
    rows = []
    main = []
    for cell in MAIN_BENCHMARKS:
        label = cell if cell != "f3" else "f3-published"
        main.append(float((at_10k(label, "kacs-adaptive") - at_10k(label, "kacs")).abs().max()))
    for cell, label in (("f3-n16", "f3, n = 16"), ("f3-n18", "f3, n = 18"), ("f3-n20", "f3, n = 20"),
                        ("pt", "PT (n = 18)")):
        x, y = at_10k(cell, "kacs-adaptive"), at_10k(cell, "kacs")
        rows.append([label, f"{x.mean():.3f}", f"{y.mean():.3f}", p_text(stats.wilcoxon_p(x.to_numpy(), y.to_numpy()))])
    rows.append(["eight main benchmarks",
                 "identical to N = 6400" if max(main) == 0 else f"max difference {max(main):.3g}", "", ""])
    return table(["cell", "adaptive KACS", "KACS N = 6400", "p"], rows, ["l", "r", "r", "r"])


def v_adaptive_ranks(runs: Runs, _=None) -> str:
    r = runs("adaptive")
    cells = _f3_cells(r)
    methods = ["kacs-adaptive", "kacs-guideline", "kacs", "xcsf"]
    matrix = np.array([[mean(r, b, m, "test_mae") for m in methods] for b in cells])
    f = kstats.friedman(matrix)
    cd = kstats.critical_difference(len(methods), len(cells))
    ranks = dict(zip(methods, f.average_ranks))
    apart = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:] if abs(ranks[a] - ranks[b]) >= cd]
    pairs = "; ".join(f"{LABELS[a]} and {LABELS[b]} differ by {abs(ranks[a] - ranks[b]):.2f}"
                      for a, b in apart) or "no pair differs by that much"
    return (f"average ranks {', '.join(f'{LABELS[m]} {ranks[m]:.2f}' for m in methods)}; Friedman "
            f"p = {p_text(f.p_chi2)}; Nemenyi CD = {cd:.2f}: {pairs}, no other pair")


def v_adaptive_pt(runs: Runs, _=None) -> str:
    r = runs("adaptive")
    a = r[(r.benchmark == "pt") & (r.method == "kacs-adaptive")]
    x, y = pair(r, "pt", "kacs-adaptive", "kacs", "test_mae")
    rx, ry = pair(r, "pt", "kacs-adaptive", "kacs", "rules")
    grew = int((a.final_N > a.N).sum())
    return (f"{grew} of {len(a)} runs grew the budget (final N {integer(a.final_N.mean())} on average); test MAE "
            f"{x.mean():.3f} against {y.mean():.3f} at N = 6400 (p = {p_text(stats.wilcoxon_p(x, y))}), with "
            f"{100 * (rx.mean() / ry.mean() - 1):+.0f} % macro-rules")


TABLES = {
    "adaptive-f3": adaptive_f3,
    "adaptive-targets": adaptive_targets,
    "adaptive-warmup": adaptive_warmup,
}
VALUES = {
    "adaptive-ranks": v_adaptive_ranks,
    "adaptive-pt": v_adaptive_pt,
}
