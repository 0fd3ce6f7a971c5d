"""The capacity table: what the capacity search (engine/capacity.py) chose for each searching
method's runs, and what choosing cost, from the `capacity_N` and `capacity_seconds` columns
those runs record.

Per cell and searching method: how often each budget N was chosen, the search's seconds (the
candidates trained on the train rows less the held-out part) beside the seconds of the run's
own fit at the chosen budget (evolution plus refinement, if any), and their ratio per run
(mean and largest): the cost of choosing, in fits at the chosen setting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kacs_cli.reporting.files import slug
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.refinement import groups, training_seconds
from kacs_cli.reporting.tables import Table, tcell

CHOSEN, SEARCH_SECONDS = "capacity_N", "capacity_seconds"


def chosen_counts(chosen: pd.Series) -> str:
    """'6400 x 12, 12800 x 18': each budget chosen and how often, smallest first."""
    counts = chosen.astype(int).value_counts().sort_index()
    return ", ".join(f"{N} x {k}" for N, k in counts.items())


def analyse(exp: ExperimentReport, runs: pd.DataFrame) -> pd.DataFrame | None:
    """One row per (cell, searching method), or None when no run searched."""
    records = []
    for cell, method, r in groups(exp, runs, CHOSEN):
        fit = training_seconds(r)
        search = r[SEARCH_SECONDS].to_numpy(float)
        ratio = search / fit
        records.append({
            "cell": cell.label, "method": method, "runs": len(r),
            "chosen": chosen_counts(r[CHOSEN]), "chosen_median": float(np.median(r[CHOSEN].to_numpy(float))),
            "search_seconds": float(search.mean()), "fit_seconds": float(fit.mean()),
            "cost_ratio": float(ratio.mean()), "cost_ratio_max": float(ratio.max()),
        })
    return pd.DataFrame.from_records(records) if records else None


def table(exp: ExperimentReport, frame: pd.DataFrame) -> Table:
    headers = ["cell", "method", "N chosen (times)", "runs", "search s", "fit s", "search / fit", "largest"]
    rows = [[tcell(rec["cell"]), tcell(rec["method"]), tcell(rec["chosen"]), tcell(rec["runs"]),
             tcell(f"{rec['search_seconds']:.1f}"), tcell(f"{rec['fit_seconds']:.1f}"),
             tcell(f"{rec['cost_ratio']:.2f}"), tcell(f"{rec['cost_ratio_max']:.2f}")]
            for rec in frame.to_dict("records")]
    caption = (
        f"{exp.name}: the capacity search of the methods that search (capacity: search). N chosen: "
        f"each budget chosen on the held-out part of the train rows and in how many runs; search s: "
        f"the candidates' training, seconds per run (mean); fit s: the run's own fit at the chosen "
        f"budget on all the train rows (evolution plus refinement, if any); search / fit: their ratio "
        f"per run, mean and largest, the cost of choosing in fits at the chosen setting (wall times "
        f"under the campaign's load, taken in the same process one after the other)."
    )
    return Table(f"{exp.name}: capacity search", caption, headers, rows, n_left=3,
                 label=f"tab:{slug(exp.name)}-capacity")
