"""The sorted engine (engine/layout.py, selected by KACS_ENGINE=sorted): the layout's
invariants after every iteration, prediction independent of the layout, the same numbers
across evaluation points and processes, and test errors statistically like the re-sorting
engine's."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kacs_cli.engine import kacs, layout as layout_module
from kacs_cli.engine.kacs_predict import predict_components
from kacs_cli.engine.kacs_submodels import sort_by_submodel
from kacs_cli.engine.layout import ENGINE_SWITCH, close_layout, open_layout
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.population import S_DEATHS, S_P, S_TOTAL, permute_rules, rule_fields
from kacs_cli.engine.train import Model
from kacs_cli.experiments.data.benchmarks import generate

from repo_support import REPO


@pytest.fixture
def sorted_engine(monkeypatch):
    monkeypatch.setenv(ENGINE_SWITCH, "sorted")


def _data(n, rows, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    y = np.sin(4 * X[:, 0]) + X[:, -1] ** 2
    y = (y - y.min()) / (y.max() - y.min())
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


def check_layout(model):
    """Every invariant of the layout between two iterations."""
    pop, lay = model.pop, model.layout
    base, end = lay.base, lay.end
    S = end.shape[0]
    assert pop.scal[S_P] == base[S]
    assert pop.scal[S_DEATHS] == 0
    assert base[0] == 0 and np.all(np.diff(base) >= 0)
    assert np.all(base[:S] <= end) and np.all(end <= base[1:])
    num, sub = pop.counts.num, pop.counts.sub
    for s in range(S):
        assert np.all(sub[base[s]:end[s]] == s), f"segment {s} holds another submodel's rule"
        assert np.all(num[base[s]:end[s]] > 0), f"segment {s} holds a dead rule"
        assert np.all(num[end[s]:base[s + 1]] == 0), f"segment {s} has a live spare slot"
    P = pop.scal[S_P]
    # No rule lost: the numerosities add up to the bookkeeping's total.
    assert num[:P].sum() == pop.scal[S_TOTAL]
    live = num[:P] > 0
    assert live.sum() == (end - base[:S]).sum()
    assert pop.fsum[0] == pytest.approx(pop.reals.F[:P][live].sum(), rel=1e-9, abs=1e-12)
    # Each submodel's live rules are exactly its segment.
    counts = np.bincount(sub[:P][live], minlength=S)
    assert np.array_equal(counts, end - base[:S])


SETTINGS = [
    {},
    {"nu": 5.0, "channels": 3},
    {"semantics": "article"},
    {"do_subsumption": False, "theta_GA": 5.0},
]


@pytest.mark.slow
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "default")
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
def test_the_layout_holds_after_every_iteration(sorted_engine, settings, missing):
    X, y = _data(3, 200, missing=missing)
    model = Model("kacs", 3, Hyperparameters(N=120, **settings))
    assert model.layout is not None
    work, sc = model.work, model.scratch
    # Warm up through the driver (the population grows, opens and closes twice) ...
    model.train(X, y, 300, seed=1, eval_every=150)
    P = int(model.pop.scal[S_P])
    assert np.all(np.diff(model.pop.counts.sub[:P]) >= 0), "closed population not sorted"
    # ... then iteration by iteration with the layout open.
    open_layout(model.pop, model.layout, sc, work.order, work.sort_f, work.sort_i)
    check_layout(model)
    rng = np.random.default_rng(2)
    for r in rng.integers(0, X.shape[0], 400):
        kacs.train_step(model.pop, work, X[r], y[r], 3, model.hp, sc, None, model.layout)
        check_layout(model)
    close_layout(model.pop, model.layout, sc, work.order, work.sort_f, work.sort_i)
    P = int(model.pop.scal[S_P])
    assert np.all(model.pop.counts.num[:P] > 0)
    assert model.pop.counts.num[:P].sum() == model.pop.scal[S_TOTAL]


def test_a_full_layout_is_rebuilt_and_no_rule_is_lost(sorted_engine):
    """A layout without spare slots: every birth overflows and must still join its segment."""
    X, y = _data(2, 100)
    model = Model("kacs", 2, Hyperparameters(N=60))
    model.train(X, y, 200, seed=0)
    work, sc, lay = model.work, model.scratch, model.layout
    layout_module.relayout(model.pop, lay, sc, work.order, work.sort_f, work.sort_i,
                           int(model.pop.scal[S_P]), layout_module.DENSE)
    check_layout(model)
    assert np.all(lay.end == lay.base[1:])  # no spare slot anywhere
    for r in range(60):
        kacs.train_step(model.pop, work, X[r], y[r], 2, model.hp, sc, None, lay)
        check_layout(model)


def _components(model, X):
    rows, n, n_q = X.shape[0], model.n, model.n_channels
    psihat, zhat, phihat = np.empty((rows, n * n_q)), np.empty((rows, n_q)), np.empty((rows, n_q))
    y_hat = predict_components(model.pop, X, n, psihat, zhat, phihat)
    return psihat, zhat, phihat, y_hat


def _permute(model, order):
    P = int(model.pop.scal[S_P])
    permute_rules(model.pop, np.asarray(order, np.int64), P, np.zeros(model.capacity),
                  np.zeros(model.capacity, np.int64))


def test_prediction_does_not_depend_on_the_layout():
    """The re-sorting engine's population, unsorted; sorted by submodel (stable), spread into
    segments and packed again, it predicts the same bits: each (submodel, row) sum adds its
    rules in population order, and a stable sort keeps that order within a submodel. Under
    an arbitrary permutation the sums add in another order: equal within rounding."""
    X, y = _data(3, 150)
    model = Model("kacs", 3, Hyperparameters(N=200))
    model.train(X, y, 250, seed=3)  # 250: re-sorted at 200, then rules appended
    P = int(model.pop.scal[S_P])
    assert np.any(np.diff(model.pop.counts.sub[:P]) < 0), "population already sorted"
    X_eval, _ = _data(3, 64, seed=9, missing=0.1)
    before = _components(model, X_eval)
    sort_by_submodel(model.pop, model.work, model.scratch)
    after_sort = _components(model, X_eval)
    lay = layout_module.new_layout(model.n_submodels)
    work, sc = model.work, model.scratch
    open_layout(model.pop, lay, sc, work.order, work.sort_f, work.sort_i)
    assert model.pop.scal[S_P] > P  # spare slots in between
    close_layout(model.pop, lay, sc, work.order, work.sort_f, work.sort_i)
    after_layout = _components(model, X_eval)
    for a, b, c in zip(before, after_sort, after_layout):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    _permute(model, np.random.default_rng(0).permutation(P))
    shuffled = _components(model, X_eval)
    for a, b in zip(before, shuffled):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def _fingerprint(model):
    P = int(model.pop.scal[S_P])
    return {name: arr[:P].copy() for name, arr in rule_fields(model.pop).items()}


def test_same_seed_same_numbers_whatever_the_evaluation_points(sorted_engine):
    """Splitting a training call at evaluation points closes and reopens the layout: it
    reopens into the same slots, so no number moves."""
    X, y = _data(3, 150)
    runs = []
    for eval_every in (600, 600, 37):
        model = Model("kacs", 3, Hyperparameters(N=200))
        curve = model.train(X, y, 600, seed=5, eval_every=eval_every)
        # The last row's errors, rules and micro-rules (its counters cover the last interval).
        runs.append((curve[-1, :7], _fingerprint(model)))
    for curve, fields in runs[1:]:
        assert np.array_equal(curve, runs[0][0], equal_nan=True)
        for name in fields:
            assert np.array_equal(fields[name], runs[0][1][name]), name


def test_weighted_rows_train_and_are_deterministic(sorted_engine):
    X, y = _data(2, 80)
    weight = np.random.default_rng(1).integers(0, 4, 80).astype(float)
    curves = [Model("kacs", 2, Hyperparameters(N=100)).train(X, y, 400, 2, weight=weight)
              for _ in range(2)]
    assert np.array_equal(curves[0], curves[1], equal_nan=True) and np.isfinite(curves[0][:, 1]).all()


def _mae(function, n, seed):
    X, y = generate(function, n, 600, seed=0)
    y = (y - y.min()) / (y.max() - y.min())
    model = Model("kacs", n, Hyperparameters(N=800))
    curve = model.train(X[:400], y[:400], 12_000, seed, X_test=X[400:], y_test=y[400:])
    return curve[-1, 2]


@pytest.mark.slow
@pytest.mark.parametrize("function", ["f1", "f2", "f3", "f4"])
def test_test_error_is_like_the_resorting_engines(function, monkeypatch):
    """Other trajectories, the same algorithm: over five seeds the two engines' mean test
    MAE agree within a tolerance of a few standard errors of their difference."""
    n = 3
    old = np.array([_mae(function, n, seed) for seed in range(5)])
    monkeypatch.setenv(ENGINE_SWITCH, "sorted")
    new = np.array([_mae(function, n, seed) for seed in range(5)])
    assert not np.array_equal(old, new), "the switch did not change the engine"
    se = np.sqrt(old.var(ddof=1) / len(old) + new.var(ddof=1) / len(new))
    assert abs(new.mean() - old.mean()) <= max(4 * se, 0.05 * old.mean()), (old, new)


CAMPAIGN = """
experiment: tiny
hyperparameters: {N: 300}
benchmarks: [{name: f3, n: 3, samples: 200}]
protocol: {name: main, runs: 3}
iterations: 1000
eval_every: 500
methods: [kacs]
"""


@pytest.mark.slow
def test_campaign_numbers_do_not_depend_on_jobs(tmp_path):
    """`kacs run --jobs 1` and `--jobs 2` under the switch (new processes, so that the worker
    processes inherit it) give the same numbers, and other numbers than without it."""
    config = tmp_path / "tiny.yaml"
    config.write_text(CAMPAIGN)
    outs = {}
    for label, jobs, engine in (("one", 1, "sorted"), ("two", 2, "sorted"), ("old", 1, "")):
        out = tmp_path / label
        env = {**os.environ, ENGINE_SWITCH: engine}
        kacs_command = str(Path(sys.executable).parent / "kacs")
        subprocess.run([kacs_command, "run", str(config), "--out", str(out),
                        "--jobs", str(jobs)], check=True, env=env, cwd=REPO,
                       capture_output=True)
        runs = (out / "runs.csv").read_text().splitlines()
        header = runs[0].split(",")
        keep = [k for k, name in enumerate(header) if name != "seconds"]
        outs[label] = [[row.split(",")[k] for k in keep] for row in runs[1:]]
    assert outs["one"] == outs["two"]
    assert outs["one"] != outs["old"]
