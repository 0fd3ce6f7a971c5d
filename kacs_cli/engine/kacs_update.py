"""KACS's rule update over its population's segments (layout.py): the backpropagation and bookkeeping of
docs/algorithm.md section 4 for the match sets of an iteration (`update_sets`), in two passes.

1. Over every set's members, set after set (each set's lie in ascending slots of its
   submodel's segment), in one loop (`update_members`): one Adam step on both weights, then
   error, experience, ms and accuracy, each member's kappa num kept by slot (`weighted`) and
   summed per set.
2. Per set (`set_fitness`): where nu != 1 the accuracies again (`_accuracies`); then, over
   the segment's slots, the members' fitness moves toward their share of that sum, and
   the segment's live rules' F are summed after it. Every submodel has a match set in every
   iteration, so these sums (and those of the few overflow rules, `overflow_fitness`) add up
   to the population's fitness sum, which then needs no pass of its own.

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
from kacs_cli.engine.kacs_submodels import rule_input, set_range
from kacs_cli.engine.update import accuracy_given, adam_moments, linear_accuracy, set_numerosity

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
def update_members(pop, w, m, v, lo0, hi0, members, k0, k1, set_sum_f, set_scale, set_z,
                   set_num, set_acc, abs_err, hp, bias, weighted):
    """Pass 1 over the members at members[k0:k1], several sets' one after another (see the
    module's docstring): Adam, error, experience, ms and the accuracy as nu = 1 gives it,
    each member's kappa num kept by slot (`weighted`) and added, in member order, to its
    set's `set_acc` (zero before). A member's set is its rule's submodel s, which gives its
    gradient scale `set_scale[s]`, input `set_z[s]` and numerosity `set_num[s]`; a set whose
    sum of F is not positive is not updated. `w`, `m`, `v`: the population's weights and
    moments, flat (rule i's pair at 2i, 2i + 1). A step count past the table's last row
    reads that row: the table is exact there, or holds every step count of the call
    (`bias_for_call`). One loop over every set's members rather than one per set, so that at
    n = 20, where a set holds a few rules, consecutive sets' rules can overlap; one sitting
    measured no gain beyond the machine's noise (docs/performance.md), and the numbers are
    the same bit for bit."""
    eps = pop.reals.eps
    ms = pop.reals.ms
    F = pop.reals.F
    exp = pop.counts.exp
    sub = pop.counts.sub
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
    for k in range(k0, k1):
        i = index_at(members, k)
        s = index_at(sub, i)
        if set_sum_f[s] <= 0.0:
            continue
        g0 = set_scale[s] * F[i]
        g1 = g0 * rule_input(set_z[s], lo0[i], hi0[i])
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
        ms[i] += beta * (set_num[s] - ms[i])
        kap = linear_accuracy(e, alpha_e0 / e, e0)
        kappa[i] = kap
        term = kap * num[i]
        weighted[i] = term
        set_acc[s] += term


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
def set_fitness(pop, members, st, stop, acc_sum, hp, layout, s, weighted, in_set):
    """Pass 2 of match set s, its members at members[st:stop] in ascending slots of its
    segment (a set covered into an overflow slot has that one member outside it), after
    pass 1 gave their kappa num the sum `acc_sum`: the accuracies again where nu != 1, then
    the segment's fitness; returns the sum of F over the segment's live rules afterwards."""
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
def update_sets(pop, wk, w, m, v, lo0, hi0, x, n, err, abs_err, s0, s1, s_in, recount, hp,
                layout, fsum):
    """The update of match sets s0..s1-1 (inner sets are those below s_in): each set's
    gradient scale, -err s_q / sum F for an inner set of channel q, -err / sum F for an outer
    one, and its input; with `recount` (covering deleted rules this iteration) its
    numerosity summed again; one pass 1 over all their members (`update_members`); then
    each set's pass 2 (`set_fitness`) in set order, a set whose sum of F is not positive
    only summing its segment's F. Returns `fsum` plus those sums, added in set order."""
    members = wk.members
    start = wk.start
    count = wk.count
    set_sum_f = wk.sum_f
    set_scale = wk.set_scale
    set_z = wk.set_z
    set_num = wk.set_num
    set_acc = wk.set_acc
    slope = wk.slope
    zhat = wk.zhat
    num = pop.counts.num
    for s in range(s0, s1):
        set_acc[s] = 0.0
        sum_f = set_sum_f[s]
        if sum_f <= 0.0:
            continue
        if s < s_in:
            q = s // n
            set_z[s] = x[s - q * n]
            set_scale[s] = -err * slope[q] / sum_f
        else:
            set_z[s] = zhat[s - s_in]
            set_scale[s] = -err / sum_f
        if recount:
            st, stop = set_range(start, count, s)
            set_num[s] = set_numerosity(num, members, st, stop)
    # The layout's float buffer is free during an iteration: it keeps each member's kappa num.
    weighted = wk.sort_f
    in_set = wk.in_set
    k0 = index_at(start, s0)
    k1 = index_at(start, s1 - 1) + index_at(count, s1 - 1)
    update_members(pop, w, m, v, lo0, hi0, members, k0, k1, set_sum_f, set_scale, set_z,
                   set_num, set_acc, abs_err, hp, layout.bias, weighted)
    F = pop.reals.F
    beta = hp.beta
    for s in range(s0, s1):
        if set_sum_f[s] <= 0.0:
            fsum += segment_fitness(F, num, in_set, weighted, index_at(layout.base, s),
                                    index_at(layout.end, s), beta, 0.0, False)
            continue
        st, stop = set_range(start, count, s)
        fsum += set_fitness(pop, members, st, stop, set_acc[s], hp, layout, s, weighted, in_set)
    return fsum


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
