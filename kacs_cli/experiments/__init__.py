"""The experiments layer, in two subpackages by job:

- `data`: what a run learns from: the generated benchmarks f1-f4, the dataset registry and
  the data directory, reading and checking CSV files, fetching and importing datasets, and
  the protocols (splits, scaling, run plans);
- `campaign`: `kacs run` and `kacs scale`: configs resolved into cells, the methods and their
  hyperparameters, the runs a campaign asks for, their execution in worker processes, reuse
  of finished runs, and the results folder.

The layer imports the engine, the baselines and the small shared modules (scaling, errors,
atomic) and nothing above it (estimators, reporting, cli); `campaign` imports `data`, never
the other way round.
"""
