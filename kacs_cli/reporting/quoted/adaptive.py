"""The adaptive population budget (docs/experiments.md section 7, docs/adaptive_budget.md):
adaptive KACS against the fixed and the guideline budgets, from the report's means and
pairwise tests; the budgets the runs ended with and the curves at 10,000 iterations from the
runs as recorded."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting import kstats, stats
from kacs_cli.reporting.quoted.common import (MAIN_BENCHMARKS, Quoted, Source, bold_min, compare, integer, means,
                                              short_p, table, values)

LABELS = {"xcsf": "XCSF", "kacs": "N = 6400", "kacs-guideline": "guideline N", "kacs-adaptive": "adaptive"}
ADAPTIVE = "kacs-adaptive"
# The main benchmarks by their cell ids here (f3 at the published n beside the f3 sweep).
MAIN_CELLS = tuple(b if b != "f3" else "f3-published" for b in MAIN_BENCHMARKS)


def _f3_cells(src: Source) -> list[str]:
    return sorted((c for c in means(src).index if c.startswith("f3-n")), key=lambda c: int(c[4:]))


def _budgets(src: Source, cell: str) -> pd.DataFrame:
    r = src.runs()
    return r[(r.benchmark == cell) & (r.method == ADAPTIVE)]


def _grew(sel: pd.DataFrame) -> int:
    """How many adaptive runs ended with a larger budget than they began with."""
    return int((sel.final_N > sel.N).sum())


def _p(row) -> str:
    return "1 (same runs)" if row.identical == row.n_pairs else short_p(row.p)


def f3(src: Source) -> Quoted:
    """Per n on f3 every method's mean test MAE (rules), the adaptive runs' final budget and
    adaptive KACS's p against the guideline and the fixed budget."""
    mae, rules = means(src), means(src, "rules_mean")
    methods = ("xcsf", "kacs", "kacs-guideline", ADAPTIVE)
    vs = {m: compare(src, ADAPTIVE, m) for m in ("kacs-guideline", "kacs")}
    rows = []
    for cell in _f3_cells(src):
        texts = bold_min([f"{mae.loc[cell, m]:.3f}" for m in methods], [mae.loc[cell, m] for m in methods])
        rows.append([cell[4:]] + [f"{t} ({integer(rules.loc[cell, m])})" for t, m in zip(texts, methods)]
                    + [integer(_budgets(src, cell).final_N.mean())] + [_p(vs[m][cell]) for m in vs])
    return table("f3", ["n", "XCSF", "KACS N = 6400", "KACS guideline N", "adaptive KACS", "final N (mean)",
                        "p vs guideline", "p vs 6400"], rows)


def targets(src: Source) -> Quoted:
    """Adaptive KACS against the budget each target names, at 30 paired runs."""
    rules = means(src, "rules_mean")
    rows = []
    for cell, other in [("f3-n14", "kacs"), ("f3-n16", "kacs-guideline"), ("f3-n18", "kacs-guideline"),
                        ("f3-n20", "kacs-guideline")]:
        c = compare(src, ADAPTIVE, other)[cell]
        diff = c.a_mean - c.b_mean
        rows.append([f"f3, n = {cell[4:]}", "guideline N" if other == "kacs-guideline" else "N = 6400",
                     f"{c.a_mean:.3f}", f"{c.b_mean:.3f}", f"{diff:+.3f} ({100 * diff / c.b_mean:+.1f} %)",
                     short_p(c.p), f"{100 * rules.loc[cell, ADAPTIVE] / rules.loc[cell, other]:.0f} %",
                     f"{_grew(_budgets(src, cell))} of {int(c.n_pairs)}"])
    r, vs = src.runs(), compare(src, ADAPTIVE, "kacs")
    same = all(vs[b].identical == vs[b].n_pairs for b in MAIN_CELLS)
    budgets = r[r.benchmark.isin(MAIN_CELLS) & (r.method == ADAPTIVE)]
    rows.append(["eight main benchmarks", "N = 6400", "", "", "identical runs" if same else "differ", "", "",
                 f"{_grew(budgets)} of {len(budgets)}"])
    return table("targets", ["cell", "against", "test MAE adaptive", "test MAE other", "difference", "p",
                             "macro-rules, adaptive / other", "runs whose budget grew"], rows)


def warmup(src: Source) -> Quoted:
    """Test MAE at iteration 10,000 (the curves, which no report table holds), adaptive KACS
    against N = 6400."""
    curves = src.curves()
    at = curves[curves.iteration == 10_000]

    def at_10k(cell: str, method: str) -> pd.Series:
        return at[(at.cell == cell) & (at.method == method)].set_index("run").test_mae.sort_index()
    main = [float((at_10k(c, ADAPTIVE) - at_10k(c, "kacs")).abs().max()) for c in MAIN_CELLS]
    rows = []
    for cell, label in (("f3-n16", "f3, n = 16"), ("f3-n18", "f3, n = 18"), ("f3-n20", "f3, n = 20"),
                        ("pt", "PT (n = 18)")):
        x, y = at_10k(cell, ADAPTIVE), at_10k(cell, "kacs")
        rows.append([label, f"{x.mean():.3f}", f"{y.mean():.3f}", short_p(stats.wilcoxon_p(x.to_numpy(), y.to_numpy()))])
    rows.append(["eight main benchmarks",
                 "identical to N = 6400" if max(main) == 0 else f"max difference {max(main):.3g}", "", ""])
    return table("warmup", ["cell", "adaptive KACS", "KACS N = 6400", "p"], rows)


def quotes(src: Source) -> Quoted:
    """Friedman and Nemenyi over the f3 cells alone (the report's k-method section ranks every
    cell); PT (not in the k-method tables); the summary's headline at n = 20."""
    methods = [ADAPTIVE, "kacs-guideline", "kacs", "xcsf"]
    cells = _f3_cells(src)
    f = kstats.friedman(means(src).loc[cells, methods].to_numpy())
    cd = kstats.critical_difference(len(methods), len(cells))
    ranked = dict(zip(methods, f.average_ranks))
    apart = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:] if abs(ranked[a] - ranked[b]) >= cd]
    pairs = "; ".join(f"{LABELS[a]} and {LABELS[b]} differ by {abs(ranked[a] - ranked[b]):.2f}"
                      for a, b in apart) or "no pair differs by that much"
    a, c = _budgets(src, "pt"), compare(src, ADAPTIVE, "kacs")["pt"]
    r = src.runs()
    rules = r[r.benchmark == "pt"].groupby("method").rules.mean()
    mae, rules20 = means(src).loc["f3-n20"], means(src, "rules_mean").loc["f3-n20"]
    return values(
        ranks=f"average ranks {', '.join(f'{LABELS[m]} {ranked[m]:.2f}' for m in methods)}; Friedman "
              f"p = {short_p(f.p_chi2)}; Nemenyi CD = {cd:.2f}: {pairs}, no other pair",
        pt=f"{_grew(a)} of {len(a)} runs grew the budget (final N {integer(a.final_N.mean())} on average); test MAE "
           f"{c.a_mean:.3f} against {c.b_mean:.3f} at N = 6400 (p = {short_p(c.p)}), with "
           f"{100 * (rules[ADAPTIVE] / rules['kacs'] - 1):+.0f} % macro-rules",
        headline=f"f3 at n = 20: test MAE {mae['kacs-adaptive']:.3f} against {mae['kacs']:.3f} at N = 6400 and "
                 f"{mae['kacs-guideline']:.3f} with the hand-set guideline N, with "
                 f"{100 * rules20['kacs-adaptive'] / rules20['kacs-guideline']:.0f} % of its rules")


EXPERIMENTS = {"adaptive": (f3, targets, warmup, quotes)}
