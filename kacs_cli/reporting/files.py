"""The files of a report: their formats, their names, and how they are written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from kacs_cli import atomic
from kacs_cli.errors import UserError

FORMATS = ("md", "tex", "csv")


def slug(text: str) -> str:
    """A name as it goes into file names and LaTeX labels: letters, digits, '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-").lower() or "experiment"


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and os.replace: never a half file."""
    atomic.make_dirs(path.parent)
    atomic.write_text(path, text)


def write_csv(path: Path, frame: pd.DataFrame) -> None:
    # 10 significant digits: enough for every statistic, and no float noise in committed CSVs
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.10g"))


def parse_formats(formats: Iterable[str] | str) -> tuple[str, ...]:
    """The table formats asked for ('md,tex' or a list; 'markdown', 'latex', '.md' accepted)."""
    if isinstance(formats, str):
        formats = formats.split(",")
    out = []
    for f in formats:
        key = str(f).strip().lower().lstrip(".")
        if key == "markdown":
            key = "md"
        if key in ("latex",):
            key = "tex"
        if not key:
            continue
        if key not in FORMATS:
            raise UserError(f"unknown report format {f!r}; choose from {', '.join(FORMATS)} (comma-separated)")
        if key not in out:
            out.append(key)
    if not out:
        raise UserError(f"no report format given; choose from {', '.join(FORMATS)} (comma-separated)")
    return tuple(out)
