"""The ablation of the article's prose against the authors' code (docs/algorithm.md, "Two
semantics", and its line of docs/results-summary.md): each switch on top of `reference`
against the unswitched learner, 10 paired runs on the eight main benchmarks, from the report's
variants table."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting.quoted.common import ALPHA, Quoted, Source, name, table, values
from kacs_cli.reporting.variants import away_from_defaults, summary


def switch_of(settings: dict, base: dict) -> str:
    """The settings a variant adds to its base (`+`-joined if several)."""
    variant, base = away_from_defaults(settings), away_from_defaults(base)
    return " + ".join(k for k, v in variant.items() if k not in base or base[k] != v)


def _range(lo: float, hi: float) -> str:
    return f"{lo:+.1f} %" if f"{lo:+.1f}" == f"{hi:+.1f}" else f"{lo:+.1f} to {hi:+.1f} %"


def _moved(group: pd.DataFrame) -> str:
    """The cells where a mean moved significantly (Holm), with the change."""
    out = []
    for metric, label in (("error", "MAE"), ("rules", "rules")):
        hit = group[group[f"{metric}_p_holm"] < ALPHA]
        out += [f"{name(c)} {label} {x:+.1f} %" for c, x in zip(hit["cell"], hit[f"{metric}_change_pct"])]
    return ", ".join(out) or "none"


def ablation(src: Source) -> Quoted:
    """Each switch against the unswitched learner: the cells run, those identical in every run,
    the range of the change of the mean test MAE and rule count, and the cells where either
    moved significantly (paired two-sided Wilcoxon, Holm over the switch's cells); per switch
    its effect in a few words (per learner it concerns, the cells where test MAE or rules
    moved significantly, else the largest change)."""
    frame = src.report("variants")
    first = next(c for c in src.config.cells if c.settings)
    switches = {v: switch_of(first.settings_of(v), first.settings_of(b)) for v, b in zip(frame["variant"], frame["base"])}
    rows = []
    for _, s in summary(frame).iterrows():
        group = frame[frame["variant"] == s["variant"]]
        rows.append([f"`{switches[s['variant']]}`", s["base"].upper(), f"{s['cells']} x {group['n_pairs'].min()}",
                     str(s["identical_cells"]), _range(s["error_change_min"], s["error_change_max"]),
                     _range(s["rules_change_min"], s["rules_change_max"]), _moved(group)])
    out = table("switches", ["switch", "learner", "cells x runs", "identical cells", "test MAE change", "rules change",
                             "moved significantly (Holm)"], rows)
    effects: dict[str, list[str]] = {}
    for variant, group in frame.groupby("variant", sort=False):
        learner = group["base"].iloc[0].upper()
        if (group["identical"] == group["n_pairs"]).all():
            effect = f"identical runs on {len(group)} of {len(group)}"
        else:
            effect = _moved(group)
            if effect == "none":
                err, rules = group["error_change_pct"].abs().max(), group["rules_change_pct"].abs().max()
                effect = f"none (at most {err:.1f} % MAE, {rules:.1f} % rules)"
        effects.setdefault(switches[variant], []).append(f"{learner}: {effect}")
    out.update(table("effects", ["switch", "effect"], [[s, "; ".join(parts)] for s, parts in effects.items()]))
    moved = frame[(frame["error_p_holm"] < ALPHA) | (frame["rules_p_holm"] < ALPHA)]
    identical = [v for v, g in frame.groupby("variant") if (g["identical"] == g["n_pairs"]).all()]
    out.update(values(headline=f"of {len(switches)} switch-learner pairs, {moved['variant'].nunique()} move a mean "
                               f"test MAE or rule count significantly on some benchmark (Holm over 8); under "
                               f"{len(identical)}, every run is identical to the default's"))
    return out


EXPERIMENTS = {"ablation_semantics": (ablation,)}
