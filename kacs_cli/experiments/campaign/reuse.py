"""Runs copied from finished campaigns instead of trained again (the config's `reuse:` key).

Experiments overlap: the adaptive-budget experiment's KACS and XCSF at N = 6400 on f3 are
runs of the dimensional-scaling experiment, and the baselines experiment's KACS and XCSF are
the main experiment's. A run is fully determined by its identity: the cell's data (benchmark,
kind, source, path, n, samples, dataset seed, variant), the learner and every hyperparameter,
the protocol (all but its run count), iterations, evaluation spacing, semantics and the run's
split and learner seeds. The resolved config.yaml of a results folder spells all of it out,
so two runs with the same identity give the same numbers bit for bit (the engines are
deterministic) under the same engine and kernels (the runner copies from a folder whose
engine.yaml names another engine only when told to, provenance.py), and the row of one can
stand for the other: it is copied with the new
experiment, cell label and method label, its `seconds` as measured where it ran, and its
learning curve (from the per-run file or the folder's curves.csv.gz).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import curvestore, results

_SHARED = ("semantics", "iterations", "eval_every")


@dataclass(frozen=True)
class Reused:
    record: dict
    curve: pd.DataFrame | None  # canonical curve (curvestore), None when the source has none
    source: Path                # the folder it is copied from


def run_identities(resolved: results.ResolvedConfig) -> dict[str, list[tuple[str, str]]]:
    """{identity of a (cell, method) pair, without the seeds: its (cell label, method label)
    pairs} for a resolved config as written to config.yaml (two labels of one config may
    name identical runs)."""
    protocol = {k: v for k, v in (resolved.data.get("protocol") or {}).items() if k != "runs"}
    shared = {k: resolved.data.get(k) for k in _SHARED}
    out: dict[str, list[tuple[str, str]]] = {}
    for cell in resolved.cells or ():
        for method in cell.methods or resolved.methods:
            identity = json.dumps([shared, protocol, cell.data, resolved.method_engines.get(method, method),
                                   cell.settings_of(method)], sort_keys=True)
            out.setdefault(identity, []).append((cell.label, method))
    return out


@dataclass(frozen=True)
class Source:
    """A finished campaign's folder, its resolved config.yaml and its runs.csv."""

    folder: Path
    resolved: results.ResolvedConfig
    runs: pd.DataFrame


def sources(folders: Iterable[str | Path]) -> list[Source]:
    """The finished campaigns of a config's `reuse:` folders, read and checked."""
    out = []
    for folder in map(Path, folders):
        try:
            resolved = results.ResolvedConfig.read(folder)
        except results.UnreadableConfig as exc:
            raise UserError(f"reuse: {exc}; fix or remove that folder from `reuse`") from None
        if resolved is None or resolved.cells is None:
            raise UserError(f"reuse: {results.config_path(folder)} is not the resolved config `kacs run` "
                            f"writes; fix or remove that folder from `reuse`")
        out.append(Source(folder, resolved, results.read_runs_csv(results.runs_path(folder))))
    return out


def find(resolved: results.ResolvedConfig, tasks: Iterable, sources: Iterable[Source]) -> dict[str, Reused]:
    """{task key: the run copied from the first source that holds an identical one}.

    `resolved` is the target campaign's resolved config (as written to config.yaml) and
    `tasks` the runner's tasks still to do.
    """
    tasks = list(tasks)
    wanted = run_identities(resolved)
    found: dict[str, Reused] = {}
    for source in sources:
        folder, src_config, src_runs = source.folder, source.resolved, source.runs
        src_pairs = run_identities(src_config)
        # target (cell label, method) -> source (cell label, method)
        mapping = {target: pairs[0] for identity, pairs in src_pairs.items() if identity in wanted
                   for target in wanted[identity]}
        if not mapping or src_runs.empty:
            continue
        rows = {
            results.row_identity(r): r
            for r in src_runs.to_dict("records")
        }
        curves = None
        for task in tasks:
            if task.key in found:
                continue
            pair = mapping.get((task.cell.label, task.method))
            if pair is None:
                continue
            row = rows.get((*pair, task.run, task.split_seed, task.seed))
            if row is None:
                continue
            if curves is None:
                curves = curvestore.collect(folder)
            record = {**row, "experiment": resolved.experiment, "benchmark": task.cell.label,
                      "method": task.method}
            if "variant" in record and (pd.isna(record["variant"]) or record["variant"] is None):
                record["variant"] = ""
            found[task.key] = Reused(record, curves.get((pair[0], pair[1].lower(), task.run)), folder)
    return found
