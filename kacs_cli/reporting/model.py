"""The data model of a report: cells, one experiment's results, and the vocabulary they use.

Every other module of the reporting layer passes these around; this one imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from kacs_cli.engine.registry import DEFAULT_PAIR
from kacs_cli.experiments.data.registry import MAIN_TABLE
from kacs_cli.experiments.data.protocols import protocol_or_default

# The article's two-method tables: the baseline's rows first, its Wilcoxon symbol against the
# proposal (engine/registry.py holds the pair).
METHODS = DEFAULT_PAIR
CELL_KEY = ("benchmark", "variant", "n", "samples", "N")
# The article's benchmark order (its main table's); anything else follows alphabetically.
BENCHMARK_ORDER = MAIN_TABLE
# Variant values that mean "the plain function" and are not worth printing.
PLAIN_VARIANTS = ("", "none", "base", "original", "standard", "plain", "nan")


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
    refinement: pd.DataFrame | None = None  # refinement.analyse: refined methods, before and after
    compaction: pd.DataFrame | None = None  # compaction.analyse: compacted methods, before and after
    capacity: pd.DataFrame | None = None  # capacity.analyse: the budgets searching methods chose, the cost
    variants: pd.DataFrame | None = None  # variants.analyse: each variant against its base
    # missing_inputs.MissingInputs: values removed at random, native against imputed (None: no such cell)
    missing_inputs: Any = None
    pairwise: pd.DataFrame | None = None  # pairwise.analyse: every two methods, per cell (CSV only)
    pareto: Any = None  # pareto.Pareto: accuracy against size, the readable front (None: no readable baseline)
    # Methods whose runs were compacted: the tables of every method show them by their
    # compacted model (loading.final_models) and say so.
    compacted_methods: tuple[str, ...] = ()
    # (cell label, method, run) of every row of the folder's runs.csv: the runs whose curves
    # the figures may draw (None: every curve in the folder).
    finished: frozenset | None = None

    @property
    def error(self) -> str:
        """The error its tables compare the methods by: its protocol's ("mae" or "mse")."""
        return protocol_or_default(self.protocol).metric

    @property
    def error_word(self) -> str:
        return self.error.upper()

    @property
    def target_word(self) -> str:
        # docs/algorithm.md section 1: min-max to [-1, 1] (main) or standardized with the train split (alternative)
        return "standardized" if protocol_or_default(self.protocol).target == "standard" else "normalized"


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
