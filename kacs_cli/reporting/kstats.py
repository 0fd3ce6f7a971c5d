"""Statistics for k methods over b benchmarks, after Demšar (2006, JMLR 7, 1-30).

Pure functions over numbers, no I/O. They extend docs/algorithm.md section 11 (two methods, XCSF against
KACS) to any number of methods and keep its conventions:

- every metric is "lower is better" (errors, rule and parameter counts, AIC), so rank 1 goes
  to the lowest per-benchmark mean and ties get the average rank;
- a matrix of per-benchmark means is b x k: one row per benchmark (Demšar's data set), one
  column per method (his classifier);
- paired tests are the two-sided Wilcoxon signed-rank test with scipy's defaults, through
  `stats.wilcoxon_p`, and a verdict '+' / '-' / '~' reads "this method against the control"
  exactly as `stats.verdict` reads XCSF against KACS: '+' the method is significantly better
  (lower) than the control, '-' significantly worse, '~' no significant difference.

Contents: `rank_matrix` and `average_ranks`; `friedman` (the Friedman chi-square chi2_F and
the Iman-Davenport F_F); `holm`; `tests_against_control`, with the wrappers
`per_benchmark_tests` (over runs) and `across_benchmark_tests` (over per-benchmark means);
`nemenyi_q`, `critical_difference` and `cd_groups` (the bars of a critical-difference
diagram, drawn by `kacs_cli.reporting.cd_diagram`; `by_rank` orders its methods).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy import stats as _sps

from kacs_cli.engine.registry import PROPOSED
from kacs_cli.reporting import stats

DEFAULT_CONTROL = PROPOSED


def _means_matrix(means) -> np.ndarray:
    m = np.asarray(means, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"per-benchmark means must be a b x k matrix, got {m.ndim} dimension(s)")
    if m.shape[1] < 2:
        raise ValueError(f"need at least 2 methods (columns) to rank, got {m.shape[1]}")
    return m


def _complete_rows(means) -> np.ndarray:
    """The benchmarks (rows) where every method has a finite mean: every method is then ranked
    over the same benchmarks."""
    m = _means_matrix(means)
    return m[np.all(np.isfinite(m), axis=1)]


def rank_matrix(means) -> np.ndarray:
    """Ranks r_i^j of the k methods within each complete benchmark (rank 1 = lowest mean,
    ties averaged); benchmarks with a missing mean are left out."""
    return _sps.rankdata(_complete_rows(means), method="average", axis=1)


def average_ranks(means) -> np.ndarray:
    """Average rank R_j of each method over the benchmarks of a b x k matrix of means (an
    array, or a DataFrame with one column per method: the ranks are then in its column order).

    The one ranking of the reports (two methods or k): lower is better, so rank 1 = lowest
    mean on that benchmark; ties get the average rank; benchmarks (rows) with a missing mean
    are left out, so every method is ranked over the same benchmarks. No complete benchmark:
    all NaN.
    """
    ranks = rank_matrix(means)
    if ranks.shape[0] == 0:
        return np.full(ranks.shape[1], math.nan)
    return ranks.mean(axis=0)


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test over benchmarks and its Iman-Davenport correction (Demšar 3.2.2)."""

    average_ranks: np.ndarray  # R_j, in the column order of the matrix
    chi2_f: float  # Friedman's chi2_F, chi-square with k-1 degrees of freedom
    p_chi2: float
    f_f: float  # Iman-Davenport F_F, F with (k-1, (k-1)(b-1)) degrees of freedom
    p_f: float
    k: int  # methods
    b: int  # benchmarks that entered the test (complete rows)

    @property
    def df_chi2(self) -> int:
        return self.k - 1

    @property
    def df_f(self) -> tuple[int, int]:
        return self.k - 1, (self.k - 1) * (self.b - 1)


def friedman(means) -> FriedmanResult:
    """Friedman's chi2_F and Iman-Davenport's F_F from a b x k matrix of per-benchmark means.

        chi2_F = 12 b / (k (k+1)) * [ sum_j R_j^2 - k (k+1)^2 / 4 ]
        F_F    = (b - 1) chi2_F / (b (k - 1) - chi2_F)

    as written in Demšar (2006), without a correction for ties: with ties inside a benchmark
    this is smaller than scipy.stats.friedmanchisquare, which divides by
    1 - sum(t^3 - t) / (b k (k^2 - 1)); without ties the two agree. Demšar recommends F_F
    (chi2_F is undesirably conservative).

    Benchmarks with a missing mean are left out. Fewer than 2 complete benchmarks: nothing
    can be tested, every statistic and p-value is NaN (the convention of `stats.wilcoxon_p`).
    When every benchmark ranks the methods identically chi2_F reaches its maximum b (k-1):
    F_F is then infinite and its p-value 0.
    """
    b, k = rank_matrix(means).shape
    avg = average_ranks(means)
    if b < 2:
        return FriedmanResult(avg, math.nan, math.nan, math.nan, math.nan, k, b)
    chi2_f = 12.0 * b / (k * (k + 1)) * (float(np.sum(avg**2)) - k * (k + 1) ** 2 / 4.0)
    chi2_f = max(chi2_f, 0.0)  # all-tied benchmarks give -0.0 up to rounding
    p_chi2 = float(_sps.chi2.sf(chi2_f, k - 1))
    denominator = b * (k - 1) - chi2_f
    if denominator <= 1e-12 * b * (k - 1):
        f_f, p_f = math.inf, 0.0
    else:
        f_f = (b - 1) * chi2_f / denominator
        p_f = float(_sps.f.sf(f_f, k - 1, (k - 1) * (b - 1)))
    return FriedmanResult(avg, float(chi2_f), p_chi2, float(f_f), p_f, k, b)


def smallest_holm_p(pairs: int, comparisons: int) -> float:
    """The smallest Holm-adjusted p that `comparisons` paired two-sided Wilcoxon tests over
    `pairs` pairs can reach: 2 / 2^pairs (every difference of one sign, exact distribution),
    times the size of the Holm family. Above alpha, no comparison can be significant,
    whatever the data (8 benchmarks, 9 comparisons: 9 x 2/256 = 0.070)."""
    if pairs < 1 or comparisons < 1:
        return math.nan
    return min(1.0, comparisons * 2.0 / 2.0 ** pairs)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input order.

    With the m finite p-values sorted p_(1) <= ... <= p_(m):
        p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)),
    the definition statsmodels' multipletests(method='holm') uses; rejecting where
    p~ < alpha is Holm's procedure. NaN p-values (comparisons that tested nothing) stay NaN
    and do not count in m.
    """
    p = np.asarray(p_values, dtype=float).ravel()
    adjusted = np.full(p.shape, math.nan)
    finite = np.flatnonzero(np.isfinite(p))
    m = finite.size
    if m == 0:
        return adjusted
    order = finite[np.argsort(p[finite], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


@dataclass(frozen=True)
class ControlComparison:
    """One method against the control: paired Wilcoxon p, Holm-adjusted p, verdict."""

    method: str
    p: float  # raw two-sided Wilcoxon p-value (NaN: no pair to test)
    p_holm: float  # Holm-adjusted over the k-1 comparisons of the same family
    mean_difference: float  # mean over the pairs of (method - control); < 0 favours method
    n_pairs: int
    verdict: str  # '+' method significantly lower than the control, '-' higher, '~' neither


@dataclass(frozen=True)
class ControlTests:
    """Every other method against one control, Holm-corrected as one family."""

    control: str
    alpha: float
    comparisons: tuple[ControlComparison, ...]

    def __getitem__(self, method: str) -> ControlComparison:
        for c in self.comparisons:
            if c.method == method:
                return c
        raise KeyError(method)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(c.method for c in self.comparisons)

    def counts(self) -> dict[str, int]:
        """The +/-/~ counts over the comparisons (as `stats.count_symbols`)."""
        return stats.count_symbols([c.verdict for c in self.comparisons])


def tests_against_control(
    samples: Mapping[str, Sequence[float]],
    control: str = DEFAULT_CONTROL,
    alpha: float = stats.ALPHA,
) -> ControlTests:
    """Paired two-sided Wilcoxon test of every method against `control`, Holm-corrected.

    `samples` maps each method to its values, paired by position (the same run, or the same
    benchmark) across methods; pairs with a NaN on either side are dropped per comparison, as
    in `stats.wilcoxon_p`. The k-1 comparisons form one Holm family. The verdict comes from
    the Holm-adjusted p-value and the sign of the mean paired difference (method - control),
    with `stats.verdict`, so for k = 2 it is `stats.symbol(method, control)`.
    """
    if control not in samples:
        known = ", ".join(sorted(samples)) or "none"
        raise ValueError(f"control method {control!r} is not among the methods ({known})")
    reference = samples[control]
    others = [name for name in samples if name != control]
    raw, differences, sizes = [], [], []
    for name in others:
        x, y = stats.paired(samples[name], reference)  # same pairing as the two-method tests
        raw.append(stats.wilcoxon_p(x, y))
        differences.append(float(np.mean(x - y)) if x.size else math.nan)
        sizes.append(int(x.size))
    adjusted = holm(raw)
    comparisons = tuple(
        ControlComparison(
            method=name,
            p=float(p),
            p_holm=float(p_adj),
            mean_difference=diff,
            n_pairs=n,
            verdict=stats.verdict(float(p_adj), diff, alpha),
        )
        for name, p, p_adj, diff, n in zip(others, raw, adjusted, differences, sizes)
    )
    return ControlTests(control=control, alpha=alpha, comparisons=comparisons)


def per_benchmark_tests(
    runs: Mapping[str, Sequence[float]],
    control: str = DEFAULT_CONTROL,
    alpha: float = stats.ALPHA,
) -> ControlTests:
    """On one benchmark: method -> per-run values (paired by run), every method against the
    control; the Holm family is that benchmark's k-1 comparisons."""
    return tests_against_control(runs, control, alpha)


def across_benchmark_tests(
    means,
    methods: Sequence[str],
    control: str = DEFAULT_CONTROL,
    alpha: float = stats.ALPHA,
) -> ControlTests:
    """Over benchmarks: the b x k matrix of per-benchmark means (columns named by `methods`),
    every method against the control paired by benchmark, Holm over the k-1 comparisons."""
    m = _means_matrix(means)
    if len(methods) != m.shape[1]:
        raise ValueError(f"{len(methods)} method names for {m.shape[1]} columns of means")
    if len(set(methods)) != len(methods):
        raise ValueError(f"method names repeat: {list(methods)}")
    return tests_against_control({name: m[:, j] for j, name in enumerate(methods)}, control, alpha)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Nemenyi's q_alpha for k methods: the studentized range quantile at 1 - alpha with
    infinite degrees of freedom, divided by sqrt(2) (Demšar 2006, Table 5a)."""
    if k < 2:
        raise ValueError(f"the Nemenyi test needs at least 2 methods, got {k}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return float(_sps.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def critical_difference(k: int, b: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference CD = q_alpha sqrt(k (k+1) / (6 b)): two methods differ
    significantly when their average ranks differ by at least CD."""
    if b < 1:
        raise ValueError(f"the critical difference needs at least 1 benchmark, got {b}")
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * b))


def by_rank(avg_ranks: Mapping[str, float]) -> list[tuple[str, float]]:
    """(method, average rank) pairs, best (lowest) first; equal ranks keep their order."""
    items = [(str(name), float(r)) for name, r in avg_ranks.items()]
    bad = [name for name, r in items if not math.isfinite(r)]
    if bad:
        raise ValueError(f"average rank is not a number for: {', '.join(bad)}")
    # stable on ties: methods with equal ranks keep their given order
    return sorted(items, key=lambda item: item[1])


def cd_groups(avg_ranks: Mapping[str, float], cd: float) -> list[tuple[str, ...]]:
    """Groups of methods that the Nemenyi test does not tell apart: the bars of a CD diagram.

    Methods sorted by average rank; a group is a maximal run of consecutive methods whose
    best and worst ranks differ by less than `cd` (a difference of at least CD is
    significant). Runs contained in another are dropped, and so are single methods (a lone
    method gets no bar). Groups come in the order of their best rank, each listed from best
    to worst; two groups may overlap, as in Demšar's Fig. 1, where one method cannot be
    assigned to either group.
    """
    if not (math.isfinite(cd) and cd >= 0.0):
        raise ValueError(f"critical difference must be a non-negative number, got {cd}")
    ordered = by_rank(avg_ranks)
    ranks = [r for _, r in ordered]
    groups: list[tuple[int, int]] = []
    for i in range(len(ordered)):
        j = i
        while j + 1 < len(ordered) and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and not (groups and groups[-1][1] >= j):
            # the previous run started earlier; it contains this one iff it reaches as far
            groups.append((i, j))
    return [tuple(name for name, _ in ordered[i : j + 1]) for i, j in groups]
