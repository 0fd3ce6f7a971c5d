"""Statistics of docs/algorithm.md section 11: paired tests, effect sizes, confidence bands
(average ranks, of two methods or k: `kstats.average_ranks`).

Pure functions over numbers, no I/O. Convention throughout: `x` holds XCSF's values and `y`
KACS's values of the same runs (or the same benchmarks), and every metric is "lower is
better" (errors, rule and parameter counts, AIC).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as _sps

ALPHA = 0.05
DAGGER = "\u2020"  # †
SYMBOLS = ("+", "-", "~")


def paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float).ravel()
    b = np.asarray(y, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.size} vs {b.size}")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]


def wilcoxon_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided paired Wilcoxon signed-rank p-value with scipy's defaults.

    scipy decides exact vs normal approximation (exact for small samples without ties or
    zeros), zero differences are dropped ('wilcox'). All-zero differences mean no evidence of
    any difference, so p = 1. No pairs at all: NaN (nothing was tested).
    """
    a, b = paired(x, y)
    if a.size == 0:
        return math.nan
    d = a - b
    if not np.any(d != 0.0):
        return 1.0
    nonzero = d != 0.0
    size = np.abs(d[nonzero])
    if d.size <= EXACT_SIGN_FLIPS_MAX and (size.size < d.size or np.unique(size).size < size.size):
        p = _sign_flip_p(d, nonzero, size)
    else:
        with warnings.catch_warnings():
            # a single non-zero difference etc. makes scipy warn about the approximation
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            p = float(_sps.wilcoxon(a, b).pvalue)
    return p if math.isfinite(p) else 1.0


# With ties or zero differences among at most this many pairs, scipy's wilcoxon runs an exact
# permutation test over all 2^n sign flips (its method "auto"), but with a statistic it cannot
# vectorize, so it ranks each of the 2^n flips one at a time: a quarter of a second per test
# at n = 10, most of a large report's time. The same test with the ranks computed once.
EXACT_SIGN_FLIPS_MAX = 13


def _sign_flip_p(d: np.ndarray, nonzero: np.ndarray, size: np.ndarray) -> float:
    """scipy's wilcoxon p-value for differences `d` with ties or zeros (at most
    EXACT_SIGN_FLIPS_MAX of them; `nonzero` marks the non-zero ones, `size` is their |d|): the
    two-sided exact permutation test of the signed-rank sum R+ over every flip of the signs,
    zeros dropped ('wilcox'). A flip leaves |d| and so the ranks as they are; R+ is a sum of
    half-integers, exact in any order, so the null distribution, and the p-value, are scipy's
    to the bit."""
    ranks = np.zeros(d.size)
    ranks[nonzero] = _sps.rankdata(size)

    def r_plus(flipped: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.sum((flipped > 0) * ranks, axis=axis)

    return float(_sps.permutation_test((d,), r_plus, permutation_type="samples", vectorized=True,
                                       n_resamples=9999, alternative="two-sided", axis=-1).pvalue)


def mann_whitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value of two independent samples (their non-finite values
    dropped), scipy choosing exact or normal approximation. Equal constant samples are no
    evidence of a difference: p = 1. An empty sample: NaN (nothing was tested)."""
    a = np.asarray(x, dtype=float).ravel()
    b = np.asarray(y, dtype=float).ravel()
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        return math.nan
    if np.all(a == a[0]) and np.all(b == a[0]):
        return 1.0
    p = float(_sps.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return p if math.isfinite(p) else 1.0


def rank_biserial(x: Sequence[float], y: Sequence[float]) -> float:
    """Matched-pairs rank-biserial correlation of d = x - y (XCSF - KACS).

    r = (R+ - R-) / (R+ + R-) with ranks of |d| (ties averaged) after dropping zeros.
    Positive favours KACS: XCSF's value is larger, i.e. worse for a lower-is-better metric.
    No non-zero difference: 0.
    """
    a, b = paired(x, y)
    d = a - b
    d = d[d != 0.0]
    if d.size == 0:
        return 0.0
    ranks = _sps.rankdata(np.abs(d))  # 'average' handles ties
    r_plus = float(ranks[d > 0].sum())
    r_minus = float(ranks[d < 0].sum())
    return (r_plus - r_minus) / (r_plus + r_minus)


def verdict(p: float, mean_difference: float, alpha: float = ALPHA) -> str:
    """'+' / '-' / '~' for XCSF against KACS from a p-value and mean(XCSF) - mean(KACS)."""
    if not (math.isfinite(p) and p < alpha) or not math.isfinite(mean_difference):
        return "~"
    if mean_difference < 0:
        return "+"
    if mean_difference > 0:
        return "-"
    return "~"


def symbol(x: Sequence[float], y: Sequence[float], alpha: float = ALPHA) -> str:
    """'+' XCSF significantly better (lower), '-' significantly worse, '~' no difference.

    Significance from the paired two-sided Wilcoxon test; the direction from the mean of the
    paired differences, the way the article reads its tables (mean XCSF vs mean KACS).
    """
    a, b = paired(x, y)
    if a.size == 0:
        return "~"
    return verdict(wilcoxon_p(a, b), float(np.mean(a - b)), alpha)


def count_symbols(symbols: Sequence[str]) -> dict[str, int]:
    """Counts of '+', '-', '~' (other entries, e.g. untestable cells, are ignored)."""
    return {s: sum(1 for v in symbols if v == s) for s in SYMBOLS}


def format_counts(counts: dict[str, int]) -> str:
    """The article's "+/-/~" triple, e.g. '1/3/4'."""
    return "/".join(str(counts.get(s, 0)) for s in SYMBOLS)


@dataclass(frozen=True)
class AcrossBenchmarkTest:
    """Paired Wilcoxon test over per-benchmark means (docs/algorithm.md section 11, "across benchmarks")."""

    p: float
    n_benchmarks: int
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        return math.isfinite(self.p) and self.p < self.alpha

    @property
    def dagger(self) -> str:
        return DAGGER if self.significant else ""


def across_benchmark_test(
    x_means: Sequence[float], y_means: Sequence[float], alpha: float = ALPHA
) -> AcrossBenchmarkTest:
    """Paired Wilcoxon on the per-benchmark means of XCSF (x) and KACS (y); dagger if p < alpha."""
    a, b = paired(x_means, y_means)
    return AcrossBenchmarkTest(p=wilcoxon_p(a, b), n_benchmarks=int(a.size), alpha=alpha)


def format_p(p: float, dagger: str = "") -> str:
    """p-values as the article prints them: 3 significant digits, scientific when tiny."""
    if not math.isfinite(p):
        return "n/a"
    text = f"{p:.3g}" if p >= 1e-3 else f"{p:.2e}"
    return text + dagger


@dataclass(frozen=True)
class Band:
    """Mean and two-sided confidence band of several runs' curves, per evaluation point."""

    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray


def confidence_band(values: np.ndarray, confidence: float = 0.95) -> Band:
    """t-based band mean ± t_{(1+c)/2, n-1} · sd / sqrt(n) over runs (rows) per column.

    NaNs (a run without that evaluation point) are skipped column by column. A column with a
    single run has no spread estimate: its band collapses onto the mean.
    """
    v = np.atleast_2d(np.asarray(values, dtype=float))
    count = np.sum(np.isfinite(v), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(v, axis=0)
        sd = np.nanstd(v, axis=0, ddof=1)
    half = np.zeros_like(mean)
    ok = count > 1
    if np.any(ok):
        t = _sps.t.ppf(0.5 + confidence / 2.0, count[ok] - 1)
        half[ok] = t * sd[ok] / np.sqrt(count[ok])
    return Band(mean=mean, lower=mean - half, upper=mean + half, count=count)


def fidelity_z(
    ours_mean: float,
    ours_sd: float,
    n_ours: int,
    published_mean: float,
    published_sd: float,
    n_published: int = 30,
) -> float:
    """(ours - published) in standard errors of the difference of two independent means.

    SE = sqrt(sd_pub^2 / n_pub + sd_ours^2 / n_ours); an undefined own SD (one run) counts as
    0, so the published spread alone sets the scale.
    """
    se = _difference_se(ours_sd, n_ours, published_sd, n_published)
    diff = ours_mean - published_mean
    if se == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return diff / se


def within_published(
    ours_mean: float,
    ours_sd: float,
    n_ours: int,
    published_mean: float,
    published_sd: float,
    n_published: int = 30,
) -> bool:
    """|ours - published| <= max(3 SE, 5 % of |published|): the run-to-run spread test."""
    se = _difference_se(ours_sd, n_ours, published_sd, n_published)
    tolerance = max(3.0 * se, 0.05 * abs(published_mean))
    return abs(ours_mean - published_mean) <= tolerance


def _difference_se(ours_sd: float, n_ours: int, published_sd: float, n_published: int) -> float:
    own = ours_sd**2 / n_ours if (n_ours > 0 and math.isfinite(ours_sd)) else 0.0
    pub = published_sd**2 / n_published if math.isfinite(published_sd) else 0.0
    return math.sqrt(own + pub)
