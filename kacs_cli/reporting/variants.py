"""Variants against their base: what one setting changed, per cell, over paired runs.

A learner method is a variant of another of the same learner (its base) when the base's
settings away from the learner's defaults are a strict part of the variant's, with the same
values: `xcsf-vote: {method: xcsf, article_deletion_vote: true}` against `xcsf`, or
`kacs-qr-n12800` (quantile, refined, N = 12,800) against `kacs-quantile-refined`. The base is
the one it extends by a single setting (the first listed of several), so each variant is read
against the one change it adds; a variant that adds several settings to every such method
(all twelve switches at once) is read against the plainest (fewest settings). Per cell and variant: the base's and the variant's mean test error and
rule count over the runs both have, the change of each mean, the paired two-sided Wilcoxon p,
Holm-adjusted over the variant's cells, and how many pairs were identical in both.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
import pandas as pd

from kacs_cli.engine.params import Hyperparameters
from kacs_cli.experiments.campaign import results
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.kstats import holm
from kacs_cli.reporting.loading import cell_mask
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.stats import ALPHA, wilcoxon_p
from kacs_cli.reporting.tables import Table, fmt_value, tcell

_DEFAULTS = {name: getattr(Hyperparameters(), name) for name in Hyperparameters.__dataclass_fields__}


def away_from_defaults(settings: Any) -> dict | None:
    """The settings a learner method holds away from the defaults; None for a baseline."""
    if not isinstance(settings, dict) or "estimator" in settings:
        return None
    return {k: v for k, v in settings.items() if k not in _DEFAULTS or _DEFAULTS[k] != v}


def bases(config: results.ResolvedConfig, methods: list[str]) -> dict[str, str]:
    """variant -> its base, from the settings of the config's first cell that writes them."""
    cell = next((c for c in config.cells or () if c.settings), None)
    if cell is None:
        return {}
    engine = {m: config.method_engines.get(m, m) for m in methods}
    away = {m: away_from_defaults(cell.settings_of(m)) for m in methods}
    found = {}
    for variant in methods:
        if away[variant] is None:
            continue
        candidates = [b for b in methods if b != variant and away[b] is not None and engine[b] == engine[variant]
                      and len(away[b]) < len(away[variant])
                      and all(k in away[variant] and away[variant][k] == v for k, v in away[b].items())]
        one_more = [b for b in candidates if len(away[b]) == len(away[variant]) - 1]
        if one_more:
            found[variant] = one_more[0]
        elif candidates:  # several changes at once (e.g. every switch): read against the plainest
            found[variant] = min(candidates, key=lambda b: (len(away[b]), methods.index(b)))
    return found


def _change(base: float, variant: float) -> float:
    return 100.0 * (variant / base - 1.0) if base else math.nan


def compare(cells: Iterable[tuple[str, pd.DataFrame]], found: dict[str, str], error: str) -> pd.DataFrame | None:
    """One row per (cell, variant) of `found` (variant -> base), from each cell's runs (final
    models, a `method` and a `run` column): the base's and the variant's means of `error` and
    of the rule count over their paired runs, the changes, the Wilcoxon p and its Holm
    adjustment over the variant's cells (`kstats.holm`: a missing p is left out of the
    family); None when no pair has runs."""
    cells = list(cells)
    records = []
    for variant, base in found.items():
        for label, here in cells:
            pair = pd.concat([here[here["method"] == m].set_index("run")[[error, "rules"]].add_prefix(f"{side}_")
                              for side, m in (("base", base), ("variant", variant))], axis=1, join="inner").dropna()
            if pair.empty:
                continue
            rec = {"cell": label, "variant": variant, "base": base, "n_pairs": len(pair),
                   "identical": int(((pair[f"base_{error}"] == pair[f"variant_{error}"])
                                     & (pair["base_rules"] == pair["variant_rules"])).sum())}
            for metric, column in (("error", error), ("rules", "rules")):
                x, y = pair[f"base_{column}"], pair[f"variant_{column}"]
                rec[f"base_{metric}"], rec[f"variant_{metric}"] = float(x.mean()), float(y.mean())
                rec[f"{metric}_change_pct"] = _change(float(x.mean()), float(y.mean()))
                rec[f"{metric}_p"] = wilcoxon_p(x, y)
            records.append(rec)
    if not records:
        return None
    frame = pd.DataFrame(records)
    for metric in ("error", "rules"):
        frame[f"{metric}_p_holm"] = np.nan
        for _, idx in frame.groupby("variant", sort=False).groups.items():
            frame.loc[idx, f"{metric}_p_holm"] = holm(frame.loc[idx, f"{metric}_p"].to_numpy())
    return frame


def analyse(exp: ExperimentReport, final: pd.DataFrame, config: results.ResolvedConfig,
            methods: list[str]) -> pd.DataFrame | None:
    """compare() over the experiment's cells, each variant against its base (bases())."""
    return compare(((cell.label, final[cell_mask(final, cell)]) for cell in exp.cells),
                   bases(config, methods), f"test_{exp.error}")


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per variant: over how many cells it ran, in how many its change of each mean was
    significant (Holm) up and down, the range of the changes, and the cells identical in
    every pair."""
    rows = []
    for variant, group in frame.groupby("variant", sort=False):
        row = {"variant": variant, "base": group["base"].iloc[0], "cells": len(group),
               "identical_cells": int((group["identical"] == group["n_pairs"]).sum())}
        for metric in ("error", "rules"):
            significant = group[f"{metric}_p_holm"] < ALPHA
            change = group[f"{metric}_change_pct"]
            row[f"{metric}_lower"] = int((significant & (change < 0)).sum())
            row[f"{metric}_higher"] = int((significant & (change > 0)).sum())
            row[f"{metric}_change_min"], row[f"{metric}_change_max"] = float(change.min()), float(change.max())
        rows.append(row)
    return pd.DataFrame(rows)


def _pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:+.1f} %"


def _p(p: float) -> str:
    return "n/a" if not math.isfinite(p) else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def tables(exp: ExperimentReport, frame: pd.DataFrame) -> list[Table]:
    error = exp.error_word
    rows = [[tcell(r["variant"]), tcell(r["base"]), tcell(r["cells"]), tcell(r["identical_cells"]),
             tcell(f"{r['error_lower']} / {r['error_higher']}"),
             tcell(f"{_pct(r['error_change_min'])} to {_pct(r['error_change_max'])}"),
             tcell(f"{r['rules_lower']} / {r['rules_higher']}"),
             tcell(f"{_pct(r['rules_change_min'])} to {_pct(r['rules_change_max'])}")]
            for _, r in summary(frame).iterrows()]
    overview = Table(
        title=f"{exp.name}: each variant against its base",
        caption=(f"A variant's base is the method of the same learner whose settings it extends by one change. "
                 f"Cells where the variant's mean test {error} (rules) is significantly lower / higher than its "
                 f"base's (paired two-sided Wilcoxon over the runs both have, Holm over the variant's cells, "
                 f"alpha = {ALPHA}), the range of the change of the means, and the cells where every pair of runs "
                 f"had the same test {error} and rule count."),
        headers=["variant", "base", "cells", "identical", f"{error} lower / higher", f"{error} change",
                 "rules lower / higher", "rules change"],
        rows=rows, n_left=2, label=f"{slug(exp.name)}-variants")
    detail_rows = [[tcell(r["cell"]), tcell(r["variant"]), tcell(r["n_pairs"]),
                    tcell(fmt_value(exp.error, r["base_error"])), tcell(fmt_value(exp.error, r["variant_error"])),
                    tcell(_pct(r["error_change_pct"])), tcell(_p(r["error_p_holm"])),
                    tcell(fmt_value("rules", r["base_rules"])), tcell(fmt_value("rules", r["variant_rules"])),
                    tcell(_pct(r["rules_change_pct"])), tcell(_p(r["rules_p_holm"]))]
                   for _, r in frame.iterrows()]
    detail = Table(
        title=f"{exp.name}: each variant against its base, per cell",
        caption=f"Means over the paired runs; p: paired two-sided Wilcoxon, Holm over the variant's cells.",
        headers=["cell", "variant", "pairs", f"base test {error}", f"test {error}", "change", "p (Holm)",
                 "base rules", "rules", "change", "p (Holm)"],
        rows=detail_rows, n_left=2, label=f"{slug(exp.name)}-variants-cells")
    return [overview, detail]
