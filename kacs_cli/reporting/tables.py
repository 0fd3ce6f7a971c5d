"""A report table (`Table` of `TCell`s), the formatting of its numbers, and its renderers.

One `Table` renders both as a padded GitHub Markdown table and as a booktabs LaTeX table, so
the two documents of a report never disagree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from kacs_cli.experiments.campaign.metrics import printed_whole
from kacs_cli.reporting import stats


def fmt_value(metric: str, x: float) -> str:
    """Errors with 4 decimals (4 significant digits when tiny), counts and AIC as integers."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if printed_whole(metric):
        return f"{x:.0f}"
    if x == 0 or abs(x) >= 0.001:
        return f"{x:.4f}"
    return f"{x:.4g}"


def fmt_sd(metric: str, x: float) -> str:
    """SDs as the article prints them: 4 significant digits, no exponent for large counts."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if printed_whole(metric):
        return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    if abs(x) < 1e-9:  # rounding noise of identical runs, not a spread worth exponents
        return f"{0.0:.4f}"
    return fmt_value(metric, x)


def fmt_z(z: float) -> str:
    """A z score signed, with two decimals."""
    if not math.isfinite(z):
        return "n/a" if math.isnan(z) else ("+inf" if z > 0 else "-inf")
    z = round(z, 2)
    return "0.00" if z == 0 else f"{z:+.2f}"


def fmt_rank(r: float) -> str:
    return f"{r:.2f}" if math.isfinite(r) else "n/a"


@dataclass
class TCell:
    """One table entry: text (bold when best) and a suffix (symbol, dagger) kept outside bold."""

    text: str
    bold: bool = False
    suffix: str = ""


@dataclass
class Table:
    title: str
    caption: str
    headers: list[str]
    rows: list[list[TCell]]
    n_left: int = 1  # leading text columns, left-aligned; the rest are numbers
    rules_before: set[int] = field(default_factory=set)  # row indices preceded by a rule
    label: str = ""


def tcell(text: Any, bold: bool = False, suffix: str = "") -> TCell:
    """A table entry of any value, as str() prints it."""
    return TCell(str(text), bold, suffix)


def render_markdown(table: Table) -> str:
    """A GitHub pipe table padded to aligned columns, so it also reads well in a terminal."""

    def md(cell: TCell) -> str:
        text = cell.text.replace("|", "\\|")
        if cell.bold and text:
            text = f"**{text}**"
        return f"{text} {cell.suffix}" if cell.suffix else text

    body = [[md(c) for c in row] for row in table.rows]
    ncol = len(table.headers)
    widths = [max([len(table.headers[j]), 3] + [len(r[j]) for r in body]) for j in range(ncol)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cells[j].ljust(widths[j]) if j < table.n_left else cells[j].rjust(widths[j]) for j in range(ncol)
        ]
        return "| " + " | ".join(padded) + " |"

    sep = "|" + "|".join(
        (":" + "-" * (widths[j] + 1)) if j < table.n_left else ("-" * (widths[j] + 1) + ":") for j in range(ncol)
    ) + "|"
    return "\n".join([line(table.headers), sep] + [line(r) for r in body])


_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # OT1 text fonts print these as other glyphs (¡, ¿, —): set them in math mode
    "<": "$<$",
    ">": "$>$",
    "|": "$|$",
}
_TEX_SYMBOLS = {"+": "$+$", "-": "$-$", "~": r"$\sim$", stats.DAGGER: r"$^\dagger$", "": ""}


def tex_escape(text: str) -> str:
    out = "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)
    return (
        out.replace("±", r"$\pm$")
        .replace(stats.DAGGER, r"$^\dagger$")
        .replace("α", r"$\alpha$")
        .replace("≤", r"$\le$")
        .replace("²", "$^2$")
        .replace("χ", r"$\chi$")
        .replace("—", "---")
    )


def render_latex(table: Table) -> str:
    """A booktabs table; the best mean per cell is \\textbf."""

    def tex(cell: TCell) -> str:
        text = tex_escape(cell.text)
        if re.fullmatch(r"-\d[\d.]*(e[+-]?\d+)?", text):
            text = "$-$" + text[1:]  # a minus sign, not a hyphen
        if cell.bold and text:
            text = rf"\textbf{{{text}}}"
        if cell.suffix:
            gap = "" if cell.suffix == stats.DAGGER else " "  # the dagger marks the number itself
            text += gap + _TEX_SYMBOLS.get(cell.suffix, tex_escape(cell.suffix))
        return text

    ncol = len(table.headers)
    spec = "l" * table.n_left + "r" * (ncol - table.n_left)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{tex_escape(table.caption or table.title)}}}",
    ]
    if table.label:
        lines.append(rf"\label{{{table.label}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(tex_escape(h) for h in table.headers) + r" \\",
        r"\midrule",
    ]
    for i, row in enumerate(table.rows):
        if i in table.rules_before:
            lines.append(r"\midrule")
        lines.append(" & ".join(tex(c) for c in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def md_prose(text: str) -> str:
    # A lone '~' pairs with another into GitHub strikethrough: escape it in running text.
    return text.replace("~", "\\~")
