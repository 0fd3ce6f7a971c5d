"""What every document's tables share: the committed runs, read once each, the paired
statistics over runs and the number formats.

Every statistic follows docs/algorithm.md section 11 (paired two-sided Wilcoxon over runs,
alpha = 0.05) through `kacs_cli.reporting.stats`; the generator only selects and formats.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.data.registry import MAIN_TABLE
from kacs_cli.reporting import kstats, stats

ALPHA = stats.ALPHA
REAL = ("asn", "ccpp", "cs", "eec", "pppts", "pt")
MAIN_BENCHMARKS = MAIN_TABLE
METRICS = (("test_mae", "test MAE"), ("train_mae", "train MAE"), ("rules", "rules"), ("params", "params"),
           ("aic", "AIC"))


class Runs:
    """The committed runs.csv files below a project root, read once each."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._cache: dict[str, pd.DataFrame] = {}

    def curves(self, folder: str) -> pd.DataFrame:
        key = folder + "#curves"
        if key not in self._cache:
            self._cache[key] = pd.read_csv(self.root / "results" / folder / results.AGGREGATE_FILE)
        return self._cache[key]

    def has(self, folder: str) -> bool:
        return results.runs_path(self.root / "results" / folder).is_file()

    def __call__(self, folder: str) -> pd.DataFrame:
        if folder not in self._cache:
            self._cache[folder] = pd.read_csv(results.runs_path(self.root / "results" / folder))
        return self._cache[folder]


# ---- paired statistics over runs -------------------------------------------------------

def values(runs: pd.DataFrame, bench: str, method: str, metric: str) -> pd.Series:
    sel = runs[(runs.benchmark == bench) & (runs.method == method)]
    return sel.set_index("run")[metric].sort_index()


def pair(runs, bench, a, b, metric):
    """Methods a's and b's metric over the runs both have, in run order."""
    x, y = values(runs, bench, a, metric), values(runs, bench, b, metric)
    common = x.index.intersection(y.index)
    return x.loc[common].to_numpy(float), y.loc[common].to_numpy(float)


def p_value(runs, bench, a, b, metric) -> float:
    x, y = pair(runs, bench, a, b, metric)
    return stats.wilcoxon_p(x, y)


def symbol(runs, bench, metric, a="xcsf", b="kacs") -> str:
    x, y = pair(runs, bench, a, b, metric)
    return stats.symbol(x, y)


def mean(runs, bench, method, metric) -> float:
    return float(values(runs, bench, method, metric).mean())


def sd(runs, bench, method, metric) -> float:
    return float(values(runs, bench, method, metric).std(ddof=1))


def lower(runs, bench, a, b, metric="test_mae") -> bool:
    """Method a's metric significantly lower than b's (paired Wilcoxon over runs, alpha)."""
    return p_value(runs, bench, a, b, metric) < ALPHA and mean(runs, bench, a, metric) < mean(runs, bench, b, metric)


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values by key (kacs_cli.reporting.kstats.holm: a missing p stays
    missing and does not count in the family)."""
    keys = list(pvalues)
    return dict(zip(keys, (float(p) for p in kstats.holm([pvalues[k] for k in keys]))))


def holm_verdicts(r: pd.DataFrame, a: str, b: str, benchmarks) -> dict[str, str]:
    """a against b per benchmark: better / level / worse, paired two-sided Wilcoxon over runs,
    Holm over the benchmarks; with the change of the mean."""
    pairs = {bench: pair(r, bench, a, b, "test_mae") for bench in benchmarks}
    adjusted = holm({bench: stats.wilcoxon_p(x, y) for bench, (x, y) in pairs.items()})
    out = {}
    for bench, (x, y) in pairs.items():
        change = f"{100 * (x.mean() / y.mean() - 1):+.1f} %"
        p = adjusted[bench]
        word = "level" if not p < ALPHA else ("better" if x.mean() < y.mean() else "worse")
        out[bench] = f"{change}, {word} (p {p_text(p)})"
    return out


def methods(r: pd.DataFrame) -> list[str]:
    """A folder's methods in the order of its runs.csv."""
    return list(dict.fromkeys(r.method))


def main_ranks(r: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Each method's mean test MAE per main benchmark, and their average ranks (best first)."""
    means = pd.DataFrame({m: {b: mean(r, b, m, "test_mae") for b in MAIN_BENCHMARKS} for m in methods(r)})
    return means, pd.Series(kstats.average_ranks(means), index=means.columns).sort_values()


def verdicts(r: pd.DataFrame, control: str = "kacs",
             benchmarks: tuple[str, ...] = MAIN_BENCHMARKS) -> dict[str, dict[str, list[str]]]:
    """Per benchmark, each method against the control over runs, Holm over the k-1:
    method -> {better, level, worse} -> the benchmarks where the control is so."""
    others = [m for m in methods(r) if m != control]
    out: dict[str, dict[str, list[str]]] = {m: {"better": [], "level": [], "worse": []} for m in others}
    for b in benchmarks:
        ps, diffs = {}, {}
        for m in others:
            x, y = pair(r, b, m, control, "test_mae")
            ps[m], diffs[m] = stats.wilcoxon_p(x, y), float(np.mean(x - y))
        for m, p in holm(ps).items():
            key = "level" if p >= ALPHA else ("better" if diffs[m] > 0 else "worse")
            out[m][key].append(name(b))
    return out


# ---- formats -----------------------------------------------------------------------------

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


def table(headers: list[str], rows: list[list[str]], align: list[str]) -> str:
    sep = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(sep[a] for a in align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# ---- numbers of any results folder -------------------------------------------------------

def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def v_time(runs: Runs, folder: str) -> str:
    total = float(runs(folder).seconds.sum())
    return f"{_hours(total)} of run time recorded, about {_hours(total / 2)} at --jobs 2"


def v_runs(runs: Runs, folder: str) -> str:
    return integer(len(runs(folder)))
