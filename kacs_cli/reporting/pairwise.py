"""Every two methods of an experiment against each other, per cell: the table the documents'
quotes read (reporting/quoted), so that nothing recomputes a test.

Per cell and pair of methods (a listed before b in the config): the runs both have (paired by
run index), how many of them are equal, each one's mean error over them, the change of a's
mean against b's, the paired two-sided Wilcoxon p and its Holm adjustment over the cells of
that pair and metric (one family per comparison, `kstats.holm`'s rule for a missing p), and
the verdict of a against b: better / worse (p Holm < alpha, by the means) or level. The
metric is the test error as recorded (the uncompacted model's) and, for two compacted
methods, the compacted models' test error. Written as CSV only: the report's own tables
already show what a reader needs.
"""

from __future__ import annotations

import math

import pandas as pd

from kacs_cli.reporting.kstats import holm
from kacs_cli.reporting.loading import cell_mask
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.stats import ALPHA, wilcoxon_p

COMPACTED = "compacted_"


def verdict(p_holm: float, a_mean: float, b_mean: float) -> str:
    """a against b: better (lower mean) / worse when p Holm < alpha, else level."""
    if not p_holm < ALPHA:
        return "level"
    return "better" if a_mean < b_mean else "worse"


def analyse(exp: ExperimentReport, runs: pd.DataFrame, methods: list[str]) -> pd.DataFrame | None:
    """One row per (metric, pair of methods, cell) with paired runs; None when there is none."""
    error = f"test_{exp.error}"
    present = [m for m in methods if (runs["method"] == m).any()]
    records = []
    for metric in (error, COMPACTED + error):
        if metric not in runs.columns:
            continue
        having = [m for m in present if runs.loc[runs["method"] == m, metric].notna().any()]
        for i, a in enumerate(having):
            for b in having[i + 1:]:
                for cell in exp.cells:
                    here = runs[cell_mask(runs, cell)]
                    both = pd.concat([here[here["method"] == m].set_index("run")[metric].rename(m) for m in (a, b)],
                                     axis=1, join="inner").dropna()
                    if both.empty:
                        continue
                    x, y = both[a].to_numpy(float), both[b].to_numpy(float)
                    records.append({"metric": metric, "a": a, "b": b, "cell": cell.label, "cell_id": cell.cell_id,
                                    "n_pairs": len(both), "identical": int((x == y).sum()),
                                    "a_mean": x.mean(), "b_mean": y.mean(),
                                    "change_pct": 100.0 * (x.mean() / y.mean() - 1.0) if y.mean() else math.nan,
                                    "p": wilcoxon_p(x, y)})
    if not records:
        return None
    frame = pd.DataFrame(records)
    frame["p_holm"] = math.nan
    for _, idx in frame.groupby(["metric", "a", "b"], sort=False).groups.items():
        frame.loc[idx, "p_holm"] = holm(frame.loc[idx, "p"].to_numpy())
    frame["verdict"] = [verdict(p, x, y) for p, x, y in zip(frame["p_holm"], frame["a_mean"], frame["b_mean"])]
    return frame
