"""Identical rules (docs/algorithm.md sections 2 and 3): a child whose antecedent equals a live rule's (same
submodel, stored pairs equal element by element) merges into it instead of joining the
population. XCSF finds them through a 64-bit hash of each antecedent, the antecedent key;
KACS among the few slots of the child's submodel's segment (layout.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT
from kacs_cli.engine.population import S_P

# Odd 64-bit multiplier of the antecedent hash (Fibonacci hashing).
KEY_MUL = np.uint64(0x9E3779B97F4A7C15)


@njit(**HOT, inline="always")
def float_bits(x):
    """The IEEE bit pattern of a float64, as a uint64 (a reinterpretation, no conversion)."""
    return np.float64(x).view(np.uint64)


@njit(**HOT, inline="always")
def antecedent_key(sub, a, b, row):
    """A 64-bit hash of a rule's submodel and stored pairs (a[row, :], b[row, :]).

    Equal antecedents (same submodel, pairs equal element-wise) have equal keys: the bounds
    enter as bit patterns of v + 0.0, which maps -0.0 to 0.0 and changes nothing else, as
    the identity test compares with ==. Unequal ones collide with negligible probability,
    and a key match is always confirmed element by element.
    """
    h = np.uint64(sub) * KEY_MUL + np.uint64(1)
    for d in range(a.shape[1]):
        h = (h ^ float_bits(a[row, d] + 0.0)) * KEY_MUL
        h = (h ^ float_bits(b[row, d] + 0.0)) * KEY_MUL
    return h ^ (h >> np.uint64(29))


@njit(**HOT)
def rebuild_keys(pop, sc):
    """Every rule slot's antecedent key; the index is valid from here on."""
    key = sc.key
    a = pop.pairs.a
    b = pop.pairs.b
    sub = pop.counts.sub
    for i in range(pop.scal[S_P]):
        key[i] = antecedent_key(sub[i], a, b, i)
    sc.key_state[0] = 1


@njit(**HOT, inline="always")
def set_key(pop, sc, i):
    """Record rule i's key after its bounds were set (covering), if the index is in use."""
    if sc.key_state[0] != 0:
        sc.key[i] = antecedent_key(pop.counts.sub[i], pop.pairs.a, pop.pairs.b, i)


@njit(**HOT, inline="always")
def find_identical(pop, sc, c, child_key):
    """The first live rule, in population order, of child c's submodel whose stored pairs
    equal the child's element-wise; -1 if there is none.

    Rules are found by their antecedent key (`sc.key`, kept in step with the population by
    covering, insertion and compaction, and rebuilt after anything else that moves rules):
    one branch-free pass over the keys settles the usual case, no identical rule. Filtering
    on a bound instead does not work for XCSF, where half the population shares the lower
    bound 0 of the first input, so that most offspring scanned that half rule by rule.
    """
    if sc.key_state[0] == 0:
        rebuild_keys(pop, sc)
    P = pop.scal[S_P]
    key = sc.key
    hits = 0
    for i in range(P):
        hits += key[i] == child_key
    if hits == 0:
        return -1
    kids = sc.children
    sub = kids.counts.sub[c]
    ca = kids.pairs.a
    cb = kids.pairs.b
    pa = pop.pairs.a
    pb = pop.pairs.b
    num = pop.counts.num
    psub = pop.counts.sub
    for i in range(P):
        if key[i] != child_key:
            continue
        if num[i] <= 0 or psub[i] != sub:
            continue
        same = True
        for d in range(ca.shape[1]):
            if pa[i, d] != ca[c, d] or pb[i, d] != cb[c, d]:
                same = False
                break
        if same:
            return i
    return -1


@njit(**HOT, inline="always")
def same_antecedent(pop, i, kids, c):
    """Live rule i has child c's submodel and, element by element, its stored pairs."""
    if pop.counts.num[i] <= 0 or pop.counts.sub[i] != kids.counts.sub[c]:
        return False
    for d in range(kids.pairs.a.shape[1]):
        if pop.pairs.a[i, d] != kids.pairs.a[c, d] or pop.pairs.b[i, d] != kids.pairs.b[c, d]:
            return False
    return True


@njit(**HOT, inline="always")
def identical_in_segment(pop, kids, c, layout):
    """`find_identical` for KACS: child c's identical rule among the slots of its
    submodel's segment, then the overflow slots (the rules born this iteration that wait for
    a slot in their segment); -1 if there is none. A segment holds a few rules where the
    population holds thousands, and the keys need not be kept."""
    s = kids.counts.sub[c]
    for i in range(layout.base[s], layout.end[s]):
        if same_antecedent(pop, i, kids, c):
            return i
    for i in range(layout.base[layout.end.shape[0]], pop.scal[S_P]):
        if same_antecedent(pop, i, kids, c):
            return i
    return -1
