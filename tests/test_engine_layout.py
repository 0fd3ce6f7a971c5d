"""KACS's engine, its population kept sorted by submodel (engine/layout.py): the layout's
invariants after every iteration, prediction independent of the layout, its rule update
(kacs_update.py) against a rule-by-rule reference written from docs/algorithm.md section 4,
its deletion draws (the two-level vote sums) and identical-rule lookup (the child's segment)
against the flat ones, and the same numbers across evaluation points."""

import copy

import numpy as np
import pytest

from kacs_cli.engine import deletion, ga, identical, kacs, kacs_update, layout as layout_module
from kacs_cli.engine.kacs_predict import predict_components
from kacs_cli.engine.layout import close_layout, open_layout
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.population import (
    S_DEATHS, S_P, S_TOTAL, copy_rule, copy_stored, permute_rules, rule_fields,
)
from kacs_cli.engine.train import Model

from test_engine_support import finish, np_accuracy, put_rule


def _data(n, rows, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    y = np.sin(4 * X[:, 0]) + X[:, -1] ** 2
    y = (y - y.min()) / (y.max() - y.min())
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


def check_layout(model):
    """Every invariant of the layout between two iterations."""
    pop, lay = model.pop, model.layout
    base, end = lay.base, lay.end
    S = end.shape[0]
    assert pop.scal[S_P] == base[S]
    assert pop.scal[S_DEATHS] == 0
    assert base[0] == 0 and np.all(np.diff(base) >= 0)
    assert np.all(base[:S] <= end) and np.all(end <= base[1:])
    num, sub = pop.counts.num, pop.counts.sub
    for s in range(S):
        assert np.all(sub[base[s]:end[s]] == s), f"segment {s} holds another submodel's rule"
        assert np.all(num[base[s]:end[s]] > 0), f"segment {s} holds a dead rule"
        assert np.all(num[end[s]:base[s + 1]] == 0), f"segment {s} has a live spare slot"
    P = pop.scal[S_P]
    # No rule lost: the numerosities add up to the bookkeeping's total.
    assert num[:P].sum() == pop.scal[S_TOTAL]
    live = num[:P] > 0
    assert live.sum() == (end - base[:S]).sum()
    assert pop.fsum[0] == pytest.approx(pop.reals.F[:P][live].sum(), rel=1e-9, abs=1e-12)
    # Each submodel's live rules are exactly its segment.
    counts = np.bincount(sub[:P][live], minlength=S)
    assert np.array_equal(counts, end - base[:S])


SETTINGS = [
    {},
    {"nu": 5.0, "channels": 3},
    {"semantics": "article"},
    {"do_subsumption": False, "theta_GA": 5.0},
]


@pytest.mark.slow
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "default")
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
def test_the_layout_holds_after_every_iteration(settings, missing):
    X, y = _data(3, 200, missing=missing)
    model = Model("kacs", 3, Hyperparameters(N=120, **settings))
    assert model.layout is not None
    work, sc = model.work, model.scratch
    # Warm up through the driver (the population grows, opens and closes twice) ...
    model.train(X, y, 300, seed=1, eval_every=150)
    P = int(model.pop.scal[S_P])
    assert np.all(np.diff(model.pop.counts.sub[:P]) >= 0), "closed population not sorted"
    # ... then iteration by iteration with the layout open.
    open_layout(model.pop, model.layout, sc, work.order, work.sort_f, work.sort_i)
    check_layout(model)
    rng = np.random.default_rng(2)
    for r in rng.integers(0, X.shape[0], 400):
        kacs.train_step(model.pop, work, X[r], y[r], 3, model.hp, sc, None, model.layout)
        check_layout(model)
    close_layout(model.pop, model.layout, sc, work.order, work.sort_f, work.sort_i)
    P = int(model.pop.scal[S_P])
    assert np.all(model.pop.counts.num[:P] > 0)
    assert model.pop.counts.num[:P].sum() == model.pop.scal[S_TOTAL]


def test_a_full_layout_is_rebuilt_and_no_rule_is_lost():
    """A layout without spare slots: every birth overflows and must still join its segment."""
    X, y = _data(2, 100)
    model = Model("kacs", 2, Hyperparameters(N=60))
    model.train(X, y, 200, seed=0)
    work, sc, lay = model.work, model.scratch, model.layout
    layout_module.relayout(model.pop, lay, sc, work.order, work.sort_f, work.sort_i,
                           int(model.pop.scal[S_P]), layout_module.DENSE)
    check_layout(model)
    assert np.all(lay.end == lay.base[1:])  # no spare slot anywhere
    for r in range(60):
        kacs.train_step(model.pop, work, X[r], y[r], 2, model.hp, sc, None, lay)
        check_layout(model)


def _components(model, X):
    rows, n, n_q = X.shape[0], model.n, model.n_channels
    psihat, zhat, phihat = np.empty((rows, n * n_q)), np.empty((rows, n_q)), np.empty((rows, n_q))
    y_hat = predict_components(model.pop, X, n, psihat, zhat, phihat, model.inner_missing)
    return psihat, zhat, phihat, y_hat


def _permute(model, order):
    P = int(model.pop.scal[S_P])
    permute_rules(model.pop, np.asarray(order, np.int64), P, np.zeros(model.capacity),
                  np.zeros(model.capacity, np.int64))


def _interleaved(sub, rng):
    """A slot order that mixes the submodels but keeps each one's rules in their order: the
    positions are drawn at random, and each submodel's rules fill its positions in turn."""
    positions = rng.permutation(len(sub))
    order = np.empty(len(sub), np.int64)
    for s in np.unique(sub):
        mine = np.flatnonzero(sub == s)
        order[np.sort(positions[mine])] = mine
    return order


def test_prediction_does_not_depend_on_the_layout():
    """A trained population with its submodels interleaved (each one's rules in their order),
    spread into segments and packed again, predicts the same bits: each (submodel, row) sum
    adds its rules in population order, and the layout keeps that order within a submodel.
    Under an arbitrary permutation the sums add in another order: equal within rounding."""
    X, y = _data(3, 150)
    model = Model("kacs", 3, Hyperparameters(N=200))
    model.train(X, y, 250, seed=3)
    P = int(model.pop.scal[S_P])
    X_eval, _ = _data(3, 64, seed=9, missing=0.1)
    sorted_components = _components(model, X_eval)
    _permute(model, _interleaved(model.pop.counts.sub[:P].copy(), np.random.default_rng(4)))
    assert np.any(np.diff(model.pop.counts.sub[:P]) < 0), "population still sorted"
    before = _components(model, X_eval)
    lay = layout_module.new_layout(model.n_submodels, model.capacity, 0.9, 0.999)
    work, sc = model.work, model.scratch
    open_layout(model.pop, lay, sc, work.order, work.sort_f, work.sort_i)
    assert model.pop.scal[S_P] > P  # spare slots in between
    close_layout(model.pop, lay, sc, work.order, work.sort_f, work.sort_i)
    assert np.all(np.diff(model.pop.counts.sub[:P]) >= 0)
    after_layout = _components(model, X_eval)
    for a, b, c in zip(sorted_components, before, after_layout):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    _permute(model, np.random.default_rng(0).permutation(P))
    shuffled = _components(model, X_eval)
    for a, b in zip(before, shuffled):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def _fingerprint(model):
    P = int(model.pop.scal[S_P])
    return {name: arr[:P].copy() for name, arr in rule_fields(model.pop).items()}


def test_same_seed_same_numbers_whatever_the_evaluation_points():
    """Splitting a training call at evaluation points closes and reopens the layout: it
    reopens into the same slots, so no number moves."""
    X, y = _data(3, 150)
    runs = []
    for eval_every in (600, 600, 37):
        model = Model("kacs", 3, Hyperparameters(N=200))
        curve = model.train(X, y, 600, seed=5, eval_every=eval_every)
        # The last row's errors, rules and micro-rules (its counters cover the last interval).
        runs.append((curve[-1, :7], _fingerprint(model)))
    for curve, fields in runs[1:]:
        assert np.array_equal(curve, runs[0][0], equal_nan=True)
        for name in fields:
            assert np.array_equal(fields[name], runs[0][1][name]), name


def test_weighted_rows_train_and_are_deterministic():
    X, y = _data(2, 80)
    weight = np.random.default_rng(1).integers(0, 4, 80).astype(float)
    curves = [Model("kacs", 2, Hyperparameters(N=100)).train(X, y, 400, 2, weight=weight)
              for _ in range(2)]
    assert np.array_equal(curves[0], curves[1], equal_nan=True) and np.isfinite(curves[0][:, 1]).all()


# --------------------------------------------------------------------------- the rule update


def _trained(settings=None, n=3, N=200, iterations=600):
    """A model after some training, its layout open (segments)."""
    X, y = _data(n, 150)
    model = Model("kacs", n, Hyperparameters(N=N, **(settings or {})))
    model.train(X, y, iterations, seed=4)
    open_layout(model.pop, model.layout, model.scratch, model.work.order, model.work.sort_f,
                model.work.sort_i)
    return model


def _running_powers(beta, steps):
    """beta^0 .. beta^steps as running products, as update.adam_bias advances them."""
    return np.concatenate([[1.0], np.cumprod(np.full(steps, beta))])


def _a_set(model, missing):
    """The segment with the most live rules and an input z that some of them match but not
    all (every one where z is missing): (s, z, the segment's slots, their membership)."""
    pop, lay = model.pop, model.layout
    s = int(np.argmax(lay.end - lay.base[:-1]))
    slots = np.arange(lay.base[s], lay.end[s])
    lo, hi = pop.bounds.lo[0, slots], pop.bounds.hi[0, slots]
    candidates = [np.nan] if missing else 0.5 * (lo + hi)
    for z in candidates:
        member = (((lo <= z) & (z <= hi)) | (z != z)) & (pop.counts.num[slots] > 0)
        if missing or 0 < member.sum() < len(slots):
            return s, float(z), slots, member
    pytest.skip("no input separates the segment's rules")


UPDATE_CASES = [
    # settings, z missing, a member past the bias table, tolerance on the weights' step
    ({}, False, False, 1e-13),
    ({"nu": 5.0}, False, False, 1e-13),
    ({}, True, False, 1e-13),
    ({}, False, True, 1e-13),
    ({"beta2": 0.99999}, False, True, 1e-13),
]


def _reference_update(pop, members, scale, z, abs_err, sum_num, hp):
    """docs/algorithm.md section 4's update of one match set, rule by rule in plain Python:
    Adam with its bias corrections from the running powers b1t, b2t; then error, accuracy
    kappa = alpha (eps / e0)^-nu (1 below e0), experience, match-set size; then fitness."""
    w, m, v = pop.weights.w, pop.weights.m, pop.weights.v
    r, c = pop.reals, pop.counts
    b1, b2, beta = hp.beta1, hp.beta2, hp.beta
    acc_sum = 0.0
    for i in members:
        lo, hi = pop.bounds.lo[0, i], pop.bounds.hi[0, i]
        g = (scale * r.F[i], scale * r.F[i] * (z if z == z else 0.5 * (lo + hi)))
        r.b1t[i] *= b1
        r.b2t[i] *= b2
        r.eps[i] += beta * (abs_err - r.eps[i])
        for j in range(2):
            m[i, j] = b1 * m[i, j] + (1.0 - b1) * g[j]
            v[i, j] = b2 * v[i, j] + (1.0 - b2) * g[j] * g[j]
            w[i, j] -= hp.eta * (m[i, j] / (1.0 - r.b1t[i])) / (
                np.sqrt(v[i, j] / (1.0 - r.b2t[i])) + hp.eps_adam)
        r.kappa[i] = float(np_accuracy(r.eps[i], hp.e0, hp.alpha, hp.nu))
        c.exp[i] += 1
        r.ms[i] += beta * (sum_num - r.ms[i])
        acc_sum += r.kappa[i] * c.num[i]
    for i in members:
        r.F[i] += beta * (r.kappa[i] * c.num[i] / acc_sum - r.F[i])


@pytest.mark.parametrize("settings, missing, past_table, rtol", UPDATE_CASES,
                         ids=["default", "nu=5", "missing", "past-table", "table-not-exact"])
def test_the_segment_update_is_the_reference_update_within_rounding(settings, missing, past_table,
                                                                   rtol):
    """kacs_update.update_members and set_fitness on one set (members in slot order, Adam's
    corrections from the table, F in a pass over the segment) against `_reference_update`
    on the same population and set.
    Error, experience, ms and the moments are the same operations: equal bit for bit. The
    accuracy and fitness agree within a few units in the last place (the engine divides
    alpha e0 by eps where the reference raises eps / e0 to -nu), and so do the weights' steps
    (rtol 1e-13), also for a step count past the first table of a decay that never reaches
    1.0 (beta2 = 0.99999), once the table has grown as a training call grows it."""
    model = _trained(settings)
    pop, lay, hp = model.pop, model.layout, model.hp
    s, z, slots, member = _a_set(model, missing)
    members = slots[member].astype(np.int64)
    P = int(pop.scal[S_P])
    exp = pop.counts.exp
    rows = lay.bias.size // 2
    if past_table:
        exp[members[0]] = rows + 5
        assert lay.bias_exact == (hp.beta2 == 0.999)
        bias, exact = kacs_update.bias_for_call(lay.bias, lay.bias_exact, hp.beta1, hp.beta2,
                                                exp[:P].max(), 1)
        assert bias.size // 2 > rows + 6 or exact
        lay = lay._replace(bias=bias, bias_exact=exact)
    top = int(exp[:P].max())
    pop.reals.b1t[:P] = _running_powers(hp.beta1, top)[exp[:P]]
    pop.reals.b2t[:P] = _running_powers(hp.beta2, top)[exp[:P]]
    before = {name: arr.copy() for name, arr in rule_fields(pop).items()}
    reference = copy.deepcopy(pop)

    F = pop.reals.F
    scale, abs_err = -0.3 * 0.8 / F[members].sum(), 0.3
    sum_num = int(pop.counts.num[members].sum())
    lo0, hi0 = pop.bounds.lo[0], pop.bounds.hi[0]
    count = np.uint64(len(members))
    _reference_update(reference, members, scale, z, abs_err, sum_num, hp)
    in_set = np.zeros(model.capacity, np.uint8)
    in_set[slots] = member
    sets = lay.end.shape[0]
    set_sum_f, set_scale, set_z, set_acc = (np.zeros(sets) for _ in range(4))
    set_num = np.zeros(sets, np.int64)
    set_sum_f[s], set_scale[s], set_z[s], set_num[s] = F[members].sum(), scale, z, sum_num
    weighted = np.zeros(model.capacity)
    kacs_update.update_members(pop, pop.weights.w.reshape(-1), pop.weights.m.reshape(-1),
                               pop.weights.v.reshape(-1), lo0, hi0, members, np.uint64(0), count,
                               set_sum_f, set_scale, set_z, set_num, set_acc, abs_err, hp,
                               lay.bias, weighted)
    total = kacs_update.set_fitness(pop, members, np.uint64(0), count, set_acc[s], hp, lay, s,
                                    weighted, in_set)

    after, expected = rule_fields(pop), rule_fields(reference)
    for name in ("eps", "ms", "exp", "m", "v"):
        np.testing.assert_array_equal(after[name], expected[name], err_msg=name)
    for name in ("kappa", "F"):
        np.testing.assert_allclose(after[name], expected[name], rtol=1e-14, atol=0, err_msg=name)
    w0 = before["w"][members]
    np.testing.assert_allclose(after["w"][members] - w0, expected["w"][members] - w0,
                               rtol=rtol, atol=0)
    assert np.all(expected["w"][members] != w0)
    # Nothing else moved: other rules, and b1t, b2t (the table replaces them).
    others = np.setdiff1d(np.arange(model.capacity), members)
    for name, arr in after.items():
        np.testing.assert_array_equal(arr[others], before[name][others], err_msg=name)
    np.testing.assert_array_equal(after["b1t"], before["b1t"])
    assert np.any(expected["b1t"][members] != before["b1t"][members])
    live = slots[pop.counts.num[slots] > 0]
    assert total == pytest.approx(F[live].sum(), rel=1e-12)


def test_a_set_whose_fitness_sum_is_not_positive_is_left_as_it_is():
    """update_members skips a set with sum F <= 0 (prediction gives it no estimate, so it has
    no gradient): none of its rules moves and its sum of kappa num stays 0."""
    model = _trained()
    pop, lay, hp = model.pop, model.layout, model.hp
    s, z, slots, member = _a_set(model, False)
    members = slots[member].astype(np.int64)
    before = {name: arr.copy() for name, arr in rule_fields(pop).items()}
    sets = lay.end.shape[0]
    set_scale, set_z, set_acc = np.full(sets, -0.5), np.full(sets, z), np.zeros(sets)
    set_num = np.full(sets, 3, np.int64)
    kacs_update.update_members(pop, pop.weights.w.reshape(-1), pop.weights.m.reshape(-1),
                               pop.weights.v.reshape(-1), pop.bounds.lo[0], pop.bounds.hi[0],
                               members, np.uint64(0), np.uint64(len(members)), np.zeros(sets),
                               set_scale, set_z, set_num, set_acc, 0.3, hp, lay.bias,
                               np.zeros(model.capacity))
    for name, arr in rule_fields(pop).items():
        np.testing.assert_array_equal(arr, before[name], err_msg=name)
    assert np.all(set_acc == 0.0)


def test_the_bias_table_holds_adams_corrections_until_they_are_one():
    """Row k: 1 / (1 - beta^(k+1)) with the power a running product, computed here step by
    step; the last row is the first where both are exactly 1.0, as every later step's is,
    about 54 ln 2 / -ln(0.999) = 37,411 steps in."""
    table, exact = kacs_update.bias_table(0.9, 0.999)
    rows = table.reshape(-1, 2)
    assert exact and 37_000 < len(rows) < 38_000
    p1 = p2 = 1.0
    for k in range(len(rows)):
        p1 *= 0.9
        p2 *= 0.999
        assert rows[k, 0] == 1.0 / (1.0 - p1) and rows[k, 1] == 1.0 / (1.0 - p2), k
    assert rows[-2, 1] > 1.0 and np.all(rows[-1] == 1.0)
    for _ in range(20_000):
        p2 *= 0.999
        assert 1.0 / (1.0 - p2) == 1.0
    table, exact = kacs_update.bias_table(0.9, 0.99999)
    assert not exact and table.size == 2 * kacs_update.BIAS_ROWS_MAX


def test_a_table_that_is_not_exact_grows_to_every_step_count_a_training_call_reaches():
    """A rule's exp grows by at most one per iteration, so a call of I iterations on a
    population whose largest exp is E reads rows up to E + I: `bias_for_call` returns a
    table holding them whose first rows are the shorter table's bit for bit; an exact table
    or one long enough is returned as it is. A training call grows the model's table."""
    short, exact = kacs_update.bias_table(0.9, 0.99999)
    rows = short.size // 2
    assert kacs_update.bias_for_call(short, exact, 0.9, 0.99999, 10, 100)[0] is short
    grown, grown_exact = kacs_update.bias_for_call(short, exact, 0.9, 0.99999, rows - 3, 50)
    assert not grown_exact and grown.size // 2 > rows - 3 + 50
    np.testing.assert_array_equal(grown[:short.size], short)
    np.testing.assert_array_equal(grown, kacs_update.bias_table(0.9, 0.99999, grown.size // 2)[0])
    full, full_exact = kacs_update.bias_table(0.9, 0.999)
    assert kacs_update.bias_for_call(full, full_exact, 0.9, 0.999, 10**9, 10**9)[0] is full

    model = _trained({"beta2": 0.99999})
    close_layout(model.pop, model.layout, model.scratch, model.work.order, model.work.sort_f,
                 model.work.sort_i)
    P = int(model.pop.scal[S_P])
    model.pop.counts.exp[:P] = rows - 2
    model.train(*_data(3, 150), 20, seed=1)
    assert model.layout.bias.size // 2 > rows - 2 + 20
    assert model.pop.counts.exp[:P].max() > rows


def test_adams_running_powers_are_kept_for_whatever_reads_the_population():
    """The update does not advance b1t, b2t; a training call leaves them beta^exp, as running
    products (update.adam_bias) have them (within their rounding)."""
    model = _trained()
    close_layout(model.pop, model.layout, model.scratch, model.work.order, model.work.sort_f,
                 model.work.sort_i)
    model.train(*_data(3, 150), 50, seed=1)
    P = int(model.pop.scal[S_P])
    exp = model.pop.counts.exp[:P]
    assert exp.max() > 100
    for beta, field in ((0.9, "b1t"), (0.999, "b2t")):
        np.testing.assert_allclose(rule_fields(model.pop)[field][:P],
                                   _running_powers(beta, int(exp.max()))[exp], rtol=1e-12)


# --------------------------------------------------------------------------- GA


def _vote_population(P, spare_every, seed):
    """P slots of KACS rules with whole-number votes (ms num, all inexperienced), every
    spare_every-th slot empty as a spare slot is; the sums of such votes are exact."""
    model = Model("kacs", 1, Hyperparameters(N=2 * P))
    rng = np.random.default_rng(seed)
    for i in range(P):
        put_rule(model.pop, i, 0.1, 0.9, [0.0, 0.0], float(rng.uniform(0.01, 1.0)),
                 num=0 if i % spare_every == 0 else int(rng.integers(1, 4)),
                 ms=float(rng.integers(1, 6)))
    finish(model.pop, P)
    return model


@pytest.mark.parametrize("seed", range(3))
def test_the_two_level_vote_sums_draw_the_flat_sums_rules(seed):
    """deletion_ga with KACS's VoteTree and without it (XCSF's flat sums): 60 deletions in one GA
    phase over 2,500 slots (3 super-blocks), with whole-number votes, so that both totals are
    exact: the same rules leave, in the same order."""
    models = [_vote_population(2500, 7, seed) for _ in range(2)]
    total = int(models[0].pop.scal[S_TOTAL])
    lay = layout_module.new_layout(1, models[1].capacity, 0.9, 0.999)
    for model, layout in zip(models, (None, lay)):
        model.pop.budget[0] = total - 60
        ga.begin_ga_phase(model.scratch)
        seed_rng(seed)
        deletion.deletion_ga(model.pop, model.hp, model.scratch, layout)
    np.testing.assert_array_equal(models[0].pop.counts.num, models[1].pop.counts.num)
    n_dead = int(models[0].pop.scal[S_DEATHS])
    assert n_dead > 0
    np.testing.assert_array_equal(models[0].scratch.dead[:n_dead], models[1].scratch.dead[:n_dead])
    # The second level holds the sums of the first.
    n_blocks = (2500 + deletion.VOTE_BLOCK - 1) // deletion.VOTE_BLOCK
    blocks = models[1].scratch.blocks
    for k in range((n_blocks + deletion.VOTE_SUPER - 1) // deletion.VOTE_SUPER):
        assert lay.votes.sums[k] == blocks[k * 32:min(k * 32 + 32, n_blocks)].sum()


def test_a_draw_through_the_two_levels_picks_the_flat_draws_rule():
    """Real-valued votes: the two totals differ in the last bits at most, so for the same
    uniform draw both roulettes pick the same rule (a draw within 1e-13 of a boundary, where
    they could differ, has no chance to occur in 400 draws)."""
    model = _vote_population(3000, 5, 0)
    pop, sc = model.pop, model.scratch
    pop.reals.ms[:3000] = np.random.default_rng(1).uniform(0.5, 9.0, 3000)
    n_blocks, flat_total = deletion.all_votes(pop, model.hp, sc.votes, sc.blocks, 1.0)
    lay = layout_module.new_layout(1, model.capacity, 0.9, 0.999)
    tree_total = deletion.summed_afresh(sc.blocks, n_blocks, flat_total, lay)
    assert tree_total == pytest.approx(flat_total, rel=1e-14)
    for draw in range(400):
        seed_rng(draw)
        flat = deletion.roulette_pick(sc.votes, sc.blocks, n_blocks, 3000, flat_total)
        seed_rng(draw)
        two = deletion.tree_pick(sc.votes, sc.blocks, lay.votes.sums, n_blocks, 3000, tree_total)
        assert flat == two and pop.counts.num[two] > 0


def test_the_identical_rule_is_found_in_the_childs_segment():
    """identical_in_segment finds what the antecedent keys find (find_identical): the live
    rule a child copies, wherever it sits, in its segment or in an overflow slot; none for a
    child whose bounds match no rule."""
    model = _trained()
    pop, sc, lay = model.pop, model.scratch, model.layout
    kids = sc.children
    extent = int(lay.base[-1])
    live = np.flatnonzero(pop.counts.num[:extent] > 0)
    for i in live[::7]:
        copy_stored(pop, i, kids, 0)
        identical.rebuild_keys(pop, sc)
        key = np.uint64(identical.antecedent_key(kids.counts.sub[0], kids.pairs.a, kids.pairs.b, 0))
        assert identical.identical_in_segment(pop, kids, 0, lay) == i
        assert identical.find_identical(pop, sc, 0, key) == i
        kids.pairs.a[0, 0] += 1e-3
        key = np.uint64(identical.antecedent_key(kids.counts.sub[0], kids.pairs.a, kids.pairs.b, 0))
        assert identical.identical_in_segment(pop, kids, 0, lay) == -1
        assert identical.find_identical(pop, sc, 0, key) == -1
    # A rule waiting in the overflow (born into a full segment this iteration).
    i = int(live[3])
    copy_rule(pop, i, pop, extent)
    pop.counts.num[i] = 0
    pop.scal[S_P] = extent + 1
    copy_stored(pop, extent, kids, 0)
    assert identical.identical_in_segment(pop, kids, 0, lay) == extent
