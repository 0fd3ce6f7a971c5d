"""The capacity campaigns (docs/capacity.md and the README): the recommended setting against
refined KACS and among the regressors, the budgets N and the outer channels m swept, and the
recommended setting on the real-data suite; from the reports' means (kmethods), pairwise tests,
capacity and refinement tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kacs_cli.reporting import kstats

from tools.doctables.common import (MAIN_BENCHMARKS, Runs, compare, integer, means, name, ranks, table,
                                    verdict_text)

RECOMMENDED, XCSF_RECOMMENDED = "kacs-recommended", "xcsf-recommended"
# The refined KACS of the target (min-max inputs, N = 6,400) and the same with quantile
# inputs: the recommended setting less its capacity search.
REFINED, QUANTILE_REFINED = "kacs-refined", "kacs-quantile-refined"
# The recommended KACS without its n + 1 channels: the study that chose them (10 runs).
CHANNEL_STUDY = "kacs-search"
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
BUDGETS = (("kacs-quantile-refined", "N = 6,400"), ("kacs-qr-n12800", "N = 12,800"),
           ("kacs-qr-n25600", "N = 25,600"), ("kacs-qr-n51200", "N = 51,200"))
CHANNELS = (("kacs-qr-m-n1", "m = n + 1"), ("kacs-quantile-refined", "m = 2n + 1"), ("kacs-qr-m-4n1", "m = 4n + 1"))
WITHIN_GBR = 0.10  # the measure against gradient boosting: a test MAE at most this much above its
AGAINST_XCSF = {"ahead": "better", "behind": "worse"}  # a value's argument, as the verdict it counts
# The suite's search ladder started at N = 1,600 instead of 6,400 (configs/suite_small_budget.yaml).
SMALL_START = {RECOMMENDED: "kacs-recommended-n1600", XCSF_RECOMMENDED: "xcsf-recommended-n1600"}
WIDER_E0 = "kacs-recommended-e05"  # a wider error threshold (configs/suite_error_threshold.yaml)


def verdicts(runs: Runs, folder: str, a: str, b: str, cells=None) -> dict[str, str]:
    return {c: verdict_text(row) for c, row in compare(runs, folder, a, b, cells).items()}


def count(runs: Runs, folder: str, a: str, b: str, word: str) -> str:
    v = compare(runs, folder, a, b)
    return f"{sum(row.verdict == word for row in v.values())} of {len(v)}"


def _chosen(median: float, values) -> str:
    """The budgets chosen, as 'median (smallest-largest)' in thousands."""
    return f"{median / 1000:g}k ({min(values) / 1000:g}k-{max(values) / 1000:g}k)"


def capacity(runs: Runs, folder: str) -> pd.DataFrame:
    """The report's capacity table by (cell, method), with the budgets chosen as text."""
    c = runs.report(folder, "capacity").set_index(["cell", "method"])
    budgets = c.chosen.map(lambda t: [int(x.split(" x ")[0]) for x in t.split(", ")])
    return c.assign(text=[_chosen(m, v) for m, v in zip(c.chosen_median, budgets)])


def _chosen_runs(sel: pd.DataFrame) -> str:
    n = sel.capacity_N.to_numpy(float)
    return _chosen(float(np.median(n)), n)


def t_recommended(runs: Runs) -> str:
    """The recommended KACS against refined KACS (N = 6,400, min-max and quantile inputs), and
    the recommended XCSF against XCSF, per main benchmark; paired runs, Holm over the eight."""
    f, cap = "recommended", capacity(runs, "recommended")
    vs = {o: compare(runs, f, RECOMMENDED, o) for o in (REFINED, QUANTILE_REFINED)}
    vx = compare(runs, f, XCSF_RECOMMENDED, "xcsf")
    rows = []
    for b in MAIN_BENCHMARKS:
        k, x = cap.loc[(b, RECOMMENDED)], cap.loc[(b, XCSF_RECOMMENDED)]
        rows.append([name(b), str(int(k.runs)), f"{vs[REFINED][b].b_mean:.4f}", f"{vs[REFINED][b].a_mean:.4f}",
                     verdict_text(vs[REFINED][b]), verdict_text(vs[QUANTILE_REFINED][b]), k.text, f"{k.cost_ratio:.2f}",
                     f"{vx[b].a_mean:.4f}", verdict_text(vx[b]), x.text, f"{x.cost_ratio:.2f}"])
    head = ["benchmark", "runs", "refined KACS", "recommended KACS", "against refined KACS",
            "against refined, quantile inputs", "N chosen", "search / fit", "recommended XCSF",
            "against XCSF", "N chosen", "search / fit"]
    return table(head, rows, ["l", "r", "r", "r", "l", "l", "r", "r", "r", "l", "r", "r"])


def t_recommended_channels(runs: Runs) -> str:
    """The recommended KACS against the same without its n + 1 channels, paired runs (the
    study's 10), Holm over the eight; rules and the budgets chosen in those runs beside."""
    vs, r = compare(runs, "recommended", RECOMMENDED, CHANNEL_STUDY), runs("recommended")
    rows = []
    for b in MAIN_BENCHMARKS:
        sel = r[(r.benchmark == b) & r.method.isin((CHANNEL_STUDY, RECOMMENDED))]
        sel = sel[sel.run.isin(sel[sel.method == CHANNEL_STUDY].run)]
        without, mine = (sel[sel.method == m] for m in (CHANNEL_STUDY, RECOMMENDED))
        rows.append([name(b), str(int(vs[b].n_pairs)), f"{vs[b].b_mean:.4f}", f"{vs[b].a_mean:.4f}",
                     verdict_text(vs[b]), integer(without.rules.mean()), integer(mine.rules.mean()),
                     _chosen_runs(without), _chosen_runs(mine)])
    head = ["benchmark", "runs", "m = 2n + 1", "m = n + 1", "n + 1 against 2n + 1", "rules, 2n + 1", "rules, n + 1",
            "N chosen, 2n + 1", "N chosen, n + 1"]
    return table(head, rows, ["l", "r", "r", "r", "l", "r", "r", "r", "r"])


def ranked(runs: Runs) -> tuple[pd.DataFrame, pd.Series]:
    """The recommended campaign's mean test MAE per main benchmark and average ranks of every
    method but the channel study (its 10 runs are a capacity study's)."""
    m = means(runs, "recommended").loc[list(MAIN_BENCHMARKS)].drop(columns=CHANNEL_STUDY)
    return m, ranks(m)


def t_recommended_ranks(runs: Runs) -> str:
    """Average rank of the mean test MAE over the eight benchmarks, and the benchmarks each
    method is best on."""
    m, avg = ranked(runs)
    best = m.idxmin(axis=1)
    rows = [[x, f"{avg[x]:.2f}", ", ".join(name(b) for b in MAIN_BENCHMARKS if best[b] == x) or "—"] for x in avg.index]
    return table(["method", "average rank", "best on"], rows, ["l", "r", "l"])


def v_recommended_runs(runs: Runs, _arg) -> str:
    """The recommended KACS's runs per benchmark (the fewest, where they differ)."""
    return integer(capacity(runs, "recommended").xs(RECOMMENDED, level="method").runs.min())


def v_recommended_standing(runs: Runs, _arg) -> str:
    """Where the recommended KACS stands among the campaign's methods: its place and average
    rank, the methods ahead of it, the benchmarks it is best on and, for the others, which
    method is."""
    m, avg = ranked(runs)
    place = list(avg.index).index(RECOMMENDED)
    ahead = ", ".join(f"{x} {avg[x]:.2f}" for x in avg.index[:place])
    best = m.idxmin(axis=1)
    own = [name(b) for b in MAIN_BENCHMARKS if best[b] == RECOMMENDED]
    behind: dict[str, list[str]] = {}
    for b in MAIN_BENCHMARKS:
        if best[b] != RECOMMENDED:
            behind.setdefault(best[b], []).append(name(b))
    text = (f"{ORDINALS[place]} of {len(avg)} (average rank {avg[RECOMMENDED]:.2f}"
            + (f"; ahead of it: {ahead}" if ahead else "") + ")")
    text += f", the best on {', '.join(own) if own else 'none of the eight'}"
    return text + "; the best elsewhere: " + "; ".join(f"{x} on {', '.join(bs)}" for x, bs in behind.items())


def v_recommended_places(runs: Runs, _arg) -> str:
    """Per benchmark the recommended KACS's place among the ranked methods and, where it is not
    first, its mean test MAE over the best method's."""
    m, _ = ranked(runs)
    places = pd.DataFrame(kstats.rank_matrix(m), index=m.index, columns=m.columns)[RECOMMENDED]
    parts = []
    for b in MAIN_BENCHMARKS:
        best, place = m.loc[b].idxmin(), int(places[b]) - 1
        text = f"{name(b)} {ORDINALS[place]}"
        parts.append(text + (f" ({m.loc[b, RECOMMENDED] / m.loc[b, best]:.2f}x {best})" if best != RECOMMENDED else ""))
    return ", ".join(parts)


def v_recommended_count(runs: Runs, arg: str | None) -> str:
    """How many of the eight the recommended KACS is `arg` ('better', 'worse', 'level') than refined KACS on."""
    return count(runs, "recommended", RECOMMENDED, REFINED, arg or "better").split(" of ")[0]


def v_recommended_cost(runs: Runs, method: str | None) -> str:
    """The search's cost in fits, per benchmark the mean over runs: 'smallest to largest' of
    the eight, and the largest single run's."""
    c = capacity(runs, "recommended").xs(method or RECOMMENDED, level="method").loc[list(MAIN_BENCHMARKS)]
    return (f"{c.cost_ratio.min():.2f} to {c.cost_ratio.max():.2f} fits (largest single run "
            f"{c.cost_ratio_max.max():.2f})")


def _sweep(runs: Runs, folder: str, settings, base: str) -> str:
    """Per dataset and setting of a sweep: mean test MAE (change against the base setting,
    Holm over the datasets' paired Wilcoxon tests), rules, seconds per run (evolution plus
    refinement, wall time under the campaign's load) and runs; only settings with runs."""
    k = runs.report(folder, "kmethods").set_index(["cell", "method"])
    fit = runs.report(folder, "refinement").set_index(["cell", "method"])
    cells = list(dict.fromkeys(k.index.get_level_values(0)))
    rows = []
    for method, label in settings:
        against = verdicts(runs, folder, method, base) if method != base else {}
        for cell in (c for c in cells if (c, method) in k.index):
            x, s = k.loc[(cell, method)], fit.loc[(cell, method)]
            rows.append([name(cell), label, str(int(x.runs)), f"{x.test_mae_mean:.4f}", against.get(cell, "—"),
                         integer(x.rules_mean), integer(x.params_mean), f"{s.evolution_seconds + s.refine_seconds:.1f}"])
    rows.sort(key=lambda row: cells.index(row[0].lower()))
    return table(["dataset", "setting", "runs", "test MAE", "against the article's", "rules", "parameters",
                  "seconds"], rows, ["l", "l", "r", "r", "l", "r", "r", "r"])


def t_capacity_n(runs: Runs) -> str:
    return _sweep(runs, "capacity_n", BUDGETS, QUANTILE_REFINED)


def t_capacity_m(runs: Runs) -> str:
    return _sweep(runs, "capacity_m", CHANNELS, QUANTILE_REFINED)


def t_suite_capacity_n(runs: Runs) -> str:
    return _sweep(runs, "suite_capacity", BUDGETS, QUANTILE_REFINED)


def t_suite_capacity_m(runs: Runs) -> str:
    return _sweep(runs, "suite_capacity", CHANNELS, QUANTILE_REFINED)


SUITE = "suite_recommended"


def _suite(runs: Runs, folder: str = SUITE) -> tuple[pd.DataFrame, list[str]]:
    """The suite campaign's mean test MAE per dataset and method, and its datasets."""
    m = means(runs, folder)
    return m, list(m.index)


def _gbr_ratio(runs: Runs) -> pd.Series:
    m, _ = _suite(runs)
    return m[RECOMMENDED] / m["gbr"]


def t_suite_recommended(runs: Runs) -> str:
    """The recommended KACS on the real-data suite against the recommended XCSF (paired runs,
    Holm over the datasets), gradient boosting (its MAE over gradient boosting's) and the
    random forest, with the budgets its search chose."""
    m, datasets = _suite(runs)
    cap, rules = capacity(runs, SUITE), means(runs, SUITE, "rules_mean")
    first = runs(SUITE).drop_duplicates("benchmark").set_index("benchmark")
    vs, ratio = verdicts(runs, SUITE, RECOMMENDED, XCSF_RECOMMENDED), _gbr_ratio(runs)
    rows = [[b, integer(first.samples[b]), str(int(first.n[b])), str(int(cap.loc[(b, RECOMMENDED)].runs)),
             f"{m.loc[b, RECOMMENDED]:.4f}", f"{m.loc[b, XCSF_RECOMMENDED]:.4f}", vs[b], f"{m.loc[b, 'gbr']:.4f}",
             f"{ratio[b]:.2f}", f"{m.loc[b, 'rf']:.4f}", cap.loc[(b, RECOMMENDED)].text, integer(rules.loc[b, RECOMMENDED])]
            for b in datasets]
    head = ["dataset", "rows", "n", "runs", "recommended KACS", "recommended XCSF", "KACS against XCSF",
            "gradient boosting", "KACS / boosting", "random forest", "N chosen", "rules"]
    return table(head, rows, ["l", "r", "r", "r", "r", "r", "l", "r", "r", "r", "r", "r"])


def v_suite(runs: Runs, arg: str | None) -> str:
    """On the suite, 'k of D': `ahead` the datasets where the recommended KACS is better than
    the recommended XCSF (Holm), `behind` worse, `gbr` within 10 % of gradient boosting."""
    if arg == "gbr":
        ratio = _gbr_ratio(runs)
        return f"{int((ratio <= 1 + WITHIN_GBR).sum())} of {len(ratio)}"
    return count(runs, SUITE, RECOMMENDED, XCSF_RECOMMENDED, AGAINST_XCSF[arg or "ahead"])


def v_suite_runs(runs: Runs, _arg) -> str:
    """The fewest paired runs of the recommended KACS on a suite dataset."""
    return integer(capacity(runs, SUITE).xs(RECOMMENDED, level="method").runs.min())


def v_suite_worst(runs: Runs, arg: str | None) -> str:
    """The `arg` (default 2) suite datasets where the recommended KACS's test MAE is furthest
    above gradient boosting's, largest first, with their size and the ratio."""
    ratio = _gbr_ratio(runs).sort_values(ascending=False, kind="stable")[: int(arg or 2)]
    first = runs(SUITE).drop_duplicates("benchmark").set_index("benchmark")
    return ", ".join(f"{b} ({first.n[b]} inputs, {integer(first.samples[b])} rows) {x:.2f}x" for b, x in ratio.items())


def _suite_means(runs: Runs, columns) -> pd.DataFrame:
    """The suite's per dataset and method means of columns the report does not average."""
    return runs(SUITE).groupby(["benchmark", "method"])[columns].mean()


def v_suite_gap(runs: Runs, bench: str | None) -> str:
    """On suite dataset `bench`, the recommended KACS's and XCSF's train and test MAE."""
    m = _suite_means(runs, ["train_mae", "test_mae"])
    k, x = m.loc[(bench, RECOMMENDED)], m.loc[(bench, XCSF_RECOMMENDED)]
    return f"{k.train_mae:.3f} against {k.test_mae:.3f}, XCSF {x.train_mae:.3f} against {x.test_mae:.3f}"


def t_suite_fit(runs: Runs) -> str:
    """The suite campaign's train and test MAE of the recommended KACS and XCSF and of gradient
    boosting: where each fits and where it generalizes."""
    m = _suite_means(runs, ["samples", "train_mae", "test_mae", "evolved_train_mae", "evolved_test_mae"])
    rows = []
    for b in _suite(runs)[1]:
        k = m.loc[(b, RECOMMENDED)]
        rows.append([b, integer(k.samples), f"{k.evolved_train_mae:.4f}", f"{k.evolved_test_mae:.4f}"]
                    + [f"{m.loc[(b, x), c]:.4f}" for x in (RECOMMENDED, XCSF_RECOMMENDED, "gbr")
                       for c in ("train_mae", "test_mae")])
    head = ["dataset", "rows", "KACS before refinement, train", "before refinement, test", "KACS train",
            "KACS test", "XCSF train", "XCSF test", "boosting train", "boosting test"]
    return table(head, rows, ["l", "r", "r", "r", "r", "r", "r", "r", "r", "r"])


def v_suite_refined(runs: Runs, _arg) -> str:
    """On the suite, 'k of D': the datasets where refinement lowered the recommended KACS's
    mean test MAE (the report's refinement table: before and after)."""
    r = runs.report(SUITE, "refinement")
    r = r[r.method == RECOMMENDED]
    return f"{int((r.refined_mean < r.evolved_mean).sum())} of {len(r)}"


def v_suite_best_fixed(runs: Runs, _arg) -> str:
    """On the suite, the datasets where the best of the capacity study's six fixed settings,
    picked by its test MAE (a bound no selector over them can beat), has a lower mean test MAE
    than the recommended XCSF over the study's runs: 'k of D (names)'."""
    r, study = runs(SUITE), runs("suite_capacity")
    datasets = _suite(runs)[1]
    ahead = []
    for b in datasets:
        s = study[study.benchmark == b]
        best = s.groupby("method").test_mae.mean()[[m for m, _ in BUDGETS + CHANNELS]].min()
        x = r[(r.benchmark == b) & (r.method == XCSF_RECOMMENDED) & r.run.isin(s.run)]
        if best < x.test_mae.mean():
            ahead.append(b)
    return f"{len(ahead)} of {len(datasets)} ({', '.join(ahead)})"


def t_suite_small_budget(runs: Runs) -> str:
    """Both recommended settings with the search started at 1,600 against at 6,400 (paired,
    Holm over the datasets), the budgets chosen, and KACS against XCSF when both start low."""
    f = "suite_small_budget"
    cap = capacity(runs, f)
    changes = {m: compare(runs, f, low, m) for m, low in SMALL_START.items()}
    low_vs = verdicts(runs, f, *SMALL_START.values())
    rows = []
    for b in low_vs:
        row = [b, str(int(changes[RECOMMENDED][b].n_pairs))]
        for method, low in SMALL_START.items():
            c = changes[method][b]
            row += [f"{c.b_mean:.4f}", f"{c.a_mean:.4f}", verdict_text(c), cap.loc[(b, low)].text]
        rows.append(row + [low_vs[b]])
    head = ["dataset", "runs", "KACS from 6.4k", "KACS from 1.6k", "change", "N chosen", "XCSF from 6.4k",
            "XCSF from 1.6k", "change", "N chosen", "KACS against XCSF, both from 1.6k"]
    return table(head, rows, ["l", "r", "r", "r", "l", "r", "r", "r", "l", "r", "l"])


def v_suite_small(runs: Runs, arg: str | None) -> str:
    """'k of D' for the small-budget study: `kacs-better` / `kacs-worse` the datasets where KACS
    from 1,600 is better / worse than from 6,400 (`xcsf-...` likewise), `ahead` / `behind` where
    KACS from 1,600 is better / worse than XCSF from 1,600."""
    who, _, word = (arg or "ahead").rpartition("-")
    if who:
        method = RECOMMENDED if who == "kacs" else XCSF_RECOMMENDED
        return count(runs, "suite_small_budget", SMALL_START[method], method, word)
    return count(runs, "suite_small_budget", *SMALL_START.values(), AGAINST_XCSF[word])


def t_suite_error_threshold(runs: Runs) -> str:
    """The recommended KACS with e0 = 0.05 against at 0.01 (paired, Holm over the datasets),
    with train and test MAE and rules, and against the recommended XCSF."""
    f = "suite_error_threshold"
    m = runs(f).groupby(["benchmark", "method"])[["train_mae", "test_mae", "rules"]].mean()
    change, vs_xcsf = compare(runs, f, WIDER_E0, RECOMMENDED), verdicts(runs, f, WIDER_E0, XCSF_RECOMMENDED)
    cap = capacity(runs, f)
    rows = []
    for b in vs_xcsf:
        s, w = m.loc[(b, RECOMMENDED)], m.loc[(b, WIDER_E0)]
        rows.append([b, str(int(change[b].n_pairs)), f"{s.train_mae:.4f}", f"{s.test_mae:.4f}", f"{w.train_mae:.4f}",
                     f"{w.test_mae:.4f}", verdict_text(change[b]), integer(s.rules), integer(w.rules),
                     cap.loc[(b, WIDER_E0)].text, f"{m.loc[(b, XCSF_RECOMMENDED)].test_mae:.4f}", vs_xcsf[b]])
    head = ["dataset", "runs", "e0 0.01 train", "e0 0.01 test", "e0 0.05 train", "e0 0.05 test", "change",
            "rules at 0.01", "rules at 0.05", "N chosen", "recommended XCSF", "e0 0.05 against XCSF"]
    return table(head, rows, ["l", "r", "r", "r", "r", "r", "l", "r", "r", "r", "r", "l"])


def v_suite_e0(runs: Runs, arg: str | None) -> str:
    """'k of D' for the error-threshold study: `better` / `worse` the datasets where KACS at
    e0 = 0.05 is better / worse than at 0.01, `ahead` / `behind` than the recommended XCSF."""
    word = arg or "better"
    other = XCSF_RECOMMENDED if word in AGAINST_XCSF else RECOMMENDED
    return count(runs, "suite_error_threshold", WIDER_E0, other, AGAINST_XCSF.get(word, word))
