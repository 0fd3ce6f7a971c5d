"""The shared operators of docs/algorithm.md section 3 on hand-built cases: accuracy, Adam, crossover,
mutation, subsumption, insertion (identical-rule merging), deletion, compaction, tournament
and the GA event as a whole."""

import numpy as np
import pytest

from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine import deletion, ga, population, update
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine.population import S_DEATHS, S_DELETIONS, S_P, S_TOTAL, new_children

from test_engine_support import (
    FIELDS, finish, insert_child, kacs_step, put_rule, restore, snapshot,
)


def hp(**kw):
    return Hyperparameters(**kw).for_engine()


def binom_ok(count, trials, p, sigmas=5.0):
    """count is within `sigmas` binomial standard deviations of trials * p."""
    sd = np.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= sigmas * sd + 1


# --------------------------------------------------------------------------------------------
# Accuracy and Adam
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha,nu,e0", [(1.0, 1.0, 0.01), (0.1, 5.0, 0.01), (0.5, 2.0, 0.2)])
def test_accuracy(alpha, nu, e0):
    h = hp(alpha=alpha, nu=nu, e0=e0)
    for eps in [0.0, 0.3 * e0, 0.999 * e0]:
        assert update.accuracy(eps, h) == 1.0
    for eps in [e0, 1.5 * e0, 10 * e0, 1.7]:
        assert update.accuracy(eps, h) == pytest.approx(alpha * (eps / e0) ** (-nu), rel=1e-12)


def test_adam_step_is_textbook_adam_with_rule_local_step_count():
    params = dict(eta=0.01, beta1=0.8, beta2=0.99, eps_adam=1e-3)
    h = hp(**params)
    b1, b2, eta, ea = 0.8, 0.99, 0.01, 1e-3
    rng = np.random.default_rng(0)
    K = 3
    w = rng.normal(size=(4, K))
    m = np.zeros((4, K))
    v = np.zeros((4, K))
    b1t = np.ones(4)
    b2t = np.ones(4)
    # Rule 2 already has 4 updates behind it.
    m[2] = rng.normal(0, 0.1, K)
    v[2] = rng.uniform(0.001, 0.01, K)
    b1t[2] = b1 ** 4
    b2t[2] = b2 ** 4
    w_ref = w.copy()
    m_ref = m.copy()
    v_ref = v.copy()
    steps = {1: 0, 2: 4}
    for k in range(12):
        i = 1 if k % 3 else 2
        g = rng.normal(size=K) * (0.01 if k % 2 else 3.0)
        update.adam_step(w, m, v, b1t, b2t, i, g, h)
        steps[i] += 1
        t = steps[i]
        m_ref[i] = b1 * m_ref[i] + (1 - b1) * g
        v_ref[i] = b2 * v_ref[i] + (1 - b2) * g * g
        w_ref[i] -= eta * (m_ref[i] / (1 - b1 ** t)) / (np.sqrt(v_ref[i] / (1 - b2 ** t)) + ea)
        np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(m, m_ref, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(v, v_ref, rtol=1e-12, atol=1e-18)
        assert b1t[i] == pytest.approx(b1 ** t, rel=1e-12)
        assert b2t[i] == pytest.approx(b2 ** t, rel=1e-12)
    # First step from zero moments moves every weight by eta * g / (|g| + eps') exactly.
    w0 = np.zeros((1, 2))
    g = np.array([0.5, -2e-3])
    update.adam_step(w0, np.zeros((1, 2)), np.zeros((1, 2)), np.ones(1), np.ones(1), 0, g, h)
    np.testing.assert_allclose(w0[0], -eta * g / (np.abs(g) + ea), rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Crossover and mutation (on the GA scratch children)
# --------------------------------------------------------------------------------------------

def xcsf_children(D):
    return new_children(D, D + 1)


def test_crossover_swaps_first_and_second_bounds_independently():
    D = 3
    kids = xcsf_children(D)
    A0 = np.array([[0.11, 0.12, 0.13], [0.21, 0.22, 0.23]])
    B0 = np.array([[0.61, 0.62, 0.63], [0.71, 0.72, 0.73]])
    swaps_a = []
    swaps_b = []
    seed_rng(5)
    for _ in range(2000):
        kids.pairs.a[:2] = A0
        kids.pairs.b[:2] = B0
        changed = ga.crossover(kids.pairs, False)
        sa = kids.pairs.a[0] != A0[0]
        sb = kids.pairs.b[0] != B0[0]
        # Either untouched or exactly swapped between the two children, per dimension.
        np.testing.assert_array_equal(kids.pairs.a[0], np.where(sa, A0[1], A0[0]))
        np.testing.assert_array_equal(kids.pairs.a[1], np.where(sa, A0[0], A0[1]))
        np.testing.assert_array_equal(kids.pairs.b[0], np.where(sb, B0[1], B0[0]))
        np.testing.assert_array_equal(kids.pairs.b[1], np.where(sb, B0[0], B0[1]))
        assert bool(changed) == bool(sa.any() or sb.any())
        swaps_a.append(sa)
        swaps_b.append(sb)
    sa = np.array(swaps_a)
    sb = np.array(swaps_b)
    for d in range(D):
        assert binom_ok(sa[:, d].sum(), 2000, 0.5)
        assert binom_ok(sb[:, d].sum(), 2000, 0.5)
        assert binom_ok((sa[:, d] & sb[:, d]).sum(), 2000, 0.25)  # independent
    assert binom_ok((sa[:, 0] & sa[:, 1]).sum(), 2000, 0.25)


@pytest.mark.parametrize("article", [False, True])
def test_crossover_of_crossing_intervals(article):
    """Parents [0.1, 0.5] and [0.6, 0.9]: swapping one bound crosses the pair."""
    kids = xcsf_children(1)
    seen = set()
    seed_rng(6)
    for _ in range(200):
        kids.pairs.a[:2, 0] = [0.1, 0.6]
        kids.pairs.b[:2, 0] = [0.5, 0.9]
        ga.crossover(kids.pairs, article)
        pairs = {(kids.pairs.a[0, 0], kids.pairs.b[0, 0]), (kids.pairs.a[1, 0], kids.pairs.b[1, 0])}
        seen |= pairs
        if article:
            assert np.all(kids.pairs.a[:2, 0] <= kids.pairs.b[:2, 0])
    if article:
        # (0.6, 0.5) is swapped back to (0.5, 0.6).
        assert seen == {(0.1, 0.5), (0.6, 0.9), (0.1, 0.9), (0.5, 0.6)}
    else:
        assert seen == {(0.1, 0.5), (0.6, 0.9), (0.1, 0.9), (0.6, 0.5)}


def test_mutation_moves_each_bound_by_at_most_m0():
    D = 4
    kids = xcsf_children(D)
    m0 = 0.1
    A = np.array([0.3, 0.4, 0.5, 0.6])
    B = np.array([0.7, 0.2, 0.55, 0.9])
    da = []
    db = []
    seed_rng(7)
    for _ in range(1000):
        kids.pairs.a[:2] = A
        kids.pairs.b[:2] = B
        ga.mutate(kids.pairs, 1, 1.0, m0, False, False)
        # Only child 1 is touched.
        np.testing.assert_array_equal(kids.pairs.a[0], A)
        np.testing.assert_array_equal(kids.pairs.b[0], B)
        da.append(kids.pairs.a[1] - A)
        db.append(kids.pairs.b[1] - B)
    da = np.array(da).ravel()
    db = np.array(db).ravel()
    assert np.all(np.abs(da) <= m0 + 1e-15) and np.all(np.abs(db) <= m0 + 1e-15)
    for d in (da, db):
        # U[-m0, m0]: mean 0, sd m0 / sqrt(3), reaching both ends.
        assert abs(d.mean()) < 0.006
        assert abs(d.std() - m0 / np.sqrt(3)) < 0.004
        assert d.max() > 0.99 * m0 and d.min() < -0.99 * m0
    # The two bounds get separate draws.
    assert abs(np.corrcoef(da, db)[0, 1]) < 0.1
    # mu = 0: nothing moves.
    kids.pairs.a[:2] = A
    kids.pairs.b[:2] = B
    ga.mutate(kids.pairs, 0, 0.0, m0, True, False)
    np.testing.assert_array_equal(kids.pairs.a[0], A)
    np.testing.assert_array_equal(kids.pairs.b[0], B)


def test_mutation_rate_is_per_dimension_and_moves_both_bounds():
    D = 5
    kids = xcsf_children(D)
    mu = 0.3
    moved = []
    seed_rng(8)
    for _ in range(1000):
        kids.pairs.a[:2] = 0.5
        kids.pairs.b[:2] = 0.6
        ga.mutate(kids.pairs, 0, mu, 0.1, True, False)
        ma = kids.pairs.a[0] != 0.5
        mb = kids.pairs.b[0] != 0.6
        np.testing.assert_array_equal(ma, mb)  # a dimension mutates both of its bounds
        moved.append(ma)
    moved = np.array(moved)
    assert binom_ok(moved.sum(), moved.size, mu)
    assert binom_ok((moved[:, 0] & moved[:, 1]).sum(), 1000, mu * mu)


@pytest.mark.parametrize("clip", [True, False])
def test_mutation_clipping(clip):
    kids = xcsf_children(2)
    m0 = 0.2
    vals = []
    seed_rng(9)
    for _ in range(500):
        kids.pairs.a[0] = [0.02, 0.5]
        kids.pairs.b[0] = [0.5, 0.97]
        ga.mutate(kids.pairs, 0, 1.0, m0, clip, False)
        vals.append(np.concatenate([kids.pairs.a[0], kids.pairs.b[0]]))
    vals = np.array(vals)
    if clip:
        assert vals.min() == 0.0 and vals.max() == 1.0
        assert np.mean(vals[:, 0] == 0.0) > 0.3 and np.mean(vals[:, 3] == 1.0) > 0.3
    else:
        # KACS outer rules: bounds leave [0, 1] freely.
        assert vals.min() < -0.1 and vals.max() > 1.1
        assert not np.any(vals == 0.0) and not np.any(vals == 1.0)


@pytest.mark.parametrize("article", [False, True])
def test_mutation_ordering_under_each_semantics(article):
    kids = xcsf_children(1)
    crossed = 0
    seed_rng(10)
    for _ in range(400):
        kids.pairs.a[0, 0] = 0.5
        kids.pairs.b[0, 0] = 0.5
        ga.mutate(kids.pairs, 0, 1.0, 0.1, True, article)
        crossed += kids.pairs.a[0, 0] > kids.pairs.b[0, 0]
    if article:
        assert crossed == 0
    else:
        assert binom_ok(crossed, 400, 0.5)


# --------------------------------------------------------------------------------------------
# Subsumption and insertion
# --------------------------------------------------------------------------------------------

def set_child(sc, c, a, b, *, w=None, F=0.05, eps=0.003, kappa=0.7, ms=4.0, ts=11, sub=0,
              m=None, v=None):
    """Child c of the GA scratch as the GA leaves it for insertion."""
    kids = sc.children
    K = kids.weights.w.shape[1]
    put_rule(kids, c, a, b, np.arange(1, K + 1) * 0.1 if w is None else w, F, eps=eps,
             kappa=kappa, ms=ms, ts=ts, sub=sub, m=0.01 if m is None else m,
             v=0.002 if v is None else v)


def subsumption_case(exp=21, eps=0.005, num=1):
    model = Model("xcsf", 2, Hyperparameters(N=100, theta_sub=20, e0=0.01))
    pop = model.pop
    # Parent [0.2, 0.8]^2, dimension 0 stored reversed.
    put_rule(pop, 0, [0.8, 0.2], [0.2, 0.8], [0, 0, 0], 0.5, num=num, exp=exp, eps=eps)
    finish(pop, 1)
    return model


@pytest.mark.parametrize("a,b,expected", [
    ([0.3, 0.3], [0.7, 0.7], True),     # strictly inside
    ([0.7, 0.7], [0.3, 0.3], True),     # strictly inside, stored reversed
    ([0.2, 0.3], [0.8, 0.7], True),     # same in dimension 0, inside in dimension 1
    ([0.2, 0.2], [0.8, 0.8], False),    # the same intervals (different storage)
    ([0.8, 0.8], [0.2, 0.2], False),    # the same intervals, reversed pairs
    ([0.8, 0.2], [0.2, 0.8], False),    # the same stored pairs
    ([0.3, 0.1], [0.7, 0.7], False),    # outside in dimension 1
    ([0.2, 0.2], [0.81, 0.5], False),   # sticks out of dimension 0
])
def test_subsumes_interval_containment(a, b, expected):
    model = subsumption_case()
    set_child(model.scratch, 1, a, b)
    assert bool(ga.subsumes(model.pop, 0, model.scratch.children, 1, model.hp)) is expected


@pytest.mark.parametrize("exp,eps,num", [(20, 0.005, 1), (21, 0.01, 1), (21, 0.02, 1), (21, 0.0, 0)])
def test_subsumer_must_be_experienced_accurate_and_alive(exp, eps, num):
    model = subsumption_case(exp=exp, eps=eps, num=num)
    set_child(model.scratch, 0, [0.3, 0.3], [0.7, 0.7])
    assert not ga.subsumes(model.pop, 0, model.scratch.children, 0, model.hp)
    model = subsumption_case(exp=21, eps=0.0099, num=1)
    set_child(model.scratch, 0, [0.3, 0.3], [0.7, 0.7])
    assert ga.subsumes(model.pop, 0, model.scratch.children, 0, model.hp)


def test_kacs_subsumption_needs_the_same_submodel():
    model = Model("kacs", 1, Hyperparameters(N=100, theta_sub=20))
    put_rule(model.pop, 0, 0.1, 0.9, [0, 0], 0.5, sub=3, exp=30, eps=0.0)
    finish(model.pop, 1)
    set_child(model.scratch, 0, 0.2, 0.8, sub=4)
    assert not ga.subsumes(model.pop, 0, model.scratch.children, 0, model.hp)
    set_child(model.scratch, 0, 0.2, 0.8, sub=3)
    assert ga.subsumes(model.pop, 0, model.scratch.children, 0, model.hp)


def insertion_case():
    model = Model("xcsf", 2, Hyperparameters(N=100))
    pop = model.pop
    put_rule(pop, 0, [0.1, 0.2], [0.5, 0.6], [1, 1, 1], 0.3, num=2)
    put_rule(pop, 1, [0.5, 0.6], [0.1, 0.2], [2, 2, 2], 0.2, num=1)   # rule 0 reversed
    put_rule(pop, 2, [0.3, 0.3], [0.4, 0.4], [3, 3, 3], 0.4, num=0)   # deleted this iteration
    put_rule(pop, 3, [0.7, 0.7], [0.9, 0.9], [4, 4, 4], 0.1, num=1)
    finish(pop, 4)
    pop.counts.num[2] = 0
    return model


@pytest.mark.parametrize("a,b,target", [
    ([0.1, 0.2], [0.5, 0.6], 0),      # equal stored pairs: merge
    ([0.5, 0.6], [0.1, 0.2], 1),      # equal to the reversed rule: merge into that one
    ([0.5, 0.2], [0.1, 0.6], None),   # same intervals as rule 0 but another storage: new
    ([0.1, 0.2], [0.5, 0.61], None),  # one bound differs: new
    ([0.3, 0.3], [0.4, 0.4], None),   # identical to a rule with num = 0: new, no revival
])
@pytest.mark.parametrize("hint", [(3, 3), (0, 1), (2, 2)])
def test_insertion_merges_only_identical_stored_pairs(a, b, target, hint):
    model = insertion_case()
    pop = model.pop
    before = snapshot(pop)
    fsum = pop.fsum[0]
    set_child(model.scratch, 0, a, b, F=0.05)
    insert_child(pop, model.scratch, 0, hint)
    after = snapshot(pop)
    assert int(pop.scal[S_TOTAL]) == 5
    if target is not None:
        assert int(pop.scal[S_P]) == 4
        expected_num = before["num"].copy()
        expected_num[target] += 1
        np.testing.assert_array_equal(after["num"], expected_num)
        for f in FIELDS:
            if f != "num":
                np.testing.assert_array_equal(after[f], before[f])
        assert pop.fsum[0] == fsum
    else:
        assert int(pop.scal[S_P]) == 5
        np.testing.assert_array_equal(after["num"][:4], before["num"])
        assert after["num"][2] == 0
        new = {f: after[f][4] for f in FIELDS}
        np.testing.assert_array_equal(new["a"], a)
        np.testing.assert_array_equal(new["b"], b)
        np.testing.assert_array_equal(new["lo"], np.minimum(a, b))
        np.testing.assert_array_equal(new["hi"], np.maximum(a, b))
        np.testing.assert_allclose(new["w"], [0.1, 0.2, 0.3], rtol=1e-15)
        np.testing.assert_array_equal(new["m"], 0.01)
        np.testing.assert_array_equal(new["v"], 0.002)
        assert (new["F"], new["eps"], new["kappa"], new["ms"]) == (0.05, 0.003, 0.7, 4.0)
        assert (new["num"], new["exp"], new["ts"], new["sub"]) == (1, 0, 11, 0)
        # A child's Adam bias correction restarts: its step count is its own (exp = 0).
        assert (new["b1t"], new["b2t"]) == (1.0, 1.0)
        assert pop.fsum[0] == pytest.approx(fsum + 0.05, rel=1e-15)


def test_insertion_finds_the_first_identical_rule_and_treats_signed_zeros_as_equal():
    """Covering can create two live rules with one antecedent; a child identical to them
    merges into the first in population order, whatever the parent hints. Bounds compare with
    ==, so -0.0 equals 0.0 (the antecedent index must not tell them apart)."""
    for hint in [(0, 0), (3, 3)]:
        model = Model("xcsf", 2, Hyperparameters(N=100))
        pop = model.pop
        put_rule(pop, 0, [0.7, 0.7], [0.9, 0.9], [4, 4, 4], 0.1)
        put_rule(pop, 1, [0.0, 0.2], [0.5, 0.6], [1, 1, 1], 0.3)
        put_rule(pop, 2, [0.0, 0.2], [0.5, 0.6], [2, 2, 2], 0.2)   # a duplicate of rule 1
        put_rule(pop, 3, [0.3, 0.3], [0.4, 0.4], [3, 3, 3], 0.4)
        finish(pop, 4)
        set_child(model.scratch, 0, [-0.0, 0.2], [0.5, 0.6])
        insert_child(pop, model.scratch, 0, hint)
        np.testing.assert_array_equal(pop.counts.num[:4], [1, 2, 1, 1])
        assert int(pop.scal[S_P]) == 4
        # The index follows the population: a second, new child is found once inserted.
        set_child(model.scratch, 0, [0.25, 0.2], [0.5, 0.6])
        insert_child(pop, model.scratch, 0, hint)
        assert int(pop.scal[S_P]) == 5
        set_child(model.scratch, 0, [0.25, 0.2], [0.5, 0.6])
        insert_child(pop, model.scratch, 0, hint)
        assert int(pop.scal[S_P]) == 5 and pop.counts.num[4] == 2


def test_kacs_insertion_merges_within_the_same_submodel_only():
    model = Model("kacs", 1, Hyperparameters(N=100))
    pop = model.pop
    put_rule(pop, 0, 0.2, 0.6, [0, 0], 0.3, sub=1)
    finish(pop, 1)
    set_child(model.scratch, 0, 0.2, 0.6, sub=2)
    insert_child(pop, model.scratch, 0, (0, 0))
    assert int(pop.scal[S_P]) == 2 and pop.counts.sub[1] == 2 and pop.counts.num[0] == 1
    set_child(model.scratch, 0, 0.2, 0.6, sub=1)
    insert_child(pop, model.scratch, 0, (1, 1))
    assert int(pop.scal[S_P]) == 2 and pop.counts.num[0] == 2 and pop.counts.num[1] == 1
    assert int(pop.scal[S_TOTAL]) == 3


# --------------------------------------------------------------------------------------------
# Deletion and compaction
# --------------------------------------------------------------------------------------------

DELETION_RULES = [
    # num, ms, F, exp
    (2, 10.0, 0.40, 100),   # F/num = 0.2: ordinary vote ms * num = 20
    (2, 2.0, 0.03, 100),    # F/num = 0.015 < delta * Fbar and exp > theta_del: boosted
    (3, 5.0, 0.90, 10),     # ordinary, 15
    (1, 8.0, 0.003, 50),    # low fitness but exp = theta_del (not >): ordinary, 8
    (0, 100.0, 0.50, 100),  # deleted earlier (num 0): never picked
]


def deletion_case(N):
    model = Model("xcsf", 1, Hyperparameters(N=N, theta_del=50, delta=0.1))
    pop = model.pop
    for i, (num, ms, F, exp) in enumerate(DELETION_RULES):
        put_rule(pop, i, [0.1 * i], [0.1 * i + 0.05], [0, 0], F, num=num, ms=ms, exp=exp)
    finish(pop, len(DELETION_RULES))
    pop.counts.num[4] = 0
    return model


def expected_vote_shares():
    num = np.array([r[0] for r in DELETION_RULES], float)
    ms = np.array([r[1] for r in DELETION_RULES])
    F = np.array([r[2] for r in DELETION_RULES])
    live = num > 0
    f_bar = F[live].sum() / num.sum()  # sum(F) / sum(num) over the population
    assert f_bar == pytest.approx(1.333 / 8)
    vote = ms * num
    # Rule 1 alone qualifies: 0.015 < 0.1 * 0.1666 and exp 100 > 50.
    vote[1] *= f_bar / (F[1] / num[1])
    shares = vote / vote.sum()
    # The boost matters: rule 1 would get 4/47 = 0.085 without it, and 0.34 if the boost
    # used F instead of F/num.
    assert shares[1] > 0.45 and shares[4] == 0.0
    return shares


def test_deletion_pick_frequencies_follow_the_votes():
    draws = 4000
    model = deletion_case(N=7)
    pop = model.pop
    snap = snapshot(pop)
    scal = pop.scal.copy()
    fsum = pop.fsum.copy()
    counts = np.zeros(5, int)
    seed_rng(2024)
    for _ in range(draws):
        restore(pop, snap, scal, fsum)
        deletion.deletion(pop, model.hp, model.scratch)
        diff = snap["num"] - pop.counts.num[:5]
        assert diff.sum() == 1 and diff.min() == 0
        picked = int(np.argmax(diff))
        counts[picked] += 1
        assert int(pop.scal[S_TOTAL]) == 7 and int(pop.scal[S_DELETIONS]) == 1
        if picked == 3:  # numerosity 1 -> 0: a death, its fitness leaves the sum
            assert int(pop.scal[S_DEATHS]) == 1
            assert pop.fsum[0] == pytest.approx(fsum[0] - snap["F"][picked], rel=1e-12)
        else:
            assert int(pop.scal[S_DEATHS]) == 0 and pop.fsum[0] == fsum[0]
    shares = expected_vote_shares()
    assert counts[4] == 0
    for i in range(4):
        assert binom_ok(counts[i], draws, shares[i]), (counts / draws, shares)


def test_deletion_brings_the_budget_back_to_N():
    model = deletion_case(N=4)
    pop = model.pop
    seed_rng(1)
    deletion.deletion(pop, model.hp, model.scratch)
    assert int(pop.scal[S_TOTAL]) == 4 == int(pop.counts.num[:5].sum())
    assert int(pop.scal[S_DELETIONS]) == 4
    assert np.all(pop.counts.num[:5] >= 0) and pop.counts.num[4] == 0
    assert int(pop.scal[S_DEATHS]) == int(np.sum(pop.counts.num[:4] == 0))
    live = pop.counts.num[:5] > 0
    assert pop.fsum[0] == pytest.approx(pop.reals.F[:5][live].sum(), rel=1e-12)
    # Already within budget: nothing happens.
    before = snapshot(pop)
    deletion.deletion(pop, model.hp, model.scratch)
    for f in FIELDS:
        np.testing.assert_array_equal(snapshot(pop)[f], before[f])


def test_compact_drops_dead_rules_and_moves_whole_rules():
    model = Model("xcsf", 2, Hyperparameters(N=100))
    pop = model.pop
    rng = np.random.default_rng(3)
    P = 7
    for i in range(P):
        a = rng.random(2)
        b = rng.random(2)
        put_rule(pop, i, a, b, rng.normal(size=3), 0.1 + i, num=1 + i % 3, exp=i, eps=0.01 * i,
                 kappa=0.1 * i, ms=2.0 + i, ts=100 + i, m=rng.normal(size=3),
                 v=rng.random(3), sub=0)
    finish(pop, P)
    before = snapshot(pop)
    dead = [0, 3, 6]
    pop.counts.num[dead] = 0
    # As deletion records them: in the order they died.
    model.scratch.dead[:3] = [6, 0, 3]
    pop.scal[S_DEATHS] = len(dead)
    moved = np.full(P, -2, dtype=np.int64)
    population.compact(pop, model.scratch, moved)
    P_new = int(pop.scal[S_P])
    assert P_new == 4 and int(pop.scal[S_DEATHS]) == 0
    # Holes in ascending order, each with the slot whose rule filled it: 0 <- 5 (6 is dead
    # too), 3 <- 4; hole 6 lies past the new end and stays empty.
    assert model.scratch.dead[:3].tolist() == [0, 3, 6]
    assert moved[:3].tolist() == [5, 4, -1]
    after = snapshot(pop)
    assert np.all(after["num"] > 0)
    # Each surviving rule is intact (identified by its unique F).
    survivors = sorted(set(range(P)) - set(dead))
    assert sorted(after["F"].tolist()) == [before["F"][i] for i in survivors]
    for j in range(P_new):
        i = int(np.flatnonzero(before["F"] == after["F"][j])[0])
        for f in FIELDS:
            if f != "num":
                np.testing.assert_array_equal(after[f][j], before[f][i], err_msg=f)
        assert after["num"][j] == before["num"][i]


# --------------------------------------------------------------------------------------------
# Tournament selection
# --------------------------------------------------------------------------------------------

def test_tournament_probabilities():
    model = Model("xcsf", 1, Hyperparameters(N=100))
    pop = model.pop
    # (F, num): F/num = 0.2, 0.3, 0.05 and a dead rule with the highest fitness.
    rules = [(0.6, 3), (0.3, 1), (0.1, 2), (0.9, 0)]
    for i, (F, num) in enumerate(rules):
        put_rule(pop, i, [0.0], [1.0], [0, 0], F, num=num)
    finish(pop, 4)
    pop.counts.num[3] = 0
    members = np.arange(4, dtype=np.int64)
    tau = 0.3
    # A rule has an entrant with q = 1 - (1 - tau)^num; it wins when no fitter rule has one;
    # the tournament is repeated until someone entered.
    q = {i: 1 - (1 - tau) ** rules[i][1] for i in range(3)}
    p = np.array([
        (1 - q[1]) * q[0],                  # rule 0 (0.2) loses only to rule 1 (0.3)
        q[1],                               # rule 1 is the fittest per micro-rule
        (1 - q[1]) * (1 - q[0]) * q[2],     # rule 2 (0.05)
    ])
    p /= p.sum()
    draws = 4000
    counts = np.zeros(4, int)
    seed_rng(99)
    for _ in range(draws):
        counts[ga.tournament(pop, members, 0, 4, tau)] += 1
    assert counts[3] == 0
    for i in range(3):
        assert binom_ok(counts[i], draws, p[i]), (counts / draws, p)
    # tau = 1: every micro-rule enters, the fittest per micro-rule always wins.
    for _ in range(50):
        assert ga.tournament(pop, members, 0, 4, 1.0) == 1
    # A sub-range of the member list is a set of its own.
    for _ in range(50):
        assert ga.tournament(pop, members, 2, 4, 0.5) == 2


# --------------------------------------------------------------------------------------------
# The GA event (run_ga) on hand-built match sets
# --------------------------------------------------------------------------------------------

def ga_model(rules, t=200, **params):
    base = dict(N=1000, do_subsumption=False)
    base.update(params)
    model = Model("xcsf", 1, Hyperparameters(**base))
    pop = model.pop
    for i, r in enumerate(rules):
        put_rule(pop, i, **r)
    finish(pop, len(rules), t=t)
    return model


def run_ga(model, members, clip=True):
    members = np.asarray(members, dtype=np.int64)
    ga.run_ga(model.pop, members, 0, len(members), clip, model.hp, model.scratch, None)


def rule(a, b, F, num=1, eps=0.02, exp=10, w=(0.5, -0.5), ts=0, m=(0.01, 0.02),
         v=(1e-4, 2e-4), ms=3.0, kappa=0.5):
    return dict(a=[a], b=[b], w=list(w), F=F, num=num, eps=eps, exp=exp, ts=ts, m=list(m),
                v=list(v), ms=ms, kappa=kappa)


def test_ga_copies_merge_into_their_parents_and_time_stamps_are_set():
    model = ga_model([rule(0.1, 0.5, 0.6, num=2), rule(0.3, 0.9, 0.2), rule(0.0, 0.2, 0.3)],
                     chi=0.0, mu=0.0)
    seed_rng(0)
    run_ga(model, [0, 1])
    pop = model.pop
    assert int(pop.scal[S_P]) == 3
    assert int(pop.scal[S_TOTAL]) == 6 == int(pop.counts.num[:3].sum())
    assert pop.counts.num[2] == 1
    assert pop.counts.ts[0] == pop.counts.ts[1] == 200 and pop.counts.ts[2] == 0


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_ga_crossover_children(semantics):
    """chi = 1, mu = 0. A child that differs from both parents must carry the crossover
    values: eps = mean of the parents' eps, F = 0.1 * mean of the parents' F; its pair is a
    recombination of the parents' stored bounds (re-ordered under article semantics)."""
    parents = [rule(0.1, 0.5, 0.6, num=2, eps=0.02, w=(1.0, 2.0)),
               rule(0.6, 0.9, 0.2, num=1, eps=0.04, w=(3.0, 4.0))]
    new_rules = 0
    for seed in range(40):
        model = ga_model(parents, chi=1.0, mu=0.0, tau=0.5, semantics=semantics)
        seed_rng(seed)
        run_ga(model, [0, 1])
        pop = model.pop
        assert int(pop.scal[S_TOTAL]) == 5
        P = int(pop.scal[S_P])
        for j in range(2, P):
            new_rules += 1
            pair = (pop.pairs.a[j, 0], pop.pairs.b[j, 0])
            crossed = (0.5, 0.6) if semantics == "article" else (0.6, 0.5)
            assert pair in {(0.1, 0.9), crossed}
            assert pop.reals.F[j] == pytest.approx(0.1 * (0.6 + 0.2) / 2, rel=1e-12)
            assert pop.reals.eps[j] == pytest.approx(0.03, rel=1e-12)
            assert tuple(pop.weights.w[j]) in {(1.0, 2.0), (3.0, 4.0)}
            assert pop.counts.num[j] == 1 and pop.counts.exp[j] == 0 and pop.counts.ts[j] == 200
    assert new_rules >= 10


def test_ga_mutated_children_are_copies_of_their_parent():
    """chi = 0, mu = 1: each child is a new rule near its parent: num 1, exp 0,
    F = 0.1 * parent F / parent num, the parent's eps, weights and moments."""
    m0 = 0.05
    parent = rule(0.3, 0.7, 0.8, num=4, eps=0.02, exp=30, w=(0.25, -0.75))
    for seed in range(10):
        model = ga_model([parent], chi=0.0, mu=1.0, m0=m0)
        seed_rng(seed)
        run_ga(model, [0])
        pop = model.pop
        assert int(pop.scal[S_P]) == 3 and int(pop.scal[S_TOTAL]) == 6 and pop.counts.num[0] == 4
        for j in (1, 2):
            assert abs(pop.pairs.a[j, 0] - 0.3) <= m0 and abs(pop.pairs.b[j, 0] - 0.7) <= m0
            assert pop.pairs.a[j, 0] != 0.3 and pop.pairs.b[j, 0] != 0.7
            assert pop.reals.F[j] == pytest.approx(0.1 * 0.8 / 4, rel=1e-12)
            assert pop.reals.eps[j] == 0.02
            assert pop.counts.num[j] == 1 and pop.counts.exp[j] == 0 and pop.counts.ts[j] == 200
            np.testing.assert_array_equal(pop.weights.w[j], [0.25, -0.75])
            np.testing.assert_array_equal(pop.weights.m[j], [0.01, 0.02])
            np.testing.assert_array_equal(pop.weights.v[j], [1e-4, 2e-4])
        assert pop.fsum[0] == pytest.approx(0.8 + 2 * 0.02, rel=1e-12)


def test_ga_crossover_swap_counts_as_change_even_between_identical_parents():
    """docs/algorithm.md section 3 step 3, as the authors' implementation reads "if crossover changed anything":
    a crossover that swapped any bound counts as a change, even when both parents are the
    same rule and the swapped values are equal. The children then take the mean of the
    parents' stored F (0.8 here), times 0.1; only when no swap was drawn (probability 1/4 for
    one interval) do they keep F / num * 0.1. This reading reproduces the published rule
    counts (f1-f4 KACS within 3 standard errors); the value-based reading is not the reference
    semantics (docs/algorithm.md section 12)."""
    parent = rule(0.3, 0.7, 0.8, num=4, eps=0.02, exp=30)
    kept = 0
    seeds = 40
    for seed in range(seeds):
        model = ga_model([parent], chi=1.0, mu=1.0, m0=0.05)
        seed_rng(seed)
        run_ga(model, [0])
        pop = model.pop
        assert int(pop.scal[S_P]) == 3
        f_children = (pop.reals.F[1], pop.reals.F[2])
        assert f_children[0] == f_children[1]
        if f_children[0] == pytest.approx(0.1 * 0.8 / 4, rel=1e-12):
            kept += 1
        else:
            assert f_children[0] == pytest.approx(0.1 * 0.8, rel=1e-12), (seed, f_children)
    # No swap at all has probability 1/4: Binomial(40, 0.25) has mean 10, SD 2.7.
    assert 2 <= kept <= 20


@pytest.mark.parametrize("exp,eps,do_sub,can_subsume", [
    (51, 0.005, True, True),
    (50, 0.005, True, False),   # exp must exceed theta_sub
    (51, 0.01, True, False),    # eps must be below e0
    (51, 0.005, False, False),  # subsumption switched off
])
def test_ga_subsumption(exp, eps, do_sub, can_subsume):
    """A child inside an experienced, accurate parent raises the parent's num instead of
    joining; other children join as new rules."""
    parent = rule(0.2, 0.8, 0.5, num=1, eps=eps, exp=exp)
    subsumed_total = 0
    for seed in range(30):
        model = ga_model([parent], chi=0.0, mu=1.0, m0=0.05, do_subsumption=do_sub,
                         theta_sub=50)
        seed_rng(seed)
        run_ga(model, [0])
        pop = model.pop
        P = int(pop.scal[S_P])
        inserted = P - 1
        assert int(pop.scal[S_TOTAL]) == 3
        subsumed = pop.counts.num[0] - 1
        assert subsumed + inserted == 2
        for j in range(1, P):
            a, b = pop.pairs.a[j, 0], pop.pairs.b[j, 0]
            lo, hi = min(a, b), max(a, b)
            if can_subsume:
                assert not (0.2 <= lo and hi <= 0.8), "a contained child was not subsumed"
        subsumed_total += subsumed
    if can_subsume:
        assert 5 < subsumed_total < 25  # each child lands inside with probability 1/4
    else:
        assert subsumed_total == 0


def test_ga_children_join_one_at_a_time_and_the_budget_holds():
    """Population at N: each child is followed by one deletion (two in all); the budget ends
    at exactly N and nothing goes negative."""
    rules = [rule(0.1 * k, 0.1 * k + 0.3, 0.2 + 0.01 * k, num=2, ms=5.0) for k in range(5)]
    for seed in range(30):
        model = ga_model(rules, N=10, chi=0.0, mu=1.0, m0=0.05)
        seed_rng(seed)
        run_ga(model, [0, 1, 2])
        pop = model.pop
        P = int(pop.scal[S_P])
        assert int(pop.scal[S_TOTAL]) == 10 == int(pop.counts.num[:P].sum())
        assert int(pop.scal[S_DELETIONS]) == 2
        assert np.all(pop.counts.num[:P] >= 0)
        population.compact(pop, model.scratch, np.empty(P, np.int64))
        P = int(pop.scal[S_P])
        assert np.all(pop.counts.num[:P] >= 1) and int(pop.counts.num[:P].sum()) == 10


def test_kacs_ga_clips_inner_children_but_not_outer_children():
    """n = 1 (3 inner, 3 outer submodels). Inner rules [0.02, 0.98] predict 0, so zhat = 0;
    outer rules [-0.05, 0.05]. With t far past every time stamp the GA runs on all six sets;
    mu = 1 mutates every child: inner children stay in [0, 1] (clipped), outer ones do not."""
    n = 1
    model = Model("kacs", n, Hyperparameters(N=1000, theta_GA=50, chi=0.0, mu=1.0, m0=0.1,
                                             do_subsumption=False))
    pop = model.pop
    for s in range(3):
        put_rule(pop, s, 0.02, 0.98, [0.0, 0.0], 0.5, sub=s)
    for q in range(3):
        put_rule(pop, 3 + q, -0.05, 0.05, [0.0, 0.0], 0.5, sub=3 + q)
    inner_children = []
    outer_children = []
    for seed in range(20):
        finish(pop, 6, t=100)
        seed_rng(seed)
        kacs_step(model, [0.4], 0.0)
        snap = snapshot(pop)
        P = len(snap["F"])
        assert P == 18 and int(pop.scal[S_TOTAL]) == 18
        # Two children per submodel, each in its parent's submodel.
        assert np.bincount(snap["sub"], minlength=6).tolist() == [3] * 6
        # The step packs the rules by submodel; the children are the rules without experience
        # (each parent was in its match set and updated).
        children = np.flatnonzero(snap["exp"] == 0)
        assert len(children) == 12
        for j in children:
            pair = (snap["a"][j, 0], snap["b"][j, 0])
            (inner_children if snap["sub"][j] < 3 else outer_children).append(pair)
        # Restore the six parents for the next round (the step moved their weights).
        for s in range(3):
            put_rule(pop, s, 0.02, 0.98, [0.0, 0.0], 0.5, sub=s)
        for q in range(3):
            put_rule(pop, 3 + q, -0.05, 0.05, [0.0, 0.0], 0.5, sub=3 + q)
    inner = np.array(inner_children)
    outer = np.array(outer_children)
    assert inner.min() >= 0.0 and inner.max() <= 1.0
    # 0.02 + U[-0.1, 0.1] < 0 with probability 0.4: clipped to exactly 0 (1 likewise).
    assert np.mean(inner[:, 0] == 0.0) > 0.25 and np.mean(inner[:, 1] == 1.0) > 0.25
    assert outer.min() < -0.1 and outer.max() > 0.1
    assert np.all(np.abs(outer[:, 0] + 0.05) <= 0.1 + 1e-12)
    assert np.all(np.abs(outer[:, 1] - 0.05) <= 0.1 + 1e-12)


# --------------------------------------------------------------------------------------------
# Deletion inside a GA event: the second deletion sees the population as it is then
# --------------------------------------------------------------------------------------------

def ga_deletion_population(scenario):
    """N = total: the GA event's two children each trigger one deletion.

    Rule 0 (the match set) is the parent: num 1, exp 0. Rule 1 (Z) has an overwhelming vote
    (ms = 1e9), so the first deletion removes it, which moves Fbar for the second deletion.
    Rules 2-4 (L) have exp > theta_del and F/num = x near the low-fitness threshold; rules
    5-14 are ordinary fillers.
    'falls': Z carries F = 30, Fbar drops from 1.04 to 0.28, L (x = 0.1) is boosted in the
    first deletion and must not be in the second.
    'rises': Z carries F = 0.001, the children's F lifts Fbar by 1 %, L (x = 0.0265) is not
    boosted in the first deletion and must be in the second.
    'jumps': as 'rises' with a fitter parent (F = 4): Fbar rises by 3 %, L (x = 0.0357).
    """
    F_P, F_Z, x = {"falls": (1.0, 30.0, 0.1), "rises": (1.0, 0.001, 0.0265),
                   "jumps": (4.0, 0.001, 0.0357)}[scenario]
    rules = [rule(0.4, 0.6, F_P, num=1, exp=0, ms=1.0),
             rule(0.0, 0.1, F_Z, num=1, exp=0, ms=1e9)]
    rules += [rule(0.1 + 0.01 * k, 0.2, 2 * x, num=2, exp=100, ms=2.0) for k in range(3)]
    rules += [rule(0.5 + 0.01 * k, 0.9, 0.9, num=3, exp=100, ms=2.0) for k in range(10)]
    return rules


def np_votes(num, ms, F, exp, total, theta_del=20, delta=0.1):
    live = num > 0
    f_bar = F[live].sum() / total
    vote = ms * num
    low = live & (exp > theta_del) & (F / np.maximum(num, 1) < delta * f_bar)
    vote = np.where(low, vote * f_bar / (F / np.maximum(num, 1)), vote)
    return vote, low


@pytest.mark.parametrize("scenario", ["falls", "rises", "jumps"])
def test_deletion_inside_a_ga_event_uses_the_current_fbar(scenario):
    rules = ga_deletion_population(scenario)
    N = sum(r["num"] for r in rules)
    params = dict(N=N, chi=0.0, mu=1.0, m0=0.05, theta_del=20, delta=0.1)
    num0 = np.array([r["num"] for r in rules] + [1, 1])
    F_child = 0.1 * rules[0]["F"]  # 0.1 * F_parent / num_parent (no crossover)
    F0 = np.array([r["F"] for r in rules] + [F_child, F_child])
    ms0 = np.array([r["ms"] for r in rules] + [1.0, 1.0])
    exp0 = np.array([r["exp"] for r in rules] + [0, 0])
    # First deletion: child 1 present, child 2 not yet.
    num1 = num0.copy()
    num1[-1] = 0
    _, low1 = np_votes(num1, ms0, F0, exp0, N + 1)
    # Second deletion: Z gone, both children present.
    num2 = num0.copy()
    num2[1] = 0
    vote2, low2 = np_votes(num2, ms0, F0, exp0, N + 1)
    shares = vote2 / vote2.sum()
    L = [2, 3, 4]
    if scenario == "falls":
        assert low1[L].all() and not low2[L].any()
    else:
        assert not low1[L].any() and low2[L].all()
    draws = 1200
    counts = np.zeros(len(num0), int)
    for seed in range(draws):
        model = ga_model(rules, **params)
        seed_rng(seed)
        run_ga(model, [0])
        pop = model.pop
        P = int(pop.scal[S_P])
        assert P == len(rules) + 2  # both children are new rules (no compaction yet)
        assert int(pop.scal[S_TOTAL]) == N and int(pop.scal[S_DELETIONS]) == 2
        assert pop.counts.num[1] == 0, "the first deletion should have taken Z"
        after = pop.counts.num[:P].copy()
        lost = num2 - after
        assert lost.sum() == 1 and lost.min() == 0
        counts[int(np.argmax(lost))] += 1
    for i in range(len(num0)):
        assert binom_ok(counts[i], draws, shares[i]), (i, counts / draws, shares)
    assert binom_ok(counts[L].sum(), draws, shares[L].sum())

