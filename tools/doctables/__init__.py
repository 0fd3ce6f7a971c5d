"""The results tables and numbers of README.md and docs/*.md, copied from the committed reports.

A document marks each table it shows as `<!-- table: ... -->` ... `<!-- end table -->` and each
number in its prose as `<!-- value: ... -->text<!-- end -->` on one line; a marker names a
report table, a row and column of it and a format (common.py says how), or one of the few
tables and values of a document's own. `make docs-tables` (`python -m tools.doctables .`)
rewrites what stands between the markers from what `kacs report` wrote into each results
folder's report/; tests/test_docs.py renders them again and fails when a committed document
differs. `common.py` holds the markers and the filler; `across.py` the documents' own tables
and values that set several campaigns side by side, `outside.py` those of what no report
holds (the declarations, the results index, the analysis scripts' files). This module gathers
their functions `t_NAME` and `v_NAME`. The library never imports the generator.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from tools.doctables.common import MARKER, VALUE, Runs, render_table, render_value, substitute

__all__ = ["MARKER", "VALUE", "TABLES", "VALUES", "Runs", "documents", "render_document", "render_table",
           "render_value", "stale", "update", "main"]

DOCUMENTS = ("README.md", "docs/*.md")


def _gather(prefix: str) -> dict:
    """Every module's functions named PREFIX + NAME (t_ tables, v_ values) by NAME with '-' for '_',
    refusing a name declared twice."""
    out: dict = {}
    for info in (m for m in pkgutil.iter_modules(__path__) if m.name != "__main__"):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for attr, render in vars(module).items():
            if attr.startswith(prefix) and callable(render) and render.__module__ == module.__name__:
                key = attr[len(prefix):].replace("_", "-")
                if key in out:
                    raise RuntimeError(f"{key!r} is declared twice ({module.__name__})")
                out[key] = render
    return out


TABLES = _gather("t_")
VALUES = _gather("v_")


def documents(root: Path) -> list[Path]:
    return [p for pattern in DOCUMENTS for p in sorted(Path(root).glob(pattern))]


def render_document(text: str, runs: Runs) -> str:
    """The document with every marked table and value rendered again."""
    return substitute(text, TABLES, VALUES, runs)


def stale(root: Path) -> list[str]:
    """The documents whose marked tables or values differ from what the committed reports render."""
    runs = Runs(root)
    return [str(p.relative_to(root)) for p in documents(root)
            if render_document(p.read_text(encoding="utf-8"), runs) != p.read_text(encoding="utf-8")]


def update(root: Path) -> list[str]:
    """Rewrite the documents whose marked tables or values differ; their paths."""
    runs, changed = Runs(root), []
    for p in documents(root):
        text = p.read_text(encoding="utf-8")
        new = render_document(text, runs)
        if new != text:
            p.write_text(new, encoding="utf-8")
            changed.append(str(p.relative_to(root)))
    return changed


def main(argv: list[str] | None = None) -> int:
    """`python -m tools.doctables [--check] [ROOT]`: rewrite the documents, or with --check only
    name those that differ (exit 1 when one does)."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    root = Path(paths[0]) if paths else Path.cwd()
    if check:
        differ = stale(root)
        for path in differ:
            print(f"{path} differs from the committed reports: run `make docs-tables`")
        return 1 if differ else 0
    for path in update(root):
        print(f"rewrote the tables of {path}")
    return 0
