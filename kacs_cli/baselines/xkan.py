"""`xkan`: X-KAN (XCSF rules with KAN consequents, single-winner compaction) as a baseline.

docs/xkan.md describes the algorithm and its hyperparameters (the authors' defaults). The
population is a struct of arrays (bounds as unordered pairs p, q, and XCS's book-keeping) of
at most N + 1 rules; each rule's KAN (spline_kan.SplineKAN) is fitted once, when the rule is
created, on the train rows it covers. The online loop visits one row per iteration; its work
per row is a few array operations over at most N + 1 rules, and its cost is the KAN fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from kacs_cli.baselines.entry import Entry
from kacs_cli.baselines.spline_kan import SplineKAN, count_parameters
from kacs_cli.scaling import scale_inputs, scale_target, unscale_target

# The authors seed every consequent's initialisation with 42: all rules start alike.
KAN_SEED = 42
# Fits a run keeps for reuse, the least recently used dropped first: a bound on memory
# (about 18 kB per KAN at n = 10), not on the result, which a refit reproduces exactly.
MEMO_FITS = 4096


@dataclass
class RuleSet:
    """Rules as parallel arrays: interval ends p, q (rules, n) in either order, X-KAN's
    book-keeping per rule, and each rule's KAN."""

    p: np.ndarray
    q: np.ndarray
    fitness: np.ndarray
    error: np.ndarray
    accuracy: np.ndarray
    experience: np.ndarray
    time_stamp: np.ndarray
    match_set_size: np.ndarray
    numerosity: np.ndarray
    ident: np.ndarray       # creation number: a rule's identity while others come and go
    kans: list = field(default_factory=list)
    created: int = 0        # rules ever appended (the next ident)

    FIELDS = ("p", "q", "fitness", "error", "accuracy", "experience", "time_stamp", "match_set_size",
              "numerosity", "ident")

    @classmethod
    def empty(cls, n: int) -> "RuleSet":
        f = np.zeros(0)
        i = np.zeros(0, dtype=np.int64)
        return cls(np.zeros((0, n)), np.zeros((0, n)), f, f.copy(), f.copy(), i, i.copy(), f.copy(), i.copy(),
                   i.copy(), [])

    def __len__(self) -> int:
        return self.fitness.shape[0]

    @property
    def lower(self) -> np.ndarray:
        return np.minimum(self.p, self.q)

    @property
    def upper(self) -> np.ndarray:
        return np.maximum(self.p, self.q)

    def matching(self, x: np.ndarray) -> np.ndarray:
        """Indices of the rules whose every interval holds x (one row)."""
        return np.flatnonzero(np.all((self.lower <= x) & (x <= self.upper), axis=1))

    def append(self, rule: dict, kan: SplineKAN) -> None:
        rule = {**rule, "ident": self.created}
        self.created += 1
        for name in self.FIELDS:
            value = np.asarray(rule[name], dtype=getattr(self, name).dtype)
            setattr(self, name, np.concatenate([getattr(self, name), value[None]]))
        self.kans.append(kan)

    def remove(self, index: int) -> None:
        for name in self.FIELDS:
            setattr(self, name, np.delete(getattr(self, name), index, axis=0))
        del self.kans[index]

    def subset(self, indices) -> "RuleSet":
        indices = np.asarray(indices, dtype=np.int64)
        return RuleSet(*(getattr(self, name)[indices].copy() for name in self.FIELDS),
                       kans=[self.kans[i] for i in indices])

    def winners(self, X: np.ndarray) -> np.ndarray:
        """Per row the single winner: the matching rule of highest fitness (the last such in
        rule order on ties), -1 where none matches."""
        if len(self) == 0:
            return np.full(X.shape[0], -1, dtype=np.int64)
        match = np.all((self.lower[None] <= X[:, None, :]) & (X[:, None, :] <= self.upper[None]), axis=2)
        masked = np.where(match, self.fitness[None, :], -np.inf)
        last_best = masked.shape[1] - 1 - np.argmax(masked[:, ::-1], axis=1)
        return np.where(match.any(axis=1), last_best, -1)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Single-winner prediction; 0 where no rule matches."""
        winner = self.winners(X)
        out = np.zeros(X.shape[0])
        for rule in np.unique(winner[winner >= 0]):
            rows = winner == rule
            out[rows] = self.kans[rule].predict(X[rows])
        return out

    def compacted(self, X_train: np.ndarray) -> "RuleSet":
        """Single-winner compaction: the rules that win on some train row, in rule order."""
        winner = self.winners(X_train)
        return self.subset(np.unique(winner[winner >= 0]))


class XKANRegressor(RegressorMixin, BaseEstimator):
    """X-KAN (docs/xkan.md) as a scikit-learn regressor: inputs scaled to [0, 1] and the target
    to [-1, 1] with the train rows' ranges, predictions in the target's units."""

    _parameter_constraints = {
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "N": [Interval(Integral, 1, None, closed="left")],
        "beta": [Interval(Real, 0, 1, closed="right")],
        "e0": [Interval(Real, 0, None, closed="neither")],
        "theta_GA": [Interval(Real, 0, None, closed="left")],
        "chi": [Interval(Real, 0, 1, closed="both")],
        "mu": [Interval(Real, 0, 1, closed="both")],
        "m0": [Interval(Real, 0, None, closed="left")],
        "theta_del": [Interval(Real, 0, None, closed="left")],
        "delta": [Interval(Real, 0, None, closed="left")],
        "P_hash": [Interval(Real, 0, 1, closed="both")],
        "r0": [Interval(Real, 0, None, closed="left")],
        "F_I": [Interval(Real, 0, None, closed="left")],
        "tau": [Interval(Real, 0, 1, closed="right")],
        "do_subsumption": ["boolean"],
        "kan_steps": [Interval(Integral, 1, None, closed="left")],
        "grid": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "compaction": ["boolean"],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(self, epochs=10, N=50, beta=0.2, e0=0.02, theta_GA=100, chi=0.8, mu=0.04, m0=0.1,
                 theta_del=100, delta=0.1, P_hash=0.0, r0=1.0, F_I=0.01, tau=0.4, do_subsumption=True,
                 kan_steps=10, grid=3, k=3, compaction=True, random_state=None):
        self.epochs = epochs
        self.N = N
        self.beta = beta
        self.e0 = e0
        self.theta_GA = theta_GA
        self.chi = chi
        self.mu = mu
        self.m0 = m0
        self.theta_del = theta_del
        self.delta = delta
        self.P_hash = P_hash
        self.r0 = r0
        self.F_I = F_I
        self.tau = tau
        self.do_subsumption = do_subsumption
        self.kan_steps = kan_steps
        self.grid = grid
        self.k = k
        self.compaction = compaction
        self.random_state = random_state

    # ------------------------------------------------------------------ fit

    def fit(self, X, y):
        from threadpoolctl import threadpool_limits

        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(f"X-KAN needs at least 2 train rows, got {X.shape[0]}")
        self.x_min_, self.x_max_ = X.min(axis=0), X.max(axis=0)
        self.y_min_, self.y_max_ = float(y.min()), float(y.max())
        Xs = scale_inputs(X, self.x_min_, self.x_max_, clip=False)
        ys = (np.zeros_like(y) if self.y_max_ == self.y_min_
              else scale_target(y, self.y_min_, self.y_max_, clip=False))
        # One BLAS thread: scipy's L-BFGS-B on many threads is about 10x slower on a shared machine.
        with threadpool_limits(limits=1):
            trained, self.counts_ = _train(self, Xs, ys, np.random.default_rng(self.random_state))
        self.trained_rules_ = trained
        self.compacted_rules_ = trained.compacted(Xs)
        self.rules_set_ = self.compacted_rules_ if self.compaction else trained
        self.n_rules_ = len(self.rules_set_)
        self.n_params_ = self.n_rules_ * count_parameters(X.shape[1], 2 * X.shape[1] + 1, self.grid, self.k)
        return self

    def predict(self, X):
        check_is_fitted(self, "rules_set_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._unscale(self.rules_set_.predict(scale_inputs(X, self.x_min_, self.x_max_, clip=True)))

    def predict_trained(self, X):
        """Predictions of the rule set before compaction."""
        check_is_fitted(self, "rules_set_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._unscale(self.trained_rules_.predict(scale_inputs(X, self.x_min_, self.x_max_, clip=True)))

    def _unscale(self, ys):
        if self.y_max_ == self.y_min_:
            return np.full(ys.shape, self.y_min_)
        return unscale_target(ys, self.y_min_, self.y_max_)


# ---------------------------------------------------------------------- training


class Consequents:
    """The KAN consequents of one run: a new rule's KAN, fitted on the train rows its
    antecedent covers (all of them when it covers at most one), and its MAE there.

    A fit depends only on its rows (every KAN starts from the same initialisation and the
    training is deterministic), so the run keeps each fit by its row set and answers a row
    set it has fitted before with that fit; the rules share it (a KAN is never changed after
    its fit). At high n most coverings cover at most one train row, and each of those is the
    same fit on all rows."""

    def __init__(self, est, X: np.ndarray, y: np.ndarray):
        self.X, self.y = X, y
        n = X.shape[1]
        self.steps = int(est.kan_steps)
        self.initial = SplineKAN.initial(n, 2 * n + 1, int(est.grid), int(est.k), KAN_SEED)
        self.fitted: dict[bytes, tuple[SplineKAN, float]] = {}
        self.reused = 0

    def fit(self, lower: np.ndarray, upper: np.ndarray) -> tuple[SplineKAN, float]:
        covered = np.all((self.X >= lower) & (self.X <= upper), axis=1)
        rows = covered if np.count_nonzero(covered) > 1 else np.ones(self.X.shape[0], dtype=bool)
        key = np.packbits(rows).tobytes()
        if key in self.fitted:
            self.reused += 1
            self.fitted[key] = self.fitted.pop(key)       # the most recently used last
            return self.fitted[key]
        X, y = self.X[rows], self.y[rows]
        kan = self.initial.copy().fit(X, y, self.steps)
        fitted = self.fitted[key] = kan, kan.mae(X, y)
        if len(self.fitted) > MEMO_FITS:
            del self.fitted[next(iter(self.fitted))]
        return fitted


def _accuracy(error: float, e0: float) -> float:
    return 1.0 if error < e0 else e0 / error


def _new_rule(est, consequents, p, q, fitness, time_stamp, match_set_size):
    kan, error = consequents.fit(np.minimum(p, q), np.maximum(p, q))
    rule = dict(p=p, q=q, fitness=fitness, error=error, accuracy=_accuracy(error, est.e0), experience=0,
                time_stamp=time_stamp, match_set_size=match_set_size, numerosity=1)
    return rule, kan


def _cover(est, rules, consequents, x, t, rng, counts):
    n = x.shape[0]
    p = np.empty(n)
    q = np.empty(n)
    for i in range(n):
        if rng.random() < est.P_hash:
            lo, hi = 0.0, 1.0
        else:
            offset = rng.random() * est.r0
            lo, hi = min(max(x[i] - offset, 0.0), 1.0), min(max(x[i] + offset, 0.0), 1.0)
        p[i], q[i] = (lo, hi) if rng.random() < 0.5 else (hi, lo)
    rule, kan = _new_rule(est, consequents, p, q, est.F_I, t, 1.0)
    rules.append(rule, kan)
    counts["covering"] += 1
    counts["kan_fits"] += 1
    _delete(est, rules, rng)


def _update(est, rules, match):
    num = rules.numerosity[match]
    rules.experience[match] += 1
    rules.match_set_size[match] += est.beta * (num.sum() - rules.match_set_size[match])
    weighted = rules.accuracy[match] * num
    fitness = rules.fitness[match] + est.beta * (weighted / weighted.sum() - rules.fitness[match])
    rules.fitness[match] = np.where(np.isnan(fitness), est.F_I, fitness)


def _select(est, rules, match, rng) -> int:
    """The authors' tournament: a pass over the match set in which a rule whose fitness per
    numerosity beats the current choice takes its place with probability 1 - (1 - tau)^num."""
    chosen = -1
    while chosen < 0:
        for r in match:
            if chosen < 0 or (rules.fitness[chosen] / rules.numerosity[chosen]
                              < rules.fitness[r] / rules.numerosity[r]):
                for _ in range(int(rules.numerosity[r])):
                    if rng.random() < est.tau:
                        chosen = int(r)
                        break
    return chosen


def _run_ga(est, rules, match, consequents, t, rng, counts):
    num = rules.numerosity[match]
    if t - np.sum(rules.time_stamp[match] * num) / num.sum() <= est.theta_GA:
        return
    rules.time_stamp[match] = t
    parents = (_select(est, rules, match, rng), _select(est, rules, match, rng))
    children = [dict(p=rules.p[a].copy(), q=rules.q[a].copy(),
                     fitness=rules.fitness[a] / rules.numerosity[a], time_stamp=rules.time_stamp[a],
                     match_set_size=rules.match_set_size[a]) for a in parents]
    if rng.random() < est.chi:
        swapped = False
        for i in range(rules.p.shape[1]):
            for end in ("p", "q"):
                if rng.random() < 0.5:
                    children[0][end][i], children[1][end][i] = children[1][end][i], children[0][end][i]
                    swapped = True
        if swapped:
            mean = (rules.fitness[parents[0]] + rules.fitness[parents[1]]) / 2.0
            children[0]["fitness"] = children[1]["fitness"] = mean
    for child in children:
        child["fitness"] *= 0.1
    # Indices move when the first child's deletion removes a rule: the parents are kept by
    # identity, with their bounds and errors (which never change).
    parent_state = [(rules.lower[a].copy(), rules.upper[a].copy(), rules.error[a], rules.ident[a])
                    for a in parents]
    for child in children:
        for i in range(rules.p.shape[1]):
            if rng.random() < est.mu:
                child["p"][i] = min(max(child["p"][i] + 2 * est.m0 * rng.random() - est.m0, 0.0), 1.0)
                child["q"][i] = min(max(child["q"][i] + 2 * est.m0 * rng.random() - est.m0, 0.0), 1.0)
        lower, upper = np.minimum(child["p"], child["q"]), np.maximum(child["p"], child["q"])
        subsumer = -1
        if est.do_subsumption:
            for p_lower, p_upper, p_error, ident in parent_state:
                if p_error < est.e0 and np.all(p_lower <= lower) and np.all(p_upper >= upper):
                    # -2: the parent was deleted after the first child (its new numerosity is lost)
                    where = np.flatnonzero(rules.ident == ident)
                    subsumer = int(where[0]) if where.size else -2
                    break
        if subsumer != -1:
            if subsumer >= 0:
                rules.numerosity[subsumer] += 1
            counts["subsumption"] += 1
        else:
            _insert(est, rules, child, lower, upper, consequents, counts)
        _delete(est, rules, rng)


def _insert(est, rules, child, lower, upper, consequents, counts):
    same = np.flatnonzero(np.all(rules.lower == lower, axis=1) & np.all(rules.upper == upper, axis=1))
    if same.size:
        rules.numerosity[same[0]] += 1
        return
    rule, kan = _new_rule(est, consequents, child["p"], child["q"], child["fitness"], child["time_stamp"],
                          child["match_set_size"])
    rules.append(rule, kan)
    counts["kan_fits"] += 1


def _delete(est, rules, rng):
    total = rules.numerosity.sum()
    if total <= est.N:
        return
    mean_fitness = rules.fitness.sum() / total
    per_micro = rules.fitness / rules.numerosity
    vote = rules.match_set_size * rules.numerosity
    weak = (rules.experience > est.theta_del) & (per_micro < est.delta * mean_fitness)
    vote = np.where(weak, vote * mean_fitness / np.maximum(per_micro, 1e-12), vote)
    point = rng.random() * vote.sum()
    chosen = int(np.searchsorted(np.cumsum(vote), point, side="right"))
    chosen = min(chosen, len(rules) - 1)
    rules.numerosity[chosen] -= 1
    if rules.numerosity[chosen] == 0:
        rules.remove(chosen)


def _train(est, X, y, rng):
    """epochs passes over the train rows in one shuffled order (the authors' code draws the
    same order at every epoch); returns the trained rules and the operation counts (covering,
    subsumption, KAN fits in all and per epoch: what a run costs; kan_fits_reused: those a
    fit of the same rows answered)."""
    rules = RuleSet.empty(X.shape[1])
    consequents = Consequents(est, X, y)
    counts = {"covering": 0, "subsumption": 0, "kan_fits": 0, "iterations": 0, "kan_fits_by_epoch": []}
    order = rng.permutation(X.shape[0])
    t = 0
    for _ in range(int(est.epochs)):
        fits_before = counts["kan_fits"]
        for row in order:
            x = X[row]
            match = rules.matching(x)
            if match.size == 0:
                _cover(est, rules, consequents, x, t, rng, counts)
                match = rules.matching(x)
            if match.size:
                _update(est, rules, match)
                _run_ga(est, rules, match, consequents, t, rng, counts)
            t += 1
        counts["kan_fits_by_epoch"].append(counts["kan_fits"] - fits_before)
    counts["iterations"] = t
    counts["kan_fits_reused"] = consequents.reused
    return rules, counts


def _warm_up() -> None:
    """Compile (or load from numba's cache) the KAN's kernels: a tiny fit."""
    X = np.linspace(0.0, 1.0, 8)[:, None]
    SplineKAN.initial(1, 3, 3, 3, KAN_SEED).fit(X, X[:, 0], steps=1)


def count_xkan_parameters(est: XKANRegressor, n: int) -> int:
    return int(est.n_params_)


ENTRY = Entry(
    "xkan", "X-KAN", f"{__name__}.XKANRegressor", count_xkan_parameters,
    counted="rules of the predicting (compacted) model x KAN [n, 2n + 1, 1] trained numbers, "
            "(n (2n + 1) + 2n + 1) (grid + k + 2) per rule; bounds not counted",
    warm_up=_warm_up, readable=True,
    # the authors' runs: P# 0 on f1-f4, 0.8 on real data (docs/xkan.md section 4)
    p_hash_param="P_hash",
    # about 76 CPU s on f1 (900 x 10) at the defaults (docs/xkan.md section 6)
    cost=lambda rows, n: 3.7e-4 * rows * (n + 1) * (2 * n + 1),
)
