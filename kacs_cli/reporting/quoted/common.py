"""What every campaign's quoted tables share: the experiment's report tables as written, its
runs, the pairwise comparisons, the ranks and verdicts against a control, and the number
formats of the documents."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.data.registry import MAIN_TABLE as MAIN_BENCHMARKS
from kacs_cli.reporting import kstats
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.loading import load_config
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.stats import ALPHA
from kacs_cli.reporting.suprb import DISPLAY

__all__ = ["ALPHA", "MAIN_BENCHMARKS", "REAL", "Missing", "Quoted", "Source", "bold_min", "compare", "count", "integer",
           "mean_sd", "means", "name", "names", "ranks", "short_p", "table", "values", "verdict_text", "verdict_texts",
           "verdicts", "word"]

REAL = tuple(DISPLAY)  # the article's real datasets, shown by their display names


class Missing(LookupError):
    """A report table a quoted table is made of was not written (such as the published
    comparison without --paper): that quoted table is left out."""


class Source:
    """One experiment's report tables as the report wrote them (`<experiment>_<kind>.csv` in
    its output folder, 10 significant digits), its runs.csv and its config, each read once."""

    def __init__(self, exp: ExperimentReport, out: Path):
        self.exp, self.out, self.stem = exp, Path(out), slug(exp.name)
        self._cache: dict[str, pd.DataFrame] = {}

    def _read(self, key: str, path: Path) -> pd.DataFrame:
        if key not in self._cache:
            if not path.is_file():
                raise Missing(f"{path} was not written")
            self._cache[key] = pd.read_csv(path)
        return self._cache[key]

    def report(self, kind: str) -> pd.DataFrame:
        return self._read(kind, self.out / f"{self.stem}_{kind}.csv")

    def summary(self) -> pd.DataFrame:
        """The two-method summary (XCSF against KACS) by (cell, metric)."""
        return self.report("summary").set_index(["cell", "metric"])

    def runs(self) -> pd.DataFrame:
        return self._read("#runs", results.runs_path(self.exp.path))

    def curves(self) -> pd.DataFrame:
        return self._read("#curves", results.aggregate_path(self.exp.path))

    @property
    def config(self) -> results.ResolvedConfig:
        return load_config(self.exp.path)


@dataclass
class Quoted:
    """What one experiment's report writes for the documents: tables by name (headers and rows
    of text, as a document shows them) and single values by name (text)."""

    tables: dict[str, tuple[list[str], list[list[str]]]] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)

    def update(self, other: "Quoted") -> None:
        for mine, theirs in ((self.tables, other.tables), (self.values, other.values)):
            twice = set(mine) & set(theirs)
            if twice:
                raise RuntimeError(f"quoted twice: {sorted(twice)}")
            mine.update(theirs)


def table(name: str, headers: list[str], rows: list[list[str]]) -> Quoted:
    """A quoted table of one name."""
    return Quoted(tables={name: (list(headers), [list(r) for r in rows])})


def values(**quotes: str) -> Quoted:
    """Quoted values by name ('_' in a keyword stands for '-')."""
    return Quoted(values={k.replace("_", "-"): v for k, v in quotes.items()})


# --------------------------------------------------------------------------- formats


def integer(x: float) -> str:
    return f"{x:,.0f}"


def mean_sd(x: float, sd: float, d: int = 4) -> str:
    return f"{x:.{d}f} ± {sd:.{d}f}"


def name(bench: str) -> str:
    return DISPLAY.get(bench, bench)


def names(benches) -> str:
    """The main benchmarks among `benches`, in the article's order: "f1, f2 and f4", "all
    eight", "none"."""
    benches = set(benches)
    shown = [name(b) for b in MAIN_BENCHMARKS if b in benches]
    if len(shown) == len(MAIN_BENCHMARKS):
        return "all eight"
    return "none" if not shown else shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def short_p(p: float) -> str:
    """A p-value in running text: two significant digits, "< 1e-8" below that (the report's
    own tables print three, stats.format_p)."""
    if not math.isfinite(p):
        return "n/a"
    if p < 1e-8:
        return "< 1e-8"
    if p < 1e-3:
        mant, exp = f"{p:.0e}".split("e")
        return f"{mant}e{int(exp)}"
    return f"{p:.2g}" if p < 0.995 else "1.0"


def bold_min(texts: list[str], values: list[float], d: int = 3) -> list[str]:
    """The texts with those whose value is the smallest at d decimals in bold."""
    best = min(round(v, d) for v in values)
    return [f"**{t}**" if round(v, d) == best else t for t, v in zip(texts, values)]


def word(p: float, after: float, before: float) -> str:
    """better / level / worse of `after` against `before` at alpha, by the raw p."""
    return "level" if not p < ALPHA else "better" if after < before else "worse"


def verdict_text(row: pd.Series) -> str:
    return f"{row['change_pct']:+.1f} %, {row['verdict']} (p {short_p(row['p_holm'])})"


# --------------------------------------------------------------------------- comparisons


def compare(src: Source, a: str, b: str, cells=None, metric: str = "test_mae") -> dict[str, pd.Series]:
    """a against b per cell id: the report's pairwise table (Holm over the pair's cells)."""
    p = src.report("pairwise")
    p = p[p.metric == metric]
    sel, flip = p[(p.a == a) & (p.b == b)], False
    if sel.empty:
        sel, flip = p[(p.a == b) & (p.b == a)], True
    out = {}
    for _, row in sel.iterrows():
        if flip:
            row = row.copy()
            row["a_mean"], row["b_mean"] = row["b_mean"], row["a_mean"]
            row["change_pct"] = 100 * (row["a_mean"] / row["b_mean"] - 1)
            row["verdict"] = {"better": "worse", "worse": "better"}.get(row["verdict"], row["verdict"])
        out[row["cell_id"]] = row
    return out if cells is None else {c: out[c] for c in cells}


def verdict_texts(src: Source, a: str, b: str, cells=None) -> dict[str, str]:
    return {c: verdict_text(row) for c, row in compare(src, a, b, cells).items()}


def count(src: Source, a: str, b: str, verdict: str) -> str:
    """'k of D': the cells where a is `verdict` (better, worse, level) against b."""
    v = compare(src, a, b)
    return f"{sum(row.verdict == verdict for row in v.values())} of {len(v)}"


def means(src: Source, column: str = "test_mae_mean") -> pd.DataFrame:
    """The report's per-cell means of every method (cell id x method, in the report's order)."""
    k = src.report("kmethods")
    ids = dict(zip(*(src.report("pairwise")[c] for c in ("cell", "cell_id"))))
    frame = k.pivot(index="cell", columns="method", values=column)
    return frame.loc[list(dict.fromkeys(k.cell)), list(dict.fromkeys(k.method))].rename(index=ids)


def ranks(frame: pd.DataFrame) -> pd.Series:
    """Average ranks (kstats.average_ranks) of the columns over the rows, best first."""
    return pd.Series(kstats.average_ranks(frame), index=frame.columns).sort_values()


def verdicts(src: Source, control: str, benchmarks, methods) -> dict[str, dict[str, list[str]]]:
    """Per benchmark each method against the control (the report's paired p), Holm over the
    k-1: method -> {better, level, worse} -> the benchmarks where the control is so."""
    others = [m for m in methods if m != control]
    out = {m: {"better": [], "level": [], "worse": []} for m in others}
    pairs = {m: compare(src, m, control) for m in others}
    for b in benchmarks:
        adjusted = kstats.holm([pairs[m][b]["p"] for m in others])
        for m, p in zip(others, adjusted):
            row = pairs[m][b]
            out[m]["level" if p >= ALPHA else "better" if row.a_mean > row.b_mean else "worse"].append(name(b))
    return out
