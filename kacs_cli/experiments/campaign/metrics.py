"""What each measured column of runs.csv is: one declaration per metric.

The runner writes these columns (results.py), a run fills them (execution.py) and the report
checks, formats, labels and compares them (kacs_cli/reporting); all of them read this table.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from kacs_cli.engine.train import COMPACT_KEYS, REFINE_KEYS
from kacs_cli.experiments.data.protocols import PROTOCOLS, protocol_or_default


@dataclass(frozen=True)
class Metric:
    name: str               # the runs.csv column
    label: str              # in the report's tables and figures
    integer: bool = False   # a count, written as a whole number (empty where a method has none)
    whole: bool = False     # printed without decimals: counts, and AIC, whose decimals say nothing
    low: float = 0.0        # the range a value of the column may take
    high: float = math.inf
    # The report's tables of every protocol compare the methods by it (each protocol's train
    # and test error besides: `protocol_metrics`).
    compared: bool = False
    # Every metric compared so far is: the ranks, the +/-/~ symbols and the bold best mean
    # of the report assume it (kacs_cli/reporting/stats.py, kstats.py).
    lower_is_better: bool = True


# A trained model's final evaluation (the engine's TrainResult.final, whose keys are these
# names), in runs.csv's order; the report's tables of a protocol list its metrics in this order too.
FINAL = (
    Metric("train_mae", "train MAE"),
    Metric("test_mae", "test MAE"),
    Metric("train_mse", "train MSE"),
    Metric("test_mse", "test MSE"),
    Metric("rules", "rules", integer=True, whole=True, compared=True),
    Metric("micro", "micro", integer=True, whole=True),
    Metric("params", "params", integer=True, whole=True, compared=True),
    Metric("aic", "AIC", whole=True, low=-math.inf, compared=True),
    Metric("cover_rate", "cover rate", high=1.0),
    Metric("cover_rate_inner", "inner cover rate", high=1.0),
    Metric("cover_rate_outer", "outer cover rate", high=1.0),
)
SECONDS = Metric("seconds", "seconds")
_BY_BASE = {m.name: m for m in (*FINAL, SECONDS)}


def _later(key: str) -> Metric:
    """A refined or compacted run's extra column (engine REFINE_KEYS, COMPACT_KEYS): the metric
    it measures again (evolved_test_mae is a test MAE), under its own name and in no table."""
    prefix, base = key.split("_", 1)
    if base == "iterations":
        return Metric(key, "refinement iterations", integer=True, whole=True)
    return dataclasses.replace(_BY_BASE[base], name=key, label=f"{prefix} {_BY_BASE[base].label}", compared=False)


# A run with `capacity: search`: the budget it chose and the search's training time; with
# `capacity_channels: both`, also the number of outer channels it chose; with `smoothness:
# search`, the smoothness strength it chose.
CAPACITY = (Metric("capacity_N", "chosen N", integer=True, whole=True, low=1.0),
            Metric("capacity_seconds", "capacity search seconds"),
            Metric("capacity_channels", "chosen channels", integer=True, whole=True, low=1.0),
            Metric("capacity_smoothness", "chosen smoothness", high=math.inf))
# Columns only some runs have (results.OPTIONAL_COLUMNS).
OPTIONAL = (*(_later(key) for key in (*REFINE_KEYS, *COMPACT_KEYS)), *CAPACITY)
ALL = (*FINAL, SECONDS, *OPTIONAL)
BY_NAME = {m.name: m for m in ALL}
# The column measuring each final metric on the compacted model (COMPACT_KEYS): a compacted
# run's final model is that one, and a final metric missing here was not measured on it.
COMPACTED_OF = {m.name: f"compacted_{m.name}" for m in FINAL if f"compacted_{m.name}" in BY_NAME}


def protocol_metrics(protocol: str) -> tuple[str, ...]:
    """The report's columns of a protocol: its train and test error (the protocol's `metric`),
    then the metrics every protocol compares by."""
    error = protocol_or_default(protocol).metric
    return (f"train_{error}", f"test_{error}", *(m.name for m in FINAL if m.compared))


PROTOCOL_METRICS = {p: protocol_metrics(p) for p in PROTOCOLS}


def metric_label(name: str) -> str:
    """A column's label, or its name where it is no metric."""
    return BY_NAME[name].label if name in BY_NAME else name


def printed_whole(name: str) -> bool:
    return name in BY_NAME and BY_NAME[name].whole
