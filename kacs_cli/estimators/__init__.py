"""The estimators layer: scikit-learn regressors over the engines, their model files, inspection.

It imports the engine and the small shared modules (scaling, errors, atomic) and nothing
above it (experiments, reporting, commands, cli).
"""

from kacs_cli.estimators.base import (
    Components,
    KACSRegressor,
    LearnerRegressor,
    XCSFRegressor,
    estimator_class,
    load,
    load_estimator,
)
from kacs_cli.estimators.inspection import kacs_functions, submodel_table
from kacs_cli.estimators.plots import plot_kacs_functions

__all__ = ["Components", "KACSRegressor", "LearnerRegressor", "XCSFRegressor", "estimator_class",
           "kacs_functions", "load", "load_estimator", "plot_kacs_functions", "submodel_table"]
