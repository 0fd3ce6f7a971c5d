"""XCSF's row index: which rules match which sample, kept as bit sets.

Every input XCSF is trained or evaluated on inside the driver is a row of one matrix (the
train rows, then the test rows), so matching can be looked up instead of tested: rows[r]
has bit i set when rule slot i matches row r, and mask[i] is rule i's set of rows. A rule
gets its row set when it is created, from sorted columns: on input d the rows it matches are
a run of that column's sorted order (two binary searches), given by the difference of two
prefix sets pre[d, k] (the rows at sorted positions < k); the rule's set is the AND over
the inputs. A missing value (NaN) sorts after every value and lies in every interval
(docs/algorithm.md section 12): the rows missing input d (the sorted positions from
valid[d] on) belong to every rule's run on d. Rules never change bounds, so the sets change
only when rules are created, die or move (compaction). Looking up a match set walks P / 64 words instead of testing up
to n * P bounds. The result is the same set in the same (population) order.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT
from kacs_cli.engine.population import S_DEATHS, S_P, compact

# In use while state[0] == 1.
RowIndex = namedtuple("RowIndex", ["state", "vals", "valid", "pre", "rows", "mask"])


# Trailing zeros by a de Bruijn sequence (Leiserson, Prokop and Randall 1998): the lowest set
# bit x & -x times the sequence puts a distinct 6-bit pattern in the top bits for each of the
# 64 positions, so one multiplication and one table read replace a loop over the zero bits,
# which a match set walk would otherwise run for every member.
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DE_BRUIJN_POSITION = np.array([0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36,
                                53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37,
                                16, 54, 35, 52, 21, 44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14,
                                19, 9, 13, 8, 7, 6], np.uint64)


@njit(**HOT, inline="always")
def trailing_zeros(x):
    """The number of trailing zero bits of a nonzero uint64."""
    lowest = x & (~x + np.uint64(1))
    return _DE_BRUIJN_POSITION[(lowest * _DE_BRUIJN) >> np.uint64(58)]


def new_row_index(D: int) -> RowIndex:
    """A row index that is off (state 0); see `rx_build`."""
    return RowIndex(state=np.zeros(1, np.int64), vals=np.zeros((D, 0)),
                    valid=np.zeros(D, np.int64), pre=np.zeros((D, 1, 0), np.uint64),
                    rows=np.zeros((0, 0), np.uint64), mask=np.zeros((0, 0), np.uint64))


@njit(**HOT)
def rx_add(pop, rx, i):
    """Give new rule i its row set and enter it in the rows' rule sets (if the index is on)."""
    if rx.state[0] == 0:
        return
    mask = rx.mask[i]
    pre = rx.pre
    vals = rx.vals
    W = mask.shape[0]
    R = vals.shape[1]
    lo = pop.bounds.lo
    hi = pop.bounds.hi
    for w in range(W):
        mask[w] = ~np.uint64(0)
    for d in range(vals.shape[0]):
        # The run of sorted positions whose values lie in [lo, hi], ends included, and the
        # rows missing input d (none when valid[d] == R).
        present = rx.valid[d]
        column = vals[d, :present]
        start = np.searchsorted(column, lo[d, i], side="left")
        end = np.searchsorted(column, hi[d, i], side="right")
        inside = pre[d, end]
        below = pre[d, start]
        every = pre[d, R]
        known = pre[d, present]
        for w in range(W):
            mask[w] &= (inside[w] & ~below[w]) | (every[w] & ~known[w])
    rows = rx.rows
    word = i >> 6
    bit = np.uint64(1) << np.uint64(i & 63)
    for w in range(W):
        m = mask[w]
        while m != 0:
            r = (w << 6) + int(trailing_zeros(m))
            rows[r, word] |= bit
            m &= m - np.uint64(1)


@njit(**HOT, inline="always")
def rx_remove(rx, i):
    """Take rule slot i out of every row's rule set."""
    mask = rx.mask[i]
    rows = rx.rows
    word = i >> 6
    keep = ~(np.uint64(1) << np.uint64(i & 63))
    for w in range(mask.shape[0]):
        m = mask[w]
        while m != 0:
            r = (w << 6) + int(trailing_zeros(m))
            rows[r, word] &= keep
            m &= m - np.uint64(1)
        mask[w] = 0


@njit(**HOT, inline="always")
def rx_move(rx, src, dst):
    """Rule slot src moved to dst (compaction): its rows now list dst instead."""
    mask_src = rx.mask[src]
    mask_dst = rx.mask[dst]
    rows = rx.rows
    w_src = src >> 6
    w_dst = dst >> 6
    clear = ~(np.uint64(1) << np.uint64(src & 63))
    put = np.uint64(1) << np.uint64(dst & 63)
    for w in range(mask_src.shape[0]):
        m = mask_src[w]
        mask_dst[w] = m
        mask_src[w] = 0
        while m != 0:
            r = (w << 6) + int(trailing_zeros(m))
            rows[r, w_src] &= clear
            rows[r, w_dst] |= put
            m &= m - np.uint64(1)


@njit(**HOT)
def rx_build(pop, rx):
    """The whole index for the current population (start of a training call)."""
    rows = rx.rows
    for r in range(rows.shape[0]):
        for w in range(rows.shape[1]):
            rows[r, w] = 0
    for i in range(pop.scal[S_P]):
        rx_add(pop, rx, i)


@njit(**HOT, inline="always")
def rx_members(rx, r, P, members):
    """Rule slots (< P) matching row r, in population order, into members; their count."""
    bits = rx.rows[r]
    count = 0
    for w in range((P + 63) >> 6):
        m = bits[w]
        while m != 0:
            members[count] = (w << 6) + int(trailing_zeros(m))
            count += 1
            m &= m - np.uint64(1)
    return count


@njit(**HOT)
def rx_end_iteration(pop, rx, sc, first_new, moved):
    """Bring the index up to date for the end of an iteration, around `compact` (whose moves
    it leaves in `moved`): enter the rules created since slot first_new, drop the rules that
    died, compact, follow the moves."""
    P = pop.scal[S_P]
    for i in range(first_new, P):
        rx_add(pop, rx, i)
    dead = sc.dead
    n_dead = pop.scal[S_DEATHS]
    for k in range(n_dead):
        rx_remove(rx, dead[k])
    compact(pop, sc, moved)
    for k in range(n_dead):
        if moved[k] >= 0:
            rx_move(rx, moved[k], dead[k])


@njit(cache=True)
def rx_tables(X, vals, valid, pre):
    """The sorted columns of X, the count of values (not missing) of each, and their prefix
    row sets (see the row index above)."""
    R, D = X.shape
    key = np.empty(R)
    for d in range(D):
        # Missing values sort last, after every value (their key is +inf).
        present = 0
        for r in range(R):
            value = X[r, d]
            key[r] = np.inf if value != value else value
            present += value == value
        valid[d] = present
        order = np.argsort(key, kind="mergesort")
        for w in range(pre.shape[2]):
            pre[d, 0, w] = 0
        for k in range(R):
            r = order[k]
            vals[d, k] = X[r, d]
            for w in range(pre.shape[2]):
                pre[d, k + 1, w] = pre[d, k, w]
            pre[d, k + 1, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
