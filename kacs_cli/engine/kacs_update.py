"""KACS's rule update over its population's segments (layout.py): the backpropagation and bookkeeping of
docs/algorithm.md section 4 for one match set, as two passes in slot order (three where nu != 1).

1. Over the set's members, which lie in ascending slots of their submodel's segment: one Adam
   step on both weights, then error, experience, ms and accuracy, each member's kappa num
   kept by slot (`weighted`), their sum. Where nu != 1 a second short pass computes the
   accuracies again (`_accuracies`).
2. Over the segment's slots: the members' fitness moves toward their share of that sum, and
   the segment's live rules' F are summed after it. Every submodel has a match set in every
   iteration, so these sums (and those of the few overflow rules, `overflow_fitness`) add up
   to the population's fitness sum, which then needs no pass of its own
   (XCSF's, population.refresh_fitness_sum).

What a rule costs is set less by its instructions than by how long its chain of dependent
operations is (loads, the moments, a square root, a division, the weights): rules overlap
only as far as the processor's window of instructions in flight reaches. So the arithmetic
is cut where the algorithm allows it, computing the same quantities within rounding:
- Adam's bias corrections 1 / (1 - beta1^t) and 1 / (1 - beta2^t) come from a table by the
  rule's step count t = exp + 1 (`bias_table`), instead of advancing the running powers b1t,
  b2t (two loads, two stores, two products) and dividing by them. The table's powers are the
  same running products, so its corrections are the values update.adam_bias would divide
  out (XCSF's Adam); b1t and b2t are written once at the end of a training call
  (`sync_adam_powers`), for whatever reads the population afterwards. The table ends where
  both corrections are exactly 1.0 for good, or, for decays so close to 1 that this lies
  beyond BIAS_ROWS_MAX, holds every step count a training call can reach (`bias_for_call`):
  the update only ever reads a row, with no power computed inside the loop.
- The step's division eta c1 / (s0 s1), shared by both weights, takes the place of the
  divisions by the bias corrections: two divisions per rule (that one and the accuracy's
  alpha e0 / eps), where dividing by each correction would issue three.
- The Adam pass makes no library call, so the compiler keeps its constants and array
  addresses in registers: its accuracy is nu = 1's, alpha e0 / eps (`linear_accuracy`),
  and where nu != 1 the power (eps / e0)^(-nu), a library call, is a pass of its own
  after it. The accuracy is a select rather than a branch on eps < e0, which a mix of
  accurate and inaccurate rules in a set would mispredict.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.kacs_submodels import rule_input
from kacs_cli.engine.update import accuracy_given, adam_moments, linear_accuracy

# The bias table's rows at most when a model is made (16 bytes each). With beta2 = 0.999 the
# corrections reach exactly 1.0 after about 37,400 steps; only beta2 above about 0.99943 needs
# more rows, and the table then grows before a training call as far as the call can reach
# (`bias_for_call`).
BIAS_ROWS_MAX = 1 << 16


def bias_table(beta1: float, beta2: float, rows: int = BIAS_ROWS_MAX) -> tuple[np.ndarray, bool]:
    """Adam's bias corrections by step, flat: entries 2k and 2k + 1 are 1 / (1 - beta1^(k+1))
    and 1 / (1 - beta2^(k+1)), the corrections of a rule's update number k + 1 (exp = k
    before it), with the powers as running products, as update.adam_bias advances them. The
    table ends at the first row whose corrections are both exactly 1.0, which then holds for
    every later step (the second value of the pair: True), or after `rows` rows (False: a
    step count beyond them needs a longer table, `bias_for_call`). A longer table's first
    rows are the shorter one's, bit for bit."""
    rows = int(rows)
    steps = np.arange(rows)
    # cumprod multiplies in order: the k-th entry is beta^(k+1) as a running product.
    p1 = np.cumprod(np.full(rows, float(beta1)))
    p2 = np.cumprod(np.full(rows, float(beta2)))
    table = np.empty((rows, 2))
    table[:, 0] = 1.0 / (1.0 - p1)
    table[:, 1] = 1.0 / (1.0 - p2)
    exact = steps[(table[:, 0] == 1.0) & (table[:, 1] == 1.0)]
    if exact.size:
        return table[:exact[0] + 1].reshape(-1).copy(), True
    return table.reshape(-1), False


def bias_for_call(bias: np.ndarray, exact: bool, beta1: float, beta2: float, top_exp: int,
                  iterations: int) -> tuple[np.ndarray, bool]:
    """The table (`bias_table`) a training call of `iterations` iterations reads, for a
    population whose largest step count is `top_exp`: the same table where it is exact or
    already holds every step count the call can reach (each iteration adds at most one to a
    rule's exp, and a new rule starts at 0), else one that does, at least twice as long."""
    if exact:
        return bias, exact
    reach = int(top_exp) + int(iterations) + 1
    rows = bias.shape[0] // 2
    if reach < rows:
        return bias, exact
    return bias_table(beta1, beta2, max(reach + 1, 2 * rows))


@njit(**HOT, inline="always")
def _update_members(pop, w, m, v, lo0, hi0, members, st, stop, g_scale, z, abs_err, sum_num,
                    hp, bias, weighted):
    """Pass 1 over one set's members (see the module's docstring): Adam, error, experience,
    ms and the accuracy as nu = 1 gives it, each member's kappa num kept by slot (`weighted`);
    returns their sum. `w`, `m`, `v`: the population's weights and moments, flat (rule i's
    pair at 2i, 2i + 1). A step count past the table's last row reads that row: the table
    is exact there, or holds every step count of the call (`bias_for_call`)."""
    eps = pop.reals.eps
    ms = pop.reals.ms
    F = pop.reals.F
    exp = pop.counts.exp
    beta = hp.beta
    b1 = hp.beta1
    b2 = hp.beta2
    eta = hp.eta
    eps_adam = hp.eps_adam
    e0 = hp.e0
    alpha_e0 = hp.alpha * e0
    kappa = pop.reals.kappa
    num = pop.counts.num
    last = np.uint64(bias.shape[0] // 2 - 1)
    acc_sum = 0.0
    for k in range(st, stop):
        i = index_at(members, k)
        g0 = g_scale * F[i]
        g1 = g0 * rule_input(z, lo0[i], hi0[i])
        t = exp[i]
        row = min(np.uint64(t), last)
        r2 = row + row
        c1 = bias[r2]
        c2 = bias[r2 + np.uint64(1)]
        e = eps[i] + beta * (abs_err - eps[i])
        eps[i] = e
        j = i + i
        j1 = j + np.uint64(1)
        m0, m1, v0, v1 = adam_moments(m, v, j, j1, g0, g1, b1, b2)
        s0 = np.sqrt(v0 * c2) + eps_adam
        s1 = np.sqrt(v1 * c2) + eps_adam
        # w_j -= eta c1 m_j / s_j for both weights, through one quotient.
        r = eta * c1 / (s0 * s1)
        w[j] -= m0 * s1 * r
        w[j1] -= m1 * s0 * r
        exp[i] = t + 1
        ms[i] += beta * (sum_num - ms[i])
        kap = linear_accuracy(e, alpha_e0 / e, e0)
        kappa[i] = kap
        term = kap * num[i]
        weighted[i] = term
        acc_sum += term
    return acc_sum


@njit(**HOT, inline="always")
def _accuracies(eps, kappa, num, members, st, stop, hp, weighted):
    """Pass 1's accuracies again where nu != 1 (the power is a library call, kept out of
    pass 1): kappa from the updated eps, each member's kappa num kept by slot (`weighted`);
    returns their sum, in member order."""
    alpha_e0 = hp.alpha * hp.e0
    acc_sum = 0.0
    for k in range(st, stop):
        i = index_at(members, k)
        e = eps[i]
        kap = accuracy_given(e, alpha_e0 / e, hp)
        kappa[i] = kap
        term = kap * num[i]
        weighted[i] = term
        acc_sum += term
    return acc_sum


@njit(**HOT, inline="always")
def segment_fitness(F, num, in_set, weighted, first, stop, beta, inv_sum, moves):
    """Pass 2 over the segment's slots first..stop-1: where `moves`, the F of each member
    (in_set) moves toward its share weighted * inv_sum; returns the sum of F over the live
    rules of those slots afterwards. Branch-free: every slot is read and written back."""
    total = 0.0
    for i in range(first, stop):
        f = F[i]
        moved = f + beta * (weighted[i] * inv_sum - f)
        f = moved if moves and in_set[i] != 0 else f
        F[i] = f
        total += f if num[i] > 0 else 0.0
    return total


@njit(**HOT, inline="always")
def update_set(pop, w, m, v, lo0, hi0, members, st, stop, g_scale, z, abs_err, sum_num, hp,
               layout, s, weighted, in_set):
    """The update of match set s, its members at members[st:stop] in ascending slots of its
    segment (a set covered into an overflow slot has that one member outside it); returns
    the sum of F over the segment's live rules afterwards."""
    acc_sum = _update_members(pop, w, m, v, lo0, hi0, members, st, stop, g_scale, z, abs_err,
                              sum_num, hp, layout.bias, weighted)
    if hp.nu != 1.0:
        acc_sum = _accuracies(pop.reals.eps, pop.reals.kappa, pop.counts.num, members, st, stop,
                              hp, weighted)
    F = pop.reals.F
    beta = hp.beta
    moves = acc_sum > 0.0
    inv_sum = 1.0 / acc_sum if moves else 0.0
    total = segment_fitness(F, pop.counts.num, in_set, weighted, index_at(layout.base, s),
                            index_at(layout.end, s), beta, inv_sum, moves)
    if moves and stop > st:
        i = index_at(members, stop - np.uint64(1))
        if i >= index_at(layout.base, layout.end.shape[0]):
            # Covered into an overflow slot: the set's one member, outside the segment.
            F[i] += beta * (weighted[i] * inv_sum - F[i])
    return total


@njit(**HOT, inline="always")
def overflow_fitness(F, num, extent, top):
    """The sum of F over the live rules in the overflow slots extent..top-1."""
    total = 0.0
    for i in range(extent, top):
        if num[i] > 0:
            total += F[i]
    return total


@njit(**HOT)
def sync_adam_powers(b1t, b2t, exp, P, b1, b2):
    """b1t, b2t of rules 0..P-1 set to beta1^exp, beta2^exp: the running powers a rule's
    record holds (persistence, a model trained further), which the update itself does not
    advance (it reads the bias table)."""
    for i in range(P):
        t = np.float64(exp[i])
        b1t[i] = b1 ** t
        b2t[i] = b2 ** t
