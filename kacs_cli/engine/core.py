"""Operators shared by KACS and XCSF (SPEC sections 2 and 3), compiled with numba.

The population is a struct-of-arrays (`Population`). Each rule has D stored interval pairs
(a, b) (D = n for XCSF, 1 for KACS), their resolved bounds lo = min(a, b), hi = max(a, b)
(stored dimension-major, lo[d, i], so that matching one input dimension against every rule
reads contiguous memory and vectorizes),
K linear weights with Adam moments, the XCS bookkeeping values, and `sub`, its submodel id
(KACS) or 0 (XCSF).

The per-iteration functions are compiled with the options `HOT`:
- `_nrt=False`: they allocate nothing, and without numba's reference counting a call that
  passes the Population (19 arrays) costs nothing instead of ~40 atomic increments and
  decrements; that was a quarter of KACS's time. Functions that allocate (prediction, the
  driver) keep it.
- `error_model="numpy"`: a division is one instruction rather than a test for a Python
  ZeroDivisionError first, and a loop with divisions can be vectorized; no division on these
  paths can have a zero divisor.
The GA's functions (run_ga and what it calls per offspring) are inlined: a call between
compiled functions passes every array of the Population and Scratch tuples field by field,
and KACS makes about 25 GA events and 50 offspring per iteration at n = 20 (6 % of its time).

Rules removed during an iteration keep their slot with num = 0 until `compact` runs at the
end of that iteration: match sets built earlier hold indices, and SPEC section 3 requires
that no such index comes to point at a different rule. A rule with num = 0 is never a GA
parent, subsumer, merge target or deletion candidate.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.lanes import float_bits, trailing_zeros
from kacs_cli.engine.params import Hyperparameters

# Compilation options of the per-iteration functions (see the module docstring).
HOT = dict(cache=True, _nrt=False, error_model="numpy")

# Indices into the float64 hyperparameter vector passed to the compiled code.
H_N, H_E0, H_BETA, H_ALPHA, H_NU, H_DELTA, H_M0, H_R0 = 0, 1, 2, 3, 4, 5, 6, 7
H_THETA_GA, H_THETA_DEL, H_THETA_SUB, H_CHI, H_MU, H_TAU, H_F_I = 8, 9, 10, 11, 12, 13, 14
H_DO_SUB, H_P_HASH, H_ETA, H_BETA1, H_BETA2, H_EPS_ADAM, H_ARTICLE = 15, 16, 17, 18, 19, 20, 21
N_HP = 22

# Indices into the int64 scalar state vector of a population.
S_P, S_TOTAL, S_T, S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_DEATHS = range(8)
N_SCAL = 8

Population = namedtuple(
    "Population",
    ["a", "b", "lo", "hi", "w", "m", "v", "F", "eps", "kappa", "ms", "b1t", "b2t",
     "exp", "num", "ts", "sub", "scal", "fsum"],
)

# Scratch space for the two offspring of a GA event, for deletion votes, for the rules that
# died in the current iteration (`dead`, S_DEATHS of them), for the submodels whose
# numerosities deletion changed during a GA phase (`stale`, one flag per submodel), and the
# antecedent index of `find_identical` (`key`, one hash per rule slot, valid while
# key_state[0] == 1).
# Every call between compiled functions passes each array of its tuple arguments field by
# field, and the GA calls several functions per offspring: a field added here costs KACS time
# on every one of those calls, so what only XCSF needs lives in its own tuple (RowIndex).
Scratch = namedtuple(
    "Scratch",
    ["ca", "cb", "cw", "cm", "cv", "cf", "votes", "blocks", "grad", "dx",
     "del_state", "del_ref", "cand", "touched", "dirty", "dead", "stale", "key", "key_state"],
)
# XCSF's row index (see `rx_build`), in use while state[0] == 1.
RowIndex = namedtuple("RowIndex", ["state", "vals", "pre", "rows", "mask"])
# Deletion votes are summed in blocks so that the roulette pick scans blocks, then one block.
VOTE_BLOCK = 32
# Within one GA phase the votes are kept up to date incrementally (see `deletion_ga`); rules
# whose F/num lies within this relative margin above the low-fitness threshold are watched.
LOW_MARGIN = 0.02
# del_state entries: votes valid, candidates, touched rules, votes zeroed up to this index.
D_VALID, D_N_CAND, D_N_TOUCHED, D_ZEROED = 0, 1, 2, 3


def hp_vector(params: Hyperparameters) -> np.ndarray:
    hp = np.zeros(N_HP)
    hp[H_N] = params.N
    hp[H_E0] = params.e0
    hp[H_BETA] = params.beta
    hp[H_ALPHA] = params.alpha
    hp[H_NU] = params.nu
    hp[H_DELTA] = params.delta
    hp[H_M0] = params.m0
    hp[H_R0] = params.r0
    hp[H_THETA_GA] = params.theta_GA
    hp[H_THETA_DEL] = params.theta_del
    hp[H_THETA_SUB] = params.theta_sub
    hp[H_CHI] = params.chi
    hp[H_MU] = params.mu
    hp[H_TAU] = params.tau
    hp[H_F_I] = params.F_I
    hp[H_DO_SUB] = 1.0 if params.do_subsumption else 0.0
    hp[H_P_HASH] = params.P_hash
    hp[H_ETA] = params.eta
    hp[H_BETA1] = params.beta1
    hp[H_BETA2] = params.beta2
    hp[H_EPS_ADAM] = params.eps_adam
    hp[H_ARTICLE] = 1.0 if params.semantics == "article" else 0.0
    return hp


def new_population(capacity: int, D: int, K: int) -> Population:
    return Population(
        a=np.zeros((capacity, D)), b=np.zeros((capacity, D)),
        lo=np.zeros((D, capacity)), hi=np.zeros((D, capacity)),
        w=np.zeros((capacity, K)), m=np.zeros((capacity, K)), v=np.zeros((capacity, K)),
        F=np.zeros(capacity), eps=np.zeros(capacity), kappa=np.zeros(capacity),
        ms=np.zeros(capacity), b1t=np.ones(capacity), b2t=np.ones(capacity),
        exp=np.zeros(capacity, np.int64), num=np.zeros(capacity, np.int64),
        ts=np.zeros(capacity, np.int64), sub=np.zeros(capacity, np.int64),
        scal=np.zeros(N_SCAL, np.int64), fsum=np.zeros(1),
    )


def new_scratch(capacity: int, D: int, K: int, n_sets: int = 1) -> Scratch:
    return Scratch(
        ca=np.zeros((2, D)), cb=np.zeros((2, D)), cw=np.zeros((2, K)), cm=np.zeros((2, K)),
        cv=np.zeros((2, K)), cf=np.zeros((2, 6)), grad=np.zeros(K), dx=np.zeros(D),
        # Votes are summed in whole blocks: room for the last block's padding.
        votes=np.zeros(capacity + VOTE_BLOCK), blocks=np.zeros(capacity // VOTE_BLOCK + 2),
        del_state=np.zeros(4, np.int64), del_ref=np.zeros(1), cand=np.zeros(capacity, np.int64),
        touched=np.zeros(16, np.int64), dirty=np.zeros(capacity // VOTE_BLOCK + 2, np.uint8),
        dead=np.zeros(capacity, np.int64), stale=np.zeros(n_sets, np.uint8),
        key=np.zeros(capacity, np.uint64), key_state=np.zeros(1, np.int64),
    )


def new_row_index(D: int) -> RowIndex:
    """A row index that is off (state 0); see `rx_build`."""
    return RowIndex(state=np.zeros(1, np.int64), vals=np.zeros((D, 0)),
                    pre=np.zeros((D, 1, 0), np.uint64), rows=np.zeros((0, 0), np.uint64),
                    mask=np.zeros((0, 0), np.uint64))


# Columns of Scratch.cf: per child F, eps, kappa, ms, ts, sub.
C_F, C_EPS, C_KAPPA, C_MS, C_TS, C_SUB = 0, 1, 2, 3, 4, 5


@njit(**HOT)
def seed_rng(seed):
    np.random.seed(seed)


@njit(cache=True, inline="always")
def next_row(order, it, reshuffle):
    """The training row of iteration `it` of a call: `order` is that call's permutation of the
    rows, drawn anew (in place) at the start of every later epoch when `reshuffle`."""
    rows = order.shape[0]
    pos = it % rows
    if pos == 0 and it > 0 and reshuffle:
        order[:] = np.random.permutation(rows)
    return order[pos]


@njit(**HOT, inline="always")
def index_at(indices, k):
    """indices[k] as an unsigned integer, for use as an index.

    Indexing with a signed integer makes numba emit the wraparound for negative indices on
    every access; for indices read from an array LLVM cannot prove them non-negative, and
    that was a third of the instructions of the KACS update loop."""
    return np.uint64(indices[k])


@njit(**HOT, inline="always")
def accuracy(eps, hp):
    return accuracy_given(eps, hp[H_ALPHA] * hp[H_E0] / eps, hp)


@njit(**HOT, inline="always")
def accuracy_given(eps, alpha_e0_over_eps, hp):
    """kappa from eps, with alpha e0 / eps (the usual nu = 1 case) computed by the caller,
    which can pair that division with another (see kacs._update_rule)."""
    e0 = hp[H_E0]
    if eps < e0:
        return 1.0
    if hp[H_NU] == 1.0:
        return alpha_e0_over_eps
    return hp[H_ALPHA] * (eps / e0) ** (-hp[H_NU])


@njit(**HOT, inline="always")
def adam_bias(b1t, b2t, i, b1, b2):
    """Advance rule i's running powers beta1^t, beta2^t; return the two bias denominators.

    The step count t is rule-local: the number of updates this rule has received, this one
    included. A running product is one multiply where a power is a libm call.
    """
    p1 = b1t[i] * b1
    p2 = b2t[i] * b2
    b1t[i] = p1
    b2t[i] = p2
    return 1.0 - p1, 1.0 - p2


@njit(**HOT, inline="always")
def adam_step(w, m, v, b1t, b2t, i, grad, hp):
    """One Adam step on rule i with gradient vector `grad` (any number of weights)."""
    b1 = hp[H_BETA1]
    b2 = hp[H_BETA2]
    d1, d2 = adam_bias(b1t, b2t, i, b1, b2)
    inv_d1 = 1.0 / d1
    inv_d2 = 1.0 / d2
    eta = hp[H_ETA]
    eps_adam = hp[H_EPS_ADAM]
    for j in range(grad.shape[0]):
        g = grad[j]
        mj = b1 * m[i, j] + (1.0 - b1) * g
        vj = b2 * v[i, j] + (1.0 - b2) * g * g
        m[i, j] = mj
        v[i, j] = vj
        w[i, j] -= eta * (mj * inv_d1) / (np.sqrt(vj * inv_d2) + eps_adam)


@njit(**HOT, inline="always")
def update_fitness(eps, kappa, F, num, members, start, stop, hp):
    """kappa and F within one match set; skipped when every member has been deleted."""
    acc_sum = 0.0
    for k in range(start, stop):
        i = index_at(members, k)
        kap = accuracy(eps[i], hp)
        kappa[i] = kap
        acc_sum += kap * num[i]
    if acc_sum <= 0.0:
        return
    beta = hp[H_BETA]
    inv_sum = 1.0 / acc_sum
    for k in range(start, stop):
        i = index_at(members, k)
        F[i] += beta * (kappa[i] * num[i] * inv_sum - F[i])


@njit(**HOT, inline="always")
def set_numerosity(num, members, start, stop):
    total = 0
    for k in range(start, stop):
        total += num[index_at(members, k)]
    return total


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
def draw_interval(z, r0, clip, article):
    """Covering bounds z - U(0, r0] and z + U(0, r0], in random stored order (reference)."""
    lower = z - (1.0 - np.random.random()) * r0
    upper = z + (1.0 - np.random.random()) * r0
    if clip:
        lower = min(max(lower, 0.0), 1.0)
        upper = min(max(upper, 0.0), 1.0)
    if article or np.random.random() < 0.5:
        return lower, upper
    return upper, lower


@njit(**HOT, inline="always")
def full_interval(article):
    if article or np.random.random() < 0.5:
        return 0.0, 1.0
    return 1.0, 0.0


@njit(**HOT, inline="always")
def set_bounds(pop, i, d, a, b):
    pop.a[i, d] = a
    pop.b[i, d] = b
    pop.lo[d, i] = min(a, b)
    pop.hi[d, i] = max(a, b)


@njit(**HOT, inline="always")
def append_rule(pop, sub, t, hp):
    """A fresh rule slot with the covering defaults of SPEC section 3 (bounds, weights unset)."""
    i = pop.scal[S_P]
    pop.scal[S_P] = i + 1
    m = pop.m
    v = pop.v
    for j in range(m.shape[1]):
        m[i, j] = 0.0
        v[i, j] = 0.0
    pop.F[i] = hp[H_F_I]
    pop.eps[i] = 0.0
    pop.kappa[i] = 1.0
    pop.ms[i] = 1.0
    pop.b1t[i] = 1.0
    pop.b2t[i] = 1.0
    pop.exp[i] = 0
    pop.num[i] = 1
    pop.ts[i] = t
    pop.sub[i] = sub
    pop.scal[S_TOTAL] += 1
    pop.fsum[0] += hp[H_F_I]
    return i


@njit(**HOT, inline="always")
def covering_weights(pop, i, hp):
    if hp[H_ARTICLE] != 0.0:
        for j in range(pop.w.shape[1]):
            pop.w[i, j] = 2.0 * np.random.random() - 1.0
    else:
        value = 2.0 * np.random.random() - 1.0
        w = pop.w
        for j in range(w.shape[1]):
            w[i, j] = value


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


@njit(**HOT, inline="always")
def rule_vote(n_i, ms_i, exp_i, f_i, f_bar, f_low, theta_del):
    """vote = ms * num, times Fbar / (F/num) when exp > theta_del and F/num < delta * Fbar."""
    vote = ms_i * n_i
    # F/num < delta Fbar tested as F < delta Fbar num: no division for most rules.
    if exp_i > theta_del and f_i < f_low * n_i:
        vote *= f_bar * n_i / f_i
    return vote


@njit(**HOT, inline="always")
def block_sum(votes, blk):
    base = blk * VOTE_BLOCK
    # Four independent partial sums instead of one serial chain of additions.
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(base, base + VOTE_BLOCK, 4):
        s0 += votes[i]
        s1 += votes[i + 1]
        s2 += votes[i + 2]
        s3 += votes[i + 3]
    return (s0 + s1) + (s2 + s3)


@njit(**HOT, inline="always")
def roulette_pick(votes, blocks, n_blocks, P, vote_sum):
    """Index of the rule whose cumulative vote first exceeds a uniform draw of the total."""
    choice = np.random.random() * vote_sum
    picked = -1
    acc = 0.0
    for blk in range(n_blocks):
        if acc + blocks[blk] > choice:
            base = blk * VOTE_BLOCK
            for i in range(base, min(base + VOTE_BLOCK, P)):
                if votes[i] > 0.0:
                    acc += votes[i]
                    picked = i
                    if acc > choice:
                        break
            break
        acc += blocks[blk]
    if picked < 0:
        # Rounding left choice at the very top: take the last rule with a vote.
        for i in range(P - 1, -1, -1):
            if votes[i] > 0.0:
                picked = i
                break
    return picked


@njit(**HOT, inline="always")
def remove_micro(num, scal, fsum, F, picked, dead):
    num[picked] -= 1
    scal[S_TOTAL] -= 1
    scal[S_DELETIONS] += 1
    if num[picked] == 0:
        dead[scal[S_DEATHS]] = picked
        scal[S_DEATHS] += 1
        fsum[0] -= F[picked]


@njit(**HOT)
def all_votes(pop, hp, votes, blocks, f_bar):
    """Every rule's deletion vote and the block sums; returns (number of blocks, total)."""
    theta_del = hp[H_THETA_DEL]
    f_low = hp[H_DELTA] * f_bar
    num = pop.num
    F = pop.F
    ms = pop.ms
    exp = pop.exp
    P = pop.scal[S_P]
    for i in range(P):
        votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del)
    n_blocks = (P + VOTE_BLOCK - 1) // VOTE_BLOCK
    for i in range(P, n_blocks * VOTE_BLOCK):
        votes[i] = 0.0
    vote_sum = 0.0
    for blk in range(n_blocks):
        blocks[blk] = block_sum(votes, blk)
        vote_sum += blocks[blk]
    return n_blocks, vote_sum


@njit(**HOT)
def deletion(pop, hp, sc):
    """While sum(num) > N: roulette on the deletion vote over the whole population."""
    votes = sc.votes
    blocks = sc.blocks
    N = int(hp[H_N])
    scal = pop.scal
    fsum = pop.fsum
    num = pop.num
    F = pop.F
    while scal[S_TOTAL] > N:
        f_bar = fsum[0] / scal[S_TOTAL]
        n_blocks, vote_sum = all_votes(pop, hp, votes, blocks, f_bar)
        picked = roulette_pick(votes, blocks, n_blocks, scal[S_P], vote_sum)
        if picked < 0:
            return
        remove_micro(num, scal, fsum, F, picked, sc.dead)


@njit(**HOT, inline="always")
def touch(del_state, touched, i):
    """Record that rule i's numerosity changed (or that it is new) during the GA phase."""
    k = del_state[D_N_TOUCHED]
    if k == touched.shape[0]:
        del_state[D_VALID] = 0
        return
    touched[k] = i
    del_state[D_N_TOUCHED] = k + 1


@njit(**HOT, inline="always")
def near_low_fitness(exp_i, f_i, n_i, theta_del, watch):
    """A deletion candidate of `deletion_ga`: experienced, F/num below `watch` (tested as
    F < watch * num, without a division)."""
    return (exp_i > theta_del) & (f_i < watch * n_i)


@njit(**HOT, inline="always")
def deletion_ga(pop, hp, sc):
    """`deletion` with the votes kept up to date between the deletions of one GA phase.

    Within a GA phase F, ms and exp of existing rules do not change; only numerosities change
    (deletion, merging, subsumption) and children arrive. Fbar moves with the fitness sum, so
    the votes that depend on it, those of low-fitness rules, are recomputed, from a candidate
    list of rules within LOW_MARGIN of the threshold. Every vote and block sum equals what
    `deletion` computes, so the draws are identical; the first deletion of a phase (and any
    step where Fbar left the margin) recomputes everything.
    """
    N = int(hp[H_N])
    theta_del = hp[H_THETA_DEL]
    delta = hp[H_DELTA]
    scal = pop.scal
    num = pop.num
    F = pop.F
    ms = pop.ms
    exp = pop.exp
    fsum = pop.fsum
    votes = sc.votes
    blocks = sc.blocks
    state = sc.del_state
    cand = sc.cand
    dirty = sc.dirty
    del_ref = sc.del_ref
    touched = sc.touched
    while scal[S_TOTAL] > N:
        P = scal[S_P]
        f_bar = fsum[0] / scal[S_TOTAL]
        f_low = delta * f_bar
        n_blocks = (P + VOTE_BLOCK - 1) // VOTE_BLOCK
        if state[D_VALID] == 0 or f_bar > del_ref[0] * (1.0 + LOW_MARGIN):
            n_blocks, vote_sum = all_votes(pop, hp, votes, blocks, f_bar)
            watch = f_low * (1.0 + LOW_MARGIN)
            # Usually no rule is near the threshold: a branch-free (vectorized) count settles
            # that before the collecting scan.
            n_near = 0
            for i in range(P):
                n_near += near_low_fitness(exp[i], F[i], num[i], theta_del, watch)
            n_cand = 0
            if n_near > 0:
                for i in range(P):
                    if near_low_fitness(exp[i], F[i], num[i], theta_del, watch):
                        cand[n_cand] = i
                        n_cand += 1
            state[D_N_CAND] = n_cand
            state[D_ZEROED] = n_blocks * VOTE_BLOCK
            del_ref[0] = f_bar
            state[D_VALID] = 1
        else:
            if n_blocks * VOTE_BLOCK > state[D_ZEROED]:
                # Blocks new since the full pass: clear what the last full pass left there.
                votes[state[D_ZEROED]:n_blocks * VOTE_BLOCK] = 0.0
                for blk in range(state[D_ZEROED] // VOTE_BLOCK, n_blocks):
                    dirty[blk] = 1
                state[D_ZEROED] = n_blocks * VOTE_BLOCK
            watch = delta * del_ref[0] * (1.0 + LOW_MARGIN)
            n_cand = state[D_N_CAND]
            for k in range(state[D_N_TOUCHED]):
                i = touched[k]
                votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del)
                dirty[i // VOTE_BLOCK] = 1
                if near_low_fitness(exp[i], F[i], num[i], theta_del, watch):
                    cand[n_cand] = i
                    n_cand += 1
            state[D_N_CAND] = n_cand
            for k in range(n_cand):
                i = cand[k]
                vote = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del)
                if vote != votes[i]:
                    votes[i] = vote
                    dirty[i // VOTE_BLOCK] = 1
            vote_sum = 0.0
            for blk in range(n_blocks):
                if dirty[blk]:
                    blocks[blk] = block_sum(votes, blk)
                    dirty[blk] = 0
                vote_sum += blocks[blk]
        state[D_N_TOUCHED] = 0
        picked = roulette_pick(votes, blocks, n_blocks, P, vote_sum)
        if picked < 0:
            return
        remove_micro(num, scal, fsum, F, picked, sc.dead)
        sc.stale[pop.sub[picked]] = 1
        touch(state, touched, picked)


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


# ------------------------------------------------------------------------------------------
# XCSF's row index: which rules match which sample, kept as bit sets.
#
# Every input XCSF is trained or evaluated on inside the driver is a row of one matrix (the
# train rows, then the test rows), so matching can be looked up instead of tested: rx_rows[r]
# has bit i set when rule slot i matches row r, and rx_mask[i] is rule i's set of rows. A rule
# gets its row set when it is created, from sorted columns: on input d the rows it matches are
# a run of that column's sorted order (two binary searches), given by the difference of two
# prefix sets rx_pre[d, k] (the rows at sorted positions < k); the rule's set is the AND over
# the inputs. Rules never change bounds, so the sets change only when rules are created,
# die or move (compaction). Looking up a match set walks P / 64 words instead of testing up
# to n * P bounds. The result is the same set in the same (population) order.
# ------------------------------------------------------------------------------------------


@njit(**HOT, inline="always")
def _first_at_least(vals, value):
    """Number of entries of the sorted row `vals` that are < value."""
    lo = 0
    hi = vals.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if vals[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**HOT, inline="always")
def _first_above(vals, value):
    """Number of entries of the sorted row `vals` that are <= value."""
    lo = 0
    hi = vals.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if vals[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**HOT)
def rx_add(pop, rx, i):
    """Give new rule i its row set and enter it in the rows' rule sets (if the index is on)."""
    if rx.state[0] == 0:
        return
    mask = rx.mask[i]
    pre = rx.pre
    vals = rx.vals
    W = mask.shape[0]
    lo = pop.lo
    hi = pop.hi
    for w in range(W):
        mask[w] = ~np.uint64(0)
    for d in range(vals.shape[0]):
        start = _first_at_least(vals[d], lo[d, i])
        end = _first_above(vals[d], hi[d, i])
        inside = pre[d, end]
        below = pre[d, start]
        for w in range(W):
            mask[w] &= inside[w] & ~below[w]
    rows = rx.rows
    word = i >> 6
    bit = np.uint64(1) << np.uint64(i & 63)
    for w in range(W):
        m = mask[w]
        while m != 0:
            r = (w << 6) + int(trailing_zeros(m))
            rows[r, word] |= bit
            m &= m - np.uint64(1)


@njit(**HOT, inline="always")
def rx_remove(rx, i):
    """Take rule slot i out of every row's rule set."""
    mask = rx.mask[i]
    rows = rx.rows
    word = i >> 6
    keep = ~(np.uint64(1) << np.uint64(i & 63))
    for w in range(mask.shape[0]):
        m = mask[w]
        while m != 0:
            r = (w << 6) + int(trailing_zeros(m))
            rows[r, word] &= keep
            m &= m - np.uint64(1)
        mask[w] = 0


@njit(**HOT, inline="always")
def rx_move(rx, src, dst):
    """Rule slot src moved to dst (compaction): its rows now list dst instead."""
    mask_src = rx.mask[src]
    mask_dst = rx.mask[dst]
    rows = rx.rows
    w_src = src >> 6
    w_dst = dst >> 6
    clear = ~(np.uint64(1) << np.uint64(src & 63))
    put = np.uint64(1) << np.uint64(dst & 63)
    for w in range(mask_src.shape[0]):
        m = mask_src[w]
        mask_dst[w] = m
        mask_src[w] = 0
        while m != 0:
            r = (w << 6) + int(trailing_zeros(m))
            rows[r, w_src] &= clear
            rows[r, w_dst] |= put
            m &= m - np.uint64(1)


@njit(**HOT)
def rx_build(pop, rx):
    """The whole index for the current population (start of a training call)."""
    rows = rx.rows
    for r in range(rows.shape[0]):
        for w in range(rows.shape[1]):
            rows[r, w] = 0
    for i in range(pop.scal[S_P]):
        rx_add(pop, rx, i)


@njit(**HOT, inline="always")
def rx_members(rx, r, P, members):
    """Rule slots (< P) matching row r, in population order, into members; their count."""
    bits = rx.rows[r]
    count = 0
    for w in range((P + 63) >> 6):
        m = bits[w]
        while m != 0:
            members[count] = (w << 6) + int(trailing_zeros(m))
            count += 1
            m &= m - np.uint64(1)
    return count


@njit(**HOT)
def rx_end_iteration(pop, rx, sc, first_new):
    """Bring the index up to date for the end of an iteration, around `compact`: enter the
    rules created since slot first_new, drop the rules that died, compact, follow the moves."""
    P = pop.scal[S_P]
    for i in range(first_new, P):
        rx_add(pop, rx, i)
    dead = sc.dead
    n_dead = pop.scal[S_DEATHS]
    for k in range(n_dead):
        rx_remove(rx, dead[k])
    compact(pop, sc)
    moved = sc.cand
    for k in range(n_dead):
        if moved[k] >= 0:
            rx_move(rx, moved[k], dead[k])


@njit(cache=True)
def rx_tables(X, vals, pre):
    """The sorted columns of X and their prefix row sets (see the row index above)."""
    R, D = X.shape
    for d in range(D):
        order = np.argsort(X[:, d], kind="mergesort")
        for w in range(pre.shape[2]):
            pre[d, 0, w] = 0
        for k in range(R):
            r = order[k]
            vals[d, k] = X[r, d]
            for w in range(pre.shape[2]):
                pre[d, k + 1, w] = pre[d, k, w]
            pre[d, k + 1, r >> 6] |= np.uint64(1) << np.uint64(r & 63)


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
    if not (pop.exp[parent] > hp[H_THETA_SUB] and pop.eps[parent] < hp[H_E0]):
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


# Odd 64-bit multiplier of the antecedent hash (Fibonacci hashing).
KEY_MUL = np.uint64(0x9E3779B97F4A7C15)


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
    a = pop.a
    b = pop.b
    sub = pop.sub
    for i in range(pop.scal[S_P]):
        key[i] = antecedent_key(sub[i], a, b, i)
    sc.key_state[0] = 1


@njit(**HOT, inline="always")
def set_key(pop, sc, i):
    """Record rule i's key after its bounds were set (covering), if the index is in use."""
    if sc.key_state[0] != 0:
        sc.key[i] = antecedent_key(pop.sub[i], pop.a, pop.b, i)


@njit(**HOT, inline="always")
def find_identical(pop, sc, c, child_key):
    """The first live rule, in population order, of the child's submodel whose stored pairs
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
    sub = int(sc.cf[c, C_SUB])
    ca = sc.ca
    cb = sc.cb
    pa = pop.a
    pb = pop.b
    num = pop.num
    psub = pop.sub
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
def same_antecedent(pop, i, sc, c):
    """Live rule i has the child's submodel and, element by element, its stored pairs."""
    if pop.num[i] <= 0 or pop.sub[i] != int(sc.cf[c, C_SUB]):
        return False
    for d in range(sc.ca.shape[1]):
        if pop.a[i, d] != sc.ca[c, d] or pop.b[i, d] != sc.cb[c, d]:
            return False
    return True


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
    tau = hp[H_TAU]
    p1 = tournament(pop, members, start, stop, tau)
    p2 = tournament(pop, members, start, stop, tau)
    make_child(pop, p1, sc, 0)
    make_child(pop, p2, sc, 1)
    article = hp[H_ARTICLE] != 0.0
    if np.random.random() < hp[H_CHI]:
        if crossover(sc, article):
            mean_eps = (pop.eps[p1] + pop.eps[p2]) / 2.0
            mean_f = (pop.F[p1] + pop.F[p2]) / 2.0
            sc.cf[0, C_EPS] = mean_eps
            sc.cf[1, C_EPS] = mean_eps
            sc.cf[0, C_F] = mean_f
            sc.cf[1, C_F] = mean_f
    sc.cf[0, C_F] *= 0.1
    sc.cf[1, C_F] *= 0.1
    do_sub = hp[H_DO_SUB] != 0.0
    for c in range(2):
        mutate(sc, c, hp[H_MU], hp[H_M0], clip, article)
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
