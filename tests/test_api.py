"""scikit-learn regressors: compatibility, reproduction of the runner, online learning."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine import Hyperparameters, train_run
from kacs_cli.errors import UserError
from kacs_cli.experiments.data.datasets import load_csv
from kacs_cli.experiments.data.protocols import make_split

ESTIMATORS = [KACSRegressor, XCSFRegressor]


def target(X):
    return np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 2.0, (4000, 2))
    Xh = rng.uniform(-1.0, 2.0, (500, 2))
    return X, target(X), Xh, target(Xh)


def mae(est, X, y):
    return float(np.mean(np.abs(est.predict(X) - y)))


# ----------------------------------------------------------------------------- sklearn conventions


def test_top_level_import():
    import kacs_cli
    from kacs_cli import estimators

    assert kacs_cli.KACSRegressor is estimators.KACSRegressor
    assert kacs_cli.XCSFRegressor is estimators.XCSFRegressor
    assert kacs_cli.load is estimators.load


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_defaults_are_the_hyperparameters(cls):
    params = cls().get_params()
    defaults = Hyperparameters()
    # Those its learner acts on; `categorical` is a config's setting (estimator False): an
    # estimator has categorical_features instead.
    declared = [name for name in Hyperparameters.names() if name in params]
    assert "categorical" not in declared
    for name in declared:
        assert params[name] == getattr(defaults, name), name
    assert params["P_hash"] == 0.0
    assert params["n_iter"] == 100_000 and params["random_state"] == 0
    assert params["input_range"] is None and params["target_range"] is None
    assert params["categorical_features"] is None
    assert set(params) == set(declared) | {"n_iter", "n_passes", "random_state", "input_range", "target_range",
                                           "n_jobs", "categorical_features"}


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_get_set_params_round_trip_and_clone(cls):
    est = cls(N=500, chi=0.5, n_iter=1234, random_state=7, semantics="article")
    params = est.get_params()
    other = cls().set_params(**params)
    assert other.get_params() == params
    copy = clone(est)
    assert copy is not est and copy.get_params() == params
    # no validation in __init__ (sklearn convention): bad values fail in fit, naming the parameter
    bad = cls(chi=2.0, n_iter=10)
    with pytest.raises(ValueError, match="chi"):
        bad.fit(np.zeros((5, 2)) + np.arange(5)[:, None], np.arange(5.0))
    with pytest.raises(ValueError, match="n_iter"):
        cls(n_iter=0).fit(np.arange(10.0).reshape(5, 2), np.arange(5.0))
    with pytest.raises(ValueError, match="random_state"):
        cls(random_state=-1, n_iter=10).fit(np.arange(10.0).reshape(5, 2), np.arange(5.0))


def test_clone_of_fitted_estimator_is_unfitted(data):
    X, y, _, _ = data
    est = XCSFRegressor(n_iter=500).fit(X[:200], y[:200])
    copy = clone(est)
    with pytest.raises(NotFittedError):
        copy.predict(X[:5])


def test_pipeline(data):
    X, y, Xh, yh = data
    pipe = Pipeline([("scale", MinMaxScaler()), ("kacs", KACSRegressor(n_iter=3000, random_state=1))])
    pipe.fit(X[:1000], y[:1000])
    assert pipe.predict(Xh).shape == (len(Xh),)
    assert np.isfinite(pipe.score(Xh, yh))
    assert pipe.named_steps["kacs"].n_features_in_ == 2


def test_grid_search(data):
    X, y, _, _ = data
    search = GridSearchCV(
        XCSFRegressor(n_iter=2000, random_state=0),
        {"N": np.array([300, 600]), "P_hash": [0.0, 0.5]},  # numpy ints reach fit unchanged
        cv=2,
    )
    search.fit(X[:400], y[:400])
    assert set(search.best_params_) == {"N", "P_hash"}
    assert search.best_estimator_.n_rules_ > 0
    assert len(search.cv_results_["mean_test_score"]) == 4


def test_cross_val_score(data):
    X, y, _, _ = data
    scores = cross_val_score(KACSRegressor(n_iter=2000, N=800), X[:300], y[:300], cv=2)
    assert scores.shape == (2,) and np.all(np.isfinite(scores))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_input_validation_messages(cls):
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10.0)
    est = cls(n_iter=50)
    with pytest.raises(ValueError, match="Expected 2D array"):
        est.fit(np.arange(10.0), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, y[:-1])
    # A missing input is NaN (tests/test_missing.py); an infinite one is refused.
    Xi = X.copy()
    Xi[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(Xi, y)
    yn = y.copy()
    yn[0] = np.inf
    with pytest.raises(ValueError, match="infinity|NaN"):
        est.fit(X, yn)
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="infinity"):
        est.predict(Xi)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(np.zeros((3, 3)), np.zeros(3))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_fitted_attributes(cls, data):
    X, y, _, _ = data
    est = cls(n_iter=2000, random_state=2).fit(X[:500], y[:500])
    assert est.n_features_in_ == 2
    rules = est.rules_
    assert len(rules) == est.n_rules_ > 0
    assert int(rules["num"].sum()) == est.n_micro_
    d = 1 if cls is KACSRegressor else 2
    assert est.n_params_ == est.n_rules_ * (d + 1)
    assert est.iterations_done_ == 2000
    np.testing.assert_array_equal(est.x_min_, X[:500].min(axis=0))
    assert est.y_max_ == y[:500].max()


# ----------------------------------------------------------------------------- same as the runner


@pytest.mark.slow
@pytest.mark.parametrize("method,cls", [("kacs", KACSRegressor), ("xcsf", XCSFRegressor)])
def test_estimator_reproduces_runner_on_f3(method, cls, shared_data_dir):
    X, y = load_csv(shared_data_dir / "f3.csv")
    split = make_split(X, y, "main", split_seed=0)
    result = train_run(method, split.X_train, split.y_train, split.X_test, split.y_test,
                       params=Hyperparameters(), iterations=20000, eval_every=20000, seed=0)
    est = cls(n_iter=20000, random_state=0).fit(X[split.train_index], y[split.train_index])
    pred = est.predict(X[split.test_index])
    y_min, y_max = split.scaling["y_min"], split.scaling["y_max"]
    scaled = 2.0 * (pred - y_min) / (y_max - y_min) - 1.0
    test_mae = float(np.mean(np.abs(scaled - split.y_test)))
    assert abs(test_mae - result.final["test_mae"]) < 1e-9
    assert est.n_rules_ == result.final["rules"]
    # the engine sees exactly the protocol's arrays
    np.testing.assert_array_equal(est.scale_inputs(X[split.test_index]), split.X_test)
    np.testing.assert_array_equal(est.scale_target(y[split.train_index]), split.y_train)


# ----------------------------------------------------------------------------- online learning


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_partial_fit_stream_keeps_learning(cls, data):
    X, y, Xh, yh = data
    est = cls(random_state=3)
    est.partial_fit(X[:200], y[:200])
    first = mae(est, Xh, yh)
    assert est.iterations_done_ == 200
    for i in range(200, 4000, 200):
        est.partial_fit(X[i:i + 200], y[i:i + 200])
    assert est.iterations_done_ == 4000 and est.n_train_calls_ == 20
    assert mae(est, Xh, yh) < 0.8 * first
    # reproducible: the same calls give the same model
    again = cls(random_state=3)
    for i in range(0, 4000, 200):
        again.partial_fit(X[i:i + 200], y[i:i + 200])
    np.testing.assert_array_equal(again.predict(Xh), est.predict(Xh))
    # every call draws its own seed
    assert len({est._call_seed(k) for k in range(20)}) == 20 and est._call_seed(0) == 3


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_partial_fit_after_fit(cls, data):
    X, y, Xh, yh = data
    est = cls(n_iter=2000, random_state=3).fit(X[:1000], y[:1000])
    scaling = (est.x_min_.copy(), est.x_max_.copy(), est.y_min_, est.y_max_)
    before = mae(est, Xh, yh)
    for _ in range(2):
        for i in range(0, 4000, 400):
            est.partial_fit(X[i:i + 400], y[i:i + 400])
    assert est.iterations_done_ == 2000 + 8000
    assert mae(est, Xh, yh) < 0.8 * before
    np.testing.assert_array_equal(est.x_min_, scaling[0])  # fit's scaling is kept
    assert (est.y_min_, est.y_max_) == scaling[2:]


def test_partial_fit_explicit_ranges(data):
    X, y, Xh, yh = data
    order = np.argsort(X[:, 0])
    narrow_X, narrow_y = X[order[:400]], y[order[:400]]  # x0 only in [-1, -0.7]
    results = {}
    for explicit in (False, True):
        kw = dict(input_range=(-1.0, 2.0), target_range=(-1.0, 5.0)) if explicit else {}
        est = KACSRegressor(random_state=3, **kw)
        est.partial_fit(narrow_X, narrow_y)
        for _ in range(4):
            for i in range(0, 4000, 400):
                est.partial_fit(X[i:i + 400], y[i:i + 400])
        results[explicit] = mae(est, Xh, yh)
        if explicit:
            np.testing.assert_array_equal(est.x_min_, [-1.0, -1.0])
            np.testing.assert_array_equal(est.x_max_, [2.0, 2.0])
            assert (est.y_min_, est.y_max_) == (-1.0, 5.0)
        else:
            assert est.x_max_[0] < 0.0  # learned from the first batch
    assert results[True] < 0.5 * results[False]
    # per-feature ranges, and bad ranges are clear errors
    est = XCSFRegressor(input_range=[[-1.0, 2.0], [0.0, 4.0]], n_iter=100).fit(X[:50], y[:50])
    np.testing.assert_array_equal(est.x_max_, [2.0, 4.0])
    with pytest.raises(UserError, match="input_range"):
        XCSFRegressor(input_range=[[0, 1]] * 3, n_iter=10).fit(X[:50], y[:50])
    with pytest.raises(UserError, match="target_range"):
        XCSFRegressor(target_range=(1.0, 1.0), n_iter=10).fit(X[:50], y[:50])


def test_a_constant_target_is_refused_unless_its_range_is_given():
    X = np.arange(20.0).reshape(10, 2)
    with pytest.raises(ValueError) as info:
        XCSFRegressor(n_iter=200).fit(X, np.full(10, 3.0))
    # `kacs fit` refuses a constant CSV target in the same words (test_estimators_refuse_...).
    assert str(info.value) == ("y (the target) is constant (3) on all 10 rows; a regression target must vary "
                               "(or give target_range)")
    est = XCSFRegressor(n_iter=200, target_range=(2.0, 4.0)).fit(X, np.full(10, 3.0))
    assert (est.y_min_, est.y_max_) == (2.0, 4.0)
    assert np.all(np.isfinite(est.predict(X)))
    # A stream may start with one row: partial_fit takes it, the scale centred on its value.
    est = XCSFRegressor().partial_fit(X[:1], [3.0])
    assert (est.y_min_, est.y_max_) == (2.0, 4.0)


# ----------------------------------------------------------------------------- KACS inspection


def test_predict_components_and_submodel_table(data):
    X, y, Xh, _ = data
    est = KACSRegressor(n_iter=3000, random_state=5).fit(X[:800], y[:800])
    n = 2
    comp = est.predict_components(Xh[:50])
    assert comp.psihat.shape == (50, 2 * n + 1, n)
    assert comp.zhat.shape == (50, 2 * n + 1)
    assert comp.phihat.shape == (50, 2 * n + 1)
    np.testing.assert_allclose(comp.zhat, comp.psihat.sum(axis=2), rtol=0, atol=1e-12)
    np.testing.assert_allclose(comp.phihat.sum(axis=1), comp.y_hat, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(est.inverse_scale_target(comp.y_hat), est.predict(Xh[:50]))

    table = est.submodel_table_
    assert len(table) == (n + 1) * (2 * n + 1)
    assert list(table.columns[:6]) == ["submodel", "type", "q", "p", "rules", "micro"]
    assert (table["type"] == "inner").sum() == n * (2 * n + 1)
    assert int(table["rules"].sum()) == est.n_rules_
    assert int(table["micro"].sum()) == est.n_micro_
    counts = est.rules_.groupby(["type", "q", "p"]).size()
    for row in table.itertuples():
        assert row.rules == counts.get((row.type, row.q, row.p), 0)
    assert est.zhat_range_.shape == (2 * n + 1, 2)
    assert np.all(est.zhat_range_[:, 0] <= est.zhat_range_[:, 1])


def test_xcsf_has_no_kacs_inspection(data):
    X, y, _, _ = data
    est = XCSFRegressor(n_iter=300).fit(X[:100], y[:100])
    assert not hasattr(est, "predict_components")
    assert not hasattr(est, "submodel_table_")


@pytest.mark.slow
def test_the_package_names_each_learners_estimator_and_imports_none_before_use():
    """`kacs_cli` exports the estimator of every registered learner (found in
    estimators/regressors.py, no list of its own) and `load`; importing the package or one of
    its small modules does not import the estimators (scikit-learn): the CLI starts without them."""
    import subprocess
    import sys

    from kacs_cli.engine import registry
    from kacs_cli.estimators import estimator_class

    code = ("import sys, kacs_cli; from kacs_cli import atomic, errors; "
            "assert 'sklearn' not in sys.modules and 'kacs_cli.estimators' not in sys.modules; "
            "print(' '.join(kacs_cli.__all__)); from kacs_cli import *; print(KACSRegressor.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    names, star = out.splitlines()
    assert sorted(names.split()) == sorted([estimator_class(m).__name__ for m in registry.names()] + ["load", "__version__"])
    assert star == "KACSRegressor"
    import kacs_cli
    with pytest.raises(AttributeError, match="no attribute 'ToyRegressor'"):
        kacs_cli.ToyRegressor
