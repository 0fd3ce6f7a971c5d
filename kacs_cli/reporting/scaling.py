"""Scaling groups: cells of one benchmark that differ in n or sample count, and their tables.

(Scaling experiments, docs/algorithm.md section 10; the min-max scaling of the data is kacs_cli/scaling.py.)
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from kacs_cli.engine import registry
from kacs_cli.engine.registry import BASELINE, PROPOSED
from kacs_cli.experiments.campaign.metrics import metric_label
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.loading import modal
from kacs_cli.reporting.model import METHODS, PLAIN_VARIANTS, Cell, ExperimentReport, ScalingGroup
from kacs_cli.reporting.tables import Table, TCell, fmt_sd, fmt_value, tcell


def scaling_groups(cells: list[Cell]) -> list[ScalingGroup]:
    """Cells of one benchmark and variant that differ in n or sample count, two or more."""
    groups: dict[tuple[str, str], list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.benchmark, c.variant), []).append(c)
    out = []
    for (bench, variant), members in groups.items():
        if len(members) < 2:
            continue
        variables = tuple(v for v in ("n", "samples") if len({getattr(c, v) for c in members}) > 1)
        if not variables:
            continue
        modal_N = modal(c.N for c in members)
        # at one n: the usual budget first, then the other budgets ascending
        ordered = sorted(
            members, key=lambda c: tuple(getattr(c, v) or 0 for v in variables) + (c.N != modal_N, c.N or 0)
        )
        out.append(ScalingGroup(bench, variant, variables, tuple(ordered), modal_N))
    return out


def _scaling_metrics(exp: ExperimentReport) -> list[str]:
    return [m for m in exp.metrics if m.startswith("test_") or m in ("rules", "params")]


def scaling_table(exp: ExperimentReport, group: ScalingGroup) -> Table:
    """One row per n or N_S (and budget): both methods side by side for each metric. A cell
    at another budget (the guideline N) sits right below the usual-budget row of its n."""
    metrics = _scaling_metrics(exp)
    key_headers = [("n" if v == "n" else "N_S") for v in group.variables]
    show_N = len({c.N for c in group.cells}) > 1
    if show_N:
        key_headers.append("N")
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    headers = list(key_headers)
    for metric in metrics:
        headers += [f"{metric_label(metric)} {registry.label(BASELINE)}", registry.label(PROPOSED)]
    headers.append("runs")
    rows: list[list[TCell]] = []
    for cell in group.cells:
        row = [tcell(getattr(cell, v)) for v in group.variables] + ([tcell(cell.N)] if show_N else [])
        runs = 0
        for metric in metrics:
            s = stats_by.loc[(cell.label, metric)]
            for method in METHODS:
                runs = max(runs, int(s[f"{method}_runs"]))
                mean, sd = s[f"{method}_mean"], s[f"{method}_sd"]
                text = "n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"
                row.append(tcell(text, s["best"] in (method, "tie"), s["symbol"] if method == BASELINE else ""))
        row.append(tcell(runs))
        rows.append(row)
    what = " and ".join("n" if v == "n" else "sample count N_S" for v in group.variables)
    name = group.benchmark + ("" if group.variant.lower() in PLAIN_VARIANTS else f" {group.variant}")
    budget = ""
    if show_N:
        budget = (f" Rows with N other than {group.modal_N} (the budget guideline N = 24 n (2n + 1) "
                  f"where it applies) follow the N = {group.modal_N} row of the same n.")
    caption = (
        f"{exp.name}: {name} against {what}; mean ± SD over runs of XCSF and KACS, XCSF's symbol "
        f"against KACS, best mean in bold.{budget}"
    )
    return Table(f"{exp.name}: scaling of {name}", caption, headers, rows, n_left=len(key_headers),
                 label=f"tab:{slug(exp.name)}-scaling-{slug(name)}")


def scaling_csv(exp: ExperimentReport, group: ScalingGroup) -> pd.DataFrame:
    """The scaling table's numbers, one row per cell."""
    records = []
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    for cell in group.cells:
        rec: dict[str, Any] = {"benchmark": cell.benchmark, "variant": cell.variant, "n": cell.n,
                               "samples": cell.samples, "N": cell.N, "cell": cell.label}
        for metric in _scaling_metrics(exp):
            s = stats_by.loc[(cell.label, metric)]
            for col in (f"{BASELINE}_mean", f"{BASELINE}_sd", f"{PROPOSED}_mean", f"{PROPOSED}_sd", "symbol"):
                rec[f"{metric}_{col}"] = s[col]
        records.append(rec)
    return pd.DataFrame.from_records(records)
