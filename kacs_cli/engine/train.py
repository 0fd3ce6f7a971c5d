"""The training driver every later layer uses: scaled arrays in, learning curve and rules out."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit

from kacs_cli.engine import budget, core, kacs, xcsf
from kacs_cli.engine.core import (
    H_N, S_COVERS, S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_P, S_T, S_TOTAL, hp_vector,
    new_population, new_scratch, seed_rng,
)
from kacs_cli.engine.params import Hyperparameters

METHODS = ("kacs", "xcsf")
# XCSF looks its match sets up in a row index (core.rx_build) from this many inputs on, where
# testing n bounds per rule dominates its iteration; with few inputs rules are general, match
# many rows, and keeping the index would cost more than the tests it saves.
ROW_INDEX_MIN_INPUTS = 16
# ... and while the index's tables stay this small (bytes): the prefix row sets grow with
# inputs x rows^2 / 64.
ROW_INDEX_MAX_BYTES = 64 * 2**20
# KACS's population is re-sorted by submodel this often (for memory locality only).
RESORT_EVERY = 100

CURVE_COLUMNS = (
    "iteration", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params",
    "aic", "covers", "covers_inner", "covers_outer", "deletions", "cover_rate",
    "cover_rate_inner", "cover_rate_outer", "budget",
)
# Columns filled by the compiled loop; the rest are derived in Python. `budget` is the
# population budget N in force at the evaluation (constant unless budget: adaptive).
_RAW = ("iteration", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro",
        "covers", "covers_inner", "covers_outer", "deletions", "budget")


@dataclass
class TrainResult:
    method: str
    curve: pd.DataFrame            # one row per evaluation point, CURVE_COLUMNS
    population: pd.DataFrame       # one row per macro-rule
    final: dict = field(default_factory=dict)  # last curve row + whole-run cover rates
    seconds: float = 0.0


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
def _train_loop(is_kacs, pop, wk, members, flags, sc, rx, hp, bp, bs, X, y, X_eval, y_eval, n,
                iterations, eval_every, new_order_each_epoch, curve):
    """Train for `iterations` samples; evaluate every `eval_every` and at the end."""
    rows = X.shape[0]
    # The population may have been edited since the last call (loaded, hand-built): the
    # antecedent keys are rebuilt when first needed.
    sc.key_state[0] = 0
    if rx.state[0] != 0:
        core.rx_build(pop, rx)
    order = np.random.permutation(rows)
    row_eval = 0
    last = np.zeros(4, np.int64)
    last[0] = pop.scal[S_COVERS]
    last[1] = pop.scal[S_COVERS_IN]
    last[2] = pop.scal[S_COVERS_OUT]
    last[3] = pop.scal[S_DELETIONS]
    for it in range(iterations):
        pos = it % rows
        if pos == 0 and it > 0 and new_order_each_epoch:
            order = np.random.permutation(rows)
        r = order[pos]
        if is_kacs:
            if it % RESORT_EVERY == 0:
                kacs.sort_by_submodel(pop, wk, sc)
            kacs.train_step(pop, wk, X[r], y[r], n, hp, sc)
            # Adaptive budget (budget.py): may raise hp[H_N] at the end of a window.
            if bs[budget.BS_ON] != 0:
                budget.after_iteration(pop.scal, hp, bp, bs, n)
        else:
            xcsf.train_step(pop, members, flags, X[r], y[r], hp, sc, rx, r)
        done = it + 1
        if done % eval_every == 0 or done == iterations:
            if is_kacs:
                y_hat = kacs.predict(pop, X_eval, n)
            elif rx.state[0] != 0:
                y_hat = xcsf.predict_rows(pop, X_eval, rx)
            else:
                y_hat = xcsf.predict(pop, X_eval)
            n_train = rows
            train_mae, train_mse = _errors(y_hat[:n_train], y)
            test_mae, test_mse = np.nan, np.nan
            if X_eval.shape[0] > n_train:
                test_mae, test_mse = _errors(y_hat[n_train:], y_eval[n_train:])
            curve[row_eval, 0] = done
            curve[row_eval, 1] = train_mae
            curve[row_eval, 2] = test_mae
            curve[row_eval, 3] = train_mse
            curve[row_eval, 4] = test_mse
            curve[row_eval, 5] = pop.scal[S_P]
            curve[row_eval, 6] = pop.scal[S_TOTAL]
            curve[row_eval, 7] = pop.scal[S_COVERS] - last[0]
            curve[row_eval, 8] = pop.scal[S_COVERS_IN] - last[1]
            curve[row_eval, 9] = pop.scal[S_COVERS_OUT] - last[2]
            curve[row_eval, 10] = pop.scal[S_DELETIONS] - last[3]
            curve[row_eval, 11] = hp[H_N]
            last[0] = pop.scal[S_COVERS]
            last[1] = pop.scal[S_COVERS_IN]
            last[2] = pop.scal[S_COVERS_OUT]
            last[3] = pop.scal[S_DELETIONS]
            row_eval += 1
    return row_eval


def _as_matrix(X, name):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (rows, n), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return np.ascontiguousarray(X)


def _as_vector(y, rows, name):
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != rows:
        raise ValueError(f"{name} must be a 1-D array with {rows} values, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return np.ascontiguousarray(y)


class Model:
    """A KACS or XCSF population with its compiled buffers: train, predict, inspect."""

    def __init__(self, method: str, n: int, params: Hyperparameters | None = None):
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        if int(n) != n or n < 1:
            raise ValueError(f"n (number of inputs) must be a whole number >= 1, got {n!r}")
        self.method = method
        self.n = int(n)
        self.params = params if params is not None else Hyperparameters()
        self.hp = hp_vector(self.params)
        if method == "kacs":
            self.n_submodels = kacs.n_submodels(self.n)[1]
            D, K = 1, 2
        else:
            self.n_submodels = 1
            D, K = self.n, self.n + 1
        # Budget state (adaptive budget only; see budget.py). The population must hold the
        # largest budget the run can reach, N_max under budget: adaptive.
        self.budget_params, self.budget_state = budget.new_budget(self.params, self.n,
                                                                  method == "kacs")
        # Within one iteration, covering adds at most one rule and the GA two per match set;
        # removed rules keep their slots until the iteration ends.
        self.capacity = budget.capacity_budget(self.params) + 3 * self.n_submodels + 8
        self.pop = new_population(self.capacity, D, K)
        self.scratch = new_scratch(self.capacity, D, K, self.n_submodels)
        self.work = kacs.new_work(self.capacity, self.n if method == "kacs" else 1)
        self.members = np.zeros(self.capacity, np.int64)
        self.match_flags = np.zeros(self.capacity, np.uint8)
        self.row_index = core.new_row_index(D)

    @property
    def is_kacs(self) -> bool:
        return self.method == "kacs"

    @property
    def iterations_done(self) -> int:
        return int(self.pop.scal[S_T])

    @property
    def n_rules(self) -> int:
        return int(self.pop.scal[S_P])

    @property
    def n_micro(self) -> int:
        return int(self.pop.scal[S_TOTAL])

    @property
    def budget_N(self) -> int:
        """The population budget N in force now (grows only under budget: adaptive)."""
        return int(self.hp[H_N])

    @property
    def n_params(self) -> int:
        d = 1 if self.is_kacs else self.n
        return self.n_rules * (d + 1)

    def _check_inputs(self, X, name="X"):
        X = _as_matrix(X, name)
        if X.shape[1] != self.n:
            raise ValueError(f"{name} has {X.shape[1]} columns but the model has n = {self.n} inputs")
        return X

    def train(self, X, y, iterations: int, seed: int, *, X_test=None, y_test=None,
              eval_every: int | None = None) -> np.ndarray:
        """Learn online for `iterations` samples; returns the raw curve rows."""
        X = self._check_inputs(X, "X_train")
        y = _as_vector(y, X.shape[0], "y_train")
        if X.shape[0] < 1:
            raise ValueError("X_train has no rows")
        if int(iterations) != iterations or iterations < 1:
            raise ValueError(f"iterations must be a whole number >= 1, got {iterations!r}")
        iterations = int(iterations)
        eval_every = iterations if eval_every is None else int(eval_every)
        if eval_every < 1:
            raise ValueError(f"eval_every must be >= 1, got {eval_every!r}")
        if X_test is None:
            X_eval, y_eval = X, y
        else:
            X_test = self._check_inputs(X_test, "X_test")
            y_test = _as_vector(y_test, X_test.shape[0], "y_test")
            X_eval = np.ascontiguousarray(np.vstack([X, X_test]))
            y_eval = np.concatenate([y, y_test])
        self._row_index(X_eval)
        n_evals = iterations // eval_every + (1 if iterations % eval_every else 0)
        curve = np.full((n_evals, len(_RAW)), np.nan)
        seed_rng(int(seed) % (2**32))
        rows = _train_loop(
            self.is_kacs, self.pop, self.work, self.members, self.match_flags, self.scratch,
            self.row_index,
            self.hp, self.budget_params, self.budget_state, X, y,
            X_eval, y_eval, self.n, iterations, eval_every,
            self.params.semantics == "article", curve,
        )
        return curve[:rows]

    def _row_index(self, X_eval: np.ndarray) -> None:
        """Turn XCSF's row index (core.rx_build) on for the rows of X_eval, or off."""
        rows = X_eval.shape[0]
        row_words = (rows + 63) // 64
        size = 8 * (self.n * (rows + 1) * row_words + rows * ((self.capacity + 63) // 64)
                    + self.capacity * row_words)
        if self.is_kacs or self.n < ROW_INDEX_MIN_INPUTS or size > ROW_INDEX_MAX_BYTES:
            self.row_index.state[0] = 0
            return
        vals = np.empty((self.n, rows))
        pre = np.empty((self.n, rows + 1, row_words), np.uint64)
        core.rx_tables(X_eval, vals, pre)
        self.row_index = core.RowIndex(
            state=np.ones(1, np.int64), vals=vals, pre=pre,
            rows=np.zeros((rows, (self.capacity + 63) // 64), np.uint64),
            mask=np.zeros((self.capacity, row_words), np.uint64))

    def predict(self, X) -> np.ndarray:
        X = self._check_inputs(X)
        if self.is_kacs:
            return kacs.predict(self.pop, X, self.n)
        return xcsf.predict(self.pop, X)

    def predict_components(self, X):
        """KACS only: (psihat[rows, 2n+1, n], zhat[rows, 2n+1], phihat[rows, 2n+1], y_hat)."""
        if not self.is_kacs:
            raise ValueError("components exist only for KACS")
        X = self._check_inputs(X)
        rows, n = X.shape[0], self.n
        n_q = 2 * n + 1
        psihat = np.empty((rows, n * n_q))
        zhat = np.empty((rows, n_q))
        phihat = np.empty((rows, n_q))
        y_hat = kacs.predict_components(self.pop, X, n, psihat, zhat, phihat)
        return psihat.reshape(rows, n_q, n), zhat, phihat, y_hat

    def population_frame(self) -> pd.DataFrame:
        P = self.n_rules
        pop = self.pop
        cols: dict[str, np.ndarray] = {}
        if self.is_kacs:
            s_in = self.n * (2 * self.n + 1)
            sub = pop.sub[:P]
            inner = sub < s_in
            cols["type"] = np.where(inner, "inner", "outer")
            cols["q"] = np.where(inner, sub // self.n, sub - s_in) + 1
            cols["p"] = np.where(inner, sub % self.n + 1, 0)
            cols["lower"] = pop.lo[0, :P].copy()
            cols["upper"] = pop.hi[0, :P].copy()
            cols["a"] = pop.a[:P, 0].copy()
            cols["b"] = pop.b[:P, 0].copy()
            cols["w0"] = pop.w[:P, 0].copy()
            cols["w1"] = pop.w[:P, 1].copy()
        else:
            for d in range(self.n):
                cols[f"lower_{d + 1}"] = pop.lo[d, :P].copy()
                cols[f"upper_{d + 1}"] = pop.hi[d, :P].copy()
            for d in range(self.n):
                cols[f"a_{d + 1}"] = pop.a[:P, d].copy()
                cols[f"b_{d + 1}"] = pop.b[:P, d].copy()
            for j in range(self.n + 1):
                cols[f"w{j}"] = pop.w[:P, j].copy()
        for name in ("F", "eps", "kappa", "exp", "num", "ms", "ts"):
            cols[name] = getattr(pop, name)[:P].copy()
        return pd.DataFrame(cols)

    def curve_frame(self, raw: np.ndarray, n_train: int) -> pd.DataFrame:
        df = pd.DataFrame(raw, columns=list(_RAW))
        for c in ("iteration", "rules", "micro", "covers", "covers_inner", "covers_outer", "deletions",
                  "budget"):
            df[c] = df[c].astype(np.int64)
        d = 1 if self.is_kacs else self.n
        df["params"] = df["rules"] * (d + 1)
        df["aic"] = aic(n_train, df["train_mse"].to_numpy(), df["params"].to_numpy())
        steps = np.diff(np.concatenate([[0], df["iteration"].to_numpy()]))
        if self.is_kacs:
            q = 2 * self.n + 1
            df["cover_rate"] = df["covers"] / (steps * (self.n + 1) * q)
            df["cover_rate_inner"] = df["covers_inner"] / (steps * self.n * q)
            df["cover_rate_outer"] = df["covers_outer"] / (steps * q)
        else:
            df["cover_rate"] = df["covers"] / steps
            df["cover_rate_inner"] = np.nan
            df["cover_rate_outer"] = np.nan
        return df[list(CURVE_COLUMNS)]


def aic(n_train: int, train_mse, params):
    """AIC = N_tr ln(train MSE) + 2 (k + 1), the MSE floored at machine epsilon (SPEC 7)."""
    mse = np.maximum(np.asarray(train_mse, dtype=np.float64), np.finfo(np.float64).eps)
    return n_train * np.log(mse) + 2.0 * (np.asarray(params, dtype=np.float64) + 1.0)


_WARM: set[str] = set()


def warm_up(method: str) -> None:
    """Compile (or load from numba's cache) the engine once per process, outside any timing."""
    if method in _WARM:
        return
    rng = np.random.default_rng(0)
    X = rng.random((20, 2))
    y = rng.random(20) * 2.0 - 1.0
    Model(method, 2, Hyperparameters(N=20)).train(X, y, 40, 0, X_test=X[:5], y_test=y[:5],
                                                  eval_every=20)
    _WARM.add(method)


def train_run(method: str, X_train, y_train, X_test, y_test, *, params: Hyperparameters,
              iterations: int = 100_000, eval_every: int = 2000, seed: int = 0) -> TrainResult:
    """One learner run on scaled data: the learning curve, the final rules and the metrics.

    `seconds` is the training and evaluation time alone: compilation happens before it.
    """
    X_train = _as_matrix(X_train, "X_train")
    model = Model(method, X_train.shape[1], params)
    warm_up(method)
    start = time.perf_counter()
    raw = model.train(X_train, y_train, iterations, seed, X_test=X_test, y_test=y_test,
                      eval_every=eval_every)
    seconds = time.perf_counter() - start
    curve = model.curve_frame(raw, X_train.shape[0])
    final = {k: curve.iloc[-1][k] for k in ("train_mae", "test_mae", "train_mse", "test_mse",
                                            "rules", "micro", "params", "aic")}
    for k in ("rules", "micro", "params"):
        final[k] = int(final[k])
    final["final_N"] = model.budget_N
    final["aic"] = float(final["aic"])
    # Whole-run covering rates: all covers over all iterations and submodels.
    total = int(iterations)
    if model.is_kacs:
        q = 2 * model.n + 1
        final["cover_rate"] = curve["covers"].sum() / (total * (model.n + 1) * q)
        final["cover_rate_inner"] = curve["covers_inner"].sum() / (total * model.n * q)
        final["cover_rate_outer"] = curve["covers_outer"].sum() / (total * q)
    else:
        final["cover_rate"] = curve["covers"].sum() / total
        final["cover_rate_inner"] = math.nan
        final["cover_rate_outer"] = math.nan
    return TrainResult(method=method, curve=curve, population=model.population_frame(),
                       final=final, seconds=seconds)
