"""One run of a campaign: its cell's data, its training (a learner or a baseline), its record.

Nothing here writes a file: a run returns a results.RunOutput, which the campaign's parent
process saves, so a worker process (or a Dask worker on another machine) needs the data but
not the output folder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from kacs_cli import baselines
from kacs_cli.engine import bagging, capacity
from kacs_cli.engine.train import CURVE_COLUMNS, aic, errors, train_run
from kacs_cli.engine.weights import positive_rows
from kacs_cli.experiments.data import benchmarks, datasets
from kacs_cli.experiments.campaign import metrics, results
from kacs_cli.experiments.campaign.cells import Cell, DataIdentity
from kacs_cli.experiments.data.registry import DATA_DIR_ENV, get_registry, resolve_data_dir
from kacs_cli.experiments.data.protocols import Protocol, Split, make_split
from kacs_cli.experiments.campaign.tasks import Task
from kacs_cli.scaling import CategoryMap, InputTransform


@dataclass(frozen=True)
class RunSettings:
    """What every task of a campaign shares; sent to the workers with each task."""

    experiment: str
    protocol: Protocol
    iterations: int
    eval_every: int
    data_dir: str | None
    # The baselines of the campaign (baselines.Spec), imported by each worker before its
    # first run: loky restarts a worker whose memory grows by 300 MB after its first task,
    # as importing torch for a later `kan` run does, and no run's seconds include imports.
    preload: tuple = ()


# --------------------------------------------------------------------------- data


# Per-process cache: a worker runs many tasks on the same dataset, and reading CCPP or
# generating f3 at n = 20 for each of them would be wasted work.
_DATA_CACHE: dict[tuple[DataIdentity, str | None], tuple[np.ndarray, np.ndarray, np.ndarray | None]] = {}


def load_cell_rows(cell: Cell, data_dir: str | Path | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                             np.ndarray | None]:
    """(X, y, weights) of a cell, loaded or generated once per process. With a weights column
    (DataIdentity.weights) its rows of weight 0 are removed here, before the split and the
    scaling, and `weights` holds the others' (None without a weights column, or when the rows
    left weigh alike: the unweighted run)."""
    data = cell.data
    key = (data, str(resolve_data_dir(data_dir)) if data.kind == "dataset" else None)
    if key not in _DATA_CACHE:
        weight = None
        if data.kind == "function":
            X, y = benchmarks.generate(data.benchmark, data.n, data.samples, seed=data.dataset_seed,
                                       variant=data.variant)
        elif data.kind == "dataset":
            X, y = datasets.load_dataset(data.benchmark, data_dir)
            if data.nominal == "codes":
                X = datasets.merge_nominal(get_registry()[data.benchmark], X)
        else:
            X, y = datasets.load_dataset(Path(data.path), data_dir)
        if data.weights is not None:
            X, weight = datasets.weight_column(X, data.weights, data.path or data.benchmark)
            X, y, weight = positive_rows(X, y, weight, f"weights (column {data.weights})")
        for array in (X, y, weight):
            if array is not None:
                array.setflags(write=False)
        _DATA_CACHE[key] = (X, y, weight)
    return _DATA_CACHE[key]


def load_cell_data(cell: Cell, data_dir: str | Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a cell (load_cell_rows without the weights)."""
    return load_cell_rows(cell, data_dir)[:2]


# Mixed into the seed of the missing cells' stream, so that it is independent of the stream
# the split draws from the split seed alone (protocols.make_split).
MISSING_SALT = 0x6D636172


def missing_cells(shape: tuple[int, int], fraction: float, split_seed: int) -> np.ndarray:
    """The input cells (rows x inputs) a run with `missing: fraction` removes: one uniform draw
    per cell, row by row, from a generator seeded by the run's split seed and MISSING_SALT; a
    cell is missing where its draw is below `fraction`. The draws do not depend on the
    fraction, so at one split seed the cells of 10 % are a subset of those of 30 %, and every
    method of a run (whatever process trains it) removes the same cells."""
    draws = np.random.default_rng([int(split_seed), MISSING_SALT]).random(shape)
    return draws < fraction


def run_rows(cell: Cell, split_seed: int, data_dir: str | Path | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray | None]:
    """(X, y, weights) of one run of a cell: load_cell_rows, with the input cells of
    `missing_cells` set to NaN (train and test rows alike, before the split; never the
    target) where the cell's data remove a fraction of them (DataIdentity.missing)."""
    X, y, weight = load_cell_rows(cell, data_dir)
    if cell.data.missing is None:
        return X, y, weight
    X = X.copy()
    X[missing_cells(X.shape, cell.data.missing, split_seed)] = np.nan
    return X, y, weight


def mean_imputed(X_train: np.ndarray, X_test: np.ndarray,
                 weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X_train, X_test) with each missing input (NaN) replaced by its column's mean over the
    known values of the train rows, weighted by the rows' sample weights when given: what
    scikit-learn's SimpleImputer(strategy="mean") fitted on the train rows does. The test
    rows never enter the means. A column without a known train value has been refused by
    the split already."""
    known = ~np.isnan(X_train)
    w = np.ones(X_train.shape[0]) if weight is None else np.asarray(weight, dtype=np.float64)
    mass = known * w[:, None]
    means = np.where(known, X_train, 0.0).T @ w / mass.sum(axis=0)
    return np.where(np.isnan(X_train), means, X_train), np.where(np.isnan(X_test), means, X_test)


def categorical_columns(cell: Cell) -> tuple[int, ...]:
    """The input columns of a cell's data that name categories (DataIdentity.categorical_columns:
    a registry data set's nominal inputs read as codes)."""
    return cell.data.categorical_columns


def placed_categories(X: np.ndarray, y: np.ndarray, split: Split, columns: tuple[int, ...], weight=None):
    """A split's train and test inputs with the categorical `columns` at their categories'
    positions, learned from the train rows of the raw data (X, y), with their sample weights
    `weight` when given, in place of their min-max scaled codes (docs/algorithm.md section 12)."""
    train, test = X[split.train_index], X[split.test_index]
    labels = [f"{j}" for j in columns]
    categories = CategoryMap.fit(columns, [train[:, j] for j in columns], y[split.train_index], labels, weight)
    return (categories.place(split.X_train, [train[:, j] for j in columns]),
            categories.place(split.X_test, [test[:, j] for j in columns]))


def missing_data(cells: Iterable[Cell], data_dir: str | Path | None) -> list[Cell]:
    """Cells whose data file is absent (or fails its checksum); generated cells never are."""
    out = []
    for cell in cells:
        if cell.data.kind == "dataset" and datasets.missing_datasets([cell.data.benchmark], data_dir):
            out.append(cell)
        elif cell.data.kind == "csv" and not Path(cell.data.path).is_file():
            out.append(cell)
    return out


def missing_message(missing: list[Cell], data_dir: str | Path | None) -> str:
    """What to do about the cells `missing_data` found, in one line."""
    named = list(dict.fromkeys(c.data.benchmark for c in missing if c.data.kind == "dataset"))
    files = list(dict.fromkeys(c.data.path for c in missing if c.data.kind == "csv"))
    parts = []
    if named:
        where = resolve_data_dir(data_dir)
        parts.append(
            f"missing dataset(s) {', '.join(named)} in {where} (absent, or not matching the registry "
            f"checksum): get them with `kacs data fetch {' '.join(named)}` "
            f"(the article's need internet; the suite's are built from the packages of the suite extra) "
            f"or `kacs data import DIR` (from a folder holding the CSVs), or point "
            f"--data-dir / ${DATA_DIR_ENV} at the folder that has them"
        )
    if files:
        parts.append(f"CSV file(s) not found: {', '.join(files)} (check the path in the config)")
    return "; ".join(parts) + "; or pass --skip-missing to run the other benchmarks"


# --------------------------------------------------------------------------- one run


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


def _record(task: Task, settings: RunSettings, X: np.ndarray, *, N: int | None, iterations: int | None,
            measured: dict, final_N: int | None) -> results.RunRecord:
    """A run's record: which run it is (shared by learners and baselines) and what it measured."""
    return results.RunRecord(
        experiment=settings.experiment, benchmark=task.cell.label, variant=task.cell.data.variant or "",
        method=task.method, run=task.run, split_seed=task.split_seed, seed=task.seed,
        n=int(X.shape[1]), samples=int(X.shape[0]), N=N, iterations=iterations, measured=measured,
        final_N=final_N)


def execute_task(task: Task, settings: RunSettings) -> results.RunOutput:
    """Train one run and return its record, curve and population (nothing is written here)."""
    cell = task.cell
    baselines.preload(settings.preload)
    X, y, weight = run_rows(cell, task.split_seed, settings.data_dir)
    split = make_split(X, y, settings.protocol, task.split_seed, settings.protocol.train_fraction)
    # The rows' sample weights, split as the rows are (None: unweighted).
    weights = ({"weight": None, "test_weight": None} if weight is None else
               {"weight": weight[split.train_index], "test_weight": weight[split.test_index]})
    params = cell.params[task.method]
    if params.impute == "mean" and np.isnan(X).any():
        # Filled on the raw inputs with the means of this split's train rows, then split again
        # (the same rows: the permutation depends on the split seed and the row count alone),
        # so that every step after it (scaling, categories, transform) sees complete inputs.
        X = X.copy()
        X[split.train_index], X[split.test_index] = mean_imputed(X[split.train_index], X[split.test_index],
                                                                 weights["weight"])
        split = make_split(X, y, settings.protocol, task.split_seed, settings.protocol.train_fraction)
    if baselines.find(cell.engine(task.method)) is not None:
        return _execute_baseline(task, settings, X, split, **weights)
    columns = categorical_columns(cell) if params.categorical else ()
    X_train, X_test = placed_categories(X, y, split, columns, weights["weight"]) if columns else (split.X_train, split.X_test)
    # The method's input transform, fitted on this run's train rows (identity for minmax);
    # categorical columns pass through it.
    transform = InputTransform.fit(params.input_transform, X_train, keep=columns)
    X_train, X_test = transform.apply(X_train), transform.apply(X_test)
    chosen = None
    if params.capacity == "search":
        chosen = capacity.search(cell.engine(task.method), X_train, split.y_train, params, settings.iterations,
                                 task.seed, weight=weights["weight"])
    run_params = params if chosen is None else capacity.chosen_params(params, chosen)
    if params.bags > 1:
        result = bagging.train_bagged_run(
            cell.engine(task.method), X_train, split.y_train, X_test, split.y_test,
            params=run_params, iterations=settings.iterations, seed=task.seed, **weights)
    else:
        result = train_run(
            cell.engine(task.method), X_train, split.y_train, X_test, split.y_test,
            params=run_params, iterations=settings.iterations, eval_every=settings.eval_every, seed=task.seed,
            **weights)
    # The engine's result names each final metric as its runs.csv column (metrics.py).
    measured = {m.name: _plain(result.final[m.name]) for m in metrics.FINAL}
    measured.update((m.name, int(measured[m.name])) for m in metrics.FINAL if m.integer)
    measured[metrics.SECONDS.name] = float(result.seconds)
    measured.update((m.name, _plain(result.final[m.name])) for m in metrics.OPTIONAL if m.name in result.final)
    if chosen is not None:
        measured["capacity_N"], measured["capacity_seconds"] = int(chosen.chosen_N), float(chosen.seconds)
        if chosen.chosen_channels is not None:
            measured["capacity_channels"] = int(chosen.chosen_channels)
        if chosen.chosen_smoothness is not None:
            measured["capacity_smoothness"] = float(chosen.chosen_smoothness)
    # The budget at the end of the run: N itself unless budget: adaptive grew it.
    record = _record(task, settings, X, N=int(params.N), iterations=settings.iterations, measured=measured,
                     final_N=int(result.final["final_N"]))
    return results.RunOutput(task.key, record.as_dict(), result.curve, result.population)


def _execute_baseline(task: Task, settings: RunSettings, X: np.ndarray, split, weight=None,
                      test_weight=None) -> results.RunOutput:
    """One run of a baseline (kacs_cli/baselines): fitted once on the run's split, with the
    run's learner seed (and the train rows' sample weights, where the cell has them); the
    learners' metrics, weighted likewise, no curve, no rules (empty fields)."""
    spec = task.cell.params[task.method]
    X_train, X_test = split.X_train, split.X_test
    columns = list(categorical_columns(task.cell)) if spec.categorical else []
    if columns:
        # The estimator's categories are the data's level codes, not their min-max scaled values.
        X_train, X_test = X_train.copy(), X_test.copy()
        X_train[:, columns], X_test[:, columns] = X[split.train_index][:, columns], X[split.test_index][:, columns]
    fitted = baselines.fit_predict(spec, task.seed, X_train, split.y_train, X_test, sample_weight=weight,
                                   categorical=tuple(columns))
    measured = dict.fromkeys((m.name for m in metrics.FINAL), math.nan)
    measured["train_mae"], measured["train_mse"] = errors(fitted.y_train, split.y_train, weight)
    measured["test_mae"], measured["test_mse"] = errors(fitted.y_test, split.y_test, test_weight)
    measured.update(rules=None, micro=None, params=fitted.params)
    if fitted.params is not None:
        measured["aic"] = float(aic(split.X_train.shape[0], measured["train_mse"], fitted.params))
    measured[metrics.SECONDS.name] = float(fitted.seconds)
    record = _record(task, settings, X, N=None, iterations=spec.iterations, measured=measured, final_N=None)
    return results.RunOutput(task.key, record.as_dict(), pd.DataFrame(columns=list(CURVE_COLUMNS)), pd.DataFrame())
