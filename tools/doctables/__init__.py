"""The results tables and numbers of README.md and docs/*.md, rendered from the committed runs.

A document marks each table it shows as

    <!-- table: NAME -->
    ...the table...
    <!-- end table -->

and each number in its prose as `<!-- value: NAME [ARGUMENT] -->text<!-- end -->` on one line.
`make docs-tables` (`python -m tools.doctables .`) rewrites what stands between the markers
from the committed runs of `results/` and the published tables shipped as the package's data;
tests/test_docs.py renders them again and fails when a committed document differs. The prose
stays in the Markdown; a number in it is either in such a table or in such a value, so it
cannot drift from the runs it describes.

One module per document or experiment declares its tables and values (TABLES, VALUES); this
one gathers them and rewrites the documents. The generator uses the library's public modules
(kacs_cli.reporting, kacs_cli.experiments); the library never imports it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable

from tools.doctables import (adaptive, article, baselines, capacity, compaction, fidelity, readable, refinement,
                             results_index, semantics, settings, summary, variance)
from tools.doctables.common import Runs, v_runs, v_time

__all__ = ["MARKER", "VALUE", "TABLES", "VALUES", "Runs", "documents", "render_document", "stale", "update",
           "main"]

MARKER = re.compile(r"(<!-- table: ([a-z0-9-]+) -->\n)(.*?)(<!-- end table -->)", re.S)
VALUE = re.compile(r"(<!-- value: ([a-z0-9-]+)(?: ([^ >]+))? -->)([^\n]*?)(<!-- end -->)")
DOCUMENTS = ("README.md", "docs/*.md")
_MODULES = (summary, article, adaptive, baselines, refinement, compaction, capacity, readable, fidelity, semantics,
            settings, variance, results_index)


def _gather(kind: str, first: dict) -> dict:
    """One registry from every module's, refusing a name declared twice."""
    out = dict(first)
    for module in _MODULES:
        for name, render in getattr(module, kind).items():
            if name in out:
                raise RuntimeError(f"{kind[:-1].lower()} {name!r} is declared twice ({module.__name__})")
            out[name] = render
    return out


TABLES: dict[str, Callable[[Runs], str]] = _gather("TABLES", {})
VALUES: dict[str, Callable[[Runs, str | None], str]] = _gather("VALUES", {"time": v_time, "runs": v_runs})


def documents(root: Path) -> list[Path]:
    root = Path(root)
    out: list[Path] = []
    for pattern in DOCUMENTS:
        out += sorted(root.glob(pattern))
    return out


def render_document(text: str, runs: Runs) -> str:
    """The document with every marked table and value rendered again."""
    def one(m: re.Match) -> str:
        name = m.group(2)
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r} (known: {', '.join(TABLES)})")
        return m.group(1) + TABLES[name](runs) + m.group(4)

    def value(m: re.Match) -> str:
        name = m.group(2)
        if name not in VALUES:
            raise KeyError(f"unknown value {name!r} (known: {', '.join(VALUES)})")
        return m.group(1) + VALUES[name](runs, m.group(3)) + m.group(5)
    return VALUE.sub(value, MARKER.sub(one, text))


def stale(root: Path) -> list[str]:
    """The documents whose marked tables or values differ from what the committed runs render."""
    runs = Runs(root)
    return [str(p.relative_to(root)) for p in documents(root)
            if render_document(p.read_text(encoding="utf-8"), runs) != p.read_text(encoding="utf-8")]


def update(root: Path) -> list[str]:
    """Rewrite the documents whose marked tables or values differ; their paths."""
    runs = Runs(root)
    changed = []
    for p in documents(root):
        text = p.read_text(encoding="utf-8")
        new = render_document(text, runs)
        if new != text:
            p.write_text(new, encoding="utf-8")
            changed.append(str(p.relative_to(root)))
    return changed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path.cwd()
    for name in update(root):
        print(f"rewrote the tables of {name}")
    return 0
