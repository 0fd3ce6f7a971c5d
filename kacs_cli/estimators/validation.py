"""The estimators' checks of their inputs and constructor arguments.

scikit-learn stores constructor arguments unchanged and checks them only in `fit`: first
against the estimator's `_parameter_constraints` (`parameter_constraints`: each declared
hyperparameter's range and allowed texts from engine/params.py, narrowed to what the learner
acts on, and the estimator's own `ARGUMENTS`), then with these functions, each raising
`UserError` (a `ValueError`) that names the argument.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import Hidden, Interval, InvalidParameterError, Options, StrOptions
from sklearn.utils.validation import validate_data

from kacs_cli.engine import registry
from kacs_cli.engine.params import DECLARATIONS, Range
from kacs_cli.errors import UserError
from kacs_cli.scaling import (ScaleWarning, collapse_message, collapsed, constant_target, empty_columns,
                              empty_columns_message, input_ranges, missing_target, non_numeric,
                              too_few_rows)

__all__ = ["ARGUMENTS", "Argument", "NO_Y", "ParameterError", "base_seed", "categorical_cells", "categorical_columns",
           "check_fit_data", "check_n_iter", "choices_of", "declared_parameters", "fit_iterations", "interval",
           "json_param", "parameter_constraints", "plain", "scaling_ranges", "validate"]

_INT_SEED_LIMIT = 2**32
NO_Y = object()  # predict's rows: no target given


class ParameterError(UserError, InvalidParameterError):
    """A constructor argument outside its constraints: scikit-learn's error, which its tools
    expect, and a `UserError`, one line on the command line."""


@dataclass(frozen=True)
class Argument:
    """One of the estimator's own constructor arguments (beside the declared hyperparameters):
    its default, its type as the signature annotates it, its documentation and constraints."""
    default: Any
    annotation: str
    doc: str
    constraints: list


# The estimator's own arguments, after the declared hyperparameters in its signature.
ARGUMENTS: dict[str, Argument] = {
    "n_iter": Argument(100_000, "int", "Training iterations (samples) of `fit`. `partial_fit` runs one pass over its "
                                       "batch.", [Interval(Integral, 1, None, closed="left")]),
    "n_passes": Argument(None, "float | None", "Instead of n_iter: `fit` runs ceil(n_passes x rows) iterations, a "
                                               "budget that follows the data size (n_passes=150 gives about the "
                                               "budgets measured best in docs/refinement.md section 3 up to ~1,400 "
                                               "rows).", [Interval(Real, 0, None, closed="neither"), None]),
    "random_state": Argument(0, "int | np.random.RandomState | np.random.Generator | None",
                             "Learner seed. An int is the engine seed of `fit` itself (the runner's `seed`); None "
                             "draws one.", [Interval(Integral, 0, None, closed="left"), np.random.RandomState,
                                            np.random.Generator, None]),
    "input_range": Argument(None, "ArrayLike | None", "Fixed input scaling instead of the data's min/max (fit and "
                                                      "first partial_fit): a pair (min, max) for every input, or an "
                                                      "array (n_features, 2).", ["array-like", None]),
    "target_range": Argument(None, "ArrayLike | None", "Fixed target scaling (min, max) instead of the data's "
                                                       "min/max.", ["array-like", None]),
    "n_jobs": Argument(None, "int | None", "The processes that train the capacity search's candidates and the bags "
                                           "of bags > 1 at once (None: one; -1: every core); the model is the same "
                                           "whatever their number.",
                       [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1}), None]),
    "categorical_features": Argument(
        None, "str | ArrayLike | None",
        "The categorical inputs, as scikit-learn's HistGradientBoostingRegressor takes them: a boolean mask, "
        "0-based column indices, column names (X a DataFrame), or 'from_dtype' (a DataFrame's columns of pandas "
        "category dtype). Their cells may be numbers or texts; each input's categories are placed on its axis by "
        "their mean target in `fit` (docs/algorithm.md section 12); a missing cell, or a category unseen in "
        "training, is a missing input.", [StrOptions({"from_dtype"}), "array-like", None]),
}


def declared_parameters(method: str | None) -> tuple:
    """The declared hyperparameters (engine/params.py) an estimator of learner `method` takes:
    those the learner acts on, in their declared order; every one for None (an estimator that
    does not know its learner's entry when it is defined). A declaration that is no estimator
    argument (`estimator` False: a config's setting, such as `categorical`) is none of them."""
    if method is None:
        return tuple(d for d in DECLARATIONS if d.estimator)
    learner = registry.get(method)
    return tuple(d for d in DECLARATIONS if d.estimator and learner.takes(d))


def interval(valid: Range) -> Interval:
    """A declared range (engine/params.py `Range`) as scikit-learn's `Interval`."""
    return Interval(Integral if valid.whole else Real, valid.left, valid.right, closed=valid.closed)


def choices_of(declared, method: str | None) -> tuple[str, ...]:
    """The texts a declared choice allows for learner `method` (None: every one)."""
    learner = None if method is None else registry.get(method)
    return tuple(c for c in declared.choices if learner is None or learner.takes(declared, c))


def _declared_constraints(declared, method) -> list:
    if declared.choices:
        return [StrOptions(set(choices_of(declared, method)))]
    if declared.kind is bool:
        return ["boolean"]
    if declared.kind is int:
        # A whole float (a grid's 6400.0) is taken as the int it is; the declaration says
        # why any other float is not.
        return [interval(declared.valid), Hidden(float)] + ([str] if declared.per_input else [])
    return [interval(declared.valid) if declared.valid is not None else Real]


def parameter_constraints(method: str | None) -> dict:
    """scikit-learn's `_parameter_constraints` of the estimator of learner `method` (None:
    every declared hyperparameter with every allowed text): the declared ranges and texts, a
    learner's own choices (XCSF's compactions), then `ARGUMENTS`."""
    constraints = {d.name: _declared_constraints(d, method) for d in declared_parameters(method)}
    return {**constraints, **{name: argument.constraints for name, argument in ARGUMENTS.items()}}


def plain(value):
    """numpy scalars (e.g. from a GridSearchCV grid) as Python scalars for Hyperparameters."""
    return value.item() if isinstance(value, np.generic) else value


def json_param(value):
    """Constructor arguments as JSON values (numpy scalars/arrays to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.ndarray, pd.Index, pd.Series)):  # categorical_features=frame.columns[...]
        return json_param(value.tolist())
    if isinstance(value, (list, tuple)):
        return [json_param(v) for v in value]
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        return None  # not portable; the drawn seed is stored as "seed"
    return value


def validate(estimator, X, y=NO_Y, reset=True):
    """scikit-learn's input validation: 2-D float X without infinities, NaN where an input is
    missing (docs/algorithm.md section 12), and numeric y of matching length, none of it missing.
    A text column of X is named, with the way to declare it categorical."""
    try:
        if y is NO_Y:
            return validate_data(estimator, X, reset=reset, ensure_all_finite="allow-nan", dtype=np.float64)
        if y is not None:
            _refuse_missing_target(y)
        if y is not None and non_numeric(np.asarray(y)):  # numpy's UFuncTypeError otherwise, later
            raise UserError(f"y (the target) {non_numeric(np.asarray(y))}")
        return validate_data(estimator, X, y, reset=reset, y_numeric=True, ensure_all_finite="allow-nan",
                             dtype=np.float64)
    except ValueError as exc:
        if not str(exc).startswith("could not convert string to float"):
            raise
        raise UserError(_text_column(X) or str(exc)) from None


def _text_column(X) -> str | None:
    """What to say about the first column of X that holds text, if one does."""
    frame = X if hasattr(X, "iloc") else pd.DataFrame(np.asarray(X, dtype=object))
    for j in range(frame.shape[1]):
        problem = non_numeric(frame.iloc[:, j].to_numpy(dtype=object))
        if problem:
            name = f"column {frame.columns[j]!r}" if hasattr(X, "iloc") else f"column {j}"
            return (f"X: {name} {problem}; if it holds categories, declare it in categorical_features "
                    f"(e.g. categorical_features=[{frame.columns[j]!r}])")
    return None


def categorical_columns(spec, X) -> tuple[int, ...]:
    """The columns of X that `categorical_features` declares categorical, read as scikit-learn's
    HistGradientBoostingRegressor reads it: None (none), "from_dtype" (a DataFrame's columns of
    pandas category dtype; none for other data), a boolean mask with one value per column,
    0-based column indices, or column names (X a DataFrame). Anything else is a UserError."""
    what = "categorical_features"
    if spec is None:
        return ()
    columns = getattr(X, "columns", None)
    n = np.shape(X)[1] if len(np.shape(X)) == 2 else None
    if isinstance(spec, str):
        if spec != "from_dtype":
            raise UserError(f"{what} must be None, 'from_dtype', a boolean mask, column indices or column names "
                            f"(a list, e.g. [{spec!r}]), got {spec!r}")
        dtypes = getattr(X, "dtypes", None)
        if dtypes is None or columns is None:
            return ()
        return tuple(j for j, dtype in enumerate(dtypes) if isinstance(dtype, pd.CategoricalDtype))
    items = np.asarray(spec)
    if items.size == 0 or n is None:  # a 1-D or empty X: validation says what is wrong with it
        return ()
    if items.ndim != 1:
        raise UserError(f"{what} must be a flat list (a boolean mask, column indices or column names), "
                        f"got an array of shape {items.shape}")
    kinds = {type(plain(v)) for v in items.tolist()}
    if kinds == {bool}:
        if len(items) != n:
            raise UserError(f"{what} is a boolean mask of {len(items)} values but X has {n} columns; give one "
                            f"value per column")
        return tuple(int(j) for j in np.flatnonzero(items.astype(bool)))
    if kinds == {int}:
        bad = [int(j) for j in items.tolist() if not 0 <= int(j) < n]
        if bad:
            raise UserError(f"{what}: column index {bad[0]} is out of range; X has {n} columns, indices 0 to {n - 1}")
        return tuple(sorted({int(j) for j in items.tolist()}))
    if kinds == {str}:
        if columns is None:
            raise UserError(f"{what} names columns ({', '.join(map(repr, items.tolist()[:3]))}) but X has no column "
                            f"names; give column indices or a boolean mask, or X as a pandas DataFrame")
        names = [str(c) for c in columns]
        unknown = [name for name in items.tolist() if name not in names]
        if unknown:
            raise UserError(f"{what}: {unknown[0]!r} is not a column of X; its columns are {', '.join(names)}")
        return tuple(sorted({names.index(name) for name in items.tolist()}))
    raise UserError(f"{what} must hold booleans (a mask), whole numbers (column indices) or texts (column "
                    f"names), not a mix or other values; got {spec!r}")


def categorical_cells(X, columns: tuple[int, ...]):
    """(numeric, cells, labels): a copy of X with its categorical columns set to 0.0 for the
    numeric validation, the cells of each categorical column as given, and each column's name
    for messages (its DataFrame name, else "k of X")."""
    if hasattr(X, "iloc"):
        cells = [X.iloc[:, j].to_numpy() for j in columns]
        labels = [repr(str(X.columns[j])) for j in columns]
        numeric = X.copy()
        for j in columns:
            numeric.isetitem(j, np.zeros(len(X)))
        return numeric, cells, labels
    array = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
    numeric = np.array(array, dtype=array.dtype if array.dtype.kind in "biuf" else object)
    cells = [array[:, j] for j in columns]
    numeric[:, list(columns)] = 0.0
    return numeric, cells, [f"{j} of X" for j in columns]


def _refuse_missing_target(y) -> None:
    """A target with missing values (NaN, None) refused in the command line's words; text and
    complex values are left to the other checks."""
    values = np.asarray(y)
    if values.dtype.kind not in "fiubO":
        return
    try:
        values = values.astype(np.float64)
    except (TypeError, ValueError):
        return
    if values.ndim <= 2 and missing_target(values.reshape(-1)):
        raise UserError(f"y (the target) {missing_target(values.reshape(-1))}")


def check_fit_data(X, y, target_range) -> None:
    """What `fit` refuses, in the command line's words (kacs_cli.scaling): a single row, and
    a constant target unless target_range gives its scale."""
    if too_few_rows(X.shape[0], 2, "fit"):
        raise UserError(f"X: {too_few_rows(X.shape[0], 2, 'fit')} (n_samples = {X.shape[0]}: a min-max "
                        f"scale needs two rows)")
    if target_range is None and constant_target(y):
        raise UserError(f"y (the target) {constant_target(y)} (or give target_range)")


def check_n_iter(value) -> int:
    n_iter = plain(value)
    if isinstance(n_iter, bool) or not isinstance(n_iter, numbers.Integral) or n_iter < 1:
        raise UserError(f"n_iter must be a whole number >= 1, got {value!r}")
    return int(n_iter)


def fit_iterations(n_iter, n_passes, rows: int) -> int:
    """The iterations of `fit`: n_iter, or with n_passes given, ceil(n_passes x rows) (at
    least 1), so that the budget follows the data size (docs/refinement.md section 3)."""
    if n_passes is None:
        return check_n_iter(n_iter)
    passes = plain(n_passes)
    if (isinstance(passes, bool) or not isinstance(passes, numbers.Real)
            or not math.isfinite(passes) or passes <= 0):
        raise UserError(f"n_passes must be a number > 0 (passes over the training rows) or None, "
                        f"got {n_passes!r}")
    return max(1, math.ceil(passes * rows))


def check_jobs(value) -> int | None:
    """n_jobs as joblib reads it: None (one process), a whole number >= 1, or -1 (every core)."""
    jobs = plain(value)
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or not (jobs >= 1 or jobs == -1):
        raise UserError(f"n_jobs must be None, a whole number >= 1 or -1 (every core), got {value!r}")
    return int(jobs)


def base_seed(random_state) -> int:
    """The learner seed of the first training call: random_state itself when it is an int."""
    rs = random_state
    if rs is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(rs, (np.random.RandomState, np.random.Generator)):
        return int(rs.integers(_INT_SEED_LIMIT) if isinstance(rs, np.random.Generator)
                   else rs.randint(_INT_SEED_LIMIT))
    rs = plain(rs)
    if isinstance(rs, bool) or not isinstance(rs, numbers.Integral) or rs < 0:
        raise UserError(
            f"random_state must be None, a non-negative integer or a numpy RandomState/"
            f"Generator, got {random_state!r}"
        )
    return int(rs)


def _range_pair(value, name):
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (2,) or not np.all(np.isfinite(arr)):
        raise UserError(f"{name} must be a pair (min, max) of finite numbers, got {value!r}")
    return float(arr[0]), float(arr[1])


def scaling_ranges(X, y, input_range, target_range, categorical: tuple[int, ...] = ()):
    """(x_min, x_max, y_min, y_max): explicit ranges if given, else the data's (over the known
    inputs; a column without any known value is refused); the `categorical` columns, which hold
    their categories' positions on [0, 1] already, get (0, 1), the identity, whatever
    input_range says."""
    n = X.shape[1]
    if input_range is not None:
        arr = np.asarray(input_range, dtype=np.float64)
        if arr.shape == (2,):
            arr = np.tile(arr, (n, 1))
        if arr.shape != (n, 2) or not np.all(np.isfinite(arr)):
            raise UserError(
                f"input_range must be a pair (min, max) for every feature or an array of shape "
                f"({n}, 2) of finite numbers, got shape {np.shape(input_range)}"
            )
        if np.any(arr[:, 0] > arr[:, 1]):
            bad = int(np.argmax(arr[:, 0] > arr[:, 1]))
            raise UserError(f"input_range of feature {bad}: min {arr[bad, 0]} exceeds max {arr[bad, 1]}")
        x_min, x_max = arr[:, 0].copy(), arr[:, 1].copy()
    else:
        empty = empty_columns(X)
        if empty:
            raise UserError("X: " + empty_columns_message([f"column {j}" for j in empty])
                            + " or give input_range")
        x_min, x_max = input_ranges(X)
        for j, share, extreme in collapsed(X):
            if j in categorical:
                continue
            message = collapse_message(f"column {j} of X", share, extreme, ", or give input_range")
            warnings.warn(ScaleWarning(message), stacklevel=4)  # 4: the caller of fit/partial_fit
    if target_range is not None:
        y_min, y_max = _range_pair(target_range, "target_range")
        if not y_min < y_max:
            raise UserError(f"target_range must have min < max, got {target_range!r}")
    else:
        y_min, y_max = float(y.min()), float(y.max())
        for _, share, extreme in collapsed(y):
            message = collapse_message("y (the target)", share, extreme, ", or give target_range")
            warnings.warn(ScaleWarning(message), stacklevel=4)
    if y_max == y_min:  # constant target: span 2 centred on the value
        y_min, y_max = y_min - 1.0, y_max + 1.0
    if categorical:
        x_min, x_max = np.array(x_min, dtype=np.float64), np.array(x_max, dtype=np.float64)
        x_min[list(categorical)], x_max[list(categorical)] = 0.0, 1.0
    return (np.ascontiguousarray(x_min, dtype=np.float64),
            np.ascontiguousarray(x_max, dtype=np.float64), float(y_min), float(y_max))
