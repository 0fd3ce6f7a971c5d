"""Structural fidelity (estimators/fidelity.py, docs/explain.md) against hand-computed values."""

import numpy as np
import pytest

from kacs_cli.errors import UserError
from kacs_cli.estimators.fidelity import comparison_figure, effect_grid, partial_dependence, structural_fidelity
from kacs_cli.experiments.data.benchmarks import BENCHMARKS, evaluate


def _rows(n, m=300, seed=1):
    return np.random.default_rng(seed).random((m, n))


def g1(x):
    return np.sin(3.0 * x)


def g2(x):
    return (x - 0.3) ** 2


def g3(x):
    return np.exp(x)


def additive(X):
    return g1(X[:, 0]) + g2(X[:, 1]) + g3(X[:, 2])


def test_grid_is_the_midpoint_quantiles():
    B = np.arange(8.0).reshape(-1, 1)  # 0..7: quantile at 1/8, 3/8, 5/8, 7/8 (linear)
    grid = effect_grid(B, 4)
    assert np.allclose(grid[:, 0], np.quantile(B[:, 0], [0.125, 0.375, 0.625, 0.875]))
    assert np.allclose(grid[:, 0], [0.875, 2.625, 4.375, 6.125])


def test_additive_model_scores_one_and_offset_does_not_matter():
    X = _rows(3)
    fid = structural_fidelity(lambda Z: additive(Z) + 7.0, additive, X)
    assert np.allclose(fid.r2, 1.0)
    assert fid.mean == pytest.approx(1.0) and fid.worst == pytest.approx(1.0)


def test_true_effect_of_an_additive_function_is_its_centred_term():
    X = _rows(3)
    fid = structural_fidelity(additive, additive, X, y_range=(-1.0, 3.0))  # half-range 2
    for p, g in enumerate((g1, g2, g3)):
        term = g(fid.grid[:, p])
        assert np.allclose(fid.true[:, p], (term - term.mean()) / 2.0, atol=1e-13)


@pytest.mark.parametrize("function", ["f1", "f4"])
def test_true_effect_of_f1_and_f4_is_the_centred_one_dimensional_term(function):
    X = _rows(4, m=200, seed=3)
    lo, hi = BENCHMARKS[function].domain
    fid = structural_fidelity(lambda Z: evaluate(function, Z), lambda Z: evaluate(function, Z), X,
                              y_range=(0.0, 2.0))
    z = lo + (hi - lo) * fid.grid
    term = z**2 - 10.0 * np.cos(2.0 * np.pi * z) if function == "f1" else 0.5 * (z**4 - 16.0 * z**2 + 5.0 * z)
    assert np.allclose(fid.true, term - term.mean(axis=0), atol=1e-9)
    assert np.allclose(fid.r2, 1.0)


def test_model_missing_a_term_and_halving_another():
    # Learned: g1 exact, g2 at half its size, g3 missing. Centred true effects t_p; the learned
    # ones are t_1, t_2 / 2 and 0, so R^2 = 1, 1 - (1/2)^2 = 0.75 and 1 - 1 = 0.
    X = _rows(3)
    fid = structural_fidelity(lambda Z: g1(Z[:, 0]) + 0.5 * g2(Z[:, 1]), additive, X)
    assert np.allclose(fid.r2, [1.0, 0.75, 0.0])
    assert fid.mean == pytest.approx(1.75 / 3) and fid.worst == pytest.approx(0.0)
    assert fid.worst_input == "x3"


def test_constant_model_scores_zero():
    fid = structural_fidelity(lambda Z: np.full(Z.shape[0], 3.5), additive, _rows(3))
    assert np.allclose(fid.r2, 0.0)


def test_interaction_by_hand():
    # truth x1 x2: its partial dependence on x1 at g is g * mean(x2), centred (g - gbar) m2.
    # The additive model a (x1 + x2) has (g - gbar) a, so R^2 = 1 - ((a - m2) / m2)^2.
    X = _rows(2, m=400, seed=5)
    m1, m2 = X.mean(axis=0)
    a = 0.4
    fid = structural_fidelity(lambda Z: a * (Z[:, 0] + Z[:, 1]), lambda Z: Z[:, 0] * Z[:, 1], X)
    assert fid.r2[0] == pytest.approx(1.0 - ((a - m2) / m2) ** 2, abs=1e-12)
    assert fid.r2[1] == pytest.approx(1.0 - ((a - m1) / m1) ** 2, abs=1e-12)


def test_input_without_true_effect_is_left_out():
    X = _rows(2)
    fid = structural_fidelity(lambda Z: g1(Z[:, 0]) + Z[:, 1], lambda Z: g1(Z[:, 0]), X)
    assert fid.r2[0] == pytest.approx(1.0) and np.isnan(fid.r2[1])
    assert fid.mean == pytest.approx(1.0) and fid.worst_input == "x1"


def test_any_regressor_with_predict():
    from sklearn.linear_model import LinearRegression

    X = _rows(3)
    truth = lambda Z: 2.0 * Z[:, 0] - Z[:, 1] + 0.5 * Z[:, 2]  # noqa: E731
    model = LinearRegression().fit(X, truth(X))
    assert np.allclose(structural_fidelity(model, truth, X).r2, 1.0)


def test_effects_are_on_the_half_range_scale_and_pd_matches_a_loop():
    X = _rows(2, m=20)
    grid = effect_grid(X, 5)
    pd_fast = partial_dependence(lambda Z: Z[:, 0] * Z[:, 1] ** 2, X, grid)
    slow = np.array([[np.mean([(grid[k, 0] * r[1] ** 2) if p == 0 else (r[0] * grid[k, 1] ** 2) for r in X])
                      for p in range(2)] for k in range(5)])
    assert np.allclose(pd_fast, slow - slow.mean(axis=0))
    fid = structural_fidelity(lambda Z: Z[:, 0], lambda Z: Z[:, 0], X, y_range=(0.0, 4.0), points=5)
    assert np.allclose(fid.true[:, 0], (grid[:, 0] - grid[:, 0].mean()) / 2.0)


def test_bad_input_is_one_line():
    with pytest.raises(UserError, match="callable"):
        structural_fidelity(lambda Z: Z[:, 0], "f1", _rows(2))
    with pytest.raises(UserError, match="NaN"):
        structural_fidelity(lambda Z: Z[:, 0], lambda Z: Z[:, 0], np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(UserError, match="y_range"):
        structural_fidelity(lambda Z: Z[:, 0], lambda Z: Z[:, 0], _rows(2), y_range=(1.0, 1.0))


def test_write_table_and_figure(tmp_path):
    import pandas as pd

    X = _rows(3)
    fid = structural_fidelity(lambda Z: g1(Z[:, 0]) + 0.5 * g2(Z[:, 1]), additive, X)
    csv_path, png_path = fid.write(tmp_path)
    table = pd.read_csv(csv_path)
    assert list(table["input"]) == ["x1", "x2", "x3"]
    assert np.allclose(table["r2"], [1.0, 0.75, 0.0])
    assert png_path.stat().st_size > 1000


# ------------------------------------------------------------------------------------------
# kacs fidelity
# ------------------------------------------------------------------------------------------

def test_cli_writes_table_and_figure_and_matches_the_api(tmp_path, capsys):
    import pandas as pd

    from cli_support import run_kacs
    from kacs_cli import KACSRegressor, load
    from kacs_cli.experiments.data.benchmarks import generate

    X, y = generate("f4", 2, 200)
    data = tmp_path / "f4.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    model = tmp_path / "m.kacs"
    KACSRegressor(n_iter=2000, N=400).fit(X, y).save(model)
    code, out, err = run_kacs(capsys, "fidelity", model, "f4", "--data", data)
    assert code == 0, err
    table = pd.read_csv(tmp_path / "m_fidelity" / "fidelity.csv")
    expected = structural_fidelity(load(model), lambda Z: evaluate("f4", Z), X, y_range=(y.min(), y.max()))
    assert np.allclose(table["r2"], expected.r2)
    assert f"mean R^2 {expected.mean:.3f}" in out
    assert (tmp_path / "m_fidelity" / "fidelity.png").stat().st_size > 1000
    code, _, err = run_kacs(capsys, "fidelity", model, "f9", "--data", data)
    assert code == 2 and "unknown benchmark function" in err
    wide = tmp_path / "wide.csv"
    np.savetxt(wide, np.ones((5, 5)), delimiter=",")
    code, _, err = run_kacs(capsys, "fidelity", model, "f4", "--data", wide)
    assert code == 2 and "found 5 columns" in err and "takes 2 inputs" in err


def test_comparison_figure_draws_each_models_effects_of_the_chosen_inputs():
    X = _rows(3)
    exact = structural_fidelity(additive, additive, X)
    partial = structural_fidelity(lambda Z: g1(Z[:, 0]) + 0.5 * g2(Z[:, 1]), additive, X)
    fig = comparison_figure({"exact": exact, "partial": partial}, inputs=["x2", "x3"])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4  # 2 models x 2 inputs, row by row
    for ax, (fid, p) in zip(axes, [(exact, 1), (exact, 2), (partial, 1), (partial, 2)]):
        true_line, learned_line = ax.get_lines()
        assert np.array_equal(true_line.get_xdata(), fid.grid[:, p])
        assert np.array_equal(true_line.get_ydata(), fid.true[:, p])
        assert np.array_equal(learned_line.get_ydata(), fid.learned[:, p])
    # partial: x2 at half its size (R^2 0.75), x3 missing (R^2 0)
    assert [ax.get_title() for ax in axes] == ["x2: R² 1.000", "x3: R² 1.000", "x2: R² 0.750", "x3: R² 0.000"]
    assert axes[2].get_ylabel().startswith("partial")
    with pytest.raises(UserError, match="no input 'x4'"):
        comparison_figure({"exact": exact}, inputs=["x4"])


@pytest.mark.parametrize("with_target", [False, True])
def test_cli_refuses_rows_with_missing_inputs_in_one_line(tmp_path, capsys, with_target):
    from cli_support import run_kacs
    from kacs_cli import KACSRegressor
    from kacs_cli.experiments.data.benchmarks import generate

    X, y = generate("f4", 2, 60)
    model = tmp_path / "m.kacs"
    KACSRegressor(n_iter=300, N=100).fit(X, y).save(model)
    rows = np.column_stack([X, y]) if with_target else X.copy()
    rows[[6, 9], 1] = np.nan
    data = tmp_path / "holes.csv"
    data.write_text("\n".join(",".join("" if np.isnan(v) else repr(float(v)) for v in row) for row in rows) + "\n")
    code, out, err = run_kacs(capsys, "fidelity", model, "f4", "--data", data)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "2 of its 60 rows have missing inputs (the first is data row 7)" in err
    assert "drop those rows, or leave out --data" in err
    assert not (tmp_path / "m_fidelity").exists()
