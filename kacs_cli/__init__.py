"""kacs: the Kolmogorov-Arnold Classifier System (KACS) and XCSF.

Fast numba engines, the article's benchmarks and protocols, an experiment runner and
reports. See README.md and ../shared/SPEC.md for the algorithms.
"""

__version__ = "0.1.0"


def __getattr__(name):
    # The estimators pull in scikit-learn; import them lazily so the CLI starts fast.
    if name in ("KACSRegressor", "XCSFRegressor"):
        from kacs_cli import api

        return getattr(api, name)
    raise AttributeError(f"module 'kacs_cli' has no attribute {name!r}")


__all__ = ["KACSRegressor", "XCSFRegressor", "__version__"]
