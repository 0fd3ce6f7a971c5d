"""KACS with m outer channels instead of the article's 2n + 1 (the hyperparameter `channels`):
the submodel structure by hand, training, refinement, compaction, explain and model files at
m != 2n + 1, the default unchanged bit for bit, and the one-line refusals."""

import json
import zipfile

import numpy as np
import pytest

from test_compaction import pieces_prediction
from test_refine import central_differences

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.engine import Hyperparameters, Model, train_run
from kacs_cli.engine.compaction import piecewise, single_winner
from kacs_cli.engine.population import S_P, S_TOTAL, set_bounds
from kacs_cli.engine.refine import Objective, design
from kacs_cli.errors import UserError
from kacs_cli.estimators.inspection import kacs_functions, submodel_table
from test_engine_support import np_kacs_forward, snapshot
from repo_support import project_config


def _data(n, rows, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    return X, np.sin(3 * X[:, 0]) * X[:, -1] + 0.3 * X[:, 0]


def _population(n, channels, rules):
    """A KACS model holding exactly `rules`: (submodel, lo, hi, w0, w1, F) each."""
    model = Model("kacs", n, Hyperparameters(N=1000, channels=channels))
    pop = model.pop
    for i, (s, lo, hi, w0, w1, F) in enumerate(rules):
        pop.counts.sub[i] = s
        pop.pairs.a[i, 0], pop.pairs.b[i, 0] = lo, hi
        set_bounds(pop, i, 0, lo, hi)
        pop.weights.w[i] = (w0, w1)
        pop.reals.F[i] = F
        pop.counts.num[i] = 1
    pop.scal[S_P] = pop.scal[S_TOTAL] = len(rules)
    return model


# ---------------------------------------------------------------------------- structure


@pytest.mark.parametrize("m", [1, 3])
def test_the_submodels_of_m_channels_are_counted_and_numbered_by_hand(m):
    n = 2
    model = Model("kacs", n, Hyperparameters(N=400, channels=m))
    assert model.n_channels == m
    # (n + 1) m submodels: n m inner (q, p) -> q n + p, then m outer q -> n m + q.
    assert model.n_submodels == (n + 1) * m
    assert model.learner.cover_slots(n, model.params) == ((n + 1) * m, n * m, m)
    table = submodel_table(model)
    assert len(table) == (n + 1) * m
    assert table["type"].tolist() == ["inner"] * (n * m) + ["outer"] * m
    assert table["q"].tolist() == [q for q in range(1, m + 1) for _ in range(n)] + list(range(1, m + 1))
    assert table["p"].tolist() == [1, 2] * m + [0] * m

    X, y = _data(n, 150)
    model.train(X, y, 3000, seed=2)
    frame = model.population_frame()
    assert frame["q"].between(1, m).all() and model.pop.counts.sub[:model.n_rules].max() < (n + 1) * m
    # Every submodel was covered at least once in 3,000 iterations (N = 400 keeps them all).
    assert (submodel_table(model)["rules"] > 0).all()
    psi, zhat, phi, y_hat = model.predict_components(X)
    assert psi.shape == (150, m, n) and zhat.shape == (150, m) and phi.shape == (150, m)
    np.testing.assert_array_equal(model.predict(X), y_hat)
    # The compiled prediction against the plain-numpy two-stage evaluation with m channels.
    snap = snapshot(model.pop)
    for r in range(0, 150, 15):
        e_psi, e_z, e_phi, e_y = np_kacs_forward(snap["lo"][:, 0], snap["hi"][:, 0], snap["w"],
                                                 snap["F"], snap["sub"], X[r], n, m)
        np.testing.assert_allclose(psi[r], e_psi, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(phi[r], e_phi, rtol=1e-12, atol=1e-12)
        assert y_hat[r] == pytest.approx(e_y, rel=1e-12, abs=1e-12)
    curves = kacs_functions(model)
    assert [(c["type"], c["q"], c["p"]) for c in curves] == (
        [("inner", q, p) for q in range(1, m + 1) for p in (1, 2)] + [("outer", q, 0) for q in range(1, m + 1)])


def test_a_one_channel_model_predicts_its_hand_computed_values():
    # n = 2, m = 1: inner (q 0, p 0) is submodel 0, inner (0, 1) is 1, outer q 0 is 2.
    model = _population(2, 1, [(0, 0.0, 1.0, 1.0, 2.0, 1.0),      # psi_0 = 1 + 2 x0
                                (1, 0.0, 0.5, -1.0, 1.0, 2.0),     # psi_1 = -1 + x1 on [0, 0.5]
                                (2, -10.0, 10.0, 0.5, 3.0, 1.0)])  # Phi = 0.5 + 3 z
    X = np.array([[0.25, 0.25], [0.5, 0.75]])
    psi, zhat, phi, y_hat = model.predict_components(X)
    # Row 1: psi = (1.5, -0.75), z = 0.75, Phi = 2.75. Row 2: psi = (2, 0: no rule), z = 2, Phi = 6.5.
    np.testing.assert_allclose(psi[:, 0, :], [[1.5, -0.75], [2.0, 0.0]], rtol=1e-15)
    np.testing.assert_allclose(zhat[:, 0], [0.75, 2.0], rtol=1e-15)
    np.testing.assert_allclose(y_hat, [2.75, 6.5], rtol=1e-15)


def test_a_three_channel_model_predicts_its_hand_computed_values():
    # n = 1, m = 3: inner q is submodel q (0..2), outer q is 3 + q.
    model = _population(1, 3, [(0, 0.0, 1.0, 0.0, 1.0, 1.0),      # psi_0 = x
                                (2, 0.0, 1.0, 1.0, 0.0, 1.0),      # psi_2 = 1
                                (3, -5.0, 5.0, 0.0, 2.0, 1.0),     # Phi_0 = 2 z
                                (4, -5.0, 5.0, 7.0, 0.0, 1.0),     # Phi_1 = 7 (its z is 0)
                                (5, 0.5, 1.5, 0.0, -1.0, 1.0)])    # Phi_2 = -z on [0.5, 1.5]
    X = np.array([[0.2], [0.9]])
    psi, zhat, phi, y_hat = model.predict_components(X)
    np.testing.assert_allclose(zhat, [[0.2, 0.0, 1.0], [0.9, 0.0, 1.0]], rtol=1e-15)
    np.testing.assert_allclose(phi, [[0.4, 7.0, -1.0], [1.8, 7.0, -1.0]], rtol=1e-15)
    np.testing.assert_allclose(y_hat, [6.4, 7.8], rtol=1e-15)


def test_the_article_channels_given_as_a_number_train_bit_for_bit_like_the_default():
    X, y = _data(2, 120, seed=5)
    runs = [train_run("kacs", X[:100], y[:100], X[100:], y[100:], iterations=2000, eval_every=1000,
                      seed=3, params=Hyperparameters(N=500, channels=c)) for c in (0, 5)]
    assert runs[0].final == runs[1].final
    assert runs[0].population.equals(runs[1].population)
    # The default stays out of the resolved settings; another value is written down.
    assert "channels" not in Hyperparameters().as_dict()
    assert Hyperparameters(channels=5).as_dict()["channels"] == 5


# ---------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("value, why", [(-1, "whole number >= 1"), (2.5, "whole number >= 1"),
                                        (True, "must be a number"), ("3", "must be a number")])
def test_bad_channel_counts_are_refused_in_one_line(value, why):
    with pytest.raises(UserError) as info:
        Hyperparameters(channels=value)
    assert str(info.value).startswith("hyperparameter channels = ") and why in str(info.value)
    assert len(str(info.value).splitlines()) == 1


def test_xcsf_refuses_channels():
    with pytest.raises(UserError, match=r"^channels \(the number of outer channels\) is "
                                        r"defined for KACS only; drop it from XCSF$"):
        Model("xcsf", 2, Hyperparameters(channels=3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'channels'"):  # not XCSF's parameter
        XCSFRegressor(channels=3, n_iter=200)


CAMPAIGN = """experiment: chan
methods: {kacs: null, kacs-m3: {method: kacs, channels: 3}}
benchmarks:
  - {name: f1, n: 2, samples: 120}
protocol: {name: main, runs: 1}
iterations: 2000
eval_every: 1000
"""


def test_the_shipped_channels_config_runs_n_plus_1_2n_plus_1_and_4n_plus_1_channels():

    config = project_config("channels")
    assert config.methods == ("kacs-m11", "kacs-m21", "kacs-m41")
    assert [c.label for c in config.cells] == ["f1", "f2", "f3", "f4"]
    for cell in config.cells:
        assert cell.data.n == 10
        assert [cell.params[m].channels for m in config.methods] == [11, 0, 41]
        assert all(cell.params[m].refinement and cell.params[m].input_transform == "quantile"
                   for m in config.methods)


def test_channels_per_input_resolve_at_each_cells_n_to_the_number_they_mean():
    from kacs_cli.experiments.campaign.config import resolve_config

    raw = {"experiment": "m", "benchmarks": [{"name": "f1", "n": 2, "samples": 50}, {"name": "f1", "n": 5, "samples": 50}],
           "methods": {"kacs-a": {"method": "kacs", "channels": "n + 1"}, "kacs-b": {"method": "kacs", "channels": "4n+1"},
                       "kacs-c": {"method": "kacs", "channels": "2n"}, "kacs-d": {"method": "kacs", "channels": 6}},
           "protocol": {"name": "main", "runs": 1}}
    config = resolve_config(raw)
    assert [[cell.params[m].channels for m in config.methods] for cell in config.cells] == [[3, 9, 4, 6], [6, 21, 10, 6]]
    # a per-input count is the number it means: at n = 5, n + 1 and 6 are one setting
    assert config.cells[1].params["kacs-a"] == config.cells[1].params["kacs-d"]


def test_a_config_runs_a_method_with_its_own_channels(capsys, tmp_path):
    import pandas as pd

    from cli_support import run_kacs

    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN)
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out", "--jobs", 1)
    assert code == 0, err
    resolved = (tmp_path / "out" / "config.yaml").read_text()
    assert resolved.count("channels: 3") == 1
    runs = pd.read_csv(tmp_path / "out" / "runs.csv").set_index("method")
    # Fewer channels than 2n + 1 = 5: a different model, its rules in 9 submodels, not 15.
    assert runs.loc["kacs", "test_mae"] != runs.loc["kacs-m3", "test_mae"]


@pytest.mark.parametrize("methods, message", [
    ("{kacs-m: {method: kacs, channels: -2}}", "methods.kacs-m.channels: must be a whole number >= 0, got -2"),
    ("{kacs-m: {method: kacs, channels: 1.5}}", "methods.kacs-m.channels: must be a whole number >= 0, got 1.5"),
    ("{kacs-m: {method: kacs, channels: 2x + 1}}",
     "methods.kacs-m.channels: must be a whole number or a number per input such as 4n + 1, got '2x + 1'"),
    ("{kacs-m: {method: kacs, channels: 0n}}", "methods.kacs-m.channels: '0n' gives no channel"),
    ("{xcsf-m: {method: xcsf, channels: 3}}",
     "methods.xcsf-m.channels: channels (the number of outer channels) is defined for KACS only"),
])
def test_bad_channels_in_a_config_are_one_line_and_exit_2(capsys, tmp_path, methods, message):
    from cli_support import run_kacs

    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN.replace(CAMPAIGN.splitlines()[1], f"methods: {methods}"))
    code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_kacs_fit_takes_channels_and_refuses_bad_ones(capsys, tmp_path):
    from cli_support import run_kacs

    X, y = _data(2, 150)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "m.kacs"
    code, text, err = run_kacs(capsys, "fit", data, "--out", out, "-n", 2000, "--channels", 3)
    assert code == 0, err
    assert ", 3 outer channels" in text
    assert load(out).model_.n_channels == 3
    code, text, err = run_kacs(capsys, "plot-model", out, "--out", tmp_path / "m.png")
    assert code == 0, err
    assert "drew 6 inner and 3 outer functions" in text
    code, text, err = run_kacs(capsys, "fit", data, "--out", tmp_path / "p.kacs", "-n", 2000, "--channels", "n + 1")
    assert code == 0, err
    assert ", 3 outer channels (n + 1)" in text and load(tmp_path / "p.kacs").model_.n_channels == 3
    for argv, message in [
        (("--channels", "-1"), "hyperparameter channels = '-1' is invalid: must be a whole number or a number "
                               "per input such as 4n + 1, got '-1'"),
        (("--channels", "0n"), "hyperparameter channels = '0n' is invalid: '0n' gives no channel"),
        (("--channels", "3", "--method", "xcsf"), "--channels: channels exists only for KACS, not XCSF"),
    ]:
        code, _, err = run_kacs(capsys, "fit", data, "--out", tmp_path / "x.kacs", "-n", 200, *argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "x.kacs").exists()


def test_an_estimator_takes_channels_per_input_as_the_number_they_mean_at_its_data(tmp_path):
    X, y = _data(3, 200)
    per_input = KACSRegressor(channels="n + 1", n_iter=2000, N=600, random_state=2).fit(X, y)
    number = KACSRegressor(channels=4, n_iter=2000, N=600, random_state=2).fit(X, y)
    assert per_input.model_.n_channels == 4 and per_input.get_params()["channels"] == "n + 1"
    Xq = np.random.default_rng(4).random((50, 3))
    np.testing.assert_array_equal(per_input.predict(Xq), number.predict(Xq))
    per_input.save(tmp_path / "m.kacs")
    back = load(tmp_path / "m.kacs")
    assert back.channels == "n + 1" and back.model_.n_channels == 4
    np.testing.assert_array_equal(back.predict(Xq), number.predict(Xq))
    # the same setting on data of two inputs is three channels
    assert KACSRegressor(channels="n+1", n_iter=200, N=100).fit(X[:, :2], y).model_.n_channels == 3
    with pytest.raises(UserError) as info:
        KACSRegressor(channels="2x + 1", n_iter=200, N=100).fit(X, y)
    assert str(info.value) == ("hyperparameter channels = '2x + 1' is invalid: must be a whole number or a number "
                               "per input such as 4n + 1, got '2x + 1'")


# ---------------------------------------------------------------------------- model files


def test_a_model_file_keeps_its_channels(tmp_path):
    X, y = _data(3, 200)
    est = KACSRegressor(channels=4, n_iter=3000, N=800, random_state=1).fit(X, y)
    est.save(tmp_path / "m.kacs")
    with zipfile.ZipFile(tmp_path / "m.kacs") as z:
        meta = json.loads(z.read("metadata.json"))
    assert meta["hyperparameters"]["channels"] == 4
    back = load(tmp_path / "m.kacs")
    assert back.model_.n_channels == 4 and back.channels == 4
    Xq = np.random.default_rng(9).random((60, 3))
    np.testing.assert_array_equal(back.predict(Xq), est.predict(Xq))
    for a, b in zip(back.predict_components(Xq), est.predict_components(Xq)):
        np.testing.assert_array_equal(a, b)
    assert back.predict_components(Xq).zhat.shape == (60, 4)
    # A model file without the key (every file written before it existed): 2n + 1 channels.
    default = KACSRegressor(n_iter=500, N=300).fit(X, y)
    default.save(tmp_path / "d.kacs")
    with zipfile.ZipFile(tmp_path / "d.kacs") as z:
        assert "channels" not in json.loads(z.read("metadata.json"))["hyperparameters"]
    assert load(tmp_path / "d.kacs").model_.n_channels == 7


# ---------------------------------------------------------------------------- refinement, compaction


def _wide_outer_model(n, m, seed=0):
    """Every submodel holds rules; outer intervals far wider than any channel sum, so that
    the refinement objective is smooth near the weights and finite differences apply."""
    rng = np.random.default_rng(seed)
    rules = []
    for s in range((n + 1) * m):
        spans = [(0.0, 0.6, 0.7), (0.3, 1.0, 0.2)] if s < n * m else [(-50.0, 50.0, 0.5), (-60.0, 60.0, 0.3)]
        rules += [(s, lo, hi, *rng.uniform(-1, 1, 2), F) for lo, hi, F in spans]
    return _population(n, m, rules)


@pytest.mark.parametrize("m", [1, 3])
def test_the_refinement_objective_at_m_channels_is_the_engine_prediction_and_its_gradient(m):
    model = _wide_outer_model(2, m)
    X, y = _data(2, 60)
    P = model.n_rules
    w0 = model.pop.weights.w[:P].ravel().copy()
    obj = Objective(model.pop, 2, m, design(model.pop, X, y, 2, m), 0.0, w0)
    assert obj.mse(w0) == pytest.approx(np.mean((model.predict(X) - y) ** 2), rel=1e-12)
    _, grad = obj(w0)
    numeric = central_differences(lambda w: obj(w)[0], w0)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    assert np.abs(grad).max() > 1e-3


@pytest.mark.parametrize("m", [1, 3, 9])
def test_refinement_and_compaction_at_m_channels_keep_their_invariants(m):
    n = 2
    X, y = _data(n, 300, seed=7)
    model = Model("kacs", n, Hyperparameters(N=800, channels=m))
    model.train(X, y, 6000, seed=4)
    rules, subs = model.n_rules, model.pop.counts.sub[:model.n_rules].copy()
    before = np.mean((model.predict(X) - y) ** 2)
    result = model.refine(X, y, seed=0, max_iter=100, pull=0.0, validation=0.0)
    after = np.mean((model.predict(X) - y) ** 2)
    # Only the weights move: the rules and their submodels stay; the fitted error does not rise.
    assert model.n_rules == rules and np.array_equal(model.pop.counts.sub[:rules], subs)
    assert after <= before and result.fit_mse_after == pytest.approx(after, rel=1e-9)

    piecewise(model, X, y, max_rules=max(1, rules // 10))
    frame = model.population_frame()
    assert 0 < len(frame) <= rules // 10 and frame["q"].between(1, m).all()
    Xq = np.random.default_rng(4).uniform(0.01, 0.99, (40, n))
    expected = pieces_prediction(frame, Xq, m)
    assert np.allclose(model.predict(Xq), expected, atol=1e-9)


def test_single_winner_at_three_channels_keeps_each_rows_fittest_rule_per_submodel():
    # n = 1, m = 3: inner q is submodel q, outer q is 3 + q; channel 1's inner set has a rule
    # always beaten, which goes.
    model = _population(1, 3, [(0, 0.0, 1.0, 0.0, 1.0, 1.0),
                               (1, 0.0, 1.0, 0.5, 0.0, 0.9), (1, 0.2, 0.6, 0.1, 0.0, 0.2),
                               (3, -5, 5, 0.0, 1.0, 1.0), (4, -5, 5, 0.0, 1.0, 1.0)])
    result = single_winner(model, np.linspace(0, 1, 21)[:, None])
    assert (result.rules_before, result.rules_after) == (5, 4)
    assert sorted(model.pop.counts.sub[:4].tolist()) == [0, 1, 3, 4]


# ---------------------------------------------------------------------------- explain


@pytest.mark.slow
def test_explain_at_three_channels_has_one_share_per_channel(tmp_path):
    X, y = _data(2, 200)
    est = KACSRegressor(channels=3, n_iter=3000, N=600, random_state=0).fit(X, y)
    ex = est.explain(X)
    shares = ex.channel_shares
    assert shares["index"].tolist() == [1, 2, 3] and ex.n_channels == 3
    assert shares["covariance_share"].sum() == pytest.approx(1.0, abs=1e-12)
    assert ex.pathways.shape == (3, 2)
    assert "2 inputs, 3 channels" in ex.summary() and "of 9 submodels" in ex.summary()
    written = ex.write(tmp_path / "ex")
    meta = json.loads((tmp_path / "ex" / "rules.json").read_text())
    assert meta["channels"] == 3 and len(written) == 6
