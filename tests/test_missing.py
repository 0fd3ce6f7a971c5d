"""Missing input values (NaN) in both learners and every front end (docs/algorithm.md section 12,
"Missing input values"): a missing input matches every rule on it, a matched rule reads it at
its interval's centre, covering builds the full range; scaling, refinement, compaction and the
command line pass it through; a missing target is refused; complete data give what they gave.

Expected values come from hand calculations, a plain-numpy evaluation of the rule written from
the documentation, finite differences, or the prediction path of the engine; on complete data,
from stored predictions that the missing-value rule must not move.
"""

import copy

import numpy as np
import pandas as pd
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine import Hyperparameters, Model, train_run, xcsf
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine import bagging
from kacs_cli.engine.kacs_predict import values_at_missing
from kacs_cli.engine.refine import Objective, design
from kacs_cli.estimators.inspection import submodel_table
from kacs_cli.estimators.persistence import load_model, read_metadata, save
from kacs_cli.errors import UserError
from kacs_cli.experiments.data.protocols import make_split
from kacs_cli.scaling import InputTransform, input_ranges, scale_inputs

from cli_support import run_kacs
from test_engine_support import finish, kacs_step, put_rule, snapshot, xcsf_step

NAN = np.nan


# --------------------------------------------------------------------------------------------
# KACS: prediction by hand, a training step against finite differences, covering
# --------------------------------------------------------------------------------------------

def kacs_by_hand_model():
    """n = 2 inputs, one outer channel: inner (1,1) is submodel 0, inner (1,2) submodel 1, the
    outer function submodel 2."""
    model = Model("kacs", 2, Hyperparameters(N=100, channels=1, theta_GA=1e9))
    pop = model.pop
    put_rule(pop, 0, 0.6, 0.2, (1.0, 2.0), 1.0, sub=0)     # [0.2, 0.6] stored reversed, centre 0.4
    put_rule(pop, 1, 0.5, 1.0, (-1.0, 4.0), 3.0, sub=0)    # [0.5, 1], centre 0.75
    put_rule(pop, 2, 0.0, 0.4, (0.5, -1.0), 2.0, sub=1)    # [0, 0.4], centre 0.2
    put_rule(pop, 3, -10.0, 10.0, (0.1, 1.0), 1.0, sub=2)  # Phi(z) = 0.1 + z
    finish(pop, 4)
    return model


def test_kacs_prediction_by_hand_with_missing_inputs():
    model = kacs_by_hand_model()
    X = np.array([[NAN, 0.3], [0.1, NAN], [NAN, NAN], [0.55, 0.3]])
    psi, zhat, phi, y_hat = model.predict_components(X)
    # x1 missing: both rules of (1,1) match, at their centres: (1 (1 + 2 0.4) + 3 (-1 + 4 0.75)) / 4
    # = 1.95; x2 = 0.3: 0.5 - 0.3 = 0.2.   x1 = 0.1 matches nothing (0); x2 missing: 0.5 - 0.2 = 0.3.
    # Complete row: (1 (1 + 1.1) + 3 (-1 + 2.2)) / 4 = 1.425 and 0.2.
    np.testing.assert_allclose(psi[:, 0, :], [[1.95, 0.2], [0.0, 0.3], [1.95, 0.3], [1.425, 0.2]],
                               rtol=1e-15, atol=0)
    np.testing.assert_allclose(zhat[:, 0], [2.15, 0.3, 2.25, 1.625], rtol=1e-15)
    np.testing.assert_allclose(y_hat, [2.25, 0.4, 2.35, 1.725], rtol=1e-15)
    np.testing.assert_array_equal(model.predict(X), y_hat)
    assert np.all(np.isfinite(phi))


def np_forward(lo, hi, w, F, sub, x, n, nq):
    """The documented two stages with the missing-input rule, in plain numpy: (zhat, yhat)."""
    s_in = n * nq
    psi = np.zeros(s_in)
    for s in range(s_in):
        z = x[s % n]
        rules = np.flatnonzero(sub == s)
        at = np.full(len(rules), z) if not np.isnan(z) else 0.5 * (lo[rules] + hi[rules])
        match = np.isnan(z) | ((lo[rules] <= z) & (z <= hi[rules]))
        f = F[rules] * match
        psi[s] = (f * (w[rules, 0] + w[rules, 1] * at)).sum() / f.sum() if f.sum() > 0 else 0.0
    zhat = psi.reshape(nq, n).sum(axis=1)
    y_hat = 0.0
    for q in range(nq):
        rules = np.flatnonzero(sub == s_in + q)
        match = (lo[rules] <= zhat[q]) & (zhat[q] <= hi[rules])
        f = F[rules] * match
        if f.sum() > 0:
            y_hat += (f * (w[rules, 0] + w[rules, 1] * zhat[q])).sum() / f.sum()
    return zhat, y_hat


def test_kacs_step_with_a_missing_input_takes_the_gradient_at_the_centres():
    n, nq = 2, 2
    model = Model("kacs", n, Hyperparameters(N=10_000, theta_GA=1e9, channels=nq))
    rng = np.random.default_rng(3)
    pop = model.pop
    x = np.array([NAN, 0.35])
    i = 0
    for q in range(nq):
        # Input 1 is missing: every rule of (q, 1) matches, also one far from anything.
        for lo_, hi_ in ((0.1, 0.3), (0.55, 0.95), (0.0, 1.0)):
            put_rule(pop, i, hi_, lo_, rng.uniform(-1, 1, 2), rng.uniform(0.1, 1.0), sub=q * n)
            i += 1
        put_rule(pop, i, 0.2, 0.6, rng.uniform(-1, 1, 2), rng.uniform(0.1, 1.0), sub=q * n + 1)
        put_rule(pop, i + 1, 0.5, 0.9, rng.uniform(-1, 1, 2), 1.0, sub=q * n + 1)  # misses 0.35
        i += 2
    for q in range(nq):
        for _ in range(2):
            put_rule(pop, i, -20.0, 20.0, rng.uniform(-1, 1, 2), rng.uniform(0.1, 1.0), sub=n * nq + q)
            i += 1
    finish(pop, i, t=5)
    before = snapshot(pop)
    lo, hi, w0, F, sub = (before["lo"][:, 0], before["hi"][:, 0], before["w"], before["F"],
                          before["sub"])
    _, y_ref = np_forward(lo, hi, w0, F, sub, x, n, nq)
    y = y_ref + 0.4

    def loss(w):
        return 0.5 * (y - np_forward(lo, hi, w, F, sub, x, n, nq)[1]) ** 2

    h = 1e-6
    g_fd = np.zeros_like(w0)
    for k in range(i):
        for j in range(2):
            wp, wm = w0.copy(), w0.copy()
            wp[k, j] += h
            wm[k, j] -= h
            g_fd[k, j] = (loss(wp) - loss(wm)) / (2 * h)
    assert kacs_step(model, x, y) == pytest.approx(y_ref, rel=1e-12)
    after = snapshot(pop)
    # Fresh rules (m = 0): the first moment after one step is (1 - beta1) g.
    g_engine = after["m"] / (1.0 - 0.9)
    np.testing.assert_allclose(g_engine, g_fd, rtol=1e-6, atol=1e-9)
    # The slope of the rules of a missing input moved by their centre, not by a NaN.
    assert np.all(np.isfinite(after["w"]))
    assert np.all(g_fd[sub == 0, 1] != 0.0)
    np.testing.assert_array_equal(after["exp"][sub == 0], 1)  # every rule of (1, 1) was matched


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_covering_a_missing_input_builds_the_full_range(method):
    for seed in range(8):
        seed_rng(seed)
        model = Model(method, 2, Hyperparameters(N=50, P_hash=0.0, r0=0.2, theta_GA=1e9))
        finish(model.pop, 0)
        x = np.array([NAN, 0.5])
        if method == "kacs":
            kacs_step(model, x, 0.3)
            snap = snapshot(model.pop)
            inner = snap["sub"] < 2 * 5
            p = snap["sub"][inner] % 2
            lo, hi = snap["lo"][inner, 0], snap["hi"][inner, 0]
            assert np.all((lo[p == 0] == 0.0) & (hi[p == 0] == 1.0))
            assert np.all((hi[p == 1] - lo[p == 1] < 1.0) & (lo[p == 1] <= 0.5) & (0.5 <= hi[p == 1]))
        else:
            xcsf_step(model, x, 0.3)
            snap = snapshot(model.pop)
            assert snap["lo"].shape[0] == 1
            assert snap["lo"][0, 0] == 0.0 and snap["hi"][0, 0] == 1.0
            assert snap["hi"][0, 1] - snap["lo"][0, 1] < 1.0 and snap["lo"][0, 1] <= 0.5 <= snap["hi"][0, 1]


# --------------------------------------------------------------------------------------------
# XCSF: prediction by hand, the step's gradient, the row index
# --------------------------------------------------------------------------------------------

def xcsf_by_hand_model(raw=False):
    model = Model("xcsf", 2, Hyperparameters(N=100, theta_GA=1e9, article_xcsf_inputs=raw))
    put_rule(model.pop, 0, (0.6, 0.0), (0.2, 0.5), (1.0, 2.0, -1.0), 1.0)   # [0.2, 0.6] x [0, 0.5]
    put_rule(model.pop, 1, (0.5, 0.4), (1.0, 1.0), (0.5, 1.0, 3.0), 2.0)    # [0.5, 1] x [0.4, 1]
    finish(model.pop, 2)
    return model


def test_xcsf_prediction_by_hand_with_missing_inputs():
    X = np.array([[NAN, 0.45], [0.3, NAN], [NAN, NAN], [0.3, 0.6]])
    # Offsets from the lower corner, the centre offset (u - l) / 2 where x is missing:
    # row 1: rule 0: 1 + 2 0.2 - 0.45 = 0.95; rule 1: 0.5 + 0.25 + 3 0.05 = 0.9 -> (0.95 + 1.8) / 3
    # row 2: rule 0 only: 1 + 2 0.1 - 0.25 = 0.95.  row 3, both missing: 1 + 0.4 - 0.25 = 1.15
    # and 0.5 + 0.25 + 3 0.3 = 1.65 -> (1.15 + 3.3) / 3.  row 4: nothing matches: 0.
    np.testing.assert_allclose(xcsf_by_hand_model().predict(X), [2.75 / 3, 0.95, 4.45 / 3, 0.0],
                               rtol=1e-15)
    # article_xcsf_inputs: the input itself, the centre (l + u) / 2 where it is missing.
    # row 1: 1 + 2 0.4 - 0.45 = 1.35; 0.5 + 0.75 + 1.35 = 2.6.  row 2: 1 + 0.6 - 0.25 = 1.35.
    np.testing.assert_allclose(xcsf_by_hand_model(raw=True).predict(X[:2]), [(1.35 + 5.2) / 3, 1.35],
                               rtol=1e-15)


def test_xcsf_step_with_a_missing_input_takes_the_gradient_at_the_centre():
    model = Model("xcsf", 3, Hyperparameters(N=100, theta_GA=1e9))
    put_rule(model.pop, 0, (0.1, 0.2, 0.0), (0.7, 0.9, 1.0), (0.3, -1.0, 2.0, 0.5), 1.0)
    finish(model.pop, 1)
    x = np.array([NAN, 0.4, NAN])
    dx = np.array([0.3, 0.2, 0.5])  # (u - l) / 2, x - l, (u - l) / 2
    err = 0.8 - (0.3 - 1.0 * 0.3 + 2.0 * 0.2 + 0.5 * 0.5)
    xcsf_step(model, x, 0.8)
    m = snapshot(model.pop)["m"][0]
    np.testing.assert_allclose(m / (1.0 - 0.9), -err * np.concatenate([[1.0], dx]), rtol=1e-13)


def test_xcsf_row_index_gives_the_tested_match_sets_with_missing_inputs(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.random((120, 3))
    y = X[:, 0] - X[:, 1] * X[:, 2]
    X[rng.random(X.shape) < 0.2] = NAN
    X[7] = NAN  # a row missing everything
    params = Hyperparameters(N=200, P_hash=0.5)
    plain = train_run("xcsf", X[:100], y[:100], X[100:], y[100:], params=params, iterations=1500,
                      eval_every=500, seed=4)
    monkeypatch.setattr(xcsf, "ROW_INDEX_MIN_INPUTS", 1)
    indexed_model = Model("xcsf", 3, params)
    xcsf._prepare(indexed_model, X)
    assert indexed_model.row_index.state[0] == 1
    indexed = train_run("xcsf", X[:100], y[:100], X[100:], y[100:], params=params, iterations=1500,
                        eval_every=500, seed=4)
    for column in ("train_mae", "test_mae", "rules", "micro"):
        np.testing.assert_array_equal(indexed.curve[column], plain.curve[column])
    assert np.all(np.isfinite(plain.curve["test_mae"]))


# --------------------------------------------------------------------------------------------
# Complete data: stored predictions (each learner's engine with the missing-value rule), pinned
# so that a change of that rule which moves complete-data numbers is seen
# --------------------------------------------------------------------------------------------

COMPLETE_DATA_PREDICTIONS = {
    "kacs": (23, [-0.022474882008507224, 0.06305477667854686, 0.051570660450653366, -0.22331047778157542]),
    "xcsf": (9, [-0.009974394177585142, 0.0540520187071238, -0.041147484308894235, 0.218085129879113]),
}


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_complete_data_train_as_before_bit_for_bit(method):
    rng = np.random.default_rng(11)
    X = rng.random((60, 2))
    y = X[:, 0] * X[:, 1] - 0.5 * X[:, 0] ** 2
    model = Model(method, 2, Hyperparameters(N=80, P_hash=0.8))
    model.train(X, y, 1500, seed=3)
    rules, expected = COMPLETE_DATA_PREDICTIONS[method]
    X_query = np.array([[0.1, 0.2], [0.5, 0.5], [0.9, 0.3], [0.33, 0.97]])
    assert model.n_rules == rules
    assert model.predict(X_query).tolist() == expected


# --------------------------------------------------------------------------------------------
# Refinement, compaction: the same rule after training
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def missing_data():
    rng = np.random.default_rng(8)
    X = rng.random((300, 3))
    y = np.cos(3 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    y = 2 * (y - y.min()) / (y.max() - y.min()) - 1
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.1] = NAN
    return Xm, y


@pytest.fixture(scope="module")
def trained_kacs(missing_data):
    X, y = missing_data
    model = Model("kacs", 3, Hyperparameters(N=400, P_hash=0.8))
    model.train(X, y, 3000, seed=1)
    return model


def test_refinement_design_is_the_prediction_with_missing_inputs(trained_kacs, missing_data):
    X, y = missing_data
    model = trained_kacs
    P = model.n_rules
    w = np.ascontiguousarray(model.pop.weights.w[:P]).ravel().copy()
    objective = Objective(model.pop, 3, model.n_channels, design(model.pop, X, y, 3, model.n_channels),
                          0.0, w)
    # The design's loss is the engine's prediction on the rows (the prediction path).
    assert objective.mse(w) == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-12)
    # Its gradient is the loss's, the missing cells' slopes moving by their rules' centres.
    loss, grad = objective(w)
    inner = np.repeat(model.pop.counts.sub[:P] < 3 * model.n_channels, 2)
    rng = np.random.default_rng(0)
    for k in rng.choice(np.flatnonzero(inner & (grad != 0)), 12, replace=False):
        step = np.zeros_like(w)
        step[k] = 1e-7
        fd = (objective(w + step)[0] - objective(w - step)[0]) / 2e-7
        assert fd == pytest.approx(grad[k], rel=1e-4, abs=1e-9)


def test_refinement_and_compactions_keep_predictions_finite(trained_kacs, missing_data):
    X, y = missing_data
    refined = copy.deepcopy(trained_kacs)
    result = refined.refine(X, y, seed=0, max_iter=50, validation=0.0)
    assert result.fit_mse_after < result.fit_mse_before
    assert result.fit_mse_after == pytest.approx(np.mean((refined.predict(X) - y) ** 2), rel=1e-12)
    for method in ("piecewise", "single-winner"):
        compacted = copy.deepcopy(trained_kacs)
        compacted.compact(X, y, seed=0, method=method)
        assert 0 < compacted.n_rules < trained_kacs.n_rules
        assert np.all(np.isfinite(compacted.predict(X)))
    xcsf_model = Model("xcsf", 3, Hyperparameters(N=300, P_hash=0.8))
    xcsf_model.train(X, y, 2000, seed=1)
    xcsf_model.compact(X, y, seed=0)
    assert np.all(np.isfinite(xcsf_model.predict(X)))


def test_piecewise_compaction_drops_an_input_missing_on_every_row():
    rng = np.random.default_rng(1)
    X = rng.random((200, 2))
    y = X[:, 0] - 0.5
    model = Model("kacs", 2, Hyperparameters(N=200, P_hash=0.8))
    X[:, 1] = NAN
    model.train(X, y, 2000, seed=0)
    model.compact(X, y, seed=0, method="piecewise", tolerance=0.05)
    sub = model.pop.counts.sub[:model.n_rules]
    inner = sub < 2 * model.n_channels
    assert not np.any(inner & (sub % 2 == 1))  # no rule reads input 2 any more
    assert np.all(np.isfinite(model.predict(X)))


# --------------------------------------------------------------------------------------------
# Scaling and the estimators
# --------------------------------------------------------------------------------------------

def test_scaling_keeps_missing_values_and_ranges_the_known_ones():
    X = np.array([[1.0, 5.0, NAN], [NAN, 5.0, 2.0], [3.0, NAN, 4.0], [2.0, 5.0, 3.0]])
    x_min, x_max = input_ranges(X)
    np.testing.assert_array_equal(x_min, [1.0, 5.0, 2.0])
    np.testing.assert_array_equal(x_max, [3.0, 5.0, 4.0])
    scaled = scale_inputs(X, x_min, x_max, clip=True)
    np.testing.assert_array_equal(np.isnan(scaled), np.isnan(X))
    np.testing.assert_array_equal(scaled[~np.isnan(X)], [0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 0.5, 0.5, 0.5])
    quantile = InputTransform.fit("quantile", scaled)
    mapped = quantile.apply(scaled)
    np.testing.assert_array_equal(np.isnan(mapped), np.isnan(X))
    np.testing.assert_allclose(mapped[:, 0][~np.isnan(X[:, 0])], [0.0, 1.0, 0.5], atol=1e-9)


def test_the_protocol_scales_on_the_known_train_values_and_refuses_an_empty_column():
    rng = np.random.default_rng(0)
    X = rng.random((40, 2))
    X[::3, 0] = NAN
    split = make_split(X, rng.random(40), "main", 0)
    train = X[split.train_index]
    assert np.array_equal(np.isnan(split.X_train), np.isnan(train))
    assert np.nanmin(split.X_train[:, 0]) == 0.0 and np.nanmax(split.X_train[:, 0]) == 1.0
    X[:, 1] = NAN
    with pytest.raises(UserError, match=r"^on the train split of split seed 0, input column 2 holds no value"):
        make_split(X, rng.random(40), "main", 0)


@pytest.mark.parametrize("cls", [KACSRegressor, XCSFRegressor])
def test_estimators_refuse_a_missing_target_an_empty_column_and_infinity(cls):
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    y = rng.random(30)
    bad_y = y.copy()
    bad_y[[3, 9]] = NAN
    with pytest.raises(UserError, match=r"^y \(the target\) is missing \(NaN or empty\) on 2 of 30 rows; "
                                        r"a target must be known to learn from: drop those rows$"):
        cls(n_iter=10).fit(X, bad_y)
    with pytest.raises(UserError, match="missing"):
        cls(n_iter=10).partial_fit(X, [None] + list(y[1:]))
    empty = X.copy()
    empty[:, 1] = NAN
    with pytest.raises(UserError, match=r"^X: column 1 holds no value \(missing on every row\).* or give input_range$"):
        cls(n_iter=10).fit(empty, y)
    # With its range given, a column missing on every row is no longer a problem.
    assert np.all(np.isfinite(cls(n_iter=50, input_range=(0.0, 1.0)).fit(empty, y).predict(empty)))
    inf = X.copy()
    inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        cls(n_iter=10).fit(inf, y)


def test_recommended_kacs_and_xcsf_learn_with_a_tenth_of_the_cells_missing(missing_data):
    X, y = missing_data
    X = X * [2.0, 10.0, 1.0] + [0.0, -5.0, 3.0]  # original units
    est = KACSRegressor.from_preset("recommended", n_iter=1500, P_hash=0.8, capacity_max=1600,
                                    random_state=0)
    est.fit(X, y)
    assert len(est.capacity_result_.candidates) >= 1 and est.refine_result_.iterations > 0
    np.testing.assert_array_equal(est.x_min_, np.nanmin(X, axis=0))
    predictions = est.predict(X)
    assert np.all(np.isfinite(predictions))
    assert np.all(np.isfinite(est.predict(np.full((3, 3), NAN))))  # a row missing everything
    assert np.all(np.isfinite(est.zhat_range_))
    components = est.predict_components(X)
    np.testing.assert_allclose(est.inverse_scale_target(components.y_hat), predictions, rtol=1e-12)
    assert np.all(np.isfinite(est.compact(X, y).predict(X)))
    explanation = est.explain(X)
    assert np.isclose(explanation.channel_shares["covariance_share"].sum(), 1.0)
    bagged = KACSRegressor(n_iter=800, bags=2, refinement=True, P_hash=0.8).fit(X, y)
    assert np.all(np.isfinite(bagged.predict(X)))
    online = XCSFRegressor(n_iter=1, P_hash=0.8, input_range=[(0.0, 2.0), (-5.0, 5.0), (3.0, 4.0)])
    for start in range(0, 300, 100):
        online.partial_fit(X[start:start + 100], y[start:start + 100])
    assert np.all(np.isfinite(online.predict(X)))


# --------------------------------------------------------------------------------------------
# missing_value: learned: one value per inner function at a missing input, fitted by refinement
# --------------------------------------------------------------------------------------------

def test_a_learned_value_replaces_the_centres_where_its_input_is_missing_by_hand():
    model = kacs_by_hand_model()
    model.inner_missing[0] = 0.7  # inner (1,1), on x1
    X = np.array([[NAN, 0.3], [0.3, NAN], [0.55, 0.3]])
    psi, zhat, _, y_hat = model.predict_components(X)
    # x1 missing: the held 0.7 (not 1.95 at the centres); x2 = 0.3: 0.5 - 0.3 = 0.2.
    # x1 = 0.3: rule [0.2, 0.6] alone, 1 + 2 0.3 = 1.6; x2 missing, nothing held: 0.5 - 0.2 = 0.3.
    # Complete row as without a held value: 1.425 and 0.2. Phi(z) = 0.1 + z.
    np.testing.assert_allclose(psi[:, 0, :], [[0.7, 0.2], [1.6, 0.3], [1.425, 0.2]], rtol=1e-15)
    np.testing.assert_allclose(y_hat, [1.0, 2.0, 1.725], rtol=1e-15)
    # The submodel table shows each inner function's value at a missing input, held or at the centres.
    np.testing.assert_allclose(submodel_table(model)["at_missing"], [0.7, 0.3, NAN], rtol=1e-15)


def _one_line_model(missing_value):
    """n = 1, one channel: psi(x) = a + b x from one rule on [0, 1], Phi(z) = c + d z: every
    line of x, and with a value of its own at a missing input, any constant there too."""
    model = Model("kacs", 1, Hyperparameters(N=100, channels=1, refinement=True, missing_value=missing_value))
    put_rule(model.pop, 0, 0.0, 1.0, (0.3, -0.2), 1.0, sub=0)
    put_rule(model.pop, 1, -1e3, 1e3, (0.1, 0.5), 1.0, sub=1)
    finish(model.pop, 2)
    return model


def test_refinement_learns_the_value_at_a_missing_input_that_the_centres_cannot_give():
    x = np.linspace(0.0, 1.0, 40)
    X = np.concatenate([x, np.full(10, NAN)])[:, None]
    y = np.concatenate([3 * x - 1, np.full(10, 5.0)])  # the rows missing x all have target 5
    fitted = {}
    for missing_value in ("centre", "learned"):
        model = _one_line_model(missing_value)
        result = model.refine(X, y, seed=0, max_iter=500, pull=0.0, validation=0.0)
        fitted[missing_value] = model
        assert result.fit_mse_after == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-9, abs=1e-14)
    # At the centre the line gives Phi(psi(0.5)) = 0.5 on the rows whose target is 5: the best
    # compromise leaves an error; a value of its own fits both exactly.
    assert np.mean((fitted["centre"].predict(X) - y) ** 2) > 0.5
    assert np.mean((fitted["learned"].predict(X) - y) ** 2) < 1e-10
    assert np.isnan(fitted["centre"].inner_missing).all()
    assert np.isfinite(fitted["learned"].inner_missing[0]) and np.isnan(fitted["learned"].inner_missing[1])


def test_the_objective_with_learned_values_is_the_prediction_and_its_gradient_matches_finite_differences(
        trained_kacs, missing_data):
    X, y = missing_data
    model = copy.deepcopy(trained_kacs)
    n_q, P = model.n_channels, model.n_rules
    learn = np.arange(3 * n_q)  # every input is missing on some row
    shift = np.random.default_rng(2).normal(0, 0.1, learn.size)
    held = values_at_missing(model.pop, 3, n_q, model.inner_missing)[learn] + shift
    x = np.concatenate([np.ascontiguousarray(model.pop.weights.w[:P]).ravel(), held])
    objective = Objective(model.pop, 3, n_q, design(model.pop, X, y, 3, n_q), 0.0, x, learn=learn,
                          held=model.inner_missing)
    model.inner_missing[learn] = held
    assert objective.mse(x) == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-12)
    _, grad = objective(x)
    for k in 2 * P + np.random.default_rng(3).choice(learn.size, 10, replace=False):
        step = np.zeros_like(x)
        step[k] = 1e-7
        fd = (objective(x + step)[0] - objective(x - step)[0]) / 2e-7
        assert fd == pytest.approx(grad[k], rel=1e-4, abs=1e-9)


def test_learned_values_are_saved_dropped_by_further_training_and_refitted_by_compaction(
        trained_kacs, missing_data, tmp_path):
    X, y = missing_data
    model = copy.deepcopy(trained_kacs)
    model.params = model.params.with_overrides(refinement=True, missing_value="learned")
    result = model.refine(X, y, seed=0, max_iter=50, validation=0.0)
    s_in = 3 * model.n_channels
    assert np.isfinite(model.inner_missing[:s_in]).all() and np.isnan(model.inner_missing[s_in:]).all()
    assert result.fit_mse_after == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-12)
    # A file keeps them, in format version 4 (an older reader would predict without them).
    path = save(model, tmp_path / "learned.kacs")
    assert read_metadata(path)["format_version"] == 4
    np.testing.assert_array_equal(load_model(path).predict(X), model.predict(X))
    assert read_metadata(save(trained_kacs, tmp_path / "centre.kacs"))["format_version"] == 1
    compacted = copy.deepcopy(model)
    compacted.compact(X, y, seed=0, method="piecewise")
    assert np.isnan(trained_kacs.inner_missing).all()  # the fixture's model keeps the centres
    assert np.isfinite(compacted.inner_missing[:3 * compacted.n_channels]).any()
    assert np.all(np.isfinite(compacted.predict(X)))
    model.train(X, y, 10, seed=2)
    assert np.isnan(model.inner_missing).all()


def test_explain_writes_the_learned_values_beside_the_rules(missing_data, tmp_path):
    X, y = missing_data
    est = KACSRegressor(refinement=True, missing_value="learned", n_iter=800, N=200, P_hash=0.8, channels=2,
                        random_state=1).fit(X, y)
    held = est.explain(X).rules_json()["inner_missing"]
    # m = 2 rows of n = 3: every input is missing on some row, so every inner function learned one.
    np.testing.assert_array_equal(np.array(held), est.model_.inner_missing[:6].reshape(2, 3))
    assert est.submodel_table_["at_missing"].tolist()[:6] == est.model_.inner_missing[:6].tolist()
    centre = KACSRegressor(refinement=True, n_iter=800, N=200, P_hash=0.8, channels=2, random_state=1).fit(X, y)
    assert centre.explain(X).rules_json()["inner_missing"] == [[None] * 3] * 2


def test_a_bagged_model_keeps_each_members_learned_values(missing_data):
    X, y = missing_data
    est = KACSRegressor(bags=2, refinement=True, missing_value="learned", n_iter=800, N=200, P_hash=0.8,
                        random_state=1).fit(X, y)
    params = est.hyperparameters(3)
    Xs = est._scale_X(X)
    members = bagging.train_members("kacs", Xs, est._scale_y(y), params, 800, est.seed_)
    assert all(np.isfinite(m.model.inner_missing[:3 * m.model.n_channels]).all() for m in members)
    np.testing.assert_allclose(est.model_.predict(Xs), np.mean([m.model.predict(Xs) for m in members], axis=0),
                               rtol=0, atol=1e-12)


def test_a_learned_value_without_refinement_is_refused_in_one_line(missing_data):
    with pytest.raises(UserError, match="missing_value = 'learned' is invalid: .*turn on refinement"):
        KACSRegressor(missing_value="learned", n_iter=10).fit(*missing_data)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def write_csv(path, rows):
    path.write_text("".join(",".join(cells) + "\n" for cells in rows))
    return path


@pytest.fixture()
def gappy_csv(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.random((60, 2))
    y = X[:, 0] + 2 * X[:, 1]
    rows = [[repr(float(a)), repr(float(b)), repr(float(t))] for (a, b), t in zip(X, y)]
    rows[3][0] = ""
    rows[10][1] = "?"
    rows[20][0] = "NA"
    rows[30][1] = "nan"
    return write_csv(tmp_path / "gappy.csv", rows), rows


def test_kacs_fit_and_predict_read_missing_cells(capsys, tmp_path, gappy_csv):
    path, rows = gappy_csv
    model = tmp_path / "model.kacs"
    code, out, err = run_kacs(capsys, "fit", path, "--out", model, "-n", 600)
    assert code == 0, err
    assert "fitted on" in out and model.is_file()
    query = write_csv(tmp_path / "query.csv", [["", "0.5"], ["0.2", "?"], ["NA", "nan"]])
    code, out, err = run_kacs(capsys, "predict", model, query)
    assert code == 0, err
    assert np.all(np.isfinite([float(v) for v in out.split()])) and len(out.split()) == 3
    rows[5][2] = ""  # the target of one query row is missing: the MAE counts the others
    code, out, err = run_kacs(capsys, "predict", model, write_csv(tmp_path / "q2.csv", rows))
    assert code == 0 and "on the 59 rows where it is known" in " ".join(err.split())


def test_kacs_fit_refuses_a_missing_target_or_an_empty_column(capsys, tmp_path, gappy_csv):
    _, rows = gappy_csv
    target = [list(r) for r in rows]
    target[7][2] = "?"
    path = write_csv(tmp_path / "target.csv", target)
    code, out, err = run_kacs(capsys, "fit", path, "--out", tmp_path / "m.kacs", "-n", 10)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.strip() == (f"error: {path}: the target (last column) is missing (NaN or empty) on 1 of 60 rows; "
                           "a target must be known to learn from: drop those rows (the first is data row 8)")
    empty = write_csv(tmp_path / "empty.csv", [["NA", b, t] for _, b, t in rows])
    code, out, err = run_kacs(capsys, "fit", empty, "--out", tmp_path / "m.kacs", "-n", 10)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "input column 1 holds no value (missing on every row)" in err
    assert not (tmp_path / "m.kacs").exists()


def test_kacs_run_learns_missing_inputs_and_refuses_a_baseline_that_cannot(capsys, tmp_path, gappy_csv):
    path, _ = gappy_csv
    config = tmp_path / "gappy.yaml"
    config.write_text(f"experiment: gappy\nmethods: [kacs, xcsf]\nbenchmarks: [{path}]\n"
                      "hyperparameters: {N: 100}\nprotocol: {runs: 1}\niterations: 300\neval_every: 300\n")
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out", "--jobs", 1)
    assert code == 0, err
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert len(runs) == 2 and np.all(np.isfinite(runs["test_mae"]))
    # Ridge's tags do not allow NaN, histogram gradient boosting's do.
    config.write_text(f"experiment: gappy2\nbenchmarks: [{path}]\nprotocol: {{runs: 1}}\niterations: 300\n"
                      "methods: {kacs: null, ridge: null, "
                      "hgb: {estimator: sklearn.ensemble.HistGradientBoostingRegressor}}\n")
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out2", "--jobs", 1)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "4 input values are missing (NaN), which ridge cannot take; leave it out" in " ".join(err.split())


def test_an_empty_column_with_its_range_given_keeps_the_identity_under_quantile_inputs(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.random((40, 2))
    X[:, 0] = NAN
    est = KACSRegressor(n_iter=200, input_transform="quantile", input_range=(0.0, 1.0)).fit(X, X[:, 1])
    np.testing.assert_allclose(est.scale_inputs([[0.25, 0.5], [NAN, 0.5]])[:, 0], [0.25, NAN], rtol=1e-12)
    est.save(tmp_path / "model.kacs")  # no NaN in the model file's quantiles
    np.testing.assert_array_equal(KACSRegressor.load(tmp_path / "model.kacs").predict(X), est.predict(X))
