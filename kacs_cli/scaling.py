"""The one min-max scaling of docs/algorithm.md section 1, shared by the protocols and the estimators.

Inputs go to [0, 1] with per-column (min, max) of the train rows' known values; a constant
column maps to 0.5. A missing input (NaN) stays NaN through every step (docs/algorithm.md
section 12): the rules read it as "don't care". The target goes to [-1, 1] with the train rows' (min, max), in the authors' expression
2 (y - min) / (max - min) - 1, so that normalized targets match theirs bit for bit. A run of
the protocol and an estimator fitted on the same unscaled train rows therefore see the same
numbers (tests/test_api.py checks it).

A categorical input (`CategoryMap`, docs/algorithm.md section 12) is not min-max scaled: each
of its categories is placed on [0, 1] in the order of its mean target on the train rows, and
the input transform passes it through.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from kacs_cli.errors import UserError


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
    # One new array, every later step in place (a copy of X is what many rows cost). It is NaN
    # where X is: a constant column keeps its missing values too.
    scaled = X - x_min
    scaled /= safe
    if constant.any():
        columns = np.flatnonzero(constant)
        block = scaled[..., columns]
        block[~np.isnan(block)] = 0.5
        scaled[..., columns] = block
    return np.clip(scaled, 0.0, 1.0, out=scaled) if clip else scaled


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
                 references: np.ndarray | None = None, keep: tuple[int, ...] = ()):
        self.name = name
        # Columns passed through as they are: categorical inputs, whose evenly spaced
        # positions a quantile map would move by the categories' frequencies.
        self.keep = tuple(int(j) for j in keep)
        self._quantile = None
        if name == "quantile":
            from sklearn.preprocessing import QuantileTransformer

            # copy=False: `apply` copies the rows itself unless the caller hands them over.
            qt = QuantileTransformer(n_quantiles=len(references), output_distribution="uniform",
                                     subsample=None, copy=False)
            qt.quantiles_ = np.asarray(quantiles, dtype=np.float64)
            qt.references_ = np.asarray(references, dtype=np.float64)
            qt.n_quantiles_ = len(references)
            qt.n_features_in_ = qt.quantiles_.shape[1]
            self._quantile = qt

    @classmethod
    def fit(cls, name: str, X01: np.ndarray, keep: tuple[int, ...] = ()) -> "InputTransform":
        """The transform `name` fitted on the train rows' [0, 1] inputs; the columns `keep`
        pass through it unchanged."""
        if name == "minmax":
            return cls(name, keep=keep)
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
        return cls(name, quantiles, qt.references_, keep=keep)

    @property
    def n_features(self) -> int | None:
        """The columns a fitted quantile transform expects (None: any, the identity)."""
        return None if self._quantile is None else self._quantile.quantiles_.shape[1]

    def apply(self, X01: np.ndarray, *, overwrite: bool = False) -> np.ndarray:
        """The transformed rows; `overwrite`: X01 (float64) is the caller's to give away and
        becomes the result, where otherwise the transform works on a copy."""
        if self._quantile is None:
            return X01
        kept = np.asarray(X01, dtype=np.float64)[:, self.keep] if self.keep else None  # a copy
        out = np.asarray(X01, dtype=np.float64) if overwrite else np.array(X01, dtype=np.float64)
        out = np.clip(self._quantile.transform(out), 0.0, 1.0, out=out)
        if self.keep:
            out[:, self.keep] = kept
        return np.ascontiguousarray(out)

    def state(self) -> dict:
        """JSON values from which `from_state` rebuilds the transform (model files)."""
        if self._quantile is None:
            return {"name": self.name}
        return {"name": self.name, "quantiles": self._quantile.quantiles_.tolist(),
                "references": self._quantile.references_.tolist()}

    @classmethod
    def from_state(cls, state: dict, keep: tuple[int, ...] = ()) -> "InputTransform":
        """The transform `state` describes; `keep` as in `fit` (the categorical inputs, which
        the model file records once, with their categories)."""
        if state.get("name") == "quantile":
            quantiles = np.asarray(state["quantiles"], dtype=np.float64)
            references = np.asarray(state["references"], dtype=np.float64)
            if quantiles.ndim != 2 or quantiles.shape[0] != references.shape[0]:
                raise ValueError("input transform entry malformed")
            return cls("quantile", quantiles, references, keep=keep)
        if state.get("name") == "minmax":
            return cls("minmax", keep=keep)
        raise ValueError("input transform entry malformed")
# --------------------------------------------------------------------------- categorical inputs
#
# A categorical input's values name categories; their codes (0, 1, 2, ... in whatever order
# the data came in) say nothing about which categories behave alike. Each category is placed
# on the input axis in the order of its mean target on the train rows instead, evenly spaced,
# so that a rule's interval covers categories of similar effect (docs/algorithm.md section 12).

# More distinct values than this in a column declared categorical: most likely a measurement
# declared by mistake (scikit-learn's histogram boosting has the same limit, max_bins).
MAX_CATEGORIES = 255

_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def category_keys(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The categories the cells of one column stand for, as (numbers, texts, missing).

    A cell that reads as a finite number is that number (1, 1.0, "1" and " 1.0 " are one
    category: a CSV's text and an array's numbers name the same categories); any other cell
    is its text, stripped. numbers[r] is NaN where cell r is not a number, texts[r] None where
    it is one; missing[r] marks an empty cell (None, NaN, empty text, a non-finite number).
    """
    array = np.asarray(values)
    if array.dtype.kind in "biuf":
        numbers = array.astype(np.float64).ravel()
        return numbers, np.full(numbers.shape, None, dtype=object), ~np.isfinite(numbers)
    column = pd.Series(array.astype(object).ravel())
    numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    empty = column.isna().to_numpy()
    text = column.astype(str).str.strip()
    missing = empty | (text == "").to_numpy() | text.str.fullmatch(_NOT_FINITE.pattern, case=False).to_numpy()
    numbers[missing] = np.nan
    is_text = np.isnan(numbers) & ~missing
    texts = np.where(is_text, text.to_numpy(dtype=object), None)
    return numbers, texts, missing


def category_position(rank: np.ndarray | int, count: int) -> np.ndarray | float:
    """Where the category of rank k (0: the lowest mean target) of K goes on [0, 1]: the middle
    of the k-th of K equal parts, (k + 0.5) / K."""
    return (np.asarray(rank, dtype=np.float64) + 0.5) / count


def unseen_position() -> float:
    """Where a category the train rows did not hold goes, and a missing cell: nowhere, NaN, a
    missing input (docs/algorithm.md section 12). The train rows say nothing of its effect, so
    every rule matches it as a wildcard instead of it taking one train category's place. The
    one place that decides it."""
    return float("nan")


class CategoryMap:
    """The positions on [0, 1] of the categories of the categorical inputs, learned from the
    train rows (`fit`) and applied to any rows (`positions`, `place`).

    columns: the input columns that are categorical; categories[k]: column k's categories in
    rank order, the lowest mean target first (ties by category: numbers ascending before texts
    in code-point order), numbers as float, texts as str; counts[k]: their train rows.
    """

    def __init__(self, columns, categories, counts):
        self.columns = tuple(int(j) for j in columns)
        self.categories = [list(c) for c in categories]
        self.counts = [np.asarray(c, dtype=np.int64) for c in counts]
        self._lookup = []
        for cats in self.categories:
            numeric = [(float(c), k) for k, c in enumerate(cats) if not isinstance(c, str)]
            numeric.sort()
            texts = [c for c in cats if isinstance(c, str)]
            self._lookup.append((np.array([v for v, _ in numeric], dtype=np.float64),
                                 np.array([k for _, k in numeric], dtype=np.int64),
                                 pd.Index(texts, dtype=object),
                                 np.array([k for k, c in enumerate(cats) if isinstance(c, str)], dtype=np.int64)))

    @classmethod
    def fit(cls, columns, values, target, labels, weight=None) -> "CategoryMap":
        """The categories of each column of `values` (column k: the cells of input columns[k]
        on the train rows) ordered by their mean `target`, weighted by the rows' sample
        weights `weight` when given (all > 0). labels[k] names column k in errors.

        A missing cell (`category_keys`) is no category: it is left out of the ranking.
        Raises UserError for a column without any category or more than MAX_CATEGORIES.
        """
        target = np.asarray(target, dtype=np.float64)
        categories, counts = [], []
        for cells, label in zip(values, labels):
            numbers, texts, missing = category_keys(cells)
            if missing.all():
                raise UserError(f"categorical column {label} holds no value (missing on every row), so it has no "
                                f"categories; drop it")
            known = ~missing
            numbers, texts, row_target = numbers[known], texts[known], target[known]
            row_weight = None if weight is None else np.asarray(weight, dtype=np.float64)[known]
            is_number = ~np.isnan(numbers)
            found_numbers, number_index = np.unique(numbers[is_number], return_inverse=True)
            found_texts, text_index = np.unique(texts[~is_number].astype(str), return_inverse=True)
            found = len(found_numbers) + len(found_texts)
            if found > MAX_CATEGORIES:
                raise UserError(
                    f"categorical column {label} has {found} distinct values, more than the {MAX_CATEGORIES} a "
                    f"categorical column may have; it is most likely a measurement: leave it out of the "
                    f"categorical columns")
            # Index of each row's category in tie order: the numbers ascending, then the texts.
            index = np.empty(len(numbers), dtype=np.int64)
            index[is_number] = number_index
            index[~is_number] = len(found_numbers) + text_index
            count = np.bincount(index, minlength=found)
            mean = (np.bincount(index, weights=row_target, minlength=found) / count if row_weight is None
                    else np.bincount(index, weights=row_weight * row_target, minlength=found)
                    / np.bincount(index, weights=row_weight, minlength=found))
            order = np.lexsort((np.arange(found), mean))
            ordered = [float(v) for v in found_numbers] + [str(v) for v in found_texts]
            categories.append([ordered[k] for k in order])
            counts.append(count[order])
        return cls(columns, categories, counts)

    def positions(self, values) -> np.ndarray:
        """rows x columns: each cell's category's position; a missing cell's and an unseen
        category's is `unseen_position` (NaN, a missing input)."""
        out = []
        for cells, counts, (numbers_seen, number_rank, texts_seen, text_rank) in zip(
                values, self.counts, self._lookup):
            numbers, texts, missing = category_keys(cells)
            rank = np.full(len(numbers), -1, dtype=np.int64)
            is_number = ~np.isnan(numbers)  # a missing cell is neither number nor text: rank -1
            if len(numbers_seen):
                at = np.searchsorted(numbers_seen, numbers[is_number]).clip(0, len(numbers_seen) - 1)
                hit = numbers_seen[at] == numbers[is_number]
                rank[np.flatnonzero(is_number)[hit]] = number_rank[at[hit]]
            is_text = ~is_number & ~missing
            if len(texts_seen):
                at = texts_seen.get_indexer(texts[is_text].astype(str))
                hit = at >= 0
                rank[np.flatnonzero(is_text)[hit]] = text_rank[at[hit]]
            placed = category_position(np.arange(len(counts)), len(counts))
            column = np.where(rank >= 0, placed[rank.clip(0)], unseen_position())
            out.append(column)
        return np.column_stack(out) if out else np.empty((0, 0))

    def place(self, X: np.ndarray, values) -> np.ndarray:
        """A copy of the [0, 1] inputs X with the categorical columns at their categories' positions."""
        out = np.array(X, dtype=np.float64, order="C")
        if self.columns:
            out[:, self.columns] = self.positions(values)
        return out

    def state(self) -> dict:
        """JSON values from which `from_state` rebuilds the map (model files)."""
        return {"columns": list(self.columns), "categories": self.categories,
                "counts": [[int(v) for v in c] for c in self.counts]}

    @classmethod
    def from_state(cls, state: dict, n_features: int) -> "CategoryMap":
        try:
            columns = [int(j) for j in state["columns"]]
            categories, counts = state["categories"], state["counts"]
            ok = (len(columns) == len(categories) == len(counts) == len(set(columns))
                  and all(0 <= j < n_features for j in columns)
                  and all(isinstance(c, list) and isinstance(n, list) and len(c) == len(n) > 0
                          and all(isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))
                                  for v in c)
                          and all(isinstance(v, int) and v > 0 for v in n)
                          for c, n in zip(categories, counts)))
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError("categories entry malformed")
        return cls(columns, [[v if isinstance(v, str) else float(v) for v in c] for c in categories], counts)


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
