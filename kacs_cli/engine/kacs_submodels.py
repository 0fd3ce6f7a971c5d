"""KACS's submodels (docs/algorithm.md section 2): their ids and inputs, and the per-iteration
work buffers their match sets are gathered into.

Submodel ids: with m outer channels (`channel_count`; the article's m = 2n + 1), inner (q, p) is
q * n + p (0-based, q < m, p < n) and outer q is n m + q. Match sets are processed in the order
of docs/algorithm.md section 4, (q, p) ascending for the inner stage and q ascending for the
outer stage, so covering and its deletions happen exactly in that order; each is found from
its submodel's segment of the population (layout.py).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT, index_at

# Per-iteration work buffers of KACS, allocated once per run. `members`, `start`, `count`:
# every match set's slots, set s at members[start[s]:start[s] + count[s]]; `in_set`: per slot,
# whether the rule is in its submodel's match set this iteration (kacs_update.py); `order`,
# `sort_f`, `sort_i`: the layout's buffers for moving rules (layout.py); `set_scale`,
# `set_z`, `set_acc`: per set, its gradient scale, its input and its members' sum of
# kappa num, for the update's one pass over every set's members (kacs_update.py).
Work = namedtuple(
    "Work",
    ["members", "start", "count", "psihat", "zhat", "phihat", "slope", "sum_f", "set_num",
     "set_ts", "order", "sort_f", "sort_i", "in_set", "set_scale", "set_z", "set_acc"],
)


@njit(cache=True)
def channel_count(n, channels):
    """The number m of outer channels at n inputs: the hyperparameter `channels`, whose 0
    (its default) stands for the article's 2n + 1."""
    return channels if channels > 0 else 2 * n + 1


def n_submodels(n: int, n_q: int) -> tuple[int, int]:
    """(number of inner submodels, total) with n_q outer channels: n n_q inner and n_q outer."""
    return n * n_q, (n + 1) * n_q


def new_work(capacity: int, n: int, n_q: int) -> Work:
    s_in, s_all = n_submodels(n, n_q)
    return Work(
        members=np.zeros(capacity + s_all, np.int64),
        start=np.zeros(s_all + 1, np.int64),
        count=np.zeros(s_all, np.int64),
        psihat=np.zeros(s_in),
        zhat=np.zeros(n_q),
        phihat=np.zeros(n_q),
        slope=np.zeros(n_q),
        sum_f=np.zeros(s_all),
        set_num=np.zeros(s_all, np.int64),
        set_ts=np.zeros(s_all, np.int64),
        order=np.zeros(capacity, np.int64),
        sort_f=np.zeros(capacity),
        sort_i=np.zeros(capacity, np.int64),
        in_set=np.zeros(capacity, np.uint8),
        set_scale=np.zeros(s_all),
        set_z=np.zeros(s_all),
        set_acc=np.zeros(s_all),
    )


@njit(**HOT, inline="always")
def rule_input(z, lo, hi):
    """The input a rule's line w0 + w1 z is read at: z itself, or, where z is missing (NaN),
    the centre of the rule's interval [lo, hi] (docs/algorithm.md section 12). Only inner
    rules can meet a missing input: a channel sum is never missing."""
    return 0.5 * (lo + hi) if z != z else z


@njit(**HOT, inline="always")
def set_range(start, count, s):
    """Where set s lies in `members`, as unsigned bounds: the loops over its members then
    index without wraparound code (see `index_at`)."""
    st = index_at(start, s)
    return st, st + index_at(count, s)


@njit(cache=True)
def submodel_input_table(n, n_q):
    """The input of every submodel: p for inner (q, p) (x_p), q for outer q (zhat_q)."""
    s_in = n * n_q
    table = np.empty(s_in + n_q, np.int64)
    for s in range(s_in):
        table[s] = s % n
    for q in range(n_q):
        table[s_in + q] = q
    return table
