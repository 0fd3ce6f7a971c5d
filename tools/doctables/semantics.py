"""The ablation of the article's prose against the authors' code (docs/algorithm.md, "Two
semantics"): each switch on top of `reference` against the unswitched learner, 10 paired runs
on the eight main benchmarks, from the report's variants table."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting.loading import load_config
from kacs_cli.reporting.variants import away_from_defaults, summary

from tools.doctables.common import ALPHA, Runs, integer, name, table

ABLATION = "ablation_semantics"


def switch_of(settings: dict, base: dict) -> str:
    """The settings a variant adds to its base (`+`-joined if several)."""
    variant, base = away_from_defaults(settings), away_from_defaults(base)
    return " + ".join(k for k, v in variant.items() if k not in base or base[k] != v)


def ablation(runs: Runs, folder: str = ABLATION) -> tuple[pd.DataFrame, dict]:
    """(the report's variants table, variant -> the switch it adds to its base)."""
    frame = runs.report(folder, "variants")
    first = next(c for c in load_config(runs.root / "results" / folder).cells if c.settings)
    variants = dict(zip(frame["variant"], frame["base"]))
    return frame, {v: switch_of(first.settings_of(v), first.settings_of(b)) for v, b in variants.items()}


def _range(lo: float, hi: float) -> str:
    return f"{lo:+.1f} %" if f"{lo:+.1f}" == f"{hi:+.1f}" else f"{lo:+.1f} to {hi:+.1f} %"


def _moved(group: pd.DataFrame) -> str:
    """The cells where a mean moved significantly (Holm), with the change."""
    out = []
    for metric, word in (("error", "MAE"), ("rules", "rules")):
        hit = group[group[f"{metric}_p_holm"] < ALPHA]
        out += [f"{name(c)} {word} {x:+.1f} %" for c, x in zip(hit["cell"], hit[f"{metric}_change_pct"])]
    return ", ".join(out) or "none"


def t_semantics_ablation(runs: Runs) -> str:
    """Each switch against the unswitched learner: the cells run, those identical in every run,
    the range of the change of the mean test MAE and rule count, and the cells where either
    moved significantly (paired two-sided Wilcoxon, Holm over the switch's cells)."""
    frame, switches = ablation(runs)
    rows = []
    for _, s in summary(frame).iterrows():
        group = frame[frame["variant"] == s["variant"]]
        rows.append([f"`{switches[s['variant']]}`", s["base"].upper(), f"{s['cells']} x {group['n_pairs'].min()}",
                     str(s["identical_cells"]), _range(s["error_change_min"], s["error_change_max"]),
                     _range(s["rules_change_min"], s["rules_change_max"]), _moved(group)])
    head = ["switch", "learner", "cells x runs", "identical cells", "test MAE change", "rules change",
            "moved significantly (Holm)"]
    return table(head, rows, ["l", "l", "r", "r", "r", "r", "l"])


def v_switch_effect(runs: Runs, switch: str | None) -> str:
    """One switch's effect in a few words, for the differences table: per learner it concerns,
    the cells where test MAE or rules moved significantly, else the largest change."""
    frame, switches = ablation(runs)
    parts = []
    for variant, group in frame.groupby("variant", sort=False):
        if switches[variant] != switch:
            continue
        learner = group["base"].iloc[0].upper()
        if (group["identical"] == group["n_pairs"]).all():
            parts.append(f"{learner}: identical runs on {len(group)} of {len(group)}")
            continue
        moved = _moved(group)
        if moved == "none":
            err = group["error_change_pct"].abs().max()
            rules = group["rules_change_pct"].abs().max()
            moved = f"none (at most {err:.1f} % MAE, {rules:.1f} % rules)"
        parts.append(f"{learner}: {moved}")
    return "; ".join(parts) or "not measured"


def v_ablation_runs(runs: Runs, _: str | None) -> str:
    return integer(len(runs(ABLATION)))
