"""XCSF engine against independent expectations (docs/algorithm.md sections 2, 3 and 5)."""

import numpy as np
import pytest

from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine.population import S_COVERS, S_DELETIONS, S_P, S_T, S_TOTAL

from test_engine_support import (
    FIELDS, finish, np_accuracy, np_xcsf_predict, np_xcsf_rule_predictions, put_rule,
    snapshot, xcsf_step,
)


# --------------------------------------------------------------------------------------------
# Prediction
# --------------------------------------------------------------------------------------------

def test_prediction_by_hand():
    model = Model("xcsf", 2, Hyperparameters(N=50))
    pop = model.pop
    # A: [0, 0.5] x [0, 1], dimension 0 stored reversed; P = 1 + 2 (x1 - 0) - (x2 - 0); F = 2.
    put_rule(pop, 0, [0.5, 0.0], [0.0, 1.0], [1.0, 2.0, -1.0], 2.0)
    # B: [0.2, 1] x [0.1, 0.6], dimension 1 stored reversed; P = (x1 - 0.2) + (x2 - 0.1); F = 1.
    put_rule(pop, 1, [0.2, 0.6], [1.0, 0.1], [0.0, 1.0, 1.0], 1.0)
    finish(pop, 2)
    X = np.array([[0.3, 0.5], [0.9, 0.9], [0.5, 1.0], [0.2, 0.1]])
    # (0.3, 0.5): A: 1 + 0.6 - 0.5 = 1.1; B: 0.1 + 0.4 = 0.5 -> (2 * 1.1 + 0.5) / 3 = 0.9
    # (0.9, 0.9): nothing matches -> 0
    # (0.5, 1.0): A only (bounds inclusive): 1 + 1 - 1 = 1
    # (0.2, 0.1): A: 1 + 0.4 - 0.1 = 1.3; B at its lower corner: 0 -> (2.6 + 0) / 3
    np.testing.assert_allclose(model.predict(X), [0.9, 0.0, 1.0, 2.6 / 3], rtol=1e-15, atol=1e-15)


def population_arrays(model):
    snap = snapshot(model.pop)
    return snap["lo"], snap["hi"], snap["w"], snap["F"]


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_prediction_of_trained_population_matches_numpy(semantics):
    n = 3
    rng = np.random.default_rng(2)
    X = rng.random((150, n))
    y = np.sin(3 * X[:, 0]) - X[:, 1] * X[:, 2]
    model = Model("xcsf", n, Hyperparameters(N=300, semantics=semantics))
    model.train(X, y, 3000, seed=4)
    assert model.n_rules > 30
    lo, hi, w, F = population_arrays(model)
    X_new = rng.random((200, n))
    # Points exactly on rule corners (matching is inclusive).
    corners = np.vstack([lo[:30], hi[:30]])
    X_all = np.vstack([X_new, corners, X[:20]])
    raw = semantics == "article"
    np.testing.assert_allclose(model.predict(X_all), np_xcsf_predict(lo, hi, w, F, X_all, raw),
                               rtol=1e-12, atol=1e-12)


def test_prediction_of_random_population_matches_numpy():
    n = 3
    model = Model("xcsf", n, Hyperparameters(N=400))
    pop = model.pop
    rng = np.random.default_rng(9)
    P = 120
    for i in range(P):
        c = rng.random(n)
        a = np.clip(c - rng.uniform(0, 0.2, n), 0, 1)
        b = np.clip(c + rng.uniform(0, 0.2, n), 0, 1)
        flip = rng.random(n) < 0.5
        a, b = np.where(flip, b, a), np.where(flip, a, b)
        put_rule(pop, i, a, b, rng.uniform(-1, 1, n + 1), rng.uniform(0.001, 1), num=2)
    finish(pop, P)
    lo, hi, w, F = population_arrays(model)
    X = rng.random((400, n))
    expected = np_xcsf_predict(lo, hi, w, F, X)
    assert 0.05 < np.mean(expected == 0.0) < 0.9  # empty match sets occur, and matches too
    before = snapshot(pop)
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-12, atol=1e-12)
    after = snapshot(pop)
    for f in FIELDS:
        np.testing.assert_array_equal(after[f], before[f])


# --------------------------------------------------------------------------------------------
# One training iteration by hand (docs/algorithm.md section 5)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha,nu", [(1.0, 1.0), (0.4, 3.0)])
def test_one_step_by_hand(alpha, nu):
    n = 2
    params = Hyperparameters(N=1000, theta_GA=1e9, alpha=alpha, nu=nu, eta=0.01)
    model = Model("xcsf", n, params)
    pop = model.pop
    rng = np.random.default_rng(17)
    x = np.array([0.4, 0.7])
    y = 0.25
    # Four matching rules (one with a reversed stored pair, one fresh GA child with inherited
    # moments, eps below and above e0), one missing in dimension 1 only, one missing in both.
    specs = [
        ([0.1, 0.6], [0.5, 0.9], 0, None, None, 0.002),
        ([0.9, 0.2], [0.3, 1.0], 3, [0.01, -0.02, 0.03], [1e-4, 2e-4, 5e-5], 0.05),
        ([0.0, 0.0], [1.0, 1.0], 0, [0.02, 0.01, -0.01], [3e-4, 1e-4, 1e-4], 0.02),
        ([0.4, 0.7], [0.4, 0.7], 7, [-0.01, 0.0, 0.01], [1e-5, 1e-5, 1e-5], 0.0099),
        ([0.3, 0.75], [0.5, 0.9], 2, None, None, 0.3),
        ([0.5, 0.0], [0.9, 0.5], 4, None, None, 0.01),
    ]
    for i, (a, b, exp, m, v, eps) in enumerate(specs):
        put_rule(pop, i, a, b, rng.uniform(-1, 1, n + 1), rng.uniform(0.05, 0.9),
                 num=int(rng.integers(1, 4)), exp=exp, eps=eps, ms=rng.uniform(1, 9), ts=5,
                 m=m, v=v)
    # Rule 0 predicts y exactly before the update, so that its error stays below e0.
    w = pop.weights.w
    w[0, 0] = y - w[0, 1] * (x[0] - 0.1) - w[0, 2] * (x[1] - 0.6)
    finish(pop, len(specs), t=9)
    before = snapshot(pop)

    count = xcsf_step(model, x, y)
    after = snapshot(pop)
    assert count == 4
    assert int(pop.scal[S_P]) == len(specs) and int(pop.scal[S_COVERS]) == 0
    assert int(pop.scal[S_T]) == 10

    lo, hi = before["lo"], before["hi"]
    match, pred = np_xcsf_rule_predictions(lo, hi, before["w"], x)
    assert match.tolist() == [True, True, True, True, False, False]
    b1, b2, eta, eps_adam, beta = 0.9, 0.999, 0.01, 1e-8, 0.2
    t_k = before["exp"][match] + 1
    basis = np.hstack([np.ones((4, 1)), x - lo[match]])
    g = -(y - pred[match])[:, None] * basis
    m_new = b1 * before["m"][match] + (1 - b1) * g
    v_new = b2 * before["v"][match] + (1 - b2) * g ** 2
    w_new = before["w"][match] - eta * (m_new / (1 - b1 ** t_k)[:, None]) / (
        np.sqrt(v_new / (1 - b2 ** t_k)[:, None]) + eps_adam)
    np.testing.assert_allclose(after["m"][match], m_new, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(after["v"][match], v_new, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(after["w"][match], w_new, rtol=1e-12, atol=1e-14)
    assert np.array_equal(after["exp"][match], t_k)
    # eps toward |y - P(x)| with the UPDATED weights.
    pred_new = np.sum(w_new * basis, axis=1)
    eps_new = before["eps"][match] + beta * (np.abs(y - pred_new) - before["eps"][match])
    np.testing.assert_allclose(after["eps"][match], eps_new, rtol=1e-12)
    set_num = before["num"][match].sum()
    np.testing.assert_allclose(after["ms"][match],
                               before["ms"][match] + beta * (set_num - before["ms"][match]),
                               rtol=1e-12)
    kappa = np_accuracy(eps_new, 0.01, alpha, nu)
    assert kappa.max() == 1.0 and kappa.min() < 1.0  # both branches of the accuracy
    np.testing.assert_allclose(after["kappa"][match], kappa, rtol=1e-12)
    share = kappa * before["num"][match] / np.sum(kappa * before["num"][match])
    np.testing.assert_allclose(after["F"][match],
                               before["F"][match] + beta * (share - before["F"][match]), rtol=1e-12)
    assert pop.fsum[0] == pytest.approx(after["F"].sum(), rel=1e-12)
    for f in FIELDS:
        np.testing.assert_array_equal(after[f][~match], before[f][~match], err_msg=f)
    for f in ("a", "b", "lo", "hi", "num", "ts"):
        np.testing.assert_array_equal(after[f], before[f], err_msg=f)


def test_ga_runs_when_numerosity_weighted_timestamp_is_older_than_theta_ga():
    """GA iff t - sum(num ts) / sum(num) > theta_GA; it first sets ts = t on the match set."""
    n = 1
    params = Hyperparameters(N=1000, theta_GA=50, mu=0.0, chi=0.0, do_subsumption=False)
    for t, ga in [(60, False), (61, True)]:
        model = Model("xcsf", n, params)
        pop = model.pop
        put_rule(pop, 0, [0.0], [1.0], [0.0, 0.0], 0.5, num=3, ts=0)
        put_rule(pop, 1, [0.2], [0.8], [0.0, 0.0], 0.5, num=1, ts=40)
        put_rule(pop, 2, [0.6], [0.9], [0.0, 0.0], 0.5, num=2, ts=0)  # not in the match set
        finish(pop, 3, t=t)
        seed_rng(1)
        xcsf_step(model, [0.5], 0.0)
        # Mean time stamp (3*0 + 1*40) / 4 = 10; t - 10 = 50 is not > 50, 51 is.
        snap = snapshot(pop)
        if ga:
            assert snap["ts"][:2].tolist() == [t, t]
            # chi = mu = 0: both children are copies and merge into their parents.
            assert int(pop.scal[S_TOTAL]) == 8 and int(pop.scal[S_P]) == 3
        else:
            assert snap["ts"][:2].tolist() == [0, 40]
            assert int(pop.scal[S_TOTAL]) == 6
        assert snap["ts"][2] == 0


# --------------------------------------------------------------------------------------------
# Covering (docs/algorithm.md section 3)
# --------------------------------------------------------------------------------------------

def cover_trials(semantics, P_hash=0.0, trials=300, r0=0.2, x=(0.02, 0.5, 0.97)):
    n = len(x)
    params = Hyperparameters(N=1000, theta_GA=1e9, eta=0.0, beta=0.0, r0=r0, P_hash=P_hash,
                             semantics=semantics)
    model = Model("xcsf", n, params)
    pop = model.pop
    seed_rng(77)
    out = []
    for _ in range(trials):
        finish(pop, 0, t=23)
        count = xcsf_step(model, x, 0.5)
        assert count == 1
        assert int(pop.scal[S_P]) == 1 and int(pop.scal[S_COVERS]) == 1
        out.append(snapshot(pop))
    return np.array(x), out


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_covering(semantics):
    r0 = 0.2
    x, trials = cover_trials(semantics, r0=r0)
    lo = np.array([s["lo"][0] for s in trials])
    hi = np.array([s["hi"][0] for s in trials])
    a = np.array([s["a"][0] for s in trials])
    b = np.array([s["b"][0] for s in trials])
    w = np.array([s["w"][0] for s in trials])
    np.testing.assert_array_equal(lo, np.minimum(a, b))
    np.testing.assert_array_equal(hi, np.maximum(a, b))
    assert np.all(lo <= x) and np.all(x <= hi)
    assert np.all(lo >= np.maximum(0.0, x - r0)) and np.all(hi <= np.minimum(1.0, x + r0))
    # Not clipped where there is room: strictly around x in the middle dimension.
    assert np.all(lo[:, 1] < 0.5) and np.all(hi[:, 1] > 0.5)
    # Clipping to [0, 1]: P(lower clipped) at 0.02 is 0.9, P(upper clipped) at 0.97 is 0.85.
    assert 0.85 < np.mean(lo[:, 0] == 0.0) < 0.95
    assert 0.79 < np.mean(hi[:, 2] == 1.0) < 0.91
    # Spread U(0, r0]: the middle dimension's offsets fill (0, r0] uniformly.
    off = np.concatenate([0.5 - lo[:, 1], hi[:, 1] - 0.5])
    assert off.max() > 0.95 * r0 and off.min() < 0.05 * r0 and abs(off.mean() - r0 / 2) < 0.015
    for s in trials:
        assert s["F"][0] == 0.01 and s["eps"][0] == 0.0 and s["ms"][0] == 1.0
        assert s["num"][0] == 1 and s["ts"][0] == 23
        assert s["exp"][0] == 1  # joined the match set and was updated once from exp = 0
    assert np.all(np.abs(w) <= 1.0)
    if semantics == "reference":
        assert np.all(w == w[:, :1])  # one value for every weight of the rule
        assert 0.42 < np.mean(a > b) < 0.58
    else:
        assert np.all(w[:, 1:] != w[:, :1])
        # i.i.d. weights: no correlation between w0 and w1
        assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 0.2
        assert np.all(a <= b)
    assert 0.5 < w.std() < 0.66


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_covering_hash(semantics):
    x, trials = cover_trials(semantics, P_hash=1.0, trials=100)
    for s in trials:
        assert np.all(s["lo"][0] == 0.0) and np.all(s["hi"][0] == 1.0)
    flipped = np.mean([s["a"][0] == 1.0 for s in trials])
    if semantics == "reference":
        assert 0.38 < flipped < 0.62
    else:
        assert flipped == 0.0
    _, trials = cover_trials(semantics, P_hash=0.5, trials=200)
    full = np.mean([(s["lo"][0] == 0.0) & (s["hi"][0] == 1.0) for s in trials])
    assert 0.42 < full < 0.58


def test_covering_is_followed_by_deletion():
    n = 2
    model = Model("xcsf", n, Hyperparameters(N=3, theta_GA=1e9))
    pop = model.pop
    for i in range(3):
        put_rule(pop, i, [0.0, 0.0], [0.1, 0.1], [0.0, 0.0, 0.0], 0.3, ms=5.0)
    finish(pop, 3)
    seed_rng(0)
    xcsf_step(model, [0.5, 0.5], 0.0)
    P = int(pop.scal[S_P])
    assert int(pop.scal[S_COVERS]) == 1 and int(pop.scal[S_DELETIONS]) == 1
    assert int(pop.scal[S_TOTAL]) == 3 == int(pop.counts.num[:P].sum())
    assert np.all(pop.counts.num[:P] >= 1)
