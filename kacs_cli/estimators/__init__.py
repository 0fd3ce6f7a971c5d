"""The estimators layer: scikit-learn regressors over the engines, their model files, inspection.

    >>> from kacs_cli import KACSRegressor, load
    >>> est = KACSRegressor(n_iter=20_000, random_state=0).fit(X_train, y_train)
    >>> est.predict(X_test)                      # original target units
    >>> est.rules_, est.submodel_table_          # the learned rules, per submodel counts
    >>> est.save("model.kacs"); KACSRegressor.load("model.kacs"); load("model.kacs")

It imports the engine and the small shared modules (scaling, errors, atomic) and nothing
above it (experiments, reporting, cli). Inside it, imports point one way, from the
top of this list to the bottom:

- regressors: `KACSRegressor` and `XCSFRegressor`, the two public estimators
- base: `LearnerRegressor`, the estimator they are (scaling, fit, partial_fit, predict, save,
  the export and restoring of its state); validation: the checks of its arguments
- explain: what a KACS model says (`kacs explain`): its rule table, the variance shares of
  inputs and channels, small-multiple figures
- fidelity: structural fidelity of any fitted regressor to a known function (per-input
  centred partial dependence against the true one, R^2 per input)
- plots: the picture of a KACS model's functions (`kacs plot-model`); inspection: its
  submodel table and sampled functions
- loading: `load` and `load_estimator`; classes: the estimator classes by name
- persistence: the model file format (an engine model plus the state dict an estimator
  exports); it knows no estimator
"""

from kacs_cli.estimators.base import LearnerRegressor
from kacs_cli.estimators.classes import estimator_class
from kacs_cli.estimators.explain import Explanation, explain_model
from kacs_cli.estimators.inspection import kacs_functions, submodel_table
from kacs_cli.estimators.loading import load, load_estimator
from kacs_cli.estimators.plots import plot_kacs_functions
from kacs_cli.estimators import regressors
from kacs_cli.estimators.regressors import *  # noqa: F403 (every learner's estimator, as regressors.__all__ lists it)

__all__ = [*regressors.__all__, "Explanation", "LearnerRegressor", "estimator_class", "explain_model",
           "kacs_functions", "load", "load_estimator", "plot_kacs_functions", "submodel_table"]
