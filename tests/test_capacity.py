"""Capacity chosen on the user's data (engine/capacity.py): the candidates, the held-out rows,
the choice, and the refit: a searched model is the fixed-budget model at the chosen N."""

import json
from concurrent.futures import Future

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

    def fake_candidate(method, X_fit, y_fit, X_held, y_held, *, params, iterations, seed, weight=None,
                       test_weight=None, refine_rows=None, strengths=None):
        seen.append((params.N, params.capacity, len(X_fit), len(X_held), seed))
        return (scores[params.N],), 1.5

    monkeypatch.setattr(capacity, "candidate_mae", fake_candidate)
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
    campaign(resolve_config(json.loads(json.dumps(raw))), tmp_path / "out", jobs=1)
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
    def fake_score(method, X, y, fit, held, params, N, iterations, seed, weight=None, refine_rows=None):
        return (scores[N],), 1.0

    monkeypatch.setattr(capacity, "_score", fake_score)
    X, y = np.random.default_rng(0).random((40, 2)), np.zeros(40)
    params = Hyperparameters(N=100, capacity="search", capacity_max=800)
    sequential = capacity.search("kacs", X, y, params, iterations=10, seed=3)
    for jobs in (2, 3):
        for order in range(4):
            pool = _Pool(monkeypatch, jobs, order)
            assert capacity.search("kacs", X, y, params, iterations=10, seed=3, n_jobs=jobs) == sequential
            # Trained ahead of the stopping rule, at most `jobs` at a time: at most that many
            # trainings past the stop.
            assert pool.most_in_flight <= jobs
            assert len(pool.calls) <= len(sequential.candidates) + jobs


class _Pool:
    """`jobs` processes as the search sees them, in this process (where the fake scores live): a
    submitted call runs when `wait` picks it among the `jobs` oldest not yet run, in an order
    drawn from `order` (0: oldest first), so that the trainings finish in any order."""

    def __init__(self, monkeypatch, jobs, order):
        self.jobs, self.rng, self.queue, self.calls, self.most_in_flight = jobs, np.random.default_rng(order), [], [], 0
        self.first = order == 0
        monkeypatch.setattr(capacity, "executor", lambda width: self)
        monkeypatch.setattr(capacity, "wait", self.wait)

    def submit(self, function, *args):
        future = Future()
        self.queue.append((future, function, args))
        self.calls.append(args)
        self.most_in_flight = max(self.most_in_flight, sum(not f.done() for f, _, _ in self.queue))
        return future

    def wait(self, futures, return_when=None):
        running = [job for job in self.queue if not job[0].done()][:self.jobs]
        future, function, args = running[0 if self.first else int(self.rng.integers(len(running)))]
        future.set_result(function(*args))
        return {future}, set()


def test_the_final_fit_trained_ahead_is_the_chosen_candidates(monkeypatch):
    scores = {100: 0.30, 200: 0.20, 400: 0.25, 800: 0.10}  # the ladder stops at 400: 200 chosen
    monkeypatch.setattr(capacity, "_score", lambda method, X, y, fit, held, params, N, *rest: ((scores[N],), 1.0))
    X, y = np.random.default_rng(0).random((40, 2)), np.zeros(40)
    params = Hyperparameters(N=100, capacity="search", capacity_max=800)
    # One process: the fit at the chosen candidate is the search's last call.
    final = capacity.FinalFit(lambda at, piece: ("fit", at.N, piece))
    result = capacity.search("kacs", X, y, params, iterations=10, seed=3, final=final)
    assert result.chosen_N == 200 and final.ahead(result) == [("fit", 200, 0)] and list(final.results) == [(200, None, None)]
    for pieces in (1, 3):
        chosen_ahead = 0
        for jobs in (2, 3):
            for order in range(4):
                pool = _Pool(monkeypatch, jobs, order)
                final = capacity.FinalFit(lambda at, piece: ("fit", at.N, piece), pieces=pieces)
                assert capacity.search("kacs", X, y, params, iterations=10, seed=3, n_jobs=jobs, final=final) == result
                # Pieces ahead only at a best candidate so far, each once; the chosen one's are
                # there whenever they were started, and no more than `jobs` ran at once.
                ahead = [(args[0].N, args[1]) for args in pool.calls if len(args) == 2]
                assert len(set(ahead)) == len(ahead) and {N for N, _ in ahead} <= {100, 200}
                assert final.ahead(result) == [("fit", 200, k) if (200, k) in ahead else None for k in range(pieces)]
                assert pool.most_in_flight <= jobs
                chosen_ahead += sum(N == 200 for N, _ in ahead)
        assert chosen_ahead > 0  # the free processes did train pieces of the chosen fit ahead


@pytest.mark.slow
@pytest.mark.parametrize("refinement", [False, True])
def test_a_parallel_search_fits_the_same_model(tmp_path, refinement):
    # With two processes the fit at the chosen budget is trained in a worker while the larger
    # candidate still trains (capacity.FinalFit): the fitted state is the one-process fit's.
    X, y = generate("f1", 2, 150, seed=2)
    settings = dict(N=60, capacity="search", capacity_max=240, n_iter=600, random_state=1, refinement=refinement)
    alone = KACSRegressor(**settings).fit(X, y)
    parallel = KACSRegressor(n_jobs=2, **settings).fit(X, y)
    assert parallel.capacity_result_ == alone.capacity_result_.__class__(
        alone.capacity_result_.chosen_N, alone.capacity_result_.candidates, alone.capacity_result_.scores,
        parallel.capacity_result_.seconds)
    assert np.array_equal(parallel.predict(X), alone.predict(X))
    assert np.array_equal(parallel.zhat_range_, alone.zhat_range_) and parallel.n_rules_ == alone.n_rules_
    assert parallel.n_train_calls_ == alone.n_train_calls_ == 1
    if refinement:
        a, b = alone.refine_result_, parallel.refine_result_
        assert (a.iterations, a.fit_mse_before, a.fit_mse_after) == (b.iterations, b.fit_mse_before, b.fit_mse_after)


# ------------------------------------------------ the search's folds, channels and start


@pytest.mark.parametrize("rows, k", [(10, 2), (11, 3), (37, 5), (5, 5)])
def test_the_folds_partition_the_train_rows(rows, k):
    parts = capacity.folds(rows, k, seed=4)
    assert len(parts) == k
    held = np.concatenate([h for _, h in parts])
    assert sorted(held.tolist()) == list(range(rows))  # every row held out exactly once
    for fit, h in parts:
        assert sorted(np.concatenate([fit, h]).tolist()) == list(range(rows)) and not set(fit) & set(h)
        assert list(fit) == sorted(fit) and list(h) == sorted(h)
    sizes = [len(h) for _, h in parts]
    assert max(sizes) - min(sizes) <= 1
    again = capacity.folds(rows, k, seed=4)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(parts, again))  # drawn from the seed
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(parts, capacity.folds(rows, k, seed=5)))


def test_one_fold_is_the_one_held_out_part_and_k_folds_are_the_folds():
    params = Hyperparameters(capacity="search", capacity_validation=0.25)
    (fit, held), = capacity.validation_parts(40, params, seed=7)
    expected = capacity.held_out_rows(40, 0.25, seed=7)
    assert np.array_equal(fit, expected[0]) and np.array_equal(held, expected[1])
    folded = capacity.validation_parts(40, params.with_overrides(capacity_folds=4), seed=7)
    assert [len(h) for _, h in folded] == [10, 10, 10, 10]
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folded, capacity.folds(40, 4, seed=7)))


def test_the_ladder_starts_at_capacity_min_when_given():
    assert capacity.candidate_budgets(Hyperparameters(capacity="search", capacity_min=1600)) == (
        1600, 3200, 6400, 12800, 25600, 51200)
    assert capacity.candidate_budgets(Hyperparameters(N=100, capacity="search", capacity_min=300,
                                                      capacity_max=1000)) == (300, 600)
    assert capacity.candidate_budgets(Hyperparameters(capacity="search", capacity_min=60000)) == (60000,)


def _fake_scores(monkeypatch, table, calls=None):
    """capacity._score replaced by table[(channels, N)] (a number, or one per fold by the
    fold's first held-out row), 1 second each; `calls` collects (channels, N, held rows)."""
    def fake_score(method, X, y, fit, held, params, N, iterations, seed, weight=None, refine_rows=None):
        if calls is not None:
            calls.append((params.channels, N, tuple(held)))
        value = table[(params.channels, N)]
        return (value[int(held[0])] if isinstance(value, dict) else value,), 1.0

    monkeypatch.setattr(capacity, "_score", fake_score)


@pytest.mark.parametrize("table, chosen", [
    # n = 2: n + 1 = 3 channels, 2n + 1 = 5; each ladder climbs while its score falls.
    ({(3, 100): 0.30, (3, 200): 0.20, (3, 400): 0.25, (5, 100): 0.40, (5, 200): 0.30, (5, 400): 0.10}, (5, 400)),
    # equal best scores in both ladders: the fewer channels win
    ({(3, 100): 0.30, (3, 200): 0.20, (3, 400): 0.25, (5, 100): 0.20, (5, 200): 0.20, (5, 400): 0.10}, (3, 200)),
    # equal scores in one ladder stop it; the smaller budget wins
    ({(3, 100): 0.20, (3, 200): 0.20, (3, 400): 0.10, (5, 100): 0.30, (5, 200): 0.25, (5, 400): 0.20}, (3, 100)),
])
def test_the_channel_search_chooses_the_argmin_of_its_scores_fewer_channels_then_smaller_N(monkeypatch, table,
                                                                                           chosen):
    _fake_scores(monkeypatch, table)
    X, y = np.random.default_rng(0).random((40, 2)), np.zeros(40)
    params = Hyperparameters(N=100, capacity="search", capacity_max=400, capacity_channels="both", channels=7)
    result = capacity.search("kacs", X, y, params, iterations=10, seed=3)
    tried = list(zip(result.channels, result.candidates))
    assert result.scores == tuple(table[c] for c in tried)
    for m in (3, 5):  # each ladder: its budgets in order, up to its stopping rule and no further
        ladder = [table[(m, N)] for N in (100, 200, 400)]
        stop = next((i for i in range(1, 3) if ladder[i] >= min(ladder[:i])), 2)
        assert [N for c, N in tried if c == m] == [100, 200, 400][:stop + 1]
    # An independent argmin: lowest score, then fewer channels, then smaller N.
    assert min(tried, key=lambda c: (table[c], c[0], c[1])) == chosen
    assert (result.chosen_channels, result.chosen_N) == chosen
    assert capacity.chosen_params(params, result) == params.with_overrides(channels=chosen[0], N=chosen[1])


def test_the_score_over_folds_is_the_weighted_mae_of_every_held_out_prediction(monkeypatch):
    """Four rows, y = 1, 2, 3, 4 with weights 1, 2, 3, 4, and a candidate predicting 0: each
    fold's score is its held-out rows' weighted MAE (as candidate_mae gives it), and the search's
    score (1 + 4 + 9 + 16) / 10 = 3.0 whatever the folds (their plain mean would not be)."""
    seen = []

    def fake_candidate(method, X_fit, y_fit, X_held, y_held, *, params, iterations, seed, weight=None,
                       test_weight=None, refine_rows=None, strengths=None):
        seen.append((sorted(y_fit), list(weight), sorted(y_held), list(test_weight)))
        return (float(np.sum(test_weight * np.abs(y_held)) / np.sum(test_weight)),), 0.0

    monkeypatch.setattr(capacity, "candidate_mae", fake_candidate)
    X, y, weight = np.arange(4.0)[:, None], np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.0])
    for seed in range(4):
        seen.clear()
        result = capacity.search("kacs", X, y, Hyperparameters(N=100, capacity="search", capacity_max=100,
                                                               capacity_folds=2), iterations=10, seed=seed,
                                 weight=weight)
        assert result.scores == (3.0,)
        # Each fold trains on its fit rows' weights and is scored with its held-out rows' weights.
        assert sorted(sum((held for _, _, held, _ in seen), [])) == [1.0, 2.0, 3.0, 4.0]
        assert all(w == f and tw == h for f, w, h, tw in seen)
    assert capacity.pooled_score([0.5, 0.2], [3.0, 1.0]) == pytest.approx((3 * 0.5 + 1 * 0.2) / 4)


def test_k_folds_train_every_candidate_on_every_fold(monkeypatch):
    calls = []
    folds = capacity.folds(30, 3, seed=3)
    by_fold = {int(h[0]): i for i, (_, h) in enumerate(folds)}
    # Fold i scores 0.1 i above the candidate's level: the mean over equal folds adds 0.1.
    table = {(0, N): {first: level + 0.1 * i for first, i in by_fold.items()}
             for N, level in ((100, 0.5), (200, 0.4), (400, 0.45))}
    _fake_scores(monkeypatch, table, calls)
    X, y = np.random.default_rng(0).random((30, 2)), np.zeros(30)
    result = capacity.search("kacs", X, y, Hyperparameters(N=100, capacity="search", capacity_max=400,
                                                           capacity_folds=3), iterations=10, seed=3)
    assert result.candidates == (100, 200, 400) and result.chosen_N == 200 and result.seconds == 9.0
    assert result.scores == pytest.approx((0.6, 0.5, 0.55))
    assert calls == [(0, N, tuple(h)) for N in (100, 200, 400) for _, h in folds]


@pytest.mark.parametrize("settings", [
    dict(capacity_folds=3, capacity_channels="both"),
    dict(capacity_folds=2, capacity_channels="both", capacity_min=50),
    dict(capacity_folds=1, capacity_channels="both"),
    dict(capacity_folds=4),
])
def test_a_parallel_search_over_folds_and_channels_is_the_sequential_search(monkeypatch, settings):
    rng = np.random.default_rng(1)
    table = {(m, N): {first: float(rng.random()) for first in range(40)} for m in (0, 3, 5)
             for N in (50, 100, 200, 400, 800)}
    for m in (0, 3, 5):  # falling for a while, so that the ladders climb before they stop
        for step, N in enumerate((50, 100, 200, 400, 800)):
            table[(m, N)] = {first: v - 0.3 * min(step, 2 + m % 2) for first, v in table[(m, N)].items()}
    _fake_scores(monkeypatch, table)
    X, y = np.random.default_rng(0).random((40, 2)), np.zeros(40)
    params = Hyperparameters(N=100, capacity="search", capacity_max=800, **settings)
    sequential = capacity.search("kacs", X, y, params, iterations=10, seed=3)
    parts = 1 if params.capacity_folds == 1 else params.capacity_folds
    for jobs in (2, 3, 8):
        for order in range(3):
            pool = _Pool(monkeypatch, jobs, order)
            assert capacity.search("kacs", X, y, params, iterations=10, seed=3, n_jobs=jobs) == sequential
            # Past a ladder's stop, at most `jobs` candidates (each on every part) for nothing.
            ladders = 1 if params.capacity_channels == "given" else 2
            assert len(pool.calls) <= parts * (len(sequential.candidates) + jobs * ladders)


def test_the_searchs_settings_are_refused_in_one_line():
    with pytest.raises(UserError, match=r"capacity_folds = 0 is invalid: the number of folds must be a whole number"):
        Hyperparameters(capacity="search", capacity_folds=0)
    with pytest.raises(UserError, match="capacity_folds acts in the capacity search; turn on capacity: search"):
        Hyperparameters(capacity_folds=3)
    with pytest.raises(UserError, match="capacity_channels acts in the capacity search"):
        Hyperparameters(capacity_channels="both")
    with pytest.raises(UserError, match="capacity_min acts in the capacity search"):
        Hyperparameters(capacity_min=1600)
    X, y = np.random.default_rng(0).random((6, 2)), np.arange(6.0)
    with pytest.raises(UserError, match=r"^capacity_folds = 7 needs at least 7 train rows, got 6; lower capacity_folds"):
        capacity.search("kacs", X, y, Hyperparameters(capacity="search", capacity_folds=7), iterations=10, seed=0)
    with pytest.raises(UserError, match=r"^capacity='search': capacity_folds = 7 needs at least 7 train rows, got 6"):
        KACSRegressor(capacity="search", capacity_folds=7, n_iter=10).fit(X, y)
    from kacs_cli.engine import registry
    searched = Hyperparameters(capacity="search", capacity_channels="both")
    assert registry.refusal("kacs", searched) is None
    assert registry.refusal("xcsf", searched) == (
        "capacity_channels", "capacity_channels: both chooses among outer channel counts, which KACS has and XCSF "
                             "has not; drop it from XCSF")
    with pytest.raises(TypeError, match="capacity_channels"):  # not an XCSF estimator's parameter
        XCSFRegressor(capacity="search", capacity_channels="both")


def test_a_config_refuses_a_channel_search_for_xcsf_and_folds_without_the_search(tmp_path):
    base = {"experiment": "s", "benchmarks": [{"name": "f1", "n": 2, "samples": 60}],
            "protocol": {"name": "main", "runs": 1}, "iterations": 100, "eval_every": 100}
    with pytest.raises(UserError, match=r"methods.x.capacity_channels: capacity_channels: both chooses among"):
        resolve_config({**base, "methods": {"x": {"method": "xcsf-recommended", "capacity_channels": "both"}}})
    with pytest.raises(UserError, match="capacity_folds acts in the capacity search"):
        resolve_config({**base, "methods": {"k": {"method": "kacs", "capacity_folds": 3}}})
    with pytest.raises(UserError, match=r"methods.k.capacity_folds: must be a whole number >= 1, got 0"):
        resolve_config({**base, "methods": {"k": {"method": "kacs-recommended", "capacity_folds": 0}}})


def test_the_folded_search_is_deterministic_for_a_seed():
    X, y = generate("f1", 2, 90, seed=3)
    params = Hyperparameters(N=30, capacity="search", capacity_max=60, capacity_folds=3, capacity_channels="both")
    a = capacity.search("kacs", X, y, params, iterations=300, seed=2)
    b = capacity.search("kacs", X, y, params, iterations=300, seed=2)
    assert (a.chosen_N, a.chosen_channels, a.candidates, a.channels, a.scores) == (
        b.chosen_N, b.chosen_channels, b.candidates, b.channels, b.scores)
    assert set(a.channels) == {3, 5} and a.chosen_channels in (3, 5)
    other = capacity.search("kacs", X, y, params, iterations=300, seed=9)
    assert other.scores != a.scores  # other folds, other learner seed


def test_the_searched_structure_is_the_fixed_estimator_at_the_chosen_N_and_channels(tmp_path):
    from kacs_cli import load

    X, y = generate("f1", 2, 120, seed=0)
    options = dict(n_iter=600, random_state=4)
    searched = KACSRegressor(N=60, capacity="search", capacity_max=120, capacity_folds=2, capacity_channels="both",
                             channels="n + 1", **options).fit(X, y)
    result = searched.capacity_result_
    assert searched.model_.n_channels == result.chosen_channels and searched.capacity_N_ == result.chosen_N
    fixed = KACSRegressor(N=result.chosen_N, channels=result.chosen_channels, **options).fit(X, y)
    assert np.array_equal(searched.predict(X), fixed.predict(X))
    searched.save(tmp_path / "s.kacs")
    assert np.array_equal(load(tmp_path / "s.kacs").predict(X), fixed.predict(X))


@pytest.mark.slow
def test_a_campaign_records_the_chosen_channels_only_where_the_search_chose_them(tmp_path):
    raw = {"experiment": "capm", "benchmarks": [{"name": "f1", "n": 2, "samples": 100}],
           "methods": {"kacs-cap": {"method": "kacs", "N": 40, "capacity": "search", "capacity_max": 80},
                       "kacs-capm": {"method": "kacs", "N": 40, "capacity": "search", "capacity_max": 80,
                                     "capacity_channels": "both", "capacity_folds": 2, "capacity_min": 20},
                       "kacs-caps": {"method": "kacs", "N": 40, "capacity": "search", "capacity_max": 40,
                                     "refinement": True, "smoothness": "search"}},
           "protocol": {"name": "main", "runs": 1}, "iterations": 300, "eval_every": 300}
    campaign(resolve_config(json.loads(json.dumps(raw))), tmp_path / "out")
    runs = pd.read_csv(tmp_path / "out" / "runs.csv").set_index("method")
    assert runs.loc["kacs-capm", "capacity_channels"] in (3, 5) and runs.loc["kacs-capm", "capacity_N"] in (20, 40, 80)
    assert pd.isna(runs.loc["kacs-cap", "capacity_channels"])
    assert runs.loc["kacs-caps", "capacity_smoothness"] in capacity.SMOOTHNESS_LADDER
    assert pd.isna(runs.loc["kacs-cap", "capacity_smoothness"]) and pd.isna(runs.loc["kacs-capm", "capacity_smoothness"])
    again = resolve_config(json.loads(json.dumps({**raw, "methods": {"kacs-cap": raw["methods"]["kacs-cap"]}})))
    assert "capacity_folds" not in again.to_yaml()  # a search without the levers resolves as before


def test_the_search_study_turns_on_its_levers_and_changes_nothing_else():
    """configs/suite_search.yaml: the recommended KACS with its search on 5 folds, over n + 1
    and 2n + 1 channels, started at 1,600, and with its search choosing the smoothness strength,
    beside the recommended KACS as the suite ran it."""
    cell, suite = first_cell("suite_search"), first_cell("suite_recommended")
    start, searched = cell.params["kacs-recommended"], cell.params["kacs-recommended-search"]
    assert start == suite.params["kacs-recommended"]
    assert vars(searched) == {**vars(start), "capacity_folds": 5, "capacity_channels": "both", "capacity_min": 1600}
    assert capacity.candidate_budgets(searched) == (1600, 3200, 6400, 12800, 25600, 51200)
    assert vars(cell.params["kacs-recommended-smoothsearch"]) == {**vars(start), "smoothness": "search"}
    assert "gbr" in cell.params


def test_the_benchmarks_search_study_turns_on_the_same_levers_and_xcsf_its_two():
    """configs/search.yaml: on the article's benchmarks, the suite study's KACS levers as that
    study sets them, and XCSF's search on 5 folds from 1,600 (the levers that apply to it),
    each beside its recommended setting as results/variance ran it."""
    cell, variance, suite = first_cell("search"), first_cell("variance"), first_cell("suite_search")
    for method in ("kacs-recommended", "xcsf-recommended"):
        assert cell.params[method] == variance.params[method]
    start = cell.params["kacs-recommended"]
    for lever in ("kacs-recommended-search", "kacs-recommended-smoothsearch"):
        changed = {k: v for k, v in vars(suite.params[lever]).items() if v != vars(suite.params["kacs-recommended"])[k]}
        assert changed and vars(cell.params[lever]) == {**vars(start), **changed}
    xcsf = cell.params["xcsf-recommended"]
    assert vars(cell.params["xcsf-recommended-search"]) == {**vars(xcsf), "capacity_folds": 5, "capacity_min": 1600}
    assert "gbr" in cell.params


def test_the_suite_xcsf_search_study_sets_xcsfs_two_levers():
    """configs/suite_search_xcsf.yaml: the recommended XCSF of the suite studies, and the same
    with its search on 5 folds from 1,600."""
    cell, suite = first_cell("suite_search_xcsf"), first_cell("suite_variance")
    xcsf = cell.params["xcsf-recommended"]
    assert xcsf == suite.params["xcsf-recommended"]
    assert vars(cell.params["xcsf-recommended-search"]) == {**vars(xcsf), "capacity_folds": 5, "capacity_min": 1600}
    assert capacity.candidate_budgets(cell.params["xcsf-recommended-search"]) == (1600, 3200, 6400, 12800, 25600, 51200)


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_one_fold_scores_each_candidate_by_its_training_on_the_one_held_out_part_bit_for_bit(method):
    """capacity_folds 1 is the search as it was: each score is, bit for bit, the test MAE that
    one training of the candidate on the fit rows gives on the held-out part."""
    from kacs_cli.engine.train import train_run

    X, y = generate("f1", 2, 100, seed=5)
    params = Hyperparameters(N=30, capacity="search", capacity_max=120, P_hash=0.8)
    result = capacity.search(method, X, y, params, iterations=300, seed=6)
    fit, held = capacity.held_out_rows(100, 0.2, seed=6)
    for N, score in zip(result.candidates, result.scores):
        alone = train_run(method, X[fit], y[fit], X[held], y[held], params=Hyperparameters(N=N, P_hash=0.8),
                          iterations=300, eval_every=300, seed=6)
        assert score == alone.final["test_mae"]
    assert result.candidates == (30, 60, 120)[:len(result.candidates)] and result.channels == ()
    assert result.chosen_channels is None


def test_a_smoothness_search_scores_each_candidate_at_its_best_strength_bit_for_bit():
    """smoothness: search: each candidate's score is the lowest of the test MAEs that its
    training on the fit rows, refined at each strength of the ladder, gives on the held-out
    part (one train_run per strength, redone here), and its strength the one that gave it."""
    from kacs_cli.engine.train import train_run

    X, y = generate("f1", 2, 100, seed=5)
    y = y + 0.2 * np.random.default_rng(5).normal(size=100)
    params = Hyperparameters(N=30, capacity="search", capacity_max=60, P_hash=0.8, refinement=True,
                             smoothness="search")
    result = capacity.search("kacs", X, y, params, iterations=300, seed=6)
    fit, held = capacity.held_out_rows(100, 0.2, seed=6)
    assert len(result.smoothness) == len(result.candidates)
    for N, score, strength in zip(result.candidates, result.scores, result.smoothness):
        maes = [train_run("kacs", X[fit], y[fit], X[held], y[held], iterations=300, eval_every=300, seed=6,
                          params=Hyperparameters(N=N, P_hash=0.8, refinement=True, refine_smoothness=mu)
                          ).final["test_mae"] for mu in capacity.SMOOTHNESS_LADDER]
        assert score == min(maes) and strength == capacity.SMOOTHNESS_LADDER[int(np.argmin(maes))]
    chosen = result.candidates.index(result.chosen_N)
    assert result.chosen_smoothness == result.smoothness[chosen]
    assert capacity.chosen_params(params, result) == params.with_overrides(
        N=result.chosen_N, smoothness="fixed", refine_smoothness=result.chosen_smoothness)


def test_a_smoothness_searched_estimator_is_the_fixed_estimator_at_the_chosen_strength():
    X, y = generate("f1", 2, 120, seed=0)
    y = y + 0.2 * np.random.default_rng(0).normal(size=120)
    options = dict(n_iter=600, random_state=4, refinement=True)
    searched = KACSRegressor(N=60, capacity="search", capacity_max=60, smoothness="search", **options).fit(X, y)
    strength = searched.capacity_result_.chosen_smoothness
    assert strength in capacity.SMOOTHNESS_LADDER and searched.refine_result_.smoothness == strength
    fixed = KACSRegressor(N=60, refine_smoothness=strength, **options).fit(X, y)
    assert np.array_equal(searched.predict(X), fixed.predict(X))
    given = KACSRegressor(N=60, capacity="search", capacity_max=60, **options).fit(X, y).capacity_result_
    assert given.smoothness == () and given.chosen_smoothness is None


def test_a_smoothness_search_needs_the_capacity_search_and_refinement():
    with pytest.raises(UserError, match="smoothness acts in the capacity search; turn on capacity: search"):
        Hyperparameters(refinement=True, smoothness="search")
    with pytest.raises(UserError, match="the smoothness strength acts in the refinement"):
        Hyperparameters(capacity="search", smoothness="search")


@pytest.mark.slow
def test_a_folded_channel_search_in_two_processes_is_the_search_in_one():
    X, y = generate("f1", 2, 120, seed=2)
    settings = dict(N=30, capacity="search", capacity_max=60, capacity_folds=2, capacity_channels="both",
                    n_iter=400, random_state=1)
    alone = KACSRegressor(**settings).fit(X, y)
    parallel = KACSRegressor(n_jobs=2, **settings).fit(X, y)
    a, b = alone.capacity_result_, parallel.capacity_result_
    assert (a.chosen_N, a.chosen_channels, a.candidates, a.channels, a.scores) == (
        b.chosen_N, b.chosen_channels, b.candidates, b.channels, b.scores)
    assert np.array_equal(parallel.predict(X), alone.predict(X))
