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
    kacs_functions,
    load,
    load_estimator,
    plot_kacs_functions,
    submodel_table,
)

__all__ = ["Components", "KACSRegressor", "LearnerRegressor", "XCSFRegressor", "estimator_class",
           "kacs_functions", "load", "load_estimator", "plot_kacs_functions", "submodel_table"]
