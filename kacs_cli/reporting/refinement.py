"""The refinement table: what full-batch refinement (engine/refine.py) did to each refined
method's runs, from the evolved errors those runs also record.

Per cell and refined method (a method whose runs.csv rows carry `evolved_test_mae`): the
test error of the evolved and of the refined model (mean ± SD over the runs), the change of
the mean, the paired two-sided Wilcoxon test of the two over the runs (the same models
before and after refinement: same rules, same parameters), the L-BFGS-B iterations, and the
refinement's seconds beside the evolution's.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kacs_cli.reporting.files import slug
from kacs_cli.reporting.loading import cell_mask
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.stats import wilcoxon_p
from kacs_cli.reporting.tables import Table, fmt_value, tcell

EVOLVED = "evolved_"


def error_metric(exp: ExperimentReport) -> str:
    return f"test_{exp.error}"


def groups(exp: ExperimentReport, runs: pd.DataFrame, column: str) -> list[tuple]:
    """(cell, method, its runs) of every cell and method whose runs carry `column` (a step
    after training recorded it), in the report's cell order; empty when none does."""
    if column not in runs.columns:
        return []
    marked = runs[runs[column].notna()]
    out = []
    for cell in exp.cells:
        here = marked[cell_mask(marked, cell)]
        out += [(cell, method, here[here["method"] == method]) for method in dict.fromkeys(here["method"])]
    return out


def analyse(exp: ExperimentReport, runs: pd.DataFrame) -> pd.DataFrame | None:
    """One row per (cell, refined method), or None when no run was refined."""
    error = error_metric(exp)
    records = []
    for cell, method, r in groups(exp, runs, f"{EVOLVED}{error}"):
        before = r[f"{EVOLVED}{error}"].to_numpy(float)
        after = r[error].to_numpy(float)
        records.append({
            "cell": cell.label, "method": method, "runs": len(r),
            "evolved_mean": before.mean(), "evolved_sd": sd(before),
            "refined_mean": after.mean(), "refined_sd": sd(after),
            "change": after.mean() / before.mean() - 1.0 if before.mean() else math.nan,
            "better_runs": int(np.sum(after < before)),
            "p": wilcoxon_p(after, before),
            "refine_iterations": float(r["refine_iterations"].mean()),
            "refine_seconds": float(r["refine_seconds"].mean()),
            "evolution_seconds": float(r["seconds"].mean()),
        })
    return pd.DataFrame.from_records(records) if records else None


def training_seconds(runs: pd.DataFrame) -> np.ndarray:
    """Each run's own training time: its evolution, plus its refinement where it has one."""
    seconds = runs["seconds"].to_numpy(float)
    if "refine_seconds" in runs.columns:
        seconds = seconds + runs["refine_seconds"].fillna(0.0).to_numpy(float)
    return seconds


def sd(values: np.ndarray) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def table(exp: ExperimentReport, frame: pd.DataFrame) -> Table:
    error = error_metric(exp)
    headers = ["cell", "method", "runs", f"evolved {error.replace('_', ' ')}", "refined",
               "change", "better", "p", "iterations", "refine s", "evolution s"]
    rows = []
    for rec in frame.to_dict("records"):
        rows.append([
            tcell(rec["cell"]), tcell(rec["method"]), tcell(rec["runs"]),
            tcell(f"{fmt_value(error, rec['evolved_mean'])} ± {fmt_value(error, rec['evolved_sd'])}"),
            tcell(f"{fmt_value(error, rec['refined_mean'])} ± {fmt_value(error, rec['refined_sd'])}"),
            tcell(f"{100 * rec['change']:+.1f} %"),
            tcell(f"{rec['better_runs']}/{rec['runs']}"),
            tcell("n/a" if not math.isfinite(rec["p"]) else f"{rec['p']:.2g}"),
            tcell(f"{rec['refine_iterations']:.0f}"),
            tcell(f"{rec['refine_seconds']:.2f}"),
            tcell(f"{rec['evolution_seconds']:.2f}"),
        ])
    caption = (
        f"{exp.name}: the refined methods' {error.replace('_', ' ')} before (evolved) and after "
        f"full-batch refinement of the consequent weights, mean ± SD over runs; the same rules "
        f"and parameters before and after. change: of the mean; better: runs whose error fell; "
        f"p: two-sided Wilcoxon signed-rank test, refined against evolved, paired by run; "
        f"iterations: L-BFGS-B iterations run (mean); refine s and evolution s: seconds per run "
        f"(mean, wall time under the campaign's load)."
    )
    return Table(f"{exp.name}: refinement", caption, headers, rows, n_left=2,
                 label=f"tab:{slug(exp.name)}-refinement")
