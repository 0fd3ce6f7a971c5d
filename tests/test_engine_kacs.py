"""KACS engine against independent expectations (docs/algorithm.md sections 2, 3 and 4).

Every expected value here comes from a plain-numpy evaluation written from docs/algorithm.md sections 4 and 7, from finite
differences of that evaluation, or from a hand calculation; the compiled engine is only ever
the thing under test.
"""

import numpy as np
import pytest

from kacs_cli.engine import Hyperparameters, Model, train_run
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine.population import (
    S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_P, S_T, S_TOTAL,
)

from test_engine_support import (
    FIELDS, finish, kacs_step, np_accuracy, np_kacs_forward, put_rule, snapshot,
)


def rule_arrays(pop):
    snap = snapshot(pop)
    return snap["lo"][:, 0], snap["hi"][:, 0], snap["w"], snap["F"], snap["sub"]


# --------------------------------------------------------------------------------------------
# 1. One training step on a hand-built population: gradients, Adam, bookkeeping.
# --------------------------------------------------------------------------------------------

def build_gradient_case(model, rng, x, nq=5):
    """n = 2 and nq outer channels: every inner and outer submodel has matching rules and one
    rule that misses.

    Intervals keep a margin >= 0.04 around the point they match so that perturbing a weight
    by 1e-6 never changes a match set. Some stored pairs are reversed (reference semantics:
    the interval is [min, max]). Rules carry earlier Adam history (exp > 0, nonzero moments),
    one is a fresh GA child (exp = 0 with inherited moments).
    """
    n = 2
    s_in = n * nq
    pop = model.pop
    i = 0

    def add(lo_, hi_, sub, reversed_=False, child=False):
        nonlocal i
        exp = 0 if child else int(rng.integers(0, 6))
        has_history = exp > 0 or child
        m = rng.normal(0.0, 0.02, 2) if has_history else (0.0, 0.0)
        v = rng.uniform(1e-6, 1e-3, 2) if has_history else (0.0, 0.0)
        a, b = (hi_, lo_) if reversed_ else (lo_, hi_)
        put_rule(pop, i, a, b, rng.uniform(-1, 1, 2), rng.uniform(0.05, 1.0), sub=sub,
                 num=int(rng.integers(1, 4)), exp=exp, eps=rng.uniform(0.0, 0.03),
                 kappa=rng.uniform(0.1, 1.0), ms=rng.uniform(1.0, 10.0), ts=3, m=m, v=v)
        i += 1

    for s in range(s_in):
        z = x[s % n]
        n_match = 1 if s == 3 else 2
        for k in range(n_match):
            lo_ = max(0.0, z - rng.uniform(0.04, 0.4))
            hi_ = min(1.0, z + rng.uniform(0.04, 0.4))
            add(lo_, hi_, s, reversed_=(k == 1), child=(s == 5 and k == 0))
        # A rule of the same submodel that does not match.
        add(min(1.0, z + 0.05), min(1.0, z + 0.3), s, reversed_=(s % 2 == 0))
    # A rule of input 1's submodel (0, 1) whose interval holds x_0 but not x_1.
    add(0.30, 0.45, 1)
    P_inner = i
    inner = snapshot(pop, i)
    _, z, _, _ = np_kacs_forward(inner["lo"][:, 0], inner["hi"][:, 0], inner["w"], inner["F"],
                                 inner["sub"], x, n, nq)
    for q in range(nq):
        for k in range(3 if q != 2 else 1):
            add(z[q] - rng.uniform(0.05, 0.8), z[q] + rng.uniform(0.05, 0.8), s_in + q,
                reversed_=(k == 2))
        add(z[q] + 0.1, z[q] + 0.7, s_in + q, reversed_=(q % 2 == 1))
    return i, P_inner


# (alpha, nu, channels): the article's 2n + 1 = 5 channels (channels 0) and the relaxed
# structure with one and with three outer channels.
@pytest.mark.parametrize("alpha,nu,channels", [(1.0, 1.0, 0), (0.3, 2.0, 0), (1.0, 1.0, 1),
                                               (0.3, 2.0, 3)])
def test_one_step_matches_finite_differences_and_adam(alpha, nu, channels):
    n = 2
    nq = channels or 2 * n + 1
    hp_params = Hyperparameters(N=10_000, theta_GA=1e9, alpha=alpha, nu=nu, channels=channels)
    model = Model("kacs", n, hp_params)
    rng = np.random.default_rng(42)
    x = np.array([0.37, 0.62])
    P, _ = build_gradient_case(model, rng, x, nq)
    pop = model.pop
    finish(pop, P, t=7)
    before = snapshot(pop)
    lo, hi, w0, F, sub = rule_arrays(pop)

    psi, z, phi, yhat = np_kacs_forward(lo, hi, w0, F, sub, x, n, nq)
    assert z.shape == (nq,)
    y = yhat + 0.4  # a clear error so that every gradient is well away from zero

    def loss(w):
        return 0.5 * (y - np_kacs_forward(lo, hi, w, F, sub, x, n, nq)[3]) ** 2

    # Central differences: yhat is linear in any single weight (match sets fixed), so the
    # loss is quadratic in it and the central difference is exact up to rounding.
    h = 1e-6
    g_fd = np.zeros_like(w0)
    for k in range(P):
        for j in range(2):
            wp = w0.copy()
            wm = w0.copy()
            wp[k, j] += h
            wm[k, j] -= h
            g_fd[k, j] = (loss(wp) - loss(wm)) / (2 * h)

    # Match sets as docs/algorithm.md section 4 defines them.
    s_in = n * nq
    zin = np.where(sub < s_in, x[sub % n], z[np.clip(sub - s_in, 0, nq - 1)])
    active = (lo <= zin) & (zin <= hi)
    # Every submodel has a matching and a missing rule.
    assert np.array_equal(np.unique(sub[active]), np.arange((n + 1) * nq))
    assert np.array_equal(np.unique(sub[~active]), np.arange((n + 1) * nq))
    assert np.all(g_fd[~active] == 0.0)

    y_engine = kacs_step(model, x, y)
    assert y_engine == pytest.approx(yhat, rel=1e-12, abs=1e-12)

    after = snapshot(pop)
    assert int(pop.scal[S_P]) == P
    assert int(pop.scal[S_COVERS]) == 0
    assert int(pop.scal[S_T]) == 8

    b1, b2, eta, eps_adam = 0.9, 0.999, 0.001, 1e-8
    act = active
    # The gradient the engine used, read back from the first Adam moment.
    g_engine = (after["m"][act] - b1 * before["m"][act]) / (1 - b1)
    np.testing.assert_allclose(g_engine, g_fd[act], rtol=1e-6, atol=1e-10)

    # docs/algorithm.md section 4 closed form, as a second independent expectation.
    e = y - yhat
    g_spec = np.zeros_like(w0)
    for k in np.flatnonzero(act):
        s = sub[k]
        if s >= s_in:
            q = s - s_in
            mk = (sub == s) & active
            g_spec[k] = -e * F[k] / F[mk].sum() * np.array([1.0, z[q]])
        else:
            q, p = divmod(s, n)
            mq = (sub == s_in + q) & active
            s_q = np.sum(F[mq] * w0[mq, 1]) / F[mq].sum()
            mk = (sub == s) & active
            g_spec[k] = -e * s_q * F[k] / F[mk].sum() * np.array([1.0, x[p]])
    np.testing.assert_allclose(g_spec[act], g_fd[act], rtol=1e-6, atol=1e-10)

    # Exact Adam from the numerical gradient, rule-local step t_k = exp + 1.
    t_k = before["exp"][act] + 1
    m_new = b1 * before["m"][act] + (1 - b1) * g_fd[act]
    v_new = b2 * before["v"][act] + (1 - b2) * g_fd[act] ** 2
    m_hat = m_new / (1 - b1 ** t_k)[:, None]
    v_hat = v_new / (1 - b2 ** t_k)[:, None]
    w_new = before["w"][act] - eta * m_hat / (np.sqrt(v_hat) + eps_adam)
    np.testing.assert_allclose(after["m"][act], m_new, rtol=1e-6, atol=1e-13)
    np.testing.assert_allclose(after["v"][act], v_new, rtol=1e-6, atol=1e-16)
    np.testing.assert_allclose(after["w"][act], w_new, rtol=0, atol=1e-11)
    np.testing.assert_allclose(after["b1t"][act], b1 ** t_k, rtol=1e-12)
    np.testing.assert_allclose(after["b2t"][act], b2 ** t_k, rtol=1e-12)
    # The step really moved the weights (an engine that skipped Adam would fail above too).
    assert np.median(np.abs(after["w"][act] - before["w"][act])) > 1e-5

    # Bookkeeping of docs/algorithm.md section 4: exp, eps toward the SYSTEM error, ms, kappa, F per set.
    beta = 0.2
    assert np.array_equal(after["exp"][act], before["exp"][act] + 1)
    eps_new = before["eps"] + beta * (abs(y - yhat) - before["eps"])
    np.testing.assert_allclose(after["eps"][act], eps_new[act], rtol=1e-12)
    kappa_new = np_accuracy(eps_new, 0.01, alpha, nu)
    for s in range(s_in + nq):
        mk = (sub == s) & active
        set_num = before["num"][mk].sum()
        np.testing.assert_allclose(after["ms"][mk],
                                   before["ms"][mk] + beta * (set_num - before["ms"][mk]),
                                   rtol=1e-12)
        np.testing.assert_allclose(after["kappa"][mk], kappa_new[mk], rtol=1e-12)
        share = kappa_new[mk] * before["num"][mk] / np.sum(kappa_new[mk] * before["num"][mk])
        np.testing.assert_allclose(after["F"][mk], before["F"][mk] + beta * (share - before["F"][mk]),
                                   rtol=1e-12)
    assert pop.fsum[0] == pytest.approx(after["F"].sum(), rel=1e-12)

    # Rules outside every match set are untouched, field by field.
    for f in FIELDS:
        np.testing.assert_array_equal(after[f][~act], before[f][~act], err_msg=f)
    # Numerosities, bounds and submodels are not touched by an update.
    for f in ("a", "b", "lo", "hi", "num", "sub", "ts"):
        np.testing.assert_array_equal(after[f], before[f], err_msg=f)


# --------------------------------------------------------------------------------------------
# 2. Compiled prediction equals the plain-numpy evaluation.
# --------------------------------------------------------------------------------------------

def test_prediction_by_hand_with_empty_sets():
    """n = 1: three channels; only inner (1,1) and outer 1 have rules."""
    model = Model("kacs", 1, Hyperparameters(N=100))
    pop = model.pop
    # Inner (q=0, p=0), sub 0: [0, 0.5], stored reversed; P(z) = 1 + 2 z, F = 1.
    put_rule(pop, 0, 0.5, 0.0, (1.0, 2.0), 1.0, sub=0)
    # Inner sub 0, second rule on [0.25, 1]: P(z) = -1 + 0 z, F = 3.
    put_rule(pop, 1, 0.25, 1.0, (-1.0, 0.0), 3.0, sub=0)
    # Outer q = 0 (sub = n(2n+1) + 0 = 3): [1, 2], P(z) = 0.5 + z, F = 2 and a rule on
    # [-2, -0.5] with P(z) = 4 - z, F = 1.
    put_rule(pop, 2, 1.0, 2.0, (0.5, 1.0), 2.0, sub=3)
    put_rule(pop, 3, -0.5, -2.0, (4.0, -1.0), 1.0, sub=3)
    # Outer q = 2 (sub 5): matches z = 0 only (the channel with no inner rules).
    put_rule(pop, 4, -0.1, 0.1, (0.25, 7.0), 5.0, sub=5)
    finish(pop, 5)
    X = np.array([[0.1], [0.25], [0.75], [0.5]])
    psi, zh, ph, yh = model.predict_components(X)
    # x = 0.1: only rule 0 -> psi = 1.2; z0 = 1.2 -> outer rule 2 -> 1.7; channel 2: z = 0 -> 0.25
    # x = 0.25: rules 0 and 1: (1*1.5 + 3*(-1)) / 4 = -0.375 -> no outer match -> 0; + 0.25
    # x = 0.75: rule 1 only -> -1 -> outer rule 3: 4 + 1 = 5; + 0.25
    # x = 0.5: rules 0, 1: (1*2 + 3*(-1)) / 4 = -0.25 -> no outer match; + 0.25
    np.testing.assert_allclose(psi[:, 0, 0], [1.2, -0.375, -1.0, -0.25], rtol=1e-15)
    assert np.all(psi[:, 1:, :] == 0.0)
    np.testing.assert_allclose(zh, [[1.2, 0, 0], [-0.375, 0, 0], [-1.0, 0, 0], [-0.25, 0, 0]])
    np.testing.assert_allclose(ph, [[1.7, 0, 0.25], [0, 0, 0.25], [5.0, 0, 0.25], [0, 0, 0.25]],
                               rtol=1e-15)
    np.testing.assert_allclose(yh, [1.95, 0.25, 5.25, 0.25], rtol=1e-15)
    np.testing.assert_allclose(model.predict(X), yh, rtol=0, atol=0)


def compare_with_numpy(model, X):
    lo, hi, w, F, sub = rule_arrays(model.pop)
    n = model.n
    psi, zh, ph, yh = model.predict_components(X)
    y_plain = model.predict(X)
    np.testing.assert_array_equal(y_plain, yh)
    exp_psi = np.empty_like(psi)
    exp_z = np.empty_like(zh)
    exp_phi = np.empty_like(ph)
    exp_y = np.empty_like(yh)
    for r in range(X.shape[0]):
        exp_psi[r], exp_z[r], exp_phi[r], exp_y[r] = np_kacs_forward(lo, hi, w, F, sub, X[r], n)
    np.testing.assert_allclose(psi, exp_psi, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(zh, exp_z, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ph, exp_phi, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(yh, exp_y, rtol=1e-12, atol=1e-12)
    return exp_psi, exp_phi


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_prediction_of_trained_population_matches_numpy(semantics):
    n = 3
    rng = np.random.default_rng(5)
    X = rng.random((150, n))
    y = np.sin(3 * X[:, 0]) - X[:, 1] * X[:, 2]
    model = Model("kacs", n, Hyperparameters(N=300, semantics=semantics))
    model.train(X, y, 3000, seed=11)
    assert model.n_rules > 50
    X_new = rng.random((120, n))
    # Inputs sitting exactly on rule bounds: matching is inclusive at both ends.
    lo, hi, _, _, sub = rule_arrays(model.pop)
    inner = np.flatnonzero(sub < n * (2 * n + 1))[:40]
    edges = X_new[:40].copy()
    for r, k in enumerate(inner):
        edges[r, sub[k] % n] = (lo if r % 2 else hi)[k]
    compare_with_numpy(model, np.vstack([X_new, edges, X[:30]]))


def test_prediction_of_sparse_random_population_matches_numpy():
    """Narrow random intervals: many inner and outer match sets are empty (contribute 0)."""
    n = 3
    nq = 2 * n + 1
    n_sub = (n + 1) * nq
    s_in = n * nq
    model = Model("kacs", n, Hyperparameters(N=400))
    pop = model.pop
    rng = np.random.default_rng(8)
    P = 150
    for i in range(P):
        s = int(rng.integers(0, n_sub))
        if s < s_in:
            c = rng.random()
            a, b = np.clip([c - rng.uniform(0, 0.15), c + rng.uniform(0, 0.15)], 0, 1)
        else:
            c = rng.uniform(-2, 2)
            a, b = c - rng.uniform(0, 0.6), c + rng.uniform(0, 0.6)
        if rng.random() < 0.5:
            a, b = b, a
        put_rule(pop, i, a, b, rng.uniform(-1, 1, 2), rng.uniform(0.001, 1.0), sub=s,
                 num=int(rng.integers(1, 5)))
    finish(pop, P)
    X = rng.random((300, n))
    exp_psi, exp_phi = compare_with_numpy(model, X)
    # The case really exercises empty sets of both kinds, and non-empty ones.
    assert (exp_psi == 0).mean() > 0.2 and (exp_psi != 0).mean() > 0.2
    assert (exp_phi == 0).mean() > 0.2 and (exp_phi != 0).mean() > 0.05
    # Prediction is learning-free: the population is unchanged.
    before = snapshot(pop)
    model.predict(X)
    model.predict_components(X)
    after = snapshot(pop)
    for f in FIELDS:
        np.testing.assert_array_equal(after[f], before[f])


# --------------------------------------------------------------------------------------------
# 3. Covering (docs/algorithm.md section 3) in KACS.
# --------------------------------------------------------------------------------------------

def cover_all(semantics, P_hash=0.0, trials=120, r0=0.3, x=(0.05, 0.9)):
    """Trials of one training step on an empty population (every set covers).

    eta = 0 keeps the covering weights, beta = 0 keeps F, eps and ms at their initial values.
    Returns per trial the arrays of the 15 new rules and the inputs they were centred on.
    """
    n = 2
    params = Hyperparameters(N=10_000, theta_GA=1e9, eta=0.0, beta=0.0, r0=r0,
                             P_hash=P_hash, semantics=semantics)
    model = Model("kacs", n, params)
    pop = model.pop
    x = np.array(x)
    out = []
    seed_rng(123)
    for _ in range(trials):
        finish(pop, 0, t=17)
        kacs_step(model, x, 0.3)
        P = int(pop.scal[S_P])
        assert P == (n + 1) * (2 * n + 1)
        assert int(pop.scal[S_COVERS]) == 15
        assert int(pop.scal[S_COVERS_IN]) == 10
        assert int(pop.scal[S_COVERS_OUT]) == 5
        assert int(pop.scal[S_T]) == 18
        snap = snapshot(pop)
        assert sorted(snap["sub"]) == list(range(15))
        order = np.argsort(snap["sub"])
        out.append({f: v[order] for f, v in snap.items()})
    return x, out


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_covering_bounds_weights_and_bookkeeping(semantics):
    r0 = 0.3
    x, trials = cover_all(semantics, r0=r0)
    n = 2
    lows_at_zero = 0
    highs_at_one = 0
    outer_outside = 0
    reversed_pairs = 0
    all_w = []
    for snap in trials:
        lo, hi, a, b, w = snap["lo"][:, 0], snap["hi"][:, 0], snap["a"][:, 0], snap["b"][:, 0], snap["w"]
        np.testing.assert_array_equal(lo, np.minimum(a, b))
        np.testing.assert_array_equal(hi, np.maximum(a, b))
        # Bookkeeping of a covered rule: F = F_I, eps = 0, ms = 1, num = 1, ts = t; exp is 1
        # because the new rule joined the match set and was updated once (from exp = 0).
        assert np.all(snap["F"] == 0.01)
        assert np.all(snap["eps"] == 0.0)
        assert np.all(snap["ms"] == 1.0)
        assert np.all(snap["num"] == 1)
        assert np.all(snap["exp"] == 1)
        assert np.all(snap["ts"] == 17)
        np.testing.assert_allclose(snap["b1t"], 0.9)
        # Inner rules: around x_p within r0, clipped to [0, 1].
        for s in range(10):
            z = x[s % n]
            assert lo[s] < z < hi[s]
            assert lo[s] >= max(0.0, z - r0) and hi[s] <= min(1.0, z + r0)
        lows_at_zero += int(np.sum(lo[0:10:2] == 0.0))
        highs_at_one += int(np.sum(hi[1:10:2] == 1.0))
        # zhat_q from the covered inner rules (eta = 0: their weights are the covering ones;
        # one rule per set, so psi is simply its prediction).
        zq = np.array([sum(w[q * n + p, 0] + w[q * n + p, 1] * x[p] for p in range(n))
                       for q in range(5)])
        for q in range(5):
            k = 10 + q
            assert lo[k] < zq[q] < hi[k]
            assert lo[k] >= zq[q] - r0 - 1e-12 and hi[k] <= zq[q] + r0 + 1e-12
            outer_outside += int(lo[k] < 0.0 or hi[k] > 1.0)
        reversed_pairs += int(np.sum(a > b))
        all_w.append(w)
        if semantics == "reference":
            np.testing.assert_array_equal(w[:, 0], w[:, 1])
        else:
            assert np.all(w[:, 0] != w[:, 1])
    n_t = len(trials)
    # P(lower clipped) for x = 0.05, r0 = 0.3 is 1 - 0.05/0.3 = 0.83; P(upper clipped) for
    # x = 0.9 is 1 - 0.1/0.3 = 0.67.
    assert 0.75 < lows_at_zero / (5 * n_t) < 0.91
    assert 0.57 < highs_at_one / (5 * n_t) < 0.77
    # Outer rules are not clipped: with zhat outside [0, 1] their bounds are too.
    assert outer_outside > n_t
    w = np.concatenate(all_w)
    assert np.all(np.abs(w) <= 1.0)
    assert 0.5 < w.std() < 0.66 and abs(w.mean()) < 0.1
    if semantics == "reference":
        assert 0.4 < reversed_pairs / (15 * n_t) < 0.6
    else:
        assert reversed_pairs == 0


@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_covering_hash_applies_to_inner_rules_only(semantics):
    x, trials = cover_all(semantics, P_hash=1.0, trials=60)
    flipped = 0
    for snap in trials:
        lo, hi = snap["lo"][:, 0], snap["hi"][:, 0]
        assert np.all(lo[:10] == 0.0) and np.all(hi[:10] == 1.0)
        flipped += int(np.sum(snap["a"][:10, 0] == 1.0))
        # Outer: never the full range, always within r0 of zhat.
        assert np.all(hi[10:] - lo[10:] <= 0.6 + 1e-12)
    if semantics == "reference":
        assert 0.4 < flipped / (10 * len(trials)) < 0.6
    else:
        assert flipped == 0

    _, trials = cover_all(semantics, P_hash=0.5, trials=60)
    full = np.mean([np.mean((s["lo"][:10, 0] == 0.0) & (s["hi"][:10, 0] == 1.0)) for s in trials])
    assert 0.4 < full < 0.6


def test_covering_runs_deletion_and_the_budget_holds():
    """N = 10 < 15 covers: each covering is followed by deletion; the budget is never exceeded."""
    n = 2
    model = Model("kacs", n, Hyperparameters(N=10, theta_GA=1e9))
    pop = model.pop
    seed_rng(3)
    finish(pop, 0)
    kacs_step(model, [0.2, 0.7], 0.1)
    P = int(pop.scal[S_P])
    assert int(pop.scal[S_COVERS]) == 15
    assert int(pop.scal[S_TOTAL]) == 10 == int(pop.counts.num[:P].sum())
    assert P == 10 and np.all(pop.counts.num[:P] == 1)
    assert int(pop.scal[S_DELETIONS]) == 5


# --------------------------------------------------------------------------------------------
# 4. The per-phase profile (engine/cycles.py): counting cycles must not change a number. The
#    profiled runs are in test_bench.py, beside `kacs bench --profile`: one file, so one test
#    worker compiles the profile's specialisation of the engine.
# --------------------------------------------------------------------------------------------

def test_only_kacs_has_a_phase_profile():
    X = np.random.default_rng(13).random((40, 2))
    with pytest.raises(ValueError, match="phase profiles exist only for KACS"):
        train_run("xcsf", X, X[:, 0], None, None, params=Hyperparameters(N=100), iterations=100,
                  profile=True)
    with pytest.raises(ValueError, match="counts 5 phases, got a clock of 2"):
        Model("kacs", 2, Hyperparameters(N=100)).train(X, X[:, 0], 100, seed=0,
                                                      clock=np.zeros(2, np.int64))


def test_predict_in_blocks_gives_the_components_sum_for_every_row():
    from kacs_cli.engine.kacs_predict import PREDICT_BLOCK

    rng = np.random.default_rng(11)
    X = rng.random((300, 3))
    model = Model("kacs", 3, Hyperparameters(N=300, P_hash=0.5))
    model.train(X, np.sin(3 * X[:, 0]) - X[:, 2], 2000, 2)
    rows = rng.random((2 * PREDICT_BLOCK + 17, 3))  # two full blocks and a part
    _, _, _, y_all = model.predict_components(rows)
    assert np.array_equal(model.predict(rows), y_all)
