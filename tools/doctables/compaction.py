"""Compaction's campaigns (docs/compaction.md and docs/results-summary.md), from the reports'
compaction tables: rules and test error before and after each compaction, the rule budget
swept, and compacted KACS beside SupRB-ES."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting.suprb import load_literature

from tools.doctables.common import ALPHA, MAIN_BENCHMARKS, REAL, Runs, compare, integer, name, p_text, table

SWEEP = (("kacs-r20", "20 %"), ("kacs-r10", "10 %"), ("kacs-r05", "5 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))
SUPRB_BUDGETS = (("kacs-r10", "10 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))


def compacted(runs: Runs, folder: str = "compaction") -> pd.DataFrame:
    """The report's compaction table by (cell, method)."""
    return runs.report(folder, "compaction").set_index(["cell", "method"])


def word(p: float, after: float, before: float) -> str:
    """better / level / worse of `after` against `before` at alpha."""
    return "level" if not p < ALPHA else "better" if after < before else "worse"


def verdict(p: float, after: float, before: float) -> str:
    return f"{word(p, after, before)} (p {p_text(p)})"


def _kept(c) -> str:
    return f"{c.compacted_rules:.1f} ({100 * c.kept_share:.1f} %)"


def _before_after(c) -> list[str]:
    return [integer(c.rules), f"{c.error_mean:.4f}", _kept(c), f"{c.compacted_mean:.4f}", f"{100 * c.change:+.1f} %",
            verdict(c.p, c.compacted_mean, c.error_mean)]


def t_compaction(runs: Runs) -> str:
    """KACS's compactions on the main benchmarks: rules and test MAE before and after, piecewise
    (ours) and single-winner (the field's), 30 paired runs."""
    c = compacted(runs)
    rows = [[name(b)] + _before_after(c.loc[(b, "kacs-piecewise")]) + [_kept(c.loc[(b, "kacs-single-winner")]),
                                                                       f"{c.loc[(b, 'kacs-single-winner')].compacted_mean:.4f}"]
            for b in MAIN_BENCHMARKS]
    head = ["benchmark", "KACS rules", "test MAE", "piecewise: rules (kept)", "test MAE", "change",
            "against KACS", "single-winner: rules (kept)", "test MAE"]
    return table(head, rows, ["l"] + ["r"] * 5 + ["l", "r", "r"])


def t_compaction_xcsf(runs: Runs) -> str:
    """XCSF's closest-classifier compaction beside KACS's piecewise one: rules, parameters and
    test MAE of both compacted models, 30 paired runs."""
    c, r = compacted(runs), runs("compaction")
    params = r.groupby(["benchmark", "method"]).compacted_params.mean()
    vs = compare(runs, "compaction", "kacs-piecewise", "xcsf-closest", metric="compacted_test_mae")
    rows = []
    for b in MAIN_BENCHMARKS:
        k = vs[b]
        rows.append([name(b)] + _before_after(c.loc[(b, "xcsf-closest")])
                    + [integer(params[(b, "xcsf-closest")]), integer(params[(b, "kacs-piecewise")]),
                       verdict(k.p, k.a_mean, k.b_mean).replace("better", "KACS better").replace("worse", "KACS worse")])
    head = ["benchmark", "XCSF rules", "test MAE", "closest: rules (kept)", "test MAE", "change",
            "against XCSF", "params, XCSF compacted", "params, KACS compacted", "KACS vs XCSF, compacted"]
    return table(head, rows, ["l"] + ["r"] * 5 + ["l", "r", "r", "l"])


def _single_winner(runs: Runs) -> pd.DataFrame:
    """results/compaction's single-winner runs of the sweep's run ids: mean kept rules and test MAE."""
    c, top = runs("compaction"), runs("compaction_sweep").run.max()
    c = c[(c.run <= top) & (c.method == "kacs-single-winner")]
    return c.groupby("benchmark")[["compacted_rules", "compacted_test_mae"]].mean()


def t_compaction_sweep(runs: Runs) -> str:
    """The rule budget swept (runs 0-9): mean compacted rules and test MAE per budget, the
    trained model's and single-winner's beside them (the same runs of results/compaction)."""
    c, sw = compacted(runs, "compaction_sweep"), _single_winner(runs)
    rows = []
    for b in MAIN_BENCHMARKS:
        first = c.loc[(b, SWEEP[0][0])]
        rows.append([name(b), f"{integer(first.rules)} / {first.error_mean:.4f}"]
                    + [f"{c.loc[(b, m)].compacted_rules:.0f} / {c.loc[(b, m)].compacted_mean:.4f}" for m, _ in SWEEP]
                    + [f"{sw.compacted_rules[b]:.0f} / {sw.compacted_test_mae[b]:.4f}"])
    head = ["benchmark", "trained"] + [f"piecewise {label}" for _, label in SWEEP] + ["single-winner"]
    return table(head, rows, ["l"] + ["r"] * (len(SWEEP) + 2))


def t_compaction_suprb(runs: Runs) -> str:
    """Compacted KACS beside SupRB-ES's published test MSE and rules: per dataset the compacted
    models' mean test MSE and rules at three budgets, and the smallest of them whose mean test
    MSE is no worse than SupRB-ES's, with its parameters beside SupRB's (rules x (n + 1), the
    count of XCSF's linear-consequent rules, which SupRB's are)."""
    c, lit = compacted(runs, "compaction_suprb"), load_literature()
    ns = runs("compaction_suprb").groupby("benchmark").n.first()
    rows = []
    for bench in [b for b in REAL if b in ns.index]:
        mse, rules = float(lit.loc[bench, "suprb_mse_mean"]), float(lit.loc[bench, "suprb_rules_mean"])
        runs_ = int(c.loc[(bench, SUPRB_BUDGETS[0][0])].runs)
        row = [name(bench), str(runs_), f"{mse:.2f}", f"{rules:.1f}", integer(rules * (ns[bench] + 1))]
        here = [c.loc[(bench, m)] for m, _ in SUPRB_BUDGETS]
        row += [f"{h.compacted_mean:.3f} / {h.compacted_rules:.0f}" for h in here]
        smallest = min((h.compacted_rules for h in here if h.compacted_mean <= mse), default=None)
        rows.append(row + ["none" if smallest is None else f"{smallest:.0f} rules, {integer(2 * smallest)} params"])
    head = (["dataset", "runs", "SupRB-ES [lit.]: test MSE", "rules", "params"]
            + [f"KACS {label}: test MSE / rules" for _, label in SUPRB_BUDGETS] + ["smallest KACS no worse than SupRB-ES"])
    return table(head, rows, ["l"] + ["r"] * (4 + len(SUPRB_BUDGETS)) + ["l"])


def v_compaction_targets(runs: Runs, _=None) -> str:
    """The piecewise compaction against its targets over the main benchmarks: the share of the
    rules kept, and the test MAE not significantly worse and at most 5 % higher."""
    c = compacted(runs).xs("kacs-piecewise", level="method").loc[list(MAIN_BENCHMARKS)]
    level = sum(word(x.p, x.compacted_mean, x.error_mean) != "worse" for _, x in c.iterrows())
    low, high = c.change.idxmin(), c.change.idxmax()
    return (f"at most {100 * c.kept_share_max.max():.1f} % of the rules in any run; test MAE not significantly worse "
            f"on {level} of 8 and at most 5 % higher in the mean on {int((c.change <= 0.05).sum())} of 8 (mean change "
            f"from {100 * c.change[low]:+.1f} % on {name(low)} to {100 * c.change[high]:+.1f} % on {name(high)})")


def v_compaction_retrained(runs: Runs, _=None) -> str:
    """How many compacted runs retrained exactly the committed main experiment's run: every
    uncompacted column equal, bit for bit."""
    r = runs("compaction")
    main = runs("paper/main").set_index(["benchmark", "method", "run"])
    columns = ["train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params", "aic"]
    plain = {"kacs-piecewise": "kacs", "kacs-single-winner": "kacs", "xcsf-closest": "xcsf"}
    sel = r[r.method.isin(list(plain))]
    keys = list(zip(sel.benchmark, sel.method.map(plain), sel.run))
    same = (sel[columns].to_numpy() == main.loc[keys, columns].to_numpy()).all(axis=1)
    return f"{int(same.sum()):,} of {len(sel):,}"


def v_compaction_cost(runs: Runs, _=None) -> str:
    """Compaction's seconds against the training's, per compacted method."""
    r = runs("compaction")
    parts = []
    for method in ("kacs-piecewise", "kacs-single-winner", "xcsf-closest"):
        sel = r[r.method == method]
        ratio = sel.compacted_seconds / sel.seconds
        per = sel.assign(ratio=ratio).groupby("benchmark").ratio.mean()
        parts.append(f"{method} {100 * ratio.mean():.1f} % on average ({name(per.idxmax())} "
                     f"{100 * per.max():.1f} %, longest run {100 * ratio.max():.0f} %)")
    return "; ".join(parts)


def v_compaction_vs_single_winner(runs: Runs, _=None) -> str:
    """Per benchmark, the smallest swept piecewise model whose mean test MAE is within 1 % of
    single-winner's (or lower), against single-winner's rules, over the sweep's runs."""
    c, sw = compacted(runs, "compaction_sweep"), _single_winner(runs)
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
