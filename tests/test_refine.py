"""Full-batch refinement of a KACS model (engine/refine.py) and the quantile input transform
(kacs_cli/scaling.py), through the engine, the estimator, configs and `kacs fit`."""

import copy

import numpy as np
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.engine import Hyperparameters, Model, train_run
from kacs_cli.engine.population import S_P, S_TOTAL, set_bounds
from kacs_cli.engine.refine import PATIENCE, Objective, _outer_cells, design, validation_split
from kacs_cli.errors import UserError
from kacs_cli.scaling import InputTransform


def _hand_built(n, inner, outer, seed=0):
    """A KACS model whose every submodel holds the given rules: `inner` and `outer` are lists
    of (lo, hi, F) placed in each inner resp. outer submodel, weights drawn from the seed."""
    model = Model("kacs", n, Hyperparameters(N=1000))
    pop = model.pop
    rng = np.random.default_rng(seed)
    n_q = 2 * n + 1
    s_in = n * n_q
    i = 0
    for s in range(s_in + n_q):
        for lo, hi, F in (inner if s < s_in else outer):
            pop.counts.sub[i] = s
            pop.pairs.a[i, 0], pop.pairs.b[i, 0] = lo, hi
            set_bounds(pop, i, 0, lo, hi)
            pop.reals.F[i] = F
            pop.counts.num[i] = 1
            pop.weights.w[i] = rng.uniform(-1, 1, 2)
            i += 1
    pop.scal[S_P] = i
    pop.scal[S_TOTAL] = i
    return model


def _smooth_model(n=2, seed=0):
    # Outer intervals far wider than any channel sum: no outer match set changes near the
    # weights tested, so the objective is smooth there and finite differences apply.
    inner = [(0.0, 0.6, 0.7), (0.3, 1.0, 0.2), (0.0, 1.0, 0.1)]
    outer = [(-50.0, 50.0, 0.5), (-60.0, 60.0, 0.3)]
    return _hand_built(n, inner, outer, seed)


def _data(n, rows, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    y = np.sin(3 * X[:, 0]) + X[:, -1] ** 2 - 0.5
    return X, y


def central_differences(loss, w0, h=1e-6):
    """The gradient of `loss` at w0 by central differences, one weight at a time."""
    numeric = np.empty_like(w0)
    for k in range(w0.size):
        up, down = w0.copy(), w0.copy()
        up[k] += h
        down[k] -= h
        numeric[k] = (loss(up) - loss(down)) / (2 * h)
    return numeric


def test_the_objective_is_the_engine_prediction_and_its_gradient_matches_finite_differences():
    model = _smooth_model()
    X, y = _data(2, 60)
    P = model.n_rules
    w0 = model.pop.weights.w[:P].ravel().copy()
    pull = 0.01
    reference = w0 + 0.05  # the pull's centre, away from w0 so that its gradient is tested too
    obj = Objective(model.pop, 2, 5, design(model.pop, X, y, 2, 5), pull, reference)
    # At the current weights the unpulled error is the engine's own prediction error.
    assert obj.mse(w0) == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-12)
    loss, grad = obj(w0)
    numeric = central_differences(lambda w: obj(w)[0], w0)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    assert loss == pytest.approx(0.5 * obj.mse(w0) + 0.5 * pull * np.sum((w0 - reference) ** 2))


def test_each_outer_cell_holds_the_match_set_of_every_channel_sum_in_it():
    # Two channels of rules with shared bounds (ties between lower bounds, upper bounds and
    # across the two) and a point interval: a channel sum z in the cell that its ranks name
    # (lower bounds <= z, upper bounds < z) must match exactly the rules of that cell.
    rng = np.random.default_rng(3)
    grid = np.linspace(-1.0, 1.0, 9)
    channels = []
    for m in (7, 12):
        lo = rng.choice(grid, m)
        hi = np.maximum(lo, rng.choice(grid, m))
        hi[0] = lo[0]
        order = np.argsort(lo, kind="stable")
        channels.append((lo[order], hi[order]))
    out_start = np.array([0, 7, 19])
    out_lo = np.concatenate([c[0] for c in channels])
    out_hi = np.concatenate([c[1] for c in channels])
    hi_sorted, start, rules = _outer_cells(out_start, out_lo, out_hi)
    probes = np.concatenate([grid, (grid[:-1] + grid[1:]) / 2, [-2.0, 2.0]])
    for q in range(2):
        s, e = out_start[q], out_start[q + 1]
        for z in probes:
            cell = 2 * s + q + np.searchsorted(out_lo[s:e], z, "right") + np.searchsorted(hi_sorted[s:e], z, "left")
            expected = [k for k in range(s, e) if out_lo[k] <= z <= out_hi[k]]
            assert list(rules[start[cell]:start[cell + 1]]) == expected, (q, z)


def test_the_objective_follows_outer_match_sets_that_change_with_the_channel_sum():
    # Narrow, overlapping and nested outer intervals, some sharing bounds: every channel sum
    # meets a different match set, and the objective is still the engine's prediction error.
    inner = [(0.0, 0.6, 0.7), (0.3, 1.0, 0.2), (0.0, 1.0, 0.1)]
    outer = [(-3.0, -0.5, 0.4), (-1.0, 0.0, 0.3), (-0.5, 0.5, 0.6), (0.0, 0.0, 0.9), (0.0, 1.5, 0.2),
             (-0.2, 0.3, 0.5), (0.5, 3.0, 0.8), (1.5, 2.0, 0.1)]
    model = _hand_built(2, inner, outer, seed=4)
    X, y = _data(2, 400, seed=5)
    w0 = model.pop.weights.w[:model.n_rules].ravel().copy()
    obj = Objective(model.pop, 2, 5, design(model.pop, X, y, 2, 5), 0.0, w0)
    assert np.diff(obj.oc_start).max() >= 3  # some channel sums meet several outer rules
    assert obj.mse(w0) == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-12)


def test_a_population_that_can_represent_the_target_is_refined_to_it():
    # n = 1: y = 3 x - 1 is exactly representable: every inner rule sees x on [0, 1] and every
    # outer rule covers all channel sums, so the optimum is zero error, whatever the start.
    model = _hand_built(1, [(0.0, 1.0, 1.0)], [(-1e3, 1e3, 1.0)], seed=3)
    X = np.linspace(0, 1, 50)[:, None]
    y = 3 * X[:, 0] - 1
    before = np.mean((model.predict(X) - y) ** 2)
    result = model.refine(X, y, seed=0, max_iter=500, pull=0.0, validation=0.0)
    after = np.mean((model.predict(X) - y) ** 2)
    assert before > 0.1 and after < 1e-10
    assert result.fit_mse_after == pytest.approx(after, abs=1e-12)
    assert model.n_rules == 6  # the structure is untouched


def test_the_pull_keeps_weights_no_row_reaches():
    # The second inner rule of each submodel lies where no row does: only the pull acts on it.
    model = _hand_built(1, [(0.0, 0.5, 1.0), (0.8, 1.0, 1.0)], [(-1e3, 1e3, 1.0)], seed=4)
    X = np.linspace(0, 0.5, 40)[:, None]
    y = np.sin(4 * X[:, 0])
    idle = [i for i in range(model.n_rules) if model.pop.bounds.lo[0, i] == 0.8]
    before = model.pop.weights.w[idle].copy()
    model.refine(X, y, seed=0, max_iter=200, pull=1e-3, validation=0.0)
    assert np.array_equal(model.pop.weights.w[idle], before)


def test_refinement_is_deterministic_and_early_stopping_reads_only_the_validation_rows():
    X, y = _data(3, 400, seed=5)
    params = Hyperparameters(N=800)

    def trained():
        m = Model("kacs", 3, params)
        m.train(X, y, 3000, 7)
        return m

    a, b = trained(), trained()
    ra = a.refine(X, y, seed=11, max_iter=300, pull=1e-4, validation=0.25)
    rb = b.refine(X, y, seed=11, max_iter=300, pull=1e-4, validation=0.25)
    assert np.array_equal(a.pop.weights.w, b.pop.weights.w) and ra == rb.__class__(
        **{**rb.__dict__, "seconds": ra.seconds})
    # The kept weights are those of iteration best_iteration of a fit on the fitted rows
    # alone: the same L-BFGS-B run stopped there.
    fit_rows, valid_rows = validation_split(400, 0.25, 11)
    assert valid_rows.size == 100 and np.intersect1d(fit_rows, valid_rows).size == 0
    assert ra.validation_rows == 100 and ra.best_iteration >= 1
    c = trained()
    c.refine(X[fit_rows], y[fit_rows], seed=11, max_iter=ra.best_iteration, pull=1e-4,
             validation=0.0)
    assert np.array_equal(c.pop.weights.w, a.pop.weights.w)
    assert ra.iterations <= ra.best_iteration + PATIENCE
    assert ra.valid_mse_after <= ra.valid_mse_before
    # Another seed holds out other rows.
    assert not np.array_equal(validation_split(400, 0.25, 12)[1], valid_rows)


def test_refinement_and_compaction_run_on_one_blas_thread_whatever_the_caller_has(monkeypatch):
    # A campaign's workers have one BLAS thread (joblib's loky gives them cores // jobs); the
    # estimators, `kacs fit` and `--jobs 1` run in a process with all of them, where a second
    # thread beside a busy core made L-BFGS-B up to 100 times slower.
    from threadpoolctl import threadpool_info, threadpool_limits

    import kacs_cli.engine.refine as refine_module

    seen = []
    real = refine_module.minimize

    def watching(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(refine_module, "minimize", watching)
    X, y = _data(2, 200, seed=6)
    m = Model("kacs", 2, Hyperparameters(N=400))
    m.train(X, y, 2000, 1)
    def blas_threads():
        return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    with threadpool_limits(limits=2, user_api="blas"):
        callers = blas_threads()
        m.refine(X, y, seed=0)
        m.compact(X, y, seed=0, method="piecewise")
        assert blas_threads() == callers  # given back as it was
    assert seen == [1, 1]


def test_a_refined_run_keeps_the_evolved_metrics_bit_for_bit():
    X, y = _data(2, 300, seed=8)
    Xt, yt = _data(2, 60, seed=9)
    plain = train_run("kacs", X, y, Xt, yt, params=Hyperparameters(N=600), iterations=4000,
                      eval_every=2000, seed=3)
    refined = train_run("kacs", X, y, Xt, yt, params=Hyperparameters(N=600, refinement=True),
                        iterations=4000, eval_every=2000, seed=3)
    for key in ("train_mae", "test_mae", "train_mse", "test_mse", "aic"):
        assert refined.final[f"evolved_{key}"] == plain.final[key]
    assert refined.final["rules"] == plain.final["rules"]
    assert refined.final["params"] == plain.final["params"]
    assert refined.final["train_mse"] < plain.final["train_mse"]
    assert refined.curve.equals(plain.curve)
    assert refined.final["refine_iterations"] >= 1 and refined.final["refine_seconds"] > 0


def test_refinement_settings_are_checked_with_one_wording_everywhere():
    with pytest.raises(UserError, match="refine_validation = 1.5 is invalid"):
        Hyperparameters(refine_validation=1.5)
    # The estimator's constructor arguments are checked against the same declared range, in
    # scikit-learn's words (its _parameter_constraints).
    with pytest.raises(UserError, match=r"'refine_max_iter' parameter of KACSRegressor must be an int in the range "
                                        r"\[1, inf\)\. Got 0 instead"):
        KACSRegressor(refine_max_iter=0).fit(*_data(2, 30))
    X, y = _data(2, 50)
    with pytest.raises(UserError, match="refinement exists only for KACS"):
        XCSFRegressor(n_iter=200, N=100).fit(X, y).refine(X, y)
    with pytest.raises(UserError, match="refine_pull = -1.0 is invalid"):
        KACSRegressor(n_iter=200, N=100).fit(X, y).refine(X, y, pull=-1.0)
    # As hyperparameters they appear in resolved configs only when in use.
    assert "refinement" not in Hyperparameters().as_dict()
    assert Hyperparameters(refinement=True).as_dict()["refine_pull"] == 1e-5
    assert "input_transform" not in Hyperparameters().as_dict()


def test_the_estimator_refines_after_fit_and_on_demand(tmp_path):
    X, y = _data(3, 300, seed=2)
    base = KACSRegressor(n_iter=3000, N=600, random_state=1).fit(X, y)
    refined = KACSRegressor(n_iter=3000, N=600, random_state=1, refinement=True).fit(X, y)
    later = KACSRegressor(n_iter=3000, N=600, random_state=1).fit(X, y).refine(X, y)
    assert np.array_equal(refined.predict(X), later.predict(X))
    assert refined.score(X, y) > base.score(X, y)
    assert refined.n_rules_ == base.n_rules_
    path = refined.save(tmp_path / "r.kacs")
    assert np.array_equal(load(path).predict(X), refined.predict(X))


# --------------------------------------------------------------------------- input transform


def test_the_quantile_transform_spreads_a_skewed_column_and_puts_levels_at_mid_ranks():
    skewed = np.array([0.0, 0.001, 0.002, 0.004, 1.0])[:, None]
    t = InputTransform.fit("quantile", skewed)
    assert np.allclose(t.apply(skewed)[:, 0], [0, 0.25, 0.5, 0.75, 1])
    # Three levels of four rows each: scikit-learn pins the train minimum and maximum to 0
    # and 1; the middle level, ranks 4-7 of 0..11, goes to its mid-rank 5.5 / 11.
    levels = np.array([0.0] * 4 + [0.5] * 4 + [1.0] * 4)[:, None]
    out = InputTransform.fit("quantile", levels).apply(levels)[:, 0]
    assert np.allclose(out, [0.0] * 4 + [5.5 / 11] * 4 + [1.0] * 4)
    # Beyond the train range: clipped to the ends; minmax is the identity.
    assert np.array_equal(t.apply(np.array([[-1.0], [2.0]]))[:, 0], [0.0, 1.0])
    assert InputTransform.fit("minmax", skewed).apply(skewed) is skewed


def test_the_input_transform_round_trips_through_model_files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((250, 3)) ** 4
    y = np.log1p(50 * X[:, 0]) + X[:, 1]
    est = KACSRegressor(n_iter=2000, N=500, input_transform="quantile").fit(X, y)
    assert np.array_equal(est.scale_inputs(X), InputTransform.fit(
        "quantile", (X - X.min(0)) / (X.max(0) - X.min(0))).apply(
        (X - X.min(0)) / (X.max(0) - X.min(0))))
    path = est.save(tmp_path / "q.kacs")
    again = load(path)
    assert again.input_transform_.name == "quantile"
    Xn = rng.random((40, 3))
    assert np.array_equal(again.predict(Xn), est.predict(Xn))
    with pytest.raises(UserError, match="'input_transform' parameter of KACSRegressor must be a str among"):
        KACSRegressor(input_transform="rank").fit(X, y)


# --------------------------------------------------------------------------- configs and CLI


CAMPAIGN = """experiment: refined
methods: {kacs: null, kacs-refined: {method: kacs, refinement: true},
          kacs-quantile-refined: {method: kacs, input_transform: quantile, refinement: true}}
benchmarks:
  - {name: f1, n: 2, samples: 120, variant: skewed, label: f1-skewed}
  - {name: f4, n: 2, samples: 120, variant: discrete, label: f4-discrete}
protocol: {name: main, runs: 2}
iterations: 2000
eval_every: 1000
"""


@pytest.mark.slow
def test_a_refined_variant_records_both_errors_and_only_its_rows_carry_them(capsys, tmp_path):
    import pandas as pd

    from cli_support import run_kacs

    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN)
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out", "--jobs", 1)
    assert code == 0, err
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert len(runs) == 12
    plain = runs[runs.method == "kacs"].set_index(["benchmark", "run"])
    refined = runs[runs.method == "kacs-refined"].set_index(["benchmark", "run"])
    # The refined variant's evolution is the plain run itself.
    for key in ("train_mae", "test_mae", "train_mse", "test_mse", "aic"):
        assert refined[f"evolved_{key}"].equals(plain[key].rename(f"evolved_{key}"))
    assert refined["rules"].equals(plain["rules"])
    assert (refined["train_mse"] < plain["train_mse"]).all()
    assert plain["evolved_test_mae"].isna().all() and plain["refine_iterations"].isna().all()
    resolved = (tmp_path / "out" / "config.yaml").read_text()
    assert "input_transform: quantile" in resolved and "refinement: true" in resolved
    # The report's refinement table has every labelled cell (f1-skewed is benchmark f1).
    code, _, err = run_kacs(capsys, "report", tmp_path / "out", "--no-figures")
    assert code == 0, err
    table = pd.read_csv(tmp_path / "out" / "report" / "refined_refinement.csv")
    assert table[["cell", "method", "runs"]].values.tolist() == [
        ["f1 skewed", "kacs-refined", 2], ["f1 skewed", "kacs-quantile-refined", 2],
        ["f4 discrete", "kacs-refined", 2], ["f4 discrete", "kacs-quantile-refined", 2]]
    first = refined.loc[("f1-skewed", 0)], refined.loc[("f1-skewed", 1)]
    assert table.loc[0, "refined_mean"] == pytest.approx((first[0]["test_mae"] + first[1]["test_mae"]) / 2)
    # Resumed from runs.csv alone, the folder's rows come back unchanged.
    before = (tmp_path / "out" / "runs.csv").read_bytes()
    for folder in ("runs", "curves", "populations"):
        import shutil

        shutil.rmtree(tmp_path / "out" / folder)
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out", "--jobs", 1)
    assert code == 0, err
    assert (tmp_path / "out" / "runs.csv").read_bytes() == before


@pytest.mark.parametrize("methods, message", [
    ("{xcsf-refined: {method: xcsf, refinement: true}}",
     "methods.xcsf-refined.refinement: refinement exists only for KACS"),
    ("{kacs-r: {method: kacs, input_transform: rank}}",
     "methods.kacs-r.input_transform: must be one of minmax, quantile, got 'rank'"),
    ("{kacs-r: {method: kacs, refinement: true, refine_validation: 1.0}}",
     "methods.kacs-r.refine_validation: the validation fraction of the train rows must lie in [0, 1)"),
])
def test_bad_refinement_settings_in_a_config_are_one_line_and_exit_2(capsys, tmp_path, methods, message):
    from cli_support import run_kacs

    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN.replace(CAMPAIGN.splitlines()[1] + "\n" + CAMPAIGN.splitlines()[2],
                                       f"methods: {methods}"))
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_kacs_fit_refines_and_transforms_and_refuses_bad_options(capsys, tmp_path):
    from cli_support import run_kacs

    rng = np.random.default_rng(4)
    X = rng.random((200, 2)) ** 4
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, np.sqrt(X[:, 0]) + X[:, 1]]), delimiter=",")
    out = tmp_path / "m.kacs"
    code, text, err = run_kacs(capsys, "fit", data, "--out", out, "-n", 2000, "--refine",
                               "--input-transform", "quantile")
    assert code == 0, err
    assert "inputs quantile, refined (" in " ".join(text.split())
    model = load(out)
    assert model.input_transform_.name == "quantile" and model.refinement
    for argv, message in [
        (("--refine", "--method", "xcsf"), "--refine: refinement exists only for KACS, not XCSF"),
        (("--refine", "--refine-validation", "1.5"), "refine_validation = 1.5 is invalid"),
        (("--input-transform", "rank"), "input_transform = 'rank' is invalid"),
        (("--passes", "0"), "--passes must be a number > 0, got 0"),
        (("--passes", "nan"), "--passes must be a number > 0, got nan"),
    ]:
        code, _, err = run_kacs(capsys, "fit", data, "--out", tmp_path / "x.kacs", "-n", 200, *argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "x.kacs").exists()


def test_a_budget_in_passes_follows_the_number_of_rows(capsys, tmp_path):
    from cli_support import run_kacs

    rng = np.random.default_rng(5)
    X = rng.random((120, 2))
    y = X[:, 0] - X[:, 1]
    # 2.5 passes over 120 rows are ceil(300) iterations: the same model as n_iter=300.
    by_passes = KACSRegressor(n_passes=2.5, N=300, random_state=3).fit(X, y)
    by_count = KACSRegressor(n_iter=300, N=300, random_state=3).fit(X, y)
    assert by_passes.iterations_done_ == 300
    assert np.array_equal(by_passes.predict(X), by_count.predict(X))
    assert KACSRegressor(n_passes=0.001, N=300).fit(X, y).iterations_done_ == 1
    for bad in (0, -1.0, float("inf"), True, "5"):  # a bool is a number to scikit-learn, not here
        with pytest.raises(UserError, match=r"n_passes.* must be a (float in the range \(0\.0, inf\)|number > 0)"):
            KACSRegressor(n_passes=bad).fit(X, y)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    code, text, err = run_kacs(capsys, "fit", data, "--out", tmp_path / "m.kacs", "--passes", 2.5)
    assert code == 0, err
    assert "120 rows x 2 inputs, 300 iterations" in " ".join(text.split())
    assert load(tmp_path / "m.kacs").n_passes == 2.5


def test_the_report_refuses_a_damaged_refinement_cell(capsys, tmp_path):
    from cli_support import run_kacs

    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN.replace("runs: 2", "runs: 1"))
    assert run_kacs(capsys, "run", config, "--out", tmp_path / "out", "--jobs", 1)[0] == 0
    path = tmp_path / "out" / "runs.csv"
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    column = header.index("evolved_test_mae")
    row = next(i for i, line in enumerate(lines) if ",kacs-refined," in line)
    cells = lines[row].split(",")
    cells[column] = "abc"
    lines[row] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_kacs(capsys, "report", tmp_path / "out", "--no-figures")
    assert code == 2 and f"runs.csv:{row + 1}: evolved_test_mae is 'abc'" in err


# ---------------------------------------------------------------- the smoothness penalty


def _grid_values(model, q, p, grid):
    """psi_{q,p} at the grid points through the engine's own prediction (the other inputs at 0.5)."""
    X = np.full((grid.size, model.n), 0.5)
    X[:, p] = grid
    psihat, _, _, _ = model.predict_components(X)
    return psihat[:, q, p]


def test_the_roughness_is_the_second_differences_of_the_learned_functions():
    from kacs_cli.engine.refine import SMOOTH_GRID, roughness_matrix

    # The second inner rule leaves [0.6, 0.7] covered by one rule only and (0.9, 1] uncovered:
    # a jump inside the function, and a part where psi is 0 and no second difference is taken.
    model = _hand_built(2, [(0.0, 0.7, 0.7), (0.6, 0.9, 0.2)], [(-50.0, 50.0, 0.5)], seed=2)
    X, _ = _data(2, 40)
    P, n_q = model.n_rules, 5
    w = model.pop.weights.w[:P]
    R = roughness_matrix(model.pop, 2, n_q, X, w)
    grid = np.linspace(0.0, 1.0, SMOOTH_GRID)
    covered = grid <= 0.9
    expected = []
    for q in range(n_q):
        for p in range(2):
            f = _grid_values(model, q, p, grid)
            for j in range(1, SMOOTH_GRID - 1):
                if covered[j - 1] and covered[j] and covered[j + 1]:
                    expected.append((f[j - 1] - 2 * f[j] + f[j + 1]) / np.sqrt(SMOOTH_GRID))
    inner_rows = len(expected)
    got = (R @ w.ravel())[:inner_rows]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # Each outer function is one line over its whole grid: no roughness.
    np.testing.assert_allclose((R @ w.ravel())[inner_rows:], 0.0, atol=1e-12)
    assert R.shape[0] == inner_rows + n_q * (SMOOTH_GRID - 2)


def test_the_smoothness_penalty_and_its_gradient_match_finite_differences():
    from kacs_cli.engine.refine import roughness_matrix

    model = _smooth_model()
    X, y = _data(2, 60)
    P = model.n_rules
    w0 = model.pop.weights.w[:P].ravel().copy()
    R = roughness_matrix(model.pop, 2, 5, X, model.pop.weights.w[:P])
    plain = Objective(model.pop, 2, 5, design(model.pop, X, y, 2, 5), 0.0, w0)
    smooth = Objective(model.pop, 2, 5, design(model.pop, X, y, 2, 5), 0.0, w0, smoothness=3.0, roughness=R)
    loss, grad = smooth(w0)
    assert loss == pytest.approx(plain(w0)[0] + 1.5 * float(np.sum((R @ w0) ** 2)), rel=1e-12)
    numeric = central_differences(lambda w: smooth(w)[0], w0)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_a_stronger_smoothness_leaves_smoother_functions():
    from kacs_cli.engine.refine import roughness_matrix

    X, y = _data(2, 200, seed=6)
    y = y + 0.3 * np.random.default_rng(6).normal(size=200)
    base = Model("kacs", 2, Hyperparameters(N=300, P_hash=0.5))
    base.train(X, y, 3000, 1)
    rough = []  # each refined model's roughness, on the grids of the evolved one
    for mu in (0.0, 1.0, 30.0):
        model = copy.deepcopy(base)
        model.params = model.params.with_overrides(refine_smoothness=mu)
        model.refine(X, y, seed=0, max_iter=200, pull=1e-5, validation=0.0)
        P = model.n_rules
        R = roughness_matrix(base.pop, 2, 5, X, base.pop.weights.w[:P])
        w = model.pop.weights.w[:P].ravel()
        rough.append(float(np.sum((R @ w) ** 2)))
    assert rough[0] > rough[1] > rough[2]


def test_beyond_the_row_cap_the_refinement_fits_a_seeded_sample(monkeypatch):
    from kacs_cli.engine import refine, row_caps

    X, y = _data(2, 300, seed=8)
    base = Model("kacs", 2, Hyperparameters(N=200))
    base.train(X, y, 2000, 1)
    monkeypatch.setattr(row_caps, "REFINE_MAX_ROWS", 120)
    capped = copy.deepcopy(base)
    result = capped.refine(X, y, seed=3, max_iter=50, pull=1e-5, validation=0.0)
    # The same as refining the sample itself with the cap out of the way.
    sample = np.sort(np.random.default_rng([3, refine._SAMPLE_STREAM]).choice(300, 120, replace=False))
    monkeypatch.setattr(row_caps, "REFINE_MAX_ROWS", 10**9)
    direct = copy.deepcopy(base)
    direct.refine(X[sample], y[sample], seed=3, max_iter=50, pull=1e-5, validation=0.0)
    assert np.array_equal(capped.pop.weights.w[:capped.n_rules], direct.pop.weights.w[:direct.n_rules])
    assert result.iterations > 0


@pytest.mark.parametrize("build, error, message", [
    (lambda X, y: XCSFRegressor(n_iter=200, N=100, refinement=True), TypeError,
     "unexpected keyword argument 'refinement'"),
    (lambda X, y: XCSFRegressor(n_iter=200, N=100, compaction="piecewise").fit(X, y), UserError,
     "The 'compaction' parameter of XCSFRegressor must be a str among"),
    (lambda X, y: Model("xcsf", 2, Hyperparameters(refinement=True)), UserError, "refinement exists only for KACS"),
    (lambda X, y: Model("xcsf", 2, Hyperparameters(compaction="piecewise")), UserError,
     "XCSF models have no compaction 'piecewise'"),
])
def test_what_xcsf_cannot_do_after_training_is_refused_before_it(monkeypatch, build, error, message):
    from kacs_cli.engine import train

    def no_training(*args, **kwargs):
        raise AssertionError("trained before refusing")

    monkeypatch.setattr(train.Model, "train", no_training)
    X, y = _data(2, 50)
    with pytest.raises(error, match=message):
        build(X, y)
