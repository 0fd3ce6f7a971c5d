"""Accuracy against model size: per cell each method's point (mean test error, mean parameter
count), the Pareto front of the readable methods, and for a readable method off the front the
front method that dominates it and by how much.

Readable: a baseline whose registry entry says so (`Entry.readable`: EBM, FIGS, RuleFit,
X-KAN) and a learner's compacted model (a method whose runs record `compacted_*` columns).
Every other method (an uncompacted learner, the KAN, gradient boosting) is a reference: drawn
beside the front, never on it. A compacted method's point is its compacted model
(`compacted_test_<error>`, `compacted_params`), every other method's its final model
(`test_<error>`, `params`). Points are means over the runs that every method of the cell has
(paired), so that no method's mean rests on splits another's lacks.

A campaign gets this section when one of its methods is a readable baseline; the compaction
campaigns, whose only readable models are compacted learners, keep their own table and figure
(reporting/compaction.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kacs_cli import baselines
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.metrics import COMPACTED_OF
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.loading import cell_mask, compacted_rows, config_methods
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.tables import Table, fmt_value, tcell

READABLE, REFERENCE = "readable", "reference"
SIZE = "params"


@dataclass
class Pareto:
    """The section's numbers: `points` one row per (cell, method), `summary` one per method,
    `notes` what a cell left out and why."""

    points: pd.DataFrame
    summary: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def engine_of(config: results.ResolvedConfig, method: str) -> str:
    """The learner or baseline a method label runs (the label itself unless the config maps it)."""
    return str(config.method_engines.get(method, method))


def readable_baseline(engine: str) -> bool:
    entry = baselines.find(engine)
    return entry is not None and entry.readable


def applies(config: results.ResolvedConfig, methods) -> bool:
    """Does a campaign with these methods (planned or run) get the section?"""
    return any(readable_baseline(engine_of(config, m)) for m in methods)


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """(error, params) a dominates b: no worse in both, better in one."""
    return a[0] <= b[0] and a[1] <= b[1] and (a[0] < b[0] or a[1] < b[1])


def front(points: pd.DataFrame) -> pd.DataFrame:
    """The readable front of one cell's points (columns method, kind, test_error, params).

    Adds on_front (None for a reference), tied_with (front methods at the very same point),
    dominated_by (of a readable point off the front: the most accurate front point that
    dominates it, fewer params then name breaking ties) and its error_ratio and params_ratio
    (this point's over that one's, both >= 1, one > 1). Two readable points equal in both
    coordinates do not dominate each other: both are on the front, or both off it.
    """
    out = points.copy()
    readable = out[out["kind"] == READABLE]
    coords = {m: (e, p) for m, e, p in zip(readable["method"], readable["test_error"], readable["params"])}
    on = {m: not any(dominates(q, c) for o, q in coords.items() if o != m) for m, c in coords.items()}
    leaders = sorted((m for m in coords if on[m]), key=lambda m: (coords[m][0], coords[m][1], m))
    columns = {"on_front": [], "tied_with": [], "dominated_by": [], "error_ratio": [], "params_ratio": []}
    for method, kind in zip(out["method"], out["kind"]):
        here = {"on_front": None, "tied_with": "", "dominated_by": "", "error_ratio": math.nan,
                "params_ratio": math.nan}
        if kind == READABLE:
            c = coords[method]
            here["on_front"] = on[method]
            if on[method]:
                here["tied_with"] = ", ".join(o for o in leaders if o != method and coords[o] == c)
            else:
                leader = next(o for o in leaders if dominates(coords[o], c))
                here["dominated_by"] = leader
                here["error_ratio"] = c[0] / coords[leader][0] if coords[leader][0] > 0 else math.inf
                here["params_ratio"] = c[1] / coords[leader][1] if coords[leader][1] > 0 else math.inf
        for key, value in here.items():
            columns[key].append(value)
    for key, values in columns.items():
        out[key] = values
    return out


def _per_run(rows: pd.DataFrame, error_column: str, size_column: str) -> pd.DataFrame:
    """(test_error, params) by run id, runs lacking either left out."""
    if error_column not in rows.columns or size_column not in rows.columns:
        return pd.DataFrame(columns=["test_error", "params"])
    frame = pd.DataFrame({"test_error": pd.to_numeric(rows[error_column], errors="coerce").to_numpy(),
                          "params": pd.to_numeric(rows[size_column], errors="coerce").to_numpy()},
                         index=rows["run"].astype(int).to_numpy())
    return frame.dropna()


def analyse(exp: ExperimentReport, runs: pd.DataFrame, config: results.ResolvedConfig) -> Pareto | None:
    """The points and fronts of every cell (from the runs as recorded, compacted_* columns
    beside the trained model's), or None when the campaign has no readable baseline."""
    if not applies(config, [*config_methods(config), *dict.fromkeys(runs["method"])]):
        return None
    error = f"test_{exp.error}"
    compacted = set(runs.loc[compacted_rows(runs), "method"])
    records, notes = [], []
    for cell in exp.cells:
        here = runs[cell_mask(runs, cell)]
        per_method, unsized = {}, []
        for method in dict.fromkeys(here["method"]):
            rows = here[here["method"] == method]
            if method in compacted:
                columns = (COMPACTED_OF[error], COMPACTED_OF[SIZE])
                rows = rows[compacted_rows(rows)]
            else:
                columns = (error, SIZE)
            values = _per_run(rows, *columns)
            if values.empty:
                unsized.append(method)
                continue
            kind = READABLE if method in compacted or readable_baseline(engine_of(config, method)) else REFERENCE
            per_method[method] = (kind, columns, values)
        if unsized:
            notes.append(f"{cell.label}: no run with both {error} and {SIZE} for {', '.join(unsized)}, not drawn")
        if not per_method:
            continue
        common = sorted(set.intersection(*(set(v.index) for _, _, v in per_method.values())))
        if not common:
            notes.append(f"{cell.label}: no run that every method ({', '.join(per_method)}) has; no points")
            continue
        most = max(len(v) for _, _, v in per_method.values())
        if len(common) < most:
            notes.append(f"{cell.label}: {len(common)} run(s) that every method has, of up to {most} a method has")
        points = pd.DataFrame.from_records([
            {"cell": cell.label, "method": method, "kind": kind, "source": ", ".join(columns), "runs": len(common),
             "test_error": float(values.loc[common, "test_error"].mean()),
             "params": float(values.loc[common, "params"].mean())}
            for method, (kind, columns, values) in per_method.items()])
        points = front(points)
        # Readable first, each kind from the smallest model up.
        points = points.sort_values(["kind", "params", "test_error", "method"], kind="stable",
                                    key=lambda s: s.map({READABLE: 0, REFERENCE: 1}) if s.name == "kind" else s)
        records.append(points)
    if not records:
        return Pareto(pd.DataFrame(), pd.DataFrame(), notes)
    frame = pd.concat(records, ignore_index=True)
    return Pareto(frame, _summary(frame), notes)


def _summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per method (readable first, in first appearance): on how many cells it has a point and on
    how many it is on the readable front, and which."""
    out = []
    for method, rows in points.groupby("method", sort=False):
        readable = rows["kind"].iloc[0] == READABLE
        on = rows[rows["on_front"] == True]  # noqa: E712 - None for references
        out.append({"method": method, "kind": rows["kind"].iloc[0], "cells": len(rows),
                    "on_front": len(on) if readable else math.nan,
                    "front_cells": ", ".join(on["cell"]) if readable else ""})
    frame = pd.DataFrame.from_records(out)
    return frame.sort_values("kind", kind="stable", key=lambda s: s.map({READABLE: 0, REFERENCE: 1}),
                             ignore_index=True)


def _ratio(x: float) -> str:
    return "" if not math.isfinite(x) else f"{x:.2f}"


def _front_text(rec: dict) -> str:
    if rec["kind"] != READABLE:
        return "reference"
    if not rec["on_front"]:
        return "no"
    return f"yes (tied with {rec['tied_with']})" if rec["tied_with"] else "yes"


def tables(exp: ExperimentReport) -> list[Table]:
    """One table per cell, then the summary over the cells."""
    par = exp.pareto
    if par is None or par.points.empty:
        return []
    error = exp.error
    word = f"test {error.upper()}"
    out = []
    for cell, frame in par.points.groupby("cell", sort=False):
        rows = []
        for rec in frame.to_dict("records"):
            rows.append([tcell(rec["method"]), tcell(rec["kind"]), tcell(_front_text(rec)),
                         tcell(rec["dominated_by"]), tcell(rec["source"]),
                         tcell(fmt_value(f"test_{error}", rec["test_error"])), tcell(f"{rec['params']:,.0f}"),
                         tcell(_ratio(rec["error_ratio"])), tcell(_ratio(rec["params_ratio"]))])
        runs = int(frame["runs"].iloc[0])
        caption = (
            f"{exp.name}, {cell}: {word} against parameters, means over the {runs} run{'s' if runs != 1 else ''} "
            f"that every method here has (paired). from: the {results.RUNS_FILE} columns a point comes from "
            f"(a compacted method's compacted model). front: on the Pareto front of the readable methods (no "
            f"other readable point has a lower or equal {error.upper()} and fewer or equal parameters with one of "
            f"them strictly lower; readable points equal in both are both on it, tied); references are drawn "
            f"beside it. "
            f"dominated by: the most accurate front method that dominates a point off the front; {error.upper()} "
            f"ratio and params ratio: this point's over that one's.")
        out.append(Table(f"{exp.name}: accuracy against size, {cell}", caption,
                         ["method", "kind", "front", "dominated by", "from", word, "params",
                          f"{error.upper()} ratio", "params ratio"],
                         rows, n_left=5, label=f"tab:{slug(exp.name)}-pareto-{slug(str(cell))}"))
    rows = [[tcell(r["method"]), tcell(r["kind"]),
             tcell(f"{r['on_front']:.0f} of {r['cells']}" if math.isfinite(r["on_front"]) else ""),
             tcell(r["front_cells"])]
            for r in par.summary.to_dict("records")]
    cells = par.points["cell"].nunique()
    caption = (f"{exp.name}: on how many cells each readable method is on the readable front ({word} "
               f"against parameters, paired means), of the cells where it has a point ({cells} cells have "
               f"points); references are never on it.")
    out.append(Table(f"{exp.name}: the readable front", caption, ["method", "kind", "on front", "which cells"],
                     rows, n_left=4, label=f"tab:{slug(exp.name)}-pareto-summary"))
    return out


def figure_points(exp: ExperimentReport) -> pd.DataFrame | None:
    par = exp.pareto
    return None if par is None or par.points.empty else par.points


def front_line(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The front's points by parameters (params, test_error), for a staircase drawn through them."""
    on = points[points["on_front"] == True].sort_values(["params", "test_error"])  # noqa: E712
    return on["params"].to_numpy(float), on["test_error"].to_numpy(float)
