"""kacs_cli.reporting.stats against values computed independently (published numbers, hand counts)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kacs_cli.reporting import kstats, stats
from repo_support import REPO

PAPER = REPO / "kacs_cli" / "experiments" / "data" / "paper_main_table.csv"
# Published per-benchmark test-MAE means (f1, f2, f3, f4, ASN, CCPP, CS, EEC).
XCSF_TEST = [0.2642, 0.1564, 0.3246, 0.2303, 0.1478, 0.0929, 0.1350, 0.0847]
KACS_TEST = [0.2351, 0.1253, 0.2329, 0.1430, 0.1144, 0.0926, 0.1288, 0.1020]


def _paper(metric: str) -> pd.DataFrame:
    table = pd.read_csv(PAPER)
    return table[table["metric"] == metric]


def test_across_benchmark_test_mae_matches_published_p() -> None:
    # Differences: 7 positive, one negative (EEC, -0.0173, rank 3 of 8 by |d|):
    # W = 3, exact two-sided p = 2 * #{subsets with rank sum <= 3} / 2^8 = 2 * 5 / 256.
    test = stats.across_benchmark_test(XCSF_TEST, KACS_TEST)
    assert test.p == pytest.approx(0.0390625, abs=1e-12)
    assert test.n_benchmarks == 8
    assert test.significant and test.dagger == "†"


def test_across_benchmark_rules_matches_published_p() -> None:
    rules = _paper("rules")
    # XCSF has more rules on all 8 benchmarks: exact p = 2 / 2^8.
    test = stats.across_benchmark_test(rules["xcsf_mean"], rules["kacs_mean"])
    assert test.p == pytest.approx(0.0078125, abs=1e-12)
    assert test.dagger == stats.DAGGER


def test_across_benchmark_train_mae_published() -> None:
    train = _paper("train_mae")
    test = stats.across_benchmark_test(train["xcsf_mean"], train["kacs_mean"])
    assert round(test.p, 3) == 0.383  # the published train MAE means give p = 0.383
    assert not test.significant and test.dagger == ""


def test_wilcoxon_all_zero_differences_is_one() -> None:
    assert stats.wilcoxon_p([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]) == 1.0
    assert math.isnan(stats.wilcoxon_p([], []))


def test_wilcoxon_exact_small_sample() -> None:
    # Six same-signed, distinct differences: exact two-sided p = 2 / 2^6.
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y = [0.9, 1.8, 2.7, 3.6, 4.5, 5.4]
    assert stats.wilcoxon_p(x, y) == pytest.approx(0.03125)
    # zeros are dropped ('wilcox'): three non-zero differences of one sign -> 2 / 2^3
    assert stats.wilcoxon_p([1, 2, 3, 4], [1, 1, 1, 1]) == pytest.approx(0.25)


def test_wilcoxon_with_ties_is_the_exact_sign_flip_test() -> None:
    # d = [1, 1, 2, -3]: ranks of |d| 1.5, 1.5, 3, 4, so R+ = 6. Of the 16 sign flips, 6 give
    # R+ >= 6 (7, 6, 7, 8.5, 8.5, 10) and 11 give R+ <= 6: p = 2 * 6 / 16.
    assert stats.wilcoxon_p([2.0, 3.0, 4.0, 1.0], [1.0, 2.0, 2.0, 4.0]) == 0.75


def test_wilcoxon_with_ties_or_zeros_equals_scipys_to_the_bit() -> None:
    """The sign-flip path (ties or zeros, at most EXACT_SIGN_FLIPS_MAX pairs) against scipy's
    own wilcoxon, which ranks every flip anew; and scipy's other paths on either side of it."""
    import warnings

    from scipy import stats as sps

    rng = np.random.default_rng(3)
    flipped = 0
    for _ in range(120):
        n = int(rng.integers(2, 10)) if rng.random() < 0.9 else int(rng.integers(13, 16))
        x = np.round(rng.normal(size=n), int(rng.integers(0, 2)))
        y = np.round(rng.normal(size=n), int(rng.integers(0, 2)))
        k = int(rng.integers(0, n)) if rng.random() < 0.4 else 0
        y[:k] = x[:k]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = float(sps.wilcoxon(x, y).pvalue)
        nonzero = np.abs((x - y)[x != y])
        flipped += n <= stats.EXACT_SIGN_FLIPS_MAX and (nonzero.size < n or np.unique(nonzero).size < nonzero.size)
        assert stats.wilcoxon_p(x, y) == (expected if math.isfinite(expected) else 1.0), (x, y)
    assert flipped >= 40


def test_rank_biserial_by_hand_with_ties_and_zeros() -> None:
    x = [1.0, 5.0, 3.0, 2.0, 4.0, 7.0]
    y = [1.0, 3.0, 4.0, 4.0, 2.0, 4.0]
    # d = x - y = [0, 2, -1, -2, 2, 3]; the zero is dropped -> [2, -1, -2, 2, 3]
    # |d| = [2, 1, 2, 2, 3]: 1 -> rank 1; the three 2s share ranks 2, 3, 4 -> 3 each; 3 -> rank 5
    # R+ = 3 (d=2) + 3 (d=2) + 5 (d=3) = 11, R- = 1 (d=-1) + 3 (d=-2) = 4, total 15
    # r = (11 - 4) / 15 = 7/15
    assert stats.rank_biserial(x, y) == pytest.approx(7 / 15)
    assert stats.rank_biserial(y, x) == pytest.approx(-7 / 15)
    assert stats.rank_biserial([1, 2], [1, 2]) == 0.0
    assert stats.rank_biserial([3, 4, 5], [1, 1, 1]) == 1.0


def test_rank_biserial_sign_convention_matches_paper() -> None:
    # Published f1 train MAE: XCSF lower (0.2033 vs 0.2194) and effect size -0.5226, so
    # XCSF-smaller pairs must give a negative r; XCSF-larger (worse) pairs a positive one.
    xcsf_lower = stats.rank_biserial([0.20, 0.21, 0.19, 0.22], [0.22, 0.23, 0.18, 0.25])
    assert xcsf_lower < 0
    paper = pd.read_csv(PAPER).set_index(["benchmark", "metric"])
    assert paper.loc[("f1", "train_mae"), "effect_size"] < 0
    assert paper.loc[("f1", "train_mae"), "xcsf_mean"] < paper.loc[("f1", "train_mae"), "kacs_mean"]


def test_symbol_direction() -> None:
    base = np.array([0.30, 0.31, 0.32, 0.33, 0.34, 0.35])
    lower = base - np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06])
    assert stats.symbol(lower, base) == "+"  # XCSF (x) significantly lower: better
    assert stats.symbol(base, lower) == "-"  # XCSF significantly higher: worse
    assert stats.symbol(base, base) == "~"
    # five pairs cannot reach p < 0.05 (smallest exact p = 0.0625)
    assert stats.symbol(lower[:5], base[:5]) == "~"
    assert stats.symbol(lower, base, alpha=0.01) == "~"


def test_verdict_from_published_p_and_means() -> None:
    assert stats.verdict(0.0113, 0.2033 - 0.2194) == "+"
    assert stats.verdict(8.86e-05, 0.2642 - 0.2351) == "-"
    assert stats.verdict(0.2534, 0.0929 - 0.0926) == "~"
    assert stats.verdict(math.nan, 1.0) == "~"


def test_average_ranks_with_ties() -> None:
    means = pd.DataFrame(
        {"xcsf": [0.2, 0.1, 0.5, 0.3], "kacs": [0.1, 0.2, 0.5, 0.4]},
        index=["a", "b", "c", "d"],
    )
    # a: kacs 1, xcsf 2; b: xcsf 1, kacs 2; c: tie 1.5 each; d: xcsf 1, kacs 2
    ranks = dict(zip(means.columns, kstats.average_ranks(means)))
    assert ranks["xcsf"] == pytest.approx((2 + 1 + 1.5 + 1) / 4)
    assert ranks["kacs"] == pytest.approx((1 + 2 + 1.5 + 2) / 4)


def test_average_ranks_published_test_mae() -> None:
    ranks = dict(zip(("xcsf", "kacs"), kstats.average_ranks(pd.DataFrame({"xcsf": XCSF_TEST, "kacs": KACS_TEST}))))
    assert (round(ranks["xcsf"], 3), round(ranks["kacs"], 3)) == (1.875, 1.125)  # as the report rounds them: 1.88 / 1.12


def test_count_and_format_symbols() -> None:
    counts = stats.count_symbols(["+", "-", "-", "~", "-", "", "~"])
    assert counts == {"+": 1, "-": 3, "~": 2}
    assert stats.format_counts(counts) == "1/3/2"


def test_confidence_band_t_based() -> None:
    values = np.array([[1.0, 10.0], [2.0, np.nan], [3.0, np.nan]])
    band = stats.confidence_band(values)
    # column 0: mean 2, sd 1, n 3 -> half width t_{0.975, 2} / sqrt(3) = 4.302653 / 1.732051
    assert band.mean[0] == pytest.approx(2.0)
    assert band.upper[0] - band.mean[0] == pytest.approx(4.302652729911275 / math.sqrt(3))
    # column 1: a single run: no spread, the band collapses onto the mean
    assert band.count.tolist() == [3, 1]
    assert band.lower[1] == band.upper[1] == 10.0


def test_fidelity_z_and_within() -> None:
    # SE = sqrt(0.02^2/30 + 0.03^2/10) = sqrt(1.3333e-5 + 9e-5) = 0.0101653
    z = stats.fidelity_z(0.25, 0.03, 10, 0.23, 0.02, 30)
    assert z == pytest.approx(0.02 / math.sqrt(0.02**2 / 30 + 0.03**2 / 10))
    assert stats.fidelity_z(0.23, 0.03, 10, 0.23, 0.02) == 0.0
    assert stats.within_published(0.25, 0.03, 10, 0.23, 0.02)  # 0.02 <= 3 SE = 0.0305
    assert not stats.within_published(0.30, 0.001, 30, 0.23, 0.001)  # 0.07 > max(3 SE, 0.0115)
    # the 5 % floor: tiny SDs, 4 % off -> still within
    assert stats.within_published(1040.0, 0.0, 30, 1000.0, 0.0)
    assert not stats.within_published(1060.0, 0.0, 30, 1000.0, 0.0)


def test_format_p() -> None:
    assert stats.format_p(0.0390625, stats.DAGGER) == "0.0391†"
    assert stats.format_p(0.3832) == "0.383"
    assert stats.format_p(1.86e-09) == "1.86e-09"
    assert stats.format_p(math.nan) == "n/a"
