"""Which experiments a results folder holds, and the index of a report over several.

`kacs report results/` finds experiment folders (those with a runs.csv) at any depth, and
names the folders below it that hold none, so nothing is left out silently.
"""

from __future__ import annotations

import re
from pathlib import Path

from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import results
from kacs_cli.reporting.model import ExperimentReport

# Folders an experiment directory owns (the runner's and the report's): never experiments.
OWNED_SUBDIRS = (*results.RUN_DIRS, "report", "figures")


def scan_experiments(results_dir: Path) -> tuple[list[Path], list[Path]]:
    """(experiment directories at any depth below RESULTS_DIR, folders skipped for holding none).

    An experiment directory is one with a runs.csv; the search does not descend into it.
    A skipped folder is reported once, at its top: results/old rather than each folder in it.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise UserError(f"results directory {results_dir} does not exist")
    found: list[Path] = []
    skipped: list[Path] = []

    def walk(folder: Path) -> bool:
        if results.has_runs(folder):
            found.append(folder)
            return True
        children = sorted(p for p in folder.iterdir()
                          if p.is_dir() and not p.name.startswith(".") and p.name not in OWNED_SUBDIRS)
        mark = len(skipped)
        hits = [walk(c) for c in children]
        if not any(hits):
            del skipped[mark:]  # the caller names this whole folder instead
            return False
        skipped.extend(c for c, hit in zip(children, hits) if not hit)
        return True

    walk(results_dir)
    if not found:
        raise UserError(f"no {results.RUNS_FILE} under {results_dir}: run `kacs run CONFIG` first")
    return found, sorted(skipped)


# The article's experiments in its order (docs/algorithm.md section 10); others follow by name.
EXPERIMENT_ORDER = ("main", "sample_scaling", "dim_scaling", "f3_variants", "alt_protocol", "suprb")


def experiment_order(exp: ExperimentReport) -> tuple:
    key = exp.name.lower()
    return (EXPERIMENT_ORDER.index(key) if key in EXPERIMENT_ORDER else len(EXPERIMENT_ORDER), key,
            exp.path.as_posix())


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def index_markdown(exps: list[ExperimentReport], skipped: list[str]) -> str:
    lines = ["## Contents", ""]
    for e in exps:
        lines.append(f"- [{e.name}](#{_anchor(e.name)}): {e.protocol} protocol, {len(e.cells)} cell(s), "
                     f"source `{e.path.as_posix()}`")
    if skipped:
        lines += ["", "Skipped (no experiment inside):", ""] + [f"- {line}" for line in skipped]
    return "\n".join(lines) + "\n"
