"""Compaction of a KACS model (engine/compaction.py): hand-built populations whose compaction
is known, the compacted model against its own pieces, the estimator, configs and `kacs compact`."""

import numpy as np
import pandas as pd
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine.compaction import piecewise, single_winner
from kacs_cli.engine.population import S_P, S_TOTAL, set_bounds
from kacs_cli.errors import UserError


def _population(n, rules):
    """A KACS model holding exactly `rules`: (submodel, lo, hi, w0, w1, F) each."""
    model = Model("kacs", n, Hyperparameters(N=1000))
    pop = model.pop
    for i, (s, lo, hi, w0, w1, F) in enumerate(rules):
        pop.counts.sub[i] = s
        set_bounds(pop, i, 0, lo, hi)
        pop.weights.w[i] = (w0, w1)
        pop.reals.F[i] = F
        pop.counts.num[i] = 1
    pop.scal[S_P] = pop.scal[S_TOTAL] = len(rules)
    return model


def _tent_model():
    # n = 1, one channel used (submodels: inner 0 = (q 0, p 0); outer 3 = q 0). The inner
    # function is 2x on [0, 0.5) and 1 - x on (0.5, 1], each stretch made of several
    # overlapping rules with the same line (as evolution leaves them); the outer function is
    # the identity over a wide interval, drawn from two overlapping rules.
    rules = [(0, 0.0, 0.5, 0.0, 2.0, 0.3), (0, 0.1, 0.45, 0.0, 2.0, 0.9), (0, 0.0, 0.3, 0.0, 2.0, 0.2),
             (0, 0.55, 1.0, 1.0, -1.0, 0.5), (0, 0.6, 0.9, 1.0, -1.0, 0.1),
             (3, -5.0, 5.0, 0.0, 1.0, 0.4), (3, -3.0, 4.0, 0.0, 1.0, 0.7)]
    return _population(1, rules)


def test_a_function_made_of_overlapping_rules_compacts_to_its_pieces():
    model = _tent_model()
    X = np.linspace(0.0, 1.0, 101)[:, None]
    X = X[(X[:, 0] < 0.47) | (X[:, 0] > 0.57)]  # no row in the gap between the two stretches
    before = model.predict(X)
    result = piecewise(model, X, before, tolerance=1e-9, refit=False)
    frame = model.population_frame()
    inner = frame[frame.type == "inner"].sort_values("lower")
    outer = frame[frame.type == "outer"]
    # Two inner pieces (2x, then 1 - x), the boundary halfway between the rows around 0.5,
    # and the identity outer line: 3 rules where there were 7, the same predictions.
    assert result.rules_before == 7 and result.rules_after == 3 and len(inner) == 2
    assert np.allclose(inner[["w0", "w1"]].to_numpy(), [[0.0, 2.0], [1.0, -1.0]])
    assert inner.lower.iloc[0] == 0.0 and inner.upper.iloc[1] == 1.0
    boundary = (X[X < 0.5].max() + X[X > 0.5].min()) / 2
    assert inner.upper.iloc[0] == pytest.approx(boundary) and inner.lower.iloc[1] == pytest.approx(boundary)
    assert len(outer) == 1 and np.allclose(outer[["w0", "w1"]].to_numpy(), [[0.0, 1.0]])
    assert np.allclose(model.predict(X), before, atol=1e-9)


def test_a_constant_inner_function_is_folded_into_its_outer_function():
    # n = 2: input 2's inner function is the constant 0.3; channel 0's outer function is
    # z^2-like (two lines), so the constant must shift it: Phi(z + 0.3) exactly.
    rules = [(0, 0.0, 1.0, 0.0, 1.0, 1.0),            # psi_{0,0}(x) = x
             (1, 0.0, 1.0, 0.3, 0.0, 1.0),            # psi_{0,1}(x) = 0.3
             (10, -1.0, 0.8, 0.0, -1.0, 1.0),         # Phi_0: -z up to 0.8
             (10, 0.8, 2.0, -1.6, 1.0, 1.0)]          # then z - 1.6
    model = _population(2, rules)
    rng = np.random.default_rng(0)
    X = rng.random((200, 2))
    before = model.predict(X)
    result = piecewise(model, X, before, tolerance=1e-9, refit=False)
    assert result.inner_dropped == 1 and result.rules_after == 3
    frame = model.population_frame()
    assert set(zip(frame.type, frame.p)) == {("inner", 1), ("outer", 0)}
    assert np.allclose(model.predict(X), before, atol=1e-9)


def pieces_prediction(frame, Xq, m):
    """A compacted model's prediction by hand from its rules (population_frame()): within a
    submodel the pieces do not overlap (but at their shared bounds), so a row's value is the
    line of the one piece holding it, and the model is their two-stage sum over m channels."""
    def piece(sub_rules, z):
        lower, upper, w0, w1 = sub_rules.T
        hit = np.flatnonzero((lower < z) & (z < upper))
        assert len(hit) <= 1
        return 0.0 if len(hit) == 0 else w0[hit[0]] + w1[hit[0]] * z

    n = Xq.shape[1]
    # Each submodel's pieces selected once, not once per row.
    columns = ["lower", "upper", "w0", "w1"]
    inner = {(q, p): frame[(frame.type == "inner") & (frame.q == q) & (frame.p == p)][columns].to_numpy()
             for q in range(1, m + 1) for p in range(1, n + 1)}
    outer = {q: frame[(frame.type == "outer") & (frame.q == q)][columns].to_numpy() for q in range(1, m + 1)}
    expected = []
    for x in Xq:
        total = 0.0
        for q in range(1, m + 1):
            z = sum(piece(inner[q, p], x[p - 1]) for p in range(1, n + 1))
            total += piece(outer[q], z)
        expected.append(total)
    return expected


def test_the_compacted_model_predicts_what_its_pieces_say():
    X = np.random.default_rng(3).random((400, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2]
    model = Model("kacs", 3, Hyperparameters(N=1500))
    model.train(X, y, 8000, 1)
    piecewise(model, X, y, max_rules=max(1, model.n_rules // 10))
    rules = model.population_frame()
    assert len(rules) <= (1500 // 10)
    Xq = np.random.default_rng(4).uniform(0.01, 0.99, (50, 3))
    expected = pieces_prediction(rules, Xq, m=7)
    assert np.allclose(model.predict(Xq), expected, atol=1e-9)


def test_single_winner_keeps_each_rows_fittest_matching_rule():
    rules = [(0, 0.0, 0.6, 0.1, 0.0, 0.9),   # wins every row in [0, 0.6]
             (0, 0.2, 0.5, 0.7, 0.0, 0.2),   # always beaten: dropped
             (0, 0.4, 1.0, 0.3, 0.0, 0.5),   # wins (0.6, 1]
             (3, -9.0, 9.0, 0.0, 1.0, 1.0)]
    model = _population(1, rules)
    X = np.linspace(0, 1, 41)[:, None]
    result = single_winner(model, X)
    assert (result.rules_before, result.rules_after) == (4, 3)
    assert sorted(model.population_frame().w0.round(6)) == [0.0, 0.1, 0.3]


def test_closest_classifier_keeps_each_rows_nearest_centred_box():
    from kacs_cli.engine.compaction import closest_classifier

    model = Model("xcsf", 2, Hyperparameters(N=100))
    pop = model.pop
    boxes = [((0.0, 0.0), (1.0, 1.0), 0.5),     # centred at (0.5, 0.5), wide
             ((0.1, 0.1), (0.3, 0.3), 0.1),     # holds (0.2, 0.2) at its centre
             ((0.0, 0.0), (0.35, 0.35), 0.9),   # holds it too, off centre: never kept
             ((0.6, 0.6), (0.9, 0.9), 0.2)]     # holds no row: dropped
    for i, (lo, hi, F) in enumerate(boxes):
        for d in range(2):
            set_bounds(pop, i, d, lo[d], hi[d])
        pop.reals.F[i] = F
        pop.counts.num[i] = 1
        pop.weights.w[i] = (i, 0.0, 0.0)
    pop.scal[S_P] = pop.scal[S_TOTAL] = 4
    X = np.array([[0.2, 0.2], [0.5, 0.45], [0.05, 0.95]])
    result = closest_classifier(model, X)
    assert (result.rules_before, result.rules_after) == (4, 2)
    assert sorted(model.pop.weights.w[:2, 0]) == [0.0, 1.0]
    # The kept rules predict as XCSF does: the fitness-weighted mean of those matching.
    assert np.allclose(model.predict(X), [0.1 / 0.6, 0.0, 0.0])


def test_compaction_is_deterministic_and_keeps_the_original_estimator(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.random((300, 2))
    y = np.cos(3 * X[:, 0]) + X[:, 1]
    est = KACSRegressor(n_iter=5000, N=800, random_state=2).fit(X, y)
    before = est.predict(X)
    a, b = est.compact(X, y), est.compact(X, y)
    assert np.array_equal(a.predict(X), b.predict(X)) and a.n_rules_ == b.n_rules_
    assert a.n_rules_ <= est.n_rules_ // 10 and a.n_params_ == 2 * a.n_rules_
    assert np.array_equal(est.predict(X), before)
    path = a.save(tmp_path / "c.kacs")
    assert np.array_equal(load(path).predict(X), a.predict(X))
    fitted = KACSRegressor(n_iter=5000, N=800, random_state=2, compaction="piecewise").fit(X, y)
    assert np.array_equal(fitted.predict(X), a.predict(X))
    with pytest.raises(UserError, match="compact_rules = 0.0 is invalid"):
        est.compact(X, y, rules=0.0)
    with pytest.raises(UserError, match="XCSF models have no compaction 'piecewise'"):
        XCSFRegressor(n_iter=200, N=100).fit(X, y).compact(X, y, method="piecewise")


@pytest.mark.slow
def test_a_compacted_run_records_both_models(capsys, tmp_path):
    from cli_support import run_kacs

    config = tmp_path / "c.yaml"
    config.write_text("""experiment: compacted
methods: {kacs: null, kacs-compact: {method: kacs, compaction: piecewise}}
benchmarks: [{name: f4, n: 2, samples: 150}]
protocol: {name: main, runs: 2}
iterations: 3000
eval_every: 1000
""")
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out", "--jobs", 1)
    assert code == 0, err
    runs = pd.read_csv(tmp_path / "out" / "runs.csv").set_index(["method", "run"])
    plain, compact = runs.loc["kacs"], runs.loc["kacs-compact"]
    for key in ("train_mae", "test_mae", "rules", "params"):
        assert compact[key].equals(plain[key])  # the uncompacted columns are the plain run's
    assert (compact["compacted_rules"] <= compact["rules"] // 10).all()
    assert (compact["compacted_params"] == 2 * compact["compacted_rules"]).all()
    assert plain["compacted_rules"].isna().all()
    # The report's compaction table and figure, from those columns.
    code, _, err = run_kacs(capsys, "report", tmp_path / "out")
    assert code == 0, err
    table = pd.read_csv(tmp_path / "out" / "report" / "compacted_compaction.csv")
    assert table[["cell", "method", "runs"]].values.tolist() == [["f4", "kacs-compact", 2]]
    row = table.iloc[0]
    assert row["rules"] == compact["rules"].mean()
    assert row["kept_share"] == pytest.approx((compact["compacted_rules"] / compact["rules"]).mean())
    assert row["change"] == pytest.approx(compact["compacted_test_mae"].mean() / compact["test_mae"].mean() - 1)
    assert row["better_runs"] == int((compact["compacted_test_mae"] < compact["test_mae"]).sum())
    assert "### compacted: compaction" in (tmp_path / "out" / "report" / "report.md").read_text()
    assert (tmp_path / "out" / "report" / "figures" / "compacted_compaction.png").is_file()
    bad = config.read_text().replace("kacs-compact: {method: kacs, compaction: piecewise}",
                                     "xcsf-compact: {method: xcsf, compaction: piecewise}")
    config.write_text(bad)
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "other")
    assert code == 2 and "methods.xcsf-compact.compaction: XCSF models have no compaction 'piecewise'" in err


def test_kacs_compact_writes_a_smaller_model_and_refuses_bad_options(capsys, tmp_path):
    from cli_support import run_kacs

    rng = np.random.default_rng(6)
    X = rng.random((200, 2))
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, np.sin(3 * X[:, 0]) + X[:, 1]]), delimiter=",")
    model = tmp_path / "m.kacs"
    assert run_kacs(capsys, "fit", data, "--out", model, "-n", 3000)[0] == 0
    code, out, err = run_kacs(capsys, "compact", model, "--data", data, "--out", tmp_path / "c" / "c.kacs")
    assert code == 0, err
    assert "piecewise compaction of" in out and load(tmp_path / "c" / "c.kacs").n_rules_ <= load(model).n_rules_ // 10
    for argv, message in [(("--rules", "1.5"), "compact_rules = 1.5 is invalid"),
                          (("--method", "best"), "no compaction 'best'"),
                          (("--tolerance", "-1"), "compact_tolerance = -1.0 is invalid")]:
        code, _, err = run_kacs(capsys, "compact", model, "--data", data, "--out", tmp_path / "x.kacs", *argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "x.kacs").exists()


def test_the_compacted_model_recovers_the_terms_of_an_additive_function():
    """f4 is a sum of one-dimensional terms (docs/algorithm.md section 8): the partial
    dependence of the compacted model on each input is that input's term up to a constant
    (a small-budget version of the measurement in docs/compaction.md)."""
    from sklearn.inspection import partial_dependence

    from kacs_cli.experiments.data import benchmarks

    X, y = benchmarks.generate("f4", 2, 400)
    model = KACSRegressor(n_iter=20_000, random_state=0).fit(X, y)
    compacted = model.compact(X, y)
    assert compacted.n_rules_ <= model.n_rules_ // 10
    lo, hi = benchmarks.BENCHMARKS["f4"].domain
    for p in range(2):
        pd_ = partial_dependence(compacted, X, [p], kind="average", grid_resolution=50)
        zeta = lo + (hi - lo) * pd_["grid_values"][0]
        term = 0.5 * (zeta**4 - 16 * zeta**2 + 5 * zeta)
        ours = pd_["average"][0] - pd_["average"][0].mean()
        term = term - term.mean()
        r2 = 1 - np.sum((ours - term) ** 2) / np.sum(term**2)
        assert r2 > 0.9, (p, r2)
