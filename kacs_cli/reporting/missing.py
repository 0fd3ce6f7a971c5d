"""What a campaign lacks against its config: cells without runs, short or unpaired runs."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from kacs_cli.engine import registry
from kacs_cli.engine.registry import BASELINE, PROPOSED
from kacs_cli.reporting.loading import cell_mask, describe_entry, entry_matches
from kacs_cli.reporting.model import Cell


def what_is_missing(
    runs: pd.DataFrame,
    cells: list[Cell],
    entries: list[dict],
    methods: list[str],
    expected_runs: int | None,
    planned: dict[str, list[str]] | None = None,
) -> list[str]:
    """What the campaign lacks against its config, one line each, in cell order.

    `planned` holds the methods of each cell (by runner cell label) when the config runs
    only some methods on some cells; a cell without an entry there plans them all.

    A shortfall shared by every method of a cell is one line, and one shared by every cell
    one line overall, so a campaign stopped early does not bury the real gaps.
    """
    out = []
    for entry in entries:
        if not any(entry_matches(entry, c) for c in cells):
            out.append(f"{describe_entry(entry)}: no finished runs")
    run_sets: dict[str, dict[str, set[int]]] = {}
    duplicates: dict[str, list[str]] = {}
    for cell in cells:
        in_cell = runs[cell_mask(runs, cell)]
        run_sets[cell.label] = {}
        here = (planned or {}).get(cell.cell_id)
        for method in (methods if here is None else [m for m in methods if m in here]):
            ids = in_cell.loc[in_cell["method"] == method, "run"].dropna()
            dup = sorted(int(r) for r in ids[ids.duplicated()].unique())
            if dup:
                duplicates.setdefault(cell.label, []).append(
                    f"{cell.label} {registry.label(method)}: run(s) {_ids(dup)} appear more than once; the last row is used"
                )
            run_sets[cell.label][method] = set(int(r) for r in ids)

    def uniform_short(label: str) -> int | None:
        counts = {len(v) for v in run_sets[label].values()}
        if len(counts) == 1 and expected_runs is not None and 0 < (k := counts.pop()) < expected_runs:
            return k
        return None

    shorts = [uniform_short(c.label) for c in cells]
    collapse = len(cells) > 1 and len(set(shorts)) == 1 and shorts[0] is not None
    if collapse:
        out.append(f"every cell ({len(cells)}): {shorts[0]} of {expected_runs} runs per method")
    for cell, short in zip(cells, shorts):
        sets = run_sets[cell.label]
        out += duplicates.get(cell.label, [])
        if short is not None:
            if not collapse:
                out.append(f"{cell.label}: {short} of {expected_runs} runs per method")
        else:
            for method in sets:
                k = len(sets[method])
                if k == 0:
                    out.append(f"{cell.label}: no {registry.label(method)} runs")
                elif expected_runs is not None and k < expected_runs:
                    out.append(f"{cell.label} {registry.label(method)}: {k} of {expected_runs} runs")
        if sets.get(BASELINE) and sets.get(PROPOSED):
            for a, b in ((BASELINE, PROPOSED), (PROPOSED, BASELINE)):
                only = sorted(sets[a] - sets[b])
                if only:
                    out.append(f"{cell.label}: run(s) {_ids(only)} only for {registry.label(a)} (left out of the paired tests)")
    return out


def _ids(ids: Sequence[int], limit: int = 12) -> str:
    text = ", ".join(str(i) for i in ids[:limit])
    return text + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")
