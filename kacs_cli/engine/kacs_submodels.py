"""KACS's submodels (docs/algorithm.md section 2): their ids and inputs, and the rules grouped by submodel,
into match sets per iteration (a counting sort) and in the population between iterations.

Submodel ids: with m outer channels (`channel_count`; the article's m = 2n + 1), inner (q, p) is
q * n + p (0-based, q < m, p < n) and outer q is n m + q.
One pass over the population per stage finds every submodel's match set at once; the match
sets are then processed in the order of docs/algorithm.md section 4, (q, p) ascending for the inner stage and q ascending
for the outer stage, so covering and its deletions happen exactly in that order.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.population import S_P, permute_rules

# Per-iteration work buffers of KACS, allocated once per run.
# `in_set` (the sorted engine only): per slot, whether the rule is in its submodel's match set
# this iteration (kacs_update.py).
Work = namedtuple(
    "Work",
    ["match", "members", "start", "count", "psihat", "zhat", "phihat", "slope", "sum_f",
     "set_num", "set_ts", "outer_rules", "sub_input", "order", "sort_start", "sort_f", "sort_i",
     "in_set"],
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
        match=np.zeros(capacity, np.int64),
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
        outer_rules=np.zeros(capacity, np.int64),
        sub_input=submodel_input_table(n, n_q),
        order=np.zeros(capacity, np.int64),
        sort_start=np.zeros(s_all, np.int64),
        sort_f=np.zeros(capacity),
        sort_i=np.zeros(capacity, np.int64),
        in_set=np.zeros(capacity, np.uint8),
    )


@njit(**HOT, inline="always")
def bucket(sub, match, members, start, count, lo_sub, hi_sub, n_match, pos):
    """Counting sort of the matched rules by submodel into members[pos:].

    Each set gets one spare slot for covering. The outer stage starts after the inner sets,
    which are still needed for their updates and GA.
    """
    for s in range(lo_sub, hi_sub):
        count[s] = 0
    for k in range(n_match):
        count[index_at(sub, index_at(match, k))] += 1
    for s in range(lo_sub, hi_sub):
        start[s] = pos
        pos += count[s] + 1
        count[s] = 0
    for k in range(n_match):
        i = index_at(match, k)
        s = index_at(sub, i)
        members[np.uint64(start[s] + count[s])] = i
        count[s] += 1


@njit(**HOT, inline="always")
def collect_inner_matches(sub, lo0, hi0, P, x, sub_input, s_in, match, outer_rules):
    """Inner rules whose interval contains their input, in population order; and, for the
    outer stage, the list of outer rules (covering in the inner stage adds only inner rules).
    A missing input (NaN, z != z) is contained in every interval (docs/algorithm.md section 12).

    Branch-free: every rule is written to both lists, and each count advances only on a hit.
    """
    n_match = 0
    n_outer = 0
    s_in = np.uint64(s_in)
    for i in range(P):
        s = index_at(sub, i)
        inner = s < s_in
        z = x[index_at(sub_input, s)] if inner else -np.inf
        match[n_match] = i
        n_match += ((lo0[i] <= z) & (z <= hi0[i])) | (z != z)
        outer_rules[n_outer] = i
        n_outer += not inner
    return n_match, n_outer


@njit(**HOT, inline="always")
def rule_input(z, lo, hi):
    """The input a rule's line w0 + w1 z is read at: z itself, or, where z is missing (NaN),
    the centre of the rule's interval [lo, hi] (docs/algorithm.md section 12). Only inner
    rules can meet a missing input: a channel sum is never missing."""
    return 0.5 * (lo + hi) if z != z else z


@njit(**HOT, inline="always")
def collect_outer_matches(sub, lo0, hi0, outer_rules, n_outer, zhat, s_in, match):
    """Outer rules whose interval contains their channel sum, in population order."""
    n_match = 0
    for k in range(n_outer):
        i = index_at(outer_rules, k)
        z = zhat[np.uint64(sub[i] - s_in)]
        match[n_match] = i
        n_match += (lo0[i] <= z) & (z <= hi0[i])
    return n_match


@njit(**HOT, inline="always")
def set_range(start, count, s):
    """Where set s lies in `members`, as unsigned bounds: the loops over its members then
    index without wraparound code (see `index_at`)."""
    st = index_at(start, s)
    return st, st + index_at(count, s)


@njit(**HOT, inline="always")
def drop_deleted(num, members, start, count, s):
    """Rules deleted by an earlier covering in this iteration are not part of a later set."""
    st = start[s]
    kept = 0
    for k in range(st, st + count[s]):
        i = index_at(members, k)
        if num[i] > 0:
            members[st + kept] = i
            kept += 1
    count[s] = kept


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



@njit(**HOT)
def sort_by_submodel(pop, wk, sc):
    """Reorder the live rules by submodel (stable), between iterations.

    A match set's members then sit close together in every array, and the per-rule updates
    read a few cache lines instead of one per array and rule. Population order carries no
    meaning (roulette and tournament draws are order-independent in distribution).
    A counting sort into the work buffers: no allocation.
    """
    P = pop.scal[S_P]
    sub = pop.counts.sub
    start = wk.sort_start
    order = wk.order
    for s in range(start.shape[0]):
        start[s] = 0
    for i in range(P):
        start[sub[i]] += 1
    pos = 0
    for s in range(start.shape[0]):
        size = start[s]
        start[s] = pos
        pos += size
    # order[k]: the rule that moves to slot k; rules of one submodel keep their order.
    for i in range(P):
        s = sub[i]
        order[start[s]] = i
        start[s] += 1
    permute_rules(pop, order, P, wk.sort_f, wk.sort_i)
    # The antecedent keys are rebuilt when next needed.
    sc.key_state[0] = 0

