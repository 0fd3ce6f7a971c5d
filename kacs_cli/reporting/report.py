"""Paper-style tables and figures from a results directory (SPEC section 11).

`build_report` reads one experiment directory (config.yaml, runs.csv, curves/) or a directory
of experiment directories, and writes Markdown, LaTeX and CSV tables plus PNG figures:

- summary: per cell and method the mean train/test error, rules, params and AIC, XCSF's
  +/-/~ symbol against KACS (paired two-sided Wilcoxon over runs), the best mean per cell in
  bold, and across the cells: average ranks, +/-/~ counts, the paired Wilcoxon p over the
  per-cell means with a dagger when p < 0.05;
- detailed: mean ± SD per method, Wilcoxon p, rank-biserial effect size, runs paired;
- scaling: for cells of one benchmark that differ in n or sample count, keyed by them;
- paper (optional): our means beside the published main table, in standard errors.

Means and SDs use every run a method has; the tests pair only runs present for both methods.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from kacs_cli import atomic
from kacs_cli.reporting import stats
from kacs_cli.engine import registry
from kacs_cli.engine.registry import BASELINE, DEFAULT_PAIR, PROPOSED
from kacs_cli.errors import UserError

FORMATS = ("md", "tex", "csv")
# The article's two-method tables: the baseline's rows first, its Wilcoxon symbol against the
# proposal (engine/registry.py holds the pair).
METHODS = DEFAULT_PAIR
CELL_KEY = ("benchmark", "variant", "n", "samples", "N")
# The article's benchmark order; anything else follows alphabetically.
BENCHMARK_ORDER = ("f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec")
PROTOCOL_METRICS = {
    "main": ("train_mae", "test_mae", "rules", "params", "aic"),
    "alternative": ("train_mse", "test_mse", "rules", "params", "aic"),
}
METRIC_LABELS = {
    "train_mae": "train MAE",
    "test_mae": "test MAE",
    "train_mse": "train MSE",
    "test_mse": "test MSE",
    "rules": "rules",
    "params": "params",
    "aic": "AIC",
}
COUNT_METRICS = ("rules", "params", "aic", "micro")
# Variant values that mean "the plain function" and are not worth printing.
PLAIN_VARIANTS = ("", "none", "base", "original", "standard", "plain", "nan")
PAPER_METRICS = ("train_mae", "test_mae", "rules", "params", "aic")
PAPER_VERDICT_METRICS = ("test_mae", "rules", "params")
PAPER_RUNS = 30


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class Cell:
    """One table row of an experiment: a benchmark at one size / variant / budget.

    `cell_id` is what runs.csv's benchmark column holds: the runner's filename-safe cell
    label (f3-n12, also the curve file prefix) or a bare benchmark name; `benchmark` is the
    benchmark's own name (f3), from the config's cells when they are recorded; `label` is
    the compact display name of the tables (f3 (n=12)).
    """

    cell_id: str
    benchmark: str
    variant: str
    n: int | None
    samples: int | None
    N: int | None
    label: str = ""

    @property
    def key(self) -> tuple:
        return (self.cell_id, self.variant, self.n, self.samples, self.N)

    @property
    def plain_variant(self) -> bool:
        return self.variant.lower() in PLAIN_VARIANTS


@dataclass
class ExperimentReport:
    """Everything computed for one experiment directory."""

    name: str
    path: Path
    protocol: str
    metrics: tuple[str, ...]
    expected_runs: int | None
    cells: list[Cell]
    cell_stats: pd.DataFrame  # one row per (cell, metric)
    across: pd.DataFrame  # one row per metric
    scaling: list["ScalingGroup"] = field(default_factory=list)
    paper: pd.DataFrame | None = None
    fidelity: str | None = None
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summary_markdown: str = ""
    figures: list[Path] = field(default_factory=list)
    figure_notes: list[str] = field(default_factory=list)  # why a figure is not drawn
    sources: list[str] = field(default_factory=list)  # cells included from other experiments
    paper_warning: str | None = None  # the campaign is not the published setting
    # Methods beyond the pair (other learners, labelled variants): per (cell, method) the
    # mean and SD of every metric and the run count; described, not tested.
    others: pd.DataFrame | None = None
    kmethods: Any = None  # kmethods.KMethods: statistics of cells with more than two methods


@dataclass
class ReportSummary:
    results_dir: Path
    out_dir: Path
    experiments: list[ExperimentReport]
    files: list[Path]
    missing: list[str]  # "<experiment>: <what>", for the console
    console_markdown: str  # the summary tables (and fidelity lines) to print
    skipped: list[str] = field(default_factory=list)  # folders below RESULTS_DIR without experiments


@dataclass(frozen=True)
class ScalingGroup:
    """Cells of one benchmark/variant that differ in n and/or sample count."""

    benchmark: str
    variant: str
    variables: tuple[str, ...]  # subset of ("n", "samples")
    cells: tuple[Cell, ...]
    modal_N: int | None


# --------------------------------------------------------------------------- loading


def find_experiments(results_dir: Path) -> list[Path]:
    """The experiment directories at any depth below RESULTS_DIR (itself when it is one)."""
    from kacs_cli.reporting.index import scan_experiments

    return scan_experiments(results_dir)[0]


def _load_config(exp_dir: Path) -> dict:
    path = exp_dir / "config.yaml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise UserError(f"{path} is not valid YAML ({exc.__class__.__name__}); fix or delete it") from None
    return data if isinstance(data, dict) else {}


def _load_runs(exp_dir: Path, config: dict | None = None) -> pd.DataFrame:
    from kacs_cli.runner import read_runs_csv

    path = exp_dir / "runs.csv"
    try:
        runs = read_runs_csv(path)
    except pd.errors.EmptyDataError:  # created, no run finished yet
        runs = pd.DataFrame(columns=["benchmark", "method", "run"])
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not a readable CSV ({exc.__class__.__name__}); re-run the experiment") from None
    lacking = [c for c in ("benchmark", "method", "run") if c not in runs.columns]
    if lacking:
        raise UserError(f"{path} lacks the column(s) {', '.join(lacking)}; it was not written by `kacs run`")
    runs = runs.copy()
    runs["benchmark"] = runs["benchmark"].astype(str).str.strip()
    runs["cell_id"] = runs["benchmark"]
    # The runner writes its cell label (f3-n12) there; the config's cells name the benchmark.
    names = {e["label"]: str(e["name"]) for e in _config_benchmarks(config or {}) if e.get("label")}
    if names:
        runs["benchmark"] = runs["cell_id"].map(lambda c: names.get(c, c))
    runs["method"] = runs["method"].astype(str).str.strip().str.lower()
    if "variant" not in runs.columns:
        runs["variant"] = ""
    runs["variant"] = runs["variant"].map(_variant_text)
    for col in ("n", "samples", "N"):
        if col not in runs.columns:
            runs[col] = np.nan
        runs[col] = pd.to_numeric(runs[col], errors="coerce")
    runs["run"] = pd.to_numeric(runs["run"], errors="coerce")
    return _one_budget_per_cell(runs)


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


def _variant_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _int_or_none(value: Any) -> int | None:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return int(round(f)) if math.isfinite(f) else None


def _protocol_of(config: dict, runs: pd.DataFrame) -> tuple[str, int | None]:
    proto = config.get("protocol")
    name, expected = None, None
    if isinstance(proto, dict):
        name = proto.get("name")
        expected = _int_or_none(proto.get("runs"))
    elif isinstance(proto, str):
        name = proto
    name = str(name).strip().lower() if name else ""
    if name not in PROTOCOL_METRICS:
        # No (known) protocol recorded: the error columns the runner filled tell.
        has_mae = "test_mae" in runs.columns and runs["test_mae"].notna().any()
        has_mse = "test_mse" in runs.columns and runs["test_mse"].notna().any()
        name = "alternative" if (has_mse and not has_mae) else "main"
    if expected is None:
        from kacs_cli.protocols import PROTOCOLS

        expected = PROTOCOLS[name].runs if name in PROTOCOLS else None
    return name, expected


def _config_methods(config: dict) -> list[str]:
    methods = config.get("methods")
    out: list[str] = []
    if isinstance(methods, (list, tuple)):
        for m in methods:
            name = m.get("name", m.get("method")) if isinstance(m, dict) else m
            if name:
                out.append(str(name).strip().lower())
    elif isinstance(methods, str):
        out = [m.strip().lower() for m in methods.split(",") if m.strip()]
    elif isinstance(methods, dict):
        out = [str(k).strip().lower() for k in methods]
    return out or list(METHODS)


def _config_benchmarks(config: dict) -> list[dict]:
    """Planned cells as entries {name, variant, n, samples, N[, label]}.

    The runner's resolved config lists `cells` (label, benchmark, n, samples, variant and
    per-method hyperparameters holding N); a hand-written one lists `benchmarks`.
    """
    cells = config.get("cells")
    if isinstance(cells, list) and cells and all(isinstance(c, dict) and c.get("label") for c in cells):
        out = []
        for c in cells:
            hyper = c.get("hyperparameters") if isinstance(c.get("hyperparameters"), dict) else {}
            budgets = {_int_or_none(h.get("N")) for h in hyper.values() if isinstance(h, dict)}
            out.append(
                {
                    "label": str(c["label"]),
                    "name": str(c.get("benchmark") or c["label"]),
                    "variant": c.get("variant"),
                    "n": c.get("n"),
                    "samples": c.get("samples"),
                    "N": budgets.pop() if len(budgets) == 1 else None,
                }
            )
        return out
    out = []
    for b in config.get("benchmarks") or []:
        if isinstance(b, str):
            out.append({"name": b})
        elif isinstance(b, dict) and b.get("name"):
            out.append(b)
    return out


def _entry_matches(entry: dict, cell: Cell) -> bool:
    """Does a config benchmark entry describe this cell? Keys the entry leaves out match anything,
    except the variant: an entry without one means the plain function."""
    if entry.get("label"):
        return str(entry["label"]) == cell.cell_id
    if str(entry["name"]).strip().lower() != cell.benchmark.lower():
        return False
    want = _variant_text(entry.get("variant"))
    if want.lower() in PLAIN_VARIANTS:
        if not cell.plain_variant:
            return False
    elif want.lower() != cell.variant.lower():
        return False
    for key in ("n", "samples", "N"):
        want_value = _int_or_none(entry.get(key))
        if want_value is not None and getattr(cell, key) is not None and want_value != getattr(cell, key):
            return False
    return True


def _describe_entry(entry: dict) -> str:
    parts = [str(entry["name"])]
    variant = _variant_text(entry.get("variant"))
    if variant.lower() not in PLAIN_VARIANTS:
        parts.append(variant)
    extras = [f"{k}={entry[k]}" for k in ("n", "samples", "N") if entry.get(k) is not None]
    text = " ".join(parts) + (f" ({', '.join(extras)})" if extras else "")
    return text + (f" [{entry['label']}]" if entry.get("label") and entry["label"] != entry["name"] else "")


# --------------------------------------------------------------------------- cells


def _modal(values: Iterable[int | None]) -> int | None:
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def _label_cells(cells: list[Cell]) -> list[Cell]:
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
        modal_N = _modal(g.N for g in group)
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
        labels = {c.key: build(c, by_bench[c.benchmark], True) for c in cells}
    if len(set(labels.values())) < len(labels):
        # cells that differ in something runs.csv does not record (dataset seed, P_hash)
        labels = {c.key: f"{labels[c.key]} [{c.cell_id}]" for c in cells}
    return [Cell(c.cell_id, c.benchmark, c.variant, c.n, c.samples, c.N, label=labels[c.key]) for c in cells]


def _order_cells(cells: list[Cell], entries: list[dict]) -> list[Cell]:
    def config_index(c: Cell) -> int:
        for i, e in enumerate(entries):
            if _entry_matches(e, c):
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


def _cells_of(runs: pd.DataFrame, entries: list[dict]) -> list[Cell]:
    seen: dict[tuple, Cell] = {}
    for row in runs[["cell_id", *CELL_KEY]].drop_duplicates().itertuples(index=False):
        cell = Cell(
            str(row.cell_id),
            str(row.benchmark),
            str(row.variant),
            _int_or_none(row.n),
            _int_or_none(row.samples),
            _int_or_none(row.N),
        )
        seen.setdefault(cell.key, cell)
    return _label_cells(_order_cells(list(seen.values()), entries))


def _cell_mask(runs: pd.DataFrame, cell: Cell) -> pd.Series:
    mask = (runs["cell_id"] == cell.cell_id) & (runs["variant"] == cell.variant)
    for key in ("n", "samples", "N"):
        want = getattr(cell, key)
        col = runs[key]
        mask &= col.isna() if want is None else (col.round() == want)
    return mask


def _scaling_groups(cells: list[Cell]) -> list[ScalingGroup]:
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
        modal_N = _modal(c.N for c in members)
        # at one n: the usual budget first, then the other budgets ascending
        ordered = sorted(
            members, key=lambda c: tuple(getattr(c, v) or 0 for v in variables) + (c.N != modal_N, c.N or 0)
        )
        out.append(ScalingGroup(bench, variant, variables, tuple(ordered), modal_N))
    return out


# --------------------------------------------------------------------------- statistics


def _method_values(runs: pd.DataFrame, cell: Cell, method: str, metric: str) -> pd.Series:
    """metric per run of one method in one cell (index = run id)."""
    rows = runs[_cell_mask(runs, cell) & (runs["method"] == method)]
    if metric not in rows.columns or rows.empty:
        return pd.Series(dtype=float)
    values = pd.to_numeric(rows[metric], errors="coerce")
    values.index = rows["run"].to_numpy()
    return values.dropna()


def _cell_stats(runs: pd.DataFrame, cells: list[Cell], metrics: Sequence[str]) -> pd.DataFrame:
    records = []
    for cell in cells:
        for metric in metrics:
            x = _method_values(runs, cell, BASELINE, metric)
            y = _method_values(runs, cell, PROPOSED, metric)
            paired = pd.concat([x.rename("x"), y.rename("y")], axis=1, join="inner")
            rec: dict[str, Any] = {
                "cell": cell.label,
                "benchmark": cell.benchmark,
                "variant": cell.variant,
                "n": cell.n,
                "samples": cell.samples,
                "N": cell.N,
                "metric": metric,
            }
            for method, v in ((BASELINE, x), (PROPOSED, y)):
                rec[f"{method}_mean"] = float(v.mean()) if len(v) else math.nan
                rec[f"{method}_sd"] = float(v.std(ddof=1)) if len(v) > 1 else math.nan
                rec[f"{method}_runs"] = int(len(v))
            rec["n_pairs"] = int(len(paired))
            if len(paired):
                rec["wilcoxon_p"] = stats.wilcoxon_p(paired["x"], paired["y"])
                rec["effect_size"] = stats.rank_biserial(paired["x"], paired["y"])
                rec["symbol"] = stats.symbol(paired["x"], paired["y"])
            else:
                rec["wilcoxon_p"], rec["effect_size"], rec["symbol"] = math.nan, math.nan, ""
            xm, ym = rec[f"{BASELINE}_mean"], rec[f"{PROPOSED}_mean"]
            if math.isfinite(xm) and math.isfinite(ym):
                rec["best"] = "tie" if xm == ym else (BASELINE if xm < ym else PROPOSED)
            else:
                rec["best"] = ""
            records.append(rec)
    return pd.DataFrame.from_records(records)


def _other_methods(runs: pd.DataFrame, cells: list[Cell], metrics: Sequence[str]) -> pd.DataFrame:
    names = [m for m in dict.fromkeys(runs["method"]) if m not in METHODS]
    records = []
    for cell in cells:
        for method in names:
            rec: dict[str, Any] = {"cell": cell.label, "method": method}
            count = 0
            for metric in metrics:
                v = _method_values(runs, cell, method, metric)
                rec[f"{metric}_mean"] = float(v.mean()) if len(v) else math.nan
                rec[f"{metric}_sd"] = float(v.std(ddof=1)) if len(v) > 1 else math.nan
                count = max(count, len(v))
            rec["runs"] = count
            if count:
                records.append(rec)
    return pd.DataFrame.from_records(records)


def _across_record(metric: str, part: pd.DataFrame, symbols: Sequence[str]) -> dict:
    """Average ranks, +/-/~ counts and the across-benchmark Wilcoxon test of one metric."""
    means = part[[f"{BASELINE}_mean", f"{PROPOSED}_mean"]].rename(columns={f"{BASELINE}_mean": BASELINE, f"{PROPOSED}_mean": PROPOSED})
    ranks = stats.average_ranks(means)
    complete = means.dropna()
    test = stats.across_benchmark_test(complete[BASELINE], complete[PROPOSED])
    counts = stats.count_symbols(list(symbols))
    return {
        "metric": metric,
        f"{BASELINE}_avg_rank": float(ranks[BASELINE]),
        f"{PROPOSED}_avg_rank": float(ranks[PROPOSED]),
        "plus": counts["+"],
        "minus": counts["-"],
        "tie": counts["~"],
        "across_p": test.p,
        "significant": test.significant,
        "n_benchmarks": test.n_benchmarks,
    }


def _across(cell_stats: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    records = []
    for metric in metrics:
        part = cell_stats[cell_stats["metric"] == metric]
        records.append(_across_record(metric, part, part["symbol"]))
    return pd.DataFrame.from_records(records)


def _missing(
    runs: pd.DataFrame,
    cells: list[Cell],
    entries: list[dict],
    methods: list[str],
    expected_runs: int | None,
) -> list[str]:
    """What the campaign lacks against its config, one line each, in cell order.

    A shortfall shared by every method of a cell is one line, and one shared by every cell
    one line overall, so a campaign stopped early does not bury the real gaps.
    """
    out = []
    for entry in entries:
        if not any(_entry_matches(entry, c) for c in cells):
            out.append(f"{_describe_entry(entry)}: no finished runs")
    run_sets: dict[str, dict[str, set[int]]] = {}
    duplicates: dict[str, list[str]] = {}
    for cell in cells:
        in_cell = runs[_cell_mask(runs, cell)]
        run_sets[cell.label] = {}
        for method in methods:
            ids = in_cell.loc[in_cell["method"] == method, "run"].dropna()
            dup = sorted(int(r) for r in ids[ids.duplicated()].unique())
            if dup:
                duplicates.setdefault(cell.label, []).append(
                    f"{cell.label} {_mlabel(method)}: run(s) {_ids(dup)} appear more than once; the last row is used"
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
            for method in methods:
                k = len(sets[method])
                if k == 0:
                    out.append(f"{cell.label}: no {_mlabel(method)} runs")
                elif expected_runs is not None and k < expected_runs:
                    out.append(f"{cell.label} {_mlabel(method)}: {k} of {expected_runs} runs")
        if sets.get(BASELINE) and sets.get(PROPOSED):
            for a, b in ((BASELINE, PROPOSED), (PROPOSED, BASELINE)):
                only = sorted(sets[a] - sets[b])
                if only:
                    out.append(f"{cell.label}: run(s) {_ids(only)} only for {_mlabel(a)} (left out of the paired tests)")
    return out


def _mlabel(method: str) -> str:
    return registry.label(method)


def _ids(ids: Sequence[int], limit: int = 12) -> str:
    text = ", ".join(str(i) for i in ids[:limit])
    return text + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


# --------------------------------------------------------------------------- the paper


def load_paper_table() -> pd.DataFrame:
    """The published main table shipped as package data (kacs_cli/data/paper_main_table.csv)."""
    path = Path(__file__).resolve().parent.parent / "data" / "paper_main_table.csv"
    table = pd.read_csv(path)
    table["benchmark"] = table["benchmark"].str.strip().str.lower()
    return table


def _paper_comparison(exp: ExperimentReport) -> pd.DataFrame:
    published = load_paper_table().set_index(["benchmark", "metric"])
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    records = []
    for cell in exp.cells:
        bench = cell.benchmark.lower()
        if not cell.plain_variant or cell.label != cell.benchmark:
            continue
        for metric in PAPER_METRICS:
            if (bench, metric) not in published.index or (cell.label, metric) not in stats_by.index:
                continue
            pub = published.loc[(bench, metric)]
            ours = stats_by.loc[(cell.label, metric)]
            rec: dict[str, Any] = {"cell": cell.label, "benchmark": bench, "metric": metric}
            for method in METHODS:
                mean, sd, n = ours[f"{method}_mean"], ours[f"{method}_sd"], int(ours[f"{method}_runs"])
                pm, ps = float(pub[f"{method}_mean"]), float(pub[f"{method}_sd"])
                rec[f"{method}_ours"] = mean
                rec[f"{method}_ours_sd"] = sd
                rec[f"{method}_runs"] = n
                rec[f"{method}_paper"] = pm
                rec[f"{method}_paper_sd"] = ps
                if n > 0 and math.isfinite(mean):
                    rec[f"{method}_z"] = stats.fidelity_z(mean, sd, n, pm, ps, PAPER_RUNS)
                    rec[f"{method}_within"] = stats.within_published(mean, sd, n, pm, ps, PAPER_RUNS)
                else:
                    rec[f"{method}_z"], rec[f"{method}_within"] = math.nan, None
            rec["symbol_ours"] = ours["symbol"]
            rec["wilcoxon_p_paper"] = float(pub["wilcoxon_p"])
            rec["symbol_paper"] = stats.verdict(
                float(pub["wilcoxon_p"]), float(pub[f"{BASELINE}_mean"]) - float(pub[f"{PROPOSED}_mean"])
            )
            rec["verdict_agrees"] = bool(ours["symbol"]) and ours["symbol"] == rec["symbol_paper"]
            records.append(rec)
    return pd.DataFrame.from_records(records)


def _fidelity_line(paper: pd.DataFrame) -> str:
    if paper.empty:
        return "Fidelity: no cell of the published main table in this experiment."
    flags = [v for m in METHODS for v in paper[f"{m}_within"] if v is not None]
    within = sum(bool(v) for v in flags)
    parts = []
    for metric in PAPER_VERDICT_METRICS:
        part = paper[paper["metric"] == metric]
        if len(part):
            parts.append(f"{METRIC_LABELS[metric]} {int(part['verdict_agrees'].sum())}/{len(part)}")
    n_cells = paper["cell"].nunique()
    return (
        f"Fidelity: {within} of {len(flags)} means within max(3 SE, 5 %) of the published ones "
        f"({n_cells} benchmarks); verdicts agree: {', '.join(parts)}."
    )


def _published_across() -> pd.DataFrame:
    """Ranks, counts and across-benchmark p recomputed from the published means."""
    table = load_paper_table()
    records = []
    for metric in PAPER_METRICS:
        part = table[table["metric"] == metric]
        symbols = [stats.verdict(p, xm - km) for p, xm, km in zip(part["wilcoxon_p"], part[f"{BASELINE}_mean"], part[f"{PROPOSED}_mean"])]
        records.append(_across_record(metric, part, symbols))
    return pd.DataFrame.from_records(records)


# --------------------------------------------------------------------------- formatting


def fmt_value(metric: str, x: float) -> str:
    """Errors with 4 decimals (4 significant digits when tiny), counts and AIC as integers."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if metric in COUNT_METRICS:
        return f"{x:.0f}"
    if x == 0 or abs(x) >= 0.001:
        return f"{x:.4f}"
    return f"{x:.4g}"


def fmt_sd(metric: str, x: float) -> str:
    """SDs as the article prints them: 4 significant digits, no exponent for large counts."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if metric in COUNT_METRICS:
        return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    if abs(x) < 1e-9:  # rounding noise of identical runs, not a spread worth exponents
        return f"{0.0:.4f}"
    return fmt_value(metric, x)


def _fmt_z(z: float) -> str:
    if not math.isfinite(z):
        return "n/a" if math.isnan(z) else ("+inf" if z > 0 else "-inf")
    z = round(z, 2)
    return "0.00" if z == 0 else f"{z:+.2f}"


@dataclass
class TCell:
    """One table entry: text (bold when best) and a suffix (symbol, dagger) kept outside bold."""

    text: str
    bold: bool = False
    suffix: str = ""


@dataclass
class Table:
    title: str
    caption: str
    headers: list[str]
    rows: list[list[TCell]]
    n_left: int = 1  # leading text columns, left-aligned; the rest are numbers
    rules_before: set[int] = field(default_factory=set)  # row indices preceded by a rule
    label: str = ""


def _c(text: Any, bold: bool = False, suffix: str = "") -> TCell:
    return TCell(str(text), bold, suffix)


def render_markdown(table: Table) -> str:
    """A GitHub pipe table padded to aligned columns, so it also reads well in a terminal."""

    def md(cell: TCell) -> str:
        text = cell.text.replace("|", "\\|")
        if cell.bold and text:
            text = f"**{text}**"
        return f"{text} {cell.suffix}" if cell.suffix else text

    body = [[md(c) for c in row] for row in table.rows]
    ncol = len(table.headers)
    widths = [max([len(table.headers[j]), 3] + [len(r[j]) for r in body]) for j in range(ncol)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cells[j].ljust(widths[j]) if j < table.n_left else cells[j].rjust(widths[j]) for j in range(ncol)
        ]
        return "| " + " | ".join(padded) + " |"

    sep = "|" + "|".join(
        (":" + "-" * (widths[j] + 1)) if j < table.n_left else ("-" * (widths[j] + 1) + ":") for j in range(ncol)
    ) + "|"
    return "\n".join([line(table.headers), sep] + [line(r) for r in body])


_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # OT1 text fonts print these as other glyphs (¡, ¿, —): set them in math mode
    "<": "$<$",
    ">": "$>$",
    "|": "$|$",
}
_TEX_SYMBOLS = {"+": "$+$", "-": "$-$", "~": r"$\sim$", stats.DAGGER: r"$^\dagger$", "": ""}


def tex_escape(text: str) -> str:
    out = "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)
    return (
        out.replace("±", r"$\pm$")
        .replace(stats.DAGGER, r"$^\dagger$")
        .replace("α", r"$\alpha$")
        .replace("≤", r"$\le$")
        .replace("²", "$^2$")
        .replace("χ", r"$\chi$")
        .replace("—", "---")
    )


def render_latex(table: Table) -> str:
    """A booktabs table; the best mean per cell is \\textbf."""

    def tex(cell: TCell) -> str:
        text = tex_escape(cell.text)
        if re.fullmatch(r"-\d[\d.]*(e[+-]?\d+)?", text):
            text = "$-$" + text[1:]  # a minus sign, not a hyphen
        if cell.bold and text:
            text = rf"\textbf{{{text}}}"
        if cell.suffix:
            gap = "" if cell.suffix == stats.DAGGER else " "  # the dagger marks the number itself
            text += gap + _TEX_SYMBOLS.get(cell.suffix, tex_escape(cell.suffix))
        return text

    ncol = len(table.headers)
    spec = "l" * table.n_left + "r" * (ncol - table.n_left)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{tex_escape(table.caption or table.title)}}}",
    ]
    if table.label:
        lines.append(rf"\label{{{table.label}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(tex_escape(h) for h in table.headers) + r" \\",
        r"\midrule",
    ]
    for i, row in enumerate(table.rows):
        if i in table.rules_before:
            lines.append(r"\midrule")
        lines.append(" & ".join(tex(c) for c in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def _md_prose(text: str) -> str:
    # A lone '~' pairs with another into GitHub strikethrough: escape it in running text.
    return text.replace("~", "\\~")


# --------------------------------------------------------------------------- tables


def _error_word(exp: ExperimentReport) -> str:
    return "MSE" if exp.protocol == "alternative" else "MAE"


def _target_word(exp: ExperimentReport) -> str:
    # SPEC section 1: min-max to [-1, 1] (main) or standardized with the train split (alternative)
    return "standardized" if exp.protocol == "alternative" else "normalized"


def summary_table(exp: ExperimentReport) -> Table:
    """Per cell two rows (XCSF with its symbol, KACS), the across-cell rows at the bottom."""
    metrics = exp.metrics
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    headers = ["cell", "method"] + [METRIC_LABELS[m] for m in metrics] + ["runs"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    for cell in exp.cells:
        if rows:
            rules.add(len(rows))
        for method in METHODS:
            row = [_c(cell.label if method == BASELINE else ""), _c(_mlabel(method))]
            runs = 0
            for metric in metrics:
                s = stats_by.loc[(cell.label, metric)]
                runs = max(runs, int(s[f"{method}_runs"]))
                bold = s["best"] in (method, "tie")
                suffix = s["symbol"] if method == BASELINE else ""
                row.append(_c(fmt_value(metric, s[f"{method}_mean"]), bold, suffix))
            row.append(_c(runs))
            rows.append(row)
    rules.add(len(rows))
    across = exp.across.set_index("metric")
    for method in METHODS:
        rows.append(
            [_c("avg rank" if method == BASELINE else ""), _c(_mlabel(method))]
            + [_c(_fmt_rank(across.loc[m, f"{method}_avg_rank"])) for m in metrics]
            + [_c("")]
        )
    rows.append(
        [_c("+/-/~"), _c(_mlabel(BASELINE))]
        + [_c(stats.format_counts({"+": across.loc[m, "plus"], "-": across.loc[m, "minus"], "~": across.loc[m, "tie"]})) for m in metrics]
        + [_c("")]
    )
    rows.append(
        [_c("Wilcoxon p"), _c("")]
        + [
            _c(stats.format_p(across.loc[m, "across_p"]), suffix=stats.DAGGER if across.loc[m, "significant"] else "")
            for m in metrics
        ]
        + [_c("")]
    )
    caption = (
        f"{exp.name}: means over runs ({exp.protocol} protocol, errors are {_error_word(exp)} on the "
        f"{_target_word(exp)} target). Symbol after XCSF's mean: + XCSF significantly better (lower) than "
        f"KACS, - significantly worse, ~ no significant difference (paired two-sided Wilcoxon "
        f"over runs, α = 0.05). Best mean per cell in bold. Bottom: average ranks, +/-/~ counts, "
        f"paired Wilcoxon over the per-cell means († p < 0.05)."
    )
    return Table(
        title=f"{exp.name}: summary",
        caption=caption,
        headers=headers,
        rows=rows,
        n_left=2,
        rules_before=rules,
        label=f"tab:{_slug(exp.name)}-summary",
    )


def _fmt_rank(r: float) -> str:
    return f"{r:.2f}" if math.isfinite(r) else "n/a"


def detailed_table(exp: ExperimentReport) -> Table:
    headers = ["cell", "metric"] + [f"{_mlabel(m)} mean ± SD" for m in METHODS] + ["p", "effect r", "sym", "pairs"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    for cell in exp.cells:
        if rows:
            rules.add(len(rows))
        part = exp.cell_stats[exp.cell_stats["cell"] == cell.label]
        for i, s in enumerate(part.itertuples(index=False)):
            metric = s.metric
            row = [_c(cell.label if i == 0 else ""), _c(METRIC_LABELS[metric])]
            for method in METHODS:
                mean, sd = getattr(s, f"{method}_mean"), getattr(s, f"{method}_sd")
                text = "n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"
                row.append(_c(text, s.best in (method, "tie")))
            effect = s.effect_size
            row += [
                _c(stats.format_p(s.wilcoxon_p)),
                _c(f"{effect:+.3f}" if math.isfinite(effect) else "n/a"),
                _c(s.symbol or "n/a"),
                _c(s.n_pairs),
            ]
            rows.append(row)
    caption = (
        f"{exp.name}: mean ± SD over runs, two-sided paired Wilcoxon p, matched-pairs "
        f"rank-biserial effect size of XCSF - KACS (positive favours KACS), XCSF's symbol, "
        f"number of paired runs."
    )
    return Table(f"{exp.name}: detailed", caption, headers, rows, n_left=2, rules_before=rules,
                 label=f"tab:{_slug(exp.name)}-detailed")




def other_methods_table(exp: ExperimentReport) -> Table:
    """Every method beyond the pair, per cell: mean ± SD of each metric, no test."""
    headers = ["cell", "method"] + [METRIC_LABELS[m] for m in exp.metrics] + ["runs"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    last = None
    for s in exp.others.to_dict("records"):
        if s["cell"] != last and rows:
            rules.add(len(rows))
        row = [_c(s["cell"] if s["cell"] != last else ""), _c(_mlabel(s["method"]))]
        for metric in exp.metrics:
            mean, sd = s[f"{metric}_mean"], s[f"{metric}_sd"]
            row.append(_c("n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"))
        rows.append(row + [_c(s["runs"])])
        last = s["cell"]
    pair = " and ".join(_mlabel(m) for m in METHODS)
    caption = (f"{exp.name}: methods beyond {pair} (other learners, labelled variants), mean ± SD "
               f"over runs; described only, not tested.")
    return Table(f"{exp.name}: other methods", caption, headers, rows, n_left=2, rules_before=rules,
                 label=f"tab:{_slug(exp.name)}-others")


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
        headers += [f"{METRIC_LABELS[metric]} {_mlabel(BASELINE)}", _mlabel(PROPOSED)]
    headers.append("runs")
    rows: list[list[TCell]] = []
    for cell in group.cells:
        row = [_c(getattr(cell, v)) for v in group.variables] + ([_c(cell.N)] if show_N else [])
        runs = 0
        for metric in metrics:
            s = stats_by.loc[(cell.label, metric)]
            for method in METHODS:
                runs = max(runs, int(s[f"{method}_runs"]))
                mean, sd = s[f"{method}_mean"], s[f"{method}_sd"]
                text = "n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"
                row.append(_c(text, s["best"] in (method, "tie"), s["symbol"] if method == BASELINE else ""))
        row.append(_c(runs))
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
                 label=f"tab:{_slug(exp.name)}-scaling-{_slug(name)}")


def paper_table(exp: ExperimentReport) -> Table:
    paper = exp.paper
    headers = ["cell", "metric", "XCSF ours", "paper", "z", "within",
               "KACS ours", "paper", "z", "within", "sym ours", "paper"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    last_cell = None
    for s in paper.itertuples(index=False):
        if last_cell is not None and s.cell != last_cell:
            rules.add(len(rows))
        row = [_c(s.cell if s.cell != last_cell else ""), _c(METRIC_LABELS[s.metric])]
        last_cell = s.cell
        for method in METHODS:
            within = getattr(s, f"{method}_within")
            row += [
                _c(fmt_value(s.metric, getattr(s, f"{method}_ours"))),
                _c(fmt_value(s.metric, getattr(s, f"{method}_paper"))),
                _c(_fmt_z(getattr(s, f"{method}_z"))),
                _c("n/a" if within is None else ("yes" if within else "NO")),
            ]
        row += [_c(s.symbol_ours or "n/a"), _c(s.symbol_paper)]
        rows.append(row)
    caption = (
        f"{exp.name} against the published main table: z = (ours - published) / "
        f"sqrt(SD_pub²/{PAPER_RUNS} + SD_ours²/n_ours); within: |ours - published| ≤ max(3 SE, 5 % "
        f"of the published mean); XCSF's symbol from our runs and from the published p and means."
    )
    return Table(f"{exp.name}: fidelity to the published table", caption, headers, rows, n_left=2,
                 rules_before=rules, label=f"tab:{_slug(exp.name)}-paper")


def published_across_table(exp: ExperimentReport) -> Table:
    ours = exp.across.set_index("metric")
    pub = _published_across().set_index("metric")
    headers = ["metric", "avg rank ours", "paper", "+/-/~ ours", "paper", "Wilcoxon p ours", "paper"]
    rows = []
    for metric in PAPER_METRICS:
        if metric not in ours.index:
            continue
        o, p = ours.loc[metric], pub.loc[metric]
        rows.append(
            [
                _c(METRIC_LABELS[metric]),
                _c(f"{_fmt_rank(o[f'{BASELINE}_avg_rank'])} / {_fmt_rank(o[PROPOSED + '_avg_rank'])}"),
                _c(f"{_fmt_rank(p[f'{BASELINE}_avg_rank'])} / {_fmt_rank(p[PROPOSED + '_avg_rank'])}"),
                _c(stats.format_counts({"+": o["plus"], "-": o["minus"], "~": o["tie"]})),
                _c(stats.format_counts({"+": p["plus"], "-": p["minus"], "~": p["tie"]})),
                _c(stats.format_p(o["across_p"]), suffix=stats.DAGGER if o["significant"] else ""),
                _c(stats.format_p(p["across_p"]), suffix=stats.DAGGER if p["significant"] else ""),
            ]
        )
    caption = f"{exp.name}: across-benchmark statistics, ours and recomputed from the published means (XCSF / KACS ranks)."
    return Table(f"{exp.name}: across benchmarks vs the paper", caption, headers, rows, n_left=1,
                 label=f"tab:{_slug(exp.name)}-paper-across")


# --------------------------------------------------------------------------- writing


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-").lower() or "experiment"


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and os.replace: never a half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, text)


def _write_csv(path: Path, frame: pd.DataFrame) -> None:
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.10g"))


def parse_formats(formats: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = formats.split(",")
    out = []
    for f in formats:
        key = str(f).strip().lower().lstrip(".")
        if key == "markdown":
            key = "md"
        if key in ("latex",):
            key = "tex"
        if not key:
            continue
        if key not in FORMATS:
            raise UserError(f"unknown report format {f!r}; choose from {', '.join(FORMATS)} (comma-separated)")
        if key not in out:
            out.append(key)
    if not out:
        raise UserError(f"no report format given; choose from {', '.join(FORMATS)} (comma-separated)")
    return tuple(out)


def analyse_experiment(exp_dir: Path, paper: bool = False, control: str | None = None) -> ExperimentReport:
    """Load one experiment directory and compute its statistics (no files written)."""
    from kacs_cli.reporting import kmethods
    from kacs_cli.reporting.include import load_included

    config = _load_config(exp_dir)
    raw = _load_runs(exp_dir, config)
    entries = _config_benchmarks(config)
    included = load_included(exp_dir, config, {str(e.get("label") or e["name"]) for e in entries})
    if included.runs is not None and len(included.runs):
        raw = pd.concat([included.runs, raw], ignore_index=True)
    entries = included.entries + entries  # included cells first (the SupRB table's order)
    protocol, expected = _protocol_of(config, raw)
    metrics = PROTOCOL_METRICS[protocol]
    name = str(config.get("experiment") or (raw["experiment"].dropna().iloc[0] if "experiment" in raw.columns and raw["experiment"].notna().any() else exp_dir.name))
    notes = list(included.notes)
    if not config:
        notes.append(f"no config.yaml in {exp_dir}: missing benchmarks cannot be detected")
    lacking = [m for m in metrics if m not in raw.columns]
    if lacking:
        notes.append(f"runs.csv lacks {', '.join(lacking)}; shown as n/a")
    # A rerun may append a second row for the same run: the last one wins.
    runs = raw.drop_duplicates(subset=["cell_id", *CELL_KEY, "method", "run"], keep="last") if len(raw) else raw
    methods = _config_methods(config)
    cells = _cells_of(runs, entries) if len(runs) else []
    missing = included.missing + _missing(raw, cells, entries, methods, expected)
    cell_stats = _cell_stats(runs, cells, metrics) if cells else _empty_cell_stats()
    exp = ExperimentReport(
        name=name,
        path=exp_dir,
        protocol=protocol,
        metrics=metrics,
        expected_runs=expected,
        cells=cells,
        cell_stats=cell_stats,
        across=_across(cell_stats, metrics),
        scaling=_scaling_groups(cells),
        missing=missing,
        notes=notes,
        sources=included.sources,
        others=_other_methods(runs, cells, metrics) if cells else None,
    )
    exp.kmethods = kmethods.analyse(exp, runs, config, control)
    if not cells:
        exp.missing.insert(0, "no finished runs in runs.csv")
    if paper and protocol == "main":
        exp.paper = _paper_comparison(exp)
        exp.paper_warning = _paper_setting_warning(config, runs)
    return exp


# The setting of the published main table (SPEC sections 9 and 10).
PUBLISHED_SETTING = {"iterations": 100_000, "runs": PAPER_RUNS, "protocol": "main", "semantics": "reference"}


def _paper_setting_warning(config: dict, runs: pd.DataFrame) -> str | None:
    """A warning when the campaign is not the published setting, so its z scores mean little."""
    differences = []
    its = sorted({int(v) for v in pd.to_numeric(runs.get("iterations"), errors="coerce").dropna()}) \
        if "iterations" in runs.columns else []
    if not its and _int_or_none(config.get("iterations")) is not None:
        its = [_int_or_none(config.get("iterations"))]
    if its and its != [PUBLISHED_SETTING["iterations"]]:
        differences.append(f"{' / '.join(f'{i:,}' for i in its)} iterations per run instead of 100,000")
    semantics = str(config.get("semantics") or "reference").lower()
    if semantics != PUBLISHED_SETTING["semantics"]:
        differences.append(f"{semantics} semantics instead of reference")
    proto = config.get("protocol") if isinstance(config.get("protocol"), dict) else {}
    planned = _int_or_none(proto.get("runs"))
    if planned is not None and planned != PUBLISHED_SETTING["runs"]:
        differences.append(f"{planned} runs per cell instead of 30")
    if not differences:
        return None
    return ("Warning: this campaign differs from the published setting (" + "; ".join(differences)
            + "): the comparison with the published table is not like for like.")


def _empty_cell_stats() -> pd.DataFrame:
    cols = ["cell", "benchmark", "variant", "n", "samples", "N", "metric", f"{BASELINE}_mean", f"{BASELINE}_sd",
            f"{BASELINE}_runs", f"{PROPOSED}_mean", f"{PROPOSED}_sd", f"{PROPOSED}_runs", "n_pairs", "wilcoxon_p", "effect_size",
            "symbol", "best"]
    return pd.DataFrame(columns=cols)


def _choose_paper_experiments(exps: list[ExperimentReport]) -> None:
    """Compare with the published table only the main experiment (others reuse names like f3)."""
    named_main = [e for e in exps if e.name.lower() == "main" and e.paper is not None]
    keep = named_main or [e for e in exps if e.paper is not None and not e.paper.empty]
    for e in exps:
        if e.paper is not None and e not in keep:
            e.paper = None
    for e in keep:
        e.fidelity = _fidelity_line(e.paper)


def _scaling_csv(exp: ExperimentReport, group: ScalingGroup) -> pd.DataFrame:
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


def build_report(
    results_dir: str | Path,
    out_dir: str | Path | None = None,
    formats: Iterable[str] | str = FORMATS,
    paper: bool = False,
    figures: bool = True,
    control: str | None = None,
) -> ReportSummary:
    """Tables (md/tex/csv) and figures (PNG) for every experiment under RESULTS_DIR.

    Writes into out_dir (default RESULTS_DIR/report): report.md, report.tex,
    <experiment>_{summary,across,scaling-*,paper}.csv and figures/<experiment>_*.png.
    """
    fmts = parse_formats(formats)
    results_dir = Path(results_dir)
    from kacs_cli.reporting.index import experiment_order, index_markdown, scan_experiments

    exp_dirs, skipped = scan_experiments(results_dir)
    out = Path(out_dir) if out_dir is not None else results_dir / "report"
    exps = [analyse_experiment(d, paper=paper, control=control) for d in exp_dirs]
    from kacs_cli.reporting import kmethods

    kmethods.check_control(control, exps)  # an unknown --control: nothing written
    # the article's main comparison first, the others in the article's order, then by name
    exps.sort(key=experiment_order)
    if paper:
        _choose_paper_experiments(exps)
    _dedupe_names(exps, results_dir)

    files: list[Path] = []
    if figures:
        from kacs_cli.reporting import figures as figs

        for exp in exps:
            exp.figures, exp.figure_notes = figs.experiment_figures(exp, out / "figures")
            files += exp.figures
    else:
        for exp in exps:
            own = exp.path / "report" / "report.md"
            if own.is_file() and own.parent.resolve() != out.resolve():
                rel = Path(os.path.relpath(own, out)).as_posix()
                exp.figure_notes = [f"Not drawn in this report (--no-figures): see the experiment's own report, [{rel}]({rel})."]
            else:
                exp.figure_notes = [f"Not drawn (--no-figures); `kacs report {exp.path.as_posix()}` draws them."]

    md_parts = [f"# Report: {results_dir.as_posix()}", ""]
    tex_parts = [
        "% Tables of `kacs report`. Needs \\usepackage{booktabs}.",
        f"% Source: {tex_escape(results_dir.as_posix())}",
        "",
    ]
    skipped_lines = [f"{p.as_posix()}: no runs.csv at any depth" for p in skipped]
    if len(exps) > 1 or skipped_lines:
        md_parts.append(index_markdown(exps, skipped_lines))
    console = []
    for exp in exps:
        md, tex, con = _experiment_documents(exp, out)
        md_parts.append(md)
        tex_parts.append(tex)
        console.append(con)
        if "csv" in fmts:
            files += _experiment_csvs(exp, out)
    if paper and not any(e.paper is not None for e in exps):
        note = ("Paper comparison: none here; the published table covers the main experiment only "
                "(f1-f4, ASN, CCPP, CS, EEC under the main protocol).")
        md_parts.append(note + "\n")
        console.append(note)
    if "md" in fmts:
        path = out / "report.md"
        atomic_write_text(path, "\n".join(md_parts).rstrip() + "\n")
        files.append(path)
    if "tex" in fmts:
        path = out / "report.tex"
        atomic_write_text(path, "\n".join(tex_parts).rstrip() + "\n")
        files.append(path)
    missing = [f"{e.name}: {m}" for e in exps for m in e.missing]
    return ReportSummary(
        results_dir=results_dir,
        out_dir=out,
        experiments=exps,
        files=files,
        missing=missing,
        console_markdown="\n\n".join(console),
        skipped=skipped_lines,
    )


def _dedupe_names(exps: list[ExperimentReport], results_dir: Path) -> None:
    # Two directories may carry the same experiment name; file names must not collide.
    # Found at any depth, they may also share the folder name (results/main and
    # results/paper/main): the path below RESULTS_DIR tells them apart.
    seen: Counter = Counter(e.name for e in exps)
    for e in exps:
        if seen[e.name] > 1:
            try:
                where = e.path.relative_to(results_dir).as_posix()
            except ValueError:
                where = e.path.as_posix()
            e.name = f"{e.name}-{_slug(where.replace('/', '-'))}"


def _experiment_csvs(exp: ExperimentReport, out: Path) -> list[Path]:
    slug = _slug(exp.name)
    written = []
    frame = exp.cell_stats.copy()
    frame.insert(0, "experiment", exp.name)
    frame.insert(1, "protocol", exp.protocol)
    for path, data in ((out / f"{slug}_summary.csv", frame), (out / f"{slug}_across.csv", exp.across)):
        _write_csv(path, data)
        written.append(path)
    for group in exp.scaling:
        name = group.benchmark + ("" if group.variant.lower() in PLAIN_VARIANTS else f"-{group.variant}")
        path = out / f"{slug}_scaling-{_slug(name)}.csv"
        _write_csv(path, _scaling_csv(exp, group))
        written.append(path)
    if exp.paper is not None and not exp.paper.empty:
        path = out / f"{slug}_paper.csv"
        _write_csv(path, exp.paper)
        written.append(path)
    from kacs_cli.reporting import suprb

    if exp.cells and suprb.applies(exp):
        path = out / f"{slug}_suprb.csv"
        _write_csv(path, suprb.suprb_frame(exp))
        written.append(path)
    from kacs_cli.reporting import kmethods

    return written + kmethods.write_csvs(exp, out)


def _experiment_documents(exp: ExperimentReport, out: Path) -> tuple[str, str, str]:
    """(Markdown section, LaTeX section, console text) of one experiment."""
    from kacs_cli.reporting import kmethods, suprb

    runs_word = (f"{exp.expected_runs} run{'s' if exp.expected_runs != 1 else ''} per cell planned"
                 if exp.expected_runs else "runs per cell unknown")
    sources = "".join(f"; {s}" for s in exp.sources)
    head = f"## {exp.name}\n\nProtocol {exp.protocol} ({runs_word}); source `{exp.path.as_posix()}`{sources}.\n"
    md = [head]
    tex = [rf"% ---- experiment {tex_escape(exp.name)} ----"]
    console = [f"## {exp.name} ({exp.protocol} protocol)"]
    if exp.missing:
        lines = "\n".join(f"- {m}" for m in exp.missing)
        md.append(f"**Incomplete campaign** — what is missing:\n\n{lines}\n")
    for note in exp.notes:
        md.append(f"Note: {note}\n")
    if exp.paper_warning and exp.paper is not None:
        md.append(f"**{exp.paper_warning}**\n")
        tex.append(f"% {exp.paper_warning}")
        console.append(exp.paper_warning)
    if exp.cells:
        tables = [summary_table(exp)]
        tables += [scaling_table(exp, g) for g in exp.scaling]
        if suprb.applies(exp):
            tables.append(suprb.suprb_table(exp))
        if exp.paper is not None and not exp.paper.empty:
            tables += [paper_table(exp), published_across_table(exp)]
        tables.append(detailed_table(exp))
        if exp.others is not None and not exp.others.empty:
            tables.append(other_methods_table(exp))
        tables += kmethods.tables(exp)
        for i, t in enumerate(tables):
            rendered = render_markdown(t)
            fidelity = ""
            if exp.fidelity and t.label.endswith("-paper"):
                fidelity = f"**{exp.fidelity}**\n\n"
                tex.append(f"% {exp.fidelity}")
                console.append(exp.fidelity)
            md.append(f"### {t.title}\n\n{fidelity}{_md_prose(t.caption)}\n\n{rendered}\n")
            tex.append(render_latex(t))
            if i == 0:
                exp.summary_markdown = rendered
                console.append(rendered)
            elif (t.title.startswith(f"{exp.name}: scaling") or t.label.endswith("-suprb")
                  or kmethods.on_console(exp, t)):
                console.append(f"{t.title}\n\n{rendered}")
    if exp.figures or exp.figure_notes:
        md.append("### Figures\n")
        for path in exp.figures:
            rel = os.path.relpath(path, out)
            md.append(f"![{path.stem}]({Path(rel).as_posix()})\n")
        for note in exp.figure_notes:
            md.append(f"- {_md_prose(note)}")
        if exp.figure_notes:
            md.append("")
    return "\n".join(md), "\n\n".join(tex) + "\n", "\n\n".join(console)


# --------------------------------------------------------------------------- curves


def load_curves(exp_dir: Path) -> dict[str, dict[str, list[pd.DataFrame]]]:
    """Curves grouped as {cell: {method: [one frame per run]}}: the per-run files, or the
    committed curves.csv.gz where they are absent (kacs_cli.curvestore owns both forms)."""
    from kacs_cli import curvestore

    return curvestore.load_curves(exp_dir)


def curve_panels(exp: ExperimentReport, curve_cells: Iterable[str]) -> list[tuple[str, str]]:
    """(curve file cell, panel title) in table order; the runner names curve files by the
    cell label that runs.csv also holds, so known cells get their table label."""
    names = list(curve_cells)
    ids = [c.cell_id for c in exp.cells]
    unique = len(set(ids)) == len(ids)
    known = [(c.cell_id, c.label) for c in exp.cells if unique and c.cell_id in names]
    seen = {k for k, _ in known}
    return known + [(n, n) for n in order_curve_cells(names) if n not in seen]


def order_curve_cells(names: Iterable[str]) -> list[str]:
    """Article's benchmark order first (by the name's leading token), then natural order."""

    def natural(text: str) -> list:
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text.lower())]

    def key(name: str):
        head = re.split(r"[-_ .]", name.lower(), maxsplit=1)[0]
        idx = BENCHMARK_ORDER.index(head) if head in BENCHMARK_ORDER else len(BENCHMARK_ORDER)
        return (idx, natural(name))

    return sorted(names, key=key)


def runs_for_scaling(exp: ExperimentReport) -> pd.DataFrame:
    """The final metrics of every run of the experiment (for the scaling figure)."""
    runs = _load_runs(exp.path, _load_config(exp.path))
    return runs.drop_duplicates(subset=["cell_id", *CELL_KEY, "method", "run"], keep="last")


def cell_values(runs: pd.DataFrame, cell: Cell, method: str, metric: str) -> np.ndarray:
    return _method_values(runs, cell, method, metric).to_numpy(dtype=float)
