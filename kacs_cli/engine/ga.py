"""The GA on one match set (SPEC section 3, training only): trigger, tournament selection,
children, crossover, mutation, subsumption, insertion, and deletion after each child.

The two children are built in the scratch (`ca`, `cb`, `cw`, `cm`, `cv`, `cf`) and join the
population one at a time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.deletion import D_N_TOUCHED, D_VALID, deletion_ga, touch
from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.identical import antecedent_key, find_identical, same_antecedent
from kacs_cli.engine.population import S_P, S_T, S_TOTAL, set_bounds
from kacs_cli.engine.scratch import C_EPS, C_F, C_KAPPA, C_MS, C_SUB, C_TS


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
    num = pop.num
    F = pop.F
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
def make_child(pop, parent, sc, c):
    for d in range(sc.ca.shape[1]):
        sc.ca[c, d] = pop.a[parent, d]
        sc.cb[c, d] = pop.b[parent, d]
    for k in range(sc.cw.shape[1]):
        sc.cw[c, k] = pop.w[parent, k]
        sc.cm[c, k] = pop.m[parent, k]
        sc.cv[c, k] = pop.v[parent, k]
    sc.cf[c, C_F] = pop.F[parent] / pop.num[parent]
    sc.cf[c, C_EPS] = pop.eps[parent]
    sc.cf[c, C_KAPPA] = pop.kappa[parent]
    sc.cf[c, C_MS] = pop.ms[parent]
    sc.cf[c, C_TS] = pop.ts[parent]
    sc.cf[c, C_SUB] = pop.sub[parent]


@njit(**HOT, inline="always")
def order_pair(sc, c, d):
    if sc.ca[c, d] > sc.cb[c, d]:
        tmp = sc.ca[c, d]
        sc.ca[c, d] = sc.cb[c, d]
        sc.cb[c, d] = tmp


@njit(**HOT, inline="always")
def crossover(sc, article):
    """Per dimension, swap first stored bounds w.p. 0.5 and, independently, second ones."""
    changed = False
    D = sc.ca.shape[1]
    for d in range(D):
        if np.random.random() < 0.5:
            tmp = sc.ca[0, d]
            sc.ca[0, d] = sc.ca[1, d]
            sc.ca[1, d] = tmp
            changed = True
        if np.random.random() < 0.5:
            tmp = sc.cb[0, d]
            sc.cb[0, d] = sc.cb[1, d]
            sc.cb[1, d] = tmp
            changed = True
        if article:
            order_pair(sc, 0, d)
            order_pair(sc, 1, d)
    return changed


@njit(**HOT, inline="always")
def mutate(sc, c, mu, m0, clip, article):
    D = sc.ca.shape[1]
    for d in range(D):
        if np.random.random() < mu:
            a = sc.ca[c, d] + 2.0 * m0 * np.random.random() - m0
            b = sc.cb[c, d] + 2.0 * m0 * np.random.random() - m0
            if clip:
                a = min(max(a, 0.0), 1.0)
                b = min(max(b, 0.0), 1.0)
            sc.ca[c, d] = a
            sc.cb[c, d] = b
            if article:
                order_pair(sc, c, d)


@njit(**HOT, inline="always")
def subsumes(pop, parent, sc, c, hp):
    """Parent is experienced, accurate, and its intervals strictly contain the child's."""
    if pop.num[parent] <= 0:
        return False
    if not (pop.exp[parent] > hp.theta_sub and pop.eps[parent] < hp.e0):
        return False
    if pop.sub[parent] != int(sc.cf[c, C_SUB]):
        return False
    identical = True
    for d in range(sc.ca.shape[1]):
        c_lo = min(sc.ca[c, d], sc.cb[c, d])
        c_hi = max(sc.ca[c, d], sc.cb[c, d])
        p_lo = pop.lo[d, parent]
        p_hi = pop.hi[d, parent]
        if not (p_lo <= c_lo and c_hi <= p_hi):
            return False
        if p_lo != c_lo or p_hi != c_hi:
            identical = False
    return not identical


@njit(**HOT, inline="always")
def insert_child(pop, sc, c, p1, p2):
    """Merge the child into its identical rule (num += 1) or add it as a new macro-rule."""
    # Most children are unchanged copies of a parent, so the parents are looked at first.
    # Live rules with one antecedent are unique (merging keeps them so), which makes the
    # order of the search immaterial.
    child_key = antecedent_key(int(sc.cf[c, C_SUB]), sc.ca, sc.cb, c)
    if same_antecedent(pop, p1, sc, c):
        j = p1
    elif same_antecedent(pop, p2, sc, c):
        j = p2
    else:
        j = find_identical(pop, sc, c, child_key)
    if j >= 0:
        pop.num[j] += 1
        pop.scal[S_TOTAL] += 1
        return j
    i = pop.scal[S_P]
    pop.scal[S_P] = i + 1
    for d in range(sc.ca.shape[1]):
        set_bounds(pop, i, d, sc.ca[c, d], sc.cb[c, d])
    for k in range(sc.cw.shape[1]):
        pop.w[i, k] = sc.cw[c, k]
        pop.m[i, k] = sc.cm[c, k]
        pop.v[i, k] = sc.cv[c, k]
    pop.F[i] = sc.cf[c, C_F]
    pop.eps[i] = sc.cf[c, C_EPS]
    pop.kappa[i] = sc.cf[c, C_KAPPA]
    pop.ms[i] = sc.cf[c, C_MS]
    pop.ts[i] = int(sc.cf[c, C_TS])
    pop.sub[i] = int(sc.cf[c, C_SUB])
    pop.exp[i] = 0
    pop.num[i] = 1
    # The child's Adam moments are inherited, but its bias correction restarts with exp = 0.
    pop.b1t[i] = 1.0
    pop.b2t[i] = 1.0
    pop.scal[S_TOTAL] += 1
    pop.fsum[0] += pop.F[i]
    sc.key[i] = child_key
    return i


@njit(**HOT, inline="always")
def begin_ga_phase(sc):
    """F, ms and exp have just changed (update phase): deletion votes must be recomputed."""
    sc.del_state[D_VALID] = 0
    sc.del_state[D_N_TOUCHED] = 0
    stale = sc.stale
    for s in range(stale.shape[0]):
        stale[s] = 0


@njit(**HOT, inline="always")
def run_ga(pop, members, start, stop, clip, hp, sc):
    """GA of SPEC section 3 on one match set (training only), when `ga_due` says so.

    Call `begin_ga_phase` once before the GA runs of an iteration.
    """
    t = pop.scal[S_T]
    ts = pop.ts
    for k in range(start, stop):
        ts[index_at(members, k)] = t
    tau = hp.tau
    p1 = tournament(pop, members, start, stop, tau)
    p2 = tournament(pop, members, start, stop, tau)
    make_child(pop, p1, sc, 0)
    make_child(pop, p2, sc, 1)
    article = hp.article
    if np.random.random() < hp.chi:
        if crossover(sc, article):
            mean_eps = (pop.eps[p1] + pop.eps[p2]) / 2.0
            mean_f = (pop.F[p1] + pop.F[p2]) / 2.0
            sc.cf[0, C_EPS] = mean_eps
            sc.cf[1, C_EPS] = mean_eps
            sc.cf[0, C_F] = mean_f
            sc.cf[1, C_F] = mean_f
    sc.cf[0, C_F] *= 0.1
    sc.cf[1, C_F] *= 0.1
    do_sub = hp.do_subsumption
    for c in range(2):
        mutate(sc, c, hp.mu, hp.m0, clip, article)
        if do_sub and subsumes(pop, p1, sc, c, hp):
            pop.num[p1] += 1
            pop.scal[S_TOTAL] += 1
            touch(sc.del_state, sc.touched, p1)
        elif do_sub and subsumes(pop, p2, sc, c, hp):
            pop.num[p2] += 1
            pop.scal[S_TOTAL] += 1
            touch(sc.del_state, sc.touched, p2)
        else:
            touch(sc.del_state, sc.touched, insert_child(pop, sc, c, p1, p2))
        # The second child is still in scratch here, so deletion cannot pick it.
        deletion_ga(pop, hp, sc)
