"""The population (SPEC section 2) as a struct-of-arrays, and its maintenance.

Each rule has D stored interval pairs (a, b) (D = n for XCSF, 1 for KACS), their resolved
bounds lo = min(a, b), hi = max(a, b) (stored dimension-major, lo[d, i], so that matching one
input dimension against every rule reads contiguous memory and vectorizes), K linear weights
with Adam moments, the XCS bookkeeping values, and `sub`, its submodel id (KACS) or 0 (XCSF).
Besides the rules, a population holds its state: `scal` (the S_* counters), `fsum` (the
running sum of F over live rules) and `budget` (the budget N in force; it grows only under
budget: adaptive, see budget.py).

Rules removed during an iteration keep their slot with num = 0 until `compact` runs at the
end of that iteration: match sets built earlier hold indices, and SPEC section 3 requires
that no such index comes to point at a different rule. A rule with num = 0 is never a GA
parent, subsumer, merge target or deletion candidate.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT

# Indices into the int64 state vector `scal`.
S_P, S_TOTAL, S_T, S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_DEATHS = range(8)
N_SCAL = 8

Population = namedtuple(
    "Population",
    ["a", "b", "lo", "hi", "w", "m", "v", "F", "eps", "kappa", "ms", "b1t", "b2t",
     "exp", "num", "ts", "sub", "scal", "fsum", "budget"],
)


def new_population(capacity: int, D: int, K: int, N: int) -> Population:
    """Room for `capacity` rules (none live yet) under the budget N."""
    return Population(
        a=np.zeros((capacity, D)), b=np.zeros((capacity, D)),
        lo=np.zeros((D, capacity)), hi=np.zeros((D, capacity)),
        w=np.zeros((capacity, K)), m=np.zeros((capacity, K)), v=np.zeros((capacity, K)),
        F=np.zeros(capacity), eps=np.zeros(capacity), kappa=np.zeros(capacity),
        ms=np.zeros(capacity), b1t=np.ones(capacity), b2t=np.ones(capacity),
        exp=np.zeros(capacity, np.int64), num=np.zeros(capacity, np.int64),
        ts=np.zeros(capacity, np.int64), sub=np.zeros(capacity, np.int64),
        scal=np.zeros(N_SCAL, np.int64), fsum=np.zeros(1), budget=np.array([N], np.int64),
    )


@njit(**HOT, inline="always")
def copy_rule(src, i, dst, j):
    # Element loops rather than slice assignments: no temporary views on the hot path.
    for d in range(src.a.shape[1]):
        dst.a[j, d] = src.a[i, d]
        dst.b[j, d] = src.b[i, d]
        dst.lo[d, j] = src.lo[d, i]
        dst.hi[d, j] = src.hi[d, i]
    for k in range(src.w.shape[1]):
        dst.w[j, k] = src.w[i, k]
        dst.m[j, k] = src.m[i, k]
        dst.v[j, k] = src.v[i, k]
    dst.F[j] = src.F[i]
    dst.eps[j] = src.eps[i]
    dst.kappa[j] = src.kappa[i]
    dst.ms[j] = src.ms[i]
    dst.b1t[j] = src.b1t[i]
    dst.b2t[j] = src.b2t[i]
    dst.exp[j] = src.exp[i]
    dst.num[j] = src.num[i]
    dst.ts[j] = src.ts[i]
    dst.sub[j] = src.sub[i]


@njit(**HOT, inline="always")
def set_bounds(pop, i, d, a, b):
    pop.a[i, d] = a
    pop.b[i, d] = b
    pop.lo[d, i] = min(a, b)
    pop.hi[d, i] = max(a, b)


@njit(**HOT)
def refresh_fitness_sum(pop):
    """sum(F) over live rules, recomputed after every update phase.

    Between update phases F changes only by rules entering (covering, new children) and
    leaving (deletion), which adjust the running sum; deletion needs it for Fbar every time.
    """
    F = pop.F
    num = pop.num
    P = pop.scal[S_P]
    s0 = 0.0
    s1 = 0.0
    for i in range(0, P - 1, 2):
        if num[i] > 0:
            s0 += F[i]
        if num[i + 1] > 0:
            s1 += F[i + 1]
    if P % 2 == 1 and num[P - 1] > 0:
        s0 += F[P - 1]
    pop.fsum[0] = s0 + s1


@njit(**HOT)
def compact(pop, sc):
    """Drop rules with num = 0 by moving the last live rule into each hole (end of iteration).

    The holes are the rules that died this iteration, `sc.dead[:S_DEATHS]`, filled in
    ascending order: the same moves as a scan of the whole population for num = 0. A moved
    rule takes its antecedent key along. On return dead[:n] holds the holes in ascending
    order and cand[k] the slot whose rule moved into hole dead[k] (-1: none), for the row
    index (the deletion candidates in cand are spent once the GA phase is over).
    """
    dead = sc.dead
    key = sc.key
    moved = sc.cand
    n_dead = pop.scal[S_DEATHS]
    if n_dead == 0:
        return
    # Insertion sort: a handful of deaths per iteration.
    for k in range(1, n_dead):
        d = dead[k]
        j = k - 1
        while j >= 0 and dead[j] > d:
            dead[j + 1] = dead[j]
            j -= 1
        dead[j + 1] = d
    P = pop.scal[S_P]
    num = pop.num
    for k in range(n_dead):
        moved[k] = -1
    for k in range(n_dead):
        i = dead[k]
        if i >= P:
            break
        P -= 1
        while P > i and num[P] == 0:
            P -= 1
        if P > i:
            copy_rule(pop, P, pop, i)
            key[i] = key[P]
            moved[k] = P
            num[P] = 0
    pop.scal[S_P] = P
    pop.scal[S_DEATHS] = 0
