"""The row caps (engine/row_caps.py): beyond a cap a step reads a seeded sample of that many rows
and no other; below every cap a fit is what it was before the caps, bit for bit."""

import hashlib

import numpy as np
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine import capacity, kacs, refine, row_caps
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.train import Model, train_run, warm_up
from kacs_cli.estimators import regressors
from kacs_cli.experiments.data.benchmarks import generate


def test_a_sample_is_every_row_up_to_the_cap_and_beyond_it_a_seeded_sorted_draw():
    assert row_caps.sample_rows(50, 50, 1, 2) is None and row_caps.sample_rows(10, 50, 1, 2) is None
    sample = row_caps.sample_rows(200, 30, 1, 2)
    assert len(sample) == 30 and len(set(sample.tolist())) == 30
    assert np.all(np.diff(sample) > 0) and 0 <= sample[0] and sample[-1] < 200
    assert np.array_equal(sample, row_caps.sample_rows(200, 30, 1, 2))
    assert not np.array_equal(sample, row_caps.sample_rows(200, 30, 1, 3))  # another stream
    assert not np.array_equal(sample, row_caps.sample_rows(200, 30, 4, 2))  # another seed


def _spy(monkeypatch, owner, name, seen, rows_of):
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        seen.append(rows_of(*args, **kwargs))
        return real(*args, **kwargs)
    monkeypatch.setattr(owner, name, spy)


def test_the_search_judges_and_refines_each_candidate_on_at_most_its_caps(monkeypatch):
    """400 rows hold out 80; with the caps at 30 judged rows and 100 refined rows, every
    candidate predicts exactly the 30 judged rows (a seeded sample of the held-out part) and
    refines on 100 of its 320 fit rows, and its score is the test MAE train_run reports on the
    judged rows with its refinement capped alike."""
    X, y = generate("f1", 2, 400, seed=1)
    warm_up("kacs")  # its own small refinement, before the spies
    monkeypatch.setattr(row_caps, "SEARCH_SCORE_MAX_ROWS", 30)
    monkeypatch.setattr(row_caps, "SEARCH_REFINE_MAX_ROWS", 100)
    predicted, refined = [], []
    _spy(monkeypatch, Model, "predict", predicted, lambda self, X: X.shape[0])
    _spy(monkeypatch, refine, "design", refined, lambda pop, X, *args, **kwargs: X.shape[0])
    params = Hyperparameters(N=40, capacity="search", capacity_max=160, refinement=True, P_hash=0.8)
    result = capacity.search("kacs", X, y, params, iterations=600, seed=2)
    assert len(result.candidates) >= 2
    assert predicted == [30] * len(result.candidates)
    assert refined == [100] * len(result.candidates)
    fit, held = capacity.held_out_rows(400, 0.2, seed=2)
    judged = capacity.judged_rows(held, 2, 0)
    assert len(held) == 80 and len(judged) == 30 and set(judged.tolist()) <= set(held.tolist())
    monkeypatch.setattr(row_caps, "REFINE_MAX_ROWS", 100)
    for N, score in zip(result.candidates, result.scores):
        alone = train_run("kacs", X[fit], y[fit], X[judged], y[judged], iterations=600, eval_every=600, seed=2,
                          params=Hyperparameters(N=N, refinement=True, P_hash=0.8))
        assert score == alone.final["test_mae"]


def test_a_fit_predicts_no_row_but_the_sample_its_channel_ranges_come_from(monkeypatch):
    """An estimator's fit evaluates nothing during training (the curve is not kept); its
    channel-sum ranges are measured on a seeded sample of RANGE_MAX_ROWS rows, after the
    training and after the refinement."""
    X, y = generate("f1", 2, 300, seed=3)
    monkeypatch.setattr(row_caps, "RANGE_MAX_ROWS", 50)
    evaluated, measured = [], []
    _spy(monkeypatch, kacs, "predict", evaluated, lambda pop, X, n, n_q, inner_missing: X.shape[0])
    _spy(monkeypatch, Model, "predict_components", measured, lambda self, X: X.shape[0])
    settings = dict(N=60, n_iter=600, P_hash=0.8, random_state=4)
    refined = KACSRegressor(refinement=True, **settings).fit(X, y)
    assert evaluated == [] and measured == [50, 50]
    measured.clear()
    plain = KACSRegressor(**settings).fit(X, y)
    assert measured == [50]
    sample = row_caps.sample_rows(300, 50, plain.seed_, regressors._RANGE_STREAM)
    zhat = plain.model_.predict_components(plain.scale_inputs(X)[sample])[1]
    assert np.array_equal(plain.zhat_range_, np.column_stack([zhat.min(axis=0), zhat.max(axis=0)]))
    # The sample's range lies within the range over every row.
    monkeypatch.setattr(row_caps, "RANGE_MAX_ROWS", 10**9)
    every = KACSRegressor(refinement=True, **settings).fit(X, y)
    assert np.array_equal(every.predict(X), refined.predict(X))
    assert np.all(every.zhat_range_[:, 0] <= refined.zhat_range_[:, 0])
    assert np.all(refined.zhat_range_[:, 1] <= every.zhat_range_[:, 1])


@pytest.mark.parametrize("method, n", [("kacs", 3), ("xcsf", 3), ("xcsf", 16)])  # 16: XCSF's row index on
def test_training_without_evaluation_learns_the_same_population(method, n):
    X, y = generate("f1", n, 200, seed=3)
    evaluated, silent = Model(method, n, Hyperparameters(N=80, P_hash=0.8)), Model(method, n, Hyperparameters(N=80, P_hash=0.8))
    curve = evaluated.train(X, y, 1500, 5, X_test=X[:20], y_test=y[:20], eval_every=500)
    quiet = silent.train(X, y, 1500, 5, X_test=X[:20], y_test=y[:20], eval_every=500, evaluate=False)
    assert evaluated.population_frame().equals(silent.population_frame())
    assert np.array_equal(evaluated.predict(X), silent.predict(X))
    errors = [1, 2, 3, 4]  # train and test MAE and MSE (train.RAW_COLUMNS)
    assert np.isnan(quiet[:, errors]).all() and not np.isnan(curve[:, errors]).any()
    others = [k for k in range(curve.shape[1]) if k not in errors]
    assert np.array_equal(curve[:, others], quiet[:, others])


# sha256 of (predictions on the train rows, the search's scores) of a small recommended XCSF fit
# below every cap, computed with the code before the row caps.
XCSF_BEFORE_THE_CAPS = "20e9a9c196452bfb358a2dc2261989f5962bf26e851f3e040f8b2e597966b855"
CAPS = ("SEARCH_SCORE_MAX_ROWS", "SEARCH_REFINE_MAX_ROWS", "REFINE_MAX_ROWS", "RANGE_MAX_ROWS")


def _small_fit(name):
    X, y = generate("f1", 3, 300, seed=4)
    small = dict(P_hash=0.8, n_iter=3000, N=100, capacity_max=800, random_state=3)
    if name == "xcsf":
        return XCSFRegressor.from_preset("recommended", **small).fit(X, y), X
    if name == "kacs-folds":
        return KACSRegressor.from_preset("recommended", capacity_folds=2, capacity_channels="both", **small).fit(X, y), X
    weight = np.random.default_rng(5).integers(1, 4, size=300).astype(float)  # kacs-weighted
    return KACSRegressor.from_preset("recommended", **small).fit(X, y, sample_weight=weight), X


def _fit_digest(name):
    """sha256 of the fit's predictions on its train rows, its search's scores and (KACS) its
    channel ranges."""
    model, X = _small_fit(name)
    parts = [model.predict(X), np.asarray(model.capacity_result_.scores, dtype=np.float64)]
    if hasattr(model, "zhat_range_"):
        parts.append(model.zhat_range_.ravel())
    return hashlib.sha256(np.concatenate(parts).tobytes()).hexdigest()


@pytest.mark.slow
def test_an_xcsf_fit_below_the_caps_is_the_fit_before_them_bit_for_bit():
    assert _fit_digest("xcsf") == XCSF_BEFORE_THE_CAPS


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kacs-weighted", "kacs-folds"])
def test_a_kacs_fit_below_the_caps_is_the_fit_without_them_bit_for_bit(name, monkeypatch):
    """The same fit with the caps as declared and with every cap out of reach: below a cap no
    step draws a sample or reads a row differently."""
    capped = _fit_digest(name)
    for cap in CAPS:
        monkeypatch.setattr(row_caps, cap, 10 ** 12)
    assert _fit_digest(name) == capped


@pytest.mark.slow
def test_a_capped_search_in_two_processes_is_the_search_in_one(monkeypatch):
    """Above lowered caps, the search and the fit are deterministic and the same in one
    process and in two (the caps are read once and handed to the workers)."""
    X, y = generate("f1", 2, 300, seed=6)
    monkeypatch.setattr(row_caps, "SEARCH_SCORE_MAX_ROWS", 25)
    monkeypatch.setattr(row_caps, "SEARCH_REFINE_MAX_ROWS", 90)
    params = Hyperparameters(N=40, capacity="search", capacity_max=160, refinement=True, P_hash=0.8)
    alone = capacity.search("kacs", X, y, params, iterations=600, seed=1)
    again = capacity.search("kacs", X, y, params, iterations=600, seed=1)
    parallel = capacity.search("kacs", X, y, params, iterations=600, seed=1, n_jobs=2)
    assert (again.candidates, again.scores) == (alone.candidates, alone.scores)
    assert (parallel.candidates, parallel.scores, parallel.chosen_N) == (alone.candidates, alone.scores, alone.chosen_N)
