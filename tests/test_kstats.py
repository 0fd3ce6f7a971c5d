"""kacs_cli.reporting.kstats and kacs_cli.reporting.cd_diagram against published numbers, scipy and hand counts.

The worked example is Demšar (2006, JMLR 7), section 3.2.2: the AUC of four C4.5 variants
on 14 UCI data sets (his Table 6). The AUCs below are the table's, as printed and as
embedded in public reimplementations of the example (e.g. the Friedman test examples of
several Python and R repositories). One cell needs care: on 'voting' the table prints 0.975
for both C4.5+cf and C4.5+m+cf, yet the paper's average ranks (2.893 = 40.5/14 and
1.964 = 27.5/14) only come out if C4.5+cf ranks 2nd and C4.5+m+cf 3rd there, i.e. the paper
ranked the unrounded AUCs; with the printed tie they would be 2.929 and 1.929. C4.5+cf's
voting AUC is therefore entered as 0.9751, which ranks it as the paper does and changes no
other figure (test_printed_voting_tie_is_why_one_cell_is_nudged shows both).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from kacs_cli.reporting import cd_diagram, kstats, stats

C45 = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
# Demšar (2006) Table 6, rows: adult (sample), breast cancer, breast cancer wisconsin, cmc,
# ionosphere, iris, liver disorders, lung cancer, lymphography, mushroom, primary tumor,
# rheum, voting, wine.
AUC = np.array([
    [0.763, 0.768, 0.771, 0.798],
    [0.599, 0.591, 0.590, 0.569],
    [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657],
    [0.882, 0.888, 0.886, 0.898],
    [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685],
    [0.583, 0.583, 0.563, 0.625],
    [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000],
    [0.940, 0.962, 0.965, 0.962],
    [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.9751, 0.975],  # printed 0.975 / 0.975: see the module docstring
    [0.957, 0.978, 0.946, 0.970],
])
# AUC is "higher is better"; kstats ranks "lower is better" (rank 1 = lowest), as docs/algorithm.md section 11.
LOSS = -AUC

# Demšar (2006) Table 5(a): q_alpha for k = 2..10.
Q_005 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
Q_010 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


# --- Demšar's worked example -------------------------------------------------------------

def test_demsar_average_ranks() -> None:
    ranks = kstats.average_ranks(LOSS)
    np.testing.assert_allclose(ranks, [3.143, 2.000, 2.893, 1.964], atol=5e-4)
    # the exact rank sums behind the paper's three decimals
    np.testing.assert_allclose(ranks * 14, [44.0, 28.0, 40.5, 27.5], atol=1e-12)


def test_demsar_friedman_and_iman_davenport() -> None:
    result = kstats.friedman(LOSS)
    assert (result.k, result.b) == (4, 14)
    assert result.chi2_f == pytest.approx(9.28, abs=5e-3)
    assert result.f_f == pytest.approx(3.69, abs=5e-3)
    assert result.df_chi2 == 3
    assert result.df_f == (3, 39)
    # "The critical value of F(3, 39) for alpha = 0.05 is 2.85, so we reject the null
    # hypothesis": F_F exceeds it and its p-value is below 0.05.
    assert sps.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=5e-3)
    assert result.f_f > 2.85 and result.p_f < 0.05
    assert result.p_chi2 == pytest.approx(sps.chi2.sf(9.2785714285714, 3), rel=1e-9)


def test_demsar_critical_differences_and_groups() -> None:
    ranks = dict(zip(C45, kstats.average_ranks(LOSS)))
    cd05 = kstats.critical_difference(4, 14, 0.05)
    cd10 = kstats.critical_difference(4, 14, 0.10)
    assert cd05 == pytest.approx(1.25, abs=5e-3)  # 2.569 * sqrt(4 * 5 / (6 * 14))
    assert cd10 == pytest.approx(1.12, abs=5e-3)  # 2.291 * sqrt(4 * 5 / (6 * 14))
    # alpha 0.05: "even the difference between the best and the worst (3.143 - 1.964 =
    # 1.179) is smaller than CD": one group of all four.
    assert kstats.cd_groups(ranks, cd05) == [("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5")]
    # alpha 0.10: C4.5 is worse than C4.5+m and C4.5+m+cf; C4.5+cf belongs to both groups
    # ("the data is not sufficient to conclude" where it stands), as in Fig. 1.
    assert kstats.cd_groups(ranks, cd10) == [
        ("C4.5+m+cf", "C4.5+m", "C4.5+cf"),
        ("C4.5+cf", "C4.5"),
    ]


def test_printed_voting_tie_is_why_one_cell_is_nudged() -> None:
    printed = AUC.copy()
    printed[12, 2] = 0.975
    np.testing.assert_allclose(kstats.average_ranks(-printed), [44 / 14, 2.0, 41 / 14, 27 / 14])
    np.testing.assert_allclose(kstats.rank_matrix(LOSS)[12], [4.0, 1.0, 2.0, 3.0])


# --- average ranks -----------------------------------------------------------------------

def test_average_ranks_by_hand_with_ties_and_a_missing_benchmark() -> None:
    means = np.array([
        [0.1, 0.2, 0.3],
        [0.5, 0.5, 0.1],  # tie for ranks 2 and 3: 2.5 each
        [0.3, np.nan, 0.2],  # incomplete: left out, so every method is ranked over rows 1-2
    ])
    np.testing.assert_allclose(kstats.average_ranks(means), [1.75, 2.25, 2.0])


def test_average_ranks_count_lower_and_tied_means_and_read_a_frame_in_column_order() -> None:
    rng = np.random.default_rng(4)
    means = rng.integers(0, 4, size=(12, 5)).astype(float)  # many ties
    means[3, 1] = np.nan
    # A mean's rank within its benchmark: 1 + the means below it + half the others equal to it.
    complete = means[~np.isnan(means).any(axis=1)]
    expected = [np.mean([1 + (row < row[j]).sum() + ((row == row[j]).sum() - 1) / 2 for row in complete])
                for j in range(means.shape[1])]
    np.testing.assert_allclose(kstats.average_ranks(means), expected)
    frame = pd.DataFrame(means, columns=list("abcde"))
    np.testing.assert_allclose(kstats.average_ranks(frame), expected)


def test_average_ranks_refuse_a_single_method() -> None:
    with pytest.raises(ValueError, match="at least 2 methods"):
        kstats.average_ranks(np.ones((3, 1)))


# --- Friedman / Iman-Davenport against scipy and an independent route --------------------

@pytest.mark.parametrize("b, k, seed", [(14, 4, 0), (8, 10, 1), (30, 3, 2), (5, 3, 3)])
def test_friedman_matches_scipy_without_ties(b: int, k: int, seed: int) -> None:
    means = np.random.default_rng(seed).normal(size=(b, k))
    result = kstats.friedman(means)
    reference = sps.friedmanchisquare(*means.T)
    assert result.chi2_f == pytest.approx(reference.statistic, rel=1e-12)
    assert result.p_chi2 == pytest.approx(reference.pvalue, rel=1e-9)


def test_friedman_is_demsars_formula_scipy_corrects_for_ties() -> None:
    # scipy divides chi2_F by C = 1 - sum(t^3 - t) / (b k (k^2 - 1)); Demšar's formula does not
    means = np.random.default_rng(5).integers(0, 3, size=(10, 4)).astype(float)
    ties = sum(
        float(np.sum(counts**3 - counts))
        for counts in (np.unique(row, return_counts=True)[1] for row in means)
    )
    b, k = means.shape
    correction = 1.0 - ties / (b * k * (k * k - 1))
    assert correction < 1.0
    reference = sps.friedmanchisquare(*means.T).statistic
    assert kstats.friedman(means).chi2_f == pytest.approx(reference * correction, rel=1e-12)


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_iman_davenport_is_the_anova_f_on_ranks(seed: int) -> None:
    # Iman & Davenport (1980): F_F is the two-way ANOVA F statistic on the within-benchmark
    # ranks, with (k-1) and (k-1)(b-1) degrees of freedom; computed here from sums of squares.
    means = np.random.default_rng(seed).normal(size=(9, 5))
    ranks = sps.rankdata(means, axis=1)
    b, k = ranks.shape
    grand = ranks.mean()
    ss_methods = b * float(np.sum((ranks.mean(axis=0) - grand) ** 2))
    ss_benchmarks = k * float(np.sum((ranks.mean(axis=1) - grand) ** 2))  # 0 for ranks
    ss_error = float(np.sum((ranks - grand) ** 2)) - ss_methods - ss_benchmarks
    f = (ss_methods / (k - 1)) / (ss_error / ((k - 1) * (b - 1)))
    result = kstats.friedman(means)
    assert result.f_f == pytest.approx(f, rel=1e-10)
    assert result.p_f == pytest.approx(sps.f.sf(f, k - 1, (k - 1) * (b - 1)), rel=1e-9)


def test_friedman_degenerate_cases() -> None:
    tied = kstats.friedman(np.ones((5, 3)))
    assert (tied.chi2_f, tied.f_f) == (0.0, 0.0)
    assert tied.p_chi2 == pytest.approx(1.0) and tied.p_f == pytest.approx(1.0)
    same_order = kstats.friedman(np.tile([1.0, 2.0, 3.0], (6, 1)))
    assert same_order.chi2_f == pytest.approx(6 * 2)  # its maximum b (k - 1)
    assert same_order.f_f == math.inf and same_order.p_f == 0.0
    one = kstats.friedman(np.array([[1.0, 2.0, 3.0], [np.nan, 1.0, 2.0]]))
    assert one.b == 1 and math.isnan(one.chi2_f) and math.isnan(one.p_f)
    np.testing.assert_allclose(one.average_ranks, [1.0, 2.0, 3.0])


# --- Holm ----------------------------------------------------------------------------------

def test_smallest_holm_p_is_the_floor_of_the_across_benchmark_tests() -> None:
    # 8 benchmarks, 9 comparisons: 9 x 2/256 = 0.0703 > 0.05, no comparison can reject
    assert kstats.smallest_holm_p(8, 9) == pytest.approx(9 * 2 / 256)
    assert kstats.smallest_holm_p(7, 3) == pytest.approx(3 * 2 / 128) and 3 * 2 / 128 < 0.05
    assert kstats.smallest_holm_p(3, 5) == 1.0  # capped
    assert math.isnan(kstats.smallest_holm_p(0, 3))
    # the floor is attained: every difference of one sign
    from scipy import stats as sps
    assert sps.wilcoxon(np.arange(1.0, 9.0), np.zeros(8)).pvalue == pytest.approx(2 / 256)


def test_holm_by_hand() -> None:
    # sorted: 0.005 (x4), 0.01 (x3), 0.03 (x2), 0.04 (x1) -> 0.02, 0.03, 0.06, 0.04;
    # running maximum -> 0.02, 0.03, 0.06, 0.06; back in input order:
    np.testing.assert_allclose(kstats.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(kstats.holm([0.5, 0.6]), [1.0, 1.0])  # capped at 1
    np.testing.assert_allclose(kstats.holm([0.01, 0.01, 0.2]), [0.03, 0.03, 0.2])  # ties
    np.testing.assert_allclose(kstats.holm([0.02]), [0.02])  # one test: unchanged
    out = kstats.holm([math.nan, 0.01, 0.02])  # NaN tested nothing: m = 2
    assert math.isnan(out[0])
    np.testing.assert_allclose(out[1:], [0.02, 0.02])
    assert np.all(np.isnan(kstats.holm([math.nan, math.nan])))


def _statsmodels_holm(p: np.ndarray) -> np.ndarray:
    """statsmodels.stats.multitest.multipletests(p, method='holm')[1], transcribed:
    sort, multiply by m, m-1, ..., 1, running maximum, clip at 1, unsort."""
    order = np.argsort(p)
    m = p.size
    corrected = np.maximum.accumulate(p[order] * np.arange(m, 0, -1))
    corrected[corrected > 1] = 1
    out = np.empty(m)
    out[order] = corrected
    return out


def _holm_step_down_rejects(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm (1979) as a procedure: reject H_(1), H_(2), ... while p_(i) <= alpha / (m-i+1)."""
    order = np.argsort(p)
    reject = np.zeros(p.size, dtype=bool)
    for i, idx in enumerate(order):
        if p[idx] > alpha / (p.size - i):
            break
        reject[idx] = True
    return reject


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_statsmodels_definition_and_the_procedure(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.05, 4), rng.uniform(0, 1, 5)])
    adjusted = kstats.holm(p)
    np.testing.assert_allclose(adjusted, _statsmodels_holm(p), rtol=1e-12)
    for alpha in (0.05, 0.10):
        np.testing.assert_array_equal(adjusted <= alpha, _holm_step_down_rejects(p, alpha))


# --- Wilcoxon against a control ------------------------------------------------------------

def _runs() -> dict[str, np.ndarray]:
    # 10 runs, no ties: a method below the control on every run has exact two-sided
    # p = 2 / 2^10; one above it on every run the same; 'mixed' is not different.
    control = np.linspace(1.0, 2.0, 10)
    offsets = np.arange(1, 11) / 100.0
    mixed = control + offsets * np.array([1, -1, 1, -1, -1, 1, -1, 1, 1, -1])
    return {
        "better": control - offsets,
        "kacs": control,
        "worse": control + offsets,
        "mixed": mixed,
    }


def test_tests_against_control_by_hand() -> None:
    runs = _runs()
    result = kstats.per_benchmark_tests(runs)  # control 'kacs' by default
    assert result.control == "kacs"
    assert result.methods == ("better", "worse", "mixed")
    p_extreme = 2.0 / 2**10
    p_mixed = sps.wilcoxon(runs["mixed"], runs["kacs"]).pvalue
    assert result["better"].p == pytest.approx(p_extreme, rel=1e-12)
    assert result["worse"].p == pytest.approx(p_extreme, rel=1e-12)
    assert result["mixed"].p == pytest.approx(p_mixed, rel=1e-12)
    # Holm over the three: 3 p, max(3 p, 2 p), max(3 p, p_mixed)
    assert result["better"].p_holm == pytest.approx(3 * p_extreme, rel=1e-12)
    assert result["worse"].p_holm == pytest.approx(3 * p_extreme, rel=1e-12)
    assert result["mixed"].p_holm == pytest.approx(max(3 * p_extreme, p_mixed), rel=1e-12)
    assert [c.verdict for c in result.comparisons] == ["+", "-", "~"]
    assert result["better"].mean_difference == pytest.approx(-0.055)
    assert result["better"].n_pairs == 10
    assert result.counts() == {"+": 1, "-": 1, "~": 1}


def test_verdict_uses_the_holm_adjusted_p() -> None:
    # 6 runs, all lower than the control: exact p = 2 / 64 = 0.03125 < 0.05, but Holm over
    # three comparisons makes it 0.094: no longer significant.
    control = np.arange(1.0, 7.0)
    runs = {
        "kacs": control,
        "a": control - np.arange(1, 7) / 10.0,
        "b": control + np.array([0.1, -0.2, 0.3, -0.4, 0.5, -0.6]),
        "c": control + np.array([-0.1, 0.2, -0.3, 0.4, -0.5, 0.6]),
    }
    result = kstats.per_benchmark_tests(runs)
    assert result["a"].p == pytest.approx(0.03125)
    assert result["a"].p_holm == pytest.approx(0.09375)
    assert result["a"].verdict == "~"
    # alone against the control it would be '+', as stats.symbol says
    alone = kstats.per_benchmark_tests({"kacs": control, "a": runs["a"]})
    assert alone["a"].verdict == "+" == stats.symbol(runs["a"], control)


def test_two_methods_reduce_to_the_spec_section_11_symbol() -> None:
    rng = np.random.default_rng(9)
    for _ in range(20):
        xcsf = rng.normal(1.0, 0.2, 30)
        kacs = xcsf + rng.normal(rng.uniform(-0.1, 0.1), 0.1, 30)
        c = kstats.per_benchmark_tests({"xcsf": xcsf, "kacs": kacs})["xcsf"]
        assert c.p == stats.wilcoxon_p(xcsf, kacs) == c.p_holm
        assert c.verdict == stats.symbol(xcsf, kacs)


def test_control_pairs_drop_missing_runs_and_name_the_control() -> None:
    runs = {"kacs": [1.0, 2.0, 3.0, np.nan], "x": [1.5, np.nan, 3.5, 4.0]}
    c = kstats.per_benchmark_tests(runs)["x"]
    assert c.n_pairs == 2 and c.mean_difference == pytest.approx(0.5)
    result = kstats.per_benchmark_tests({"xcsf": [1.0], "ridge": [2.0]}, control="ridge")
    assert result.methods == ("xcsf",)
    with pytest.raises(ValueError, match="control method 'kacs'"):
        kstats.per_benchmark_tests({"xcsf": [1.0], "ridge": [2.0]})


def test_across_benchmark_tests_pair_by_benchmark() -> None:
    result = kstats.across_benchmark_tests(LOSS, C45, control="C4.5")
    assert result.methods == ("C4.5+m", "C4.5+cf", "C4.5+m+cf")
    for j, name in enumerate(C45[1:], start=1):
        assert result[name].p == stats.wilcoxon_p(LOSS[:, j], LOSS[:, 0])
        assert result[name].n_pairs == 14
    raw = np.array([c.p for c in result.comparisons])
    np.testing.assert_allclose([c.p_holm for c in result.comparisons], _statsmodels_holm(raw))
    with pytest.raises(ValueError, match="3 method names for 4 columns"):
        kstats.across_benchmark_tests(LOSS, C45[:3])


# --- Nemenyi -------------------------------------------------------------------------------

@pytest.mark.parametrize("k", range(2, 11))
def test_nemenyi_q_matches_demsar_table_5a(k: int) -> None:
    # the table's last digit is not consistently rounded (2.3437 -> 2.343, 2.9483 -> 2.949)
    assert kstats.nemenyi_q(k, 0.05) == pytest.approx(Q_005[k - 2], abs=1e-3)
    assert kstats.nemenyi_q(k, 0.10) == pytest.approx(Q_010[k - 2], abs=1e-3)


def test_nemenyi_q_two_methods_is_the_normal_quantile() -> None:
    # for k = 2 the studentized range / sqrt(2) is |Z|: q = z_{1 - alpha/2}
    assert kstats.nemenyi_q(2, 0.05) == pytest.approx(sps.norm.ppf(0.975), abs=1e-6)
    with pytest.raises(ValueError):
        kstats.nemenyi_q(1)
    with pytest.raises(ValueError):
        kstats.nemenyi_q(4, 1.5)


# --- CD groups (pure) and the diagram ------------------------------------------------------

def test_cd_groups_by_hand() -> None:
    ranks = {"A": 1.0, "D": 3.875, "B": 1.5, "C": 2.625}
    # sorted A 1.0, B 1.5, C 2.625, D 3.875; CD 1.25: A-B 0.5 and B-C 1.125 are below CD,
    # A-C 1.625 and C-D 1.25 are not (a difference of exactly CD is significant)
    assert kstats.cd_groups(ranks, 1.25) == [("A", "B"), ("B", "C")]
    assert kstats.cd_groups(ranks, 1.3) == [("A", "B"), ("B", "C"), ("C", "D")]
    assert kstats.cd_groups(ranks, 2.5) == [("A", "B", "C"), ("B", "C", "D")]
    assert kstats.cd_groups(ranks, 3.0) == [("A", "B", "C", "D")]
    assert kstats.cd_groups(ranks, 0.25) == []
    # a run inside another is not a group of its own
    assert kstats.cd_groups({"a": 1.0, "b": 1.25, "c": 1.5}, 1.0) == [("a", "b", "c")]
    # equal ranks keep their given order
    assert kstats.cd_groups({"q": 2.0, "p": 2.0, "r": 3.0}, 0.5) == [("q", "p")]
    with pytest.raises(ValueError, match="not a number"):
        kstats.cd_groups({"a": 1.0, "b": math.nan}, 1.0)


def test_cd_layout_and_drawn_bars(tmp_path) -> None:
    ranks = {"A": 1.0, "D": 3.875, "B": 1.5, "C": 2.625}
    layout = cd_diagram.cd_layout(ranks, 1.25)
    assert layout.k == 4
    assert layout.groups == (("A", "B"), ("B", "C"))
    assert layout.bars == ((1.0, 1.5), (1.5, 2.625))
    assert layout.left == ("A", "B") and layout.right == ("D", "C")
    assert layout.cd_interval == (1.0, 2.25)
    # a bar spans its group from the best to the worst rank, however many methods it joins
    assert cd_diagram.cd_layout(ranks, 2.5).bars == ((1.0, 2.625), (1.5, 3.875))

    fig = cd_diagram.render(layout)
    lines = fig.axes[0].get_lines()
    bars = [ln for ln in lines if ln.get_gid() == "bar"]
    assert len(bars) == 2
    for line, (lo, hi) in zip(bars, layout.bars):
        x = line.get_xdata()
        assert x[0] == pytest.approx(lo - cd_diagram.BAR_PAD)
        assert x[-1] == pytest.approx(hi + cd_diagram.BAR_PAD)
    assert len({ln.get_ydata()[0] for ln in bars}) == 2  # one row per bar
    cd_line = [ln for ln in lines if ln.get_gid() == "cd"][0]
    assert list(cd_line.get_xdata()) == [1.0, 2.25]
    axis = [ln for ln in lines if ln.get_gid() == "axis"][0]
    assert list(axis.get_xdata()) == [1.0, 4.0]
    for name, r in ranks.items():
        (elbow,) = [ln for ln in lines if ln.get_gid() == f"method:{name}"]
        x = elbow.get_xdata()
        assert x[0] == x[1] == r  # drops from the method's rank on the axis
        assert (x[2] < 1.0) == (name in layout.left)  # then runs to its side


def test_cd_diagram_writes_a_deterministic_png(tmp_path) -> None:
    ranks = dict(zip(C45, kstats.average_ranks(LOSS)))
    cd = kstats.critical_difference(4, 14, 0.10)
    first = tmp_path / "a" / "cd.png"
    layout = cd_diagram.cd_diagram(ranks, cd, first)
    assert layout.groups == tuple(kstats.cd_groups(ranks, cd))
    second = tmp_path / "b.png"
    cd_diagram.cd_diagram(ranks, cd, second)
    data = first.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data == second.read_bytes()
    assert b"Software" not in data and b"matplotlib" not in data.lower()
    import matplotlib.image

    image = matplotlib.image.imread(first)
    assert image.shape[0] > 100 and image.shape[1] > 300
    assert not list(tmp_path.rglob("*.tmp"))  # written atomically, nothing left behind
    with pytest.raises(ValueError, match="at least 2 methods"):
        cd_diagram.cd_diagram({"kacs": 1.0}, 1.0, tmp_path / "c.png")
