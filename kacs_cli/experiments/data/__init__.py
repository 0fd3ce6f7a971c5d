"""What a run learns from: benchmarks, datasets, the data directory and protocols.

Inside the subpackage, imports point one way, from the top of this list to the bottom:

- fetch: import and fetch of the datasets; packaged: the suite's datasets built from tables
  bundled inside Python packages; datasets: reading CSVs, loading and checking the registry's
  datasets; registry: the dataset registry and the data directory
- protocols: splits, scaling and run plans; benchmarks: f1-f4 and their variants
"""

from pathlib import Path

# The data shipped inside the package (the dataset registry, the published tables the report
# compares with): found by every kind of install, not only by a checkout.
PACKAGE_DATA = Path(__file__).resolve().parent
