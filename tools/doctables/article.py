"""The article's experiments (docs/experiments.md sections 1-6, and the literature table of
docs/algorithm.md): our runs' report tables beside the published ones shipped with the package."""

from __future__ import annotations

from kacs_cli.reporting import stats
from kacs_cli.reporting.suprb import load_literature

from tools.doctables.common import MAIN_BENCHMARKS, REAL, Runs, decimal, integer, mean_sd, name, table

LABELS = {"kacs": "KACS", "xcsf": "XCSF"}
METRICS = (("test_mae", "test MAE"), ("train_mae", "train MAE"), ("rules", "rules"), ("params", "params"),
           ("aic", "AIC"))
PAIR = ("xcsf", "kacs")


def _pm(metric: str, m: float, s: float) -> str:
    return mean_sd(m, s) if metric.endswith(("mae", "mse")) else f"{integer(m)} ± {integer(s)}"


def paper(runs: Runs, folder: str = "paper/main"):
    return runs.report(folder, "paper").set_index(["cell", "metric"])


def t_main_paper(runs: Runs) -> str:
    """Our main experiment beside the published table: every benchmark and metric."""
    p = paper(runs)
    rows = []
    for bench in MAIN_BENCHMARKS:
        for i, (metric, label) in enumerate(METRICS):
            c = p.loc[(bench, metric)]
            rows.append([bench if i == 0 else "", label]
                        + [_pm(metric, c[f"{m}_{w}"], c[f"{m}_{w}_sd"]) for m in PAIR for w in ("ours", "paper")]
                        + [f"{c.symbol_ours} / {c.symbol_paper}"])
    return table(["benchmark", "metric", "XCSF ours", "XCSF published", "KACS ours", "KACS published",
                  "verdict ours / published"], rows, ["l", "l", "r", "r", "r", "r", "c"])


def fidelity(runs: Runs, folder: str = "paper/main") -> tuple[int, int, str, float, float]:
    """How many of the main means lie within max(3 SE, 5 %) of the published ones (the report's
    paper table), and the largest deviation: where, in standard errors and relative."""
    p = paper(runs, folder).loc[list(MAIN_BENCHMARKS)]
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


def t_main_fidelity(runs: Runs) -> str:
    p = paper(runs)
    inside, total, worst, z, rel = fidelity(runs)
    agree = [f"{label} {sum(p.loc[(b, metric)].verdict_agrees for b in MAIN_BENCHMARKS)} of 8"
             for metric, label in METRICS[:1] + METRICS[2:4]]
    rows = [["means within max(3 SE, 5 %) of the published ones", f"{inside} of {total}"],
            ["largest deviation", f"{worst}: {rel * 100:+.1f} %, {z:.1f} SE"],
            ["Wilcoxon verdicts as published", ", ".join(agree)]]
    return table(["check", "result"], rows, ["l", "l"])


def cells(runs: Runs, folder: str, metric: str = "test_mae"):
    """The folder's summary rows of one metric, in the report's cell order."""
    s = runs.report(folder, "summary")
    return s[s.metric == metric].set_index("cell")


def _columns(runs: Runs, folder: str, cell: str, fmt, metrics) -> list[str]:
    s = runs.summary(folder)
    return [fmt(metric, s.loc[(cell, metric)], m) for metric in metrics for m in PAIR]


def _mean_sd(metric, c, m):
    return mean_sd(c[f"{m}_mean"], c[f"{m}_sd"])


def _int(metric, c, m):
    return integer(c[f"{m}_mean"])


def t_sample_scaling(runs: Runs) -> str:
    f = "paper/sample_scaling"
    rows = [[integer(c.samples)] + _columns(runs, f, cell, _mean_sd, ["test_mae"])
            + _columns(runs, f, cell, _int, ["rules", "params"]) for cell, c in cells(runs, f).iterrows()]
    return table(["N_S", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF", "params KACS"],
                 rows, ["r"] * 7)


def t_dim_scaling(runs: Runs) -> str:
    f = "paper/dim_scaling"
    rows = [[str(int(c.n)), integer(c.N)] + [decimal(c[f"{m}_mean"]) for m in PAIR]
            + _columns(runs, f, cell, _int, ["rules", "params"]) + [c.symbol]
            for cell, c in cells(runs, f).sort_values(["n", "N"], kind="stable").iterrows()]
    return table(["n", "N", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF",
                  "params KACS", "test MAE: XCSF vs KACS"], rows, ["r"] * 8 + ["c"])


def t_f3_variants(runs: Runs) -> str:
    f = "paper/f3_variants"
    rows = [[c.variant] + _columns(runs, f, cell, _mean_sd, ["test_mae"]) + [c.symbol]
            + _columns(runs, f, cell, _int, ["rules"]) for cell, c in cells(runs, f).iterrows()]
    return table(["variant", "test MAE XCSF", "test MAE KACS", "verdict", "rules XCSF", "rules KACS"], rows,
                 ["l", "r", "r", "c", "r", "r"])


def t_alt_protocol(runs: Runs) -> str:
    f, s = "paper/alt_protocol", runs.summary("paper/alt_protocol")
    rows = [[name(b)] + _columns(runs, f, b, _mean_sd, ["test_mse"]) + [s.loc[(b, "test_mse")].symbol]
            + _columns(runs, f, b, _int, ["rules"]) + [s.loc[(b, "rules")].symbol] for b in MAIN_BENCHMARKS]
    return table(["benchmark", "test MSE XCSF", "test MSE KACS", "verdict", "rules XCSF", "rules KACS", "verdict"],
                 rows, ["l", "r", "r", "c", "r", "r", "c"])


def t_suprb(runs: Runs) -> str:
    """The report's SupRB table (its own cells and those it includes from alt_protocol), with
    the literature values as the article prints them."""
    ours, s = runs.report("paper/suprb", "suprb").set_index("benchmark"), runs.summary("paper/suprb")
    lit = load_literature()  # text ('' = n/a)
    rows = []
    for bench in REAL:
        o, L = ours.loc[bench], lit.loc[bench]
        cells_ = [name(bench), str(int(o.N))]
        for m in PAIR:
            cells_ += [mean_sd(o[f"{m}_test_mse_mean"], o[f"{m}_test_mse_sd"]), integer(o[f"{m}_rules_mean"])]
        cells_.append(s.loc[(o.cell, "test_mse")].symbol)
        cells_.append(f"{L.xcsf_compacted_mse_mean} ± {L.xcsf_compacted_mse_sd}, "
                      f"{integer(float(L.xcsf_compacted_rules_mean))} rules" if L.xcsf_compacted_mse_mean else "n/a")
        rows.append(cells_ + [f"{L.suprb_mse_mean} ± {L.suprb_mse_sd}", L.suprb_rules_mean])
    return table(["dataset", "N", "XCSF (ours): test MSE", "rules", "KACS (ours): test MSE", "rules",
                  "XCSF vs KACS", "XCSF compacted [lit.]", "SupRB-ES [lit.]: test MSE", "rules"],
                 rows, ["l", "r", "r", "r", "r", "r", "c", "r", "r", "r"])


def t_suprb_literature(runs: Runs) -> str:
    """The literature values the article quotes (package data, verbatim)."""
    def pm(L, m):
        return f"{L[m + '_mean']} ± {L[m + '_sd']}" if L[m + "_mean"] else "n/a"
    rows = [[name(b)] + [pm(L, m) for m in ("xcsf_compacted_mse", "xcsf_compacted_rules", "suprb_mse", "suprb_rules")]
            for b, L in load_literature().iterrows()]
    return table(["dataset", "XCSF after compaction: test MSE", "rules", "SupRB-ES: test MSE", "rules"], rows,
                 ["l"] * 5)


def v_dim_n2_params_p(runs: Runs, _=None) -> str:
    from tools.doctables.common import p_text
    return p_text(runs.summary("paper/dim_scaling").loc[("f3 (n=2)", "params")].wilcoxon_p)


def v_main_across_rules(runs: Runs, _=None) -> str:
    """The across-benchmark Wilcoxon p of the rule counts: the report's over our means, and
    the same test over the published means (the report's paper table)."""
    ours = runs.report("paper/main", "across").set_index("metric").loc["rules", "across_p"]
    pub = paper(runs).xs("rules", level="metric").loc[list(MAIN_BENCHMARKS)]
    return f"p = {ours:.4f} here against {stats.wilcoxon_p(pub.xcsf_paper, pub.kacs_paper):.4f} from the published means"
