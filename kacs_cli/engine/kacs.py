"""KACS: one training iteration (docs/algorithm.md section 4) and the learner's registry entry, compiled
with numba. Match sets by submodel are in kacs_submodels.py, prediction in kacs_predict.py.
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
    overflow_fitness, segment_fitness, sync_adam_powers, update_set,
)
from kacs_cli.engine.kacs_submodels import (
    bucket, channel_count, collect_inner_matches, collect_outer_matches, drop_deleted,
    n_submodels, new_work, rule_input, set_range, sort_by_submodel,
)
from kacs_cli.engine.layout import close_layout, new_layout, open_layout, settle, sorted_engine
from kacs_cli.engine.order import next_row
from kacs_cli.engine.population import (
    S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DEATHS, S_DELETIONS, S_P, S_T, compact,
    refresh_fitness_sum, set_bounds, stack,
)
from kacs_cli.engine.learner import Learner
from kacs_cli.engine.params import CAPACITY_FIXED
from kacs_cli.engine.compaction import compact_kacs
from kacs_cli.engine.refine import refine_weights
from kacs_cli.engine.update import accuracy_given, adam_bias, adam_moments, set_numerosity


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
    """The match set of one submodel in the sorted engine: the live rules of its segment
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
    """Match set s of the sorted engine found from its segment, covered if empty, and its
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


@njit(**HOT, inline="always")
def _update_rule(w, m, v, b1t, b2t, eps, i, g0, g1, abs_err, beta, b1, b2, eta, eps_adam,
                 alpha_e0):
    """Adam on rule i's two weights, then its error; returns the error and alpha e0 / error
    (the accuracy's usual value, see `_update_set`).

    This is the per-rule floor of KACS's work.
    """
    d1, d2 = adam_bias(b1t, b2t, i, b1, b2)
    e = eps[i] + beta * (abs_err - eps[i])
    eps[i] = e
    inv_d2 = 1.0 / d2
    alpha_e0_over_e = alpha_e0 / e
    j = i + i
    j1 = j + np.uint64(1)
    m0, m1, v0, v1 = adam_moments(m, v, j, j1, g0, g1, b1, b2)
    s0 = np.sqrt(v0 * inv_d2) + eps_adam
    s1 = np.sqrt(v1 * inv_d2) + eps_adam
    # w_j -= eta * (m_j / d1) / s_j, with the three divisions folded into one.
    r = eta / (d1 * s0 * s1)
    w[j] -= m0 * s1 * r
    w[j1] -= m1 * s0 * r
    return e, alpha_e0_over_e


@njit(**HOT, inline="always")
def _update_set(w, m, v, b1t, b2t, eps, F, exp, ms, kappa, num, members, st, stop, g_scale, z,
                lo0, hi0, abs_err, sum_num, beta, b1, b2, eta, eps_adam, alpha_e0, hp, weighted):
    """The update of one match set: Adam, experience, error, match-set size and accuracy of
    every member, then their fitness. The slope's gradient takes z at `rule_input`, where
    the rule's prediction read it.

    Each member's kappa * num, the accuracy sum's term, is kept in `weighted` (contiguous,
    by position in the set): the fitness pass reads it there instead of gathering kappa and
    num again and converting num; it is the same product.
    """
    acc_sum = 0.0
    for k in range(st, stop):
        i = index_at(members, k)
        g = g_scale * F[i]
        e, alpha_e0_over_e = _update_rule(w, m, v, b1t, b2t, eps, i, g,
                                          g * rule_input(z, lo0[i], hi0[i]), abs_err, beta,
                                          b1, b2, eta, eps_adam, alpha_e0)
        kap = accuracy_given(e, alpha_e0_over_e, hp)
        exp[i] += 1
        ms[i] += beta * (sum_num - ms[i])
        kappa[i] = kap
        term = kap * num[i]
        weighted[k - st] = term
        acc_sum += term
    if acc_sum > 0.0:
        inv_sum = 1.0 / acc_sum
        for k in range(st, stop):
            i = index_at(members, k)
            F[i] += beta * (weighted[k - st] * inv_sum - F[i])


# The phases of `train_step` that `clock` splits its cycles into (kacs bench --profile):
# key and label. The rest of a run (the driver's loop, re-sorts, evaluation) is measured as
# the whole run minus these.
PHASES = (
    ("inner_matching", "inner matching"),      # inner match sets found and bucketed
    ("inner_means", "inner means"),            # psihat per set, covering and its deletions
    ("outer_matching", "outer matching"),      # outer match sets found and bucketed
    ("outer_means", "outer means"),            # Phihat per set, covering and its deletions
    ("rule_update", "rule update"),            # backpropagation: every set's update, sum(F)
    ("ga", "GA"),                              # triggers, GA events and their deletions
    ("slot_compaction", "slot compaction"),    # dead rules' slots refilled
)
(PH_INNER_MATCHING, PH_INNER_MEANS, PH_OUTER_MATCHING, PH_OUTER_MEANS, PH_RULE_UPDATE, PH_GA,
 PH_SLOT_COMPACTION) = range(len(PHASES))


@njit(**HOT)
def train_step(pop, wk, x, y, n, hp, sc, clock, layout):
    """One KACS training iteration on sample (x, y): predict, backpropagate, GA.

    `clock`: None, or an int64 array that gathers each phase's cycles (PHASES; cycles.py);
    each is a specialization of its own, and None's has no counter code.
    `layout`: None, the engine that re-sorts the population every RESORT_EVERY iterations,
    or a layout.Layout, the population kept sorted by submodel (layout.py), where a match
    set is found from its submodel's segment (inner matching is then part of inner means,
    outer matching of outer means). The branches on it are resolved at compilation."""
    n_q = channel_count(n, hp.channels)
    s_in = n * n_q
    s_all = s_in + n_q
    # The arrays, fetched from their tuples once for the whole iteration.
    lo = pop.bounds.lo
    hi = pop.bounds.hi
    # The weights and moments (rules x 2, C order) as flat views: rule i's pair is at 2i and
    # 2i + 1, an address without a multiply by the row length read from memory.
    w = pop.weights.w.reshape(pop.weights.w.size)
    m = pop.weights.m.reshape(pop.weights.m.size)
    v = pop.weights.v.reshape(pop.weights.v.size)
    F = pop.reals.F
    eps = pop.reals.eps
    kappa = pop.reals.kappa
    ms = pop.reals.ms
    b1t = pop.reals.b1t
    b2t = pop.reals.b2t
    exp = pop.counts.exp
    num = pop.counts.num
    ts = pop.counts.ts
    sub = pop.counts.sub
    scal = pop.scal
    match = wk.match
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
    outer_rules = wk.outer_rules

    sub_input = wk.sub_input
    lo0 = lo[0]
    hi0 = hi[0]

    P = scal[S_P]
    deaths_before = scal[S_DEATHS]
    deletions_before = scal[S_DELETIONS]

    if layout is None:
        # Stage 1: inner match sets, one branch-free pass over the population.
        tick = now(clock)
        n_match, n_outer = collect_inner_matches(sub, lo0, hi0, P, x, sub_input, s_in, match,
                                                  outer_rules)
        bucket(sub, match, members, start, count, 0, s_in, n_match, 0)
        tick = lap(clock, PH_INNER_MATCHING, tick)
        for q in range(n_q):
            zq = 0.0
            for p in range(n):
                s = q * n + p
                if scal[S_DEATHS] != deaths_before:
                    drop_deleted(num, members, start, count, s)
                if count[s] == 0:
                    _cover(pop, wk, s, x[p], True, hp, sc, None)
                st, stop = set_range(start, count, s)
                psi, sum_f, _, sum_num, sum_ts = _weighted_mean(F, w, num, ts, members, st, stop,
                                                                x[p], lo0, hi0)
                _record_set(psihat, s, psi, set_sum_f, set_num, set_ts, s, sum_f, sum_num, sum_ts)
                zq += psi
            zhat[q] = zq
        tick = lap(clock, PH_INNER_MEANS, tick)

        # Stage 2: outer match sets on the channel sums.
        n_match = collect_outer_matches(sub, lo0, hi0, outer_rules, n_outer, zhat, s_in, match)
        outer_pos = start[s_in - 1] + count[s_in - 1] + 1
        bucket(sub, match, members, start, count, s_in, s_all, n_match, outer_pos)
        tick = lap(clock, PH_OUTER_MATCHING, tick)
        y_hat = 0.0
        for q in range(n_q):
            s = s_in + q
            if scal[S_DEATHS] != deaths_before:
                drop_deleted(num, members, start, count, s)
            if count[s] == 0:
                _cover(pop, wk, s, zhat[q], False, hp, sc, None)
            st, stop = set_range(start, count, s)
            phi, sum_f, outer_slope, sum_num, sum_ts = _weighted_mean(F, w, num, ts, members, st,
                                                                      stop, zhat[q], lo0, hi0)
            _record_set(phihat, q, phi, set_sum_f, set_num, set_ts, s, sum_f, sum_num, sum_ts)
            # The outer slope is taken at prediction time: gradients use the weights as predicted.
            slope[q] = outer_slope
            y_hat += phi
        tick = lap(clock, PH_OUTER_MEANS, tick)


    else:
        # Stage 1 and 2 from the segments, one set at a time in the order of section 4.
        tick = lap(clock, PH_INNER_MATCHING, now(clock))
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
        tick = lap(clock, PH_INNER_MEANS, tick)
        tick = lap(clock, PH_OUTER_MATCHING, tick)
        y_hat = 0.0
        for q in range(n_q):
            s = s_in + q
            phi, sum_f, outer_slope, sum_num, sum_ts = _segment_set(
                pop, wk, F, w, num, ts, lo0, hi0, layout, s, pos, zhat[q], False, hp, sc)
            pos += count[s]
            _record_set(phihat, q, phi, set_sum_f, set_num, set_ts, s, sum_f, sum_num, sum_ts)
            slope[q] = outer_slope
            y_hat += phi
        tick = lap(clock, PH_OUTER_MEANS, tick)

    # Backpropagation of L = (y - y_hat)^2 / 2 and the parameter updates.
    err = y - y_hat
    abs_err = abs(err)
    beta = hp.beta
    b1 = hp.beta1
    b2 = hp.beta2
    eta = hp.eta
    eps_adam = hp.eps_adam
    alpha_e0 = hp.alpha * hp.e0
    # The re-sort's float buffer is free during an iteration.
    weighted = wk.sort_f
    if layout is not None:
        # The sorted engine's update (kacs_update.py): Adam's bias corrections from a table,
        # kappa num by slot, the fitness sum from the segments' sums.
        in_set = wk.in_set
        extent = index_at(layout.base, layout.end.shape[0])
        fsum = 0.0
    # The authors' code updates the outer sets first and reads each outer slope s_q after
    # that update (slope_after_outer_update); by default the inner sets come first and use
    # s_q as predicted. The sets are disjoint: only s_q depends on the order.
    outer_first = hp.slope_after_outer_update
    for k in range(s_all):
        s = k
        if outer_first:
            s = s_in + k if k < n_q else k - n_q
            if k == n_q:
                for q in range(n_q):
                    st, stop = set_range(start, count, s_in + q)
                    _, _, after, _, _ = _weighted_mean(F, w, num, ts, members, st, stop,
                                                       zhat[q], lo0, hi0)
                    slope[q] = after
        sum_f = set_sum_f[s]
        if sum_f <= 0.0:
            if layout is not None:
                # No update, but the segment's F still count in the fitness sum.
                fsum += segment_fitness(F, num, in_set, weighted, index_at(layout.base, s),
                                        index_at(layout.end, s), beta, 0.0, False)
            continue
        if s < s_in:
            q = s // n
            z = x[s - q * n]
            scale = -err * slope[q] / sum_f
        else:
            z = zhat[s - s_in]
            scale = -err / sum_f
        st, stop = set_range(start, count, s)
        # Numerosities change before the update only through covering's deletions.
        if scal[S_DELETIONS] == deletions_before:
            sum_num = set_num[s]
        else:
            sum_num = set_numerosity(num, members, st, stop)
        if layout is not None:
            fsum += update_set(pop, w, m, v, lo0, hi0, members, st, stop, scale, z, abs_err,
                               sum_num, hp, layout, s, weighted, in_set)
        else:
            _update_set(w, m, v, b1t, b2t, eps, F, exp, ms, kappa, num, members, st, stop,
                        scale, z, lo0, hi0, abs_err, sum_num, beta, b1, b2, eta, eps_adam,
                        alpha_e0, hp, weighted)
    if layout is None:
        refresh_fitness_sum(pop)
    else:
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

    if layout is None:
        compact(pop, sc)
    else:
        settle(pop, layout, sc, wk.order, wk.sort_f, wk.sort_i)
    scal[S_T] += 1
    lap(clock, PH_SLOT_COMPACTION, tick)
    return y_hat


# --------------------------------------------------------------------------- the learner entry

# The population is re-sorted by submodel this often (for memory locality only).
RESORT_EVERY = 100


@njit(cache=True)
def train_steps(pop, wk, X, y, order, start, stop, reshuffle, n, hp, sc, bs, clock, layout):
    """Iterations start..stop-1 of one training call (see learner.Learner.steps); `clock`
    and `layout` as in `train_step`. With a layout the population is spread into its
    segments for the call and packed dense again after it (layout.py)."""
    if layout is not None:
        open_layout(pop, layout, sc, wk.order, wk.sort_f, wk.sort_i)
    for it in range(start, stop):
        r = next_row(order, it, reshuffle)
        if layout is None:
            if it % RESORT_EVERY == 0:
                sort_by_submodel(pop, wk, sc)
        train_step(pop, wk, X[r], y[r], n, hp, sc, clock, layout)
        # Adaptive budget (budget.py): may raise the budget at the end of a window.
        if bs[BS_ON] != 0:
            after_iteration(pop.scal, pop.budget, hp, bs, n)
    if layout is not None:
        close_layout(pop, layout, sc, wk.order, wk.sort_f, wk.sort_i)
        sync_adam_powers(pop.reals.b1t, pop.reals.b2t, pop.counts.exp, pop.scal[S_P], hp.beta1,
                         hp.beta2)


def _steps(model, X, y, order, start, stop, reshuffle, clock=None):
    train_steps(model.pop, model.work, X, y, order, start, stop, reshuffle, model.n, model.hp,
                model.scratch, model.budget_state, clock, model.layout)


def _new_buffers(model):
    """The work buffers, and the layout of the sorted engine where the switch selects it
    (layout.sorted_engine), else None."""
    layout = (new_layout(model.n_submodels, model.capacity, model.hp.beta1, model.hp.beta2)
              if sorted_engine() else None)
    return {"work": new_work(model.capacity, model.n, model.n_channels), "layout": layout}


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
    second by 1/K^2), so that further learning continues from the same relative step.
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
    return merged


def _components(model, X):
    rows, n = X.shape[0], model.n
    n_q = model.n_channels
    psihat = np.empty((rows, n * n_q))
    zhat = np.empty((rows, n_q))
    phihat = np.empty((rows, n_q))
    y_hat = predict_components(model.pop, X, n, psihat, zhat, phihat)
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
    predict=lambda model, X: predict(model.pop, X, model.n, model.n_channels),
    population_frame=_population_frame,
    components=_components,
    refine=lambda model, X, y, **settings: refine_weights(model.pop, model.n, model.n_channels,
                                                          X, y, **settings),
    compact=compact_kacs, compactions=("piecewise", "single-winner"),
    merge=merge_models,
    adaptive_budget=True,
    channels=True,
    own_switches=("slope_after_outer_update",),
    phases=PHASES,
    # Every iteration works on each of the (n+1)(2n+1) submodels (at the article's channels).
    cost=lambda n, N: (n + 1) * (2 * n + 1) * 1.3e-6,
)
