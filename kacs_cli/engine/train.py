"""The training driver every later layer uses: scaled arrays in, learning curve and rules out."""

from __future__ import annotations

import copy
import math
import os
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit
from threadpoolctl import threadpool_limits

from kacs_cli.engine import budget, registry
from kacs_cli.engine.covering import COVER_SLACK
from kacs_cli.engine.cycles import counter_now
from kacs_cli.engine.kacs_submodels import channel_count
from kacs_cli.engine.order import first_order, seed_rng
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.population import (
    S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_P, S_T, S_TOTAL, new_population,
    rule_fields,
)
from kacs_cli.engine.scratch import new_scratch
from kacs_cli.engine.weights import WeightedOrder, positive_rows
from kacs_cli.errors import UserError

CURVE_COLUMNS = (
    "iteration", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params",
    "aic", "covers", "covers_inner", "covers_outer", "deletions", "cover_rate",
    "cover_rate_inner", "cover_rate_outer", "budget",
)
# Columns filled by the compiled loop; the rest are derived in Python. `budget` is the
# population budget N in force at the evaluation (constant unless budget: adaptive).
# Cover rates (docs/algorithm.md section 7): covers over the iterations times the learner's cover slots.
COVER_RATES = ("cover_rate", "cover_rate_inner", "cover_rate_outer")
RAW_COLUMNS = ("iteration", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro",
        "covers", "covers_inner", "covers_outer", "deletions", "budget")
# A model's errors (train_run's `final` and the curve name them alike; later layers take
# these names for their columns).
ERROR_KEYS = ("train_mae", "test_mae", "train_mse", "test_mse")
_COUNT_KEYS = ("rules", "micro", "params")


@dataclass(frozen=True)
class Profile:
    """Where a run's cycles went (cycles.py): each of the learner's phases of an iteration,
    summed over the run, and the whole run, training and evaluation, as `seconds` counts it."""
    phases: tuple                  # (key, label) of each phase: Learner.phases
    cycles: tuple                  # each phase's cycles
    total: int

    @property
    def rest(self) -> int:
        """The run outside the phases: the driver's loop, the layout's opening and closing, evaluation."""
        return self.total - sum(self.cycles)


@dataclass
class TrainResult:
    method: str
    curve: pd.DataFrame            # one row per evaluation point, CURVE_COLUMNS
    population: pd.DataFrame       # one row per macro-rule
    final: dict = field(default_factory=dict)  # last curve row + whole-run cover rates
    seconds: float = 0.0
    profile: Profile | None = None  # with train_run(profile=True)


@njit(cache=True)
def _errors(y_hat, y):
    mae = 0.0
    mse = 0.0
    for r in range(y.shape[0]):
        e = y[r] - y_hat[r]
        mae += abs(e)
        mse += e * e
    return mae / y.shape[0], mse / y.shape[0]


@njit(cache=True)
def _weighted_errors(y_hat, y, w):
    mae = 0.0
    mse = 0.0
    total = 0.0
    for r in range(y.shape[0]):
        e = y[r] - y_hat[r]
        mae += w[r] * abs(e)
        mse += w[r] * e * e
        total += w[r]
    return mae / total, mse / total


def errors(y_hat, y, weight=None) -> tuple[float, float]:
    """(MAE, MSE) of predictions, a learner's or a batch regressor's (kacs_cli/baselines), each
    row's error weighted by `weight` (sum w |e| / sum w) when given; summed in row order."""
    y_hat = np.ascontiguousarray(y_hat, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if weight is None:
        return _errors(y_hat, y)
    return _weighted_errors(y_hat, y, np.ascontiguousarray(weight, dtype=np.float64))


def _as_matrix(X, name):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (rows, n), got shape {X.shape}")
    # NaN is a missing input (docs/algorithm.md section 12); an infinite value is no input.
    if np.isinf(X).any():
        raise ValueError(f"{name} contains infinite values (a missing input is NaN)")
    return np.ascontiguousarray(X)


def _as_vector(y, rows, name):
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != rows:
        raise ValueError(f"{name} must be a 1-D array with {rows} values, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return np.ascontiguousarray(y)


def worker_count(n_jobs: int | None) -> int:
    """The processes n_jobs asks for: None or 0 one, -1 every core, else n_jobs."""
    if n_jobs in (None, 0):
        return 1
    return max(1, os.cpu_count() or 1) if n_jobs < 0 else int(n_jobs)


def in_processes(function, calls: list[tuple], n_jobs: int | None) -> list:
    """[function(*call) for call in calls], in worker_count(n_jobs) processes, in order.

    Through loky's reusable executor, the one `kacs run` fans its runs out with, so that an
    estimator fitted in a process that ran a campaign reuses those workers instead of meeting
    a second pool (joblib.Parallel cannot share loky's executor with a direct user)."""
    jobs = worker_count(n_jobs)
    if jobs <= 1 or len(calls) <= 1:
        return [function(*call) for call in calls]
    return list(executor(min(jobs, len(calls))).map(function, *zip(*calls)))


class _InProcess:
    """An executor of this one process: each call runs when it is submitted."""

    def submit(self, function, *args) -> Future:
        future = Future()
        future.set_result(function(*args))
        return future


def executor(width: int):
    """What runs calls as processes free up (`submit`, concurrent.futures' Future): loky's
    reusable executor of `width` processes (`in_processes` maps over it too), or for one
    process this process itself."""
    if width <= 1:
        return _InProcess()
    from joblib.externals.loky import get_reusable_executor

    return get_reusable_executor(max_workers=width)


def one_blas_thread():
    """The context of the steps after training (refinement, compaction): one BLAS thread.

    They call BLAS (L-BFGS-B's updates, numpy's products) on a few thousand weights, where a
    second thread gains nothing and, beside a busy core, spins (docs/compaction.md section 3
    tells what it cost). Campaign workers already run with one (joblib gives its loky workers
    cores // jobs threads), so `--jobs 1`, the estimators and `kacs fit` give the numbers a
    campaign gives.
    """
    return threadpool_limits(limits=1, user_api="blas")


class Model:
    """A population of one registered learner (registry.py) with its buffers: train, predict,
    inspect."""

    def __init__(self, method: str, n: int, params: Hyperparameters | None = None):
        learner = registry.get(method)
        if int(n) != n or n < 1:
            raise ValueError(f"n (number of inputs) must be a whole number >= 1, got {n!r}")
        self.method = method
        self.n = int(n)
        self.params = params if params is not None else Hyperparameters()
        self.hp = self.params.for_engine()
        # What the learner cannot run (also what runs after training) is refused now, before
        # any training.
        refused = registry.refusal(method, self.params)
        if refused is not None:
            raise UserError(refused[1])
        self.n_submodels = learner.submodels(self.n, self.params)
        D, K = learner.width(self.n), learner.consequent(self.n)
        # Budget state (adaptive budget only; see budget.py). The population must hold the
        # largest budget the run can reach, N_max under budget: adaptive.
        self.budget_state = budget.new_budget(self.params)
        # Within one iteration, covering adds at most one rule and the GA two per match set;
        # removed rules keep their slots until the iteration ends.
        # Without covering's deletion the population may grow to COVER_SLACK times its
        # budget between GA events (covering.delete_after_cover).
        slack = COVER_SLACK if self.params.follows_article("article_cover_deletion") else 1
        self.capacity = slack * budget.capacity_budget(self.params) + 3 * self.n_submodels + 8
        self.pop = new_population(self.capacity, D, K, int(self.params.N))
        self.scratch = new_scratch(self.capacity, D, K, self.n_submodels)
        # One float per submodel: a KACS inner function's value at a missing input where the
        # refinement learned one (missing_value: learned), NaN where its rules' lines are read
        # at their intervals' centres (docs/algorithm.md section 12). Kept beside the
        # population, not in it: the compiled training loop never reads it.
        self.inner_missing = np.full(self.n_submodels, np.nan)
        # The learner's own work buffers (KACS: `work`; XCSF: `members`, `match_flags`,
        # `row_index`), and nothing of another learner's.
        for name, value in learner.new_buffers(self).items():
            setattr(self, name, value)

    @property
    def learner(self) -> registry.Learner:
        # Looked up, not stored: a model pickles (scikit-learn's checks, joblib) without its
        # learner's functions.
        return registry.get(self.method)

    @property
    def iterations_done(self) -> int:
        return int(self.pop.scal[S_T])

    @property
    def n_channels(self) -> int:
        """A Kolmogorov-Arnold learner's number of outer channels m: the hyperparameter
        `channels`, whose 0 stands for the article's 2n + 1."""
        return channel_count(self.n, self.params.channels)

    @property
    def n_rules(self) -> int:
        return int(self.pop.scal[S_P])

    @property
    def n_micro(self) -> int:
        return int(self.pop.scal[S_TOTAL])

    @property
    def budget_N(self) -> int:
        """The population budget N in force now (grows only under budget: adaptive)."""
        return int(self.pop.budget[0])

    @property
    def n_params(self) -> int:
        """Adjustable parameters: the consequent's weights of every rule."""
        return self.n_rules * self.pop.weights.w.shape[1]

    def _check_inputs(self, X, name="X"):
        X = _as_matrix(X, name)
        if X.shape[1] != self.n:
            raise ValueError(f"{name} has {X.shape[1]} columns but the model has n = {self.n} inputs")
        return X

    def train(self, X, y, iterations: int, seed: int, *, X_test=None, y_test=None,
              eval_every: int | None = None, clock: np.ndarray | None = None,
              weight=None, test_weight=None, evaluate: bool = True) -> np.ndarray:
        """Learn online for `iterations` samples; returns the raw curve rows.

        `evaluate`: False leaves the curve's errors NaN and predicts no row (the test rows are not
        read), for a caller that keeps only the model (an estimator's fit, a capacity-search
        candidate): prediction changes nothing in the population, so the model is the same, bit
        for bit.

        `clock`: an int64 array with a slot per phase of the learner (Learner.phases), to
        which each phase's cycles are added; for learners with phases only.
        `weight`, `test_weight`: sample weights of the train and test rows (weights.py): rows
        of weight 0 are left out, the train rows are visited in proportion to their weights
        and the curve's errors are weighted means; weights all equal change nothing."""
        if self.params.bags > 1:
            raise UserError(f"this {self.learner.label} model averages {self.params.bags} populations "
                            f"(bags) and cannot learn further; fit it again")
        X = self._check_inputs(X, "X_train")
        y = _as_vector(y, X.shape[0], "y_train")
        X, y, weight = positive_rows(X, y, weight, "weight")
        if X.shape[0] < 1:
            raise ValueError("X_train has no rows")
        if int(iterations) != iterations or iterations < 1:
            raise ValueError(f"iterations must be a whole number >= 1, got {iterations!r}")
        iterations = int(iterations)
        eval_every = iterations if eval_every is None else int(eval_every)
        if eval_every < 1:
            raise ValueError(f"eval_every must be >= 1, got {eval_every!r}")
        if clock is not None and len(clock) != len(self.learner.phases):
            raise ValueError(f"{self.learner.label} counts {len(self.learner.phases)} phases, "
                             f"got a clock of {len(clock)}")
        if X_test is None or not evaluate:
            X_eval, y_eval = X, y
        else:
            X_test = self._check_inputs(X_test, "X_test")
            y_test = _as_vector(y_test, X_test.shape[0], "y_test")
            X_test, y_test, test_weight = positive_rows(X_test, y_test, test_weight, "test_weight")
            X_eval = np.ascontiguousarray(np.vstack([X, X_test]))
            y_eval = np.concatenate([y, y_test])
        n_evals = iterations // eval_every + (1 if iterations % eval_every else 0)
        curve = np.full((n_evals, len(RAW_COLUMNS)), np.nan)
        learner = self.learner
        # The population may have been edited since the last call (loaded, hand-built): the
        # antecedent keys are rebuilt when first needed.
        self.scratch.key_state[0] = 0
        # Online learning reads a missing input at its rules' centres: a value learned at
        # missing inputs belongs to the refinement that fitted it (the next one fits it again).
        self.inner_missing[:] = np.nan
        if learner.prepare is not None:
            learner.prepare(self, X_eval)
        predict_eval = learner.evaluate or learner.predict
        reshuffle = self.params.follows_article("article_reshuffle")
        seed_rng(int(seed) % (2**32))
        weighted = None if weight is None else WeightedOrder(weight, seed, reshuffle)
        order = first_order(X.shape[0]) if weighted is None else weighted.first()
        scal = self.pop.scal
        # Counters at the previous evaluation: the curve holds what happened in between.
        last = [int(scal[S_COVERS]), int(scal[S_COVERS_IN]), int(scal[S_COVERS_OUT]),
                int(scal[S_DELETIONS])]
        n_train = X.shape[0]
        done = 0
        for row in range(n_evals):
            # The learner's compiled loop runs up to the next evaluation point; the Python
            # here runs once per evaluation, never per sample.
            stop = min(done - done % eval_every + eval_every, iterations)
            if weighted is None:
                self._steps(X, y, order, done, stop, reshuffle, clock)
            else:
                weighted.run(lambda a, b: self._steps(X, y, order, a, b, False, clock), order, done, stop)
            done = stop
            train_mae, train_mse, test_mae, test_mse = np.nan, np.nan, np.nan, np.nan
            if evaluate:
                y_hat = predict_eval(self, X_eval)
                train_mae, train_mse = errors(y_hat[:n_train], y, weight)
                if X_eval.shape[0] > n_train:
                    test_mae, test_mse = errors(y_hat[n_train:], y_eval[n_train:], test_weight)
            now = [int(scal[S_COVERS]), int(scal[S_COVERS_IN]), int(scal[S_COVERS_OUT]),
                   int(scal[S_DELETIONS])]
            curve[row] = (done, train_mae, test_mae, train_mse, test_mse, scal[S_P], scal[S_TOTAL],
                          now[0] - last[0], now[1] - last[1], now[2] - last[2], now[3] - last[3],
                          self.pop.budget[0])
            last = now
        return curve

    def _steps(self, X, y, order, start, stop, reshuffle, clock):
        """The learner's compiled loop over iterations start..stop-1 (Learner.steps)."""
        if clock is None:
            self.learner.steps(self, X, y, order, start, stop, reshuffle)
        else:
            self.learner.steps(self, X, y, order, start, stop, reshuffle, clock=clock)

    def predict(self, X) -> np.ndarray:
        X = self._check_inputs(X)
        return self.learner.predict(self, X)

    def _check_rows(self, X, y, weight=None):
        """The rows a step after training (refine, compact) works on, checked, without those of
        weight 0; with their weights (None: unweighted), as a keyword argument for the learner."""
        X = self._check_inputs(X)
        y = _as_vector(y, X.shape[0], "y")
        X, y, weight = positive_rows(X, y, weight, "weight")
        if X.shape[0] < 1:
            raise ValueError("X has no rows")
        # Passed to the learner only when the rows are weighted: a learner's refine and
        # compact need not know weights until they are given.
        return X, y, ({} if weight is None else {"weight": weight})

    def compact(self, X, y, *, seed: int, method: str | None = None, rules: float | None = None,
                tolerance: float | None = None, weight=None):
        """Make the model smaller in place (compaction.py), given its scaled training rows (and
        their sample weights); settings not given are the model's compaction hyperparameters
        (`piecewise` when its compaction is `none`)."""
        learner = self.learner
        if self.params.bags > 1:
            raise ValueError(f"an average of {self.params.bags} {learner.label} populations (bags) "
                             f"has no compaction")
        method = method or (self.params.compaction if self.params.compaction != "none"
                            else learner.compactions[0] if learner.compactions else "piecewise")
        if method not in learner.compactions:
            raise ValueError(registry.compaction_refusal(learner, method))
        checked = self.params.with_overrides(
            compact_rules=self.params.compact_rules if rules is None else rules,
            compact_tolerance=self.params.compact_tolerance if tolerance is None else tolerance)
        X, y, weighted = self._check_rows(X, y, weight)
        with one_blas_thread():
            result = learner.compact(self, X, y, method, rules=float(checked.compact_rules),
                                     tolerance=float(checked.compact_tolerance), seed=int(seed), **weighted)
        self.scratch.key_state[0] = 0  # the antecedent keys are rebuilt when next needed
        return result

    def refine(self, X, y, *, seed: int, max_iter: int | None = None, pull: float | None = None,
               validation: float | None = None, weight=None, max_rows: int | None = None):
        """Refit every consequent weight on the rows (X, y), each weighted by its sample weight
        when given, with the rules' structure fixed (refine.py); settings not given are the
        model's `refine_*` hyperparameters. Beyond `max_rows` rows (None: row_caps.REFINE_MAX_ROWS)
        a seeded sample of that many is refitted on."""
        if self.learner.refine is None:
            raise ValueError(registry.refinement_refusal())
        settings = {"max_iter": self.params.refine_max_iter, "pull": self.params.refine_pull,
                    "validation": self.params.refine_validation}
        given = {"max_iter": max_iter, "pull": pull, "validation": validation}
        settings.update({k: v for k, v in given.items() if v is not None})
        # The same checks as the hyperparameters' (one wording for every front end).
        checked = self.params.with_overrides(refine_max_iter=settings["max_iter"],
                                             refine_pull=settings["pull"],
                                             refine_validation=settings["validation"])
        X, y, weighted = self._check_rows(X, y, weight)
        with one_blas_thread():
            return self.learner.refine(self, X, y, max_iter=int(checked.refine_max_iter),
                                       pull=float(checked.refine_pull),
                                       validation=float(checked.refine_validation), seed=int(seed),
                                       smoothness=float(self.params.refine_smoothness),
                                       learn_missing=self.params.missing_value == "learned", **weighted,
                                       **({} if max_rows is None else {"max_rows": int(max_rows)}))

    def predict_components(self, X):
        """Kolmogorov-Arnold learners (KACS) only: (psihat[rows, m, n], zhat[rows, m],
        phihat[rows, m], y_hat), m the outer channels."""
        if self.learner.components is None:
            with_components = [registry.label(m) for m in registry.names()
                               if registry.get(m).components is not None]
            raise ValueError(f"components exist only for {', '.join(with_components)}")
        X = self._check_inputs(X)
        return self.learner.components(self, X)

    def population_frame(self) -> pd.DataFrame:
        P = self.n_rules
        cols = dict(self.learner.population_frame(self))
        fields = rule_fields(self.pop)
        for name in ("F", "eps", "kappa", "exp", "num", "ms", "ts"):
            cols[name] = fields[name][:P].copy()
        return pd.DataFrame(cols)

    def curve_frame(self, raw: np.ndarray, n_train: int) -> pd.DataFrame:
        df = pd.DataFrame(raw, columns=list(RAW_COLUMNS))
        for c in ("iteration", "rules", "micro", "covers", "covers_inner", "covers_outer", "deletions",
                  "budget"):
            df[c] = df[c].astype(np.int64)
        df["params"] = df["rules"] * self.pop.weights.w.shape[1]
        df["aic"] = aic(n_train, df["train_mse"].to_numpy(), df["params"].to_numpy())
        steps = np.diff(np.concatenate([[0], df["iteration"].to_numpy()]))
        for column, slots in zip(COVER_RATES, self.learner.cover_slots(self.n, self.params)):
            covers = column.replace("cover_rate", "covers")
            df[column] = np.nan if slots is None else df[covers] / (steps * slots)
        return df[list(CURVE_COLUMNS)]


def final_errors(model: Model, final: dict, prefix: str, X_train, y_train, X_test, y_test, *,
                 weight=None, test_weight=None) -> None:
    """The model's train (and, with test rows, test) MAE and MSE into final[prefix + name],
    weighted by the rows' sample weights when given (rows of weight 0 already left out)."""
    final[f"{prefix}train_mae"], final[f"{prefix}train_mse"] = errors(
        model.predict(X_train), np.asarray(y_train, dtype=np.float64), weight)
    if X_test is not None and len(X_test):
        final[f"{prefix}test_mae"], final[f"{prefix}test_mse"] = errors(
            model.predict(X_test), np.asarray(y_test, dtype=np.float64), test_weight)


# Extra metrics of a run with `refinement` (its other metrics are the refined model's): the
# evolved model's errors, and what the refinement did.
REFINE_KEYS = (*(f"evolved_{k}" for k in (*ERROR_KEYS, "aic")), "refine_iterations", "refine_seconds")


def _refine_final(model: Model, final: dict, X_train, y_train, X_test, y_test, seed: int, *,
                  weight=None, test_weight=None) -> None:
    """Refine the trained model on the train rows; `final` takes the refined errors and AIC,
    and keeps the evolved ones under REFINE_KEYS. Rules and parameters do not change."""
    for key in (*ERROR_KEYS, "aic"):
        final[f"evolved_{key}"] = final[key]
    result = model.refine(X_train, y_train, seed=seed, weight=weight)
    final_errors(model, final, "", X_train, y_train, X_test, y_test, weight=weight, test_weight=test_weight)
    final["aic"] = float(aic(X_train.shape[0], final["train_mse"], final["params"]))
    final["refine_iterations"] = int(result.iterations)
    final["refine_seconds"] = float(result.seconds)


# Extra metrics of a run with a compaction: the compacted copy of the final model (the run's
# own metrics stay the uncompacted model's).
COMPACT_KEYS = ("compacted_rules", "compacted_params", *(f"compacted_{k}" for k in ERROR_KEYS),
                "compacted_seconds")


def compact_final(model: Model, final: dict, X_train, y_train, X_test, y_test, seed: int, *,
                  weight=None, test_weight=None) -> None:
    compacted = copy.deepcopy(model)
    result = compacted.compact(X_train, y_train, seed=seed, weight=weight)
    final["compacted_rules"] = compacted.n_rules
    final["compacted_params"] = compacted.n_params
    final["compacted_test_mae"], final["compacted_test_mse"] = math.nan, math.nan
    final_errors(compacted, final, "compacted_", X_train, y_train, X_test, y_test, weight=weight,
                 test_weight=test_weight)
    final["compacted_seconds"] = float(result.seconds)


def aic(n_train: int, train_mse, params):
    """AIC = N_tr ln(train MSE) + 2 (k + 1), the MSE floored at machine epsilon (docs/algorithm.md section 7)."""
    mse = np.maximum(np.asarray(train_mse, dtype=np.float64), np.finfo(np.float64).eps)
    return n_train * np.log(mse) + 2.0 * (np.asarray(params, dtype=np.float64) + 1.0)


_WARM: set[tuple[str, bool]] = set()


def warm_up(method: str, profile: bool = False) -> None:
    """Compile (or load from numba's cache) the engine once per process, outside any timing;
    with `profile`, also its specialization that counts cycles by phase."""
    if (method, profile) in _WARM:
        return
    rng = np.random.default_rng(0)
    X = rng.random((20, 2))
    y = rng.random(20) * 2.0 - 1.0
    model = Model(method, 2, Hyperparameters(N=20))
    model.train(X, y, 40, 0, X_test=X[:5], y_test=y[:5], eval_every=20)
    if profile:
        Model(method, 2, Hyperparameters(N=20)).train(
            X, y, 40, 0, eval_every=20, clock=np.zeros(len(model.learner.phases), np.int64))
        counter_now()
    # The weighted order and errors (weights.py) compile their own functions.
    weight = np.arange(1.0, 21.0)
    Model(method, 2, Hyperparameters(N=20)).train(X, y, 40, 0, X_test=X[:5], y_test=y[:5], eval_every=20,
                                                  weight=weight, test_weight=weight[:5])
    if model.learner.refine is not None:
        model.refine(X, y, seed=0, max_iter=2)
        model.refine(X, y, seed=0, max_iter=2, weight=weight)
    for compaction in model.learner.compactions:
        copy.deepcopy(model).compact(X, y, seed=0, method=compaction)
        copy.deepcopy(model).compact(X, y, seed=0, method=compaction, weight=weight)
    _WARM.add((method, profile))


def train_run(method: str, X_train, y_train, X_test, y_test, *, params: Hyperparameters,
              iterations: int = 100_000, eval_every: int = 2000, seed: int = 0,
              profile: bool = False, weight=None, test_weight=None) -> TrainResult:
    """One learner run on scaled data: the learning curve, the final rules and the metrics.

    `weight`, `test_weight`: sample weights of the train and test rows (weights.py). Rows of
    weight 0 are left out first; training, refinement and compaction weigh the rows, and
    every error is a weighted mean. Weights all equal give the unweighted run, bit for bit.

    `seconds` is the training and evaluation time alone: compilation happens before it.
    With `params.refinement` the model is refined after the last evaluation: `final` then holds
    the refined errors and the evolved ones (REFINE_KEYS); the curve and `seconds` are the
    evolution's, `final["refine_seconds"]` the refinement's.
    With `profile` (learners with phases only) the result's `profile` says where the cycles
    of that time went; the run computes the same numbers.
    """
    X_train = _as_matrix(X_train, "X_train")
    X_train, y_train, weight = positive_rows(X_train, y_train, weight, "weight")
    if X_test is not None:
        X_test, y_test, test_weight = positive_rows(X_test, y_test, test_weight, "test_weight")
    model = Model(method, X_train.shape[1], params)
    phases = model.learner.phases
    if profile and not phases:
        with_phases = [registry.label(m) for m in registry.names() if registry.get(m).phases]
        raise ValueError(f"phase profiles exist only for {', '.join(with_phases)}")
    clock = np.zeros(len(phases), np.int64) if profile else None
    warm_up(method, profile)
    start = time.perf_counter()
    cycles = counter_now() if profile else 0
    raw = model.train(X_train, y_train, iterations, seed, X_test=X_test, y_test=y_test,
                      eval_every=eval_every, clock=clock, weight=weight, test_weight=test_weight)
    cycles = counter_now() - cycles if profile else 0
    seconds = time.perf_counter() - start
    curve = model.curve_frame(raw, X_train.shape[0])
    final = {k: curve.iloc[-1][k] for k in (*ERROR_KEYS, *_COUNT_KEYS, "aic")}
    for k in _COUNT_KEYS:
        final[k] = int(final[k])
    final["final_N"] = model.budget_N
    final["aic"] = float(final["aic"])
    if params.refinement:
        _refine_final(model, final, X_train, y_train, X_test, y_test, seed, weight=weight,
                      test_weight=test_weight)
    if params.compaction != "none":
        compact_final(model, final, X_train, y_train, X_test, y_test, seed, weight=weight,
                      test_weight=test_weight)
    # Whole-run covering rates: all covers over all iterations and submodels.
    total = int(iterations)
    for column, slots in zip(COVER_RATES, model.learner.cover_slots(model.n, model.params)):
        covers = column.replace("cover_rate", "covers")
        final[column] = math.nan if slots is None else curve[covers].sum() / (total * slots)
    run_profile = (Profile(phases, tuple(int(c) for c in clock), int(cycles)) if profile
                   else None)
    return TrainResult(method=method, curve=curve, population=model.population_frame(),
                       final=final, seconds=seconds, profile=run_profile)
