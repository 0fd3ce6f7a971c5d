"""The capacity campaigns (docs/capacity.md and the README): the recommended setting against
refined KACS and among the regressors, the budgets N and the outer channels m swept, and the
recommended setting on the real-data suite."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kacs_cli.reporting import kstats
from kacs_cli.reporting.refinement import training_seconds

from tools.doctables.common import MAIN_BENCHMARKS, Runs, holm_verdicts, integer, methods, name, pair, table

RECOMMENDED = "kacs-recommended"
XCSF_RECOMMENDED = "xcsf-recommended"
# The refined KACS of the target (min-max inputs, N = 6,400) and the same with quantile
# inputs: the recommended setting less its capacity search.
REFINED, QUANTILE_REFINED = "kacs-refined", "kacs-quantile-refined"
# The recommended KACS without its n + 1 channels: the study that chose them (10 runs).
CHANNEL_STUDY = "kacs-search"


def verdict_count(verdicts: dict[str, str], word: str) -> int:
    return sum(f", {word} (" in v for v in verdicts.values())


def _mean(r: pd.DataFrame, bench: str, method: str, runs: np.ndarray) -> float:
    sel = r[(r.benchmark == bench) & (r.method == method) & r.run.isin(runs)]
    return float(sel.test_mae.mean())


def _searched(r: pd.DataFrame, bench: str, method: str) -> pd.DataFrame:
    return r[(r.benchmark == bench) & (r.method == method)]


def chosen(sel: pd.DataFrame) -> str:
    """The budgets chosen, as 'median (smallest-largest)' in thousands."""
    n = sel.capacity_N.to_numpy(float) / 1000
    return f"{np.median(n):g}k ({n.min():g}k-{n.max():g}k)"


def cost_ratios(sel: pd.DataFrame) -> np.ndarray:
    """Per run, the search's seconds over the run's own fit (evolution plus refinement)."""
    return sel.capacity_seconds.to_numpy(float) / training_seconds(sel)


def cost(sel: pd.DataFrame) -> str:
    return f"{np.mean(cost_ratios(sel)):.2f}"


def recommended(runs: Runs) -> str:
    """The recommended KACS against refined KACS (N = 6,400, min-max and quantile inputs), and
    the recommended XCSF against XCSF, per main benchmark; paired runs, Holm over the eight."""
    r = runs("recommended")
    vs_refined = holm_verdicts(r, RECOMMENDED, REFINED, MAIN_BENCHMARKS)
    vs_quantile = holm_verdicts(r, RECOMMENDED, QUANTILE_REFINED, MAIN_BENCHMARKS)
    vs_xcsf = holm_verdicts(r, XCSF_RECOMMENDED, "xcsf", MAIN_BENCHMARKS)
    rows = []
    for bench in MAIN_BENCHMARKS:
        mine = _searched(r, bench, RECOMMENDED)
        xs = _searched(r, bench, XCSF_RECOMMENDED)
        ids = mine.run.to_numpy()
        rows.append([name(bench), str(len(mine)), f"{_mean(r, bench, REFINED, ids):.4f}",
                     f"{mine.test_mae.mean():.4f}", vs_refined[bench], vs_quantile[bench], chosen(mine), cost(mine),
                     f"{xs.test_mae.mean():.4f}", vs_xcsf[bench], chosen(xs), cost(xs)])
    head = ["benchmark", "runs", "refined KACS", "recommended KACS", "against refined KACS",
            "against refined, quantile inputs", "N chosen", "search / fit", "recommended XCSF",
            "against XCSF", "N chosen", "search / fit"]
    return table(head, rows, ["l", "r", "r", "r", "l", "l", "r", "r", "r", "l", "r", "r"])


def common_runs(r: pd.DataFrame, bench: str) -> np.ndarray:
    """The runs every method of the folder has on a benchmark."""
    sel = r[r.benchmark == bench]
    per_method = [set(g.run) for _, g in sel.groupby("method")]
    return np.array(sorted(set.intersection(*per_method)))


def ranks(r: pd.DataFrame, benchmarks) -> tuple[pd.DataFrame, pd.Series]:
    """Each method's mean test MAE per benchmark over the runs all methods have there, and their
    average ranks, best first."""
    means = pd.DataFrame({m: {b: _mean(r, b, m, common_runs(r, b)) for b in benchmarks} for m in methods(r)})
    return means, pd.Series(kstats.average_ranks(means), index=means.columns).sort_values()


def ranked(runs: Runs) -> pd.DataFrame:
    """The recommended campaign's methods that are ranked: all but the channel study, which
    has its 10 runs of a capacity study (a campaign's ranks are over the runs all have)."""
    r = runs("recommended")
    return r[r.method != CHANNEL_STUDY]


def recommended_channels(runs: Runs) -> str:
    """The recommended KACS against the same without its n + 1 channels, paired runs, Holm
    over the eight; rules and the budgets chosen beside."""
    r = runs("recommended")
    verdicts = holm_verdicts(r, RECOMMENDED, CHANNEL_STUDY, MAIN_BENCHMARKS)
    both = r[r.method.isin((CHANNEL_STUDY, RECOMMENDED))]
    rows = []
    for bench in MAIN_BENCHMARKS:
        ids = common_runs(both, bench)
        without, mine = (_searched(both[both.run.isin(ids)], bench, m) for m in (CHANNEL_STUDY, RECOMMENDED))
        rows.append([name(bench), str(len(ids)), f"{without.test_mae.mean():.4f}", f"{mine.test_mae.mean():.4f}",
                     verdicts[bench], integer(without.rules.mean()), integer(mine.rules.mean()), chosen(without),
                     chosen(mine)])
    head = ["benchmark", "runs", "m = 2n + 1", "m = n + 1", "n + 1 against 2n + 1", "rules, 2n + 1", "rules, n + 1",
            "N chosen, 2n + 1", "N chosen, n + 1"]
    return table(head, rows, ["l", "r", "r", "r", "l", "r", "r", "r", "r"])


def recommended_ranks(runs: Runs) -> str:
    """Every method of the regressors campaign with the recommended settings: average rank of
    the mean test MAE over the eight benchmarks, and the benchmarks each method is best on."""
    means, avg = ranks(ranked(runs), MAIN_BENCHMARKS)
    best = means.idxmin(axis=1)
    rows = [[m, f"{avg[m]:.2f}", ", ".join(name(b) for b in MAIN_BENCHMARKS if best[b] == m) or "—"]
            for m in avg.index]
    return table(["method", "average rank", "best on"], rows, ["l", "r", "l"])


def v_recommended_runs(runs: Runs, _arg) -> str:
    """The recommended KACS's runs per benchmark (the fewest, where they differ)."""
    r = runs("recommended")
    return integer(min(len(_searched(r, b, RECOMMENDED)) for b in MAIN_BENCHMARKS))


def v_recommended_rank(runs: Runs, method: str | None) -> str:
    _, avg = ranks(ranked(runs), MAIN_BENCHMARKS)
    return f"{avg[method or RECOMMENDED]:.2f}"


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def v_recommended_standing(runs: Runs, _arg) -> str:
    """Where the recommended KACS stands among the campaign's methods: its place and average
    rank, the methods ahead of it, the benchmarks it is best on and, for the others, which
    method is."""
    means, avg = ranks(ranked(runs), MAIN_BENCHMARKS)
    place = list(avg.index).index(RECOMMENDED)
    ahead = ", ".join(f"{m} {avg[m]:.2f}" for m in avg.index[:place])
    best = means.idxmin(axis=1)
    own = [name(b) for b in MAIN_BENCHMARKS if best[b] == RECOMMENDED]
    behind: dict[str, list[str]] = {}
    for b in MAIN_BENCHMARKS:
        if best[b] != RECOMMENDED:
            behind.setdefault(best[b], []).append(name(b))
    text = (f"{ORDINALS[place]} of {len(avg)} (average rank {avg[RECOMMENDED]:.2f}"
            + (f"; ahead of it: {ahead}" if ahead else "") + ")")
    text += f", the best on {', '.join(own) if own else 'none of the eight'}"
    return text + "; the best elsewhere: " + "; ".join(f"{m} on {', '.join(bs)}" for m, bs in behind.items())


def v_recommended_places(runs: Runs, _arg) -> str:
    """Per benchmark the recommended KACS's place among the ranked methods and, where it is not
    first, its mean test MAE over the best method's."""
    means, _ = ranks(ranked(runs), MAIN_BENCHMARKS)
    place = means.rank(axis=1)[RECOMMENDED]
    parts = []
    for b in MAIN_BENCHMARKS:
        best = means.loc[b].idxmin()
        text = f"{name(b)} {ORDINALS[int(place[b]) - 1]}"
        if best != RECOMMENDED:
            text += f" ({means.loc[b, RECOMMENDED] / means.loc[b, best]:.2f}x {best})"
        parts.append(text)
    return ", ".join(parts)


def v_recommended_count(runs: Runs, arg: str | None) -> str:
    """How many of the eight the recommended KACS is `arg` ('better', 'worse', 'level') than
    refined KACS on."""
    r = runs("recommended")
    return str(verdict_count(holm_verdicts(r, RECOMMENDED, REFINED, MAIN_BENCHMARKS), arg or "better"))


def _sweep(r: pd.DataFrame, settings: tuple[tuple[str, str], ...], base: str) -> str:
    """Per dataset and setting of a sweep: mean test MAE (change against the base setting,
    Holm over the datasets' paired Wilcoxon tests), rules, seconds per run (evolution plus
    refinement, wall time under the campaign's load) and runs; only settings with runs."""
    rows = []
    benches = list(dict.fromkeys(r.benchmark))
    for method, label in settings:
        if not (r.method == method).any():
            continue
        here = [b for b in benches if ((r.benchmark == b) & (r.method == method)).any()]
        against = holm_verdicts(r, method, base, here) if method != base else {}
        for bench in here:
            sel = _searched(r, bench, method)
            fit = training_seconds(sel)
            rows.append([name(bench), label, str(len(sel)), f"{sel.test_mae.mean():.4f}",
                         against.get(bench, "—"), integer(sel.rules.mean()), integer(sel.params.mean()),
                         f"{fit.mean():.1f}"])
    rows.sort(key=lambda row: benches.index(row[0].lower()))
    return table(["dataset", "setting", "runs", "test MAE", "against the article's", "rules", "parameters",
                  "seconds"], rows, ["l", "l", "r", "r", "l", "r", "r", "r"])


BUDGETS = (("kacs-quantile-refined", "N = 6,400"), ("kacs-qr-n12800", "N = 12,800"),
           ("kacs-qr-n25600", "N = 25,600"), ("kacs-qr-n51200", "N = 51,200"))
CHANNELS = (("kacs-qr-m-n1", "m = n + 1"), ("kacs-quantile-refined", "m = 2n + 1"), ("kacs-qr-m-4n1", "m = 4n + 1"))


def capacity_n(runs: Runs) -> str:
    """Refined KACS with quantile inputs at four budgets N, each against N = 6,400."""
    return _sweep(runs("capacity_n"), BUDGETS, "kacs-quantile-refined")


def capacity_m(runs: Runs) -> str:
    """Refined KACS with quantile inputs at three channel counts m, each against 2n + 1."""
    return _sweep(runs("capacity_m"), CHANNELS, "kacs-quantile-refined")


def suite_capacity_n(runs: Runs) -> str:
    """The budgets' sweep on the real-data suite (the same methods as capacity_n)."""
    return _sweep(runs("suite_capacity"), BUDGETS, "kacs-quantile-refined")


def suite_capacity_m(runs: Runs) -> str:
    """The channels' sweep on the real-data suite (the same methods as capacity_m)."""
    return _sweep(runs("suite_capacity"), CHANNELS, "kacs-quantile-refined")


def v_recommended_cost(runs: Runs, method: str | None) -> str:
    """The search's cost in fits, per benchmark the mean over runs: 'smallest to largest' of
    the eight, and the largest single run's."""
    r = runs("recommended")
    ratios = [cost_ratios(_searched(r, b, method or RECOMMENDED)) for b in MAIN_BENCHMARKS]
    means = [float(np.mean(x)) for x in ratios]
    return (f"{min(means):.2f} to {max(means):.2f} fits (largest single run "
            f"{max(float(np.max(x)) for x in ratios):.2f})")


SUITE_METHODS = (RECOMMENDED, XCSF_RECOMMENDED, "gbr", "rf")
# The measure against gradient boosting: a test MAE at most this much above its.
WITHIN_GBR = 0.10
# A value's argument for a comparison with the recommended XCSF, as the verdict it counts.
AGAINST_XCSF = {"ahead": "better", "behind": "worse"}


def shared_runs(r: pd.DataFrame, methods) -> tuple[pd.DataFrame, list[str]]:
    """`r`'s rows of `methods` over the runs all of them have on a dataset, and the datasets
    where they have at least one, in the config's order."""
    r = r[r.method.isin(methods)]
    keep, datasets = [], []
    for bench in dict.fromkeys(r.benchmark):
        sel = r[r.benchmark == bench]
        if set(sel.method) != set(methods):
            continue
        ids = common_runs(sel, bench)
        if len(ids):
            keep.append(sel[sel.run.isin(ids)])
            datasets.append(bench)
    return (pd.concat(keep) if keep else r.iloc[:0]), datasets


def suite_runs(runs: Runs) -> tuple[pd.DataFrame, list[str]]:
    """The suite campaign's rows of the runs all four methods have on a dataset, and those datasets."""
    return shared_runs(runs("suite_recommended"), SUITE_METHODS)


def _gbr_ratio(r: pd.DataFrame, bench: str) -> float:
    return float(_searched(r, bench, RECOMMENDED).test_mae.mean() / _searched(r, bench, "gbr").test_mae.mean())


def suite_recommended(runs: Runs) -> str:
    """The recommended KACS on the real-data suite against the recommended XCSF (paired runs,
    Holm over the datasets), gradient boosting (its MAE over gradient boosting's) and the
    random forest, with the budgets its search chose."""
    r, datasets = suite_runs(runs)
    vs_xcsf = holm_verdicts(r, RECOMMENDED, XCSF_RECOMMENDED, datasets)
    rows = []
    for bench in datasets:
        mine = _searched(r, bench, RECOMMENDED)
        n = int(mine.n.iloc[0])
        rows.append([bench, integer(mine.samples.iloc[0]), str(n), str(len(mine)), f"{mine.test_mae.mean():.4f}",
                     f"{_searched(r, bench, XCSF_RECOMMENDED).test_mae.mean():.4f}", vs_xcsf[bench],
                     f"{_searched(r, bench, 'gbr').test_mae.mean():.4f}", f"{_gbr_ratio(r, bench):.2f}",
                     f"{_searched(r, bench, 'rf').test_mae.mean():.4f}", chosen(mine), integer(mine.rules.mean())])
    head = ["dataset", "rows", "n", "runs", "recommended KACS", "recommended XCSF", "KACS against XCSF",
            "gradient boosting", "KACS / boosting", "random forest", "N chosen", "rules"]
    return table(head, rows, ["l", "r", "r", "r", "r", "r", "l", "r", "r", "r", "r", "r"])


def v_suite(runs: Runs, arg: str | None) -> str:
    """On the suite, 'k of D': `ahead` the datasets where the recommended KACS is better than
    the recommended XCSF (Holm), `behind` worse, `gbr` within 10 % of gradient boosting."""
    r, datasets = suite_runs(runs)
    if arg == "gbr":
        k = sum(_gbr_ratio(r, b) <= 1 + WITHIN_GBR for b in datasets)
    else:
        word = AGAINST_XCSF[arg or "ahead"]
        k = verdict_count(holm_verdicts(r, RECOMMENDED, XCSF_RECOMMENDED, datasets), word)
    return f"{k} of {len(datasets)}"


def v_suite_runs(runs: Runs, _arg) -> str:
    """The fewest paired runs of the four methods on a suite dataset."""
    r, datasets = suite_runs(runs)
    return integer(min((len(_searched(r, b, RECOMMENDED)) for b in datasets), default=0))


def v_suite_worst(runs: Runs, arg: str | None) -> str:
    """The `arg` (default 2) suite datasets where the recommended KACS's test MAE is furthest
    above gradient boosting's, largest first, with their size and the ratio."""
    r, datasets = suite_runs(runs)
    ratios = {b: _gbr_ratio(r, b) for b in datasets}
    worst = sorted(datasets, key=lambda b: -ratios[b])[: int(arg or 2)]
    first = r.drop_duplicates("benchmark").set_index("benchmark")
    return ", ".join(f"{b} ({first.n[b]} inputs, {integer(first.samples[b])} rows) {ratios[b]:.2f}x" for b in worst)


def v_suite_gap(runs: Runs, bench: str | None) -> str:
    """On suite dataset `bench`, the recommended KACS's and XCSF's train and test MAE: how far
    each one's fit of the training rows is from its error on the test rows."""
    r, _ = suite_runs(runs)
    kacs, xcsf = (_searched(r, bench, m) for m in (RECOMMENDED, XCSF_RECOMMENDED))
    return (f"{kacs.train_mae.mean():.3f} against {kacs.test_mae.mean():.3f}, XCSF "
            f"{xcsf.train_mae.mean():.3f} against {xcsf.test_mae.mean():.3f}")


def suite_fit(runs: Runs) -> str:
    """The suite campaign's train and test MAE of the recommended KACS and XCSF and of gradient
    boosting, over the runs all four methods have: where each fits and where it generalizes."""
    r, datasets = suite_runs(runs)
    rows = []
    for bench in datasets:
        mine = _searched(r, bench, RECOMMENDED)
        row = [bench, integer(mine.samples.iloc[0]), f"{mine.evolved_train_mae.mean():.4f}",
               f"{mine.evolved_test_mae.mean():.4f}"]
        for method in (RECOMMENDED, XCSF_RECOMMENDED, "gbr"):
            sel = _searched(r, bench, method)
            row += [f"{sel.train_mae.mean():.4f}", f"{sel.test_mae.mean():.4f}"]
        rows.append(row)
    head = ["dataset", "rows", "KACS before refinement, train", "before refinement, test", "KACS train",
            "KACS test", "XCSF train", "XCSF test", "boosting train", "boosting test"]
    return table(head, rows, ["l", "r", "r", "r", "r", "r", "r", "r", "r", "r"])


def v_suite_refined(runs: Runs, _arg) -> str:
    """On the suite, 'k of D': the datasets where refinement lowered the recommended KACS's
    mean test MAE (against the same runs' evolved models, before refinement)."""
    r, datasets = suite_runs(runs)
    mine = r[r.method == RECOMMENDED].groupby("benchmark")[["test_mae", "evolved_test_mae"]].mean()
    k = int((mine.test_mae < mine.evolved_test_mae)[datasets].sum())
    return f"{k} of {len(datasets)}"


def v_suite_best_fixed(runs: Runs, _arg) -> str:
    """On the suite, the datasets where the best of the capacity study's six fixed settings,
    picked by its test MAE (a bound no selector over them can beat), has a lower mean test MAE
    than the recommended XCSF: 'k of D (names)'."""
    r, datasets = suite_runs(runs)
    study = runs("suite_capacity")
    ahead = []
    for bench in datasets:
        # the study's runs (10) that the campaign has too: the same splits and seeds
        ids = np.intersect1d(common_runs(r, bench), study[study.benchmark == bench].run.unique())
        best = min(_mean(study, bench, m, ids) for m, _ in BUDGETS + CHANNELS)
        if best < _mean(r, bench, XCSF_RECOMMENDED, ids):
            ahead.append(bench)
    return f"{len(ahead)} of {len(datasets)} ({', '.join(ahead)})"


# The suite's search ladder started at N = 1,600 instead of 6,400 (configs/suite_small_budget.yaml).
SMALL_START = {RECOMMENDED: "kacs-recommended-n1600", XCSF_RECOMMENDED: "xcsf-recommended-n1600"}


def _small_budget(runs: Runs) -> tuple[pd.DataFrame, list[str]]:
    """The small-budget study's rows over the runs its four methods all have, and its datasets."""
    return shared_runs(runs("suite_small_budget"), (*SMALL_START, *SMALL_START.values()))


def suite_small_budget(runs: Runs) -> str:
    """Both recommended settings with the search started at 1,600 against at 6,400 (paired,
    Holm over the datasets), the budgets chosen, and KACS against XCSF when both start low."""
    r, datasets = _small_budget(runs)
    changes = {m: holm_verdicts(r, low, m, datasets) for m, low in SMALL_START.items()}
    low_vs = holm_verdicts(r, SMALL_START[RECOMMENDED], SMALL_START[XCSF_RECOMMENDED], datasets)
    rows = []
    for bench in datasets:
        row = [bench, str(r[(r.benchmark == bench)].run.nunique())]
        for method, low in SMALL_START.items():
            start, started_low = _searched(r, bench, method), _searched(r, bench, low)
            row += [f"{start.test_mae.mean():.4f}", f"{started_low.test_mae.mean():.4f}", changes[method][bench],
                    chosen(started_low)]
        rows.append(row + [low_vs[bench]])
    head = ["dataset", "runs", "KACS from 6.4k", "KACS from 1.6k", "change", "N chosen", "XCSF from 6.4k",
            "XCSF from 1.6k", "change", "N chosen", "KACS against XCSF, both from 1.6k"]
    return table(head, rows, ["l", "r", "r", "r", "l", "r", "r", "r", "l", "r", "l"])


def v_suite_small(runs: Runs, arg: str | None) -> str:
    """'k of D' for the small-budget study: `kacs-better` / `kacs-worse` the datasets where KACS
    from 1,600 is better / worse than from 6,400 (`xcsf-...` likewise), `ahead` / `behind` where
    KACS from 1,600 is better / worse than XCSF from 1,600."""
    r, datasets = _small_budget(runs)
    who, _, word = (arg or "ahead").rpartition("-")
    if who:
        method = RECOMMENDED if who == "kacs" else XCSF_RECOMMENDED
        verdicts = holm_verdicts(r, SMALL_START[method], method, datasets)
    else:
        verdicts = holm_verdicts(r, SMALL_START[RECOMMENDED], SMALL_START[XCSF_RECOMMENDED], datasets)
        word = AGAINST_XCSF[word]
    return f"{verdict_count(verdicts, word)} of {len(datasets)}"


# The recommended KACS with a wider error threshold (configs/suite_error_threshold.yaml).
WIDER_E0 = "kacs-recommended-e05"


def _error_threshold(runs: Runs) -> tuple[pd.DataFrame, list[str]]:
    """The error-threshold study's rows over the runs its three methods all have, and its datasets."""
    return shared_runs(runs("suite_error_threshold"), (RECOMMENDED, XCSF_RECOMMENDED, WIDER_E0))


def suite_error_threshold(runs: Runs) -> str:
    """The recommended KACS with e0 = 0.05 against at 0.01 (paired, Holm over the datasets),
    with train and test MAE and rules, and against the recommended XCSF."""
    r, datasets = _error_threshold(runs)
    change = holm_verdicts(r, WIDER_E0, RECOMMENDED, datasets)
    vs_xcsf = holm_verdicts(r, WIDER_E0, XCSF_RECOMMENDED, datasets)
    rows = []
    for bench in datasets:
        start, wider = _searched(r, bench, RECOMMENDED), _searched(r, bench, WIDER_E0)
        rows.append([bench, str(len(wider)), f"{start.train_mae.mean():.4f}", f"{start.test_mae.mean():.4f}",
                     f"{wider.train_mae.mean():.4f}", f"{wider.test_mae.mean():.4f}", change[bench],
                     integer(start.rules.mean()), integer(wider.rules.mean()), chosen(wider),
                     f"{_searched(r, bench, XCSF_RECOMMENDED).test_mae.mean():.4f}", vs_xcsf[bench]])
    head = ["dataset", "runs", "e0 0.01 train", "e0 0.01 test", "e0 0.05 train", "e0 0.05 test", "change",
            "rules at 0.01", "rules at 0.05", "N chosen", "recommended XCSF", "e0 0.05 against XCSF"]
    return table(head, rows, ["l", "r", "r", "r", "r", "r", "l", "r", "r", "r", "r", "l"])


def v_suite_e0(runs: Runs, arg: str | None) -> str:
    """'k of D' for the error-threshold study: `better` / `worse` the datasets where KACS at
    e0 = 0.05 is better / worse than at 0.01, `ahead` / `behind` than the recommended XCSF."""
    r, datasets = _error_threshold(runs)
    word = arg or "better"
    other = XCSF_RECOMMENDED if word in AGAINST_XCSF else RECOMMENDED
    word = AGAINST_XCSF.get(word, word)
    return f"{verdict_count(holm_verdicts(r, WIDER_E0, other, datasets), word)} of {len(datasets)}"


TABLES = {
    "suite-recommended": suite_recommended,
    "suite-fit": suite_fit,
    "suite-small-budget": suite_small_budget,
    "suite-error-threshold": suite_error_threshold,
    "capacity-n": capacity_n,
    "capacity-m": capacity_m,
    "suite-capacity-n": suite_capacity_n,
    "suite-capacity-m": suite_capacity_m,
    "recommended": recommended,
    "recommended-ranks": recommended_ranks,
    "recommended-channels": recommended_channels,
}
VALUES = {
    "recommended-runs": v_recommended_runs,
    "recommended-rank": v_recommended_rank,
    "recommended-count": v_recommended_count,
    "recommended-cost": v_recommended_cost,
    "recommended-standing": v_recommended_standing,
    "recommended-places": v_recommended_places,
    "suite": v_suite,
    "suite-runs": v_suite_runs,
    "suite-small": v_suite_small,
    "suite-best-fixed": v_suite_best_fixed,
    "suite-worst": v_suite_worst,
    "suite-gap": v_suite_gap,
    "suite-e0": v_suite_e0,
    "suite-refined": v_suite_refined,
}
