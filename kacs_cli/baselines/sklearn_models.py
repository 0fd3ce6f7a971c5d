"""scikit-learn regressors as baselines: short names, any regressor by import path, and the
parameter count of a fitted scikit-learn regressor read from what it stores.

Every estimator keeps scikit-learn's defaults unless `defaults` says otherwise; a config
overrides any parameter. The runner sets random_state (the run's learner seed) and n_jobs (1).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kacs_cli.baselines.entry import OPEN, Entry


def _tree(tree) -> int:
    """A fitted binary tree (sklearn.tree._tree.Tree): 2 per split (feature, threshold),
    1 per leaf (its value)."""
    leaves = int(np.sum(tree.children_left == -1))
    return 2 * (int(tree.node_count) - leaves) + leaves


def _hist_tree(predictor) -> int:
    """A tree of HistGradientBoostingRegressor (its TreePredictor), counted as _tree counts."""
    leaves = int(np.sum(predictor.nodes["is_leaf"]))
    return 2 * (len(predictor.nodes) - leaves) + leaves


def count_parameters(est: Any, n: int) -> Optional[int]:
    """Parameters of a fitted scikit-learn regressor, from the attributes it was fitted with
    (docs/baselines.md's table); None for a kind it does not know."""
    if hasattr(est, "tree_"):                                   # decision tree
        return _tree(est.tree_)
    if hasattr(est, "_predictors"):                             # histogram gradient boosting
        # the trees, plus the constant they start from
        return 1 + sum(_hist_tree(p) for stage in est._predictors for p in stage)
    if hasattr(est, "estimators_"):                             # forests, bagging, boosting
        parts = [count_parameters(e, n) for e in np.ravel(np.asarray(est.estimators_, dtype=object))]
        init = getattr(est, "init_", None)
        if init is not None and hasattr(init, "fit"):           # gradient boosting's start
            parts.append(count_parameters(init, n))
        return None if any(p is None for p in parts) else int(sum(parts))
    if hasattr(est, "coefs_") and hasattr(est, "intercepts_"):  # multi-layer perceptron
        return int(sum(w.size for w in est.coefs_) + sum(b.size for b in est.intercepts_))
    if hasattr(est, "support_vectors_"):                        # support vector machines
        return int(est.support_vectors_.size + np.size(est.dual_coef_) + np.size(est.intercept_))
    if hasattr(est, "n_samples_fit_"):                          # nearest neighbours
        # every stored training row: its inputs and its target
        return int(est.n_samples_fit_) * (int(est.n_features_in_) + 1)
    if hasattr(est, "coef_"):                                   # linear models
        intercept = np.size(est.intercept_) if getattr(est, "fit_intercept", True) else 0
        return int(np.size(est.coef_) + intercept)
    if hasattr(est, "constant_"):                               # DummyRegressor
        return int(np.size(est.constant_))
    return None


# Costs: seconds of one fit at scikit-learn's defaults, fitted to f1 (1,000 rows, n = 10)
# and CCPP (9,568 rows, n = 4) on one core (docs/baselines.md, Methods).
ENTRIES = (
    Entry("ridge", "ridge", "sklearn.linear_model.Ridge", count_parameters,
          counted="n weights + 1 intercept", cost=lambda rows, n: rows * n * 1e-7),
    Entry("knn", "kNN", "sklearn.neighbors.KNeighborsRegressor", count_parameters,
          counted="stored training values: train rows x (n inputs + 1 target)",
          cost=lambda rows, n: rows * n * 1e-6),
    Entry("rf", "random forest", "sklearn.ensemble.RandomForestRegressor", count_parameters,
          counted="per tree: 2 per split node (feature, threshold) + 1 per leaf (value)",
          cost=lambda rows, n: rows * n * 4.5e-5),
    Entry("gbr", "HGB", "sklearn.ensemble.HistGradientBoostingRegressor", count_parameters,
          counted="per tree: 2 per split node (feature, threshold) + 1 per leaf (value); + 1 start value",
          cost=lambda rows, n: 0.1 + rows * 1.5e-5),
    Entry("mlp", "MLP", "sklearn.neural_network.MLPRegressor", count_parameters,
          counted="weights and biases of every layer",
          cost=lambda rows, n: rows * n * 2e-5),
    Entry("svr", "SVR", "sklearn.svm.SVR", count_parameters,
          counted="support vectors x (n inputs + 1 dual coefficient) + 1 intercept",
          cost=lambda rows, n: rows * rows * 1e-8),
    Entry(OPEN, "estimator", None, count_parameters,
          counted="as the kind above it belongs to (trees, ensembles, linear, MLP, SVM, kNN); "
                  "empty for other kinds"),
)
