"""Sample weights (docs/algorithm.md section 12, "Sample weights"): a zero weight removes its
row exactly, equal weights are no weights, integer weights are repeated rows, and every step
that sees all rows at once weighs them; bad weights are one line."""

import copy

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import r2_score

from cli_support import run_kacs
from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine.bagging import member_rows
from kacs_cli.engine.compaction import piecewise
from kacs_cli.engine.refine import Objective, design, refine_weights
from kacs_cli.engine.weights import EXPANSION_LIMIT, WeightedOrder, copies
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.runner import run_campaign

LEARNERS = {"kacs": KACSRegressor, "xcsf": XCSFRegressor}
# Small budgets: what is compared is bit identity, which does not depend on the budget.
SMALL = dict(n_iter=1500, N=300)
# Every step a fit can take after evolution, per learner (the capacity search's candidates
# and the bags are fits too).
SETTINGS = {
    "kacs": [{}, {"refinement": True, "compaction": "piecewise", "refine_max_iter": 30},
             {"capacity": "search", "capacity_max": 600, "refinement": True, "refine_max_iter": 20},
             {"bags": 2}],
    "xcsf": [{}, {"compaction": "closest"}, {"capacity": "search", "capacity_max": 600}, {"bags": 2}],
}
CASES = [(m, s) for m in LEARNERS for s in SETTINGS[m]]
IDS = [f"{m}-{'+'.join(s) or 'plain'}" for m, s in CASES]


def _data(rows=60, n=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n)) * 4.0 - 1.0
    y = np.sin(2.0 * X[:, 0]) + X[:, 1] ** 2
    return X, y


def _same_model(a, b):
    X, _ = _data(200, n=a.n_features_in_, seed=9)
    assert np.array_equal(a.predict(X), b.predict(X))
    pd.testing.assert_frame_equal(a.rules_, b.rules_)


# ----------------------------------------------------------------------------- exact equalities


@pytest.mark.parametrize("method, settings", CASES, ids=IDS)
def test_a_zero_weight_removes_its_row_exactly(method, settings):
    X, y = _data()
    # The removed rows hold the extremes of X and y: kept, they would move the scaling.
    X[3] = [9.0, -9.0]
    y[7] = 50.0
    weight = np.ones(len(y))
    weight[[3, 7, 20, 41]] = 0.0
    weight[[5, 6]] = 2.5                                   # the rows left are weighted
    keep = weight > 0
    cls = LEARNERS[method]
    weighted = cls(**SMALL, **settings).fit(X, y, sample_weight=weight)
    reduced = cls(**SMALL, **settings).fit(X[keep], y[keep], sample_weight=weight[keep])
    _same_model(weighted, reduced)
    assert weighted.x_max_[0] < 9.0 and weighted.y_max_ < 50.0


@pytest.mark.parametrize("method, settings", CASES, ids=IDS)
def test_equal_weights_are_the_unweighted_fit(method, settings):
    X, y = _data()
    cls = LEARNERS[method]
    plain = cls(**SMALL, **settings).fit(X, y)
    for weight in (np.ones(len(y)), np.full(len(y), 0.37), [3] * len(y), 2.0):
        _same_model(cls(**SMALL, **settings).fit(X, y, sample_weight=weight), plain)
    # Zeros and otherwise equal weights: the unweighted fit on the rows left.
    ones = np.ones(len(y))
    ones[::5] = 0.0
    _same_model(cls(**SMALL, **settings).fit(X, y, sample_weight=7.0 * ones),
                cls(**SMALL, **settings).fit(X[ones > 0], y[ones > 0]))


@pytest.mark.parametrize("method", LEARNERS)
@pytest.mark.parametrize("reshuffle", [False, True], ids=["repeated-epochs", "article_reshuffle"])
def test_integer_weights_are_the_rows_repeated_draw_for_draw(method, reshuffle):
    """The weighted order visits the rows that the same seed visits on np.repeat(X, w):
    the models are identical, under both training-order semantics."""
    X, y = _data(50, n=3)
    y = y / np.abs(y).max()
    weight = np.random.default_rng(4).integers(1, 4, len(y)).astype(float)
    params = Hyperparameters(N=300, article_reshuffle=reshuffle)
    weighted, repeated = Model(method, 3, params), Model(method, 3, params)
    weighted.train(X, y, 2500, 11, weight=weight)              # 2500 iterations: about 25 epochs
    repeated.train(np.repeat(X, weight.astype(int), axis=0), np.repeat(y, weight.astype(int)), 2500, 11)
    assert np.array_equal(weighted.predict(X), repeated.predict(X))
    pd.testing.assert_frame_equal(weighted.population_frame(), repeated.population_frame())
    # The same through the estimator (the scaling of repeated rows is the rows' own).
    w = weight.astype(int)
    _same_model(LEARNERS[method](**SMALL).fit(X, y, sample_weight=w),
                LEARNERS[method](**SMALL).fit(np.repeat(X, w, axis=0), np.repeat(y, w)))


def test_the_expansion_is_the_repeats_and_fractions_are_rounded_without_bias():
    # Whole copies: the smallest weight is one copy, only the ratios matter.
    assert copies(np.array([1.0, 3.0, 2.0]), 0).tolist() == [1, 3, 2]
    assert copies(np.array([0.5, 1.5, 1.0]), 0).tolist() == [1, 3, 2]
    order = WeightedOrder(np.array([2.0, 1.0, 3.0]), 0, False)
    assert order.expansion.tolist() == [0, 0, 1, 2, 2, 2]
    # Fractions: 1.25 copies is 1 or 2, 1.25 on average over seeds.
    counts = np.array([copies(np.array([1.0, 1.25]), s)[1] for s in range(4000)])
    assert set(counts) == {1, 2} and abs(counts.mean() - 1.25) < 0.03  # SE 0.007
    # A ratio beyond EXPANSION_LIMIT: the epoch is capped at that many copies per row, and a
    # light row appears with the probability its share asks for.
    weight = np.array([1.0] + [1e6] * 9)
    drawn = np.array([copies(weight, s) for s in range(2000)])
    assert drawn.sum(axis=1).max() <= EXPANSION_LIMIT * 10 + 10
    expected = EXPANSION_LIMIT * 10 / (1.0 + 9e6)
    assert drawn[:, 0].mean() == pytest.approx(expected, abs=0.01)


# ----------------------------------------------------------------------------- within run-to-run noise


@pytest.mark.parametrize("method", LEARNERS)
def test_integer_weights_act_as_repeated_rows_placed_anywhere(method):
    """Every input point appears twice, with y = f + 0.5 and y = f - 0.5; weight 3 on the
    first copy makes the fitted function f + 0.25 (the weighted mean of the two), as three
    copies of it appended at the end of the data do, while unweighted rows give f.

    The offset mean(prediction - f) over test points measures it; it averages the
    approximation error out. Over 4 seeds its run-to-run spread is at most 0.08 (measured:
    standard deviation per seed 0.005-0.08), so the weighted and the repeated fits agree
    within 0.1, each lies within 0.1 of 0.25, and the unweighted one below 0.1: the test fails
    if the weights did nothing (offset 0) or acted otherwise than as repeats."""
    rng = np.random.default_rng(0)
    Xb = rng.random((100, 2))

    def f(X):
        return np.sin(3.0 * X[:, 0]) + X[:, 1]

    X = np.vstack([Xb, Xb])
    y = np.concatenate([f(Xb) + 0.5, f(Xb) - 0.5])
    weight = np.concatenate([np.full(100, 3.0), np.ones(100)])
    X_rep, y_rep = np.vstack([X, Xb, Xb]), np.concatenate([y, f(Xb) + 0.5, f(Xb) + 0.5])
    X_test = rng.random((500, 2))
    cls = LEARNERS[method]

    def offset(A, b, sample_weight=None):
        return np.mean([np.mean(cls(n_iter=10_000, random_state=s).fit(A, b, sample_weight=sample_weight)
                                .predict(X_test) - f(X_test)) for s in range(4)])

    weighted, repeated, plain = offset(X, y, weight), offset(X_rep, y_rep), offset(X, y)
    assert abs(weighted - repeated) < 0.1, (weighted, repeated)
    assert abs(weighted - 0.25) < 0.1 and abs(repeated - 0.25) < 0.1, (weighted, repeated)
    assert abs(plain) < 0.1, plain


# ----------------------------------------------------------------------------- steps that see all rows


def _trained_kacs(rows=80, seed=1):
    X, y = _data(rows, seed=seed)
    X = (X + 1.0) / 4.0
    y = y / np.abs(y).max()
    model = Model("kacs", 2, Hyperparameters(N=120, channels=2))
    model.train(X, y, 3000, 5)
    return model, X, y


def test_the_curve_and_final_errors_are_weighted_means():
    X, y = _data(80)
    X, y = (X + 1.0) / 4.0, y / np.abs(y).max()
    w = np.random.default_rng(2).random(80) * 3.0
    model = Model("xcsf", 2, Hyperparameters(N=200))
    curve = model.train(X[:60], y[:60], 1000, 3, X_test=X[60:], y_test=y[60:], weight=w[:60], test_weight=w[60:])
    errors = np.abs(model.predict(X) - y)
    assert curve[-1, 1] == pytest.approx(np.average(errors[:60], weights=w[:60]), rel=1e-12)
    assert curve[-1, 2] == pytest.approx(np.average(errors[60:], weights=w[60:]), rel=1e-12)
    assert curve[-1, 4] == pytest.approx(np.average(errors[60:] ** 2, weights=w[60:]), rel=1e-12)


def test_the_weighted_loss_is_the_loss_of_the_rows_repeated_and_its_gradient_is_exact():
    model, X, y = _trained_kacs()
    pop, P = model.pop, model.n_rules
    w0 = np.ascontiguousarray(pop.weights.w[:P]).ravel().copy()
    v = np.random.default_rng(3).integers(1, 4, len(y))
    weighted = Objective(pop, 2, 2, design(pop, X, y, 2, 2, v.astype(float)), 0.1, w0)
    repeated = Objective(pop, 2, 2, design(pop, np.repeat(X, v, axis=0), np.repeat(y, v), 2, 2), 0.1, w0)
    w = w0 + np.random.default_rng(4).normal(0.0, 0.05, w0.shape)
    loss, grad = weighted(w)
    loss_rep, grad_rep = repeated(w)
    assert loss == pytest.approx(loss_rep, rel=1e-12)
    assert np.allclose(grad, grad_rep, rtol=1e-10, atol=1e-14)
    # Central differences of the weighted loss along random directions.
    for k in range(5):
        d = np.random.default_rng(10 + k).normal(size=w.shape)
        h = 1e-6
        numeric = (weighted(w + h * d)[0] - weighted(w - h * d)[0]) / (2 * h)
        assert numeric == pytest.approx(float(grad @ d), rel=1e-4, abs=1e-9)


def test_weighted_refinement_minimises_the_weighted_loss():
    """Refined with weights, the model has a lower weighted MSE than refined without them. (The
    converse on the unweighted loss need not hold: the loss is not convex in the weights, and
    a refinement stops at a local minimum.)"""
    model, X, y = _trained_kacs()
    v = np.where(X[:, 0] < 0.5, 5.0, 1.0)                 # the left half counts five times
    settings = dict(max_iter=400, pull=0.0, validation=0.0, seed=0)
    with_w, without = copy.deepcopy(model), copy.deepcopy(model)
    with_w.refine(X, y, weight=v, **settings)
    without.refine(X, y, **settings)

    def mse(m, weights):
        return np.average((m.predict(X) - y) ** 2, weights=weights)

    assert mse(with_w, v) < mse(without, v)


def test_refinement_with_integer_weights_is_refinement_on_the_rows_repeated():
    """The objective and its gradient are those of the rows repeated (to rounding: the two sum
    in other orders), so L-BFGS-B refines both to the same weights, up to where its stopping
    rule cuts each path, which those last bits move."""
    model, X, y = _trained_kacs()
    v = np.random.default_rng(6).integers(1, 4, len(y))
    P = model.n_rules
    Xr, yr = np.repeat(X, v, axis=0), np.repeat(y, v)
    w0 = model.pop.weights.w[:P].ravel().copy()
    weighted = Objective(model.pop, 2, 2, design(model.pop, X, y, 2, 2, v.astype(float)), 0.01, w0)
    repeated = Objective(model.pop, 2, 2, design(model.pop, Xr, yr, 2, 2), 0.01, w0)
    for w in (w0, w0 + 0.05 * np.random.default_rng(8).normal(size=w0.size)):
        (la, ga), (lb, gb) = weighted(w), repeated(w)
        assert la == pytest.approx(lb, rel=1e-12) and np.allclose(ga, gb, rtol=1e-9, atol=1e-14)
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    refine_weights(a.pop, 2, 2, X, y, max_iter=200, pull=0.01, validation=0.0, seed=0, weight=v.astype(float))
    refine_weights(b.pop, 2, 2, Xr, yr, max_iter=200, pull=0.01, validation=0.0, seed=0)
    assert np.allclose(a.pop.weights.w[:P], b.pop.weights.w[:P], atol=1e-4)
    loss_a, loss_b = (np.average((m.predict(X) - y) ** 2, weights=v) for m in (a, b))
    assert loss_a == pytest.approx(loss_b, rel=1e-4)


def _compacted_both_ways(model, X, y, v, refit):
    """The model compacted with integer weights v, and with its rows repeated v times."""
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    ra = piecewise(a, X, y, tolerance=0.05, weight=v.astype(float), refit=refit)
    rb = piecewise(b, np.repeat(X, v, axis=0), np.repeat(y, v), tolerance=0.05, refit=refit)
    assert ra.rules_after == rb.rules_after
    return a, b


def check_compaction_with_integer_weights_is_that_of_the_rows_repeated(model, X, y, grid):
    """The pieces are the same functions (the weighted mean and fit of a piece are those of
    the rows repeated); the refit then minimises the same loss, by an iterative method whose
    path the two ways of summing move in the last bits: equal losses within 1e-3."""
    v = np.random.default_rng(7).integers(1, 4, len(y))
    a, b = _compacted_both_ways(model, X, y, v, refit=False)
    np.testing.assert_allclose(a.predict(grid), b.predict(grid), rtol=0, atol=1e-12)
    a, b = _compacted_both_ways(model, X, y, v, refit=True)

    def loss(m):
        return np.average((m.predict(X) - y) ** 2, weights=v)

    assert loss(a) == pytest.approx(loss(b), rel=1e-3)
    return a


def test_piecewise_compaction_with_integer_weights_is_compaction_of_the_rows_repeated():
    model, X, y = _trained_kacs()
    grid = np.random.default_rng(8).random((300, 2))
    a = check_compaction_with_integer_weights_is_that_of_the_rows_repeated(model, X, y, grid)
    # And the weights matter: unweighted, the pieces' lines differ.
    c = copy.deepcopy(model)
    piecewise(c, X, y, tolerance=0.05)
    assert not np.allclose(a.predict(grid), c.predict(grid), atol=1e-6)


def test_a_weighted_bootstrap_draws_rows_in_proportion_to_their_weight():
    weight = np.ones(200)
    weight[:20] = 10.0                                     # 200 of the 380 units of weight
    drawn = np.concatenate([member_rows(200, k, 0, weight) for k in range(50)])
    share = np.mean(drawn < 20)
    assert share == pytest.approx(200 / 380, abs=0.02)     # SE 0.005 over 10,000 draws
    # Without weights the bootstrap is the uniform one it always was.
    uniform = np.sort(np.random.default_rng([0, 0x62616773, 3]).integers(0, 200, 200))
    assert np.array_equal(member_rows(200, 3, 0), uniform)


# ----------------------------------------------------------------------------- the estimator's API


def test_partial_fit_weighs_its_batch_like_fit():
    X, y = _data(80)
    weight = np.where(np.arange(80) % 4 == 0, 0.0, 1.0)
    keep = weight > 0
    a = KACSRegressor(N=300).partial_fit(X, y, sample_weight=weight).partial_fit(X, y, sample_weight=weight)
    b = KACSRegressor(N=300).partial_fit(X[keep], y[keep]).partial_fit(X[keep], y[keep])
    _same_model(a, b)
    assert a.iterations_done_ == 2 * keep.sum()


def test_score_is_the_weighted_r2():
    X, y = _data(80)
    weight = np.random.default_rng(1).random(80)
    est = XCSFRegressor(**SMALL).fit(X, y)
    assert est.score(X, y, sample_weight=weight) == pytest.approx(r2_score(y, est.predict(X), sample_weight=weight))


@pytest.mark.parametrize("weight, words", [
    (np.r_[-1.0, np.ones(59)], "negative value -1 (row 0)"),
    (np.r_[np.ones(59), np.nan], "non-finite value nan (row 59)"),
    (np.r_[np.ones(30), np.inf, np.ones(29)], "non-finite value inf (row 30)"),
    (np.ones(59), "60 values, got shape (59,)"),
    (np.ones((60, 2)), "60 values, got shape (60, 2)"),
    (np.zeros(60), "zero on every row"),
    (["a"] * 60, "must be numbers"),
])
def test_bad_weights_are_one_line_naming_sample_weight(weight, words):
    X, y = _data()
    with pytest.raises(UserError) as info:
        KACSRegressor(**SMALL).fit(X, y, sample_weight=weight)
    message = str(info.value)
    assert message.startswith("sample_weight ") and words in message and "\n" not in message


# ----------------------------------------------------------------------------- front ends


def _weighted_csv(path, weight):
    X, y = _data(len(weight))
    np.savetxt(path, np.column_stack([X[:, 0], weight, X[:, 1], y]), delimiter=",")
    return X, y


def test_kacs_fit_takes_the_weight_column_as_the_estimator_takes_sample_weight(tmp_path, capsys):
    weight = np.tile([0.0, 1.0, 2.0, 3.0], 15)
    X, y = _weighted_csv(tmp_path / "d.csv", weight)
    code, out, err = run_kacs(capsys, "fit", tmp_path / "d.csv", "-o", tmp_path / "m.kacs", "-n", 1500,
                              "--N", 300, "--weight-column", 1)
    assert code == 0, err
    assert "2 inputs, weighted by column 1 (15 rows of weight 0 left out)" in out
    saved = KACSRegressor.load(tmp_path / "m.kacs")
    direct = KACSRegressor(n_iter=1500, N=300, P_hash=0.8).fit(X, y, sample_weight=weight)
    assert np.array_equal(saved.predict(X), direct.predict(X))


@pytest.mark.parametrize("column, weight, words", [
    ("3", np.ones(60), "column 3 is the target (the last column)"),
    ("4", np.ones(60), "has 4 columns (0 to 3, the target last); the weight column 4 is not one of them"),
    ("w", np.ones(60), "--weight-column must be the 0-based index"),
    ("1", np.r_[np.ones(9), -2.0, np.ones(50)], "the weight column 1 holds the negative value -2 (row 10)"),
    ("1", np.zeros(60), "the weight column 1 is zero on every row"),
])
def test_kacs_fit_refuses_a_bad_weight_column_in_one_line(tmp_path, capsys, column, weight, words):
    _weighted_csv(tmp_path / "d.csv", weight)
    code, out, err = run_kacs(capsys, "fit", tmp_path / "d.csv", "-o", tmp_path / "m.kacs", "--weight-column", column)
    assert code == 2 and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "m.kacs").exists()


def test_a_text_weight_column_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("".join(f"{i},{'x' if i == 4 else 1},{i % 3}\n" for i in range(12)))
    code, _, err = run_kacs(capsys, "fit", tmp_path / "d.csv", "-o", tmp_path / "m.kacs", "--weight-column", 1)
    assert code == 2 and "non-numeric value 'x'" in err and err.count("\n") == 1, err


def test_a_campaign_cell_with_zero_weights_is_the_cell_without_those_rows(tmp_path):
    """weights: 1 with values 0 and 1 gives, run for run, the numbers of the file without the
    rows of weight 0 and without the weight column: the rows go before the split."""
    weight = np.tile([1.0, 1.0, 0.0, 1.0], 20)
    X, y = _weighted_csv(tmp_path / "w.csv", weight)
    keep = weight > 0
    np.savetxt(tmp_path / "plain.csv", np.column_stack([X[keep], y[keep]]), delimiter=",")
    raw = {"experiment": "w", "methods": ["kacs", "xcsf", "ridge"], "hyperparameters": {"N": 200},
           "benchmarks": [{"path": str(tmp_path / "w.csv"), "weights": 1, "label": "cell"}],
           "protocol": {"name": "main", "runs": 2}, "iterations": 600, "eval_every": 300}
    run_campaign(resolve_config(raw), tmp_path / "a", jobs=1)
    raw["benchmarks"] = [{"path": str(tmp_path / "plain.csv"), "label": "cell"}]
    run_campaign(resolve_config(raw), tmp_path / "b", jobs=1)
    columns = [c for c in pd.read_csv(tmp_path / "a" / "runs.csv").columns if c != "seconds"]
    a, b = (pd.read_csv(tmp_path / d / "runs.csv")[columns] for d in ("a", "b"))
    pd.testing.assert_frame_equal(a, b)
    assert (a["samples"] == keep.sum()).all() and (a["n"] == 2).all()


def test_a_weighted_campaign_cell_reports_weighted_errors(tmp_path):
    weight = np.tile([1.0, 4.0], 30)
    _weighted_csv(tmp_path / "w.csv", weight)
    raw = {"experiment": "w", "methods": ["ridge"],
           "benchmarks": [{"path": str(tmp_path / "w.csv"), "weights": 1}],
           "protocol": {"name": "main", "runs": 1}}
    config = resolve_config(raw)
    run_campaign(config, tmp_path / "a", jobs=1)
    row = pd.read_csv(tmp_path / "a" / "runs.csv").iloc[0]
    # The ridge of that run, refitted with the weights and measured by hand.
    from sklearn.linear_model import Ridge

    from kacs_cli.experiments.data.protocols import make_split
    from kacs_cli.experiments.campaign.execution import load_cell_rows
    X, y, w = load_cell_rows(config.cells[0])
    split = make_split(X, y, config.protocol, 0, config.protocol.train_fraction)
    fitted = Ridge().fit(split.X_train, split.y_train, sample_weight=w[split.train_index])
    test_w = w[split.test_index]
    assert row["test_mae"] == pytest.approx(np.average(np.abs(fitted.predict(split.X_test) - split.y_test),
                                                       weights=test_w), rel=1e-12)


# ----------------------------------------------------------------------------- with missing and categorical inputs


def _with_missing(X, seed=11):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < 0.15] = np.nan
    return X


def test_the_weighted_loss_with_missing_inputs_is_the_loss_of_the_rows_repeated():
    """NaN rows fall in the design's missing cells, and their weights count there as anywhere."""
    model, X, y = _trained_kacs()
    X = _with_missing(X)
    pop, P = model.pop, model.n_rules
    w0 = np.ascontiguousarray(pop.weights.w[:P]).ravel().copy()
    v = np.random.default_rng(3).integers(1, 4, len(y))
    rows = design(pop, X, y, 2, 2, v.astype(float))
    assert rows.cell_missing.any()
    weighted = Objective(pop, 2, 2, rows, 0.1, w0)
    repeated = Objective(pop, 2, 2, design(pop, np.repeat(X, v, axis=0), np.repeat(y, v), 2, 2), 0.1, w0)
    w = w0 + np.random.default_rng(4).normal(0.0, 0.05, w0.shape)
    loss, grad = weighted(w)
    assert loss == pytest.approx(repeated(w)[0], rel=1e-12)
    assert np.allclose(grad, repeated(w)[1], rtol=1e-10, atol=1e-14)
    # The weighted MSE is that of the engine's prediction, which reads NaN at the centres.
    assert weighted.mse(w0) == pytest.approx(np.average((model.predict(X) - y) ** 2, weights=v), rel=1e-12)
    d = np.random.default_rng(10).normal(size=w.shape)
    h = 1e-6
    numeric = (weighted(w + h * d)[0] - weighted(w - h * d)[0]) / (2 * h)
    assert numeric == pytest.approx(float(grad @ d), rel=1e-4, abs=1e-9)


def test_piecewise_compaction_with_missing_inputs_and_integer_weights_is_that_of_the_rows_repeated():
    model, X, y = _trained_kacs()
    grid = _with_missing(np.random.default_rng(8).random((300, 2)), seed=12)
    check_compaction_with_integer_weights_is_that_of_the_rows_repeated(model, _with_missing(X), y, grid)


def _categorical_data(rows=60, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], rows).astype(object)
    x = rng.random(rows)
    y = x + np.select([colour == "red", colour == "green"], [0.0, 2.0], 1.0)
    return pd.DataFrame({"colour": colour, "x": x}), y


def test_a_zero_weight_removes_its_row_from_the_categories_too():
    X, y = _categorical_data()
    X.loc[4, "colour"] = "violet"                       # a category only a row of weight 0 holds
    y[4] = 40.0
    weight = np.tile([1.0, 2.0, 0.5], 20)
    weight[[4, 9]] = 0.0
    keep = weight > 0
    settings = dict(**SMALL, categorical_features=["colour"], refinement=True, refine_max_iter=20)
    weighted = KACSRegressor(**settings).fit(X, y, sample_weight=weight)
    reduced = KACSRegressor(**settings).fit(X[keep].reset_index(drop=True), y[keep], sample_weight=weight[keep])
    assert weighted.categories_.categories == reduced.categories_.categories
    assert "violet" not in weighted.categories_.categories[0]
    assert np.array_equal(weighted.predict(X), reduced.predict(X))


def test_categories_are_ranked_by_their_weighted_mean_target():
    from kacs_cli.scaling import CategoryMap
    cells, target = [np.array(["a", "a", "b"], dtype=object)], np.array([0.0, 10.0, 4.0])
    # Unweighted a's mean is 5 > 4; with weights 3, 1 it is 2.5 < 4.
    assert CategoryMap.fit((0,), cells, target, ["c"]).categories == [["b", "a"]]
    assert CategoryMap.fit((0,), cells, target, ["c"], np.array([3.0, 1.0, 1.0])).categories == [["a", "b"]]


def test_kacs_fit_names_the_weight_column_by_the_header_with_categorical(tmp_path, capsys):
    X, y = _categorical_data()
    weight = np.tile([0.0, 1.0, 3.0], 20)
    frame = pd.DataFrame({"colour": X["colour"], "w": weight, "x": X["x"], "y": y})
    frame.to_csv(tmp_path / "d.csv", index=False)
    models = {}
    for column in ("w", "1"):
        out = tmp_path / f"m{column}.kacs"
        code, text, err = run_kacs(capsys, "fit", tmp_path / "d.csv", "-o", out, "-n", 1500, "--N", 300,
                                   "--categorical", "colour", "--weight-column", column)
        assert code == 0, err
        assert "2 inputs, weighted by column 1 (20 rows of weight 0 left out)" in text
        assert "categorical inputs colour (3 categories)" in text
        models[column] = KACSRegressor.load(out)
    direct = KACSRegressor(n_iter=1500, N=300, P_hash=0.8, categorical_features=["colour"]).fit(
        X, y, sample_weight=weight)
    for model in models.values():
        assert np.array_equal(model.predict(X), direct.predict(X))
    code, _, err = run_kacs(capsys, "fit", tmp_path / "d.csv", "-o", tmp_path / "bad.kacs", "--categorical",
                            "colour", "--weight-column", "colour")
    assert code == 2 and "column 0 is categorical" in err and err.count("\n") == 1, err


def test_the_weights_are_checked_once_and_their_kept_rows_serve_the_categories_and_the_training(monkeypatch):
    """fit/partial_fit read sample_weight once (`_rows`): the rows it keeps are the rows the
    categories are ranked on and the rows trained on."""
    from kacs_cli.engine import weights as weights_module
    X, y = _categorical_data()
    weight = np.tile([1.0, 2.0, 0.5], 20)
    weight[[4, 9]] = 0.0
    calls = []
    original = weights_module.checked
    monkeypatch.setattr(weights_module, "checked", lambda *a, **k: calls.append(1) or original(*a, **k))
    est = KACSRegressor(**SMALL, categorical_features=["colour"])
    est._validate_params()
    rows, target, kept, categories = est._rows(X, y, reset=True, sample_weight=weight)
    assert len(calls) == 1
    keep = weight > 0
    np.testing.assert_array_equal(rows[:, 1], X["x"].to_numpy()[keep])
    np.testing.assert_array_equal(target, y[keep])
    np.testing.assert_array_equal(kept, weight[keep])
    assert categories.counts[0].sum() == keep.sum()
    # the positions are those of the map fitted on the kept rows
    np.testing.assert_array_equal(rows[:, 0], categories.positions([X["colour"].to_numpy()[keep]])[:, 0])
    # weights that weigh the kept rows alike are the unweighted path (None)
    assert est._rows(X, y, reset=True, sample_weight=np.where(keep, 2.0, 0.0))[2] is None


@pytest.mark.parametrize("bags, refinement", [(1, False), (1, True), (3, False)])
def test_aic_counts_the_rows_of_positive_weight(bags, refinement):
    """AIC = N_tr ln(train MSE) + 2 (k + 1) with N_tr the rows fitted: a row of weight 0 is not
    one of them (train_run and the bagged run alike)."""
    from kacs_cli.engine.bagging import train_bagged_run
    from kacs_cli.engine.train import train_run
    X, y = _data(rows=60)
    X, y = (X + 1.0) / 4.0, 2.0 * (y - y.min()) / (y.max() - y.min()) - 1.0  # the scale the engine trains on
    weight = np.tile([1.0, 2.0, 0.0], 20)
    params = Hyperparameters(N=200, bags=bags, refinement=refinement, refine_max_iter=10)
    if bags > 1:
        result = train_bagged_run("kacs", X, y, None, None, params=params, iterations=600, seed=0, weight=weight)
    else:
        result = train_run("kacs", X, y, None, None, params=params, iterations=600, eval_every=600, seed=0,
                           weight=weight)
    final = result.final
    fitted = int((weight > 0).sum())
    assert fitted == 40
    expected = fitted * np.log(final["train_mse"]) + 2.0 * (final["params"] + 1.0)
    assert final["aic"] == pytest.approx(expected, rel=1e-12)
    if refinement:
        evolved = fitted * np.log(final["evolved_train_mse"]) + 2.0 * (final["params"] + 1.0)
        assert final["evolved_aic"] == pytest.approx(evolved, rel=1e-12)
