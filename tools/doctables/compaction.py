"""Compaction's campaigns (docs/compaction.md and docs/results-summary.md): rules and test error before
and after each compaction, the rule budget swept, and compacted KACS beside SupRB-ES."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kacs_cli.reporting import stats
from kacs_cli.reporting.suprb import load_literature

from tools.doctables.common import (ALPHA, MAIN_BENCHMARKS, REAL, Runs, integer, name, p_text, table)

SWEEP = (("kacs-r20", "20 %"), ("kacs-r10", "10 %"), ("kacs-r05", "5 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))
SUPRB_BUDGETS = (("kacs-r10", "10 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))


def compacted(runs: pd.DataFrame, bench: str, method: str):
    """(rules, compacted rules, test MAE, compacted test MAE) of a compacted method's runs on a
    benchmark, by run."""
    sel = runs[(runs.benchmark == bench) & (runs.method == method)].set_index("run").sort_index()
    return (sel.rules.to_numpy(float), sel.compacted_rules.to_numpy(float),
            sel.test_mae.to_numpy(float), sel.compacted_test_mae.to_numpy(float))


def verdict(after: np.ndarray, before: np.ndarray) -> str:
    """better / level / worse of `after` against `before`: paired two-sided Wilcoxon over runs."""
    p = stats.wilcoxon_p(after, before)
    if not p < ALPHA:
        return f"level (p {p_text(p)})"
    return f"{'better' if after.mean() < before.mean() else 'worse'} (p {p_text(p)})"


def _change(after: np.ndarray, before: np.ndarray) -> str:
    return f"{100 * (after.mean() / before.mean() - 1):+.1f} %"


def _kept(kept: np.ndarray, rules: np.ndarray) -> str:
    return f"{kept.mean():.1f} ({100 * np.mean(kept / rules):.1f} %)"


def compaction(runs: Runs) -> str:
    """KACS's compactions on the main benchmarks: rules and test MAE before and after, piecewise
    (ours) and single-winner (the field's), 30 paired runs."""
    r = runs("compaction")
    rows = []
    for bench in MAIN_BENCHMARKS:
        rules, kept, before, after = compacted(r, bench, "kacs-piecewise")
        _, sw_kept, _, sw_after = compacted(r, bench, "kacs-single-winner")
        rows.append([name(bench), integer(rules.mean()), f"{before.mean():.4f}", _kept(kept, rules),
                     f"{after.mean():.4f}", _change(after, before), verdict(after, before),
                     _kept(sw_kept, rules), f"{sw_after.mean():.4f}"])
    head = ["benchmark", "KACS rules", "test MAE", "piecewise: rules (kept)", "test MAE", "change",
            "against KACS", "single-winner: rules (kept)", "test MAE"]
    return table(head, rows, ["l"] + ["r"] * 5 + ["l", "r", "r"])


def compaction_xcsf(runs: Runs) -> str:
    """XCSF's closest-classifier compaction beside KACS's piecewise one: rules, parameters and
    test MAE of both compacted models, 30 paired runs."""
    r = runs("compaction")
    rows = []
    for bench in MAIN_BENCHMARKS:
        rules, kept, before, after = compacted(r, bench, "xcsf-closest")
        _, k_kept, _, k_after = compacted(r, bench, "kacs-piecewise")
        sel = r[(r.benchmark == bench) & (r.method == "xcsf-closest")]
        ksel = r[(r.benchmark == bench) & (r.method == "kacs-piecewise")]
        rows.append([name(bench), integer(rules.mean()), f"{before.mean():.4f}", _kept(kept, rules),
                     f"{after.mean():.4f}", _change(after, before), verdict(after, before),
                     integer(sel.compacted_params.mean()), integer(ksel.compacted_params.mean()),
                     verdict(k_after, after).replace("better", "KACS better").replace("worse", "KACS worse")])
    head = ["benchmark", "XCSF rules", "test MAE", "closest: rules (kept)", "test MAE", "change",
            "against XCSF", "params, XCSF compacted", "params, KACS compacted", "KACS vs XCSF, compacted"]
    return table(head, rows, ["l"] + ["r"] * 5 + ["l", "r", "r", "l"])


def _sweep_and_single_winner(runs: Runs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sweep's runs, and results/compaction's runs of the same run ids."""
    r = runs("compaction_sweep")
    c = runs("compaction")
    return r, c[c.run <= r.run.max()]


def compaction_sweep(runs: Runs) -> str:
    """The rule budget swept (runs 0-9): mean compacted rules and test MAE per budget, the
    trained model's and single-winner's beside them (the same runs of results/compaction)."""
    r, c = _sweep_and_single_winner(runs)
    rows = []
    for bench in MAIN_BENCHMARKS:
        rules, _, before, _ = compacted(r, bench, SWEEP[0][0])
        row = [name(bench), f"{integer(rules.mean())} / {before.mean():.4f}"]
        for method, _label in SWEEP:
            _, kept, _, after = compacted(r, bench, method)
            row.append(f"{kept.mean():.0f} / {after.mean():.4f}")
        _, sw_kept, _, sw_after = compacted(c, bench, "kacs-single-winner")
        row.append(f"{sw_kept.mean():.0f} / {sw_after.mean():.4f}")
        rows.append(row)
    head = ["benchmark", "trained"] + [f"piecewise {label}" for _, label in SWEEP] + ["single-winner"]
    return table(head, rows, ["l"] + ["r"] * (len(SWEEP) + 2))


def compaction_suprb(runs: Runs) -> str:
    """Compacted KACS beside SupRB-ES's published test MSE and rules: per dataset the compacted
    models' mean test MSE and rules at three budgets, and the smallest of them whose mean test
    MSE is no worse than SupRB-ES's, with its parameters beside SupRB's (rules x (n + 1), the
    count of XCSF's linear-consequent rules, which SupRB's are)."""
    r = runs("compaction_suprb")
    lit = load_literature()
    rows = []
    for bench in REAL:
        here = r[r.benchmark == bench]
        if here.empty:
            continue
        n = int(here.n.iloc[0])
        suprb_mse = float(lit.loc[bench, "suprb_mse_mean"])
        suprb_rules = float(lit.loc[bench, "suprb_rules_mean"])
        row = [name(bench), str(here.run.nunique()), f"{suprb_mse:.2f}", f"{suprb_rules:.1f}",
               integer(suprb_rules * (n + 1))]
        smallest = None
        for method, _label in SUPRB_BUDGETS:
            sel = here[here.method == method]
            mse, rules = float(sel.compacted_test_mse.mean()), float(sel.compacted_rules.mean())
            row.append(f"{mse:.3f} / {rules:.0f}")
            if mse <= suprb_mse and (smallest is None or rules < smallest):
                smallest = rules
        row.append("none" if smallest is None else f"{smallest:.0f} rules, {integer(2 * smallest)} params")
        rows.append(row)
    head = (["dataset", "runs", "SupRB-ES [lit.]: test MSE", "rules", "params"]
            + [f"KACS {label}: test MSE / rules" for _, label in SUPRB_BUDGETS]
            + ["smallest KACS no worse than SupRB-ES"])
    return table(head, rows, ["l"] + ["r"] * (4 + len(SUPRB_BUDGETS)) + ["l"])


def v_compaction_targets(runs: Runs, _=None) -> str:
    """The piecewise compaction against its targets over the main benchmarks: the share of the
    rules kept, and the test MAE not significantly worse and at most 5 % higher."""
    r = runs("compaction")
    kept, level, within, changes = [], 0, 0, {}
    for bench in MAIN_BENCHMARKS:
        rules, k, before, after = compacted(r, bench, "kacs-piecewise")
        kept.append(np.max(k / rules))
        p = stats.wilcoxon_p(after, before)
        level += not (p < ALPHA and after.mean() > before.mean())
        changes[bench] = after.mean() / before.mean() - 1
        within += changes[bench] <= 0.05
    low, high = min(changes, key=changes.get), max(changes, key=changes.get)
    return (f"at most {100 * max(kept):.1f} % of the rules in any run; test MAE not significantly worse "
            f"on {level} of 8 and at most 5 % higher in the mean on {within} of 8 (mean change from "
            f"{100 * changes[low]:+.1f} % on {name(low)} to {100 * changes[high]:+.1f} % on {name(high)})")


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
    r, c = _sweep_and_single_winner(runs)
    fewer, cases = 0, []
    for bench in MAIN_BENCHMARKS:
        _, sw_kept, _, sw_after = compacted(c, bench, "kacs-single-winner")
        ok = []
        for method, label in SWEEP:
            _, kept, _, after = compacted(r, bench, method)
            if after.mean() <= 1.01 * sw_after.mean():
                ok.append((kept.mean(), label, after.mean()))
        if ok:
            rules, label, mae = min(ok)
            fewer += rules < sw_kept.mean()
            cases.append(f"{name(bench)} {rules:.0f} against {sw_kept.mean():.0f}")
        else:
            cases.append(f"{name(bench)} none")
    return f"{fewer} of 8 ({', '.join(cases)})"


TABLES = {
    "compaction": compaction,
    "compaction-xcsf": compaction_xcsf,
    "compaction-sweep": compaction_sweep,
    "compaction-suprb": compaction_suprb,
}
VALUES = {
    "compaction-targets": v_compaction_targets,
    "compaction-cost": v_compaction_cost,
    "compaction-retrained": v_compaction_retrained,
    "compaction-vs-single-winner": v_compaction_vs_single_winner,
}
