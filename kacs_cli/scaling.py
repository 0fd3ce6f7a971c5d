"""The one min-max scaling of docs/algorithm.md section 1, shared by the protocols and the estimators.

Inputs go to [0, 1] with per-column (min, max) of the train rows' known values; a constant
column maps to 0.5. A missing input (NaN) stays NaN through every step (docs/algorithm.md
section 12): the rules read it as "don't care". The target goes to [-1, 1] with the train rows' (min, max), in the authors' expression
2 (y - min) / (max - min) - 1, so that normalized targets match theirs bit for bit. A run of
the protocol and an estimator fitted on the same unscaled train rows therefore see the same
numbers (tests/test_api.py checks it).
"""

from __future__ import annotations

import warnings

import numpy as np


def input_ranges(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column (min, max) of the known values (NaN is missing); a column without any
    known value must be refused first (`empty_columns`)."""
    missing = np.isnan(X)
    if not missing.any():
        return X.min(axis=0), X.max(axis=0)
    return np.nanmin(X, axis=0), np.nanmax(X, axis=0)


def scale_inputs(X: np.ndarray, x_min: np.ndarray, x_max: np.ndarray, *, clip: bool) -> np.ndarray:
    """Inputs to [0, 1]; rows outside the train range are clipped when `clip` (test rows,
    predictions); train rows lie inside by construction. Missing values (NaN) stay NaN."""
    span = x_max - x_min
    constant = span == 0.0
    safe = np.where(constant, 1.0, span)
    # (X - x_min) / safe is NaN where X is: a constant column keeps its missing values too.
    scaled = np.where(constant & (X == X), 0.5, (X - x_min) / safe)
    return np.clip(scaled, 0.0, 1.0) if clip else scaled


def scale_target(y: np.ndarray, y_min: float, y_max: float, *, clip: bool) -> np.ndarray:
    """Target to [-1, 1] (y_max > y_min); clipped when `clip` (the main protocol's test rows)."""
    scaled = 2.0 * (y - y_min) / (y_max - y_min) - 1.0
    return np.clip(scaled, -1.0, 1.0) if clip else scaled


def unscale_target(y_scaled: np.ndarray, y_min: float, y_max: float) -> np.ndarray:
    """The [-1, 1] scale back to the target's units (the inverse of `scale_target`)."""
    return (y_scaled + 1.0) * (y_max - y_min) / 2.0 + y_min


class InputTransform:
    """The input transform after min-max scaling (Hyperparameters.input_transform), fitted on
    the train rows' [0, 1] inputs and applied to every row the rules see.

    `minmax` is the identity (docs/algorithm.md section 1, the article). `quantile` maps each column
    through its empirical distribution on the train rows to uniform on [0, 1]
    (scikit-learn's QuantileTransformer, at most 1000 quantiles, no subsampling): a skewed
    column then spreads over [0, 1] instead of crowding into a corner, where the inner
    rules' intervals cannot resolve it, and the levels of a discrete column sit at their
    mid-ranks. Values outside the train range map to 0 or 1.
    """

    def __init__(self, name: str, quantiles: np.ndarray | None = None,
                 references: np.ndarray | None = None):
        self.name = name
        self._quantile = None
        if name == "quantile":
            from sklearn.preprocessing import QuantileTransformer

            qt = QuantileTransformer(n_quantiles=len(references), output_distribution="uniform",
                                     subsample=None)
            qt.quantiles_ = np.asarray(quantiles, dtype=np.float64)
            qt.references_ = np.asarray(references, dtype=np.float64)
            qt.n_quantiles_ = len(references)
            qt.n_features_in_ = qt.quantiles_.shape[1]
            self._quantile = qt

    @classmethod
    def fit(cls, name: str, X01: np.ndarray) -> "InputTransform":
        if name == "minmax":
            return cls(name)
        from sklearn.preprocessing import QuantileTransformer

        X01 = np.asarray(X01, dtype=np.float64)
        with warnings.catch_warnings():
            # A column without any known value (possible under an explicit input_range) has
            # no quantiles: it keeps the identity, and its missing values stay missing.
            warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
            qt = QuantileTransformer(n_quantiles=max(2, min(1000, X01.shape[0])),
                                     output_distribution="uniform", subsample=None).fit(X01)
        quantiles = qt.quantiles_
        if np.isnan(quantiles).any():
            quantiles = np.where(np.isnan(quantiles), qt.references_[:, None], quantiles)
        return cls(name, quantiles, qt.references_)

    @property
    def n_features(self) -> int | None:
        """The columns a fitted quantile transform expects (None: any, the identity)."""
        return None if self._quantile is None else self._quantile.quantiles_.shape[1]

    def apply(self, X01: np.ndarray) -> np.ndarray:
        if self._quantile is None:
            return X01
        return np.ascontiguousarray(np.clip(self._quantile.transform(X01), 0.0, 1.0))

    def state(self) -> dict:
        """JSON values from which `from_state` rebuilds the transform (model files)."""
        if self._quantile is None:
            return {"name": self.name}
        return {"name": self.name, "quantiles": self._quantile.quantiles_.tolist(),
                "references": self._quantile.references_.tolist()}

    @classmethod
    def from_state(cls, state: dict) -> "InputTransform":
        if state.get("name") == "quantile":
            quantiles = np.asarray(state["quantiles"], dtype=np.float64)
            references = np.asarray(state["references"], dtype=np.float64)
            if quantiles.ndim != 2 or quantiles.shape[0] != references.shape[0]:
                raise ValueError("input transform entry malformed")
            return cls("quantile", quantiles, references)
        if state.get("name") == "minmax":
            return cls("minmax")
        raise ValueError("input transform entry malformed")
# --------------------------------------------------------------------------- data that cannot be scaled
#
# The command line (experiments/data/datasets.py) and the estimators (estimators/validation.py)
# refuse the same data in the same words: each names the data its own way (a file and its last
# column, or `y`) and adds these.


def missing_target(y: np.ndarray) -> str | None:
    """Why the target `y` cannot be learned from, if some of its values are missing (NaN);
    else None."""
    missing = int(np.count_nonzero(np.isnan(y)))
    if missing:
        return (f"is missing (NaN or empty) on {missing} of {len(y)} rows; a target must be known to "
                f"learn from: drop those rows")
    return None


def empty_columns(X: np.ndarray) -> list[int]:
    """The columns of X (0-based) without any known value: every row misses them (NaN)."""
    if X.shape[0] == 0:
        return []
    return [int(j) for j in np.flatnonzero(np.isnan(X).all(axis=0))]


def empty_columns_message(columns: list[str]) -> str:
    """Why `columns` (their names: "column 2 of X", "input column 3") cannot be scaled."""
    them = ", ".join(columns)
    verb = "holds" if len(columns) == 1 else "hold"
    return (f"{them} {verb} no value (missing on every row), so there is no range to scale "
            f"{'it' if len(columns) == 1 else 'them'} by; drop {'it' if len(columns) == 1 else 'them'}")


def constant_target(y: np.ndarray) -> str | None:
    """Why the target `y` cannot be scaled to [-1, 1], if it is constant; else None."""
    if len(y) and np.all(y == y[0]):
        return f"is constant ({y[0]:g}) on all {len(y)} rows; a regression target must vary"
    return None


def non_numeric(values: np.ndarray) -> str | None:
    """Why `values` are no numbers (text), naming the first such value; else None (numbers,
    or objects that all convert, which scikit-learn's validation converts)."""
    if values.dtype.kind not in "USO":
        return None
    for value in values.ravel():
        value = value.item() if isinstance(value, np.generic) else value
        try:
            float(value)
        except (TypeError, ValueError):
            return f"holds the non-numeric value {value!r}; every value must be a number"
    if values.dtype.kind == "O":
        return None
    return (f"holds numbers as text ({values.ravel()[0].item()!r}); every value must be a number "
            f"(convert them, e.g. with astype(float))")


def too_few_rows(rows: int, least: int, who: str) -> str | None:
    """Why `rows` rows are too few for `who` ("a dataset", "fit"); else None."""
    if rows < least:
        return f"found {rows} data row{'s' if rows != 1 else ''}; {who} needs at least {least}"
    return None


# A column's min-max scale "collapses" when the middle 90 % of its values (5th to 95th
# percentile, nearest rank) span less than COLLAPSE_FRACTION of its whole range while they
# are not all equal: one or a few extreme values (1e308 among values near 1) then squeeze
# almost every row into a sliver of the scaled range, and the learner sees an almost constant
# column. A column whose middle values are all equal (a 0/1 column, mostly 0) is scaled well
# and not reported. The project's datasets are far from it (smallest share 3 %, pppts).
COLLAPSE_QUANTILES = (0.05, 0.95)
COLLAPSE_FRACTION = 0.01


class ScaleWarning(UserWarning):
    """A column whose min-max scale one extreme value collapses (see COLLAPSE_FRACTION)."""


def collapsed(values: np.ndarray) -> list[tuple[int, float, float]]:
    """(column, share of the range its middle 90 % spans, its most extreme value) of every
    collapsed column of `values` (rows x columns, or one column as a 1-D array)."""
    M = np.asarray(values, dtype=np.float64)
    M = M.reshape(-1, 1) if M.ndim == 1 else M
    if M.shape[0] < 2:
        return []
    out = []
    # Over the known values (NaN is missing); a column without any has nothing to report.
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # Nearest rank, not interpolation: with 20 rows the interpolated 95th percentile
        # would take 5 % of a 1e308 outlier and hide it.
        low, high = np.nanquantile(M, COLLAPSE_QUANTILES, axis=0, method="nearest")
        span = np.nanmax(M, axis=0) - np.nanmin(M, axis=0)  # inf when the values reach +-1e308 on both sides
        middle = high - low
        share = np.where(span > 0, middle / span, 1.0)
        for j in range(M.shape[1]):
            if middle[j] > 0 and share[j] < COLLAPSE_FRACTION:
                far = np.abs(M[:, j] - np.nanmedian(M[:, j]))
                out.append((j, float(share[j]), float(M[int(np.nanargmax(far)), j])))
    return out


def collapse_message(what: str, share: float, extreme: float, fix: str = "") -> str:
    """`what` ("column 3 of X", "the target"): why its scale collapsed, and what to do
    (`fix`: another way out than removing or clipping the outliers)."""
    return (f"{what}: the extreme value {extreme:g} stretches the min-max scale so far that the middle "
            f"90 % of the values fill only {100 * share:.2g} % of it, and the learner sees an almost "
            f"constant column; remove or clip the outliers{fix}")
