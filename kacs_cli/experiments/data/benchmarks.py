"""Synthetic benchmark functions f1-f4, the f3 variants (docs/algorithm.md section 8) and the
input laws.

Every function takes inputs x in [0, 1]^n (the scale the learners see) and evaluates the
textbook function at zeta = lo + (hi - lo) * x, so a generated dataset has the same form as
the authors' published samples (inputs in [0, 1], function value last).

Beyond the article, two variants of any function change how its inputs are drawn, not the
function: `skewed` draws x = u^4 (u uniform: the Beta(1/4, 1) law, median 0.06, so most rows
crowd near one end of every input, as in a heavily skewed real column) and `discrete`
draws x from the DISCRETE_LEVELS levels 0, 1/4, ..., 1 with equal probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from kacs_cli.errors import UserError

F3_VARIANTS = ("rotated", "translated", "scaled")
INPUT_LAWS = ("skewed", "discrete")
VARIANTS = (*F3_VARIANTS, *INPUT_LAWS)
SKEW_POWER = 4
DISCRETE_LEVELS = 5

#: Fixed dataset seed: the inputs of a generated benchmark are drawn once per dataset from
#: np.random.default_rng(DATASET_SEED), so every run (and both learners) share one sample.
DATASET_SEED = 0

#: Default benchmark size of the article (n = 10 inputs, 1000 samples).
DEFAULT_N = 10
DEFAULT_SAMPLES = 1000
MIN_SAMPLES = 10

# f3 variants (docs/algorithm.md section 8).
TRANSLATION = 0.20
SCALE = 1.25


def _check_function(function: str) -> str:
    key = str(function).strip().lower()
    if key not in FUNCTIONS:
        raise UserError(
            f"unknown benchmark function {function!r}; choose one of {', '.join(FUNCTIONS)}"
        )
    return key


def _check_variant(function: str, variant: str | None) -> str | None:
    if variant is None:
        return None
    key = str(variant).strip().lower()
    if key in ("", "none"):
        return None
    if key not in VARIANTS:
        raise UserError(
            f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)} (or none)"
        )
    if key not in BENCHMARKS[function].variants:
        raise UserError(
            f"variant {key!r} only applies to f3 (Cross), not {function}; drop the variant "
            f"or use function f3"
        )
    return key


def _check_n(function: str, n: int) -> None:
    need = MIN_INPUTS[function]
    if n < need:
        raise UserError(
            f"{function} ({NAMES[function]}) needs n >= {need} input variables, got n = {n}; "
            f"use a larger n"
        )


def _row_sum(terms: np.ndarray) -> np.ndarray:
    # Left-to-right accumulation over the columns (vectorized over rows) rather than
    # np.sum's pairwise blocks: it reproduces the authors' published targets to within a
    # few ulp, where np.sum drifts by up to 5e-13 relative on f4's near-zero values.
    acc = np.zeros(terms.shape[0], dtype=np.float64)
    for j in range(terms.shape[1]):
        acc += terms[:, j]
    return acc


def _rastrigin(z: np.ndarray) -> np.ndarray:
    n = z.shape[1]
    return 10.0 * n + _row_sum(z**2 - 10.0 * np.cos(2.0 * np.pi * z))


def _rosenbrock(z: np.ndarray) -> np.ndarray:
    head, tail = z[:, :-1], z[:, 1:]
    return _row_sum(100.0 * (tail - head**2) ** 2 + (head - 1.0) ** 2)


def _cross(z: np.ndarray, variant: str | None) -> np.ndarray:
    # The variants act on zeta before the two half-means are formed (translated, scaled)
    # or on the half-means themselves (rotated).
    if variant == "translated":
        z = z - TRANSLATION
    elif variant == "scaled":
        z = SCALE * z
    half = z.shape[1] // 2
    a = np.mean(z[:, :half], axis=1)
    b = np.mean(z[:, half:], axis=1)
    ring = 1.25 * np.exp(-5.0 * (a * a + b * b))
    if variant == "rotated":
        a, b = (a + b) / math.sqrt(2.0), (b - a) / math.sqrt(2.0)
    return np.maximum(np.maximum(np.exp(-10.0 * a * a), np.exp(-50.0 * b * b)), ring)


def _styblinski_tang(z: np.ndarray) -> np.ndarray:
    return 0.5 * _row_sum(z**4 - 16.0 * z**2 + 5.0 * z)


@dataclass(frozen=True)
class Benchmark:
    """One synthetic function: everything the project knows of it, in one record."""

    key: str                          # its name in configs, cell labels and runs.csv
    name: str                         # the textbook name
    domain: tuple[float, float]       # [lo, hi] of zeta = lo + (hi - lo) * x
    min_inputs: int                   # fewest input variables it is defined for
    value: Callable[[np.ndarray, str | None], np.ndarray]  # f(zeta) per row, given the variant
    variants: tuple[str, ...] = INPUT_LAWS  # the variants it has (docs/algorithm.md section 8)


# Rosenbrock has a sum over consecutive pairs and Cross splits the inputs into two halves,
# so both are undefined below two inputs. The order is the article's (tables, figures, help).
BENCHMARKS: dict[str, Benchmark] = {b.key: b for b in (
    Benchmark("f1", "Rastrigin", (-5.12, 5.12), 1, lambda z, variant: _rastrigin(z)),
    Benchmark("f2", "Rosenbrock", (-2.0, 2.0), 2, lambda z, variant: _rosenbrock(z)),
    Benchmark("f3", "Cross", (-1.0, 1.0), 2, _cross, VARIANTS),  # _cross ignores the input laws
    Benchmark("f4", "Styblinski-Tang", (-5.0, 5.0), 1, lambda z, variant: _styblinski_tang(z)),
)}
# Views of the records by key, for the code that needs one field of each.
FUNCTIONS = tuple(BENCHMARKS)
NAMES = {k: b.name for k, b in BENCHMARKS.items()}
MIN_INPUTS = {k: b.min_inputs for k, b in BENCHMARKS.items()}


def evaluate(function: str, X01: np.ndarray, variant: str | None = None) -> np.ndarray:
    """Function value of every row of X01 (inputs in [0, 1]^n; shape samples x n).

    A 1-D X01 is one sample. Returns a float64 vector with one value per row. Inputs
    outside [0, 1] are evaluated as given (the mapping to zeta is affine); only non-finite
    inputs are refused.
    """
    key = _check_function(function)
    variant = _check_variant(key, variant)
    X = np.asarray(X01, dtype=np.float64)
    if X.ndim == 1:
        X = X[np.newaxis, :]
    if X.ndim != 2:
        raise UserError(
            f"benchmark inputs must be a matrix (samples x n), got an array of shape {X.shape}"
        )
    _check_n(key, X.shape[1])
    if not np.all(np.isfinite(X)):
        raise UserError("benchmark inputs contain NaN or infinite values; pass finite inputs in [0, 1]")
    benchmark = BENCHMARKS[key]  # every name _check_function lets through has its record
    lo, hi = benchmark.domain
    return benchmark.value(lo + (hi - lo) * X, variant)


def generate(
    function: str,
    n: int,
    samples: int,
    seed: int = DATASET_SEED,
    variant: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic dataset: X ~ U[0, 1]^(samples x n) from default_rng(seed), y = f(X); an
    input-law variant (`skewed`, `discrete`) transforms those uniform draws.

    The seed is the dataset seed (DATASET_SEED = 0 by default), not a run's seed: all runs
    of an experiment train on the same sample, as the article does.
    """
    key = _check_function(function)
    variant = _check_variant(key, variant)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise UserError(f"number of inputs n must be an integer >= 1, got {n!r}")
    _check_n(key, int(n))
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < MIN_SAMPLES:
        raise UserError(
            f"number of samples must be an integer >= {MIN_SAMPLES}, got {samples!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UserError(f"dataset seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    X = rng.random((int(samples), int(n)))
    if variant == "skewed":
        X = X**SKEW_POWER
    elif variant == "discrete":
        X = np.minimum(np.floor(X * DISCRETE_LEVELS), DISCRETE_LEVELS - 1) / (DISCRETE_LEVELS - 1)
    y = evaluate(key, X, None if variant in INPUT_LAWS else variant)
    return np.ascontiguousarray(X), np.ascontiguousarray(y)
