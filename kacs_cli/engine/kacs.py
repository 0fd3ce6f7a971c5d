"""KACS: one training iteration (docs/algorithm.md section 4) and the learner's registry entry, compiled
with numba. Submodel ids and work buffers are in kacs_submodels.py, the population's segments
in layout.py, the rule update in kacs_update.py, prediction in kacs_predict.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.budget import BS_ON, after_iteration
from kacs_cli.engine.covering import (
    append_rule, covering_weights, delete_after_cover, draw_interval, full_interval,
)
from kacs_cli.engine.cycles import lap, now
from kacs_cli.engine.ga import begin_ga_phase, ga_due, ga_due_sums, run_ga
from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.identical import set_key
from kacs_cli.engine.kacs_predict import predict, predict_components
from kacs_cli.engine.kacs_update import (
    bias_for_call, overflow_fitness, sync_adam_powers, update_sets,
)
from kacs_cli.engine.kacs_submodels import (
    channel_count, n_submodels, new_work, rule_input, set_range,
)
from kacs_cli.engine.layout import close_layout, new_layout, open_layout, settle
from kacs_cli.engine.order import next_row
from kacs_cli.engine.population import (
    S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_P, S_T, set_bounds, stack,
)
from kacs_cli.engine.learner import Learner
from kacs_cli.engine.params import CAPACITY_FIXED
from kacs_cli.engine.compaction import compact_kacs
from kacs_cli.engine.refine import refine_weights


@njit(**HOT)
def _cover(pop, wk, s, z, inner, hp, sc, layout):
    t = pop.scal[S_T]
    i = append_rule(pop, s, t, hp, layout)
    covering_weights(pop, i, hp)
    # A missing input (NaN) gets the full range, as "don't care" (docs/algorithm.md section 12).
    if inner and (z != z or np.random.random() < hp.P_hash):
        a, b = full_interval(hp.article_intervals)
    else:
        a, b = draw_interval(z, hp.r0, inner, hp.article_intervals)
    set_bounds(pop, i, 0, a, b)
    set_key(pop, sc, i)
    pop.scal[S_COVERS] += 1
    if inner:
        pop.scal[S_COVERS_IN] += 1
    else:
        pop.scal[S_COVERS_OUT] += 1
    delete_after_cover(pop, hp, sc)
    wk.members[wk.start[s]] = i
    wk.count[s] = 1


@njit(**HOT, inline="always")
def _weighted_mean(F, w, num, ts, members, st, stop, z, lo0, hi0):
    """Fitness-weighted mean of P(z) = w0 + w1 z over the set, its F sum, the mean slope, and
    the set's sums of num and num * ts (for the GA trigger). Each rule reads z at
    `rule_input` (its interval's centre where z is missing)."""
    sum_f = 0.0
    sum_fp = 0.0
    sum_fw1 = 0.0
    sum_num = 0
    sum_ts = 0
    for k in range(st, stop):
        i = index_at(members, k)
        f = F[i]
        sum_f += f
        j = i + i
        w1 = w[j + np.uint64(1)]
        sum_fp += f * (w[j] + w1 * rule_input(z, lo0[i], hi0[i]))
        sum_fw1 += f * w1
        sum_num += num[i]
        sum_ts += num[i] * ts[i]
    if sum_f <= 0.0:
        return 0.0, sum_f, 0.0, sum_num, sum_ts
    return sum_fp / sum_f, sum_f, sum_fw1 / sum_f, sum_num, sum_ts


@njit(**HOT, inline="always")
def _record_set(estimates, at, estimate, set_sum_f, set_num, set_ts, s, sum_f, sum_num, sum_ts):
    """What prediction keeps of match set s: its estimate (psihat or Phihat) at estimates[at],
    and its sums of F, num and num * ts for the update and the GA trigger."""
    estimates[at] = estimate
    set_sum_f[s] = sum_f
    set_num[s] = sum_num
    set_ts[s] = sum_ts


@njit(**HOT, inline="always")
def _match_and_mean(F, w, num, ts, lo0, hi0, members, in_set, pos, first, stop, z):
    """The match set of one submodel: the live rules of its segment
    (slots first..stop-1, layout.py) whose interval contains z (every one where z is
    missing) into members[pos:], each slot's membership into in_set, with
    `_weighted_mean`'s sums over them, in one pass.

    Branch-free: every rule of the segment is read, and a rule outside the set adds exact
    zeros to the sums (F finite, times 0), so each sum equals `_weighted_mean`'s over the
    members, in the same order. Returns (members, sum_f, sum_fp, sum_fw1, sum_num, sum_ts).
    """
    count = 0
    sum_f = 0.0
    sum_fp = 0.0
    sum_fw1 = 0.0
    sum_num = 0
    sum_ts = 0
    missing = z != z
    for i in range(first, stop):
        n_i = num[i]
        hit = (((lo0[i] <= z) & (z <= hi0[i])) | missing) & (n_i > 0)
        members[pos + count] = i
        in_set[i] = hit
        count += hit
        f = F[i] * hit
        j = i + i
        w1 = w[j + np.uint64(1)]
        sum_f += f
        sum_fp += f * (w[j] + w1 * rule_input(z, lo0[i], hi0[i]))
        sum_fw1 += f * w1
        k = n_i * hit
        sum_num += k
        sum_ts += k * ts[i]
    return count, sum_f, sum_fp, sum_fw1, sum_num, sum_ts


@njit(**HOT, inline="always")
def _segment_set(pop, wk, F, w, num, ts, lo0, hi0, layout, s, pos, z, inner, hp, sc):
    """Match set s found from its submodel's segment, covered if empty, and its
    weighted mean as `_weighted_mean` gives it; the set's members start at members[pos]."""
    members = wk.members
    wk.start[s] = pos
    count, sum_f, sum_fp, sum_fw1, sum_num, sum_ts = _match_and_mean(
        F, w, num, ts, lo0, hi0, members, wk.in_set, pos, index_at(layout.base, s),
        index_at(layout.end, s), z)
    wk.count[s] = count
    if count == 0:
        _cover(pop, wk, s, z, inner, hp, sc, layout)
        wk.in_set[members[pos]] = 1
        st, stop = set_range(wk.start, wk.count, s)
        return _weighted_mean(F, w, num, ts, members, st, stop, z, lo0, hi0)
    if sum_f <= 0.0:
        return 0.0, sum_f, 0.0, sum_num, sum_ts
    return sum_fp / sum_f, sum_f, sum_fw1 / sum_f, sum_num, sum_ts


# The phases of `train_step` that `clock` splits its cycles into (kacs bench --profile):
# key and label. The rest of a run (the driver's loop, opening and closing the layout,
# evaluation) is measured as the whole run minus these.
PHASES = (
    ("inner_sets", "inner match sets"),  # matching in the segments, psihat, covering
    ("outer_sets", "outer match sets"),  # the same for Phihat
    ("rule_update", "rule update"),      # backpropagation: every set's update, sum(F)
    ("ga", "GA"),                        # triggers, GA events and their deletions
    ("layout", "layout"),                # holes refilled, overflow rules into their segments
)
PH_INNER_SETS, PH_OUTER_SETS, PH_RULE_UPDATE, PH_GA, PH_LAYOUT = range(len(PHASES))


@njit(**HOT)
def train_step(pop, wk, x, y, n, hp, sc, clock, layout):
    """One KACS training iteration on sample (x, y): predict, backpropagate, GA.

    `clock`: None, or an int64 array that gathers each phase's cycles (PHASES; cycles.py);
    each is a specialization of its own, and None's has no counter code.
    `layout`: the population's segments by submodel (layout.py), open; a match set is found
    from its submodel's segment together with its weighted mean (the phases inner_sets and
    outer_sets)."""
    n_q = channel_count(n, hp.channels)
    s_in = n * n_q
    s_all = s_in + n_q
    # The arrays, fetched from their tuples once for the whole iteration.
    # The weights and moments (rules x 2, C order) as flat views: rule i's pair is at 2i and
    # 2i + 1, an address without a multiply by the row length read from memory.
    w = pop.weights.w.reshape(pop.weights.w.size)
    m = pop.weights.m.reshape(pop.weights.m.size)
    v = pop.weights.v.reshape(pop.weights.v.size)
    F = pop.reals.F
    num = pop.counts.num
    ts = pop.counts.ts
    scal = pop.scal
    members = wk.members
    start = wk.start
    count = wk.count
    psihat = wk.psihat
    zhat = wk.zhat
    phihat = wk.phihat
    slope = wk.slope
    set_sum_f = wk.sum_f
    set_num = wk.set_num
    set_ts = wk.set_ts
    lo0 = pop.bounds.lo[0]
    hi0 = pop.bounds.hi[0]
    deletions_before = scal[S_DELETIONS]

    # Stage 1 and 2 from the segments, one set at a time in the order of section 4.
    tick = now(clock)
    pos = 0
    for q in range(n_q):
        zq = 0.0
        for p in range(n):
            s = q * n + p
            psi, sum_f, _, sum_num, sum_ts = _segment_set(
                pop, wk, F, w, num, ts, lo0, hi0, layout, s, pos, x[p], True, hp, sc)
            # Covering has already put its rule in place: no spare slot to leave.
            pos += count[s]
            _record_set(psihat, s, psi, set_sum_f, set_num, set_ts, s, sum_f, sum_num, sum_ts)
            zq += psi
        zhat[q] = zq
    tick = lap(clock, PH_INNER_SETS, tick)
    y_hat = 0.0
    for q in range(n_q):
        s = s_in + q
        phi, sum_f, outer_slope, sum_num, sum_ts = _segment_set(
            pop, wk, F, w, num, ts, lo0, hi0, layout, s, pos, zhat[q], False, hp, sc)
        pos += count[s]
        _record_set(phihat, q, phi, set_sum_f, set_num, set_ts, s, sum_f, sum_num, sum_ts)
        # The outer slope is taken at prediction time: gradients use the weights as predicted.
        slope[q] = outer_slope
        y_hat += phi
    tick = lap(clock, PH_OUTER_SETS, tick)

    # Backpropagation of L = (y - y_hat)^2 / 2 and the parameter updates (kacs_update.py):
    # Adam's bias corrections from a table, kappa num by slot, the fitness sum from the
    # segments' sums.
    err = y - y_hat
    abs_err = abs(err)
    extent = index_at(layout.base, layout.end.shape[0])
    # Numerosities change before the update only through covering's deletions.
    recount = scal[S_DELETIONS] != deletions_before
    # The authors' code updates the outer sets first and reads each outer slope s_q after
    # that update (slope_after_outer_update); by default the inner sets come first and use
    # s_q as predicted. The sets are disjoint: only s_q depends on the order.
    if hp.slope_after_outer_update:
        fsum = update_sets(pop, wk, w, m, v, lo0, hi0, x, n, err, abs_err, s_in, s_all, s_in,
                           recount, hp, layout, 0.0)
        for q in range(n_q):
            st, stop = set_range(start, count, s_in + q)
            _, _, after, _, _ = _weighted_mean(F, w, num, ts, members, st, stop, zhat[q], lo0,
                                               hi0)
            slope[q] = after
        fsum = update_sets(pop, wk, w, m, v, lo0, hi0, x, n, err, abs_err, 0, s_in, s_in,
                           recount, hp, layout, fsum)
    else:
        fsum = update_sets(pop, wk, w, m, v, lo0, hi0, x, n, err, abs_err, 0, s_all, s_in,
                           recount, hp, layout, 0.0)
    pop.fsum[0] = fsum + overflow_fitness(F, num, extent, index_at(scal, S_P))
    tick = lap(clock, PH_RULE_UPDATE, tick)

    # GA: the outer match sets first (q ascending), then the inner ones ((q, p) ascending).
    t = scal[S_T]
    theta_ga = hp.theta_GA
    begin_ga_phase(sc)
    # The trigger sums from prediction time hold for a set until a deletion touches one of its
    # submodel's rules (`stale`); a GA changes the time stamps of its own set only.
    sums_valid = scal[S_DELETIONS] == deletions_before
    stale = sc.stale
    for k in range(s_all):
        s = s_in + k if k < n_q else k - n_q
        st, stop = set_range(start, count, s)
        if sums_valid and stale[s] == 0:
            due = ga_due_sums(set_num[s], set_ts[s], t, theta_ga)
        else:
            due = ga_due(num, ts, members, st, stop, t, theta_ga)
        if due:
            run_ga(pop, members, st, stop, s < s_in, hp, sc, layout)
    tick = lap(clock, PH_GA, tick)

    settle(pop, layout, sc, wk.order, wk.sort_f, wk.sort_i)
    scal[S_T] += 1
    lap(clock, PH_LAYOUT, tick)
    return y_hat


# --------------------------------------------------------------------------- the learner entry

@njit(cache=True)
def train_steps(pop, wk, X, y, order, start, stop, reshuffle, n, hp, sc, bs, clock, layout):
    """Iterations start..stop-1 of one training call (see learner.Learner.steps); `clock`
    and `layout` as in `train_step`. The population is spread into its segments for the
    call and packed dense again after it (layout.py)."""
    open_layout(pop, layout, sc, wk.order, wk.sort_f, wk.sort_i)
    for it in range(start, stop):
        r = next_row(order, it, reshuffle)
        train_step(pop, wk, X[r], y[r], n, hp, sc, clock, layout)
        # Adaptive budget (budget.py): may raise the budget at the end of a window.
        if bs[BS_ON] != 0:
            after_iteration(pop.scal, pop.budget, hp, bs, n)
    close_layout(pop, layout, sc, wk.order, wk.sort_f, wk.sort_i)
    sync_adam_powers(pop.reals.b1t, pop.reals.b2t, pop.counts.exp, pop.scal[S_P], hp.beta1,
                     hp.beta2)


def _steps(model, X, y, order, start, stop, reshuffle, clock=None):
    # The update reads Adam's corrections from the table only (kacs_update.bias_for_call).
    layout = model.layout
    P = int(model.pop.scal[S_P])
    bias, exact = bias_for_call(layout.bias, layout.bias_exact, model.hp.beta1, model.hp.beta2,
                                model.pop.counts.exp[:P].max(initial=0), stop - start)
    if bias is not layout.bias:
        model.layout = layout._replace(bias=bias, bias_exact=exact)
    train_steps(model.pop, model.work, X, y, order, start, stop, reshuffle, model.n, model.hp,
                model.scratch, model.budget_state, clock, model.layout)


def _new_buffers(model):
    """The work buffers and the population's layout by submodel (layout.py)."""
    return {"work": new_work(model.capacity, model.n, model.n_channels),
            "layout": new_layout(model.n_submodels, model.capacity, model.hp.beta1,
                                 model.hp.beta2)}


def _cover_slots(n, params):
    q = channel_count(n, params.channels)
    return (n + 1) * q, n * q, q


def _population_frame(model):
    P = int(model.pop.scal[S_P])
    pop, n = model.pop, model.n
    s_in = n * model.n_channels
    sub = pop.counts.sub[:P]
    inner = sub < s_in
    return {
        "type": np.where(inner, "inner", "outer"),
        "q": np.where(inner, sub // n, sub - s_in) + 1,
        "p": np.where(inner, sub % n + 1, 0),
        "lower": pop.bounds.lo[0, :P].copy(),
        "upper": pop.bounds.hi[0, :P].copy(),
        "a": pop.pairs.a[:P, 0].copy(),
        "b": pop.pairs.b[:P, 0].copy(),
        "w0": pop.weights.w[:P, 0].copy(),
        "w1": pop.weights.w[:P, 1].copy(),
    }


def merge_models(models, make):
    """The mean of the trained KACS models `models` (K of them, m channels each, the same n) as
    one KACS model of K m channels (bagging.py): member k's channel q becomes channel k m + q,
    its inner and outer rules keep everything but their submodel, and its outer rules'
    weights are divided by K, so the sum of all outer functions is the mean of the members'
    predictions. Adam's moments of those weights are scaled alike (the first by 1/K, the
    second by 1/K^2), so that further learning continues from the same relative step. Member
    k's learned values at missing inputs go with its inner functions.
    `make(params)` gives the empty model to fill."""
    first, K = models[0], len(models)
    n, m = first.n, first.n_channels
    if any(model.n != n or model.n_channels != m for model in models):
        raise ValueError("the models to merge must have the same inputs and channels")
    merged = make(first.params.with_overrides(N=sum(model.budget_N for model in models), channels=K * m,
                                              bags=1, **CAPACITY_FIXED))
    s_in, s_in_merged = n * m, n * K * m
    pop = merged.pop
    for k, rows in enumerate(stack([model.pop for model in models], pop)):
        sub = pop.counts.sub[rows]
        outer = sub >= s_in
        sub[:] = np.where(outer, s_in_merged + k * m + (sub - s_in), sub + k * m * n)
        outer_rows = rows.start + np.flatnonzero(outer)
        pop.weights.w[outer_rows] /= K
        pop.weights.m[outer_rows] /= K
        pop.weights.v[outer_rows] /= K * K
        merged.inner_missing[k * m * n:(k + 1) * m * n] = models[k].inner_missing[:s_in]
    return merged


def _components(model, X):
    rows, n = X.shape[0], model.n
    n_q = model.n_channels
    psihat = np.empty((rows, n * n_q))
    zhat = np.empty((rows, n_q))
    phihat = np.empty((rows, n_q))
    y_hat = predict_components(model.pop, X, n, psihat, zhat, phihat, model.inner_missing)
    return psihat.reshape(rows, n_q, n), zhat, phihat, y_hat


LEARNER = Learner(
    name="kacs", label="KACS",
    # Every rule is one interval on one input (inner psi_{q,p}) or on one channel sum z_q
    # (outer Phi_q), with a linear prediction w0 + w1 z in that input z itself.
    width=lambda n: 1, consequent=lambda n: 2,
    submodels=lambda n, params: n_submodels(n, channel_count(n, params.channels))[1],
    cover_slots=_cover_slots,
    new_buffers=_new_buffers,
    steps=_steps,
    predict=lambda model, X: predict(model.pop, X, model.n, model.n_channels, model.inner_missing),
    population_frame=_population_frame,
    components=_components,
    refine=lambda model, X, y, **settings: refine_weights(model.pop, model.n, model.n_channels,
                                                          X, y, inner_missing=model.inner_missing, **settings),
    compact=compact_kacs, compactions=("piecewise", "single-winner"),
    merge=merge_models,
    adaptive_budget=True,
    channels=True,
    own_switches=("slope_after_outer_update",),
    phases=PHASES,
    # Every iteration works on each of the (n+1)(2n+1) submodels (at the article's channels).
    cost=lambda n, N: (n + 1) * (2 * n + 1) * 1.3e-6,
)
