"""The markers, the committed runs and report tables they read (each once), and the Markdown
table every marker renders.

A marker's arguments are separated by spaces (quote one that holds spaces, as a shell does):

- `<!-- table: FOLDER KIND ALIGN -->` the report table `results/FOLDER/report/*_KIND.csv`, its
  header and rows as written, ALIGN one letter per column (l, r or c: left, right, centred);
  a table without rows is the note its one header holds;
- `<!-- value: FOLDER KIND ROW [COLUMN [FORMAT]] -->` one cell of such a table: the row whose
  first column is ROW (or `column=value,...` for a row picked by several), COLUMN (the last
  one when left out), shown as written or through FORMAT (a Python format spec such as `.3f`
  or `,.0f`, or `p` for a p-value as the documents print one);
- `<!-- table: NAME -->` and `<!-- value: NAME [ARGUMENT] -->` a document's own table or value
  (functions `t_NAME` and `v_NAME` of this package's modules: what sets several campaigns
  side by side or reads what no report holds).

A report's quoted tables (`KIND` quoted-NAME) and values (`KIND` quoted) are what its campaign
computed for the documents (kacs_cli/reporting/quoted); the filler computes nothing of them.
"""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.reporting.quoted.common import short_p

MARKER = re.compile(r"(<!-- table: ([^>\n]*?) -->\n)(.*?)(<!-- end table -->)", re.S)
VALUE = re.compile(r"(<!-- value: ([^>\n]*?) -->)([^\n]*?)(<!-- end -->)")
ALIGN = {"l": "---", "r": "---:", "c": ":---:"}


class Runs:
    """The committed runs.csv files and report tables below a project root, read once each."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._cache: dict = {}

    def _once(self, key, read):
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    def __call__(self, folder: str) -> pd.DataFrame:
        return self._once(folder, lambda: pd.read_csv(results.runs_path(self.root / "results" / folder)))

    def has(self, folder: str) -> bool:
        return results.runs_path(self.root / "results" / folder).is_file()

    def path(self, folder: str, kind: str) -> Path:
        """The folder's report table `<experiment>_<kind>.csv`, as `kacs report` wrote it."""
        found = sorted((self.root / "results" / folder / "report").glob(f"*_{kind}.csv"))
        if len(found) != 1:
            raise FileNotFoundError(f"results/{folder}/report: {len(found)} files *_{kind}.csv; run `kacs report`")
        return found[0]

    def report(self, folder: str, kind: str) -> pd.DataFrame:
        """A report table with its numbers as numbers."""
        return self._once((folder, kind), lambda: pd.read_csv(self.path(folder, kind)))

    def text(self, folder: str, kind: str) -> list[list[str]]:
        """A report table as written: its header, then its rows, every cell the text of the file."""
        def read():
            with self.path(folder, kind).open(encoding="utf-8", newline="") as f:
                return list(csv.reader(f))
        return self._once((folder, kind, "text"), read)

    def cell(self, folder: str, kind: str, row: str, column: str | None = None) -> str:
        """One cell of a report table as written (see the module's docstring for ROW)."""
        header, *rows = self.text(folder, kind)
        picks = ([(header.index(k), v) for k, _, v in (p.partition("=") for p in row.split(","))] if "=" in row
                 else [(0, row)])
        found = [r for r in rows if all(r[i] == v for i, v in picks)]
        if len(found) != 1:
            raise KeyError(f"results/{folder}/report/*_{kind}.csv: {len(found)} rows {row!r}")
        return found[0][header.index(column) if column else -1]

    def quote(self, folder: str, quote: str) -> str:
        return self.cell(folder, "quoted", quote)


def table(headers: list[str], rows: list[list[str]], align) -> str:
    if not rows:
        return " ".join(headers) + "\n"
    if len(align) != len(headers):
        raise ValueError(f"{len(align)} alignments for {len(headers)} columns ({', '.join(headers)})")
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(ALIGN[a] for a in align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def integer(x: float) -> str:
    return f"{x:,.0f}"


def _shown(text: str, fmt: str | None) -> str:
    if fmt is None:
        return text
    return short_p(float(text)) if fmt == "p" else format(float(text), fmt)


def _known(registry: dict, kind: str, key: str):
    if key not in registry:
        raise KeyError(f"unknown {kind} {key!r} (known: {', '.join(registry)})")
    return registry[key]


def render_table(args: str, tables: dict, runs: Runs) -> str:
    parts = shlex.split(args)
    if len(parts) == 1:
        return _known(tables, "table", parts[0])(runs)
    folder, kind, align = parts
    header, *rows = runs.text(folder, kind)
    return table(header, rows, align)


def render_value(args: str, values: dict, runs: Runs) -> str:
    parts = shlex.split(args)
    if len(parts) <= 2:
        return _known(values, "value", parts[0])(runs, parts[1] if len(parts) == 2 else None)
    folder, kind, row, *rest = parts
    return _shown(runs.cell(folder, kind, row, rest[0] if rest else None), rest[1] if len(rest) > 1 else None)


def substitute(text: str, tables: dict, values: dict, runs: Runs) -> str:
    """The text with every marked table and value rendered again."""
    text = MARKER.sub(lambda m: m.group(1) + render_table(m.group(2), tables, runs) + m.group(4), text)
    return VALUE.sub(lambda m: m.group(1) + render_value(m.group(2), values, runs) + m.group(4), text)
