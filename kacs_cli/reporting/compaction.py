"""The compaction table and the rules-against-error figure: what compaction
(engine/compaction.py) did to each compacted method's runs, from the compacted model's columns
those runs record beside the uncompacted model's.

Per cell and compacted method (a method whose runs.csv rows carry `compacted_rules`): the
macro-rules and the test error of the uncompacted and of the compacted model (mean ± SD over
the runs), the share of the rules kept, the change of the mean error, the paired two-sided
Wilcoxon test of the two errors over the runs (the same trained model before and after), and
the compaction's seconds beside the training's (evolution plus refinement, if any).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kacs_cli.reporting.files import slug
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.refinement import error_metric, groups, sd, training_seconds
from kacs_cli.reporting.stats import wilcoxon_p
from kacs_cli.reporting.tables import Table, fmt_value, tcell

COMPACTED = "compacted_"


def analyse(exp: ExperimentReport, runs: pd.DataFrame) -> pd.DataFrame | None:
    """One row per (cell, compacted method), or None when no run was compacted."""
    error = error_metric(exp)
    records = []
    for cell, method, r in groups(exp, runs, f"{COMPACTED}{error}"):
        before = r[error].to_numpy(float)
        after = r[f"{COMPACTED}{error}"].to_numpy(float)
        rules = r["rules"].to_numpy(float)
        kept = r[f"{COMPACTED}rules"].to_numpy(float)
        training = training_seconds(r)
        records.append({
            "cell": cell.label, "method": method, "runs": len(r),
            "rules": rules.mean(), "compacted_rules": kept.mean(),
            "kept_share": float(np.mean(kept / rules)),
            "kept_share_max": float(np.max(kept / rules)),
            "error_mean": before.mean(), "error_sd": sd(before),
            "compacted_mean": after.mean(), "compacted_sd": sd(after),
            "change": after.mean() / before.mean() - 1.0 if before.mean() else math.nan,
            "better_runs": int(np.sum(after < before)),
            "p": wilcoxon_p(after, before),
            "compaction_seconds": float(r[f"{COMPACTED}seconds"].mean()),
            "training_seconds": float(training.mean()),
            "cost_share": float(np.mean(r[f"{COMPACTED}seconds"].to_numpy(float) / training)),
        })
    return pd.DataFrame.from_records(records) if records else None


def table(exp: ExperimentReport, frame: pd.DataFrame) -> Table:
    error = error_metric(exp)
    headers = ["cell", "method", "runs", "rules", "compacted", "kept", f"{error.replace('_', ' ')}",
               "compacted", "change", "better", "p", "compaction s", "training s"]
    rows = []
    for rec in frame.to_dict("records"):
        rows.append([
            tcell(rec["cell"]), tcell(rec["method"]), tcell(rec["runs"]),
            tcell(f"{rec['rules']:.0f}"), tcell(f"{rec['compacted_rules']:.1f}"),
            tcell(f"{100 * rec['kept_share']:.1f} %"),
            tcell(f"{fmt_value(error, rec['error_mean'])} ± {fmt_value(error, rec['error_sd'])}"),
            tcell(f"{fmt_value(error, rec['compacted_mean'])} ± {fmt_value(error, rec['compacted_sd'])}"),
            tcell(f"{100 * rec['change']:+.1f} %"),
            tcell(f"{rec['better_runs']}/{rec['runs']}"),
            tcell("n/a" if not math.isfinite(rec["p"]) else f"{rec['p']:.2g}"),
            tcell(f"{rec['compaction_seconds']:.2f}"),
            tcell(f"{rec['training_seconds']:.2f}"),
        ])
    caption = (
        f"{exp.name}: the compacted methods' macro-rules and {error.replace('_', ' ')} before "
        f"(the trained model) and after compaction, mean ± SD over runs. kept: compacted rules "
        f"over trained rules (mean of the per-run shares); change: of the mean error; better: "
        f"runs whose error fell; p: two-sided Wilcoxon signed-rank test, compacted against "
        f"trained, paired by run; compaction s and training s (evolution plus refinement, if "
        f"any): seconds per run (mean, wall time under the campaign's load)."
    )
    return Table(f"{exp.name}: compaction", caption, headers, rows, n_left=2,
                 label=f"tab:{slug(exp.name)}-compaction")
