"""Capacity chosen on the user's data: the population budget N by validation.

The candidates are N, 2N, 4N, ... up to `capacity_max` (N alone when capacity_max < 2N).
Each is trained, with the run's seed and iterations and every other setting of the run
(refinement included; compaction and bagging left out: a candidate is one model), on the
train rows less a held-out part, and
scored by its MAE on that part. The candidates are tried from the smallest, and the ladder
stops at the first one that does not lower the best score so far: a larger population only
pays while the held-out error still falls, and stopping there keeps the search to the budgets
up to one past the chosen one (the time of the search then stays within a few fits at the
chosen budget, where the whole ladder would cost fifteen fits at N when N wins). The smallest
budget with the lowest score wins, and the caller refits it on all the train rows. The
held-out rows are drawn from the seed, so the
choice is deterministic for a seed. With sample weights the candidates train on the fit rows'
weights and the score is the held-out rows' weighted MAE (the held-out rows are drawn as
without weights). The data are those the learner sees (scaled and
transformed on all the train rows: the transform sees the held-out inputs, never their
targets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.train import in_processes, train_run, worker_count

# Mixed into the seed so that the held-out rows do not follow the learner's own stream.
_SPLIT_STREAM = 0x63617061


@dataclass(frozen=True)
class CapacityResult:
    chosen_N: int
    candidates: tuple[int, ...]  # the budgets tried, smallest first
    scores: tuple[float, ...]   # held-out MAE of each candidate, on the [-1, 1] target scale
    seconds: float              # the search's training time, its refinements included


def candidate_budgets(params: Hyperparameters) -> tuple[int, ...]:
    budgets, N = [], int(params.N)
    while N <= params.capacity_max or not budgets:
        budgets.append(N)
        N *= 2
    return tuple(budgets)


def held_out_rows(rows: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, held-out rows) as index arrays: round(fraction x rows) held out, at least
    one on each side."""
    order = np.random.default_rng([int(seed), _SPLIT_STREAM]).permutation(rows)
    held = min(max(1, int(round(fraction * rows))), rows - 1)
    return np.sort(order[held:]), np.sort(order[:held])


def _score(method: str, X, y, fit, held, params: Hyperparameters, N: int, iterations: int, seed: int,
           weight=None):
    """(held-out MAE, training and refinement seconds) of the candidate budget N."""
    trial = params.with_overrides(N=N, capacity="fixed", compaction="none", bags=1)
    part = (lambda rows: None) if weight is None else (lambda rows: weight[rows])
    result = train_run(method, X[fit], y[fit], X[held], y[held], params=trial, iterations=iterations,
                       eval_every=iterations, seed=seed, weight=part(fit), test_weight=part(held))
    return float(result.final["test_mae"]), result.seconds + float(result.final.get("refine_seconds", 0.0))


def search(method: str, X, y, params: Hyperparameters, iterations: int, seed: int,
           n_jobs: int | None = None, weight=None) -> CapacityResult:
    """The budget `params.capacity: search` picks for (X, y), the learner's scaled rows
    (`weight`: their sample weights, rows of weight 0 left out by the caller; None: unweighted).

    With n_jobs > 1 (or -1: every core) the candidates are trained that many at a time, in
    parallel processes, ahead of the ladder's stopping rule: the rule is then applied to their
    scores in ladder order, so the choice, the candidates tried and their scores are those of
    the sequential search; a candidate past the stop is trained for nothing (at most n_jobs - 1
    of them) and is not reported."""
    X, y = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
    if X.shape[0] < 2:
        raise ValueError("the capacity search needs at least two train rows")
    fit, held = held_out_rows(X.shape[0], params.capacity_validation, seed)
    candidates = candidate_budgets(params)
    width = worker_count(n_jobs)
    scores, seconds = [], 0.0
    for first in range(0, len(candidates), width):
        if _stops(scores):
            break
        batch = candidates[first:first + width]
        for score, spent in in_processes(
                _score, [(method, X, y, fit, held, params, N, iterations, seed, weight) for N in batch], width):
            if _stops(scores):
                break
            scores.append(score)
            seconds += spent
    best = int(np.argmin(scores))  # the first of equal scores: the smallest budget
    return CapacityResult(candidates[best], candidates[:len(scores)], tuple(scores), seconds)


def _stops(scores: list[float]) -> bool:
    """The ladder's stopping rule: the last candidate did not lower the best score before it."""
    return len(scores) >= 2 and scores[-1] >= min(scores[:-1])
