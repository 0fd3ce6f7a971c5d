"""The reporting layer: `kacs report`'s statistics, tables and figures of finished runs.

It reads results folders (runs.csv, config.yaml, curves) and writes Markdown, LaTeX, CSV and
PNG; it trains nothing. It imports the layers below it (the engine's registry, the runner's
CSV reader, the curve store) and nothing above it (commands, cli).
"""
