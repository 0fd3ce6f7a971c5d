"""kacs: the Kolmogorov-Arnold Classifier System (KACS) and XCSF.

Fast numba engines, the article's benchmarks and protocols, an experiment runner and
reports. See README.md, and docs/algorithm.md for the algorithms.
"""

from kacs_cli.version import __version__

_ESTIMATOR_API = ("KACSRegressor", "XCSFRegressor", "load")


def __getattr__(name):
    # The estimators pull in scikit-learn; import them lazily so the CLI starts fast.
    if name in _ESTIMATOR_API:
        from kacs_cli import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'kacs_cli' has no attribute {name!r}")


__all__ = [*_ESTIMATOR_API, "__version__"]
