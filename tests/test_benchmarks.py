"""Synthetic benchmarks f1-f4 and the f3 variants against hand-computed values and the
authors' published samples (docs/algorithm.md section 8)."""

import math

import numpy as np
import pytest

from kacs_cli.errors import UserError
from kacs_cli.experiments.data import benchmarks
from kacs_cli.experiments.data.benchmarks import evaluate, generate

# First rows of the authors' published samples (dataset folder of YNU-NakataLab/KACS):
# ten inputs in [0, 1], then the function value.
REFERENCE_ROWS = {
    "f1": ([0.05432366731051963, 0.9067614430831911, 0.5419421853162336, 0.0601185998323992,
            0.7480959446105073, 0.5534524119799848, 0.011754364596123223, 0.4779010316007142,
            0.10130023674503719, 0.70685184111022], 226.47501706721127),
    "f2": ([0.10737397882558353, 0.3632674982333749, 0.5749355051202587, 0.5145344400196873,
            0.37196060257284747, 0.7182364823165671, 0.5015540508555751, 0.7105578818614846,
            0.2749865615677668, 0.8615436436550904], 1416.869760817907),
    "f3": ([0.5089766669851109, 0.34996778313439747, 0.2588344025770699, 0.6009692044984092,
            0.6146875900020071, 0.6785251957611141, 0.4076046901572058, 0.7584496263418649,
            0.9860562746557429, 0.06724616884878454], 1.0771305033237402),
    "f4": ([0.06768179075056646, 0.5359383244076945, 0.023960899447146966, 0.5098584429558554,
            0.5113910870216682, 0.3168355087200153, 0.785760566698938, 0.6540240180620942,
            0.0954542833537152, 0.32318426891527763], -16.483735349503128),
}


def rel_err(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))


@pytest.mark.parametrize("function", benchmarks.FUNCTIONS)
def test_reference_rows_reproduce_exactly(function):
    x, target = REFERENCE_ROWS[function]
    value = evaluate(function, np.array([x]))
    assert value.shape == (1,)
    assert rel_err(value, [target]) < 1e-12


@pytest.mark.parametrize("n", [2, 3, 10])
def test_centre_point(n):
    # x = 0.5 maps every domain to zeta = 0 (all four domains are symmetric about 0):
    # f1 = 10n + n (0 - 10 cos 0) = 0; f2 = sum_{i<n} (100 * 0 + (0 - 1)^2) = n - 1;
    # f3: a = b = 0 -> max(1, 1, 1.25) = 1.25; f4 = 0.
    X = np.full((1, n), 0.5)
    assert evaluate("f1", X)[0] == pytest.approx(0.0, abs=1e-12)
    assert evaluate("f2", X)[0] == pytest.approx(n - 1, abs=1e-12)
    assert evaluate("f3", X)[0] == pytest.approx(1.25, abs=1e-15)
    assert evaluate("f4", X)[0] == pytest.approx(0.0, abs=1e-12)


def test_hand_worked_points():
    # f1 at zeta_i = 1: x = (1 + 5.12) / 10.24 = 0.59765625; each term 1 - 10 cos(2 pi) = -9,
    # so f1 = 10n - 9n = n.
    assert evaluate("f1", np.full((1, 4), 0.59765625))[0] == pytest.approx(4.0, abs=1e-9)
    # f1 at the corner zeta = -5.12: 5.12^2 - 10 cos(10.24 pi) = 26.2144 - 10 cos(0.24 pi).
    one = 10 + 26.2144 - 10 * math.cos(0.24 * math.pi)
    assert evaluate("f1", np.zeros((1, 3)))[0] == pytest.approx(3 * one, rel=1e-12)
    # f2 global minimum at zeta = 1 (x = 0.75): 0. At zeta = (0, 1) (x = (0.5, 0.75)):
    # 100 (1 - 0)^2 + (0 - 1)^2 = 101.
    assert evaluate("f2", np.full((1, 5), 0.75))[0] == pytest.approx(0.0, abs=1e-12)
    assert evaluate("f2", np.array([[0.5, 0.75]]))[0] == pytest.approx(101.0, rel=1e-12)
    # f4 at zeta = -3 (x = 0.2): 81 - 144 - 15 = -78 per variable, times 0.5 -> -39 n.
    assert evaluate("f4", np.full((1, 3), 0.2))[0] == pytest.approx(-117.0, rel=1e-12)
    # f3, n = 2, x = (0.75, 0.75): a = b = 0.5 ->
    # max(e^-2.5, e^-12.5, 1.25 e^-2.5) = 1.25 e^-2.5.
    assert evaluate("f3", np.array([[0.75, 0.75]]))[0] == pytest.approx(1.25 * math.exp(-2.5), rel=1e-12)
    # f3, n = 3: a = mean of the first floor(3/2) = 1 zeta, b = mean of the other two.
    # x = (0.5, 1, 0) -> zeta = (0, 1, -1): a = 0, b = 0 -> 1.25; if b took only zeta_2 it
    # would be 1 -> value 1.
    assert evaluate("f3", np.array([[0.5, 1.0, 0.0]]))[0] == pytest.approx(1.25, rel=1e-12)


def test_f3_variants_hand_worked():
    # rotated, x = (0.75, 0.5): a = 0.5, b = 0 -> a_r = 0.5/sqrt2, b_r = -0.5/sqrt2,
    # max(e^(-10 * 0.125), e^(-50 * 0.125), 1.25 e^(-5 * 0.25)) = 1.25 e^-1.25
    # (unrotated the same point gives exp(-50 * 0) = 1).
    X = np.array([[0.75, 0.5]])
    assert evaluate("f3", X)[0] == pytest.approx(1.0, rel=1e-12)
    assert evaluate("f3", X, "rotated")[0] == pytest.approx(1.25 * math.exp(-1.25), rel=1e-12)
    # translated, x = 0.5 everywhere (zeta = 0 -> -0.2): a = b = -0.2 ->
    # max(e^-0.4, e^-2, 1.25 e^(-5 * 0.08)) = 1.25 e^-0.4.
    X10 = np.full((1, 10), 0.5)
    assert evaluate("f3", X10, "translated")[0] == pytest.approx(1.25 * math.exp(-0.4), rel=1e-12)
    # translated, x = 0.6 (zeta = 0.2 -> 0): the peak 1.25 moves to zeta = 0.2.
    assert evaluate("f3", np.full((1, 10), 0.6), "translated")[0] == pytest.approx(1.25, rel=1e-12)
    # scaled, x = 0.75 (zeta = 0.5 -> 0.625): a = b = 0.625 -> 1.25 e^(-5 * 0.78125).
    assert evaluate("f3", np.full((1, 10), 0.75), "scaled")[0] == pytest.approx(
        1.25 * math.exp(-3.90625), rel=1e-12
    )
    # n = 10 rotated: first five x = 0.75, last five 0.5 -> a = 0.5, b = 0, as above.
    X = np.array([[0.75] * 5 + [0.5] * 5])
    assert evaluate("f3", X, "rotated")[0] == pytest.approx(1.25 * math.exp(-1.25), rel=1e-12)


def test_one_dimensional_input_is_one_sample():
    x, target = REFERENCE_ROWS["f4"]
    assert rel_err(evaluate("f4", np.array(x)), [target]) < 1e-12


@pytest.mark.parametrize("function", benchmarks.FUNCTIONS)
def test_published_samples_every_row(shared_data_dir, function):
    data = np.loadtxt(shared_data_dir / f"{function}.csv", delimiter=",")
    assert data.shape == (1000, 11)
    values = evaluate(function, data[:, :-1])
    assert rel_err(values, data[:, -1]) < 1e-10


def test_generate_draws_from_default_rng():
    X, y = generate("f3", 10, 1000)
    expected = np.random.default_rng(benchmarks.DATASET_SEED).random((1000, 10))
    assert benchmarks.DATASET_SEED == 0
    np.testing.assert_array_equal(X, expected)
    np.testing.assert_array_equal(y, evaluate("f3", expected))
    assert X.dtype == np.float64 and y.shape == (1000,)
    assert X.flags["C_CONTIGUOUS"] and y.flags["C_CONTIGUOUS"]


def test_generate_is_deterministic_per_seed_and_variant():
    X1, y1 = generate("f1", 4, 50, seed=7)
    X2, y2 = generate("f1", 4, 50, seed=7)
    X3, _ = generate("f1", 4, 50, seed=8)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    Xr, yr = generate("f3", 10, 100, variant="rotated")
    Xp, yp = generate("f3", 10, 100)
    np.testing.assert_array_equal(Xr, Xp)  # same inputs, different function
    assert not np.allclose(yr, yp)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: evaluate("f5", np.zeros((1, 2))), "unknown benchmark function 'f5'"),
        (lambda: evaluate("f1", np.zeros((1, 2)), "rotated"), "only applies to f3"),
        (lambda: evaluate("f3", np.zeros((1, 2)), "sheared"), "unknown variant 'sheared'"),
        (lambda: evaluate("f2", np.zeros((3, 1))), "f2 (Rosenbrock) needs n >= 2"),
        (lambda: evaluate("f3", np.zeros((3, 1))), "f3 (Cross) needs n >= 2"),
        (lambda: evaluate("f1", np.array([[np.nan, 0.5]])), "NaN or infinite"),
        (lambda: generate("f1", 0, 100), "n must be an integer >= 1"),
        (lambda: generate("f2", 1, 100), "needs n >= 2"),
        (lambda: generate("f1", 3, 9), "samples must be an integer >= 10"),
        (lambda: generate("f4", 3, 100, variant="scaled"), "only applies to f3"),
    ],
)
def test_bad_arguments_are_user_errors(call, fragment):
    with pytest.raises(UserError) as info:
        call()
    assert fragment in str(info.value)


def test_input_laws_skew_or_discretize_the_draws_of_any_function():
    from kacs_cli.experiments.data.benchmarks import DISCRETE_LEVELS

    uniform, _ = generate("f1", 4, 2000, seed=3)
    skewed, y_skewed = generate("f1", 4, 2000, seed=3, variant="skewed")
    assert np.allclose(skewed, uniform**4)
    assert np.median(skewed) == pytest.approx(0.5**4, abs=0.01)
    assert np.array_equal(y_skewed, evaluate("f1", skewed))
    discrete, y_discrete = generate("f4", 4, 2000, seed=3, variant="discrete")
    assert np.array_equal(np.unique(discrete), np.linspace(0, 1, DISCRETE_LEVELS))
    assert np.array_equal(discrete, np.floor(uniform * DISCRETE_LEVELS) / (DISCRETE_LEVELS - 1))
    assert np.array_equal(y_discrete, evaluate("f4", discrete))


def test_each_function_is_one_record_and_an_unknown_name_is_refused():
    from kacs_cli.reporting.model import BENCHMARK_ORDER

    assert benchmarks.FUNCTIONS == tuple(benchmarks.BENCHMARKS) == ("f1", "f2", "f3", "f4")
    for key, record in benchmarks.BENCHMARKS.items():
        assert (benchmarks.NAMES[key], benchmarks.MIN_INPUTS[key]) == (record.name, record.min_inputs)
    assert BENCHMARK_ORDER[:4] == benchmarks.FUNCTIONS
    X = np.full((3, 4), 0.5)
    with pytest.raises(UserError, match="unknown benchmark function 'f5'; choose one of f1, f2, f3, f4"):
        evaluate("f5", X)
    # The values come from each record's own function: no name falls through to another.
    lo, hi = benchmarks.BENCHMARKS["f4"].domain
    assert np.array_equal(evaluate("f4", X), benchmarks.BENCHMARKS["f4"].value(lo + (hi - lo) * X, None))
    with pytest.raises(UserError, match="only applies to f3"):
        evaluate("f1", X, variant="rotated")
