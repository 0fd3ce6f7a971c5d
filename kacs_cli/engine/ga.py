"""The GA on one match set (docs/algorithm.md section 3, training only): trigger, tournament selection,
children, crossover, mutation, subsumption, insertion, and deletion after each child.

The children are built in `Scratch.children` (population.Children, two slots) and join the
population one at a time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.deletion import deletion_ga, forget_votes, touch
from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.identical import (
    antecedent_key, find_identical, identical_in_segment, same_antecedent,
)
from kacs_cli.engine.layout import new_slot
from kacs_cli.engine.population import S_T, S_TOTAL, copy_stored, resolve_bounds


@njit(**HOT, inline="always")
def ga_due(num, ts, members, start, stop, t, theta_ga):
    """The GA runs on a set when its numerosity-weighted mean time stamp is old enough."""
    sum_num = 0
    sum_ts = 0
    for k in range(start, stop):
        i = index_at(members, k)
        sum_num += num[i]
        sum_ts += num[i] * ts[i]
    return ga_due_sums(sum_num, sum_ts, t, theta_ga)


@njit(**HOT, inline="always")
def ga_due_sums(sum_num, sum_ts, t, theta_ga):
    """`ga_due` from the set's sums of num and num * ts."""
    if sum_num == 0:
        return False
    # t - sum_ts / sum_num > theta_GA, multiplied out: integers are exact, and the mean of
    # whole time stamps is a multiple of 1/sum_num, far from any rounding error.
    return t * sum_num - sum_ts > theta_ga * sum_num


@njit(**HOT, inline="always")
def tournament(pop, members, start, stop, tau):
    """Every micro-rule enters with probability tau; the entrant with the highest F/num wins."""
    num = pop.counts.num
    F = pop.reals.F
    while True:
        best = -1
        best_f = 0.0
        for k in range(start, stop):
            i = members[k]
            n_i = num[i]
            if n_i <= 0:
                continue
            f_micro = F[i] / n_i
            if best >= 0 and f_micro <= best_f:
                # Only a strictly fitter entrant could win: its draws cannot change the outcome.
                continue
            for _ in range(n_i):
                if np.random.random() < tau:
                    best = i
                    best_f = f_micro
                    break
        if best >= 0:
            return best


@njit(**HOT, inline="always")
def make_child(pop, parent, kids, c):
    """Child c is a copy of the parent with F = parent F / parent num."""
    copy_stored(pop, parent, kids, c)
    kids.reals.F[c] = pop.reals.F[parent] / pop.counts.num[parent]


@njit(**HOT, inline="always")
def order_pair(a, b, c, d):
    if a[c, d] > b[c, d]:
        tmp = a[c, d]
        a[c, d] = b[c, d]
        b[c, d] = tmp


@njit(**HOT, inline="always")
def crossover(pairs, ordered):
    """Per dimension, swap the two children's first stored bounds w.p. 0.5 and, independently,
    their second ones; `pairs` are the children's (`ordered`: put back in order). Returns
    whether anything changed."""
    a = pairs.a
    b = pairs.b
    changed = False
    for d in range(a.shape[1]):
        if np.random.random() < 0.5:
            tmp = a[0, d]
            a[0, d] = a[1, d]
            a[1, d] = tmp
            changed = True
        if np.random.random() < 0.5:
            tmp = b[0, d]
            b[0, d] = b[1, d]
            b[1, d] = tmp
            changed = True
        if ordered:
            order_pair(a, b, 0, d)
            order_pair(a, b, 1, d)
    return changed


@njit(**HOT, inline="always")
def mutate(pairs, c, mu, m0, clip, ordered):
    """Per dimension with probability mu, move both stored bounds of child c by U[-m0, m0]
    (`ordered`: put back in order)."""
    a = pairs.a
    b = pairs.b
    for d in range(a.shape[1]):
        if np.random.random() < mu:
            new_a = a[c, d] + 2.0 * m0 * np.random.random() - m0
            new_b = b[c, d] + 2.0 * m0 * np.random.random() - m0
            if clip:
                new_a = min(max(new_a, 0.0), 1.0)
                new_b = min(max(new_b, 0.0), 1.0)
            a[c, d] = new_a
            b[c, d] = new_b
            if ordered:
                order_pair(a, b, c, d)


@njit(**HOT, inline="always")
def mutate_per_bound(pairs, c, mu, m0, clip, ordered):
    """The article's mutation: each stored bound of child c, independently with probability
    mu, moves by U[-m0, m0] (`ordered`: put back in order)."""
    a = pairs.a
    b = pairs.b
    for d in range(a.shape[1]):
        if np.random.random() < mu:
            new_a = a[c, d] + 2.0 * m0 * np.random.random() - m0
            if clip:
                new_a = min(max(new_a, 0.0), 1.0)
            a[c, d] = new_a
        if np.random.random() < mu:
            new_b = b[c, d] + 2.0 * m0 * np.random.random() - m0
            if clip:
                new_b = min(max(new_b, 0.0), 1.0)
            b[c, d] = new_b
        if ordered:
            order_pair(a, b, c, d)


@njit(**HOT, inline="always")
def subsumes(pop, parent, kids, c, hp):
    """Parent is experienced, accurate, and its intervals strictly contain child c's (contain,
    equal ones included, under `article_subsumption`)."""
    if pop.counts.num[parent] <= 0:
        return False
    if not (pop.counts.exp[parent] > hp.theta_sub and pop.reals.eps[parent] < hp.e0):
        return False
    if pop.counts.sub[parent] != kids.counts.sub[c]:
        return False
    ca = kids.pairs.a
    cb = kids.pairs.b
    identical = True
    for d in range(ca.shape[1]):
        c_lo = min(ca[c, d], cb[c, d])
        c_hi = max(ca[c, d], cb[c, d])
        p_lo = pop.bounds.lo[d, parent]
        p_hi = pop.bounds.hi[d, parent]
        if not (p_lo <= c_lo and c_hi <= p_hi):
            return False
        if p_lo != c_lo or p_hi != c_hi:
            identical = False
    return hp.article_subsumption or not identical


@njit(**HOT, inline="always")
def insert_child(pop, sc, c, p1, p2, fresh_moments, layout):
    """Merge child c into its identical rule (num += 1) or add it as a new macro-rule
    (`fresh_moments`: with zero Adam moments instead of its parent's; its slot as
    layout.new_slot gives it)."""
    kids = sc.children
    # Most children are unchanged copies of a parent, so the parents are looked at first.
    # Live rules with one antecedent are unique (merging keeps them so), which makes the
    # order of the search immaterial.
    key = np.uint64(0)
    if layout is None:
        key = antecedent_key(kids.counts.sub[c], kids.pairs.a, kids.pairs.b, c)
    if same_antecedent(pop, p1, kids, c):
        j = p1
    elif same_antecedent(pop, p2, kids, c):
        j = p2
    elif layout is None:
        j = find_identical(pop, sc, c, key)
    else:
        # KACS looks among the few slots of the child's segment, without keys.
        j = identical_in_segment(pop, kids, c, layout)
    if j >= 0:
        pop.counts.num[j] += 1
        pop.scal[S_TOTAL] += 1
        return j
    i = new_slot(pop, layout, kids.counts.sub[c])
    copy_stored(kids, c, pop, i)
    resolve_bounds(pop, i)
    pop.counts.exp[i] = 0
    pop.counts.num[i] = 1
    # The child's Adam moments are inherited, but its bias correction restarts with exp = 0.
    if fresh_moments:
        m = pop.weights.m
        v = pop.weights.v
        for j in range(m.shape[1]):
            m[i, j] = 0.0
            v[i, j] = 0.0
    pop.reals.b1t[i] = 1.0
    pop.reals.b2t[i] = 1.0
    pop.scal[S_TOTAL] += 1
    pop.fsum[0] += pop.reals.F[i]
    sc.key[i] = key
    return i


@njit(**HOT, inline="always")
def parents_means(pop, p1, p2, kids):
    """Both children get the parents' mean eps and mean F."""
    eps = pop.reals.eps
    F = pop.reals.F
    mean_eps = (eps[p1] + eps[p2]) / 2.0
    mean_f = (F[p1] + F[p2]) / 2.0
    kids.reals.eps[0] = mean_eps
    kids.reals.eps[1] = mean_eps
    kids.reals.F[0] = mean_f
    kids.reals.F[1] = mean_f


@njit(**HOT, inline="always")
def begin_ga_phase(sc):
    """KACS, before the GA runs of an iteration: the update has just changed F, ms and exp of
    most rules, so deletion recounts every vote; no submodel's numerosities are stale yet."""
    forget_votes(sc)
    stale = sc.stale
    for s in range(stale.shape[0]):
        stale[s] = 0


@njit(**HOT, inline="always")
def run_ga(pop, members, start, stop, clip, hp, sc, layout):
    """GA of docs/algorithm.md section 3 on one match set (training only), when `ga_due` says so;
    `layout` as in layout.new_slot.

    KACS calls `begin_ga_phase` once before the GA runs of an iteration; XCSF keeps deletion's
    votes across iterations instead (deletion.keep_votes_after_update).
    """
    t = pop.scal[S_T]
    ts = pop.counts.ts
    for k in range(start, stop):
        ts[index_at(members, k)] = t
    p1 = tournament(pop, members, start, stop, hp.tau)
    p2 = tournament(pop, members, start, stop, hp.tau)
    kids = sc.children
    make_child(pop, p1, kids, 0)
    make_child(pop, p2, kids, 1)
    ordered = hp.article_intervals
    if np.random.random() < hp.chi:
        # The authors' code: the parents' means only if crossover changed anything; the
        # article's: always (below).
        if crossover(kids.pairs, ordered) and not hp.article_offspring:
            parents_means(pop, p1, p2, kids)
    if hp.article_offspring:
        parents_means(pop, p1, p2, kids)
    kids.reals.F[0] *= 0.1
    kids.reals.F[1] *= 0.1
    num = pop.counts.num
    for c in range(2):
        if hp.article_mutation:
            mutate_per_bound(kids.pairs, c, hp.mu, hp.m0, clip, ordered)
        else:
            mutate(kids.pairs, c, hp.mu, hp.m0, clip, ordered)
        if hp.do_subsumption and subsumes(pop, p1, kids, c, hp):
            num[p1] += 1
            pop.scal[S_TOTAL] += 1
            touch(sc.del_state, sc.touched, p1)
        elif hp.do_subsumption and subsumes(pop, p2, kids, c, hp):
            num[p2] += 1
            pop.scal[S_TOTAL] += 1
            touch(sc.del_state, sc.touched, p2)
        else:
            touch(sc.del_state, sc.touched,
                  insert_child(pop, sc, c, p1, p2, hp.article_fresh_moments, layout))
        # The second child is still in scratch here, so deletion cannot pick it; the
        # article deletes once both children are in.
        if not hp.article_deletion_timing:
            deletion_ga(pop, hp, sc, layout)
    if hp.article_deletion_timing:
        deletion_ga(pop, hp, sc, layout)
