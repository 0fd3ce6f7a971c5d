"""XCSF: one training iteration and prediction (docs/algorithm.md sections 2, 3 and 5), compiled with numba."""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.compaction import compact_xcsf
from kacs_cli.engine.covering import (
    append_rule, covering_weights, delete_after_cover, draw_interval, full_interval,
)
from kacs_cli.engine.deletion import (
    forget_votes, keep_votes_after_compaction, keep_votes_after_update,
)
from kacs_cli.engine.ga import ga_due, run_ga
from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.identical import set_key
from kacs_cli.engine.order import next_row
from kacs_cli.engine.population import (
    S_COVERS, S_DEATHS, S_P, S_T, compact, set_bounds, stack,
)
from kacs_cli.engine.learner import Learner
from kacs_cli.engine.params import CAPACITY_FIXED
from kacs_cli.engine.row_index import (
    RowIndex, new_row_index, rx_build, rx_end_iteration, rx_members, rx_tables,
)
from kacs_cli.engine.update import adam_step, set_numerosity, update_fitness


# The name results folders record for this engine (experiments/campaign/provenance.py): the
# population's fitness sum kept running through the update (update.update_fitness) and each
# rule's prediction in four partial sums (_prediction_at).
ENGINE_NAME = "running-sum"

# Dimensions tested over the whole population before the survivors are listed (see _match_set).
DENSE_DIMS = 2


@njit(**HOT, inline="always")
def _match_set(lo, hi, P, x, flags, members):
    """Indices of the rules whose hyperrectangle contains x, in population order.

    The first DENSE_DIMS dimensions are tested over all rules, one dimension at a time:
    contiguous, branch-free and vectorized. Then the surviving rules are listed, and each
    further dimension filters that list in place (stable, branch-free). At n = 20 a rule
    matches one input in about two cases of three, so the list shrinks geometrically and the
    later dimensions cost a small fraction of the population instead of all of it: about
    3 P bound tests instead of 20 P. The result (which rules, in which order) is the same.
    A missing input (NaN) lies in every interval of its dimension (docs/algorithm.md
    section 12): that dimension tests nothing.
    """
    n = x.shape[0]
    dense = min(n, DENSE_DIMS)
    x0 = x[0]
    lo_0 = lo[0]
    hi_0 = hi[0]
    missing0 = x0 != x0
    for i in range(P):
        flags[i] = ((lo_0[i] <= x0) & (x0 <= hi_0[i])) | missing0
    for d in range(1, dense):
        xd = x[d]
        if xd != xd:
            continue
        lo_d = lo[d]
        hi_d = hi[d]
        for i in range(P):
            flags[i] &= (lo_d[i] <= xd) & (xd <= hi_d[i])
    count = 0
    for i in range(P):
        members[count] = i
        count += flags[i]
    for d in range(dense, n):
        if count == 0:
            break
        xd = x[d]
        if xd != xd:
            continue
        lo_d = lo[d]
        hi_d = hi[d]
        kept = 0
        for k in range(count):
            i = index_at(members, k)
            members[kept] = i
            kept += (lo_d[i] <= xd) & (xd <= hi_d[i])
        count = kept
    return count


@njit(**HOT, inline="always")
def _offsets(a, b, i, x, dx, raw):
    """dx[d] = x_d - l_d for rule i, with l_d = min(a, b) read from the rule's own row; or,
    `raw` (the article's eq. 1), dx = x. A missing x_d (NaN) is read at the centre of the
    rule's interval [l_d, u_d] (docs/algorithm.md section 12): dx[d] = (u_d - l_d) / 2, or
    under `raw` (l_d + u_d) / 2.

    The same value as x_d - lo[d, i] (lo is stored as min(a, b)), but from two contiguous
    rows instead of n cache lines of the dimension-major bounds; computed once per rule for
    the prediction, the gradient and the error."""
    if raw:
        for d in range(x.shape[0]):
            xd = x[d]
            dx[d] = 0.5 * (a[i, d] + b[i, d]) if xd != xd else xd
        return
    for d in range(x.shape[0]):
        xd = x[d]
        low = min(a[i, d], b[i, d])
        dx[d] = 0.5 * (max(a[i, d], b[i, d]) - low) if xd != xd else xd - low


@njit(**HOT, inline="always")
def _prediction_at(w, i, dx):
    """P(x) = w . (1, x_1 - l_1, ..., x_n - l_n), in four partial sums over the inputs
    (d mod 4) added pairwise at the end: four independent chains of additions instead of one
    serial chain, which at n = 20 is most of a matched rule's prediction time."""
    n = dx.shape[0]
    s0 = w[i, 0]
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    whole = n - n % 4
    for d in range(0, whole, 4):
        s0 += w[i, d + 1] * dx[d]
        s1 += w[i, d + 2] * dx[d + 1]
        s2 += w[i, d + 3] * dx[d + 2]
        s3 += w[i, d + 4] * dx[d + 3]
    for d in range(whole, n):
        s0 += w[i, d + 1] * dx[d]
    return (s0 + s1) + (s2 + s3)


@njit(**HOT)
def train_step(pop, members, flags, x, y, hp, sc, rx, row):
    """One XCSF training iteration on sample (x, y). Returns the match-set size.

    `row` is x's row in the row index `rx` (row_index.rx_build) when that index is in use, else
    -1: the match set is then looked up rather than tested (the same rules, in the same
    order).
    """
    P = pop.scal[S_P]
    n = x.shape[0]
    # The arrays, fetched from their tuples once for the whole iteration.
    lo = pop.bounds.lo
    hi = pop.bounds.hi
    w = pop.weights.w
    eps = pop.reals.eps
    kappa = pop.reals.kappa
    F = pop.reals.F
    ms = pop.reals.ms
    exp = pop.counts.exp
    num = pop.counts.num
    ts = pop.counts.ts
    indexed = rx.state[0] != 0
    if row >= 0 and indexed:
        count = rx_members(rx, row, P, members)
    else:
        count = _match_set(lo, hi, P, x, flags, members)
    if count == 0:
        t = pop.scal[S_T]
        i = append_rule(pop, 0, t, hp, None)
        covering_weights(pop, i, hp)
        for d in range(n):
            # A missing input gets the full range, as "don't care" (docs/algorithm.md section 12).
            if x[d] != x[d] or np.random.random() < hp.P_hash:
                a, b = full_interval(hp.article_intervals)
            else:
                a, b = draw_interval(x[d], hp.r0, True, hp.article_intervals)
            set_bounds(pop, i, d, a, b)
        set_key(pop, sc, i)
        pop.scal[S_COVERS] += 1
        delete_after_cover(pop, hp, sc)
        # Covering is rare once the population is full: rather than follow its new rule and
        # its deletions, the next GA phase recomputes every vote.
        forget_votes(sc)
        members[0] = i
        count = 1

    beta = hp.beta
    grad = sc.grad
    dx = sc.dx
    a = pop.pairs.a
    b = pop.pairs.b
    set_num = set_numerosity(num, members, 0, count)
    raw = hp.article_xcsf_inputs
    for k in range(count):
        i = index_at(members, k)
        exp[i] += 1
        _offsets(a, b, i, x, dx, raw)
        err = y - _prediction_at(w, i, dx)
        grad[0] = -err
        for d in range(n):
            grad[d + 1] = -err * dx[d]
        adam_step(w, pop.weights.m, pop.weights.v, pop.reals.b1t, pop.reals.b2t, i, grad, hp)
        # The error estimate uses the prediction of the freshly updated weights
        # (docs/algorithm.md section 5), or the article's one prediction for both.
        if hp.article_xcsf_error:
            eps[i] += beta * (abs(err) - eps[i])
        else:
            eps[i] += beta * (abs(y - _prediction_at(w, i, dx)) - eps[i])
        ms[i] += beta * (set_num - ms[i])
    pop.fsum[0] += update_fitness(eps, kappa, F, num, members, 0, count, hp)
    # Deletion's votes are kept from one GA phase to the next: those of the updated rules
    # change here, those of the GA's and compaction's rules where they act.
    keep_votes_after_update(pop, hp, sc, members, count)
    if ga_due(num, ts, members, 0, count, pop.scal[S_T], hp.theta_GA):
        run_ga(pop, members, 0, count, True, hp, sc, None)
    # The match set is spent: `members` takes compaction's moves.
    n_dead = pop.scal[S_DEATHS]
    if indexed:
        # Rules created from slot P on (covering, offspring) join the index, the dead leave.
        rx_end_iteration(pop, rx, sc, P, members)
    else:
        compact(pop, sc, members)
    keep_votes_after_compaction(pop, hp, sc, members, n_dead)
    pop.scal[S_T] += 1
    return count


@njit(cache=True)
def predict(pop, X, raw=False, members=1):
    """Fitness-weighted mean of P(x) over the match set; 0 where nothing matches. `raw`: the
    rules predict with w . (1, x) (`article_xcsf_inputs`). A population of `members` averaged
    populations (bagging.py: each rule's `sub` is its member) predicts the mean of the members'
    predictions."""
    return _predict(pop, X, None, raw, members)


@njit(cache=True)
def predict_rows(pop, X, rx, raw, members=1):
    """`predict` on the rows of the row index (X is the matrix it was built from), with the
    match sets looked up."""
    return _predict(pop, X, rx, raw, members)


@njit(cache=True)
def _predict(pop, X, rx, raw, members):
    P = pop.scal[S_P]
    lo = pop.bounds.lo
    hi = pop.bounds.hi
    w = pop.weights.w
    F = pop.reals.F
    sub = pop.counts.sub
    rows = X.shape[0]
    y_hat = np.zeros(rows)
    a = pop.pairs.a
    b = pop.pairs.b
    flags = np.empty(P, np.uint8)
    match = np.empty(P, np.int64)
    dx = np.empty(X.shape[1])
    sum_f = np.zeros(members)
    sum_fp = np.zeros(members)
    for r in range(rows):
        x = X[r]
        if rx is None:
            count = _match_set(lo, hi, P, x, flags, match)
        else:
            count = rx_members(rx, r, P, match)
        for k in range(members):
            sum_f[k] = 0.0
            sum_fp[k] = 0.0
        for j in range(count):
            i = index_at(match, j)
            f = F[i]
            s = sub[i]
            sum_f[s] += f
            _offsets(a, b, i, x, dx, raw)
            sum_fp[s] += f * _prediction_at(w, i, dx)
        # One member (sub = 0 for every rule): the member's own mean, divided by nothing.
        total = 0.0
        for k in range(members):
            if sum_f[k] > 0.0:
                total += sum_fp[k] / sum_f[k]
        y_hat[r] = total if members == 1 else total / members
    return y_hat


def merge_models(models, make):
    """The ensemble of the trained single XCSF models `models` as one model (bagging.py): their
    rules side by side, each tagged with its member in `sub`, predicting the mean of theirs.
    `make(params)` gives the empty model to fill."""
    first = models[0]
    merged = make(first.params.with_overrides(N=sum(m.budget_N for m in models), bags=len(models),
                                              **CAPACITY_FIXED))
    for k, rows in enumerate(stack([m.pop for m in models], merged.pop)):
        merged.pop.counts.sub[rows] = k
    return merged


# --------------------------------------------------------------------------- the learner entry

# XCSF looks its match sets up in a row index (row_index.rx_build) from this many inputs on, where
# testing n bounds per rule dominates its iteration; with few inputs rules are general, match
# many rows, and keeping the index would cost more than the tests it saves.
ROW_INDEX_MIN_INPUTS = 16
# ... and while the index's tables stay this small (bytes): the prefix row sets grow with
# inputs x rows^2 / 64.
ROW_INDEX_MAX_BYTES = 64 * 2**20


@njit(cache=True)
def train_steps(pop, members, flags, X, y, order, start, stop, reshuffle, hp, sc, rx):
    """Iterations start..stop-1 of one training call (see learner.Learner.steps)."""
    # The population may have been edited since the last call (loaded, compacted, hand-built).
    forget_votes(sc)
    for it in range(start, stop):
        r = next_row(order, it, reshuffle)
        train_step(pop, members, flags, X[r], y[r], hp, sc, rx, r)


def _new_buffers(model):
    return {"members": np.zeros(model.capacity, np.int64),
            "match_flags": np.zeros(model.capacity, np.uint8),
            "row_index": new_row_index(model.n)}


def _prepare(model, X_eval):
    """Turn the row index (row_index.rx_build) on for the rows of X_eval, or off."""
    rows = X_eval.shape[0]
    row_words = (rows + 63) // 64
    size = 8 * (model.n * (rows + 1) * row_words + rows * ((model.capacity + 63) // 64)
                + model.capacity * row_words)
    if model.n < ROW_INDEX_MIN_INPUTS or size > ROW_INDEX_MAX_BYTES:
        model.row_index.state[0] = 0
        return
    vals = np.empty((model.n, rows))
    valid = np.empty(model.n, np.int64)
    pre = np.empty((model.n, rows + 1, row_words), np.uint64)
    rx_tables(X_eval, vals, valid, pre)
    model.row_index = RowIndex(
        state=np.ones(1, np.int64), vals=vals, valid=valid, pre=pre,
        rows=np.zeros((rows, (model.capacity + 63) // 64), np.uint64),
        mask=np.zeros((model.capacity, row_words), np.uint64))
    # The population may have been edited since the last call (loaded, hand-built).
    rx_build(model.pop, model.row_index)


def _steps(model, X, y, order, start, stop, reshuffle):
    train_steps(model.pop, model.members, model.match_flags, X, y, order, start, stop, reshuffle,
                model.hp, model.scratch, model.row_index)


def _evaluate(model, X_eval):
    raw = model.hp.article_xcsf_inputs
    if model.row_index.state[0] != 0:
        return predict_rows(model.pop, X_eval, model.row_index, raw, model.params.bags)
    return predict(model.pop, X_eval, raw, model.params.bags)


def _population_frame(model):
    P = int(model.pop.scal[S_P])
    pop, n = model.pop, model.n
    cols = {}
    for d in range(n):
        cols[f"lower_{d + 1}"] = pop.bounds.lo[d, :P].copy()
        cols[f"upper_{d + 1}"] = pop.bounds.hi[d, :P].copy()
    for d in range(n):
        cols[f"a_{d + 1}"] = pop.pairs.a[:P, d].copy()
        cols[f"b_{d + 1}"] = pop.pairs.b[:P, d].copy()
    for j in range(n + 1):
        cols[f"w{j}"] = pop.weights.w[:P, j].copy()
    if model.params.bags > 1:
        cols["member"] = pop.counts.sub[:P].copy()
    return cols


LEARNER = Learner(
    name="xcsf", label="XCSF",
    # Every rule is a hyperrectangle over the n inputs with a linear prediction in them.
    width=lambda n: n, consequent=lambda n: n + 1,
    # One rule set; an averaged ensemble (bags) keeps each member's rules as one.
    submodels=lambda n, params: params.bags,
    cover_slots=lambda n, params: (1, None, None),
    new_buffers=_new_buffers,
    prepare=_prepare,
    steps=_steps,
    predict=lambda model, X: predict(model.pop, X, model.hp.article_xcsf_inputs, model.params.bags),
    evaluate=_evaluate,
    population_frame=_population_frame,
    compact=compact_xcsf, compactions=("closest",),
    merge=merge_models,
    own_switches=("article_xcsf_inputs", "article_xcsf_error"),
    # Match sets grow with the budget N and each rule carries n+1 weights.
    cost=lambda n, N: N * (n + 1) * 1.5e-9,
)
