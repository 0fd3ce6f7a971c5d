"""kacs: the Kolmogorov-Arnold Classifier System (KACS) and XCSF.

Fast numba engines, the article's benchmarks and protocols, an experiment runner and
reports. See README.md, and docs/algorithm.md for the algorithms.
"""

from kacs_cli.version import __version__


def _estimator_api() -> list[str]:
    """The package's estimator names: every regressor of kacs_cli/estimators/regressors.py (a
    learner's estimator is named after it, e.g. KACSRegressor) and `load`."""
    from kacs_cli.estimators import regressors

    return [*(name for name in regressors.__all__ if name.endswith("Regressor")), "load"]


def __getattr__(name):
    # The estimators pull in scikit-learn: they are imported on first use, so the CLI starts
    # fast. Only their own names reach here (`from kacs_cli import atomic` must not import them).
    if name == "__all__":
        return [*_estimator_api(), "__version__"]
    if (name == "load" or name.endswith("Regressor")) and name in _estimator_api():
        from kacs_cli import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'kacs_cli' has no attribute {name!r}")
