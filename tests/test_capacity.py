"""Capacity chosen on the user's data (engine/capacity.py): the candidates, the held-out rows,
the choice, and the refit: a searched model is the fixed-budget model at the chosen N."""

import json

import numpy as np
import pandas as pd
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine import capacity
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.data.benchmarks import generate

from test_runner import campaign
from repo_support import project_config


def test_the_candidates_double_from_N_up_to_the_ceiling():
    assert capacity.candidate_budgets(Hyperparameters(N=6400, capacity="search")) == (6400, 12800, 25600, 51200)
    assert capacity.candidate_budgets(Hyperparameters(N=100, capacity="search", capacity_max=399)) == (100, 200)
    assert capacity.candidate_budgets(Hyperparameters(N=500, capacity="search", capacity_max=100)) == (500,)


def test_the_held_out_rows_split_the_rows_by_the_seed():
    fit, held = capacity.held_out_rows(50, 0.2, seed=7)
    assert len(held) == 10 and len(fit) == 40
    assert sorted(np.concatenate([fit, held]).tolist()) == list(range(50))
    again = capacity.held_out_rows(50, 0.2, seed=7)
    assert np.array_equal(fit, again[0]) and np.array_equal(held, again[1])
    assert not np.array_equal(held, capacity.held_out_rows(50, 0.2, seed=8)[1])
    assert [len(part) for part in capacity.held_out_rows(3, 0.01, seed=0)] == [2, 1]  # one held out at least


@pytest.mark.parametrize("scores, tried, chosen", [
    ({100: 0.30, 200: 0.20, 400: 0.20, 800: 0.10}, (100, 200, 400), 200),  # a tie stops the ladder
    ({100: 0.30, 200: 0.20, 400: 0.25, 800: 0.10}, (100, 200, 400), 200),  # so does a rise
    ({100: 0.30, 200: 0.20, 400: 0.15, 800: 0.10}, (100, 200, 400, 800), 800),  # falling to the top
    ({100: 0.30, 200: 0.35, 400: 0.10, 800: 0.10}, (100, 200), 100),  # no second chance
])
def test_the_search_climbs_while_the_held_out_error_falls(monkeypatch, scores, tried, chosen):
    seen = []

    class Result:
        def __init__(self, N):
            self.final, self.seconds = {"test_mae": scores[N]}, 1.5

    def fake_train_run(method, X_fit, y_fit, X_held, y_held, *, params, iterations, eval_every, seed, weight=None,
                       test_weight=None):
        seen.append((params.N, params.capacity, len(X_fit), len(X_held), seed))
        return Result(params.N)

    monkeypatch.setattr(capacity, "train_run", fake_train_run)
    X, y = np.random.default_rng(0).random((40, 2)), np.zeros(40)
    result = capacity.search("kacs", X, y, Hyperparameters(N=100, capacity="search", capacity_max=800),
                             iterations=10, seed=3)
    assert result.chosen_N == chosen and result.candidates == tried
    assert result.scores == tuple(scores[N] for N in tried) and result.seconds == 1.5 * len(tried)
    assert seen == [(N, "fixed", 32, 8, 3) for N in tried]


@pytest.mark.parametrize("cls", [KACSRegressor, XCSFRegressor])
def test_a_searched_estimator_is_the_fixed_budget_estimator_at_the_chosen_N(cls):
    X, y = generate("f1", 2, 120, seed=0)
    options = dict(n_iter=600, random_state=4)
    searched = cls(N=60, capacity="search", capacity_max=240, **options).fit(X, y)
    result = searched.capacity_result_
    assert result.candidates == (60, 120, 240)[:len(result.candidates)] and result.chosen_N in result.candidates
    assert result.scores[result.candidates.index(result.chosen_N)] == min(result.scores)
    assert searched.capacity_N_ == result.chosen_N
    fixed = cls(N=result.chosen_N, **options).fit(X, y)
    assert np.array_equal(searched.predict(X), fixed.predict(X))
    assert searched.n_rules_ == fixed.n_rules_


def test_the_search_is_refused_with_the_adaptive_budget_and_a_bad_fraction():
    with pytest.raises(UserError, match="cannot be combined with budget: adaptive"):
        Hyperparameters(capacity="search", budget="adaptive")
    with pytest.raises(UserError, match=r"capacity_validation = 1.0 is invalid: the held-out fraction"):
        Hyperparameters(capacity="search", capacity_validation=1.0)


def test_a_campaign_records_the_chosen_budget_and_trains_it(tmp_path):
    raw = {"experiment": "cap", "benchmarks": [{"name": "f1", "n": 2, "samples": 150}],
           "methods": {**{f"kacs-{N}": {"method": "kacs", "N": N} for N in (60, 120, 240)},
                       "kacs-cap": {"method": "kacs", "N": 60, "capacity": "search", "capacity_max": 240}},
           "protocol": {"name": "main", "runs": 2}, "iterations": 800, "eval_every": 400}
    campaign(resolve_config(json.loads(json.dumps(raw))), tmp_path / "out")
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    searched = runs[runs["method"] == "kacs-cap"].set_index("run")
    assert set(searched["capacity_N"]) <= {60, 120, 240} and (searched["capacity_seconds"] > 0).all()
    assert (searched["N"] == 60).all() and (searched["final_N"] == searched["capacity_N"]).all()
    for run, row in searched.iterrows():
        fixed = runs[(runs["method"] == f"kacs-{int(row['capacity_N'])}") & (runs["run"] == run)].iloc[0]
        assert (row["test_mae"], row["rules"]) == (fixed["test_mae"], fixed["rules"])


def test_the_recommended_preset_is_one_setting_in_every_front_end(tmp_path):
    from kacs_cli.engine.params import PRESETS
    from kacs_cli.engine.registry import preset
    from kacs_cli.experiments.campaign.methods import parse_methods

    assert preset("recommended", "kacs") == PRESETS["recommended"]
    # XCSF has no refinement and no outer channels
    assert "refinement" not in preset("recommended", "xcsf") and "channels" not in preset("recommended", "xcsf")
    xcsf = XCSFRegressor.from_preset("recommended")  # only what XCSF has: its constructor takes it
    assert (xcsf.input_transform, xcsf.capacity) == ("quantile", "search")
    est = KACSRegressor.from_preset("recommended", N=3200)
    assert (est.input_transform, est.refinement, est.capacity, est.channels, est.N) == ("quantile", True, "search",
                                                                                       "n + 1", 3200)
    methods = parse_methods(["kacs-recommended", "xcsf-recommended"])
    assert methods["kacs-recommended"] == ("kacs", PRESETS["recommended"])
    assert methods["xcsf-recommended"] == ("xcsf", preset("recommended", "xcsf"))
    assert parse_methods({"kacs-recommended": {"N": 3200}})["kacs-recommended"][1]["N"] == 3200
    with pytest.raises(UserError, match="unknown preset 'best'"):
        preset("best", "kacs")


def first_cell(config: str):
    """The first cell of the project's configs/<config>.yaml, its methods' settings resolved."""
    return project_config(config).cells[0]


def test_the_small_budget_study_starts_both_searches_at_1600_and_changes_nothing_else():
    """configs/suite_small_budget.yaml: the recommended settings with the ladder started at
    N = 1,600 (1,600 to 51,200) beside the same settings as the suite campaign ran them."""
    cell, suite = first_cell("suite_small_budget"), first_cell("suite_recommended")
    for learner in ("kacs", "xcsf"):
        start, low = cell.params[f"{learner}-recommended"], cell.params[f"{learner}-recommended-n1600"]
        assert start == suite.params[f"{learner}-recommended"]
        assert capacity.candidate_budgets(low) == (1600, 3200, 6400, 12800, 25600, 51200)
        assert capacity.candidate_budgets(start) == (6400, 12800, 25600, 51200)
        assert vars(low) == {**vars(start), "N": 1600}


def test_the_error_threshold_study_changes_only_kacs_e0_to_0_05():
    """configs/suite_error_threshold.yaml: the recommended KACS with e0 = 0.05 beside the
    recommended KACS and XCSF exactly as the suite campaign ran them (whose runs it copies)."""
    cell, suite = first_cell("suite_error_threshold"), first_cell("suite_recommended")
    for learner in ("kacs", "xcsf"):
        assert cell.params[f"{learner}-recommended"] == suite.params[f"{learner}-recommended"]
    start, wider = cell.params["kacs-recommended"], cell.params["kacs-recommended-e05"]
    assert start.e0 == 0.01
    assert vars(wider) == {**vars(start), "e0": 0.05}


def test_kacs_fit_starts_from_the_preset_and_a_flag_given_at_its_default_still_overrides_it(capsys, tmp_path):
    from cli_support import run_kacs

    from kacs_cli import load

    X, y = generate("f1", 2, 80, seed=0)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    small = ["--iterations", 300, "--N", 40, "--capacity-max", 80]
    code, _, err = run_kacs(capsys, "fit", data, "--out", tmp_path / "a.kacs", "--preset", "recommended", *small)
    assert code == 0, err
    a = load(tmp_path / "a.kacs")
    assert (a.input_transform, a.refinement, a.capacity, a.capacity_N_ in (40, 80)) == ("quantile", True, "search", True)
    assert a.model_.n_channels == 3  # n + 1 at two inputs
    code, _, err = run_kacs(capsys, "fit", data, "--out", tmp_path / "b.kacs", "--preset", "recommended",
                            "--input-transform", "minmax", "--capacity", "fixed", *small)
    assert code == 0, err
    b = load(tmp_path / "b.kacs")
    assert (b.input_transform, b.refinement, b.capacity) == ("minmax", True, "fixed")


def test_a_campaigns_search_sees_the_train_rows_and_never_a_test_row(tmp_path, monkeypatch):
    """The runner hands the search exactly the rows its final fit trains on, and not one of the
    rows that fit is tested on (the split's test rows)."""
    from kacs_cli.experiments.campaign import execution

    searched, final = [], []
    real_search, real_train = capacity.search, execution.train_run

    def search_spy(method, X, y, *args, **kwargs):
        searched.append((X.copy(), y.copy()))
        return real_search(method, X, y, *args, **kwargs)

    def train_spy(method, X_train, y_train, X_test, y_test, **kwargs):
        final.append((X_train.copy(), y_train.copy(), X_test.copy()))
        return real_train(method, X_train, y_train, X_test, y_test, **kwargs)

    monkeypatch.setattr(capacity, "search", search_spy)
    monkeypatch.setattr(execution, "train_run", train_spy)
    raw = {"experiment": "leak", "benchmarks": [{"name": "f1", "n": 2, "samples": 120}],
           "methods": {"kacs-cap": {"method": "kacs", "N": 60, "capacity": "search", "capacity_max": 120,
                                    "input_transform": "quantile"}},
           "protocol": {"name": "main", "runs": 2}, "iterations": 400, "eval_every": 400}
    campaign(resolve_config(json.loads(json.dumps(raw))), tmp_path / "out", jobs=1)
    assert len(searched) == len(final) == 2
    for (X, y), (X_train, y_train, X_test) in zip(searched, final):
        np.testing.assert_array_equal(X, X_train)
        np.testing.assert_array_equal(y, y_train)
        assert X.shape[0] == 108 and X_test.shape[0] == 12  # the main protocol's 90 / 10 split
        assert not (X[:, None, :] == X_test[None, :, :]).all(axis=2).any()


@pytest.mark.parametrize("scores", [
    {100: 0.30, 200: 0.20, 400: 0.20, 800: 0.10},   # stops inside the first pair
    {100: 0.30, 200: 0.20, 400: 0.15, 800: 0.16},   # stops inside the second pair
    {100: 0.30, 200: 0.20, 400: 0.15, 800: 0.10},   # climbs to the top
])
def test_candidates_trained_in_parallel_give_the_sequential_search(monkeypatch, scores):
    def fake_score(method, X, y, fit, held, params, N, iterations, seed, weight=None):
        return scores[N], 1.0

    monkeypatch.setattr(capacity, "_score", fake_score)
    X, y = np.random.default_rng(0).random((40, 2)), np.zeros(40)
    params = Hyperparameters(N=100, capacity="search", capacity_max=800)
    sequential = capacity.search("kacs", X, y, params, iterations=10, seed=3)
    batches = []

    def in_this_process(function, calls, jobs):
        # The fake scores live in this process: the batches run here, as a pool would run them.
        batches.append([call[6] for call in calls])
        return [function(*call) for call in calls]

    monkeypatch.setattr(capacity, "in_processes", in_this_process)
    for jobs in (2, 3):
        batches.clear()
        assert capacity.search("kacs", X, y, params, iterations=10, seed=3, n_jobs=jobs) == sequential
        # Trained ahead of the stopping rule, a batch at a time: never a batch past the stop.
        assert all(len(b) <= jobs for b in batches) and batches[-1][0] in sequential.candidates


def test_a_parallel_search_fits_the_same_model(tmp_path):
    X, y = generate("f1", 2, 150, seed=2)
    settings = dict(N=60, capacity="search", capacity_max=240, n_iter=600, random_state=1)
    alone = KACSRegressor(**settings).fit(X, y)
    parallel = KACSRegressor(n_jobs=2, **settings).fit(X, y)
    assert parallel.capacity_result_ == alone.capacity_result_.__class__(
        alone.capacity_result_.chosen_N, alone.capacity_result_.candidates, alone.capacity_result_.scores,
        parallel.capacity_result_.seconds)
    assert np.array_equal(parallel.predict(X), alone.predict(X))
