"""`kacs reproduce`: whether runs trained again with the current code agree with a folder's.

Per cell (benchmark x method): the new runs against all the committed runs of the cell, by a
two-sided Mann-Whitney U test on the test error (the protocol's) and on the rules, Holm over
every test of every cell (a cell differs when one of its tests does at ALPHA); how many new
rows equal the committed row of the same seeds in every measured column but the wall time
(a bit-for-bit check); and, for a folder of the published main table's campaign, whether the
new mean lies within max(3 SE, 5 %) of the published one (paper.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.metrics import metric_label, protocol_metrics
from kacs_cli.reporting import stats
from kacs_cli.reporting.files import atomic_write_text, write_csv
from kacs_cli.reporting.kstats import holm
from kacs_cli.reporting.model import METHODS
from kacs_cli.reporting.paper import against_published, is_published_campaign, load_paper_table
from kacs_cli.reporting.tables import Table, fmt_value, render_markdown, tcell

TABLE_NAME = "reproduction"
# What a run measured, as runs.csv holds it: the columns a bit-for-bit equal run shares.
_NOT_COMPARED = ("experiment", "seconds")


@dataclass
class Reproduction:
    """The comparison of one folder's runs with the runs trained again."""

    folder: Path
    error: str             # the test error column compared (the protocol's)
    cells: pd.DataFrame    # one row per cell: the columns `compare` names
    identical: int         # new rows equal to the committed row of the same seeds
    paired: int            # new rows that have a committed row of the same seeds

    @property
    def differing(self) -> int:
        return int(self.cells["differs"].sum())

    def summary(self) -> str:
        """One line: how many cells differ, how many rows are identical, the published check."""
        line = (f"{self.differing} of {len(self.cells)} cells differ after Holm (two-sided Mann-Whitney U on "
                f"{metric_label(self.error)} and rules, alpha {stats.ALPHA}); {self.identical} of {self.paired} "
                f"rows with the same seeds are identical bit for bit")
        flags = [v for m in (self.error, "rules") for v in self.cells.get(f"{m}_within", []) if v is not None]
        if flags:
            line += f"; {sum(bool(v) for v in flags)} of {len(flags)} new means within max(3 SE, 5 %) of the published ones"
        return line + "."

    def table(self) -> Table:
        headers = ["benchmark", "method", "runs", "identical"]
        for metric in (self.error, "rules"):
            label = metric_label(metric)
            headers += [f"{label} committed", "new", "p (Holm)"]
        published = f"{self.error}_within" in self.cells
        if published:
            headers += [f"{metric_label(self.error)} published", "within", "rules published", "within"]
        headers.append("differs")
        rows = []
        for r in self.cells.to_dict("records"):
            row = [tcell(r["benchmark"]), tcell(r["method"]), tcell(f"{r['runs_new']} / {r['runs_committed']}"),
                   tcell(f"{r['identical']} / {r['paired']}")]
            for metric in (self.error, "rules"):
                row += [tcell(fmt_value(metric, r[f"{metric}_committed"])), tcell(fmt_value(metric, r[f"{metric}_new"])),
                        tcell(stats.format_p(r[f"{metric}_p_holm"]) if math.isfinite(r[f"{metric}_p_holm"]) else "n/a")]
            if published:
                for metric in (self.error, "rules"):
                    within = r[f"{metric}_within"]
                    row += [tcell("n/a" if within is None else fmt_value(metric, r[f"{metric}_published"])),
                            tcell("n/a" if within is None else ("yes" if within else "NO"))]
            row.append(tcell("YES" if r["differs"] else "no"))
            rows.append(row)
        caption = (f"{self.folder} trained again: runs new / committed, rows identical bit for bit / rows "
                   f"with the same seeds; means of the committed and the new runs, Holm-adjusted p of a "
                   f"two-sided Mann-Whitney U test over all cells"
                   + ("; within: the new mean within max(3 SE, 5 %) of the published one" if published else "")
                   + ".")
        return Table(f"Reproduction of {self.folder}", caption, headers, rows, n_left=2)

    def write(self, out: Path) -> tuple[Path, Path]:
        """reproduction.csv and reproduction.md into `out`."""
        csv_path, md_path = Path(out) / f"{TABLE_NAME}.csv", Path(out) / f"{TABLE_NAME}.md"
        write_csv(csv_path, self.cells)
        table = self.table()
        atomic_write_text(md_path, f"# {table.title}\n\n{self.summary()}\n\n{render_markdown(table)}\n\n"
                                   f"{table.caption}\n")
        return csv_path, md_path


def _identical(committed: pd.DataFrame, new: pd.DataFrame) -> tuple[int, int]:
    """(new rows equal to the committed row of the same seeds, new rows with such a row)."""
    keys = ["run", "split_seed", "seed"]
    columns = [c for c in new.columns if c in committed.columns and c not in (*_NOT_COMPARED, *keys)]
    pairs = new.merge(committed, on=keys, suffixes=("_new", "_committed"))
    same = np.ones(len(pairs), dtype=bool)
    for c in columns:
        a, b = pairs[f"{c}_new"], pairs[f"{c}_committed"]
        same &= ((a == b) | (a.isna() & b.isna())).to_numpy(dtype=bool)
    return int(same.sum()), len(pairs)


def compare(folder: Path, config: results.ResolvedConfig, committed: pd.DataFrame, new: pd.DataFrame) -> Reproduction:
    """The committed runs.csv rows of `folder` (campaign `config`) against the rows trained
    again (`new`), cell by cell in the committed order."""
    error = protocol_metrics(config.protocol)[1]
    published = load_paper_table().set_index(["benchmark", "metric"]) if is_published_campaign(config) else None
    plain = {c.label for c in config.cells or () if c.label == c.benchmark and not c.variant}
    records = []
    for (benchmark, method), mine in committed.groupby(["benchmark", "method"], sort=False):
        theirs = new[(new["benchmark"] == benchmark) & (new["method"] == method)]
        identical, paired = _identical(mine, theirs)
        record = {"benchmark": benchmark, "method": method, "runs_committed": len(mine), "runs_new": len(theirs),
                  "identical": identical, "paired": paired}
        for metric in (error, "rules"):
            old = pd.to_numeric(mine.get(metric), errors="coerce").dropna()
            fresh = pd.to_numeric(theirs.get(metric), errors="coerce").dropna()
            record[f"{metric}_committed"] = old.mean() if len(old) else math.nan
            record[f"{metric}_new"] = fresh.mean() if len(fresh) else math.nan
            record[f"{metric}_p"] = stats.mann_whitney_p(old, fresh)
        if published is not None:
            for metric in (error, "rules"):
                key = (str(benchmark).lower(), metric)
                found = benchmark in plain and method in METHODS and key in published.index
                fresh = pd.to_numeric(theirs.get(metric), errors="coerce").dropna()
                fit = (against_published(published.loc[key], method, fresh.mean(), fresh.std(), len(fresh))
                       if found and len(fresh) else {"paper": math.nan, "within": None})
                record[f"{metric}_published"], record[f"{metric}_within"] = fit["paper"], fit["within"]
        records.append(record)
    cells = pd.DataFrame.from_records(records)
    tests = [f"{m}_p" for m in (error, "rules")]
    adjusted = holm(cells[tests].to_numpy().ravel()).reshape(len(cells), len(tests)) if len(cells) else np.empty((0, 2))
    for j, column in enumerate(tests):
        cells.insert(cells.columns.get_loc(column) + 1, f"{column}_holm", adjusted[:, j])
    cells["differs"] = np.nan_to_num(adjusted, nan=1.0).min(axis=1) < stats.ALPHA if len(cells) else []
    identical = int(cells["identical"].sum()) if len(cells) else 0
    paired = int(cells["paired"].sum()) if len(cells) else 0
    return Reproduction(Path(folder), error, cells, identical, paired)
