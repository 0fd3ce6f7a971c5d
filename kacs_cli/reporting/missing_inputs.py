"""The missing-inputs tables: what removing input values completely at random (a benchmark
entry's `missing: f`, docs/configs.md) did to each method, and whether a learner reading missing
inputs natively beats the same learner after mean imputation (`impute: mean`).

A campaign gets them when one of its cells removes values. Cells whose data are the same but
for `missing` are one dataset at several levels (0 for the complete data). A native method is
a method that imputes nothing, a learner or a baseline (gradient boosting's own handling of NaN
is the field's reference); its imputing twin is the method of the same learner whose settings
are its own plus `impute: mean`. Per dataset: every method's mean test error at every
level; per native method and level, its rise over its complete-data cell and its difference
to its twin, both over the runs the two have (paired by run: the same split seed, hence the
same removed cells and split), each with the paired two-sided Wilcoxon p, Holm-adjusted over
the datasets, and a verdict from the native method's side (better: significantly lower error).
Over the suite: the change of the mean over the datasets of the two means, and the counts
of better / worse / no difference.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kacs_cli.engine.params import IMPUTE
from kacs_cli.experiments.campaign import results
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.kstats import holm
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.stats import ALPHA, wilcoxon_p
from kacs_cli.reporting.tables import Table, fmt_value, tcell

MISSING = "missing"
COMPLETE = "complete data"
VERDICTS = ("better", "worse", "no difference")


@dataclass
class MissingInputs:
    means: pd.DataFrame    # dataset, method, level, runs, mean: every method's mean error per level
    tests: pd.DataFrame    # dataset, method, level, against, pairs, mean, other_mean, change_pct, p, p_holm, verdict
    summary: pd.DataFrame  # method, level, against, datasets, suite_mean, suite_other_mean, change_pct, counts


def levels(config: results.ResolvedConfig) -> dict[str, tuple[str, float]] | None:
    """cell label -> (dataset, fraction of the inputs removed) for a config one of whose cells
    removes values; None for any other. A dataset is named by its complete cell's label (its
    benchmark where it has none)."""
    cells = list(config.cells or ())
    if not any(isinstance(c.written.get(MISSING), (int, float)) and c.written.get(MISSING) for c in cells):
        return None
    keys = {c.label: json.dumps({k: v for k, v in c.data.items() if k != MISSING}, sort_keys=True, default=str)
            for c in cells}
    names = {}
    for c in cells:
        if not c.written.get(MISSING):
            names.setdefault(keys[c.label], c.label)
    return {c.label: (names.get(keys[c.label], c.benchmark), float(c.written.get(MISSING) or 0.0)) for c in cells}


def _imputes(settings) -> bool:
    return isinstance(settings, dict) and settings.get(IMPUTE, "none") != "none"


def twins(config: results.ResolvedConfig) -> dict[str, str | None]:
    """native method -> its imputing twin (None when the config has none), from the settings of
    the cells that run both."""
    found: dict[str, str | None] = {}
    for cell in config.cells or ():
        methods = cell.methods or config.methods
        for native in methods:
            settings = cell.settings_of(native)
            if not isinstance(settings, dict) or _imputes(settings):
                continue
            found.setdefault(native, None)
            for other in methods:
                theirs = cell.settings_of(other)
                if (_imputes(theirs) and config.method_engines.get(other, other) == config.method_engines.get(native, native)
                        and {k: v for k, v in theirs.items() if k != IMPUTE} == settings):
                    found[native] = found[native] or other
    return found


def _level_word(level: float) -> str:
    return COMPLETE if level == 0 else f"{100 * level:g} %"


def _verdict(p_holm: float, change: float) -> str:
    if math.isfinite(p_holm) and p_holm < ALPHA and change != 0:
        return "better" if change < 0 else "worse"
    return "no difference"


def analyse(exp: ExperimentReport, final: pd.DataFrame, config: results.ResolvedConfig) -> MissingInputs | None:
    """The missing-inputs tables' numbers from the runs' final models, or None when no cell of
    the config removes input values."""
    where = levels(config)
    if where is None or final.empty:
        return None
    error = f"test_{exp.error}"
    runs = final[final["cell_id"].isin(where)].copy()
    runs["dataset"] = [where[c][0] for c in runs["cell_id"]]
    runs["level"] = [where[c][1] for c in runs["cell_id"]]
    runs = runs[runs[error].notna()]
    datasets = list(dict.fromkeys(where[c.cell_id][0] for c in exp.cells if c.cell_id in where))
    means = (runs.groupby(["dataset", "method", "level"], sort=False)[error].agg(["size", "mean"])
             .reset_index().rename(columns={"size": "runs"}))
    order = list(dict.fromkeys([*config.methods, *means["method"]]))
    means = (means.assign(_d=[datasets.index(d) for d in means["dataset"]], _m=[order.index(m) for m in means["method"]])
             .sort_values(["_d", "_m", "level"], kind="stable").drop(columns=["_d", "_m"]).reset_index(drop=True))

    def per_run(dataset, method, level) -> pd.Series:
        here = runs[(runs["dataset"] == dataset) & (runs["method"] == method) & (runs["level"] == level)]
        return here.set_index("run")[error].astype(float)

    records = []
    for native, twin in twins(config).items():
        for level in sorted({lv for _, lv in where.values() if lv > 0}):
            comparisons = [(COMPLETE, native, 0.0)] + ([(twin, twin, level)] if twin else [])
            for against, other, other_level in comparisons:
                for dataset in datasets:
                    pair = pd.concat([per_run(dataset, native, level), per_run(dataset, other, other_level)],
                                     axis=1, join="inner").dropna()
                    if pair.empty:
                        continue
                    x, y = pair.iloc[:, 0].to_numpy(), pair.iloc[:, 1].to_numpy()
                    records.append({"dataset": dataset, "method": native, "level": level, "against": against,
                                    "pairs": len(pair), "mean": float(x.mean()), "other_mean": float(y.mean()),
                                    "change_pct": 100.0 * (x.mean() / y.mean() - 1.0) if y.mean() else math.nan,
                                    "p": wilcoxon_p(x, y)})
    tests = pd.DataFrame.from_records(records, columns=["dataset", "method", "level", "against", "pairs", "mean",
                                                        "other_mean", "change_pct", "p"])
    tests["p_holm"] = np.nan
    for _, idx in tests.groupby(["method", "level", "against"], sort=False).groups.items():
        tests.loc[idx, "p_holm"] = holm(tests.loc[idx, "p"].fillna(1.0).to_numpy())
    tests["verdict"] = [_verdict(p, c) for p, c in zip(tests["p_holm"], tests["change_pct"])]
    rows = []
    for (method, level, against), group in tests.groupby(["method", "level", "against"], sort=False):
        suite, other = float(group["mean"].mean()), float(group["other_mean"].mean())
        rows.append({"method": method, "level": level, "against": against, "datasets": len(group),
                     "suite_mean": suite, "suite_other_mean": other,
                     "change_pct": 100.0 * (suite / other - 1.0) if other else math.nan,
                     **{v: int((group["verdict"] == v).sum()) for v in VERDICTS}})
    summary = pd.DataFrame.from_records(rows, columns=["method", "level", "against", "datasets", "suite_mean",
                                                       "suite_other_mean", "change_pct", *VERDICTS])
    return MissingInputs(means, tests, summary)


def frame(found: MissingInputs) -> pd.DataFrame:
    """The per-dataset tests with the suite's rows under them (dataset `suite`): the CSV."""
    suite = found.summary.assign(dataset="suite", pairs=np.nan, p=np.nan, p_holm=np.nan, verdict="",
                                 mean=found.summary["suite_mean"], other_mean=found.summary["suite_other_mean"])
    return pd.concat([found.tests, suite[found.tests.columns]], ignore_index=True)


def _pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:+.1f} %"


def _p(p: float) -> str:
    return "n/a" if not math.isfinite(p) else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def tables(exp: ExperimentReport, found: MissingInputs | None) -> list[Table]:
    if found is None:
        return []
    error, word = exp.error, exp.error_word
    levels_ = sorted(found.means["level"].unique())
    methods = list(dict.fromkeys(found.means["method"]))
    mean_rows = []
    for dataset in dict.fromkeys(found.means["dataset"]):
        here = found.means[found.means["dataset"] == dataset]
        for method in methods:
            cells = {lv: here[(here["method"] == method) & (here["level"] == lv)] for lv in levels_}
            if all(c.empty for c in cells.values()):
                continue
            mean_rows.append([tcell(dataset), tcell(method)] + [
                tcell("" if c.empty else f"{fmt_value(error, float(c['mean'].iloc[0]))} ({int(c['runs'].iloc[0])})")
                for c in cells.values()])
    means = Table(
        title=f"{exp.name}: missing inputs, mean test {word}",
        caption=(f"Mean test {word} (runs) of each method on each dataset, complete and with the share of its "
                 f"input values removed completely at random that the column names (the same cells for every "
                 f"method of a run)."),
        headers=["dataset", "method", *(_level_word(lv) for lv in levels_)],
        rows=mean_rows, n_left=2, label=f"tab:{slug(exp.name)}-missing-means")
    test_rows = [[tcell(r["dataset"]), tcell(r["method"]), tcell(_level_word(r["level"])), tcell(r["against"]),
                  tcell(r["pairs"]), tcell(fmt_value(error, r["mean"])), tcell(fmt_value(error, r["other_mean"])),
                  tcell(_pct(r["change_pct"])), tcell(_p(r["p_holm"])), tcell(r["verdict"])]
                 for r in found.tests.to_dict("records")]
    tests = Table(
        title=f"{exp.name}: missing inputs, native handling against the complete data and mean imputation",
        caption=(f"Each native method with values missing against its own complete-data cell (its rise) and "
                 f"against the same learner after mean imputation, over the runs both have, paired by run (same "
                 f"split seed: same removed cells, same split). change: of the native method's mean test {word} "
                 f"against the other's; p: paired two-sided Wilcoxon, Holm over the datasets; verdict: the native "
                 f"method's, at alpha = {ALPHA}."),
        headers=["dataset", "method", "missing", "against", "pairs", f"test {word}", "other", "change", "p (Holm)",
                 "verdict"],
        rows=test_rows, n_left=4, label=f"tab:{slug(exp.name)}-missing-tests")
    summary_rows = [[tcell(r["method"]), tcell(_level_word(r["level"])), tcell(r["against"]), tcell(r["datasets"]),
                     tcell(fmt_value(error, r["suite_mean"])), tcell(fmt_value(error, r["suite_other_mean"])),
                     tcell(_pct(r["change_pct"])), tcell(f"{r['better']} / {r['worse']} / {r['no difference']}")]
                    for r in found.summary.to_dict("records")]
    summary = Table(
        title=f"{exp.name}: missing inputs over the suite",
        caption=(f"Per native method, share of values missing and comparison: the mean over the datasets of its "
                 f"mean test {word} and of the other's (paired runs), their change (against the complete data: "
                 f"the suite-mean rise), and the datasets where the native method is better / worse / not "
                 f"different (the verdicts above)."),
        headers=["method", "missing", "against", "datasets", f"test {word}", "other", "change",
                 "better / worse / no difference"],
        rows=summary_rows, n_left=3, label=f"tab:{slug(exp.name)}-missing-summary")
    return [means, tests, summary]
