"""KACS's population kept sorted by submodel during training: every submodel's rules are one
contiguous segment of slots, so that a match set is found by a pass over its submodel's
segment alone, and its members lie in consecutive memory.

Segment s owns the slots [base[s], base[s + 1]); its live rules fill [base[s], end[s]) and
the rest of its slots are spare, with num = 0 (a spare slot has no deletion vote, adds
nothing to the fitness sum and is no identical rule). base[S] is the layout's extent, and
the population's S_P while training: every pass over the population (deletion's votes, the
fitness sum, the antecedent keys) reads the spare slots as empty rules.

Within an iteration a rule of submodel s that is born (covering, a GA child) takes the next
spare slot of its segment, or, where the segment is full, the next slot after the extent
(the overflow); rules that die keep their slot with num = 0 (population.py). At the end of
the iteration `settle` restores the layout: each segment's holes are filled by its own last
live rules, and each overflow rule joins its segment, which borrows a slot from the nearest
segment with a spare one (each segment between them moves one rule from its one end to the
other). Only when no segment has a spare slot, or the spare slots outnumber half the live
rules, is the whole layout rebuilt (`relayout`).

Outside a training call the population is dense and sorted by submodel (`close_layout`),
as every other part of the package expects; `open_layout` spreads it out again, into the
layout it was closed from when the population has not changed since (so that splitting a
training call at evaluation points changes no number), else into a fresh one with about
a quarter of the live rules' count as spare slots, shared out in proportion to the
segments' sizes.

Population order carries no meaning (the roulette's and the tournaments' draws are
order-independent in distribution), but which rule a given random number picks depends on
it: another layout would give other runs of the same distribution.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from kacs_cli.engine.deletion import new_vote_tree
from kacs_cli.engine.hot import HOT, OVERLOAD
from kacs_cli.engine.kacs_update import bias_table
from kacs_cli.engine.population import S_DEATHS, S_P, copy_rule, permute_rules, sort_deaths

# The name results folders record for this engine (experiments/campaign/provenance.py).
ENGINE_NAME = "sorted"

# base: segment starts (S + 1, base[S] the extent); end: one past each segment's last live
# rule; state: L_* entries; closed_base, closed_sizes: the starts and sizes of the segments
# when the layout was closed. What else only KACS's engine keeps: `bias` and `bias_exact`,
# Adam's bias corrections by step (kacs_update.bias_table), and `votes`, the deletion votes'
# second level of sums (deletion.VoteTree).
Layout = namedtuple("Layout", ["base", "end", "state", "closed_base", "closed_sizes", "bias",
                               "bias_exact", "votes"])
# state entries: the saved layout is valid; the number of rules it was closed with.
L_VALID, L_CLOSED_P = 0, 1


def new_layout(n_submodels: int, capacity: int, beta1: float, beta2: float) -> Layout:
    """The layout of a population of `capacity` slots and `n_submodels` submodels, whose rules
    learn with Adam's decays beta1, beta2."""
    bias, bias_exact = bias_table(beta1, beta2)
    return Layout(base=np.zeros(n_submodels + 1, np.int64), end=np.zeros(n_submodels, np.int64),
                  state=np.zeros(2, np.int64), closed_base=np.zeros(n_submodels + 1, np.int64),
                  closed_sizes=np.zeros(n_submodels, np.int64), bias=bias, bias_exact=bias_exact,
                  votes=new_vote_tree(capacity))


def new_slot(pop, layout, sub):
    """The slot of a rule of submodel `sub` born during an iteration: the population's next
    slot (layout None: XCSF, whose population has no segments), or its segment's next spare
    slot, or the next overflow slot."""


@overload(new_slot, jit_options=OVERLOAD)
def _new_slot(pop, layout, sub):
    if isinstance(layout, types.NoneType):
        def append(pop, layout, sub):
            i = pop.scal[S_P]
            pop.scal[S_P] = i + 1
            return i
        return append

    def into_segment(pop, layout, sub):
        i = layout.end[sub]
        if i < layout.base[sub + 1]:
            layout.end[sub] = i + 1
            return i
        i = pop.scal[S_P]
        pop.scal[S_P] = i + 1
        return i
    return into_segment


# Modes of `relayout`.
DENSE, FRESH, SAVED = 0, 1, 2


@njit(**HOT)
def relayout(pop, layout, sc, order, buffer_f, buffer_i, scan, mode):
    """Every live rule among slots [0, scan) into the layout of `mode`, segment by segment,
    each segment's rules in slot order: DENSE, no spare slots (S_P = the live rules); FRESH,
    spare slots for about a quarter of them in proportion to the segments' sizes; SAVED,
    the segment starts `layout.closed_base` (the sizes must be `layout.closed_sizes`).
    `order`, `buffer_f` and `buffer_i` hold at least capacity entries."""
    num = pop.counts.num
    sub = pop.counts.sub
    base = layout.base
    end = layout.end
    S = end.shape[0]
    capacity = num.shape[0]
    for s in range(S):
        end[s] = 0
    live = 0
    for i in range(scan):
        if num[i] > 0:
            end[sub[i]] += 1
            live += 1
    if mode == SAVED:
        for s in range(S + 1):
            base[s] = layout.closed_base[s]
    else:
        spare = 0
        if mode == FRESH:
            # Room must remain for an iteration's overflow: at most 3 births per submodel.
            spare = max(0, min(live // 4 + 8, capacity - 3 * S - live))
        # Segment s's spare slots: its share of `spare` by size, rounded so that the shares
        # add up to `spare`.
        before = 0
        for s in range(S):
            base[s] = before + (spare * before // live if live > 0 else 0)
            before += end[s]
        base[S] = live + spare
    extent = base[S]
    # end[s] becomes the next free slot of segment s while the order is built.
    for k in range(extent):
        order[k] = -1
    for s in range(S):
        end[s] = base[s]
    for i in range(scan):
        if num[i] > 0:
            s = sub[i]
            order[end[s]] = i
            end[s] += 1
    permute_rules(pop, order, extent, buffer_f, buffer_i)
    pop.scal[S_P] = extent
    # The antecedent keys are rebuilt when next needed.
    sc.key_state[0] = 0


@njit(**HOT)
def open_layout(pop, layout, sc, order, buffer_f, buffer_i):
    """The dense population spread out into its segments at the start of a training call:
    into the layout it was closed from if it has the same rules per submodel, else a fresh
    one."""
    P = pop.scal[S_P]
    mode = FRESH
    if layout.state[L_VALID] == 1 and layout.state[L_CLOSED_P] == P:
        counts = layout.end
        for s in range(counts.shape[0]):
            counts[s] = 0
        sub = pop.counts.sub
        for i in range(P):
            counts[sub[i]] += 1
        mode = SAVED
        for s in range(counts.shape[0]):
            if counts[s] != layout.closed_sizes[s]:
                mode = FRESH
                break
    relayout(pop, layout, sc, order, buffer_f, buffer_i, P, mode)
    layout.state[L_VALID] = 0


@njit(**HOT)
def close_layout(pop, layout, sc, order, buffer_f, buffer_i):
    """The population packed dense and sorted by submodel at the end of a training call; the
    layout is kept to reopen it."""
    base = layout.base
    end = layout.end
    S = end.shape[0]
    P = 0
    for s in range(S):
        layout.closed_sizes[s] = end[s] - base[s]
        P += end[s] - base[s]
    for s in range(S + 1):
        layout.closed_base[s] = base[s]
    relayout(pop, layout, sc, order, buffer_f, buffer_i, pop.scal[S_P], DENSE)
    layout.state[L_VALID] = 1
    layout.state[L_CLOSED_P] = P


@njit(**HOT, inline="always")
def _move(pop, key, src, dst):
    """Rule src into slot dst (every field, its antecedent key along); src becomes empty."""
    copy_rule(pop, src, pop, dst)
    key[dst] = key[src]
    pop.counts.num[src] = 0


@njit(**HOT, inline="always")
def _borrow_slot(pop, layout, key, s):
    """A spare slot for segment s, taken from the nearest segment with one (to the right
    first): every segment in between moves by one slot, its end rule to its other end.
    Returns False when no segment has a spare slot."""
    base = layout.base
    end = layout.end
    S = end.shape[0]
    t = s + 1
    while t < S and end[t] == base[t + 1]:
        t += 1
    if t < S:
        # Segments t, t-1, ..., s+1 each move one slot to the right.
        for u in range(t, s, -1):
            if end[u] > base[u]:
                _move(pop, key, base[u], end[u])
            base[u] += 1
            end[u] += 1
        return True
    t = s - 1
    while t >= 0 and end[t] == base[t + 1]:
        t -= 1
    if t < 0:
        return False
    # Segments t+1, ..., s each move one slot to the left.
    for u in range(t + 1, s + 1):
        base[u] -= 1
        end[u] -= 1
        if end[u] > base[u]:
            _move(pop, key, end[u], base[u])
    return True


@njit(**HOT)
def settle(pop, layout, sc, order, buffer_f, buffer_i):
    """The layout restored at the end of an iteration (what `population.compact` is to XCSF): dead
    rules' slots refilled within their segments, overflow rules moved into theirs."""
    dead = sc.dead
    key = sc.key
    num = pop.counts.num
    sub = pop.counts.sub
    base = layout.base
    end = layout.end
    S = end.shape[0]
    extent = base[S]
    n_dead = pop.scal[S_DEATHS]
    sort_deaths(dead, n_dead)
    for k in range(n_dead):
        i = dead[k]
        if i >= extent:
            continue  # an overflow rule: left behind below
        s = sub[i]
        if i >= end[s]:
            continue
        last = end[s] - 1
        while last > i and num[last] == 0:
            last -= 1
        if last > i:
            _move(pop, key, last, i)
            end[s] = last
        else:
            end[s] = i
    pop.scal[S_DEATHS] = 0
    top = pop.scal[S_P]
    live = 0
    for s in range(S):
        live += end[s] - base[s]
    full = False
    for i in range(extent, top):
        if num[i] <= 0:
            continue
        s = sub[i]
        if end[s] == base[s + 1] and not _borrow_slot(pop, layout, key, s):
            full = True
            break
        _move(pop, key, i, end[s])
        end[s] += 1
        live += 1
    if full:
        relayout(pop, layout, sc, order, buffer_f, buffer_i, top, FRESH)
        return
    pop.scal[S_P] = extent
    if extent - live > live // 2 + 8:
        # Many more spare slots than births need: passes over the population pay for them.
        relayout(pop, layout, sc, order, buffer_f, buffer_i, extent, FRESH)
