"""Bagging (engine/bagging.py): members on bootstrap samples, merged exactly into one model.

The merged model's prediction is checked against the mean of the members' own predictions,
computed independently; the merge keeps every member's rules; the result does not depend on
the number of processes; the one model can be saved, compacted and explained; a campaign
records a bagged run; impossible combinations are refused in one line.
"""

import functools
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.cli import app
from kacs_cli.engine import Hyperparameters, bagging, capacity, registry
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.config import resolve_config

from test_runner import campaign

ROWS = 160


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.random((ROWS, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2] + 0.05 * rng.normal(size=ROWS)
    return X, y


SMALL = dict(n_iter=1500, N=200, P_hash=0.8, random_state=4)


@pytest.fixture(scope="module")
def bagged_kacs(data):
    return KACSRegressor(bags=3, channels=2, **SMALL).fit(*data)


@pytest.fixture(scope="module")
def bagged_xcsf(data):
    return XCSFRegressor(bags=3, **SMALL).fit(*data)


def _members(estimator, X, y, **overrides):
    params = estimator.hyperparameters(X.shape[1]).with_overrides(**overrides)
    Xs, ys = estimator._scale_X(X), estimator._scale_y(y)
    members = bagging.train_members(estimator._method, Xs, ys, params, SMALL["n_iter"], estimator.seed_)
    return members, Xs


def _check_mean_of_members(estimator, X, y):
    """The fitted bagged model predicts the mean of its members, trained again here; returns
    them with the scaled rows."""
    members, Xs = _members(estimator, X, y)
    mean = np.mean([m.model.predict(Xs) for m in members], axis=0)
    np.testing.assert_allclose(estimator.model_.predict(Xs), mean, rtol=0, atol=1e-12)
    return members, Xs


def test_member_rows_are_a_seeded_bootstrap_sample():
    rows = bagging.member_rows(1000, k=2, seed=9)
    assert len(rows) == 1000 and rows.min() >= 0 and rows.max() < 1000
    assert np.all(np.diff(rows) >= 0)
    # With replacement: about 1 - 1/e of the rows appear, the rest are repeats.
    assert 0.58 < len(np.unique(rows)) / 1000 < 0.68
    assert np.array_equal(rows, bagging.member_rows(1000, k=2, seed=9))
    assert not np.array_equal(rows, bagging.member_rows(1000, k=3, seed=9))
    assert not np.array_equal(rows, bagging.member_rows(1000, k=2, seed=10))


def test_merged_kacs_predicts_the_mean_of_its_members(data, bagged_kacs):
    members, Xs = _check_mean_of_members(bagged_kacs, *data)
    merged = bagged_kacs.model_
    # One KACS model of K m channels holding every member's rules.
    assert merged.n_channels == 3 * 2 and merged.params.bags == 1
    assert merged.n_rules == sum(m.model.n_rules for m in members)
    assert merged.n_micro == sum(m.model.n_micro for m in members)
    assert merged.budget_N == 3 * 200
    # Each member's channels sit side by side: the components of channels k m .. k m + m - 1
    # are member k's, its outer functions divided by K.
    _, _, phihat, _ = merged.predict_components(Xs)
    for k, member in enumerate(members):
        _, _, own, _ = member.model.predict_components(Xs)
        np.testing.assert_allclose(phihat[:, 2 * k:2 * k + 2], own / 3, rtol=0, atol=1e-12)


def test_an_xcsf_ensemble_predicts_the_mean_of_its_members(data, bagged_xcsf):
    members, _ = _check_mean_of_members(bagged_xcsf, *data)
    ensemble = bagged_xcsf.model_
    assert ensemble.params.bags == 3 and ensemble.n_rules == sum(m.model.n_rules for m in members)
    rules = bagged_xcsf.rules_
    assert sorted(rules["member"].unique()) == [0, 1, 2]
    assert rules.groupby("member").size().tolist() == [m.model.n_rules for m in members]


def test_refinement_refines_each_member_on_its_own_sample(data):
    X, y = data
    refined = KACSRegressor(bags=2, refinement=True, **SMALL).fit(X, y)
    members, Xs = _members(refined, X, y)
    assert all(m.evolved is not None and m.refine_iterations > 0 for m in members)
    evolved = bagging.merge("kacs", [m.evolved for m in members])
    assert not np.allclose(evolved.predict(Xs), refined.model_.predict(Xs))
    np.testing.assert_allclose(refined.model_.predict(Xs),
                               np.mean([m.model.predict(Xs) for m in members], axis=0), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_the_bagged_model_does_not_depend_on_the_number_of_processes(data, bagged_kacs):
    parallel = KACSRegressor(bags=3, channels=2, n_jobs=2, **SMALL).fit(*data)
    assert np.array_equal(parallel.predict(data[0]), bagged_kacs.predict(data[0]))


@pytest.mark.slow
def test_members_trained_ahead_by_a_parallel_search_give_the_one_process_fit(data):
    """Under capacity: search, processes the search would leave waiting train the members at
    the best candidate so far (capacity.FinalFit's pieces): the bagged model is the one-process
    fit's, bit for bit, and its members are trained at the chosen budget."""
    settings = dict(bags=3, channels=2, capacity="search", capacity_max=400, refinement=True, **SMALL)
    alone = KACSRegressor(**settings).fit(*data)
    parallel = KACSRegressor(n_jobs=2, **settings).fit(*data)
    assert parallel.capacity_result_.candidates == alone.capacity_result_.candidates
    assert parallel.capacity_N_ == alone.capacity_N_
    assert np.array_equal(parallel.predict(data[0]), alone.predict(data[0]))
    assert parallel.n_rules_ == alone.n_rules_
    # The members a worker trained ahead are bagging.train_member's at the chosen budget.
    X, y = np.random.default_rng(5).random((120, 2)), np.random.default_rng(6).uniform(-1, 1, 120)
    params = Hyperparameters(N=200, capacity="search", capacity_max=400, bags=3, channels=2, refinement=True)
    final = capacity.FinalFit(functools.partial(bagging.member_at, "kacs", X, y, 1500, 4, None), pieces=3)
    result = capacity.search("kacs", X, y, params, 1500, 4, n_jobs=2, final=final)
    at = capacity.chosen_params(params, result)
    for k, member in enumerate(final.ahead(result)):
        if member is not None:
            again = bagging.train_member("kacs", X, y, at, 1500, 4, k)
            assert np.array_equal(member.model.predict(X), again.model.predict(X))


@pytest.mark.parametrize("which", ["bagged_kacs", "bagged_xcsf"])
def test_a_bagged_model_file_predicts_as_the_fitted_model(request, data, tmp_path, which):
    fitted = request.getfixturevalue(which)
    path = fitted.save(tmp_path / "bagged.kacs")
    again = load(path)
    assert np.array_equal(again.predict(data[0]), fitted.predict(data[0]))
    assert again.n_rules_ == fitted.n_rules_ and again.bags == 3


def test_a_merged_kacs_model_is_one_model_to_compact_explain_and_train_further(data, bagged_kacs):
    X, y = data
    small = bagged_kacs.compact(X, y)
    assert small.n_rules_ <= 0.1 * bagged_kacs.n_rules_ + 1
    assert np.mean(np.abs(small.predict(X) - y)) < 2 * np.mean(np.abs(bagged_kacs.predict(X) - y)) + 0.05
    shares = bagged_kacs.explain(X).channel_shares
    assert len(shares) == 6
    import copy
    further = copy.deepcopy(bagged_kacs).partial_fit(X, y)
    assert further.iterations_done_ > bagged_kacs.iterations_done_


def test_what_bagging_cannot_do_is_refused_in_one_line(data, bagged_xcsf):
    X, y = data
    with pytest.raises(UserError, match=r"'bags' parameter of KACSRegressor must be an int in the range \[1, inf\)"):
        KACSRegressor(bags=0).fit(X, y)
    with pytest.raises(UserError, match="bags = 0 is invalid: the number of bags must be a whole number >= 1"):
        Hyperparameters(bags=0)
    with pytest.raises(UserError, match="cannot be combined with budget: adaptive"):
        Hyperparameters(bags=2, budget="adaptive")
    with pytest.raises(UserError, match="bags > 1 needs fit"):
        KACSRegressor(bags=2).partial_fit(X, y)
    with pytest.raises(UserError, match=r"averages 3 populations \(bags\) and cannot learn further"):
        bagged_xcsf.partial_fit(X, y)
    with pytest.raises(UserError, match="has no compaction"):
        bagged_xcsf.compact(X, y)
    with pytest.raises(UserError, match=r"an average of XCSF populations \(bags\) has no compaction"):
        XCSFRegressor(bags=2, compaction="closest", **SMALL).fit(X, y)
    with pytest.raises(UserError, match=r"'n_jobs' parameter of KACSRegressor must be an int in the range "
                                        r"\[1, inf\), an? int among \{-1\} or None\. Got 0 instead"):
        KACSRegressor(bags=2, n_jobs=0, **SMALL).fit(X, y)


def test_a_campaign_records_a_bagged_run_as_its_merged_model(tmp_path):
    raw = {"experiment": "bag", "benchmarks": [{"name": "f1", "n": 2, "samples": 150}],
           "methods": {"kacs": None, "kacs-bag": {"method": "kacs", "bags": 2},
                       "xcsf-bag": {"method": "xcsf", "bags": 2}},
           "hyperparameters": {"N": 150}, "protocol": {"name": "main", "runs": 1},
           "iterations": 800, "eval_every": 400}
    campaign(resolve_config(json.loads(json.dumps(raw))), tmp_path / "out", jobs=1)
    runs = pd.read_csv(tmp_path / "out" / "runs.csv").set_index("method")
    assert runs.loc["kacs-bag", "final_N"] == 300 and runs.loc["xcsf-bag", "final_N"] == 300
    population = pd.read_csv(tmp_path / "out" / "populations" / "f1__kacs-bag__0.csv")
    assert len(population) == runs.loc["kacs-bag", "rules"]
    assert population["q"].max() == 2 * 5  # two members of 2n + 1 = 5 channels
    curve = pd.read_csv(tmp_path / "out" / "curves" / "f1__kacs-bag__0.csv")
    assert len(curve) == 1 and curve["test_mae"].iloc[0] == runs.loc["kacs-bag", "test_mae"]
    assert 0 < runs.loc["kacs-bag", "cover_rate"] < 1


@pytest.mark.slow
def test_kacs_fit_bags_with_jobs(tmp_path, data):
    X, y = data
    csv = tmp_path / "data.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",")
    result = CliRunner().invoke(app, ["fit", str(csv), "--out", str(tmp_path / "m.kacs"), "--iterations", "1000",
                                      "--N", "200", "--bags", "2", "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "2 bags on bootstrap samples averaged into one model of 14 channels" in result.output
    assert load(tmp_path / "m.kacs").model_.n_channels == 14


def test_a_bagged_run_is_scheduled_as_the_cost_of_its_members():
    from kacs_cli.experiments.campaign.tasks import estimate_cost, expand_tasks

    raw = {"experiment": "bag", "benchmarks": [{"name": "f1", "n": 2, "samples": 150}],
           "methods": {"kacs": None, "kacs-bag": {"method": "kacs", "bags": 4}},
           "protocol": {"name": "main", "runs": 1}, "iterations": 1000, "eval_every": 1000}
    single, bagged = expand_tasks(resolve_config(json.loads(json.dumps(raw))))
    per_iteration = registry.get("kacs").cost(2, 6400)
    # The single run evaluates at 0 and at its end; each member once, at its end.
    assert estimate_cost(single, 1000, 1000, 150, 2) == pytest.approx(1000 * per_iteration + 2 * 150 * per_iteration * 0.3)
    assert estimate_cost(bagged, 1000, 1000, 150, 2) == pytest.approx(4 * (1000 * per_iteration + 150 * per_iteration * 0.3))
