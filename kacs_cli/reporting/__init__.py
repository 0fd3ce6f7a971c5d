"""The reporting layer: `kacs report`'s statistics, tables and figures of finished runs.

It reads results folders (config.yaml, runs.csv, curves) and writes Markdown, LaTeX, CSV and
PNG; it trains nothing. It imports the layers below it (the engine's registry, the runner's
CSV reader, the curve store) and nothing above it (cli). Inside it, imports point
one way: `build` at the top, `model`, `files` and `stats` at the bottom.

- build: `build_report` and `analyse_experiment`, which put the pieces below together
- index: the experiment folders below a results folder, their order, the index
- include: cells taken from a sibling experiment (`report: {include: ...}` in a config)
- loading: an experiment folder's config, runs and cells; missing: what a campaign lacks
- pair: the article's two-method statistics and tables; scaling: the scaling tables;
  paper: the comparison with the published table; suprb: the SupRB table
- missing_inputs: values removed at random, native handling against complete data and imputation
- kmethods: the section for cells with more than two methods; kstats, cd_diagram: its
  statistics and critical-difference diagram
- figures: the PNG figures; tables: `Table`, number formats, Markdown and LaTeX;
  files: file names, formats and writing; stats: the two-method tests; model: the data classes
"""
