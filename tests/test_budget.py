"""The adaptive population budget of KACS (docs/adaptive_budget.md, kacs_cli/engine/budget.py).

What is checked: the decision rule against hand-computed windows; that `budget: fixed` holds
the population at N and reproduces a committed run of the paper;
that an adaptive budget which never grows leaves the run untouched; that the budget never
exceeds its ceiling; and that it grows under an induced cover-delete cycle and not when
coverage is stable.
"""

import numpy as np
import pandas as pd
import pytest

from kacs_cli.engine import Hyperparameters, Model, budget, train_run
from kacs_cli.engine.train import RAW_COLUMNS
from kacs_cli.engine.population import (
    N_SCAL, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_T, S_TOTAL,
)
from kacs_cli.errors import UserError
from kacs_cli.experiments.data.benchmarks import generate
from repo_support import REPO, project_config

# The main experiment retrained with KACS's engine (results/paper/main's KACS rows came from
# the engine before it; docs/results-index.md).
RESULTS = REPO / "results" / "reproduce_sorted" / "main"


def small_f3(n=6, rows=300, seed=0):
    X, y = generate("f3", n, rows, seed=seed)
    return X, y / np.abs(y).max()


# --------------------------------------------------------------------------------------------
# 1. The decision rule, window by window, on hand-set counters.
# --------------------------------------------------------------------------------------------

def decision_case(n=2, N=1000, window=100, rate=0.01, growth=0.1, n_max=5000):
    params = Hyperparameters(N=N, budget="adaptive", N_max=n_max, budget_window=window,
                             budget_cover_rate=rate, budget_growth=growth)
    bs = budget.new_budget(params)
    return np.zeros(N_SCAL, np.int64), np.array([N], np.int64), params.for_engine(), bs


def end_window(scal, N, hp, bs, n, covers_in, covers_out, deletions, total):
    """Advance the counters by one window's events and call the hook at its last iteration."""
    scal[S_T] += hp.budget_window
    scal[S_COVERS_IN] += covers_in
    scal[S_COVERS_OUT] += covers_out
    scal[S_DELETIONS] += deletions
    scal[S_TOTAL] = total
    budget.after_iteration(scal, N, hp, bs, n)
    return int(N[0])


def test_decision_rule_window_by_window():
    # n = 2: 10 inner and 5 outer submodels; a window of 100 iterations evaluates 500 outer
    # match sets, so 6 outer covers are a rate of 0.012 > 0.01, and 5 are exactly 0.01 (not above).
    n = 2
    scal, N, hp, bs = decision_case(n)
    # First window: the population was empty when it began (filling, not a cycle).
    assert end_window(scal, N, hp, bs, n, 40, 60, 30, 1000) == 1000
    # Filled, deletions, outer rate 0.012: a cycle, but one window of it is a burst.
    assert end_window(scal, N, hp, bs, n, 0, 6, 50, 1000) == 1000
    # Second window in a row: it persists, grow by ceil(0.1 * 1000).
    assert end_window(scal, N, hp, bs, n, 0, 6, 50, 1000) == 1100
    # The new room fills within a few iterations; the next window is judged as usual:
    # an outer rate exactly at the threshold counts as stable coverage.
    assert end_window(scal, N, hp, bs, n, 0, 5, 50, 1100) == 1100
    # The inner rate alone can show the cycle: 11 covers over 1000 inner sets = 0.011.
    assert end_window(scal, N, hp, bs, n, 11, 0, 50, 1100) == 1100
    assert end_window(scal, N, hp, bs, n, 11, 0, 50, 1100) == 1210
    # Covering without deletion: the budget does not bind, no cycle.
    assert end_window(scal, N, hp, bs, n, 0, 40, 0, 1210) == 1210
    assert end_window(scal, N, hp, bs, n, 0, 40, 0, 1210) == 1210
    # Bursts in every other window never persist.
    for covers in (50, 0, 50, 0):
        assert end_window(scal, N, hp, bs, n, 0, covers, 50, 1210) == 1210
    assert bs[budget.BS_STEPS] == 2 and bs[budget.BS_LAST_STEP] == 600
    # Between window ends the hook does nothing, whatever the counters say.
    scal[S_T] += 1
    scal[S_COVERS_OUT] += 1000
    scal[S_DELETIONS] += 1000
    budget.after_iteration(scal, N, hp, bs, n)
    assert N[0] == 1210 and bs[budget.BS_LAST_OUT] != scal[S_COVERS_OUT]


def test_no_decision_before_the_population_first_fills_its_budget():
    n = 2
    scal, N, hp, bs = decision_case(n)
    for _ in range(3):  # slow filling: 500 of 1000 micro-rules, heavy covering
        assert end_window(scal, N, hp, bs, n, 100, 100, 5, 500) == 1000
    end_window(scal, N, hp, bs, n, 100, 100, 5, 1000)  # full now: judged from the next window
    assert end_window(scal, N, hp, bs, n, 0, 6, 5, 1000) == 1000
    assert end_window(scal, N, hp, bs, n, 0, 6, 5, 1000) == 1100


def test_growth_stops_at_the_ceiling_exactly():
    n = 2
    scal, N, hp, bs = decision_case(n, N=1000, growth=0.5, n_max=2600)
    end_window(scal, N, hp, bs, n, 0, 0, 0, 1000)  # fill
    seen = [end_window(scal, N, hp, bs, n, 0, 100, 10, int(N[0])) for _ in range(6)]
    assert seen == [1000, 1500, 2250, 2600, 2600, 2600]
    assert bs[budget.BS_STEPS] == 3


# --------------------------------------------------------------------------------------------
# 2. budget: fixed is the engine as it was: bit for bit.
# --------------------------------------------------------------------------------------------

def small_run(**overrides):
    X, y = small_f3()
    model = Model("kacs", 6, Hyperparameters(N=800, **overrides))
    raw = model.train(X[:250], y[:250], 6000, 3, X_test=X[250:], y_test=y[250:], eval_every=1000)
    rules = model.population_frame()
    return model, raw, rules


def test_a_fixed_budget_holds_the_population_at_N_and_the_run_repeats_exactly():
    model, raw, rules = small_run()
    curve = pd.DataFrame(raw, columns=list(RAW_COLUMNS))
    assert (curve["budget"] == 800).all()
    # Covering fills the population within the first 1,000 iterations; from then on deletion
    # holds the micro-rules at N exactly, never above.
    assert (curve["micro"] == 800).all() and (curve["deletions"] > 0).all()
    assert (curve["rules"] < curve["micro"]).all()
    assert model.n_rules == len(rules) == curve["rules"].iloc[-1]
    assert model.n_micro == rules["num"].sum() == 800
    assert curve["train_mae"].iloc[-1] < 0.6 * curve["train_mae"].iloc[0]  # it learns
    # Same data, settings and seed: the same numbers, bit for bit.
    _, again, again_rules = small_run(budget="fixed")
    np.testing.assert_array_equal(again, raw)
    pd.testing.assert_frame_equal(again_rules, rules)


def test_adaptive_budget_that_never_grows_is_the_fixed_run():
    # No window ever reaches a covering rate of 1: the budget stays at N. The population
    # arrays are sized for N_max = 4 N instead, and the hook runs every window; neither may
    # change a number (the hook draws no random numbers).
    _, raw_fixed, rules_fixed = small_run()
    model, raw, rules = small_run(budget="adaptive", N_max=3200, budget_window=100,
                                   budget_cover_rate=1.0)
    assert model.capacity > 3200 and model.budget_N == 800
    np.testing.assert_array_equal(raw, raw_fixed)
    pd.testing.assert_frame_equal(rules, rules_fixed)


@pytest.mark.slow
def test_fixed_budget_reproduces_a_committed_run(shared_data_dir):
    """results/reproduce_sorted/main/runs.csv, KACS on ASN, run 0: the article's protocol,
    100,000 iterations, every reported number equal."""
    from kacs_cli.experiments.campaign.execution import RunSettings, execute_task
    from kacs_cli.experiments.campaign.tasks import Task

    committed = pd.read_csv(RESULTS / "runs.csv")
    row = committed[(committed["benchmark"] == "asn") & (committed["method"] == "kacs")
                    & (committed["run"] == 0)].iloc[0]
    config = project_config("main")
    cell = config.cell("asn")
    settings = RunSettings("main", config.protocol, config.iterations, config.eval_every,
                           str(shared_data_dir))
    out = execute_task(Task(cell, "kacs", 0, 0, 0), settings)
    for key in ("train_mae", "test_mae", "train_mse", "test_mse", "aic", "cover_rate",
                "cover_rate_inner", "cover_rate_outer"):
        assert out.record[key] == row[key], key
    for key in ("rules", "micro", "params", "N"):
        assert out.record[key] == int(row[key]), key
    assert out.record["final_N"] == 6400


# --------------------------------------------------------------------------------------------
# 3. The running mechanism: ceiling, reaction to a cover-delete cycle, stability.
# --------------------------------------------------------------------------------------------

def test_budget_never_exceeds_its_ceiling_and_the_population_never_exceeds_the_budget():
    # n = 4 with N = 60 for 45 submodels: starved from the start. Growth 0.5 from 60 runs
    # 90, 135, 203, 305, 458, 687, 1000 (capped): the ceiling is reached within the run.
    X, y = small_f3(n=4)
    params = Hyperparameters(N=60, budget="adaptive", N_max=1000, budget_window=50,
                             budget_growth=0.5)
    model = Model("kacs", 4, params)
    raw = model.train(X[:250], y[:250], 3000, 1, X_test=X[250:], y_test=y[250:], eval_every=25)
    budgets = raw[:, 11]
    assert budgets.max() == 1000 and model.budget_N == 1000
    assert set(budgets) <= {60, 90, 135, 203, 305, 458, 687, 1000}
    assert np.all(np.diff(budgets) >= 0)
    assert np.all(raw[:, 6] <= budgets)  # micro-rules within the budget at every evaluation
    assert model.n_micro <= 1000


def run_adaptive(N, N_max, iterations=12000, window=500, seed=2):
    X, y = small_f3(n=2)
    params = Hyperparameters(N=N, budget="adaptive", N_max=N_max, budget_window=window)
    model = Model("kacs", 2, params)
    raw = model.train(X[:250], y[:250], iterations, seed, X_test=X[250:], y_test=y[250:],
                      eval_every=window)
    frame = model.curve_frame(raw, 250)
    return model, frame


def test_budget_grows_under_an_induced_cover_delete_cycle():
    # n = 2 has 15 submodels; N = 15 leaves one micro-rule each: every covering displaces
    # another rule, and the outer submodels, whose inputs move as the inner ones learn, cover
    # over and over.
    model, curve = run_adaptive(N=15, N_max=3000)
    starved = curve[curve["budget"] == 15]
    assert len(starved) >= 1
    rate = Hyperparameters().budget_cover_rate
    assert (starved["cover_rate_outer"] > rate).all() and (starved["deletions"] > 0).all()
    assert model.budget_N > 15 * 4
    # Once the budget suffices the covering rate falls below the threshold, and growth stops
    # well below the ceiling: no two windows in a row above it at the end (one burst alone
    # does not grow the budget).
    assert model.budget_N < 3000
    assert (curve["budget"].tail(3) == model.budget_N).all()
    # The windows after the last growth (the first window at the final budget is the growth's).
    settled = curve[curve["budget"] == model.budget_N].iloc[1:]
    assert len(settled) >= 2
    above = (settled["cover_rate_outer"] > rate).to_numpy()
    assert not np.any(above[1:] & above[:-1])
    assert curve["cover_rate_outer"].iloc[-1] <= rate


def test_budget_stays_put_when_coverage_is_stable():
    # The same problem with an ample budget: covering dies out after the first windows.
    model, curve = run_adaptive(N=2000, N_max=3000)
    assert model.budget_N == 2000
    assert (curve["budget"] == 2000).all()


def test_train_run_reports_the_final_budget():
    X, y = small_f3(n=2)
    fixed = train_run("kacs", X[:250], y[:250], X[250:], y[250:], params=Hyperparameters(N=15),
                      iterations=1000, eval_every=500, seed=0)
    assert fixed.final["final_N"] == 15 and list(fixed.curve["budget"]) == [15, 15]
    grown = train_run("kacs", X[:250], y[:250], X[250:], y[250:],
                      params=Hyperparameters(N=15, budget="adaptive", budget_window=100),
                      iterations=1000, eval_every=500, seed=0)
    assert grown.final["final_N"] == grown.curve["budget"].iloc[-1] > 15


# --------------------------------------------------------------------------------------------
# 4. Validation.
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("overrides, name, why", [
    ({"budget": "elastic"}, "budget", "fixed, adaptive"),
    ({"budget": "adaptive", "N": 8000, "N_max": 6400}, "N_max", ">= the starting budget N = 8000"),
    ({"budget_window": 0}, "budget_window", "whole number >= 1"),
    ({"budget_window": 2.5}, "budget_window", "whole number >= 1"),
    ({"N_max": 0}, "N_max", "whole number >= 1"),
    ({"budget_cover_rate": 0.0}, "budget_cover_rate", r"\(0, 1\]"),
    ({"budget_growth": 0.0}, "budget_growth", r"\(0, 1\]"),
    ({"budget_growth": 1.5}, "budget_growth", r"\(0, 1\]"),
])
def test_budget_hyperparameters_are_validated(overrides, name, why):
    with pytest.raises(UserError, match=rf"hyperparameter {name} = .* is invalid: .*{why}"):
        Hyperparameters(**overrides)


def test_fixed_budget_ignores_the_ceiling_and_hides_the_budget_keys():
    fixed = Hyperparameters(N=30000)  # above the default N_max: only adaptive needs N <= N_max
    assert "budget" not in fixed.as_dict() and "N_max" not in fixed.as_dict()
    adaptive = Hyperparameters(budget="adaptive").as_dict()
    assert {"budget", "N_max", "budget_window", "budget_cover_rate", "budget_growth"} <= set(adaptive)
    assert Hyperparameters(**adaptive) == Hyperparameters(budget="adaptive")


def test_adaptive_budget_is_refused_for_xcsf():
    with pytest.raises(UserError, match="KACS only"):
        Model("xcsf", 2, Hyperparameters(budget="adaptive"))


def test_a_saved_adaptive_model_keeps_the_budget_it_reached(tmp_path):
    from kacs_cli import KACSRegressor

    X, y = small_f3(n=2)
    est = KACSRegressor(N=15, budget="adaptive", N_max=400, budget_window=100, n_iter=3000,
                        random_state=1).fit(X, y)
    reached = est.model_.budget_N
    assert 15 < reached <= 400 and est.n_micro_ > 15
    path = est.save(tmp_path / "grown.kacs")
    back = KACSRegressor.load(path)
    assert back.model_.budget_N == reached
    np.testing.assert_array_equal(back.model_.budget_state, est.model_.budget_state)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    # Learning goes on from the budget reached, not from the starting N.
    est.partial_fit(X[:100], y[:100])
    back.partial_fit(X[:100], y[:100])
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.model_.budget_N == est.model_.budget_N >= reached
