"""The experiments layer: benchmarks, datasets, protocols, configs, the runner and its results.

It imports the engine, the baselines and the small shared modules (scaling, errors, atomic)
and nothing above it (estimators, reporting, cli). Inside it, imports point one
way, from the top of this list to the bottom:

- runner: a campaign (`run_campaign`: plan, prepare, execute; resume, reuse, fan-out, the
  folder's config; a Reporter hears what happens);
  workers: where runs execute (local processes, Dask); execution: one run and its cell's
  data; tasks: the runs a config asks for and their cost
- reuse: runs copied from identical runs of finished campaigns; curvestore: the curves and
  their committed compact form `curves.csv.gz`
- sweeps: the configs of `kacs scale`; config: `ExperimentConfig` and the resolution of a
  config file; methods: the methods and the hyperparameters of each (cell, method); cells:
  the data identity, the benchmark entries, the cells and their labels; schema: YAML and
  the checks every key shares
- results: the results folder, the only module that knows its files and their columns;
  metrics: what each measured column of runs.csv is (label, count or not, range, protocols)
- bench: `kacs bench`
- dataset_fetch: import and fetch of the datasets; datasets: reading CSVs, loading and
  checking the registry's datasets; dataset_registry: the registry and the data directory
- protocols: splits, scaling and run plans; benchmarks: f1-f4 and their variants
"""

from pathlib import Path

# The data shipped inside the package (the dataset registry, the published tables the report
# compares with): found by every kind of install, not only by a checkout.
PACKAGE_DATA = Path(__file__).resolve().parent / "data"
