"""Reading an experiment folder: its config, its runs, and the cells the tables show.

runs.csv holds one row per finished run; `load_runs` gives it the report's columns (cell_id,
benchmark, variant, n, samples, N), `cells_of` groups the rows into labelled, ordered cells,
`method_values` picks one method's metric in one cell, and `final_models` shows a compacted
run by its compacted model (the tables that treat every method alike).
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from kacs_cli.engine import registry
from kacs_cli.engine.registry import DEFAULT_PAIR
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import metrics, results
from kacs_cli.experiments.campaign.resolved import int_or_none
from kacs_cli.experiments.data.protocols import DEFAULT_PROTOCOL, METRICS, PROTOCOLS
from kacs_cli.reporting.model import (BENCHMARK_ORDER, CELL_KEY, METHODS, PLAIN_VARIANTS,
                                      Cell, ExperimentReport)


def load_config(exp_dir: Path) -> results.ResolvedConfig:
    """The experiment's config.yaml (with no settings when there is none)."""
    try:
        config = results.ResolvedConfig.read(exp_dir)
    except results.UnreadableConfig as exc:
        raise UserError(f"{exc}; fix or delete it") from None
    return config if config is not None else results.ResolvedConfig.of({})


def load_runs(exp_dir: Path, config: results.ResolvedConfig | None = None) -> pd.DataFrame:
    """runs.csv with the report's columns: cell_id (the runner's cell label), benchmark,
    variant, n, samples, N; a method run at its own budget joins its runner cell's N."""
    path = results.runs_path(exp_dir)
    try:
        runs = results.read_runs_csv(path)
    except pd.errors.EmptyDataError:  # created, no run finished yet
        runs = pd.DataFrame(columns=["benchmark", "method", "run"])
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not a readable CSV ({exc.__class__.__name__}); re-run the experiment") from None
    lacking = [c for c in ("benchmark", "method", "run") if c not in runs.columns]
    if lacking:
        raise UserError(f"{path} lacks the column(s) {', '.join(lacking)}; it was not written by `kacs run`")
    check_values(path)
    runs = runs.copy()
    runs["benchmark"] = runs["benchmark"].astype(str).str.strip()
    runs["cell_id"] = runs["benchmark"]
    # The runner writes its cell label (f3-n12) there; the config's cells name the benchmark.
    names = {e.label: e.name for e in config_benchmarks(config) if e.label} if config else {}
    if names:
        runs["benchmark"] = runs["cell_id"].map(lambda c: names.get(c, c))
    runs["method"] = runs["method"].astype(str).str.strip().str.lower()
    if "variant" not in runs.columns:
        runs["variant"] = ""
    runs["variant"] = runs["variant"].map(variant_text)
    for col in ("n", "samples", "N"):
        if col not in runs.columns:
            runs[col] = np.nan
        runs[col] = pd.to_numeric(runs[col], errors="coerce")
    runs["run"] = pd.to_numeric(runs["run"], errors="coerce")
    return _one_budget_per_cell(runs)


# What a cell of runs.csv may hold, by column: (integer?, least value, greatest value). Empty
# cells are where the runner leaves a value out (a baseline has no rules, budget or iterations,
# XCSF no inner and outer covering rates), except for the columns a caller requires. Columns
# not listed here (and columns a runs.csv lacks) are not checked. The metrics' ranges are
# their declarations' (kacs_cli/experiments/campaign/metrics.py).
_CELL_RULES: dict[str, tuple[bool, float, float]] = {
    **{c: (True, least, math.inf) for c, least in results.COUNT_COLUMNS.items()},
    # Counts, but a table assembled from published means may hold their fractional means.
    **{m.name: (m.integer and m.name not in ("rules", "micro", "params"), m.low, m.high) for m in metrics.ALL},
}
_FIX = "fix or delete that line (`kacs run` redoes a run whose row and record are gone)"


def check_values(path: Path, required: Iterable[str] = ()) -> None:
    """Every cell of runs.csv of a column in _CELL_RULES holds a value of its type and range,
    and no cell of a `required` column is empty, else a UserError naming `file:line`, the
    column and the value.

    pandas reads `abc` in test_mae as a text column, to_numeric(errors="coerce") made it NaN
    and the report averaged the other runs while still counting this one: a wrong table
    without a word. The report's numbers come from every row of runs.csv or it stops. The
    report requires the errors of its protocol: every run has them, so the runs a table
    counts are the runs its means use.
    """
    required = set(required)
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None) or []
        checked = [(i, name, (*_CELL_RULES[name], name not in required and name != "run"))
                   for i, name in enumerate(header) if name in _CELL_RULES]
        for row in reader:
            if not row:
                continue
            for i, name, rule in checked:
                problem = _cell_problem(row[i].strip() if i < len(row) else "", *rule)
                if problem:
                    raise UserError(f"{path}:{reader.line_num}: {name} is {row[i].strip()!r}, {problem}; {_FIX}")


def _cell_problem(text: str, integer: bool, least: float, most: float, may_be_empty: bool) -> str | None:
    what = "a whole number" if integer else "a number"
    bounds = (f" >= {least:g}" if math.isfinite(least) else "") + (f" and <= {most:g}" if math.isfinite(most) else "")
    if not text or text.lower() == "nan":
        return None if may_be_empty else f"where every finished run has {what}{bounds}"
    try:
        value = float(text)
    except ValueError:
        return f"not {what}{bounds}"
    if math.isnan(value) or (integer and not value.is_integer()) or not least <= value <= most:
        return f"not {what}{bounds}"
    return None


def _one_budget_per_cell(runs: pd.DataFrame) -> pd.DataFrame:
    """One N per runner cell whose methods each ran at their own budget.

    A variant with its own N (kacs-guideline) or a method without one (a baseline) shares
    its cell with the pair; left as they are, its rows would make a report cell of their own
    and the pair's tables would show n/a rows beside it. Where no method of a cell appears
    at two budgets, every row of that cell takes the pair's N (else the most common one).
    Cells whose methods ran at several budgets each (old results without cell labels) stay
    apart.
    """
    if runs.empty:
        return runs
    group_keys = ["cell_id", "variant", "n", "samples"]
    for _, part in runs.groupby(group_keys, dropna=False, sort=False):
        budgets = part["N"].drop_duplicates()
        if len(budgets) < 2:
            continue
        per_method = part[["method", "N"]].drop_duplicates()
        if per_method["method"].duplicated().any():
            continue
        pair = part.loc[part["method"].isin(DEFAULT_PAIR), "N"].dropna()
        chosen = pair if len(pair) else part["N"].dropna()
        if chosen.empty:
            continue
        runs.loc[part.index, "N"] = chosen.mode().iloc[0]
    return runs


def variant_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def protocol_of(config: results.ResolvedConfig, runs: pd.DataFrame) -> tuple[str, int | None]:
    name, expected = config.protocol, config.runs
    if name not in PROTOCOLS:
        # No (known) protocol recorded: the error columns the runner filled tell, when only
        # one protocol's error is filled.
        filled = {error for error in METRICS
                  if f"test_{error}" in runs.columns and runs[f"test_{error}"].notna().any()}
        named = [p for p, protocol in PROTOCOLS.items() if {protocol.metric} == filled]
        name = named[0] if named else DEFAULT_PROTOCOL
    if expected is None:
        expected = PROTOCOLS[name].runs if name in PROTOCOLS else None
    return name, expected


def config_methods(config: results.ResolvedConfig) -> list[str]:
    return list(config.methods) or list(METHODS)


@dataclass(frozen=True)
class PlannedCell:
    """A cell the config plans, as the report matches it to runs: one of a resolved config's
    cells, or an entry of a hand-written config's `benchmarks`, whose values are as written
    (a key it leaves out, None, matches anything)."""

    name: str
    label: str | None = None
    variant: Any = None
    n: Any = None
    samples: Any = None
    N: Any = None

    @property
    def shown(self) -> str:
        """Its cell label, else its benchmark."""
        return self.label or self.name


def config_benchmarks(config: results.ResolvedConfig) -> list[PlannedCell]:
    """The planned cells: the runner's resolved `cells` (N where every method shares one), or
    a hand-written config's `benchmarks` (names, or mappings with a name)."""
    if config.cells:
        return [PlannedCell(c.benchmark, c.label, c.variant, c.n, c.samples, c.N) for c in config.cells]
    out = []
    for b in config.benchmarks:
        if isinstance(b, str):
            out.append(PlannedCell(b))
        elif isinstance(b, dict) and b.get("name"):
            out.append(PlannedCell(str(b["name"]), str(b["label"]) if b.get("label") else None,
                                   *(b.get(k) for k in ("variant", "n", "samples", "N"))))
    return out


def entry_matches(entry: PlannedCell, cell: Cell) -> bool:
    """Does a planned cell describe this cell? Values it leaves out match anything, except the
    variant: an entry without one means the plain function."""
    if entry.label:
        return entry.label == cell.cell_id
    if entry.name.strip().lower() != cell.benchmark.lower():
        return False
    want = variant_text(entry.variant)
    if want.lower() in PLAIN_VARIANTS:
        if not cell.plain_variant:
            return False
    elif want.lower() != cell.variant.lower():
        return False
    for key in ("n", "samples", "N"):
        want_value = int_or_none(getattr(entry, key))
        if want_value is not None and getattr(cell, key) is not None and want_value != getattr(cell, key):
            return False
    return True


def describe_entry(entry: PlannedCell) -> str:
    parts = [entry.name]
    variant = variant_text(entry.variant)
    if variant.lower() not in PLAIN_VARIANTS:
        parts.append(variant)
    extras = [f"{k}={getattr(entry, k)}" for k in ("n", "samples", "N") if getattr(entry, k) is not None]
    text = " ".join(parts) + (f" ({', '.join(extras)})" if extras else "")
    return text + (f" [{entry.label}]" if entry.label and entry.label != entry.name else "")


def modal(values: Iterable[int | None]) -> int | None:
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def label_cells(cells: list[Cell]) -> list[Cell]:
    """Compact unique labels: 'f1', 'f3 rotated', 'f3 (n=12)', 'f3 (n=16, N=15984)'.

    Within one benchmark name, n and the sample count are printed when they vary; the
    budget N only where it differs from the benchmark's most common N (the guideline budget
    of the dimensional scaling, say), so the ordinary cells stay short.
    """
    by_bench: dict[str, list[Cell]] = {}
    for c in cells:
        by_bench.setdefault(c.benchmark, []).append(c)

    def build(c: Cell, group: list[Cell], verbose: bool) -> str:
        parts = []
        if verbose or len({g.n for g in group}) > 1:
            if c.n is not None:
                parts.append(f"n={c.n}")
        if verbose or len({g.samples for g in group}) > 1:
            if c.samples is not None:
                parts.append(f"N_S={c.samples}")
        modal_N = modal(g.N for g in group)
        if c.N is not None and (verbose or (len({g.N for g in group}) > 1 and c.N != modal_N)):
            parts.append(f"N={c.N}")
        text = c.benchmark
        if not c.plain_variant:
            text += f" {c.variant}"
        elif verbose and c.variant:
            text += f" {c.variant}"
        return text + (f" ({', '.join(parts)})" if parts else "")

    labels = {c.key: build(c, by_bench[c.benchmark], False) for c in cells}
    if len(set(labels.values())) < len(labels):
        verbose = {c.key: build(c, by_bench[c.benchmark], True) for c in cells}
        if len(set(verbose.values())) == len(verbose):
            labels = verbose
        else:
            # cells that differ in something runs.csv does not record (source, dataset seed,
            # P_hash): the runner's cell label tells apart those that collide, the rest stay short
            seen = Counter(labels.values())
            labels = {c.key: f"{labels[c.key]} [{c.cell_id}]" if seen[labels[c.key]] > 1 else labels[c.key]
                      for c in cells}
    return [Cell(c.cell_id, c.benchmark, c.variant, c.n, c.samples, c.N, label=labels[c.key]) for c in cells]


def _order_cells(cells: list[Cell], entries: list[PlannedCell]) -> list[Cell]:
    def config_index(c: Cell) -> int:
        for i, e in enumerate(entries):
            if entry_matches(e, c):
                return i
        return len(entries)

    def bench_index(c: Cell) -> tuple[int, str]:
        key = c.benchmark.lower()
        return (BENCHMARK_ORDER.index(key), "") if key in BENCHMARK_ORDER else (len(BENCHMARK_ORDER), key)

    def num(v: int | None) -> float:
        return math.inf if v is None else float(v)

    return sorted(
        cells,
        key=lambda c: (
            config_index(c),
            bench_index(c),
            not c.plain_variant,
            c.variant,
            num(c.n),
            num(c.samples),
            num(c.N),
        ),
    )


def cells_of(runs: pd.DataFrame, entries: list[PlannedCell]) -> list[Cell]:
    seen: dict[tuple, Cell] = {}
    for row in runs[["cell_id", *CELL_KEY]].drop_duplicates().itertuples(index=False):
        cell = Cell(
            str(row.cell_id),
            str(row.benchmark),
            str(row.variant),
            int_or_none(row.n),
            int_or_none(row.samples),
            int_or_none(row.N),
        )
        seen.setdefault(cell.key, cell)
    return label_cells(_order_cells(list(seen.values()), entries))


def cell_mask(runs: pd.DataFrame, cell: Cell) -> pd.Series:
    mask = (runs["cell_id"] == cell.cell_id) & (runs["variant"] == cell.variant)
    for key in ("n", "samples", "N"):
        want = getattr(cell, key)
        col = runs[key]
        mask &= col.isna() if want is None else (col.round() == want)
    return mask


def method_values(runs: pd.DataFrame, cell: Cell, method: str, metric: str) -> pd.Series:
    """metric per run of one method in one cell (index = run id)."""
    rows = runs[cell_mask(runs, cell) & (runs["method"] == method)]
    if metric not in rows.columns or rows.empty:
        return pd.Series(dtype=float)
    values = pd.to_numeric(rows[metric], errors="coerce")
    values.index = rows["run"].to_numpy()
    return values.dropna()


def last_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: a rerun may append a second row for the same run, and the last one wins."""
    return runs.drop_duplicates(subset=["cell_id", *CELL_KEY, "method", "run"], keep="last") if len(runs) else runs


def runs_for_scaling(exp: ExperimentReport) -> pd.DataFrame:
    """The final metrics of every run of the experiment (for the scaling figure)."""
    return final_models(last_rows(load_runs(exp.path, load_config(exp.path))))


def compacted_rows(runs: pd.DataFrame) -> pd.Series:
    """Which rows are compacted runs (a compaction variant's): those that measured a compacted model."""
    columns = [c for c in metrics.COMPACTED_OF.values() if c in runs.columns]
    return runs[columns].notna().any(axis=1) if columns else pd.Series(False, index=runs.index)


def final_models(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs as the tables that treat every method alike show them: each run by its final model.

    A compacted run's final metrics are the trained model's, before compaction (its
    compacted_* columns hold the compacted one): read as they are, a compaction variant would
    show its plain method's numbers under its own name. Here a compacted run's final metrics
    are the compacted model's, and those not measured on it (AIC, micro, the cover rates) are
    empty, n/a in the tables, rather than the trained model's. The compaction table compares
    the two models and reads the runs as loaded.
    """
    rows = compacted_rows(runs)
    if not rows.any():
        return runs
    runs = runs.copy()
    for m in metrics.FINAL:
        if m.name not in runs.columns:
            continue
        source = metrics.COMPACTED_OF.get(m.name)
        compacted = runs[source] if source in runs.columns else np.nan
        runs[m.name] = pd.to_numeric(runs[m.name], errors="coerce").where(~rows, compacted)
    return runs


def compacted_methods(runs: pd.DataFrame) -> tuple[str, ...]:
    """The methods with compacted runs, in order of appearance."""
    return tuple(dict.fromkeys(runs.loc[compacted_rows(runs), "method"]))


def compacted_note(exp: ExperimentReport, methods: Iterable[str], shown: Iterable[str] = ()) -> str:
    """A caption's clause saying that the table's compaction variants are their compacted
    models (`final_models`), naming the `shown` metrics left n/a for them; "" without any."""
    names = [registry.label(m) for m in dict.fromkeys(methods) if m in exp.compacted_methods]
    if not names:
        return ""
    lacking = [metrics.metric_label(m) for m in shown if m not in metrics.COMPACTED_OF]
    unmeasured = f"; {', '.join(lacking)} n/a: not measured after compaction" if lacking else ""
    return f" Compaction variants are shown by their compacted model ({', '.join(names)}{unmeasured})."


def cell_values(runs: pd.DataFrame, cell: Cell, method: str, metric: str) -> np.ndarray:
    return method_values(runs, cell, method, metric).to_numpy(dtype=float)


def planned_methods(config: results.ResolvedConfig) -> dict[str, list[str]]:
    """Methods of each cell of a resolved config (by label): its own `methods`, else the
    methods it has hyperparameters for."""
    return {c.label: [m.strip().lower() for m in c.methods or c.settings] for c in config.cells or ()}
