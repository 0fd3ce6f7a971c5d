"""A resolved config's cells read once into records, the one run record of learners and
baselines, and the one place that decides a protocol's error."""

import math

import pandas as pd
import pytest

from kacs_cli.experiments.campaign import metrics
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.results import (COUNT_COLUMNS, INT_COLUMNS, OPTIONAL_COLUMNS, RUN_COLUMNS,
                                                   ResolvedConfig, RunRecord, records_frame, row_identity)
from kacs_cli.experiments.campaign.reuse import run_identities
from kacs_cli.experiments.data.protocols import PROTOCOLS, protocol_or_default
from kacs_cli.reporting.loading import config_benchmarks, planned_methods, protocol_of

RAW = {
    "experiment": "t", "methods": ["xcsf", "kacs", "ridge"], "hyperparameters": {"N": 300},
    "benchmarks": [{"name": "f1", "n": 2, "samples": 150}, {"name": "f1", "n": 3, "samples": 150, "N": 500}],
    "protocol": {"name": "main", "runs": 2}, "iterations": 100,
}


def test_a_cell_kacs_run_writes_reads_back_field_by_field():
    config = resolve_config(RAW)
    cells = ResolvedConfig.parse(config.to_yaml()).cells
    first, second = cells
    assert (first.label, first.benchmark, first.variant, first.n, first.samples) == ("f1-n2", "f1", None, 2, 150)
    assert second.label == "f1-n3-N500" and second.n == 3
    # Every method of the config runs on each cell: no `methods` of its own is written.
    assert first.methods == () and list(first.settings) == ["xcsf", "kacs", "ridge"]
    assert (first.settings["xcsf"].N, second.settings["kacs"].N, first.settings["ridge"].N) == (300, 500, None)
    assert first.settings["ridge"].params["alpha"] == 1.0 and first.settings["kacs"].params is None
    # The cell's budget is one only where every method has it: the ridge has none.
    assert first.N is None
    assert "label" not in first.data and "hyperparameters" not in first.data
    assert first.data["kind"] == "function" and first.data["n"] == 2
    assert first.settings_of("kacs") == config.cells[0].params["kacs"].as_dict()
    assert first.settings_of("kan") is None


def test_hand_written_cells_of_other_forms_read_as_empty_not_as_errors():
    resolved = ResolvedConfig.of({
        "methods": "xcsf, KACS",
        "cells": [
            {"label": "a", "methods": "kacs", "hyperparameters": ["not", "a", "mapping"], "n": "ten"},
            {"label": "b", "hyperparameters": {"kacs": {"N": "800"}, "xcsf": {"N": 800.0}}},
            {"label": "c", "hyperparameters": {"kacs": {"N": 800}, "xcsf": {"N": 900}}},
            {"no label": True}, "a text",
        ],
        "report": {"include": [{"experiment": "alt", "benchmarks": ["asn", 7]}, {"experiment": "e2"},
                               {"benchmarks": ["x"]}]},
    })
    a, b, c = resolved.cells
    assert (a.methods, a.settings, a.N, a.n, a.benchmark) == ((), {}, None, "ten", "a")
    assert b.N == 800 and c.N is None  # "800" and 800.0 are the budget 800; 800 and 900 are none
    assert planned_methods(resolved) == {"a": [], "b": ["kacs", "xcsf"], "c": ["kacs", "xcsf"]}
    assert [(i.experiment, i.benchmarks) for i in resolved.includes] == [("alt", ("asn", "7")), ("e2", None)]
    entries = config_benchmarks(resolved)
    assert [(e.label, e.name, e.N) for e in entries] == [("a", "a", None), ("b", "b", 800), ("c", "c", None)]
    hand = config_benchmarks(ResolvedConfig.of({"benchmarks": ["f1", {"name": "f3", "variant": "rotated", "n": 5},
                                                               {"label": "x"}, 3]}))
    assert [(e.shown, e.variant, e.n) for e in hand] == [("f1", None, None), ("f3", "rotated", 5)]


def test_a_cell_with_other_settings_keeps_the_rest_and_reuse_tells_its_runs_apart():
    resolved = ResolvedConfig.parse(resolve_config(RAW).to_yaml())
    first, second = resolved.cells
    settings = dict(first.settings)
    settings["kacs"] = second.settings["kacs"]
    changed = resolved.with_cells([first.with_settings(settings), second])
    assert changed.cells[0].settings_of("kacs")["N"] == 500 and changed.cells[0].data == first.data
    assert changed.cells[1].written == second.written and changed.data["experiment"] == "t"
    # A run's identity is its cell's data and its method's settings: 3 methods x 2 cells,
    # and a changed setting is another run.
    assert sum(len(v) for v in run_identities(resolved).values()) == 6 == len(run_identities(resolved))
    assert run_identities(changed).keys() != run_identities(resolved).keys()


def test_run_columns_come_from_the_record_and_the_metric_declarations():
    assert RUN_COLUMNS[:11] == ("experiment", "benchmark", "variant", "method", "run", "split_seed", "seed",
                                "n", "samples", "N", "iterations")
    assert RUN_COLUMNS[11:] == (*(m.name for m in metrics.FINAL), "seconds", "final_N")
    assert COUNT_COLUMNS == {"run": 0, "split_seed": 0, "seed": 0, "n": 1, "samples": 1, "N": 1,
                             "iterations": 1, "final_N": 1}
    assert set(INT_COLUMNS) == {*COUNT_COLUMNS, "rules", "micro", "params", "refine_iterations",
                                "compacted_rules", "compacted_params", "capacity_N", "capacity_channels"}


def _record(method, N, measured, final_N):
    return RunRecord("e", "f1", "", method, 0, 0, 0, 2, 150, N, 100, measured, final_N)


def test_one_record_for_a_learner_and_a_baseline():
    base = {m.name: 3 if m.integer else 0.5 for m in metrics.FINAL} | {"seconds": 1.0}
    learner = _record("kacs", 300, {**base, "rules": 7, "evolved_aic": -3.0, "refine_iterations": 4}, 300)
    baseline = _record("ridge", None, {**base, "rules": None, "micro": None}, None)
    row = learner.as_dict()
    # The columns in runs.csv's order, the optional ones the run has after them in theirs.
    assert list(row) == [*RUN_COLUMNS, "evolved_aic", "refine_iterations"]
    assert list(OPTIONAL_COLUMNS).index("evolved_aic") < list(OPTIONAL_COLUMNS).index("refine_iterations")
    assert list(baseline.as_dict()) == list(RUN_COLUMNS)
    frame = records_frame({"b": baseline.as_dict(), "a": row}, ["a", "b"])
    assert list(frame.columns) == [*RUN_COLUMNS, "evolved_aic", "refine_iterations"]
    assert frame["N"].tolist() == [300, pd.NA] and frame["rules"].tolist() == [7, pd.NA]
    assert math.isnan(frame["evolved_aic"].iloc[1])
    assert row_identity(row) == ("f1", "kacs", 0, 0, 0)
    assert row_identity({**row, "run": 3.0, "method": "kacs"}) == ("f1", "kacs", 3, 0, 0)


def test_a_protocols_error_is_decided_by_the_protocol():
    assert metrics.PROTOCOL_METRICS == {"main": ("train_mae", "test_mae", "rules", "params", "aic"),
                                        "alternative": ("train_mse", "test_mse", "rules", "params", "aic")}
    assert metrics.protocol_metrics("Alternative") == metrics.PROTOCOL_METRICS["alternative"]
    assert protocol_or_default("somebody's") is PROTOCOLS["main"]
    assert protocol_or_default(" ALTERNATIVE ").metric == "mse"


@pytest.mark.parametrize("filled, named, expected", [
    (("test_mse",), "alternative", 64), (("test_mae",), "main", 30),
    (("test_mae", "test_mse"), "main", 30), ((), "main", 30),
])
def test_a_report_without_a_known_protocol_takes_the_one_whose_error_alone_is_filled(filled, named, expected):
    runs = pd.DataFrame({"test_mae": [math.nan], "test_mse": [math.nan]})
    for column in filled:
        runs[column] = [0.1]
    assert protocol_of(ResolvedConfig.of({"protocol": "unknown"}), runs) == (named, expected)
    assert protocol_of(ResolvedConfig.of({"protocol": {"name": "alternative", "runs": 5}}), runs) == ("alternative", 5)
