"""Bad parameters and bad arrays raise one clear ValueError that names the culprit."""

import numpy as np
import pytest

from kacs_cli.engine import Hyperparameters, Model, train_run
from kacs_cli.engine.params import ARTICLE_SWITCHES, COMPACT_FIELDS, REFINE_FIELDS


@pytest.mark.parametrize("name,value", [
    ("N", 0), ("N", -5), ("N", 10.5),
    ("beta", -0.1), ("beta", 1.5), ("eta", -0.001), ("m0", -0.1), ("r0", -1.0), ("r0", 0.0),
    ("nu", -1.0), ("theta_GA", -1), ("theta_del", -1), ("theta_sub", -1), ("F_I", -0.01),
    ("F_I", 0.0), ("e0", 0.0), ("e0", -0.01), ("alpha", 0.0), ("eps_adam", 0.0),
    ("chi", -0.1), ("chi", 1.1), ("mu", 1.5), ("mu", -0.5), ("tau", 1.2), ("tau", 0.0),
    ("P_hash", 1.01), ("P_hash", -0.2), ("delta", -0.1),
    ("beta1", 1.0), ("beta2", 1.0), ("beta1", -0.1),
    ("N", float("nan")), ("beta", float("inf")), ("eta", "fast"),
    ("semantics", "prose"), ("do_subsumption", "yes"), ("article_deletion_vote", 1),
    ("article_mutation", "true"), ("slope_after_outer_update", "no"),
])
def test_bad_hyperparameter(name, value):
    with pytest.raises(ValueError, match=rf"\b{name}\b") as info:
        Hyperparameters(**{name: value})
    assert "\n" not in str(info.value)


def test_good_extremes_are_accepted():
    Hyperparameters(N=1, chi=0.0, mu=0.0, tau=1.0, P_hash=1.0, beta=0.0, eta=0.0,
                    theta_GA=0, delta=1.0, semantics="article", do_subsumption=False)


def test_the_engine_reads_every_hyperparameter_typed_and_with_one_signature():
    import numba

    base = Hyperparameters().for_engine()
    # N is population state (it can grow), semantics reaches the engine through the article
    # switches, budget as budget state; the input transform, the categorical inputs' placement,
    # the order of the rows and the refinement, its smoothness and its values at missing inputs,
    # bagging and the searches act outside the compiled loop.
    outside = {"N", "semantics", "budget", "input_transform", "refinement", *REFINE_FIELDS,
               "refine_smoothness", "smoothness", "missing_value", "compaction", *COMPACT_FIELDS, "article_reshuffle",
               "capacity", "capacity_max", "capacity_validation", "capacity_folds", "capacity_channels",
               "capacity_min", "bags", "categorical", "impute"}
    assert set(base._fields) == set(Hyperparameters.names()) - outside
    assert base.beta == 0.2 and base.do_subsumption is True
    engine_switches = [s for s in ARTICLE_SWITCHES if s != "article_reshuffle"]
    assert not any(getattr(base, s) for s in engine_switches)
    # Integral values given as floats (and the reverse) do not change the compiled signature:
    # one cached machine code for every config.
    other = Hyperparameters(N=100.0, theta_GA=7, N_max=300.0, budget_window=10.0, e0=1,
                            semantics="article").for_engine()
    assert numba.typeof(other) == numba.typeof(base)
    assert other.N_max == 300 and other.theta_GA == 7.0
    # `semantics: article` turns every switch on; under reference one switch turns on alone.
    assert all(getattr(other, s) is True for s in engine_switches)
    one = Hyperparameters(article_mutation=True).for_engine()
    assert [s for s in engine_switches if getattr(one, s)] == ["article_mutation"]
    assert numba.typeof(one) == numba.typeof(base)


def test_unknown_override_is_named():
    with pytest.raises(ValueError, match="thetaGA"):
        Hyperparameters().with_overrides(thetaGA=3)


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    X = rng.random((20, 3))
    y = rng.random(20)
    return X, y


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_bad_training_arrays(method, arrays):
    X, y = arrays
    model = Model(method, 3, Hyperparameters(N=50))
    with pytest.raises(ValueError, match="y_train"):
        model.train(X, y[:-1], 10, seed=0)
    with pytest.raises(ValueError, match="X_train"):
        model.train(X[:, :2], y, 10, seed=0)
    with pytest.raises(ValueError, match="X_train"):
        model.train(X[0], y[:1], 10, seed=0)  # 1-D inputs
    # A missing input is NaN and trains (tests/test_missing.py); an infinite one is refused.
    Xn = X.copy()
    Xn[3, 1] = np.inf
    with pytest.raises(ValueError, match="X_train.*infinite"):
        model.train(Xn, y, 10, seed=0)
    yn = y.copy()
    yn[5] = np.nan
    with pytest.raises(ValueError, match="y_train.*NaN"):
        model.train(X, yn, 10, seed=0)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="X_train"):
        model.train(Xi, y, 10, seed=0)
    with pytest.raises(ValueError, match="X_test"):
        model.train(X, y, 10, seed=0, X_test=X[:, :2], y_test=y)
    with pytest.raises(ValueError, match="y_test"):
        model.train(X, y, 10, seed=0, X_test=X, y_test=y[:3])
    with pytest.raises(ValueError, match="iterations"):
        model.train(X, y, 0, seed=0)
    with pytest.raises(ValueError, match="eval_every"):
        model.train(X, y, 10, seed=0, eval_every=0)
    # Nothing was learned by the failed calls.
    assert model.n_rules == 0 and model.iterations_done == 0
    with pytest.raises(ValueError, match="X"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="infinite"):
        model.predict(Xn)


def test_bad_model_arguments(arrays):
    with pytest.raises(ValueError, match="method"):
        Model("xcs", 3)
    with pytest.raises(ValueError, match=r"\bn\b"):
        Model("kacs", 0)
    with pytest.raises(ValueError, match="components"):
        Model("xcsf", 3).predict_components(arrays[0])


def test_train_run_rejects_mismatched_arrays(arrays):
    X, y = arrays
    params = Hyperparameters(N=50)
    with pytest.raises(ValueError, match="y_train"):
        train_run("kacs", X, y[:5], X, y, params=params, iterations=10, eval_every=5)
    with pytest.raises(ValueError, match="X_test"):
        train_run("xcsf", X, y, X[:, :1], y, params=params, iterations=10, eval_every=5)
    Xn = X.copy()
    Xn[0, 0] = -np.inf
    with pytest.raises(ValueError, match="X_test.*infinite"):
        train_run("xcsf", X, y, Xn, y, params=params, iterations=10, eval_every=5)
