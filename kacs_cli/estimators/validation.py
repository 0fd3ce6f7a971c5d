"""The estimators' checks of their inputs and constructor arguments.

scikit-learn stores constructor arguments unchanged and checks them only in `fit`; these
functions do that check, each raising `UserError` (a `ValueError`) that names the argument.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.utils.validation import validate_data

from kacs_cli.engine.weights import positive_rows
from kacs_cli.errors import UserError
from kacs_cli.scaling import (ScaleWarning, collapse_message, collapsed, constant_target, non_numeric,
                              too_few_rows)

__all__ = ["base_seed", "check_fit_data", "check_n_iter", "fit_iterations", "json_param", "plain", "scaling_ranges",
           "validate", "weighted_rows"]

_INT_SEED_LIMIT = 2**32
_NO_Y = object()


def plain(value):
    """numpy scalars (e.g. from a GridSearchCV grid) as Python scalars for Hyperparameters."""
    return value.item() if isinstance(value, np.generic) else value


def json_param(value):
    """Constructor arguments as JSON values (numpy scalars/arrays to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [json_param(v) for v in value]
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        return None  # not portable; the drawn seed is stored as "seed"
    return value


def validate(estimator, X, y=_NO_Y, reset=True):
    """scikit-learn's input validation: 2-D finite float X (and numeric y of matching length)."""
    if y is _NO_Y:
        return validate_data(estimator, X, reset=reset, ensure_all_finite=True, dtype=np.float64)
    if y is not None and non_numeric(np.asarray(y)):  # numpy's UFuncTypeError otherwise, later
        raise UserError(f"y (the target) {non_numeric(np.asarray(y))}")
    return validate_data(estimator, X, y, reset=reset, y_numeric=True, ensure_all_finite=True,
                         dtype=np.float64)


def weighted_rows(X, y, sample_weight):
    """(X, y, weights) of the validated rows given `sample_weight` (docs/algorithm.md section
    12, "Sample weights"): rows of weight 0 removed before anything else (the scaling
    included), and the weights None, the unweighted path, when there are none or the rows left
    weigh alike. A weight that is negative, NaN or infinite, a vector of another length than
    the rows, or weights all zero are UserErrors naming sample_weight."""
    if sample_weight is None:
        return X, y, None
    return positive_rows(X, y, sample_weight, "sample_weight")


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


def scaling_ranges(X, y, input_range, target_range):
    """(x_min, x_max, y_min, y_max): explicit ranges if given, else the data's."""
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
        x_min, x_max = X.min(axis=0), X.max(axis=0)
        for j, share, extreme in collapsed(X):
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
    return (np.ascontiguousarray(x_min, dtype=np.float64),
            np.ascontiguousarray(x_max, dtype=np.float64), float(y_min), float(y_max))
