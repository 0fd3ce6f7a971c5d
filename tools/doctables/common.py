"""What every document's tables share: the committed runs and reports, read once each, the
markers and the number formats.

The statistics (paired two-sided Wilcoxon over runs, Holm, ranks; docs/algorithm.md section
11) are what `kacs report` wrote into each folder's report/ CSVs; the generator selects and
formats them. `compare` reads the report's pairwise table: every two methods per cell. Where
no report holds a statistic the generator calls the one implementation, kacs_cli.reporting's.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.data.registry import MAIN_TABLE as MAIN_BENCHMARKS
from kacs_cli.reporting.stats import ALPHA

__all__ = ["ALPHA", "MAIN_BENCHMARKS", "REAL", "Runs", "compare", "verdict_text", "substitute", "table"]

REAL = ("asn", "ccpp", "cs", "eec", "pppts", "pt")
MARKER = re.compile(r"(<!-- table: ([a-z0-9-]+) -->\n)(.*?)(<!-- end table -->)", re.S)
VALUE = re.compile(r"(<!-- value: ([a-z0-9-]+)(?: ([^ >]+))? -->)([^\n]*?)(<!-- end -->)")


class Runs:
    """The committed runs.csv files and report tables below a project root, read once each."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._cache: dict[str, pd.DataFrame] = {}

    def _read(self, key: str, path: Path) -> pd.DataFrame:
        if key not in self._cache:
            self._cache[key] = pd.read_csv(path)
        return self._cache[key]

    def __call__(self, folder: str) -> pd.DataFrame:
        return self._read(folder, results.runs_path(self.root / "results" / folder))

    def curves(self, folder: str) -> pd.DataFrame:
        return self._read(folder + "#curves", self.root / "results" / folder / results.AGGREGATE_FILE)

    def has(self, folder: str) -> bool:
        return results.runs_path(self.root / "results" / folder).is_file()

    def report(self, folder: str, kind: str) -> pd.DataFrame:
        """The folder's report table `<experiment>_<kind>.csv`, as `kacs report` wrote it."""
        found = sorted((self.root / "results" / folder / "report").glob(f"*_{kind}.csv"))
        if len(found) != 1:
            raise FileNotFoundError(f"results/{folder}/report: {len(found)} files *_{kind}.csv; run `kacs report`")
        return self._read(f"{folder}#{kind}", found[0])

    def summary(self, folder: str) -> pd.DataFrame:
        """The two-method summary (XCSF against KACS) by (cell, metric)."""
        return self.report(folder, "summary").set_index(["cell", "metric"])


def compare(runs: Runs, folder: str, a: str, b: str, cells=None, metric: str = "test_mae") -> dict[str, pd.Series]:
    """a against b per cell id (the report's pairwise table, Holm over the pair's cells)."""
    p = runs.report(folder, "pairwise")
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


def verdict_text(row: pd.Series) -> str:
    return f"{row['change_pct']:+.1f} %, {row['verdict']} (p {p_text(row['p_holm'])})"


def integer(x: float) -> str:
    return f"{x:,.0f}"


def decimal(x: float, d: int = 4) -> str:
    return f"{x:.{d}f}"


def mean_sd(x: float, sd: float, d: int = 4) -> str:
    return f"{x:.{d}f} ± {sd:.{d}f}"


def name(bench: str) -> str:
    return bench.upper() if bench in REAL else bench


def p_text(p: float) -> str:
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


def table(headers: list[str], rows: list[list[str]], align) -> str:
    sep = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(sep[a] for a in align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def substitute(text: str, tables: dict, values: dict, runs: Runs) -> str:
    """The text with every marked table and value rendered again."""
    def known(registry: dict, kind: str, key: str):
        if key not in registry:
            raise KeyError(f"unknown {kind} {key!r} (known: {', '.join(registry)})")
        return registry[key]
    text = MARKER.sub(lambda m: m.group(1) + known(tables, "table", m.group(2))(runs) + m.group(4), text)
    return VALUE.sub(lambda m: m.group(1) + known(values, "value", m.group(2))(runs, m.group(3)) + m.group(5), text)


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def v_time(runs: Runs, folder: str) -> str:
    total = float(runs(folder).seconds.sum())
    return f"{_hours(total)} of run time recorded, about {_hours(total / 2)} at --jobs 2"


def v_runs(runs: Runs, folder: str) -> str:
    return integer(len(runs(folder)))


def means(runs: Runs, folder: str, column: str = "test_mae_mean") -> pd.DataFrame:
    """The report's per-cell means of every method (cell id x method, in the report's order)."""
    k = runs.report(folder, "kmethods")
    ids = dict(zip(*(runs.report(folder, "pairwise")[c] for c in ("cell", "cell_id"))))
    frame = k.pivot(index="cell", columns="method", values=column)
    return frame.loc[list(dict.fromkeys(k.cell)), list(dict.fromkeys(k.method))].rename(index=ids)


def ranks(frame: pd.DataFrame) -> pd.Series:
    """Average ranks (kstats.average_ranks) of the columns over the rows, best first."""
    from kacs_cli.reporting import kstats
    return pd.Series(kstats.average_ranks(frame), index=frame.columns).sort_values()


def verdicts(runs: Runs, folder: str, control: str, benchmarks, methods) -> dict[str, dict[str, list[str]]]:
    """Per benchmark each method against the control (the report's paired p), Holm over the
    k-1: method -> {better, level, worse} -> the benchmarks where the control is so."""
    from kacs_cli.reporting import kstats
    others = [m for m in methods if m != control]
    out = {m: {"better": [], "level": [], "worse": []} for m in others}
    pairs = {m: compare(runs, folder, m, control) for m in others}
    for b in benchmarks:
        adjusted = kstats.holm([pairs[m][b]["p"] for m in others])
        for m, p in zip(others, adjusted):
            row = pairs[m][b]
            out[m]["level" if p >= ALPHA else "better" if row.a_mean > row.b_mean else "worse"].append(name(b))
    return out
