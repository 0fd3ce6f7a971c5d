"""The article's experiments (docs/experiments.md sections 1-6, the literature table of
docs/algorithm.md and their lines of docs/results-summary.md): our report tables beside the
published ones shipped with the package."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting import stats
from kacs_cli.reporting.quoted.common import (MAIN_BENCHMARKS, REAL, Quoted, Source, integer, mean_sd, name, table,
                                              values)
from kacs_cli.reporting.suprb import load_literature

LABELS = {"kacs": "KACS", "xcsf": "XCSF"}
METRICS = (("test_mae", "test MAE"), ("train_mae", "train MAE"), ("rules", "rules"), ("params", "params"),
           ("aic", "AIC"))
PAIR = ("xcsf", "kacs")


def _pm(metric: str, m: float, s: float) -> str:
    return mean_sd(m, s) if metric.endswith(("mae", "mse")) else f"{integer(m)} ± {integer(s)}"


def _paper(src: Source) -> pd.DataFrame:
    return src.report("paper").set_index(["cell", "metric"])


def cells(src: Source, metric: str = "test_mae") -> pd.DataFrame:
    """The summary rows of one metric, in the report's cell order."""
    s = src.report("summary")
    return s[s.metric == metric].set_index("cell")


def _count(src: Source, symbol: str, metric: str = "test_mae", where=lambda cell: True) -> int:
    """On how many cells XCSF against KACS gets the symbol ('-': KACS lower)."""
    return sum(s == symbol for cell, s in cells(src, metric).symbol.items() if where(cell))


def _params_ratios(src: Source) -> list[float]:
    c = cells(src, "params")
    return list(c.xcsf_mean / c.kacs_mean)


def fidelity(src: Source) -> tuple[int, int, str, float, float]:
    """How many of the main means lie within max(3 SE, 5 %) of the published ones (the report's
    paper table), and the largest deviation: where, in standard errors and relative."""
    p = _paper(src).loc[list(MAIN_BENCHMARKS)]
    inside, total, worst = 0, 0, ("", 0.0, 0.0)
    for (bench, metric), c in p.iterrows():
        if metric not in dict(METRICS):
            continue
        for m in PAIR:
            total += 1
            inside += bool(c[f"{m}_within"])
            if abs(c[f"{m}_z"]) > worst[1]:
                worst = (f"{LABELS[m]} {dict(METRICS)[metric]} on {name(bench)}", abs(c[f"{m}_z"]),
                         (c[f"{m}_ours"] - c[f"{m}_paper"]) / abs(c[f"{m}_paper"]))
    return inside, total, *worst


def main_paper(src: Source) -> Quoted:
    """Our main experiment beside the published table, every benchmark and metric; how many
    means lie within max(3 SE, 5 %) of the published ones; the rule counts' across-benchmark p."""
    p = _paper(src)
    rows = []
    for bench in MAIN_BENCHMARKS:
        for i, (metric, label) in enumerate(METRICS):
            c = p.loc[(bench, metric)]
            rows.append([bench if i == 0 else "", label]
                        + [_pm(metric, c[f"{m}_{w}"], c[f"{m}_{w}_sd"]) for m in PAIR for w in ("ours", "paper")]
                        + [f"{c.symbol_ours} / {c.symbol_paper}"])
    out = table("paper", ["benchmark", "metric", "XCSF ours", "XCSF published", "KACS ours", "KACS published",
                          "verdict ours / published"], rows)
    inside, total, worst, z, rel = fidelity(src)
    agree = [f"{label} {sum(p.loc[(b, metric)].verdict_agrees for b in MAIN_BENCHMARKS)} of 8"
             for metric, label in METRICS[:1] + METRICS[2:4]]
    out.update(table("fidelity", ["check", "result"], [
        ["means within max(3 SE, 5 %) of the published ones", f"{inside} of {total}"],
        ["largest deviation", f"{worst}: {rel * 100:+.1f} %, {z:.1f} SE"],
        ["Wilcoxon verdicts as published", ", ".join(agree)]]))
    ours = src.report("across").set_index("metric").loc["rules", "across_p"]
    pub = p.xs("rules", level="metric").loc[list(MAIN_BENCHMARKS)]
    out.update(values(
        fidelity_inside=str(inside), fidelity_total=str(total),
        across_rules=f"p = {ours:.4f} here against {stats.wilcoxon_p(pub.xcsf_paper, pub.kacs_paper):.4f} "
                     f"from the published means"))
    return out


def main_headline(src: Source) -> Quoted:
    inside, total, *_ = fidelity(src)
    lower_on, higher_on = _count(src, "-"), _count(src, "+")
    ratio = _params_ratios(src)
    return values(headline=f"KACS's test MAE is lower than XCSF's on {lower_on} of 8 benchmarks, "
                           + ("no significant difference on the others" if higher_on == 0 else f"higher on {higher_on}")
                           + f", with {min(ratio):.1f} to {max(ratio):.0f} times fewer parameters; {inside} of "
                           f"{total} means within max(3 SE, 5 %) of the published ones")


def main_article_headline(src: Source) -> Quoted:
    inside, total, *_ = fidelity(src)
    return values(headline=f"the main experiment under `semantics: article`: {inside} of {total} means within "
                           f"max(3 SE, 5 %) of the published ones")


def _columns(src: Source, cell: str, fmt, metrics) -> list[str]:
    s = src.summary()
    return [fmt(s.loc[(cell, metric)], m) for metric in metrics for m in PAIR]


def _mean_sd(c, m):
    return mean_sd(c[f"{m}_mean"], c[f"{m}_sd"])


def _int(c, m):
    return integer(c[f"{m}_mean"])


def sample_scaling(src: Source) -> Quoted:
    rows = [[integer(c.samples)] + _columns(src, cell, _mean_sd, ["test_mae"])
            + _columns(src, cell, _int, ["rules", "params"]) for cell, c in cells(src).iterrows()]
    out = table("scaling", ["N_S", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF",
                            "params KACS"], rows)
    ratio = _params_ratios(src)
    out.update(values(headline=f"KACS lower test MAE at {_count(src, '-')} of {len(cells(src))} sample sizes, "
                               f"{min(ratio):.0f} to {max(ratio):.0f} times fewer parameters"))
    return out


def dim_scaling(src: Source) -> Quoted:
    rows = [[str(int(c.n)), integer(c.N)] + [f"{c[f'{m}_mean']:.4f}" for m in PAIR]
            + _columns(src, cell, _int, ["rules", "params"]) + [c.symbol]
            for cell, c in cells(src).sort_values(["n", "N"], kind="stable").iterrows()]
    out = table("scaling", ["n", "N", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF",
                            "params KACS", "test MAE: XCSF vs KACS"], rows)
    c = cells(src)
    fixed = c[~c.index.str.contains("N=")]
    better, worse = fixed.n[fixed.symbol == "-"], fixed.n[fixed.symbol == "+"]
    guide = [x for x in c.index if "N=" in x]
    out.update(values(headline=f"at N = 6400 KACS is better for n = {min(better)}-{max(better)} and worse from "
                               f"n = {min(worse)}; with the guideline N = 24n(2n+1) better again at "
                               f"{_count(src, '-', where=lambda x: 'N=' in x)} of {len(guide)} (n = 16, 18, 20)"))
    return out


def f3_variants(src: Source) -> Quoted:
    rows = [[c.variant] + _columns(src, cell, _mean_sd, ["test_mae"]) + [c.symbol]
            + _columns(src, cell, _int, ["rules"]) for cell, c in cells(src).iterrows()]
    out = table("variants", ["variant", "test MAE XCSF", "test MAE KACS", "verdict", "rules XCSF", "rules KACS"], rows)
    out.update(values(headline=f"KACS lower test MAE on {_count(src, '-')} of 3 variants (rotated, translated, "
                               f"scaled)"))
    return out


def alt_protocol(src: Source) -> Quoted:
    s = src.summary()
    rows = [[name(b)] + _columns(src, b, _mean_sd, ["test_mse"]) + [s.loc[(b, "test_mse")].symbol]
            + _columns(src, b, _int, ["rules"]) + [s.loc[(b, "rules")].symbol] for b in MAIN_BENCHMARKS]
    out = table("protocol", ["benchmark", "test MSE XCSF", "test MSE KACS", "verdict", "rules XCSF", "rules KACS",
                             "verdict"], rows)
    out.update(values(headline=f"KACS lower test MSE on {_count(src, '-', 'test_mse')} of 8 benchmarks (64 paired "
                               f"runs each)"))
    return out


def suprb(src: Source) -> Quoted:
    """The report's SupRB table (its own cells and those it includes from alt_protocol), with
    the literature values as the article prints them, and those values alone."""
    ours, s = src.report("suprb").set_index("benchmark"), src.summary()
    lit = load_literature()  # text ('' = n/a)
    rows = []
    for bench in REAL:
        o, L = ours.loc[bench], lit.loc[bench]
        row = [name(bench), str(int(o.N))]
        for m in PAIR:
            row += [mean_sd(o[f"{m}_test_mse_mean"], o[f"{m}_test_mse_sd"]), integer(o[f"{m}_rules_mean"])]
        row.append(s.loc[(o.cell, "test_mse")].symbol)
        row.append(f"{L.xcsf_compacted_mse_mean} ± {L.xcsf_compacted_mse_sd}, "
                   f"{integer(float(L.xcsf_compacted_rules_mean))} rules" if L.xcsf_compacted_mse_mean else "n/a")
        rows.append(row + [f"{L.suprb_mse_mean} ± {L.suprb_mse_sd}", L.suprb_rules_mean])
    out = table("suprb", ["dataset", "N", "XCSF (ours): test MSE", "rules", "KACS (ours): test MSE", "rules",
                          "XCSF vs KACS", "XCSF compacted [lit.]", "SupRB-ES [lit.]: test MSE", "rules"], rows)

    def pm(L, m):
        return f"{L[m + '_mean']} ± {L[m + '_sd']}" if L[m + "_mean"] else "n/a"
    out.update(table("literature", ["dataset", "XCSF after compaction: test MSE", "rules", "SupRB-ES: test MSE",
                                    "rules"],
                     [[name(b)] + [pm(L, m) for m in ("xcsf_compacted_mse", "xcsf_compacted_rules", "suprb_mse",
                                                      "suprb_rules")] for b, L in lit.iterrows()]))
    sym = cells(src, "test_mse").symbol
    out.update(values(headline=f"PPPTS: KACS {'lower' if sym['pppts'] == '-' else 'not lower'} test MSE than XCSF; "
                               f"PT (n = 18): XCSF {'lower' if sym['pt'] == '+' else 'not lower'}; both far from "
                               f"SupRB's rule counts"))
    return out


EXPERIMENTS = {"main": (main_paper, main_headline), "main_article": (main_paper, main_article_headline),
               "sample_scaling": (sample_scaling,), "dim_scaling": (dim_scaling,), "f3_variants": (f3_variants,),
               "alt_protocol": (alt_protocol,), "suprb": (suprb,)}
