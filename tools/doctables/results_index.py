"""docs/results-index.md: every committed results folder, what it measures and what trained it."""

from __future__ import annotations

import yaml

from kacs_cli.experiments.campaign import results
from tools.doctables.common import Runs, integer, table

ENGINE_FILE = "engine.yaml"


def _engine(folder) -> str:
    """The folder's recorded engine (fingerprint prefix and commit), or that none is recorded."""
    path = folder / ENGINE_FILE
    if not path.is_file():
        return "not recorded"
    record = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    commit = record.get("commit")
    return f"`{str(record.get('fingerprint', ''))[:12]}` at {str(commit)[:7] if commit else 'no commit'}"


def t_results_index(runs: Runs) -> str:
    root = runs.root / "results"
    rows = []
    for path in sorted(root.rglob(results.RUNS_FILE)):
        folder = path.parent
        if "reproduce" in folder.relative_to(root).parts:
            continue
        config = results.ResolvedConfig.read(folder)
        description = str((config.data if config else {}).get("description", "")).replace("|", "/")
        relative = folder.relative_to(runs.root).as_posix()
        frame = runs(folder.relative_to(root).as_posix())
        rows.append([f"`{relative}`", description, integer(len(frame)), str(frame.method.nunique()),
                     _engine(folder)])
    return table(["folder", "what it measures (its config's description)", "runs", "methods", "engine"],
                 rows, ["l", "l", "r", "r", "l"])
