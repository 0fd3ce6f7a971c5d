"""Population invariants after every single iteration of long, busy runs (small N so that
covering, the GA, subsumption and deletion all work hard), and reproducibility."""

import numpy as np
import pandas as pd
import pytest
from numba import njit

from kacs_cli.engine import Hyperparameters, Model, train_run
from kacs_cli.engine import identical, row_index
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine.population import S_COVERS, S_DELETIONS, S_P, S_T, S_TOTAL

from test_engine_support import FIELDS, canonical, snapshot, step


def f3_like(X):
    """A scaled f3 (docs/algorithm.md section 8) on [0, 1]^n, mapped to roughly [-1, 1]."""
    zeta = 2 * X - 1
    h = X.shape[1] // 2
    a = zeta[:, :h].mean(axis=1)
    b = zeta[:, h:].mean(axis=1)
    f = np.maximum.reduce([np.exp(-10 * a ** 2), np.exp(-50 * b ** 2),
                           1.25 * np.exp(-5 * (a ** 2 + b ** 2))])
    return 2 * (f - f.min()) / (f.max() - f.min()) - 1


def data(n=3, rows=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    return X, f3_like(X)


def assert_equal(actual, expected):
    """np.testing.assert_array_equal, its report built only on a mismatch: the checks below run
    after every iteration of long runs, where building it each time costs more than the run."""
    if not np.array_equal(actual, expected):
        np.testing.assert_array_equal(actual, expected)


def check_invariants(model, N, t):
    pop = model.pop
    snap = snapshot(pop)
    P = int(pop.scal[S_P])
    num = snap["num"]
    assert P <= N
    assert np.all(num >= 1), "a rule with num = 0 survived the end of the iteration"
    # Without covering's deletion (the article) the population may exceed N up to 2N.
    limit = 2 * N if model.params.follows_article("article_cover_deletion") else N
    assert int(num.sum()) == int(pop.scal[S_TOTAL]) <= limit
    assert int(pop.scal[S_T]) == t
    a, b, lo, hi = snap["a"], snap["b"], snap["lo"], snap["hi"]
    assert_equal(lo, np.minimum(a, b))
    assert_equal(hi, np.maximum(a, b))
    sub = snap["sub"]
    if model.method == "kacs":
        n = model.n
        s_in = n * (2 * n + 1)
        assert np.all((sub >= 0) & (sub < (n + 1) * (2 * n + 1)))
        inner = sub < s_in
        assert np.all(lo[inner] >= 0.0) and np.all(hi[inner] <= 1.0)
        assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
    else:
        assert np.all(sub == 0)
        assert np.all(lo >= 0.0) and np.all(hi <= 1.0)
    if model.params.follows_article("article_intervals"):
        assert np.all(a <= b)
    F = snap["F"]
    assert np.all(F > 0.0)
    assert pop.fsum[0] == pytest.approx(F.sum(), rel=1e-9)
    assert np.all(np.isfinite(snap["w"])) and np.all(np.isfinite(snap["m"]))
    assert np.all(snap["v"] >= 0.0)
    assert np.all(snap["eps"] >= 0.0)
    assert np.all((snap["kappa"] > 0.0) & (snap["kappa"] <= 1.0))
    assert np.all(snap["ms"] > 0.0)
    assert np.all(snap["exp"] >= 0)
    assert np.all(snap["ts"] <= t) and np.all(snap["ts"] >= 0)
    # The Adam step count is rule-local: beta1^t with t = number of updates = exp.
    if not np.allclose(snap["b1t"], 0.9 ** snap["exp"], rtol=1e-9, atol=0):
        np.testing.assert_allclose(snap["b1t"], 0.9 ** snap["exp"], rtol=1e-9)
    check_antecedent_index(model)
    return snap


def check_antecedent_index(model):
    """While the antecedent index of find_identical is in use, every slot's key is the key of
    the rule now in it (as a fresh rebuild computes it), and equal antecedents have equal keys."""
    sc = model.scratch
    if sc.key_state[0] == 0:
        return
    P = int(model.pop.scal[S_P])
    fresh = sc._replace(key=sc.key.copy(), key_state=sc.key_state.copy())
    identical.rebuild_keys(model.pop, fresh)
    assert_equal(sc.key[:P], fresh.key[:P])
    if P == 0:
        return
    pop = model.pop
    # Each rule's antecedent (submodel, pairs; -0.0 read as 0.0) numbered: np.unique over rows.
    antecedents = np.hstack([pop.counts.sub[:P, None].astype(np.float64), pop.pairs.a[:P] + 0.0,
                             pop.pairs.b[:P] + 0.0])
    group = np.unique(antecedents, axis=0, return_inverse=True)[1].ravel()
    order = np.argsort(group, kind="stable")
    group, keys = group[order], sc.key[:P][order]
    same = group[1:] == group[:-1]
    assert np.array_equal(keys[1:][same], keys[:-1][same])  # one key per antecedent
    first_keys = keys[np.concatenate([[True], ~same])]
    assert len(np.unique(first_keys)) == len(first_keys)  # distinct antecedents, distinct keys


@pytest.mark.parametrize("semantics, method", [
    ("reference", "kacs"),
    *[pytest.param(s, m, marks=pytest.mark.slow)
      for s, m in [("reference", "xcsf"), ("article", "kacs"), ("article", "xcsf")]],
])
def test_invariants_after_every_iteration(method, semantics):
    n = 3
    iterations = 3000
    X, y = data(n)
    if method == "kacs":
        params = Hyperparameters(N=300, semantics=semantics)
    else:
        # XCSF has one match set per iteration: a smaller spread and faster GA/deletion
        # thresholds keep it as busy as KACS.
        params = Hyperparameters(N=150, theta_GA=5, theta_del=20, theta_sub=20, r0=0.3,
                                 semantics=semantics)
    N = params.N
    model = Model(method, n, params)
    seed_rng(7)
    rng = np.random.default_rng(1)
    order = rng.permutation(len(X))
    reversed_seen = False
    max_rules = 0
    for it in range(iterations):
        r = order[it % len(X)]
        step(model, X[r], y[r])
        snap = check_invariants(model, N, it + 1)
        reversed_seen |= bool(np.any(snap["a"] > snap["b"]))
        max_rules = max(max_rules, len(snap["F"]))
    pop = model.pop
    deletions = int(pop.scal[S_DELETIONS])
    covers = int(pop.scal[S_COVERS])
    ga_micro = int(pop.scal[S_TOTAL]) - covers + deletions  # offspring incl. subsumed ones
    # The run really exercised the budget, deletion and the GA.
    if semantics == "reference":
        assert int(pop.scal[S_TOTAL]) == N
    else:
        assert N <= int(pop.scal[S_TOTAL]) <= 2 * N
    assert deletions > 1000 and ga_micro > 1000, (deletions, ga_micro, covers)
    assert max_rules > 50
    if semantics == "reference":
        assert reversed_seen
    if method == "xcsf":  # KACS finds identical rules in the child's segment, without keys
        assert model.scratch.key_state[0] == 1   # the index was in use throughout


def test_antecedent_index_follows_the_population_through_the_driver():
    """XCSF's driver loop keeps the index consistent across training calls. (KACS finds an
    identical rule among its submodel's segment instead, and keeps no index while training:
    tests/test_engine_layout.py.)"""
    X, y = data(3, rows=200, seed=2)
    params = Hyperparameters(N=150, theta_GA=5, theta_del=20, theta_sub=20, r0=0.3)
    model = Model("xcsf", 3, params)
    for iterations in (2050, 777):
        model.train(X, y, iterations, seed=iterations)
        assert model.scratch.key_state[0] == 1
        check_antecedent_index(model)


# --------------------------------------------------------------------------------------------
# Reproducibility
# --------------------------------------------------------------------------------------------

def run(method, seed, semantics="reference", iterations=2500):
    X, y = data(3, rows=160, seed=3)
    Xt, yt = data(3, rows=40, seed=4)
    return train_run(method, X, y, Xt, yt,
                     params=Hyperparameters(N=300, semantics=semantics),
                     iterations=iterations, eval_every=500, seed=seed)


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
@pytest.mark.parametrize("semantics", ["reference", "article"])
def test_same_seed_same_run_different_seed_different_run(method, semantics):
    r1 = run(method, 5, semantics)
    r2 = run(method, 5, semantics)
    pd.testing.assert_frame_equal(r1.curve, r2.curve)
    pd.testing.assert_frame_equal(r1.population, r2.population)
    assert {k: v for k, v in r1.final.items()} == pytest.approx(dict(r2.final), nan_ok=True)
    assert len(r1.curve) == 5 and r1.curve["iteration"].tolist() == [500, 1000, 1500, 2000, 2500]
    r3 = run(method, 6, semantics)
    assert not r3.population.equals(r1.population)
    assert not r3.curve["train_mae"].equals(r1.curve["train_mae"])


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_evaluation_does_not_touch_learning(method):
    """Evaluating after every iteration gives exactly the run that evaluates once."""
    X, y = data(3, rows=100, seed=8)
    params = Hyperparameters(N=200)
    m1 = Model(method, 3, params)
    m1.train(X, y, 1500, seed=3, eval_every=1)
    m2 = Model(method, 3, params)
    m2.train(X, y, 1500, seed=3)
    s1, s2 = snapshot(m1.pop), snapshot(m2.pop)
    for f in FIELDS:
        np.testing.assert_array_equal(s1[f], s2[f], err_msg=f)


@njit(cache=True)
def _numba_permutation(rows):
    return np.random.permutation(rows)


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
@pytest.mark.parametrize("semantics", ["reference", "article", "article_reshuffle"])
def test_training_order(method, semantics):
    """docs/algorithm.md section 1: one random order drawn from the learner seed; reference semantics repeats it
    every epoch, article semantics (or its switch article_reshuffle alone) draws a new one
    every epoch.

    Replays Model.train by hand: seed, draw the order with the same (numba) generator and
    step through it. With the GA off and no deletion the only other random draws are the
    covering ones, so the slot order of the rules (which the driver may rearrange for speed)
    cannot change the trajectory: the populations must agree rule for rule. The replay with
    the other epoch rule must not (the test can tell the two apart).
    """
    rows = 40
    X, y = data(3, rows=rows, seed=12)
    switch = {"semantics": semantics} if semantics != "article_reshuffle" else {semantics: True}
    params = Hyperparameters(N=100_000, theta_GA=1e9, r0=0.2, **switch)
    iterations = 5 * rows + 7
    trained = Model(method, 3, params)
    trained.train(X, y, iterations, seed=21)

    def replay(new_order_each_epoch):
        model = Model(method, 3, params)
        seed_rng(21)
        order = _numba_permutation(rows)
        for it in range(iterations):
            pos = it % rows
            if pos == 0 and it > 0 and new_order_each_epoch:
                order = _numba_permutation(rows)
            r = order[pos]
            step(model, X[r], y[r])
        return canonical(snapshot(model.pop))

    def same(p, q):
        return len(p["F"]) == len(q["F"]) and all(
            np.allclose(p[f], q[f], rtol=1e-9, atol=1e-12) for f in FIELDS)

    article = semantics != "reference"
    got = canonical(snapshot(trained.pop))
    good = replay(article)
    for f in FIELDS:
        np.testing.assert_allclose(got[f], good[f], rtol=1e-9, atol=1e-12, err_msg=f)
    assert int(trained.pop.scal[S_COVERS]) > 20
    assert not same(got, replay(not article))


# --------------------------------------------------------------------------------------------
# XCSF's row index (row_index.py): match sets looked up instead of tested
# --------------------------------------------------------------------------------------------

def check_row_index(model, X):
    """Every row's rule set and every rule's row set equal the bound tests, rule by rule."""
    rx = model.row_index
    P = int(model.pop.scal[S_P])
    snap = snapshot(model.pop)
    lo, hi = snap["lo"], snap["hi"]
    match = np.all((lo[None, :, :] <= X[:, None, :]) & (X[:, None, :] <= hi[None, :, :]), axis=2)
    rows = np.unpackbits(rx.rows.view(np.uint8), axis=1, bitorder="little")
    np.testing.assert_array_equal(rows[:, :P].astype(bool), match)
    assert not rows[:, P:].any()
    masks = np.unpackbits(rx.mask.view(np.uint8), axis=1, bitorder="little")
    np.testing.assert_array_equal(masks[:P, :len(X)].astype(bool), match.T)


def test_row_index_follows_the_population_after_every_iteration():
    n = 16
    X, y = data(n, rows=120, seed=5)
    params = Hyperparameters(N=200, theta_GA=5, theta_del=20, theta_sub=20, r0=0.6)
    model = Model("xcsf", n, params)
    model.learner.prepare(model, X)
    assert model.row_index.state[0] == 1
    row_index.rx_build(model.pop, model.row_index)
    seed_rng(3)
    order = np.random.default_rng(0).permutation(len(X))
    for it in range(1500):
        r = int(order[it % len(X)])
        x = np.ascontiguousarray(X[r])
        xcsf_train_step(model, x, y[r], r)
        if it % 10 == 0 or it > 1450:
            check_row_index(model, X)
    assert int(model.pop.scal[S_DELETIONS]) > 500


def test_row_index_matches_a_row_on_either_bound():
    """Rule bounds on values the columns hold, many rows tied on each: a row whose value equals
    lo or hi is inside (lo <= x <= hi), also for a rule with lo = hi."""
    n, P = 16, 48
    rng = np.random.default_rng(8)
    levels = np.array([0.0, 0.25, 0.5, 1.0])
    X = levels[rng.integers(0, 4, size=(80, n))]
    model = Model("xcsf", n, Hyperparameters(N=200))
    model.learner.prepare(model, X)
    assert model.row_index.state[0] == 1
    lo, hi = model.pop.bounds.lo, model.pop.bounds.hi
    lo[:, :P], hi[:, :P] = 0.0, 1.0
    for d in range(3):  # three inputs bounded on levels, the rest open
        a, b = levels[rng.integers(0, 4, size=P)], levels[rng.integers(0, 4, size=P)]
        lo[d, :P], hi[d, :P] = np.minimum(a, b), np.maximum(a, b)
    lo[:3, 0] = hi[:3, 0] = 0.25
    model.pop.scal[S_P] = P
    row_index.rx_build(model.pop, model.row_index)
    check_row_index(model, X)
    on_bound = (X[:, None, :3] == lo[None, :3, :P].transpose(0, 2, 1)) | (X[:, None, :3] == hi[None, :3, :P].transpose(0, 2, 1))
    inside = np.all((lo[:, :P].T[None] <= X[:, None]) & (X[:, None] <= hi[:, :P].T[None]), axis=2)
    assert (inside & on_bound.any(axis=2)).sum() > 100 and inside[:, 0].any() and not inside.all()


def xcsf_train_step(model, x, y, row):
    from kacs_cli.engine import xcsf
    return xcsf.train_step(model.pop, model.members, model.match_flags, x, float(y), model.hp,
                           model.scratch, model.row_index, row)


def test_row_index_changes_no_result(monkeypatch):
    """A run with the index equals, bit for bit, the run that tests bounds."""
    from kacs_cli.engine import xcsf as xcsf_module
    X, y = data(16, rows=150, seed=6)
    Xt, yt = data(16, rows=50, seed=7)
    params = Hyperparameters(N=400, theta_GA=5, theta_del=20, theta_sub=20, r0=0.6)
    runs = []
    for threshold in (16, 10**6):
        monkeypatch.setattr(xcsf_module, "ROW_INDEX_MIN_INPUTS", threshold)
        model = Model("xcsf", 16, params)
        raw = model.train(X, y, 3000, 4, X_test=Xt, y_test=yt, eval_every=500)
        assert model.row_index.state[0] == (1 if threshold == 16 else 0)
        runs.append((raw, model.population_frame()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    pd.testing.assert_frame_equal(runs[0][1], runs[1][1])
    assert len(runs[0][1]) > 50


def test_trailing_zeros_is_the_position_of_the_lowest_set_bit():
    # Against Python's own integers: every single bit, and random words with their lowest bit
    # at every position (the de Bruijn table must give each of the 64 positions).
    from kacs_cli.engine.row_index import trailing_zeros

    rng = np.random.default_rng(7)
    for k in range(64):
        for word in [1 << k, *((int(v) | 1) << k & (2**64 - 1) for v in rng.integers(0, 2**63, 20))]:
            assert int(trailing_zeros(np.uint64(word))) == (word & -word).bit_length() - 1 == k


@pytest.mark.parametrize("n, semantics", [(3, "reference"), (3, "article"), (16, "reference")])
def test_xcsf_votes_kept_across_iterations_draw_as_recounted_votes(n, semantics):
    """XCSF keeps deletion's votes from one GA phase to the next (deletion.keep_votes_after_*):
    a run that does equals, bit for bit, the same run made to recount every vote at each GA
    phase's first deletion (the votes forgotten before every iteration); n = 16 looks its match
    sets up in the row index (a second compaction path)."""
    from kacs_cli.engine import deletion
    X, y = data(n, rows=200, seed=3)
    # delta 0.5 makes many rules low-fitness deletion candidates; at n = 16, rules that do not
    # care about half their inputs keep covering (which forgets the votes) rare.
    wide = {} if n == 3 else {"r0": 0.6, "P_hash": 0.5}
    params = Hyperparameters(N=150, theta_GA=5, theta_del=20, theta_sub=20, delta=0.5,
                             semantics=semantics, **({"r0": 0.3} | wide))
    models = [Model("xcsf", n, params) for _ in range(2)]
    for model in models:
        if n == 16:
            model.learner.prepare(model, X)
            assert model.row_index.state[0] == 1
    rng = np.random.default_rng(2)
    order = rng.permutation(len(X))
    kept = 0
    candidates = 0
    for which, model in enumerate(models):
        seed_rng(11)
        for it in range(3000):
            r = order[it % len(X)]
            if which == 1:
                deletion.forget_votes(model.scratch)
            else:
                kept += int(model.scratch.del_state[deletion.D_VALID])
                candidates = max(candidates, int(model.scratch.del_state[deletion.D_N_CAND]))
            xcsf_train_step(model, X[r], y[r], r if n == 16 else -1)
    # The votes were kept through most of the run, not recounted at every phase, with
    # low-fitness candidates among them.
    assert kept > 1500 and candidates > 0
    assert int(models[0].pop.scal[S_DELETIONS]) > 1000
    pd.testing.assert_frame_equal(models[0].population_frame(), models[1].population_frame())
    assert models[0].pop.fsum[0] == models[1].pop.fsum[0]
