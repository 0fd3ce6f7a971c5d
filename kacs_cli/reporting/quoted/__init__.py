"""The tables and values a report writes for the documents to quote (CSV only).

A campaign whose findings README.md and docs/ quote has them computed here, once, by its
config's experiment name: `<experiment>_quoted-NAME.csv` is a table with its cells as a
document shows them (Markdown emphasis included; a table without rows has one header that
says why), `<experiment>_quoted.csv` its single values (columns quote, text), a few words
each. They are made of the report's own tables as written (its CSVs, 10 significant digits)
and the folder's runs, so a quoted number is the one a CSV of the report holds; tools/doctables
copies them between a document's markers and computes nothing itself. A campaign that lacks
what one of them reads (unfinished, or another campaign of the same name) gets none of that
one; a table an earlier render wrote and this one does not is removed.

Modules: `common.py` (an experiment's report tables as written, the pairwise comparisons,
ranks, verdicts against a control, the documents' number formats), and per campaign family
`article.py` (the article's experiments), `adaptive.py`, `baselines.py` (baselines,
regressors), `robustness.py`, `compaction.py`, `capacity.py` (the capacity campaigns, the
recommended setting and the suite's), `readable.py` (accuracy against size), `semantics.py`
(the article's prose against the authors' code), `variance.py` (the levers against variance),
`missing_inputs.py` (missing values on the suite, and a value learned at a missing input).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kacs_cli.reporting.files import slug, write_csv
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.quoted import (adaptive, article, baselines, capacity, compaction, missing_inputs, readable,
                                       robustness, semantics, variance)
from kacs_cli.reporting.quoted.common import Quoted, Source

VALUES = "quoted"  # <experiment>_quoted.csv: the values; <experiment>_quoted-NAME.csv: the tables


def _gather() -> dict:
    out: dict = {}
    for module in (article, adaptive, baselines, robustness, compaction, capacity, readable, semantics, variance,
                   missing_inputs):
        for experiment, producers in module.EXPERIMENTS.items():
            if experiment in out:
                raise RuntimeError(f"experiment {experiment!r} is quoted by two modules")
            out[experiment] = producers
    return out


EXPERIMENTS = _gather()


def quote(exp: ExperimentReport, out: Path) -> Quoted:
    """What the experiment's documents quote, from its report tables in `out`."""
    src = Source(exp, out)
    quoted = Quoted()
    for produce in EXPERIMENTS.get(src.config.experiment or exp.name, ()):
        try:
            found = produce(src)
        except (LookupError, ValueError):  # the campaign lacks what this one reads
            continue
        quoted.update(found)
    return quoted


def write(exp: ExperimentReport, out: Path) -> list[Path]:
    """Write the experiment's quoted tables and values beside its report tables; their paths."""
    stem, quoted, written = slug(exp.name), quote(exp, out), []
    for name, (headers, rows) in quoted.tables.items():
        path = out / f"{stem}_{VALUES}-{name}.csv"
        write_csv(path, pd.DataFrame(rows, columns=headers))
        written.append(path)
    if quoted.values:
        path = out / f"{stem}_{VALUES}.csv"
        write_csv(path, pd.DataFrame({"quote": list(quoted.values), "text": list(quoted.values.values())}))
        written.append(path)
    for path in (*out.glob(f"{stem}_{VALUES}-*.csv"), out / f"{stem}_{VALUES}.csv"):
        if path not in written:
            path.unlink(missing_ok=True)
    return written
