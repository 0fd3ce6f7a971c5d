"""Covering (docs/algorithm.md section 3): a new rule where a needed match set is empty during training.

The learners draw the intervals of the new rule (one per input for XCSF, one for a KACS
rule) with `draw_interval` or `full_interval`, in the order docs/algorithm.md section 3 fixes for the random stream;
this module gives the new rule its slot, defaults and weights.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.deletion import deletion, deletion_above
from kacs_cli.engine.hot import HOT
from kacs_cli.engine.layout import new_slot
from kacs_cli.engine.population import S_TOTAL

# Under `article_cover_deletion` the population may exceed its budget N between GA events;
# covering deletes only beyond this multiple of N.
COVER_SLACK = 2


@njit(**HOT, inline="always")
def draw_interval(z, r0, clip, ordered):
    """Covering bounds z - U(0, r0] and z + U(0, r0], in random stored order (or, `ordered`,
    as (lower, upper))."""
    lower = z - (1.0 - np.random.random()) * r0
    upper = z + (1.0 - np.random.random()) * r0
    if clip:
        lower = min(max(lower, 0.0), 1.0)
        upper = min(max(upper, 0.0), 1.0)
    if ordered or np.random.random() < 0.5:
        return lower, upper
    return upper, lower


@njit(**HOT, inline="always")
def full_interval(ordered):
    if ordered or np.random.random() < 0.5:
        return 0.0, 1.0
    return 1.0, 0.0


@njit(**HOT, inline="always")
def delete_after_cover(pop, hp, sc):
    """Deletion after a rule was covered: as always in the authors' code; under the article's
    Algorithm 1 (covering without deletion, the GA deletes) only where the population has
    grown to twice its budget, so that it stays within its slots (train.Model.capacity)."""
    if not hp.article_cover_deletion:
        deletion(pop, hp, sc)
    else:
        deletion_above(pop, hp, sc, COVER_SLACK * pop.budget[0])


@njit(**HOT, inline="always")
def append_rule(pop, sub, t, hp, layout):
    """A fresh rule slot with the covering defaults of docs/algorithm.md section 3 (bounds,
    weights unset); `layout` as in layout.new_slot."""
    i = new_slot(pop, layout, sub)
    m = pop.weights.m
    v = pop.weights.v
    for j in range(m.shape[1]):
        m[i, j] = 0.0
        v[i, j] = 0.0
    reals = pop.reals
    reals.F[i] = hp.F_I
    reals.eps[i] = 0.0
    reals.kappa[i] = 1.0
    reals.ms[i] = 1.0
    reals.b1t[i] = 1.0
    reals.b2t[i] = 1.0
    counts = pop.counts
    counts.exp[i] = 0
    counts.num[i] = 1
    counts.ts[i] = t
    counts.sub[i] = sub
    pop.scal[S_TOTAL] += 1
    pop.fsum[0] += hp.F_I
    return i


@njit(**HOT, inline="always")
def covering_weights(pop, i, hp):
    """One U[-1, 1] value for every weight (the authors' code), or each weight i.i.d. (the
    article)."""
    w = pop.weights.w
    if hp.article_cover_weights:
        for j in range(w.shape[1]):
            w[i, j] = 2.0 * np.random.random() - 1.0
    else:
        value = 2.0 * np.random.random() - 1.0
        for j in range(w.shape[1]):
            w[i, j] = value
