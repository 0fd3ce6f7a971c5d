"""The learner registry: a new learner is one module plus one entry, with no other change.

The toy learner below is a constant predictor: one rule covering the whole input space whose
single weight follows the target with the Widrow-Hoff rule. It is registered at run time and
then goes through `kacs run`, `kacs report`, the estimator API and a model file like KACS.
"""

import numpy as np
import pandas as pd
import pytest
from numba import njit

from cli_support import run_kacs
from kacs_cli.estimators import LearnerRegressor, estimator_class, load
from kacs_cli.engine import Learner, Model, registry
from kacs_cli.engine.order import next_row
from kacs_cli.engine.population import S_COVERS, S_P, S_T, S_TOTAL

TOY_BETA = 0.05


@njit(cache=True)
def _toy_steps(pop, X, y, order, start, stop, reshuffle, beta):
    for it in range(start, stop):
        r = next_row(order, it, reshuffle)
        if pop.scal[S_P] == 0:  # cover: the one rule, over the whole unit interval
            pop.bounds.hi[0, 0] = 1.0
            pop.counts.num[0] = 1
            pop.reals.F[0] = 1.0
            pop.scal[S_P] = 1
            pop.scal[S_TOTAL] = 1
            pop.scal[S_COVERS] += 1
        pop.weights.w[0, 0] += beta * (y[r] - pop.weights.w[0, 0])
        pop.counts.exp[0] += 1
        pop.scal[S_T] += 1


TOY = Learner(
    name="toy", label="Toy", width=lambda n: 1, consequent=lambda n: 1, submodels=lambda n, params: 1,
    cover_slots=lambda n, params: (1, None, None), new_buffers=lambda model: {},
    steps=lambda m, X, y, order, start, stop, reshuffle: _toy_steps(
        m.pop, X, y, order, start, stop, reshuffle, TOY_BETA),
    predict=lambda m, X: np.full(X.shape[0], m.pop.weights.w[0, 0] if m.pop.scal[S_P] else 0.0),
    population_frame=lambda m: {"w0": m.pop.weights.w[:m.pop.scal[S_P], 0].copy()},
)


class ToyRegressor(LearnerRegressor):
    _method = "toy"


@pytest.fixture
def toy(monkeypatch):
    # A copy of the registry's table, restored afterwards: the toy learner never outlives its test.
    monkeypatch.setattr(registry, "_LEARNERS", dict(registry._LEARNERS))
    registry.register(TOY)
    return TOY


kacs = run_kacs


def test_the_registry_lists_the_builtin_pair_first_and_refuses_unknown_names(toy):
    assert registry.names()[:2] == registry.DEFAULT_PAIR == ("xcsf", "kacs")
    assert registry.names()[2:] == ("toy",)
    with pytest.raises(ValueError, match="must be one of xcsf, kacs, toy"):
        registry.get("lcs")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(TOY)
    with pytest.raises(ValueError, match="lower case"):
        registry.register(Learner(**{**TOY.__dict__, "name": "toy-2"}))


def test_each_model_allocates_only_its_own_learners_buffers():
    kacs_model, xcsf_model = Model("kacs", 3), Model("xcsf", 3)
    assert hasattr(kacs_model, "work") and not hasattr(kacs_model, "row_index")
    assert not hasattr(xcsf_model, "work")
    assert hasattr(xcsf_model, "members") and hasattr(xcsf_model, "row_index")
    assert kacs_model.pop.weights.w.shape[1] == 2 and xcsf_model.pop.weights.w.shape[1] == 4
    assert kacs_model.pop.bounds.lo.shape[0] == 1 and xcsf_model.pop.bounds.lo.shape[0] == 3


def test_the_toy_learner_trains_in_the_engine_driver(toy):
    rng = np.random.default_rng(0)
    X = rng.random((50, 3))
    y = np.full(50, 0.5)
    model = Model("toy", 3)
    raw = model.train(X, y, 400, 0, eval_every=100)
    curve = model.curve_frame(raw, 50)
    assert list(curve["iteration"]) == [100, 200, 300, 400]
    assert model.n_rules == 1 and model.n_params == 1
    assert curve["covers"].tolist() == [1, 0, 0, 0]
    assert curve["cover_rate"].iloc[0] == pytest.approx(0.01)
    assert curve["cover_rate_inner"].isna().all()
    # w0 follows the constant target geometrically: the error shrinks by (1 - beta) per step.
    assert curve["train_mae"].iloc[-1] == pytest.approx(0.5 * (1 - TOY_BETA) ** 400)
    assert np.all(np.diff(curve["train_mae"]) < 0)
    with pytest.raises(ValueError, match="components exist only for KACS"):
        model.predict_components(X)


@pytest.mark.slow
def test_the_toy_learner_runs_through_kacs_run_and_kacs_report(toy, capsys, tmp_path):
    cfg = tmp_path / "toy.yaml"
    cfg.write_text("experiment: toy\nmethods: [toy, kacs]\n"
                   "benchmarks: [{name: f3, n: 2, samples: 100}]\n"
                   "hyperparameters: {N: 200}\nprotocol: {runs: 2}\niterations: 300\n"
                   "eval_every: 100\n")
    out = tmp_path / "out"
    code, _, err = kacs(capsys, "run", cfg, "--out", out, "--jobs", 1)
    assert code == 0, err
    runs = pd.read_csv(out / "runs.csv")
    toy_runs = runs[runs["method"] == "toy"]
    assert sorted(toy_runs["run"]) == [0, 1]
    assert (toy_runs["rules"] == 1).all() and (toy_runs["params"] == 1).all()
    assert toy_runs["cover_rate_inner"].isna().all()
    assert (runs["method"] == "kacs").sum() == 2
    assert sum("__toy__" in p.name for p in (out / "curves").iterdir()) == 2
    code, _, err = kacs(capsys, "report", out)
    assert code == 0, err
    text = (out / "report" / "report.md").read_text()
    # The toy learner is beyond the report's pair: it gets the table of other methods, its one
    # rule and two runs shown there.
    others = text[text.index("other methods"):]
    rows = [[c.strip() for c in line.strip(" |").split("|")] for line in others.splitlines()
            if line.startswith("|")]
    header, toy_row = rows[0], next(r for r in rows if r[1] == "Toy")
    assert toy_row[header.index("rules")] == "1 ± 0" and toy_row[header.index("runs")] == "2"


def test_the_toy_learner_has_an_estimator_that_saves_and_loads(toy, tmp_path):
    assert estimator_class("toy") is ToyRegressor
    rng = np.random.default_rng(1)
    X = rng.random((40, 2)) * 10.0
    y = np.full(40, 7.0) + rng.normal(0, 0.01, 40)
    est = ToyRegressor(n_iter=500, random_state=0).fit(X, y)
    assert est.n_rules_ == 1
    pred = est.predict(X)
    assert np.allclose(pred, y.mean(), atol=0.05)  # in the original units of the target
    est.save(tmp_path / "toy.kacs")
    back = load(tmp_path / "toy.kacs")
    assert type(back) is ToyRegressor
    np.testing.assert_array_equal(back.predict(X), pred)
