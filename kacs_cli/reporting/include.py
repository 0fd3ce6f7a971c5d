"""Cells a report takes from another experiment's results (`report: {include: ...}`).

The SupRB comparison shares four datasets with the alternative-protocol experiment: same
protocol, splits, seeds and settings, hence the same runs. Its config says so:

    report:
      include: {experiment: alt_protocol, benchmarks: [asn, ccpp, cs, eec]}

and the report reads those cells from the folder of that experiment beside this one
(results/paper/alt_protocol next to results/paper/suprb): the folder named after the
experiment, else any sibling folder whose config.yaml names it. Settings that would make
the included runs a different experiment (protocol, iterations, semantics, methods, the
included cells' hyperparameters against this experiment's shared ones) are compared and
any difference is reported beside the tables.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.reporting.loading import PlannedCell, config_benchmarks, load_config, load_runs

# What must agree between an experiment and one it includes cells from.
SHARED_SETTINGS = ("semantics", "methods", "protocol", "iterations", "eval_every")


@dataclass
class Included:
    """Runs and planned cells taken from other experiments, with what to tell the reader."""

    runs: pd.DataFrame | None = None
    entries: list[dict] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # "asn, ccpp, cs, eec from `results/paper/alt_protocol`"
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find_sibling(exp_dir: Path, name: str) -> Path | None:
    """The results folder of experiment `name` beside exp_dir, or None."""
    parent = Path(exp_dir).resolve().parent
    direct = parent / name
    candidates = [direct] + sorted(p for p in parent.iterdir() if p.is_dir() and p != direct) if parent.is_dir() else []
    for folder in candidates:
        if folder.resolve() == Path(exp_dir).resolve() or not results.has_runs(folder):
            continue
        recorded = load_config(folder).experiment
        if recorded == name or (recorded is None and folder.name == name):
            return folder
    return None


def _display(path: Path, exp_dir: Path) -> str:
    # in the form the user gave the experiment's own path: absolute, or relative to here
    if Path(exp_dir).is_absolute():
        return path.resolve().as_posix()
    return Path(os.path.relpath(path.resolve(), Path.cwd())).as_posix()


def _differences(ours: results.ResolvedConfig, theirs: results.ResolvedConfig) -> list[str]:
    out = []
    for key in SHARED_SETTINGS:
        a, b = ours.data.get(key), theirs.data.get(key)
        if a is not None and b is not None and a != b:
            out.append(key)
    return out


def _cell_matches(cell: PlannedCell, wanted: tuple[str, ...] | None) -> bool:
    if wanted is None:
        return True
    names = {(cell.label or "").lower(), cell.name.lower()}
    return bool(names & {w.lower() for w in wanted})


def load_included(exp_dir: Path, config: results.ResolvedConfig, own_labels: set[str]) -> Included:
    """Runs (report-ready, as loading.load_runs gives them) of every included cell."""
    result = Included()
    frames = []
    for spec in config.includes:
        name, wanted = spec.experiment, spec.benchmarks
        what = ", ".join(wanted) if wanted else "every cell"
        folder = find_sibling(exp_dir, name)
        if folder is None:
            result.missing.append(
                f"included experiment {name} ({what}): no results folder of it beside {exp_dir} "
                f"(expected {Path(exp_dir).parent / name}); run its config with --out there"
            )
            continue
        other = load_config(folder)
        entries = [e for e in config_benchmarks(other) if _cell_matches(e, wanted)]
        labels = {e.shown for e in entries}
        clash = sorted(labels & own_labels)
        if clash:
            result.notes.append(f"{', '.join(clash)} from {name} left out: this experiment has cells of that name")
            entries = [e for e in entries if e.shown not in clash]
            labels -= set(clash)
        if wanted:
            absent = [w for w in wanted if not any(_cell_matches(e, [w]) for e in entries) and w not in clash]
            if absent:
                result.missing.append(f"included experiment {name} has no cell {', '.join(absent)}")
        runs = load_runs(folder, other)
        runs = runs[runs["cell_id"].isin(labels)]
        frames.append(runs)
        result.entries += entries
        shown = ", ".join(e.shown for e in entries) or "no cells"
        result.sources.append(f"{shown} from `{_display(folder, exp_dir)}`")
        diffs = _differences(config, other)
        if diffs:
            result.notes.append(
                f"the cells included from {name} were run with other settings than this experiment "
                f"(differs in: {', '.join(diffs)}): they are not the same experiment"
            )
    if frames:
        result.runs = pd.concat(frames, ignore_index=True)
    return result
