"""The training order (docs/algorithm.md section 1) and the random stream the engine draws from.

Every random number of a run comes from numba's generator, seeded once per training call:
the first order of the rows, and then covering, the GA and deletion in the order docs/algorithm.md sections 3-5 fix.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT


@njit(**HOT)
def seed_rng(seed):
    np.random.seed(seed)


@njit(cache=True)
def first_order(rows):
    """A training call's first permutation of the rows, from numba's seeded generator."""
    return np.random.permutation(rows)


@njit(cache=True, inline="always")
def next_row(order, it, reshuffle):
    """The training row of iteration `it` of a call: `order` is that call's permutation of the
    rows, drawn anew (in place) at the start of every later epoch when `reshuffle`."""
    rows = order.shape[0]
    pos = it % rows
    if pos == 0 and it > 0 and reshuffle:
        order[:] = np.random.permutation(rows)
    return order[pos]
