"""The baseline registry: batch regressors run beside the online learners (kacs, xcsf).

A baseline is fitted once on a run's train split and predicts its train and test rows: the
same split, scaling and learner seed as the learners of that run (runner.execute_task), the
same metrics, a parameter count and AIC; no curve and no rules. The engine registry
(engine/registry.py) lists the online learners; this one lists the baselines, each an
`Entry`: its config name, the estimator class (an import path), departures from that class's
defaults, the optional pip extra its packages come with, and how its parameters are counted.
Configs, the runner and the report ask this registry; none of them names a baseline.

    ridge, knn, rf, gbr, mlp, svr   scikit-learn regressors (sklearn_models.py)
    estimator                       any regressor by import path: {estimator: module.Class}
    xcsf-lib                        Preen's `xcsf` package (xcsf_lib.py), extra xcsf-lib
    kan                             a pykan Kolmogorov-Arnold network (kan_net.py), extra kan
    xkan                            X-KAN: XCSF rules with KAN consequents (xkan.py, spline_kan.py)
    ebm, figs, rulefit              interpretable models (interpretable.py): InterpretML's
                                    Explainable Boosting Machine (extra ebm), imodels' FIGS
                                    and RuleFit (extra imodels)

`resolve` turns a method's config entry into a `Spec` (every parameter spelled out, checked
before any run); `fit_predict` runs it on one split. Both live in registry.py.
"""

from __future__ import annotations

# The registry lives in registry.py; the package keeps its names, which the runner, configs
# and tests use as `baselines.<name>`.
from kacs_cli.baselines.registry import (CATEGORICAL, CATEGORICAL_PARAM, IMPUTE, JOBS_PARAM, OPEN, PARTIAL, SEED_PARAM, Entry, Fitted, Spec, build,
                                         find, fit_predict, get, import_estimator, names, preload, resolve,
                                         specs_of, takes_missing, takes_sample_weight)

__all__ = ["CATEGORICAL", "CATEGORICAL_PARAM", "Entry", "Fitted", "IMPUTE", "JOBS_PARAM", "OPEN", "PARTIAL", "SEED_PARAM", "Spec", "build", "find",
           "fit_predict", "get", "import_estimator", "names", "preload", "resolve", "specs_of",
           "takes_missing", "takes_sample_weight"]
