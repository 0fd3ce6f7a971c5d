"""The interpretable baselines ebm, figs and rulefit (kacs_cli/baselines/interpretable.py):
each fits through the registry, its parameter count equals a hand count on a tiny model whose
structure the data fix, one seed gives one model, and `kacs run` runs the three."""

import importlib.util

import numpy as np
import pandas as pd
import pytest
import yaml

from kacs_cli import baselines

from cli_support import run_kacs
from repo_support import project_config

needs_ebm = pytest.mark.skipif(importlib.util.find_spec("interpret") is None,
                               reason="the ebm extra is not installed (pip install 'kacs[ebm]')")
needs_imodels = pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("imodels", "six")),
                                   reason="the imodels extra is not installed (pip install 'kacs[imodels]')")
# EBM at a budget a test can afford: its default 14 bags of up to 50,000 rounds take minutes.
EBM_SMALL = {"outer_bags": 2, "max_rounds": 300, "smoothing_rounds": 50, "interaction_smoothing_rounds": 20}


def smooth(rows=120, n=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    return X, np.sin(3.0 * X[:, 0]) + X[:, 1] * X[:, -1] + 0.05 * rng.standard_normal(rows)


def fit(name, overrides, X, y, seed=0):
    spec = baselines.resolve(name, overrides)
    return baselines.fit_predict(spec, seed, X, y, X[:7])


@pytest.mark.parametrize("name,overrides", [
    pytest.param("ebm", EBM_SMALL, marks=needs_ebm),
    pytest.param("figs", {"max_rules": 6}, marks=needs_imodels),
    pytest.param("rulefit", {"n_estimators": 10, "max_rules": 8}, marks=[needs_imodels, pytest.mark.slow]),
])
def test_fits_through_the_registry_one_seed_one_model(name, overrides):
    X, y = smooth()
    a, b, c = fit(name, overrides, X, y, seed=3), fit(name, overrides, X, y, seed=3), fit(name, overrides, X, y, seed=4)
    assert a.estimator.random_state == 3 and c.estimator.random_state == 4
    assert np.array_equal(a.y_train, b.y_train) and np.array_equal(a.y_test, b.y_test) and a.params == b.params
    # a model at all: better than predicting the mean on its train rows
    assert np.mean(np.abs(a.y_train - y)) < 0.8 * np.mean(np.abs(y - y.mean()))
    assert a.y_test.shape == (7,) and np.array_equal(a.y_test, a.y_train[:7])
    assert baselines.get(name).extra in ("ebm", "imodels")


@needs_ebm
def test_ebm_counts_one_score_per_bin_of_each_shape_function_and_pair_table():
    # Inputs with 3 distinct values: 3 bins each for the shape functions; 2 bins per input for
    # the pair table (max_interaction_bins 4 less the missing and unseen bins); y has a product
    # term so the one pair of two inputs is kept. 3 + 3 + 2 * 2 scores + 1 intercept.
    rng = np.random.default_rng(1)
    X = rng.choice([0.0, 0.5, 1.0], size=(300, 2))
    y = X[:, 0] + X[:, 1] + 2.0 * X[:, 0] * X[:, 1]
    fitted = fit("ebm", {**EBM_SMALL, "max_interaction_bins": 4}, X, y)
    assert [tuple(t) for t in fitted.estimator.term_features_] == [(0,), (1,), (0, 1)]
    assert fitted.params == 3 + 3 + 2 * 2 + 1
    # every counted score is reached by the data: each main-effect bin is the bin of one value
    ebm = fitted.estimator
    for term in (0, 1):
        scores = ebm.term_scores_[term][1:-1]
        alone = np.zeros((3, 2))
        alone[:, term] = [0.0, 0.5, 1.0]
        assert len(scores) == 3 and np.unique(ebm.eval_terms(alone)[:, term]).size == 3


@needs_imodels
def test_figs_counts_feature_and_threshold_per_split_and_one_value_per_leaf():
    # Two steps on two inputs: FIGS's best two splits are one stump per input (a new tree
    # for the second input explains all rows, a split under the first only half), so two
    # trees of one split and two leaves each: 2 x (2 + 2).
    rng = np.random.default_rng(2)
    X = rng.random((200, 3))
    y = 2.0 * (X[:, 0] > 0.5) + 1.0 * (X[:, 1] > 0.3)
    fitted = fit("figs", {"max_rules": 2}, X, y)
    trees = fitted.estimator.trees_
    assert len(trees) == 2 and {trees[0].feature, trees[1].feature} == {0, 1}
    assert fitted.params == 2 * (2 + 2)
    # the two steps recovered (FIGS does not refit the first tree's leaves after the second)
    assert np.max(np.abs(fitted.y_train - y)) < 0.05
    # a third rule splits a leaf: 3 splits and 5 leaves over the trees
    assert fit("figs", {"max_rules": 3}, *smooth()).params == 2 * 3 + 5


@pytest.mark.slow
@needs_imodels
def test_rulefit_counts_conditions_coefficients_and_the_intercept():
    X, y = smooth(rows=150)
    # stumps only, no linear terms: every rule is one condition, 2 + 1 parameters
    stumps = fit("rulefit", {"n_estimators": 20, "tree_size": 2, "exp_rand_tree_size": False,
                             "include_linear": False, "max_rules": 6}, X, y).estimator
    kept = [r for r in stumps._get_rules(exclude_zero_coef=True).itertuples() if r.type == "rule"]
    assert 0 < len(kept) <= 6 and all(" and " not in r.rule for r in kept)
    assert baselines.get("rulefit").param_count(stumps, 3) == 3 * len(kept) + 1
    # the general case, counted from the library's own table of the fitted model
    fitted = fit("rulefit", {"n_estimators": 20, "max_rules": 10}, X, y)
    table = fitted.estimator._get_rules(exclude_zero_coef=True)
    rules, linear = table[table.type == "rule"], table[table.type == "linear"]
    conditions = sum(len(set(rule.split(" and "))) for rule in rules.rule)
    assert len(rules) > 0 and conditions > len(rules)
    assert fitted.params == 2 * conditions + len(rules) + len(linear) + 1


@pytest.mark.slow
@needs_ebm
@needs_imodels
def test_kacs_run_runs_the_three(capsys, tmp_path):
    config = {
        "experiment": "tiny-readable",
        "methods": {"ebm": EBM_SMALL, "figs": {"max_rules": 10}, "rulefit": {"n_estimators": 10, "max_rules": 10}},
        "benchmarks": [{"name": "f1", "n": 3, "samples": 80}],
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    code, _, err = run_kacs(capsys, "run", path, "--out", tmp_path / "out", "--iterations", 2000, "--runs", 1)
    assert code == 0, err
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert list(runs["method"]) == ["ebm", "figs", "rulefit"]
    assert runs["params"].gt(0).all() and runs["test_mae"].between(0, 2).all()
    resolved = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())
    params = resolved["cells"][0]["hyperparameters"]
    assert params["ebm"]["estimator"] == "interpret.glassbox.ExplainableBoostingRegressor"
    assert params["ebm"]["params"]["n_jobs"] == 1 and params["figs"]["params"]["max_rules"] == 10


def test_a_missing_extra_names_its_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("interpret", "imodels")
                        else real(name, *a))
    assert baselines.resolve("ebm", {}).missing == "method ebm needs the optional extra: pip install 'kacs[ebm]'"
    assert baselines.resolve("figs", {}).missing == "method figs needs the optional extra: pip install 'kacs[imodels]'"


def test_the_readable_config_resolves():


    config = project_config("readable")
    assert config.methods == ("kacs-r20", "kacs-r10", "kacs-r05", "kacs-r02", "kacs-r01", "xcsf-closest", "xkan",
                              "ebm", "ebm-additive", "ebm-interpretml", "figs-12", "figs", "figs-200", "rulefit-30",
                              "rulefit", "kan", "gbr")
    assert [c.label for c in config.cells] == ["f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec"]
    assert (config.protocol.name, config.protocol.runs, config.iterations) == ("main", 30, 100_000)
    f1 = config.cells[0].params
    assert [f1[f"kacs-r{r}"].compact_rules for r in ("20", "10", "05", "02", "01")] == [0.2, 0.1, 0.05, 0.02, 0.01]
    assert f1["xcsf-closest"].compaction == "closest"
    # X-KAN's P# as its authors run it: 0 on f1-f4, 0.8 on the real data
    assert [c.params["xkan"].params["P_hash"] for c in config.cells] == [0.0] * 4 + [0.8] * 4
    assert [f1[m].params["max_rules"] for m in ("figs-12", "figs", "figs-200", "rulefit-30", "rulefit")] == \
        [12, 50, 200, 30, 100]


@needs_ebm
def test_the_readable_config_runs_ebm_at_three_sizes():
    """The entry's measured budget, a small additive model, and InterpretML's own defaults."""

    from interpret.glassbox import ExplainableBoostingRegressor


    f1 = project_config("readable").cells[0].params
    budget = ("outer_bags", "max_bins", "max_interaction_bins", "interactions")
    assert [[f1[m].params[k] for k in budget] for m in ("ebm", "ebm-additive", "ebm-interpretml")] == \
        [[4, 1024, 16, "5x"], [4, 64, 16, 0], [14, 1024, 64, "5x"]]
    own = ExplainableBoostingRegressor().get_params()
    assert {k: f1["ebm-interpretml"].params[k] for k in budget} == {k: own[k] for k in budget}
