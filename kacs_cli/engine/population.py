"""The population (docs/algorithm.md section 2): every per-rule field declared once, as a struct of arrays.

A rule's fields come in groups of one shape and dtype (`GROUPS`), each group a namedtuple of
arrays, one array per field: `pop.reals.F`, `pop.counts.num`. Whatever must handle every
field of a rule (copying it, the layout's moves, compaction, persistence, the engine's
invariant tests) loops over the groups and their fields, so a field added to a group is
copied, permuted, saved and checked without being named anywhere else. Integer fields are
int64 wherever a rule goes, the GA's children included.

D is the number of interval pairs of a rule (n for XCSF, 1 for KACS), K its number of weights
(n + 1 for XCSF, 2 for KACS). The resolved bounds lo = min(a, b), hi = max(a, b) are stored
dimension-major, lo[d, i], so that matching one input against every rule reads contiguous
memory and vectorizes; every other group is rule-major.

Besides the rules, a population holds its state: `scal` (the S_* counters), `fsum` (the
running sum of F over live rules) and `budget` (the budget N in force; it grows only under
budget: adaptive, see budget.py).

Rules removed during an iteration keep their slot with num = 0 until `compact` runs at the
end of that iteration: match sets built earlier hold indices, and docs/algorithm.md section 3 requires
that no such index comes to point at a different rule. A rule with num = 0 is never a GA
parent, subsumer, merge target or deletion candidate.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT

# rules x D, float64: the stored interval pairs; an interval is [min(a, b), max(a, b)].
Pairs = namedtuple("Pairs", ["a", "b"])
# D x rules, float64: the resolved bounds, kept in step with the pairs.
Bounds = namedtuple("Bounds", ["lo", "hi"])
# rules x K, float64: the consequent's weights and their Adam moments.
Weights = namedtuple("Weights", ["w", "m", "v"])
# rules, float64: fitness, error, accuracy, match-set size estimate, and Adam's running powers
# beta1^t, beta2^t of the rule-local step count t.
Reals = namedtuple("Reals", ["F", "eps", "kappa", "ms", "b1t", "b2t"])
# rules, int64: experience, numerosity, GA time stamp, submodel id (KACS; 0 for XCSF).
Counts = namedtuple("Counts", ["exp", "num", "ts", "sub"])


@dataclass(frozen=True)
class Group:
    name: str            # the Population's attribute
    fields: type         # the namedtuple of its arrays
    layout: str          # "rules", "rules x D", "rules x K" or "D x rules"
    dtype: type
    derived: bool = False  # recomputed from other fields, not carried by the GA's children


GROUPS = (
    Group("pairs", Pairs, "rules x D", np.float64),
    Group("bounds", Bounds, "D x rules", np.float64, derived=True),
    Group("weights", Weights, "rules x K", np.float64),
    Group("reals", Reals, "rules", np.float64),
    Group("counts", Counts, "rules", np.int64),
)
FIELD_NAMES = tuple(name for group in GROUPS for name in group.fields._fields)

# The population's state next to its rules; persistence saves `scal` and `fsum` as they are
# and the budget as `budget_N` (adaptive budget only; a fixed budget's is N).
STATE_FIELDS = ("scal", "fsum")
Population = namedtuple("Population", [g.name for g in GROUPS] + [*STATE_FIELDS, "budget"])
# The two children of a GA event between selection and insertion (docs/algorithm.md section 3): every field
# of a rule but the resolved bounds, which insertion sets from the pairs.
Children = namedtuple("Children", [g.name for g in GROUPS if not g.derived])

# Indices into the int64 state vector `scal`.
S_P, S_TOTAL, S_T, S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_DEATHS = range(8)
N_SCAL = 8


def _shape(layout: str, capacity: int, D: int, K: int) -> tuple[int, ...]:
    return {"rules": (capacity,), "rules x D": (capacity, D), "rules x K": (capacity, K),
            "D x rules": (D, capacity)}[layout]


def _new_groups(groups, capacity: int, D: int, K: int) -> dict:
    return {g.name: g.fields(*(np.zeros(_shape(g.layout, capacity, D, K), g.dtype)
                               for _ in g.fields._fields))
            for g in groups}


def new_population(capacity: int, D: int, K: int, N: int) -> Population:
    """Room for `capacity` rules (none live yet) under the budget N."""
    return Population(**_new_groups(GROUPS, capacity, D, K), scal=np.zeros(N_SCAL, np.int64),
                      fsum=np.zeros(1), budget=np.array([N], np.int64))


def new_children(D: int, K: int) -> Children:
    return Children(**_new_groups([g for g in GROUPS if not g.derived], 2, D, K))


def rule_fields(rules) -> dict[str, np.ndarray]:
    """Every per-rule array of a Population or Children by field name, as a view with the
    rules along the first axis (whatever the stored layout)."""
    out = {}
    for g in GROUPS:
        group = getattr(rules, g.name, None)
        if group is None:
            continue
        for name, arr in zip(g.fields._fields, group):
            out[name] = arr.T if g.layout == "D x rules" else arr
    return out


def stack(sources: list, dst: Population) -> list[slice]:
    """The live rules of the populations `sources`, every field, side by side in the empty dst
    (merging populations: bagging.py), each source's slots returned; dst's state becomes their
    union: rules, numerosities, counters and fitness sums added, the clock the latest of theirs."""
    targets = rule_fields(dst)
    slots, offset = [], 0
    for src in sources:
        P = int(src.scal[S_P])
        for name, arr in rule_fields(src).items():
            targets[name][offset:offset + P] = arr[:P]
        slots.append(slice(offset, offset + P))
        offset += P
    for s in (S_P, S_TOTAL, S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS):
        dst.scal[s] = sum(int(src.scal[s]) for src in sources)
    dst.scal[S_T] = max(int(src.scal[S_T]) for src in sources)
    dst.scal[S_DEATHS] = 0
    dst.fsum[0] = sum(float(src.fsum[0]) for src in sources)
    dst.budget[0] = sum(int(src.budget[0]) for src in sources)
    return slots


# The compiled code below names the groups (numba cannot loop over differently shaped
# groups), never a field: a new field of an existing group needs no change here.


@njit(**HOT, inline="always")
def _copy_vector_entries(src, i, dst, j):
    for k in range(len(src)):
        dst[k][j] = src[k][i]


@njit(**HOT, inline="always")
def _copy_matrix_rows(src, i, dst, j):
    # Element loops rather than slice assignments: no temporary views on the hot path.
    for k in range(len(src)):
        s = src[k]
        d = dst[k]
        for c in range(s.shape[1]):
            d[j, c] = s[i, c]


@njit(**HOT, inline="always")
def _copy_matrix_columns(src, i, dst, j):
    for k in range(len(src)):
        s = src[k]
        d = dst[k]
        for r in range(s.shape[0]):
            d[r, j] = s[r, i]


@njit(**HOT, inline="always")
def copy_stored(src, i, dst, j):
    """Rule i of src into slot j of dst, every field but the resolved bounds (either may be a
    Population or Children)."""
    _copy_matrix_rows(src.pairs, i, dst.pairs, j)
    _copy_matrix_rows(src.weights, i, dst.weights, j)
    _copy_vector_entries(src.reals, i, dst.reals, j)
    _copy_vector_entries(src.counts, i, dst.counts, j)


@njit(**HOT, inline="always")
def copy_rule(src, i, dst, j):
    """Rule i of population src into slot j of population dst, every field."""
    copy_stored(src, i, dst, j)
    _copy_matrix_columns(src.bounds, i, dst.bounds, j)


@njit(**HOT, inline="always")
def _permute(values, order, P, buffer):
    """values[:P] = values[order[:P]], through `buffer`; 0 where order[k] < 0 (a slot the
    sorted layout leaves empty)."""
    for k in range(P):
        j = order[k]
        buffer[k] = values[j] if j >= 0 else 0
    for k in range(P):
        values[k] = buffer[k]


@njit(**HOT)
def permute_rules(pop, order, P, buffer_f, buffer_i):
    """Slot k receives the rule of slot order[k], for k < P (order a permutation of 0..P-1, or
    with -1 for a slot left empty, every field 0); through a float64 and an int64 buffer of at
    least P entries."""
    for arr in pop.pairs:
        for j in range(arr.shape[1]):
            _permute(arr[:, j], order, P, buffer_f)
    for arr in pop.weights:
        for j in range(arr.shape[1]):
            _permute(arr[:, j], order, P, buffer_f)
    for arr in pop.bounds:
        for d in range(arr.shape[0]):
            _permute(arr[d], order, P, buffer_f)
    for arr in pop.reals:
        _permute(arr, order, P, buffer_f)
    for arr in pop.counts:
        _permute(arr, order, P, buffer_i)


@njit(**HOT, inline="always")
def set_bounds(pop, i, d, a, b):
    pop.pairs.a[i, d] = a
    pop.pairs.b[i, d] = b
    pop.bounds.lo[d, i] = min(a, b)
    pop.bounds.hi[d, i] = max(a, b)


@njit(**HOT, inline="always")
def resolve_bounds(pop, i):
    """Rule i's resolved bounds from its stored pairs."""
    a = pop.pairs.a
    b = pop.pairs.b
    for d in range(a.shape[1]):
        pop.bounds.lo[d, i] = min(a[i, d], b[i, d])
        pop.bounds.hi[d, i] = max(a[i, d], b[i, d])


@njit(**HOT, inline="always")
def sort_deaths(dead, n_dead):
    """dead[:n_dead] in ascending order, by insertion: a handful of deaths per iteration."""
    for k in range(1, n_dead):
        d = dead[k]
        j = k - 1
        while j >= 0 and dead[j] > d:
            dead[j + 1] = dead[j]
            j -= 1
        dead[j + 1] = d

@njit(**HOT)
def compact(pop, sc, moved):
    """Drop rules with num = 0 by moving the last live rule into each hole (end of iteration).

    The holes are the rules that died this iteration, `sc.dead[:S_DEATHS]`, filled in
    ascending order: the same moves as a scan of the whole population for num = 0. A moved
    rule takes its antecedent key along. On return dead[:n] holds the holes in ascending
    order and moved[k] the slot whose rule moved into hole dead[k] (-1: none), for the row
    index and the deletion votes.
    """
    dead = sc.dead
    key = sc.key
    n_dead = pop.scal[S_DEATHS]
    if n_dead == 0:
        return
    sort_deaths(dead, n_dead)
    P = pop.scal[S_P]
    num = pop.counts.num
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
