"""The adaptive population budget (docs/experiments.md section 7, docs/adaptive_budget.md):
adaptive KACS against the fixed and the guideline budgets, from the report's means and
pairwise tests; the budgets the runs ended with and the curves at 10,000 iterations from the
runs as recorded."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting import kstats, stats

from tools.doctables.common import MAIN_BENCHMARKS, Runs, bold_min, compare, integer, means, p_text, table

LABELS = {"xcsf": "XCSF", "kacs": "N = 6400", "kacs-guideline": "guideline N", "kacs-adaptive": "adaptive"}
ADAPTIVE = "kacs-adaptive"


def _f3_cells(runs: Runs) -> list[str]:
    return sorted((c for c in means(runs, "adaptive").index if c.startswith("f3-n")), key=lambda c: int(c[4:]))


def _budgets(runs: Runs, cell: str) -> pd.DataFrame:
    r = runs("adaptive")
    return r[(r.benchmark == cell) & (r.method == ADAPTIVE)]


def _p(row) -> str:
    return "1 (same runs)" if row.identical == row.n_pairs else p_text(row.p)


def t_adaptive_f3(runs: Runs) -> str:
    mae, rules = means(runs, "adaptive"), means(runs, "adaptive", "rules_mean")
    methods = ("xcsf", "kacs", "kacs-guideline", ADAPTIVE)
    vs = {m: compare(runs, "adaptive", ADAPTIVE, m) for m in ("kacs-guideline", "kacs")}
    rows = []
    for cell in _f3_cells(runs):
        texts = bold_min([f"{mae.loc[cell, m]:.3f}" for m in methods], [mae.loc[cell, m] for m in methods])
        rows.append([cell[4:]] + [f"{t} ({integer(rules.loc[cell, m])})" for t, m in zip(texts, methods)]
                    + [integer(_budgets(runs, cell).final_N.mean())] + [_p(vs[m][cell]) for m in vs])
    return table(["n", "XCSF", "KACS N = 6400", "KACS guideline N", "adaptive KACS", "final N (mean)",
                  "p vs guideline", "p vs 6400"], rows, ["r"] * 8)


def _grew(sel: pd.DataFrame) -> int:
    """How many adaptive runs ended with a larger budget than they began with."""
    return int((sel.final_N > sel.N).sum())


def t_adaptive_targets(runs: Runs) -> str:
    """Adaptive KACS against the budget each target names, at 30 paired runs."""
    rules = means(runs, "adaptive", "rules_mean")
    rows = []
    for cell, other in [("f3-n14", "kacs"), ("f3-n16", "kacs-guideline"), ("f3-n18", "kacs-guideline"),
                        ("f3-n20", "kacs-guideline")]:
        c = compare(runs, "adaptive", ADAPTIVE, other)[cell]
        diff = c.a_mean - c.b_mean
        rows.append([f"f3, n = {cell[4:]}", "guideline N" if other == "kacs-guideline" else "N = 6400",
                     f"{c.a_mean:.3f}", f"{c.b_mean:.3f}", f"{diff:+.3f} ({100 * diff / c.b_mean:+.1f} %)",
                     p_text(c.p), f"{100 * rules.loc[cell, ADAPTIVE] / rules.loc[cell, other]:.0f} %",
                     f"{_grew(_budgets(runs, cell))} of {int(c.n_pairs)}"])
    main = [b if b != "f3" else "f3-published" for b in MAIN_BENCHMARKS]
    r, vs = runs("adaptive"), compare(runs, "adaptive", ADAPTIVE, "kacs")
    same = all(vs[b].identical == vs[b].n_pairs for b in main)
    budgets = r[r.benchmark.isin(main) & (r.method == ADAPTIVE)]
    rows.append(["eight main benchmarks", "N = 6400", "", "", "identical runs" if same else "differ", "", "",
                 f"{_grew(budgets)} of {len(budgets)}"])
    return table(["cell", "against", "test MAE adaptive", "test MAE other", "difference", "p",
                  "macro-rules, adaptive / other", "runs whose budget grew"], rows,
                 ["l", "l", "r", "r", "r", "r", "r", "r"])


def t_adaptive_warmup(runs: Runs) -> str:
    """Test MAE at iteration 10,000 (the curves, which no report table holds), adaptive KACS
    against N = 6400."""
    curves = runs.curves("adaptive")
    at = curves[curves.iteration == 10_000]

    def at_10k(cell: str, method: str) -> pd.Series:
        return at[(at.cell == cell) & (at.method == method)].set_index("run").test_mae.sort_index()
    main = [float((at_10k(c, ADAPTIVE) - at_10k(c, "kacs")).abs().max())
            for c in (b if b != "f3" else "f3-published" for b in MAIN_BENCHMARKS)]
    rows = []
    for cell, label in (("f3-n16", "f3, n = 16"), ("f3-n18", "f3, n = 18"), ("f3-n20", "f3, n = 20"),
                        ("pt", "PT (n = 18)")):
        x, y = at_10k(cell, ADAPTIVE), at_10k(cell, "kacs")
        rows.append([label, f"{x.mean():.3f}", f"{y.mean():.3f}", p_text(stats.wilcoxon_p(x.to_numpy(), y.to_numpy()))])
    rows.append(["eight main benchmarks",
                 "identical to N = 6400" if max(main) == 0 else f"max difference {max(main):.3g}", "", ""])
    return table(["cell", "adaptive KACS", "KACS N = 6400", "p"], rows, ["l", "r", "r", "r"])


def v_adaptive_ranks(runs: Runs, _=None) -> str:
    """Friedman and Nemenyi over the f3 cells alone (the report's k-method section ranks every cell)."""
    methods = [ADAPTIVE, "kacs-guideline", "kacs", "xcsf"]
    cells = _f3_cells(runs)
    f = kstats.friedman(means(runs, "adaptive").loc[cells, methods].to_numpy())
    cd = kstats.critical_difference(len(methods), len(cells))
    ranks = dict(zip(methods, f.average_ranks))
    apart = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:] if abs(ranks[a] - ranks[b]) >= cd]
    pairs = "; ".join(f"{LABELS[a]} and {LABELS[b]} differ by {abs(ranks[a] - ranks[b]):.2f}"
                      for a, b in apart) or "no pair differs by that much"
    return (f"average ranks {', '.join(f'{LABELS[m]} {ranks[m]:.2f}' for m in methods)}; Friedman "
            f"p = {p_text(f.p_chi2)}; Nemenyi CD = {cd:.2f}: {pairs}, no other pair")


def v_adaptive_pt(runs: Runs, _=None) -> str:
    a, c = _budgets(runs, "pt"), compare(runs, "adaptive", ADAPTIVE, "kacs")["pt"]
    r = runs("adaptive")
    rules = r[r.benchmark == "pt"].groupby("method").rules.mean()  # pt is not in the k-method tables
    return (f"{_grew(a)} of {len(a)} runs grew the budget (final N {integer(a.final_N.mean())} on average); test MAE "
            f"{c.a_mean:.3f} against {c.b_mean:.3f} at N = 6400 (p = {p_text(c.p)}), with "
            f"{100 * (rules[ADAPTIVE] / rules['kacs'] - 1):+.0f} % macro-rules")
