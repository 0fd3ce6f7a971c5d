"""The article's experiments (docs/experiments.md sections 1-6, and the literature table of
docs/algorithm.md): our runs beside the published tables shipped with the package."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kacs_cli.reporting import stats
from kacs_cli.reporting.paper import load_paper_table
from kacs_cli.reporting.suprb import load_literature

from tools.doctables.common import (MAIN_BENCHMARKS, METRICS, REAL, Runs, decimal, integer, mean, mean_sd,
                                    name, p_value, p_text, sd, symbol, table, values)

LABELS = {"kacs": "KACS", "xcsf": "XCSF"}


def _published():
    return load_paper_table().set_index(["benchmark", "metric"])


def _published_verdict(pub, bench: str, metric: str) -> str:
    p = pub.loc[(bench, metric)]
    return stats.verdict(float(p.wilcoxon_p), float(p.xcsf_mean - p.kacs_mean))


def main_paper(runs: Runs) -> str:
    """Our main experiment beside the published table: every benchmark and metric."""
    r = runs("paper/main")
    pub = _published()
    rows = []
    for bench in MAIN_BENCHMARKS:
        for i, (metric, label) in enumerate(METRICS):
            p = pub.loc[(bench, metric)]
            if metric.endswith("mae"):
                f = lambda m, s: mean_sd(m, s)
            else:
                f = lambda m, s: f"{integer(m)} ± {integer(s)}"
            rows.append([bench if i == 0 else "", label,
                         f(mean(r, bench, "xcsf", metric), sd(r, bench, "xcsf", metric)),
                         f(p.xcsf_mean, p.xcsf_sd),
                         f(mean(r, bench, "kacs", metric), sd(r, bench, "kacs", metric)),
                         f(p.kacs_mean, p.kacs_sd),
                         f"{symbol(r, bench, metric)} / {_published_verdict(pub, bench, metric)}"])
    return table(["benchmark", "metric", "XCSF ours", "XCSF published", "KACS ours", "KACS published",
                  "verdict ours / published"], rows, ["l", "l", "r", "r", "r", "r", "c"])


def fidelity(runs: Runs, folder: str = "paper/main") -> tuple[int, int, str, float, float]:
    """How many of the main means (of `folder`'s runs) lie within max(3 SE, 5 %) of the published
    ones, and the largest deviation in standard errors."""
    r = runs(folder)
    pub = _published()
    inside, total, worst = 0, 0, ("", 0.0, 0.0)
    for bench in MAIN_BENCHMARKS:
        for metric, label in METRICS:
            p = pub.loc[(bench, metric)]
            for method in ("xcsf", "kacs"):
                v = values(r, bench, method, metric)
                m_pub, sd_pub = float(p[f"{method}_mean"]), float(p[f"{method}_sd"])
                se = math.sqrt(sd_pub ** 2 / 30 + v.std(ddof=1) ** 2 / len(v))
                dev = abs(v.mean() - m_pub)
                total += 1
                inside += dev <= max(3 * se, 0.05 * abs(m_pub))
                z = dev / se
                if z > worst[1]:
                    worst = (f"{LABELS[method]} {label} on {name(bench)}", z, (v.mean() - m_pub) / abs(m_pub))
    return inside, total, worst[0], worst[1], worst[2]


def main_fidelity(runs: Runs) -> str:
    r = runs("paper/main")
    pub = _published()
    inside, total, worst, z, rel = fidelity(runs)
    agree = []
    for metric, label in METRICS[:1] + METRICS[2:4]:
        same = sum(symbol(r, b, metric) == _published_verdict(pub, b, metric) for b in MAIN_BENCHMARKS)
        agree.append(f"{label} {same} of 8")
    rows = [["means within max(3 SE, 5 %) of the published ones", f"{inside} of {total}"],
            ["largest deviation", f"{worst}: {rel * 100:+.1f} %, {z:.1f} SE"],
            ["Wilcoxon verdicts as published", ", ".join(agree)]]
    return table(["check", "result"], rows, ["l", "l"])


def sample_scaling(runs: Runs) -> str:
    r = runs("paper/sample_scaling")
    rows = []
    for bench in sorted(r.benchmark.unique(), key=lambda b: int(b.split("-s")[1])):
        ns = int(r[r.benchmark == bench].samples.iloc[0])
        rows.append([integer(ns)]
                    + [mean_sd(mean(r, bench, m, "test_mae"), sd(r, bench, m, "test_mae")) for m in ("xcsf", "kacs")]
                    + [integer(mean(r, bench, m, k)) for k in ("rules", "params") for m in ("xcsf", "kacs")])
    return table(["N_S", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF", "params KACS"],
                 rows, ["r"] * 7)


def dim_cells(r: pd.DataFrame) -> list[str]:
    """The dimensional-scaling cells by n, then N."""
    first = r.drop_duplicates("benchmark").set_index("benchmark")
    return sorted(first.index, key=lambda b: (int(first.loc[b, "n"]), int(first.loc[b, "N"])))


def dim_scaling(runs: Runs) -> str:
    r = runs("paper/dim_scaling")
    first = r.drop_duplicates("benchmark").set_index("benchmark")
    rows = []
    for bench in dim_cells(r):
        rows.append([str(int(first.loc[bench, "n"])), integer(first.loc[bench, "N"])]
                    + [decimal(mean(r, bench, m, "test_mae")) for m in ("xcsf", "kacs")]
                    + [integer(mean(r, bench, m, k)) for k in ("rules", "params") for m in ("xcsf", "kacs")]
                    + [symbol(r, bench, "test_mae")])
    return table(["n", "N", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF",
                  "params KACS", "test MAE: XCSF vs KACS"], rows, ["r"] * 8 + ["c"])


def f3_variants(runs: Runs) -> str:
    r = runs("paper/f3_variants")
    rows = []
    for bench in ("f3-rotated", "f3-translated", "f3-scaled"):
        rows.append([bench.split("-")[1]]
                    + [mean_sd(mean(r, bench, m, "test_mae"), sd(r, bench, m, "test_mae")) for m in ("xcsf", "kacs")]
                    + [symbol(r, bench, "test_mae")] + [integer(mean(r, bench, m, "rules")) for m in ("xcsf", "kacs")])
    return table(["variant", "test MAE XCSF", "test MAE KACS", "verdict", "rules XCSF", "rules KACS"], rows,
                 ["l", "r", "r", "c", "r", "r"])


def alt_protocol(runs: Runs) -> str:
    r = runs("paper/alt_protocol")
    rows = []
    for bench in MAIN_BENCHMARKS:
        rows.append([name(bench)]
                    + [mean_sd(mean(r, bench, m, "test_mse"), sd(r, bench, m, "test_mse")) for m in ("xcsf", "kacs")]
                    + [symbol(r, bench, "test_mse")] + [integer(mean(r, bench, m, "rules")) for m in ("xcsf", "kacs")]
                    + [symbol(r, bench, "rules")])
    return table(["benchmark", "test MSE XCSF", "test MSE KACS", "verdict", "rules XCSF", "rules KACS", "verdict"],
                 rows, ["l", "r", "r", "c", "r", "r", "c"])


def suprb(runs: Runs) -> str:
    alt, own = runs("paper/alt_protocol"), runs("paper/suprb")
    lit = load_literature()  # text, as the article prints it ('' = n/a)
    rows = []
    for bench in REAL:
        r = own if bench in set(own.benchmark) else alt
        N = int(r[r.benchmark == bench].N.iloc[0])
        cells = [name(bench), str(N)]
        for m in ("xcsf", "kacs"):
            cells += [mean_sd(mean(r, bench, m, "test_mse"), sd(r, bench, m, "test_mse")),
                      integer(mean(r, bench, m, "rules"))]
        cells.append(symbol(r, bench, "test_mse"))
        L = lit.loc[bench]
        if not L.xcsf_compacted_mse_mean:
            cells.append("n/a")
        else:
            cells.append(f"{L.xcsf_compacted_mse_mean} ± {L.xcsf_compacted_mse_sd}, "
                         f"{integer(float(L.xcsf_compacted_rules_mean))} rules")
        cells += [f"{L.suprb_mse_mean} ± {L.suprb_mse_sd}", L.suprb_rules_mean]
        rows.append(cells)
    return table(["dataset", "N", "XCSF (ours): test MSE", "rules", "KACS (ours): test MSE", "rules",
                  "XCSF vs KACS", "XCSF compacted [lit.]", "SupRB-ES [lit.]: test MSE", "rules"],
                 rows, ["l", "r", "r", "r", "r", "r", "c", "r", "r", "r"])


def suprb_literature(runs: Runs) -> str:
    """The literature values the article quotes (package data, verbatim)."""
    lit = load_literature()
    rows = []
    for bench, L in lit.iterrows():
        def pm(m, s):
            return f"{L[m]} ± {L[s]}" if L[m] else "n/a"
        rows.append([name(bench), pm("xcsf_compacted_mse_mean", "xcsf_compacted_mse_sd"),
                     pm("xcsf_compacted_rules_mean", "xcsf_compacted_rules_sd"),
                     pm("suprb_mse_mean", "suprb_mse_sd"), pm("suprb_rules_mean", "suprb_rules_sd")])
    return table(["dataset", "XCSF after compaction: test MSE", "rules", "SupRB-ES: test MSE", "rules"], rows,
                 ["l", "l", "l", "l", "l"])


def v_dim_n2_params_p(runs: Runs, _=None) -> str:
    return p_text(p_value(runs("paper/dim_scaling"), "f3-n2", "xcsf", "kacs", "params"))


def v_main_across_rules(runs: Runs, _=None) -> str:
    r = runs("paper/main")
    pub = _published()
    ours = [(mean(r, b, "xcsf", "rules"), mean(r, b, "kacs", "rules")) for b in MAIN_BENCHMARKS]
    theirs = [(float(pub.loc[(b, "rules")].xcsf_mean), float(pub.loc[(b, "rules")].kacs_mean)) for b in MAIN_BENCHMARKS]
    p_ours = stats.wilcoxon_p(*np.array(ours).T)
    p_pub = stats.wilcoxon_p(*np.array(theirs).T)
    return f"p = {p_ours:.4f} here against {p_pub:.4f} from the published means"


TABLES = {
    "main-paper": main_paper,
    "main-fidelity": main_fidelity,
    "sample-scaling": sample_scaling,
    "dim-scaling": dim_scaling,
    "f3-variants": f3_variants,
    "alt-protocol": alt_protocol,
    "suprb": suprb,
    "suprb-literature": suprb_literature,
}
VALUES = {
    "dim-n2-params-p": v_dim_n2_params_p,
    "main-across-rules": v_main_across_rules,
}
