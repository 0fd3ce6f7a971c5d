"""Bagging: `bags` models of one learner, each trained on a bootstrap sample of the train rows
with a seed of its own, averaged into one model.

Member k trains on rows drawn with replacement (as many as there are rows) from the stream
SeedSequence([seed, BAG_STREAM, k]), with the learner seed SeedSequence([seed, k]); with
`refinement` each member is refined on its own sample. Every member depends on (seed, k)
alone, so the averaged model is the same whether the members train one after another or in
parallel processes, and whatever their number.

The average is exact and stays one model of the learner (its `Learner.merge`): the mean of K
KACS models of m channels each is one KACS model of K m channels whose outer functions are
scaled by 1/K (kacs.merge_models); XCSF's prediction, a fitness-weighted mean over a match
set, is not linear in its population, so its K populations stay apart inside one population,
each rule tagged with its member (xcsf.merge_models), and its prediction is the mean of theirs.
All members see the inputs through the same scaling and transform, fitted on all the train
rows before the members are drawn: only then is the mean of their outputs one function of x.

With sample weights (weights.py) the bootstrap draws each row with probability proportional
to its weight (as many draws as there are rows), and each member then learns from its sample
as from plain rows, a row drawn twice counting twice: the weights act once, in what a member
sees. Drawing a row of weight 2 twice as often is what the bootstrap of the rows repeated
would do, and a member then needs no weights of its own (its refinement, on its sample, is
the unweighted one). The errors of a bagged run are weighted like any run's.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np

from kacs_cli.engine import registry
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.population import S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS
from kacs_cli.engine.train import (
    COVER_RATES, ERROR_KEYS, RAW_COLUMNS, Model, TrainResult, aic, compact_final,
    final_errors, in_processes, warm_up,
)
from kacs_cli.engine.weights import positive_rows
from kacs_cli.errors import UserError

# Mixed into the seed so that a member's rows do not follow any learner's own stream.
BAG_STREAM = 0x62616773


def member_rows(rows: int, k: int, seed: int, weight=None) -> np.ndarray:
    """The train rows of member k: a bootstrap sample (with replacement; with sample weights,
    each draw picks a row with probability proportional to its weight), sorted; the engine
    draws its own visiting order from the member's seed."""
    rng = np.random.default_rng([int(seed), BAG_STREAM, int(k)])
    if weight is not None:
        return np.sort(rng.choice(rows, rows, p=weight / weight.sum()))
    return np.sort(rng.integers(0, rows, rows))


def member_seed(seed: int, k: int) -> int:
    """The learner seed of member k."""
    return int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1)[0])


@dataclass
class Member:
    """One trained member: the model (refined when the run refines), the evolved model before
    refinement (None without it) and what training it cost."""

    model: Model
    evolved: Model | None
    seconds: float
    refine_seconds: float
    refine_iterations: int


def train_member(method: str, X, y, params: Hyperparameters, iterations: int, seed: int, k: int,
                 weight=None) -> Member:
    """Member k of a bagged fit on the learner's scaled rows (X, y) (`weight`: their sample
    weights): trained on its bootstrap sample for `iterations` iterations and, with
    `refinement`, refined on that sample."""
    rows = member_rows(X.shape[0], k, seed, weight)
    Xk, yk = np.ascontiguousarray(X[rows]), np.ascontiguousarray(y[rows])
    warm_up(method)
    model = Model(method, X.shape[1], params.with_overrides(bags=1))
    start = time.perf_counter()
    model.train(Xk, yk, iterations, member_seed(seed, k), evaluate=False)
    seconds = time.perf_counter() - start
    evolved, refine_seconds, refine_iterations = None, 0.0, 0
    if params.refinement:
        evolved = copy.deepcopy(model)
        result = model.refine(Xk, yk, seed=member_seed(seed, k))
        refine_seconds, refine_iterations = float(result.seconds), int(result.iterations)
    return Member(model, evolved, seconds, refine_seconds, refine_iterations)


def member_at(method: str, X, y, iterations: int, seed: int, weight, params: Hyperparameters, k: int) -> Member:
    """`train_member` with the arguments in the order of a capacity.FinalFit's pieces (the
    members of the fit at a candidate, trained ahead by the search)."""
    return train_member(method, X, y, params, iterations, seed, k, weight)


def train_members(method: str, X, y, params: Hyperparameters, iterations: int, seed: int,
                  n_jobs: int | None = None, weight=None, trained: list | None = None) -> list[Member]:
    """Every member of a bagged fit, in member order; with n_jobs > 1 (or -1: every core) in
    parallel processes, with the same result. `weight`: the rows' sample weights (rows of
    weight 0 left out by the caller; None: unweighted). `trained`: members already trained
    (by `train_member` with these arguments, as the capacity search trains them ahead), None
    where not; only the others are trained."""
    learner = registry.get(method)
    if learner.merge is None:
        raise UserError(registry.bags_refusal(learner.label))
    X, y = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
    K = int(params.bags)
    if params.compaction != "none":
        # Whether the merged model can be compacted shows on two empty members, before any training.
        empty = [Model(method, X.shape[1], params.with_overrides(bags=1)) for _ in range(2)]
        if merge(method, empty).params.bags > 1:
            raise UserError(f"an average of {learner.label} populations (bags) has no compaction; leave "
                            f"compaction at none or bags at 1")
    members = [None] * K if trained is None else list(trained)
    missing = [k for k in range(K) if members[k] is None]
    for k, member in zip(missing, in_processes(train_member, [(method, X, y, params, iterations, seed, k, weight)
                                                              for k in missing], n_jobs)):
        members[k] = member
    return members


def merge(method: str, models: list[Model]) -> Model:
    """The one model whose prediction is the mean of the members' (the learner's `merge`)."""
    learner = registry.get(method)
    if learner.merge is None:
        raise UserError(registry.bags_refusal(learner.label))
    n = models[0].n
    return learner.merge(models, lambda params: Model(method, n, params))


def fit(method: str, X, y, params: Hyperparameters, iterations: int, seed: int,
        n_jobs: int | None = None, weight=None, trained: list | None = None) -> Model:
    """A bagged fit on the learner's scaled rows (with their sample weights): the members
    trained (and refined; `trained` as in `train_members`), merged."""
    return merge(method, [m.model for m in train_members(method, X, y, params, iterations, seed, n_jobs,
                                                         weight, trained)])


def train_bagged_run(method: str, X_train, y_train, X_test, y_test, *, params: Hyperparameters,
                     iterations: int, seed: int = 0, weight=None, test_weight=None) -> TrainResult:
    """One run with `bags` > 1, as `train_run` reports one: the merged model's final metrics and
    rules. Its curve is one row, the merged model at the end: the members learn apart, so
    there is no merged model before then. `seconds` is the members' training time added up,
    the refinement's likewise; the cover rates are the members' covers over all of their
    iterations (members x iterations x the learner's cover slots). Sample weights as in
    train_run: rows of weight 0 left out, the bootstrap weighted, the errors weighted."""
    X_train = np.ascontiguousarray(X_train, dtype=np.float64)
    X_train, y_train, weight = positive_rows(X_train, y_train, weight, "weight")
    if X_test is not None:
        X_test, y_test, test_weight = positive_rows(X_test, y_test, test_weight, "test_weight")
    weighted = {"weight": weight, "test_weight": test_weight}
    members = train_members(method, X_train, y_train, params, iterations, seed, weight=weight)
    model = merge(method, [m.model for m in members])
    n_train, K = X_train.shape[0], len(members)
    final: dict = {}
    final_errors(model, final, "", X_train, y_train, X_test, y_test, **weighted)
    if X_test is None or not len(X_test):
        final["test_mae"] = final["test_mse"] = math.nan
    raw = np.full((1, len(RAW_COLUMNS)), np.nan)
    scal = model.pop.scal
    raw[0] = (iterations, final["train_mae"], final["test_mae"], final["train_mse"], final["test_mse"],
              model.n_rules, model.n_micro, scal[S_COVERS], scal[S_COVERS_IN], scal[S_COVERS_OUT],
              scal[S_DELETIONS], model.budget_N)
    curve = model.curve_frame(raw, n_train)
    slots = model.learner.cover_slots(model.n, members[0].model.params)
    for column, slot in zip(COVER_RATES, slots):
        covers = column.replace("cover_rate", "covers")
        rate = math.nan if slot is None else float(curve[covers].iloc[0]) / (K * iterations * slot)
        curve[column] = rate
        final[column] = rate
    final.update(rules=model.n_rules, micro=model.n_micro, params=model.n_params, final_N=model.budget_N,
                 aic=float(aic(n_train, final["train_mse"], model.n_params)))
    if params.refinement:
        evolved = merge(method, [m.evolved for m in members])
        before: dict = {}
        final_errors(evolved, before, "", X_train, y_train, X_test, y_test, **weighted)
        for key in ERROR_KEYS:
            final[f"evolved_{key}"] = before.get(key, math.nan)
        final["evolved_aic"] = float(aic(n_train, before["train_mse"], evolved.n_params))
        final["refine_iterations"] = sum(m.refine_iterations for m in members)
        final["refine_seconds"] = sum(m.refine_seconds for m in members)
    if params.compaction != "none":
        compact_final(model, final, X_train, y_train, X_test, y_test, seed, **weighted)
    return TrainResult(method=method, curve=curve, population=model.population_frame(), final=final,
                       seconds=sum(m.seconds for m in members))
