"""The experiments layer: benchmarks, datasets, protocols, configs, the runner and its results.

It imports the engine, the baselines and the shared helpers (atomic, errors, scaling) below
it, never the estimators, the report or the command line above it.
"""

from pathlib import Path

# The data shipped inside the package (the dataset registry, the published tables the report
# compares with): found by every kind of install, not only by a checkout.
PACKAGE_DATA = Path(__file__).resolve().parent / "data"
