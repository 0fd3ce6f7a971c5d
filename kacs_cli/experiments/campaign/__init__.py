"""Campaigns: `kacs run` and `kacs scale`, from a config file to a results folder.

Inside the subpackage, imports point one way, from the top of this list to the bottom:

- runner: a campaign (`run_campaign`: plan, prepare, execute; resume, reuse, fan-out, the
  folder's config; a Reporter hears what happens);
  workers: where runs execute (local processes, Dask); execution: one run and its cell's
  data; tasks: the runs a config asks for and their cost
- reuse: runs copied from identical runs of finished campaigns; provenance: what produced a
  folder's rows (engine fingerprint, BLAS kernels, commit) and whether two engines are the
  same; curvestore: the curves and their committed compact form `curves.csv.gz`
- sweeps: the configs of `kacs scale`; config: `ExperimentConfig` and the resolution of a
  config file; methods: the methods and the hyperparameters of each (cell, method); cells:
  the data identity, the benchmark entries, the cells and their labels; schema: YAML and
  the checks every key shares
- results: the results folder, the only module that knows its files and their columns;
  resolved: the parts of a folder's config.yaml read back (a cell, each method's settings in
  it, a report's include); metrics: what each measured column of runs.csv is (label, count or not, range, protocols)
"""
