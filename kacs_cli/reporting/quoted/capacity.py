"""The capacity campaigns (docs/capacity.md, docs/usage.md and the README): the recommended
setting against refined KACS and among the regressors, the budgets N and the outer channels m
swept, and the recommended setting on the real-data suite; from the reports' means (kmethods),
pairwise tests, capacity and refinement tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kacs_cli.reporting import kstats
from kacs_cli.reporting.quoted.common import (MAIN_BENCHMARKS, Quoted, Source, compare, count, integer, means, name,
                                              ranks, table, values, verdict_text, verdict_texts)

RECOMMENDED, XCSF_RECOMMENDED = "kacs-recommended", "xcsf-recommended"
# The refined KACS of the capacity study's target (min-max inputs, N = 6,400) and the same with
# quantile inputs: the recommended setting less its capacity search.
REFINED, QUANTILE_REFINED = "kacs-refined", "kacs-quantile-refined"
# The recommended KACS without its n + 1 channels: the study that chose them (10 runs).
CHANNEL_STUDY = "kacs-search"
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
BUDGETS = (("kacs-quantile-refined", "N = 6,400"), ("kacs-qr-n12800", "N = 12,800"),
           ("kacs-qr-n25600", "N = 25,600"), ("kacs-qr-n51200", "N = 51,200"))
CHANNELS = (("kacs-qr-m-n1", "m = n + 1"), ("kacs-quantile-refined", "m = 2n + 1"), ("kacs-qr-m-4n1", "m = 4n + 1"))
WITHIN_GBR = 0.10  # the measure against gradient boosting: a test MAE at most this much above its
# The suite's search ladder started at N = 1,600 instead of 6,400 (configs/suite_small_budget.yaml).
SMALL_START = {RECOMMENDED: "kacs-recommended-n1600", XCSF_RECOMMENDED: "xcsf-recommended-n1600"}
WIDER_E0 = "kacs-recommended-e05"  # a wider error threshold (configs/suite_error_threshold.yaml)


def _chosen(median: float, values_) -> str:
    """The budgets chosen, as 'median (smallest-largest)' in thousands."""
    return f"{median / 1000:g}k ({min(values_) / 1000:g}k-{max(values_) / 1000:g}k)"


def capacity(src: Source) -> pd.DataFrame:
    """The report's capacity table by (cell, method), with the budgets chosen as text."""
    c = src.report("capacity").set_index(["cell", "method"])
    budgets = c.chosen.map(lambda t: [int(x.split(" x ")[0]) for x in t.split(", ")])
    return c.assign(text=[_chosen(m, v) for m, v in zip(c.chosen_median, budgets)])


def _chosen_runs(sel: pd.DataFrame) -> str:
    n = sel.capacity_N.to_numpy(float)
    return _chosen(float(np.median(n)), n)


def _ranked(src: Source) -> tuple[pd.DataFrame, pd.Series]:
    """The mean test MAE per main benchmark and average ranks of every method but the channel
    study (its 10 runs are a capacity study's)."""
    m = means(src).loc[list(MAIN_BENCHMARKS)].drop(columns=CHANNEL_STUDY)
    return m, ranks(m)


def recommended(src: Source) -> Quoted:
    """The recommended KACS against refined KACS (N = 6,400, min-max and quantile inputs), and
    the recommended XCSF against XCSF, per main benchmark (paired runs, Holm over the eight);
    against the same without its n + 1 channels; the average ranks; the standing in words."""
    cap = capacity(src)
    vs = {o: compare(src, RECOMMENDED, o) for o in (REFINED, QUANTILE_REFINED)}
    vx = compare(src, XCSF_RECOMMENDED, "xcsf")
    rows = []
    for b in MAIN_BENCHMARKS:
        k, x = cap.loc[(b, RECOMMENDED)], cap.loc[(b, XCSF_RECOMMENDED)]
        rows.append([name(b), str(int(k.runs)), f"{vs[REFINED][b].b_mean:.4f}", f"{vs[REFINED][b].a_mean:.4f}",
                     verdict_text(vs[REFINED][b]), verdict_text(vs[QUANTILE_REFINED][b]), k.text, f"{k.cost_ratio:.2f}",
                     f"{vx[b].a_mean:.4f}", verdict_text(vx[b]), x.text, f"{x.cost_ratio:.2f}"])
    out = table("against-refined", ["benchmark", "runs", "refined KACS", "recommended KACS", "against refined KACS",
                                    "against refined, quantile inputs", "N chosen", "search / fit", "recommended XCSF",
                                    "against XCSF", "N chosen", "search / fit"], rows)

    vs, r = compare(src, RECOMMENDED, CHANNEL_STUDY), src.runs()
    rows = []
    for b in MAIN_BENCHMARKS:
        sel = r[(r.benchmark == b) & r.method.isin((CHANNEL_STUDY, RECOMMENDED))]
        sel = sel[sel.run.isin(sel[sel.method == CHANNEL_STUDY].run)]
        without, mine = (sel[sel.method == m] for m in (CHANNEL_STUDY, RECOMMENDED))
        rows.append([name(b), str(int(vs[b].n_pairs)), f"{vs[b].b_mean:.4f}", f"{vs[b].a_mean:.4f}",
                     verdict_text(vs[b]), integer(without.rules.mean()), integer(mine.rules.mean()),
                     _chosen_runs(without), _chosen_runs(mine)])
    out.update(table("channels", ["benchmark", "runs", "m = 2n + 1", "m = n + 1", "n + 1 against 2n + 1",
                                  "rules, 2n + 1", "rules, n + 1", "N chosen, 2n + 1", "N chosen, n + 1"], rows))

    m, avg = _ranked(src)
    best = m.idxmin(axis=1)
    out.update(table("ranks", ["method", "average rank", "best on"],
                     [[x, f"{avg[x]:.2f}", ", ".join(name(b) for b in MAIN_BENCHMARKS if best[b] == x) or "—"]
                      for x in avg.index]))

    place = list(avg.index).index(RECOMMENDED)
    ahead = ", ".join(f"{x} {avg[x]:.2f}" for x in avg.index[:place])
    own = [name(b) for b in MAIN_BENCHMARKS if best[b] == RECOMMENDED]
    behind: dict[str, list[str]] = {}
    for b in MAIN_BENCHMARKS:
        if best[b] != RECOMMENDED:
            behind.setdefault(best[b], []).append(name(b))
    standing = (f"{ORDINALS[place]} of {len(avg)} (average rank {avg[RECOMMENDED]:.2f}"
                + (f"; ahead of it: {ahead}" if ahead else "") + ")")
    standing += f", the best on {', '.join(own) if own else 'none of the eight'}"
    standing += "; the best elsewhere: " + "; ".join(f"{x} on {', '.join(bs)}" for x, bs in behind.items())
    places = pd.DataFrame(kstats.rank_matrix(m), index=m.index, columns=m.columns)[RECOMMENDED]
    parts = []
    for b in MAIN_BENCHMARKS:
        first, at = m.loc[b].idxmin(), int(places[b]) - 1
        parts.append(f"{name(b)} {ORDINALS[at]}"
                     + (f" ({m.loc[b, RECOMMENDED] / m.loc[b, first]:.2f}x {first})" if first != RECOMMENDED else ""))
    out.update(values(standing=standing, places=", ".join(parts),
                      runs=integer(cap.xs(RECOMMENDED, level="method").runs.min()),
                      **{f"count-{w}": count(src, RECOMMENDED, REFINED, w).split(" of ")[0]
                         for w in ("better", "level", "worse")}))
    for method in (RECOMMENDED, XCSF_RECOMMENDED):
        c = cap.xs(method, level="method").loc[list(MAIN_BENCHMARKS)]
        out.update(values(**{f"cost-{method}": f"{c.cost_ratio.min():.2f} to {c.cost_ratio.max():.2f} fits (largest "
                                                f"single run {c.cost_ratio_max.max():.2f})"}))
    return out


def _sweep(src: Source, settings, base: str) -> list[list[str]]:
    """Per dataset and setting of a sweep: mean test MAE (change against the base setting,
    Holm over the datasets' paired Wilcoxon tests), rules, seconds per run (evolution plus
    refinement, wall time under the campaign's load) and runs; only settings with runs."""
    k = src.report("kmethods").set_index(["cell", "method"])
    fit = src.report("refinement").set_index(["cell", "method"])
    cells = list(dict.fromkeys(k.index.get_level_values(0)))
    rows = []
    for method, label in settings:
        against = verdict_texts(src, method, base) if method != base else {}
        for cell in (c for c in cells if (c, method) in k.index):
            x, s = k.loc[(cell, method)], fit.loc[(cell, method)]
            rows.append([name(cell), label, str(int(x.runs)), f"{x.test_mae_mean:.4f}", against.get(cell, "—"),
                         integer(x.rules_mean), integer(x.params_mean), f"{s.evolution_seconds + s.refine_seconds:.1f}"])
    rows.sort(key=lambda row: cells.index(row[0].lower()))
    return rows


SWEEP_HEAD = ["dataset", "setting", "runs", "test MAE", "against the article's", "rules", "parameters", "seconds"]


def budgets(src: Source) -> Quoted:
    return table("budgets", SWEEP_HEAD, _sweep(src, BUDGETS, QUANTILE_REFINED))


def channels(src: Source) -> Quoted:
    return table("channels", SWEEP_HEAD, _sweep(src, CHANNELS, QUANTILE_REFINED))


def _suite_means(src: Source, columns) -> pd.DataFrame:
    """The per dataset and method means of columns the report does not average."""
    return src.runs().groupby(["benchmark", "method"])[columns].mean()


def suite_recommended(src: Source) -> Quoted:
    """The recommended KACS on the real-data suite against the recommended XCSF (paired runs,
    Holm over the datasets), gradient boosting (its MAE over gradient boosting's) and the
    random forest, with the budgets its search chose; train and test MAE of the recommended
    KACS, XCSF and gradient boosting (where each fits and where it generalizes)."""
    m = means(src)
    datasets = list(m.index)
    cap, rules = capacity(src), means(src, "rules_mean")
    first = src.runs().drop_duplicates("benchmark").set_index("benchmark")
    vs, ratio = verdict_texts(src, RECOMMENDED, XCSF_RECOMMENDED), m[RECOMMENDED] / m["gbr"]
    rows = [[b, integer(first.samples[b]), str(int(first.n[b])), str(int(cap.loc[(b, RECOMMENDED)].runs)),
             f"{m.loc[b, RECOMMENDED]:.4f}", f"{m.loc[b, XCSF_RECOMMENDED]:.4f}", vs[b], f"{m.loc[b, 'gbr']:.4f}",
             f"{ratio[b]:.2f}", f"{m.loc[b, 'rf']:.4f}", cap.loc[(b, RECOMMENDED)].text, integer(rules.loc[b, RECOMMENDED])]
            for b in datasets]
    out = table("methods", ["dataset", "rows", "n", "runs", "recommended KACS", "recommended XCSF",
                            "KACS against XCSF", "gradient boosting", "KACS / boosting", "random forest", "N chosen",
                            "rules"], rows)
    fit = _suite_means(src, ["samples", "train_mae", "test_mae", "evolved_train_mae", "evolved_test_mae"])
    rows = []
    for b in datasets:
        k = fit.loc[(b, RECOMMENDED)]
        rows.append([b, integer(k.samples), f"{k.evolved_train_mae:.4f}", f"{k.evolved_test_mae:.4f}"]
                    + [f"{fit.loc[(b, x), c]:.4f}" for x in (RECOMMENDED, XCSF_RECOMMENDED, "gbr")
                       for c in ("train_mae", "test_mae")])
    out.update(table("fit", ["dataset", "rows", "KACS before refinement, train", "before refinement, test",
                             "KACS train", "KACS test", "XCSF train", "XCSF test", "boosting train", "boosting test"],
                     rows))
    out.update(table("gap", ["dataset", "train and test MAE"],
                     [[b, f"{fit.loc[(b, RECOMMENDED)].train_mae:.3f} against {fit.loc[(b, RECOMMENDED)].test_mae:.3f}, "
                          f"XCSF {fit.loc[(b, XCSF_RECOMMENDED)].train_mae:.3f} against "
                          f"{fit.loc[(b, XCSF_RECOMMENDED)].test_mae:.3f}"] for b in datasets]))
    worst = ratio.sort_values(ascending=False, kind="stable")[:2]
    r = src.report("refinement")
    r = r[r.method == RECOMMENDED]
    out.update(values(
        ahead=count(src, RECOMMENDED, XCSF_RECOMMENDED, "better"),
        behind=count(src, RECOMMENDED, XCSF_RECOMMENDED, "worse"),
        within_gbr=f"{int((ratio <= 1 + WITHIN_GBR).sum())} of {len(ratio)}",
        runs=integer(cap.xs(RECOMMENDED, level="method").runs.min()),
        worst=", ".join(f"{b} ({first.n[b]} inputs, {integer(first.samples[b])} rows) {x:.2f}x" for b, x in worst.items()),
        refined=f"{int((r.refined_mean < r.evolved_mean).sum())} of {len(r)}"))
    return out


def suite_small_budget(src: Source) -> Quoted:
    """Both recommended settings with the search started at 1,600 against at 6,400 (paired,
    Holm over the datasets), the budgets chosen, and KACS against XCSF when both start low."""
    cap = capacity(src)
    changes = {m: compare(src, low, m) for m, low in SMALL_START.items()}
    low_vs = verdict_texts(src, *SMALL_START.values())
    rows = []
    for b in low_vs:
        row = [b, str(int(changes[RECOMMENDED][b].n_pairs))]
        for method, low in SMALL_START.items():
            c = changes[method][b]
            row += [f"{c.b_mean:.4f}", f"{c.a_mean:.4f}", verdict_text(c), cap.loc[(b, low)].text]
        rows.append(row + [low_vs[b]])
    out = table("start", ["dataset", "runs", "KACS from 6.4k", "KACS from 1.6k", "change", "N chosen", "XCSF from 6.4k",
                          "XCSF from 1.6k", "change", "N chosen", "KACS against XCSF, both from 1.6k"], rows)
    for method, who in ((RECOMMENDED, "kacs"), (XCSF_RECOMMENDED, "xcsf")):
        out.update(values(**{f"{who}-{w}": count(src, SMALL_START[method], method, w) for w in ("better", "worse")}))
    out.update(values(ahead=count(src, *SMALL_START.values(), "better"),
                      behind=count(src, *SMALL_START.values(), "worse")))
    return out


def suite_error_threshold(src: Source) -> Quoted:
    """The recommended KACS with e0 = 0.05 against at 0.01 (paired, Holm over the datasets),
    with train and test MAE and rules, and against the recommended XCSF."""
    m = src.runs().groupby(["benchmark", "method"])[["train_mae", "test_mae", "rules"]].mean()
    change, vs_xcsf = compare(src, WIDER_E0, RECOMMENDED), verdict_texts(src, WIDER_E0, XCSF_RECOMMENDED)
    cap = capacity(src)
    rows = []
    for b in vs_xcsf:
        s, w = m.loc[(b, RECOMMENDED)], m.loc[(b, WIDER_E0)]
        rows.append([b, str(int(change[b].n_pairs)), f"{s.train_mae:.4f}", f"{s.test_mae:.4f}", f"{w.train_mae:.4f}",
                     f"{w.test_mae:.4f}", verdict_text(change[b]), integer(s.rules), integer(w.rules),
                     cap.loc[(b, WIDER_E0)].text, f"{m.loc[(b, XCSF_RECOMMENDED)].test_mae:.4f}", vs_xcsf[b]])
    out = table("threshold", ["dataset", "runs", "e0 0.01 train", "e0 0.01 test", "e0 0.05 train", "e0 0.05 test",
                              "change", "rules at 0.01", "rules at 0.05", "N chosen", "recommended XCSF",
                              "e0 0.05 against XCSF"], rows)
    out.update(values(better=count(src, WIDER_E0, RECOMMENDED, "better"),
                      worse=count(src, WIDER_E0, RECOMMENDED, "worse"),
                      ahead=count(src, WIDER_E0, XCSF_RECOMMENDED, "better"),
                      behind=count(src, WIDER_E0, XCSF_RECOMMENDED, "worse")))
    return out


EXPERIMENTS = {"recommended": (recommended,), "capacity_n": (budgets,), "capacity_m": (channels,),
               "suite_capacity": (budgets, channels), "suite_recommended": (suite_recommended,),
               "suite_small_budget": (suite_small_budget,), "suite_error_threshold": (suite_error_threshold,)}
