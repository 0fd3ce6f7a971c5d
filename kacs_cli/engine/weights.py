"""Sample weights (docs/algorithm.md section 12, "Sample weights"): their checks, the rows they
keep, and the training order they give.

A weight is a number >= 0 per training row. Rows of weight 0 are removed before anything else
(`positive_rows`), so that a zero weight removes a row exactly; when the remaining weights are
all equal the training is the unweighted one, the same code and the same random draws
(`effective` gives None then). Otherwise the online learner visits rows in proportion to
their weight through its training order (`WeightedOrder`), and the steps that see all rows at
once (refinement, the capacity search's score, compaction, the errors of a run) weigh each
row's error by its weight.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.errors import UserError

# The weighted order repeats each row about weight / (smallest weight) times per epoch; this
# caps the epoch at EXPANSION_LIMIT times the rows (a weight ratio beyond it is then met in
# expectation: see `copies`), so that its index array stays a small multiple of the data.
EXPANSION_LIMIT = 64
# Mixed into the seed so that the rounding of fractional copies follows no other stream.
_ROUNDING_STREAM = 0x77676874


def weight_problem(weight: np.ndarray, rows: int, first_row: int = 0) -> str | None:
    """Why `weight` (float array) cannot weigh `rows` rows, in words; None when it can. Rows
    are numbered from `first_row` (0 for arrays, 1 for the data rows of a file)."""
    if weight.ndim != 1 or weight.shape[0] != rows:
        return f"must hold one number per row: {rows} values, got shape {weight.shape}"
    finite = np.isfinite(weight)
    if not finite.all():
        bad = int(np.argmin(finite))
        return (f"holds the non-finite value {weight[bad]} (row {bad + first_row}); every weight must be a "
                f"finite number >= 0")
    if (weight < 0).any():
        bad = int(np.argmax(weight < 0))
        return f"holds the negative value {weight[bad]:g} (row {bad + first_row}); every weight must be >= 0"
    if rows and not (weight > 0).any():
        return "is zero on every row; at least one row needs a positive weight (a zero weight removes its row)"
    return None


def checked(weight, rows: int, name: str = "sample_weight") -> np.ndarray:
    """`weight` as a float64 array of `rows` values >= 0, not all zero; a UserError naming
    `name` otherwise. A single number weighs every row alike."""
    try:
        values = np.asarray(weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError(f"{name} must be numbers (one weight >= 0 per row), got {type(weight).__name__} "
                        f"holding non-numeric values") from None
    if values.ndim == 0:
        values = np.full(rows, float(values))
    problem = weight_problem(values, rows)
    if problem:
        raise UserError(f"{name} {problem}")
    return np.ascontiguousarray(values)


def effective(weight: np.ndarray | None) -> np.ndarray | None:
    """The weights training uses: None (the unweighted path) when there are none or all are
    equal, else the weights as they are."""
    if weight is None or weight.shape[0] == 0 or np.all(weight == weight[0]):
        return None
    return weight


def kept_rows(weight, rows: int, name: str = "sample_weight") -> tuple[np.ndarray | None, np.ndarray]:
    """(keep, weights): `weight` checked (`checked`), the mask of its rows of positive weight
    (None when every row has one) and the weights of those rows."""
    weight = checked(weight, rows, name)
    keep = weight > 0
    if keep.all():
        return None, weight
    return keep, np.ascontiguousarray(weight[keep])


def positive_rows(X, y, weight, name: str = "sample_weight"):
    """(X, y, weight) without the rows of weight 0, weight checked and None when the rows left
    weigh alike (`effective`). X and y may be None (only the weights are then kept)."""
    if weight is None:
        return X, y, None
    X = None if X is None else np.asarray(X, dtype=np.float64)
    y = None if y is None else np.asarray(y, dtype=np.float64)
    keep, weight = kept_rows(weight, (X if X is not None else y).shape[0], name)
    if keep is not None:
        X = None if X is None else np.ascontiguousarray(X[keep])
        y = None if y is None else np.ascontiguousarray(y[keep])
    return X, y, effective(weight)


def weighted_mean(values: np.ndarray, weight: np.ndarray | None) -> float:
    """The mean of `values`, weighted (numpy's plain mean without weights)."""
    if weight is None:
        return float(np.mean(values))
    return float(np.sum(weight * values) / np.sum(weight))


def copies(weight: np.ndarray, seed: int) -> np.ndarray:
    """How often each row appears in an epoch of the weighted order.

    Row i appears t_i = w_i / min(w) times: the smallest weight one copy, weights 1 and 2 one
    and two copies, exactly the rows repeated. Only the ratios of the weights matter, as in
    scikit-learn's estimators. A fractional t_i is rounded at random to floor(t_i) or
    floor(t_i) + 1 with the probability of its fraction, so its expected count is t_i itself;
    where sum t_i exceeds EXPANSION_LIMIT times the rows, every t_i is scaled down to that
    total first (a row of t_i < 1 then appears with probability t_i). The random numbers come
    from the seed's own stream and are drawn whether or not a fraction needs them, so whole
    copies never depend on them.
    """
    t = weight / weight[weight > 0].min()
    limit = EXPANSION_LIMIT * weight.shape[0]
    total = float(t.sum())
    if total > limit:
        t = t * (limit / total)
    whole = np.floor(t)
    u = np.random.default_rng([int(seed) % 2**32, _ROUNDING_STREAM]).random(weight.shape[0])
    return (whole + (u < t - whole)).astype(np.int64)


@njit(cache=True)
def _draw(expansion):
    """A permutation of the expansion from numba's seeded generator (the engine's one stream):
    the draws of `order.first_order` of its length."""
    return expansion[np.random.permutation(expansion.shape[0])]


class WeightedOrder:
    """The training order of weighted rows: each epoch a random permutation of an expansion in
    which row i appears `copies(w)[i]` times.

    A permutation over the expansion is what the unweighted order is over rows repeated that
    many times, so integer weights give exactly repeated rows: the rows visited are those of
    the same learner on np.repeat(X, w, axis=0) with the same seed, draw for draw (the
    expansion lists row i's copies where np.repeat puts them, and the permutation is drawn from
    numba's generator as `order.first_order` draws it). Its expectation is therefore that of
    repeated rows for any weights (the counts are rounded without bias). Like the unweighted
    order, the first epoch's order repeats unless `reshuffle` (`article_reshuffle`); then every
    epoch is a new permutation, drawn where `next_row` draws it for repeated rows (before the
    epoch's first iteration), so that this equality holds under both semantics.

    The order array holds row indices of X, so the learners' compiled loops read it as they
    read the unweighted order (`order.next_row`, with reshuffling off): the driver redraws it
    at each epoch's end (`run`), which `next_row` would do for an order of row positions.
    That costs one call of the compiled loop per epoch under `article_reshuffle`, and none
    otherwise.
    """

    def __init__(self, weight: np.ndarray, seed: int, reshuffle: bool):
        counts = copies(weight, seed)
        self.expansion = np.repeat(np.arange(weight.shape[0], dtype=np.int64), counts)
        self.reshuffle = bool(reshuffle)

    def first(self) -> np.ndarray:
        """The first epoch's order (after order.seed_rng, where first_order draws)."""
        return _draw(self.expansion)

    def run(self, steps, order: np.ndarray, start: int, stop: int) -> None:
        """Iterations start..stop-1 through `steps(a, b)` (the learner's compiled loop over a..b-1
        with reshuffling off), a new epoch's order drawn into `order` at each epoch's start."""
        if not self.reshuffle:
            steps(start, stop)
            return
        period = order.shape[0]
        while start < stop:
            if start > 0 and start % period == 0:
                order[:] = _draw(self.expansion)
            end = min(stop, (start // period + 1) * period)
            steps(start, end)
            start = end
