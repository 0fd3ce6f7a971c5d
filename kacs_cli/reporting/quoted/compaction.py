"""Compaction's campaigns (docs/compaction.md and its line of docs/results-summary.md), from the
report's compaction table: rules and test error before and after each compaction, and compacted
KACS beside SupRB-ES."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting.quoted.common import (MAIN_BENCHMARKS, REAL, Quoted, Source, compare, integer, name, short_p,
                                              table, values, word)
from kacs_cli.reporting.suprb import load_literature

SUPRB_BUDGETS = (("kacs-r10", "10 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))
# Each compacted method and the plain method whose runs it compacted (the same seeds, trained
# again: the plain runs here are the main experiment's, reused).
PLAIN = {"kacs-piecewise": "kacs", "kacs-single-winner": "kacs", "xcsf-closest": "xcsf"}
UNCOMPACTED = ["train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params", "aic"]


def compacted(src: Source) -> pd.DataFrame:
    """The report's compaction table by (cell, method)."""
    return src.report("compaction").set_index(["cell", "method"])


def verdict(p: float, after: float, before: float) -> str:
    return f"{word(p, after, before)} (p {short_p(p)})"


def _kept(c) -> str:
    return f"{c.compacted_rules:.1f} ({100 * c.kept_share:.1f} %)"


def _before_after(c) -> list[str]:
    return [integer(c.rules), f"{c.error_mean:.4f}", _kept(c), f"{c.compacted_mean:.4f}", f"{100 * c.change:+.1f} %",
            verdict(c.p, c.compacted_mean, c.error_mean)]


def compaction(src: Source) -> Quoted:
    """KACS's compactions on the main benchmarks (piecewise, ours, and single-winner, the
    field's), XCSF's closest-classifier compaction beside KACS's piecewise one, 30 paired runs;
    the targets, the cost and the retraining in a few words."""
    c, r = compacted(src), src.runs()
    winner = {b: c.loc[(b, "kacs-single-winner")] for b in MAIN_BENCHMARKS}
    rows = [[name(b)] + _before_after(c.loc[(b, "kacs-piecewise")]) + [_kept(winner[b]), f"{winner[b].compacted_mean:.4f}"]
            for b in MAIN_BENCHMARKS]
    out = table("kacs", ["benchmark", "KACS rules", "test MAE", "piecewise: rules (kept)", "test MAE", "change",
                         "against KACS", "single-winner: rules (kept)", "test MAE"], rows)
    params = r.groupby(["benchmark", "method"]).compacted_params.mean()
    vs = compare(src, "kacs-piecewise", "xcsf-closest", metric="compacted_test_mae")
    rows = []
    for b in MAIN_BENCHMARKS:
        k = vs[b]
        rows.append([name(b)] + _before_after(c.loc[(b, "xcsf-closest")])
                    + [integer(params[(b, "xcsf-closest")]), integer(params[(b, "kacs-piecewise")]),
                       verdict(k.p, k.a_mean, k.b_mean).replace("better", "KACS better").replace("worse", "KACS worse")])
    out.update(table("xcsf", ["benchmark", "XCSF rules", "test MAE", "closest: rules (kept)", "test MAE", "change",
                              "against XCSF", "params, XCSF compacted", "params, KACS compacted",
                              "KACS vs XCSF, compacted"], rows))

    piecewise = c.xs("kacs-piecewise", level="method").loc[list(MAIN_BENCHMARKS)]
    single = c.xs("kacs-single-winner", level="method").loc[list(MAIN_BENCHMARKS)]
    level = sum(word(x.p, x.compacted_mean, x.error_mean) != "worse" for _, x in piecewise.iterrows())
    low, high = piecewise.change.idxmin(), piecewise.change.idxmax()
    cost = []
    for method in PLAIN:
        sel = r[r.method == method]
        ratio = sel.compacted_seconds / sel.seconds
        per = sel.assign(ratio=ratio).groupby("benchmark").ratio.mean()
        cost.append(f"{method} {100 * ratio.mean():.1f} % on average ({name(per.idxmax())} "
                    f"{100 * per.max():.1f} %, longest run {100 * ratio.max():.0f} %)")
    plain = r.set_index(["benchmark", "method", "run"])
    sel = r[r.method.isin(list(PLAIN))]
    same = (sel[UNCOMPACTED].to_numpy()
            == plain.loc[list(zip(sel.benchmark, sel.method.map(PLAIN), sel.run)), UNCOMPACTED].to_numpy()).all(axis=1)

    def counted(frame, verdict_word):
        return sum(word(x.p, x.compacted_mean, x.error_mean) == verdict_word for _, x in frame.iterrows())
    wins = sum(word(vs[b].p, vs[b].a_mean, vs[b].b_mean) == "better" for b in MAIN_BENCHMARKS)
    out.update(values(
        targets=f"at most {100 * piecewise.kept_share_max.max():.1f} % of the rules in any run; test MAE not "
                f"significantly worse on {level} of 8 and at most 5 % higher in the mean on "
                f"{int((piecewise.change <= 0.05).sum())} of 8 (mean change from {100 * piecewise.change[low]:+.1f} % "
                f"on {name(low)} to {100 * piecewise.change[high]:+.1f} % on {name(high)})",
        cost="; ".join(cost),
        retrained=f"{int(same.sum()):,} of {len(sel):,}",
        headline=f"compacted to at most {100 * piecewise.kept_share_max.max():.0f} % of its rules, KACS has a lower "
                 f"test MAE than uncompacted on {counted(piecewise, 'better')} of 8 benchmarks; single-winner "
                 f"compaction raises it on {counted(single, 'worse')} of 8; compacted KACS beats compacted XCSF "
                 f"(closest classifier) on {wins} of 8"))
    return out


def compaction_suprb(src: Source) -> Quoted:
    """Compacted KACS beside SupRB-ES's published test MSE and rules: per dataset the compacted
    models' mean test MSE and rules at three budgets, and the smallest of them whose mean test
    MSE is no worse than SupRB-ES's, with its parameters beside SupRB's (rules x (n + 1), the
    count of XCSF's linear-consequent rules, which SupRB's are)."""
    c, lit = compacted(src), load_literature()
    ns = src.runs().groupby("benchmark").n.first()
    rows = []
    for bench in [b for b in REAL if b in ns.index]:
        mse, rules = float(lit.loc[bench, "suprb_mse_mean"]), float(lit.loc[bench, "suprb_rules_mean"])
        runs = int(c.loc[(bench, SUPRB_BUDGETS[0][0])].runs)
        row = [name(bench), str(runs), f"{mse:.2f}", f"{rules:.1f}", integer(rules * (ns[bench] + 1))]
        here = [c.loc[(bench, m)] for m, _ in SUPRB_BUDGETS]
        row += [f"{h.compacted_mean:.3f} / {h.compacted_rules:.0f}" for h in here]
        smallest = min((h.compacted_rules for h in here if h.compacted_mean <= mse), default=None)
        rows.append(row + ["none" if smallest is None else f"{smallest:.0f} rules, {integer(2 * smallest)} params"])
    return table("suprb", ["dataset", "runs", "SupRB-ES [lit.]: test MSE", "rules", "params"]
                 + [f"KACS {label}: test MSE / rules" for _, label in SUPRB_BUDGETS]
                 + ["smallest KACS no worse than SupRB-ES"], rows)


EXPERIMENTS = {"compaction": (compaction,), "compaction_suprb": (compaction_suprb,)}
