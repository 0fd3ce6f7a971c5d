"""Capacity chosen on the user's data: the population budget N (and, if asked, KACS's number
of outer channels) by validation.

The candidates are a ladder of budgets per channel count: the start (`capacity_min`, or N
when it is 0), twice that, four times, ... up to `capacity_max` (the start alone when
capacity_max is below twice it). The channel counts are the run's own (`capacity_channels:
given`) or n + 1 and 2n + 1 (`both`: KACS's structure sized with its budget). Each candidate
is trained, with the run's seed and iterations and every other setting of the run (refinement
included; compaction and bagging left out: a candidate is one model), on the train rows less a
held-out part, and scored by its MAE on that part. With `capacity_folds` k >= 2 the held-out
parts are the k folds of the train rows (each row held out exactly once) and the candidate is
trained k times; its score is then the MAE of every train row's held-out prediction, each
fold's MAE weighted by its rows (by their total weight with sample weights): a score on all the
train rows instead of on one part of them.

Each ladder is climbed from its smallest budget and stops at the first candidate that does not
lower its best score so far: a larger population only pays while the held-out error still
falls, and stopping there keeps the search to the budgets up to one past the chosen one (the
time of the search then stays within a few fits at the chosen budget, where the whole ladder
would cost fifteen fits at N when N wins). The candidate with the lowest score wins (of equal
scores, the one with fewer channels, then the smaller budget), and the caller refits it on all
the train rows. The held-out rows are drawn from the seed, so the choice is deterministic for
a seed. With sample weights the candidates train on the fit rows' weights and the score is the
held-out rows' weighted MAE (the held-out rows are drawn as without weights). The data are
those the learner sees (scaled and transformed on all the train rows: the transform sees the
held-out inputs, never their targets).

With `smoothness: search` the search also chooses the strength of the refinement's smoothness
penalty: each candidate, once trained on a part's fit rows, is refined with every strength of
SMOOTHNESS_LADDER in turn (each time from its evolved weights) and scored with each; its score
is that of its best strength (pooled over the parts as one score), and the strength of the
chosen candidate is the one the caller's fit refines with. The strength is judged here, on rows
the candidate's evolution never saw: judged after an evolution on all the train rows, rows that
shaped the rules' intervals would score every penalty against a fit that already knows them,
and the unpenalized refinement, closest to that fit, would win.

Beyond row_caps.SEARCH_SCORE_MAX_ROWS held-out rows in a part, a seeded sample of that many
judges the candidates, and a candidate's refinement fits at most row_caps.SEARCH_REFINE_MAX_ROWS
of its fit rows (row_caps.py says why each cap suffices); no other row is predicted. Below the
caps each score is, bit for bit, the test MAE that train_run gives the candidate's training.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field

import numpy as np

from kacs_cli.engine import row_caps
from kacs_cli.engine.params import CAPACITY_FIXED, Hyperparameters
from kacs_cli.engine.train import Model, errors, executor, warm_up, worker_count
from kacs_cli.engine.weights import positive_rows
from kacs_cli.errors import UserError

# Mixed into the seed so that the held-out rows do not follow the learner's own stream; the
# folds have their own, so that they are no reshuffle of the one held-out part, and so has the
# sample of a large held-out part that judges the candidates.
_SPLIT_STREAM = 0x63617061
_FOLD_STREAM = 0x666f6c64
_JUDGE_STREAM = 0x6a756467
# `smoothness: search`: the strengths each candidate is refined with.
SMOOTHNESS_LADDER = (0.0, 1.0, 3.0, 10.0, 30.0)


def tried_strengths(params: Hyperparameters) -> tuple[float, ...] | None:
    """The smoothness strengths each candidate is scored at: the ladder under smoothness:
    search, else None (the run's own strength, one score)."""
    return SMOOTHNESS_LADDER if params.smoothness == "search" else None


@dataclass(frozen=True)
class CapacityResult:
    chosen_N: int
    candidates: tuple[int, ...]  # the budgets tried, each ladder smallest first, ladders by channels
    scores: tuple[float, ...]   # each candidate's held-out MAE (over the folds), on the [-1, 1] target scale
    seconds: float              # the search's training time, its refinements and scoring included
    # capacity_channels: both: each candidate's number of outer channels, and the chosen one;
    # () and None when the search kept the run's own channels.
    channels: tuple[int, ...] = ()
    chosen_channels: int | None = None
    # smoothness: search: each candidate's best strength, and the chosen one's; () and None
    # when the strength was given.
    smoothness: tuple[float, ...] = ()
    chosen_smoothness: float | None = None


def start_budget(params: Hyperparameters) -> int:
    """The ladder's first budget: capacity_min, or N when it is 0."""
    return int(params.capacity_min) or int(params.N)


def candidate_budgets(params: Hyperparameters) -> tuple[int, ...]:
    budgets, N = [], start_budget(params)
    while N <= params.capacity_max or not budgets:
        budgets.append(N)
        N *= 2
    return tuple(budgets)


def candidate_channels(params: Hyperparameters, n: int) -> tuple[int, ...] | None:
    """The channel counts the search tries at n inputs, fewest first; None: the run's own."""
    return None if params.capacity_channels == "given" else (n + 1, 2 * n + 1)


def held_out_rows(rows: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, held-out rows) as index arrays: round(fraction x rows) held out, at least
    one on each side."""
    order = np.random.default_rng([int(seed), _SPLIT_STREAM]).permutation(rows)
    held = min(max(1, int(round(fraction * rows))), rows - 1)
    return np.sort(order[held:]), np.sort(order[:held])


def folds(rows: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The k folds of `rows` rows as (fit rows, held-out rows) index arrays: a permutation drawn
    from the seed cut into k parts whose sizes differ by at most one; every row is held out in
    exactly one fold."""
    if not 2 <= k <= rows:
        raise UserError(f"capacity_folds = {k} needs at least {k} train rows, got {rows}; lower capacity_folds "
                        f"(1: one held-out part)")
    order = np.random.default_rng([int(seed), _FOLD_STREAM]).permutation(rows)
    return [(np.sort(np.concatenate([part for j, part in enumerate(parts) if j != i])), np.sort(parts[i]))
            for parts in [np.array_split(order, k)] for i in range(k)]


def validation_parts(rows: int, params: Hyperparameters, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (fit rows, held-out rows) pairs a candidate is scored on: one part of
    capacity_validation with capacity_folds 1, else the folds."""
    if params.capacity_folds == 1:
        return [held_out_rows(rows, params.capacity_validation, seed)]
    return folds(rows, int(params.capacity_folds), seed)


def judged_rows(held: np.ndarray, seed: int, part: int) -> np.ndarray:
    """The rows of the held-out part number `part` (sorted indices `held`) that judge the
    candidates: all of them, or beyond row_caps.SEARCH_SCORE_MAX_ROWS a seeded sample of that
    many."""
    sample = row_caps.sample_rows(len(held), row_caps.SEARCH_SCORE_MAX_ROWS, seed, _JUDGE_STREAM, part)
    return held if sample is None else held[sample]


def candidate_mae(method: str, X_fit, y_fit, X_held, y_held, *, params: Hyperparameters, iterations: int,
                  seed: int, weight=None, test_weight=None, refine_rows: int | None = None,
                  strengths: tuple[float, ...] | None = None) -> tuple[tuple[float, ...], float]:
    """(held-out MAEs, seconds of training, refinement and scoring) of one candidate: the learner
    at `params` trained on the fit rows with the seed and iterations, refined with refinement on
    at most `refine_rows` of them (None: row_caps.SEARCH_REFINE_MAX_ROWS), and its MAE on the
    held-out rows (weighted by test_weight): one MAE, or with `strengths` one per smoothness
    strength, each refinement from the evolved weights. The fit rows are not predicted: the
    search reads no train error. Below the cap each MAE is, bit for bit, the test
    MAE train_run reports for the same rows and settings (at that strength)."""
    refine_rows = row_caps.SEARCH_REFINE_MAX_ROWS if refine_rows is None else int(refine_rows)
    X_fit, y_fit, weight = positive_rows(X_fit, y_fit, weight, "weight")
    X_held, y_held, test_weight = positive_rows(X_held, y_held, test_weight, "test_weight")
    model = Model(method, X_fit.shape[1], params)
    warm_up(method)
    start = time.perf_counter()
    model.train(X_fit, y_fit, iterations, seed, weight=weight, evaluate=False)
    y_held = np.asarray(y_held, dtype=np.float64)
    if not params.refinement:
        return (float(errors(model.predict(X_held), y_held, test_weight)[0]),), time.perf_counter() - start
    maes = []
    for mu in (None,) if strengths is None else strengths:
        refined = model
        if mu is not None:
            refined = copy.deepcopy(model)
            refined.params = refined.params.with_overrides(smoothness="fixed", refine_smoothness=mu)
        refined.refine(X_fit, y_fit, seed=seed, weight=weight, max_rows=refine_rows)
        maes.append(float(errors(refined.predict(X_held), y_held, test_weight)[0]))
    return tuple(maes), time.perf_counter() - start


def _score(method: str, X, y, fit, held, params: Hyperparameters, N: int, iterations: int, seed: int,
           weight=None, refine_rows: int | None = None):
    """(held-out MAEs, seconds) of the candidate budget N (`candidate_mae`)."""
    trial = params.with_overrides(N=N, compaction="none", bags=1, **CAPACITY_FIXED)
    part = (lambda rows: None) if weight is None else (lambda rows: weight[rows])
    return candidate_mae(method, X[fit], y[fit], X[held], y[held], params=trial, iterations=iterations,
                         seed=seed, weight=part(fit), test_weight=part(held), refine_rows=refine_rows,
                         strengths=tried_strengths(params))


def pooled_score(maes, held_weights) -> float:
    """A candidate's score from its parts' held-out MAEs: the MAE itself for one part, else the
    parts' MAEs weighted by their held-out rows' total weight (their count without weights),
    which is the MAE of every held-out prediction together."""
    if len(maes) == 1:
        return float(maes[0])
    return float(np.dot(held_weights, maes) / np.sum(held_weights))


@dataclass
class FinalFit:
    """The caller's fit at the chosen candidate, in `pieces` trainings independent of each other
    (one model: one; a bagged fit: its members), `fit(params, piece) -> result` (a picklable
    function: it may run in a worker process), which the search trains ahead on workers that
    would otherwise wait (`search`). `results` holds, by candidate (N, channels, smoothness
    strength), each piece trained ahead (None: not trained); the caller takes the chosen one's
    (`ahead`) and trains the pieces missing itself."""

    fit: Callable
    pieces: int = 1
    results: dict = field(default_factory=dict)
    started: dict = field(default_factory=dict)   # candidate -> the pieces started

    def ahead(self, result: CapacityResult) -> list:
        at = (result.chosen_N, result.chosen_channels, result.chosen_smoothness)
        return list(self.results.get(at, [None] * self.pieces))

    def keep(self, at: tuple, piece: int, value) -> None:
        self.results.setdefault(at, [None] * self.pieces)[piece] = value


def final_fit(method: str, X, y, iterations: int, train_seed: int, refine_seed: int, weight,
              params: Hyperparameters, piece: int = 0):
    """The fit after the search at `params` as an estimator makes it, for `FinalFit` (one
    piece, 0): (the model trained on all the rows with train_seed, a refined copy of it or None,
    the refinement's RefineResult or None), refined with refine_seed when params.refinement is
    on."""
    model = Model(method, X.shape[1], params)
    model.train(X, y, iterations, train_seed, weight=weight, evaluate=False)
    if not params.refinement:
        return model, None, None
    refined = copy.deepcopy(model)
    return model, refined, refined.refine(X, y, seed=refine_seed, weight=weight)


def search(method: str, X, y, params: Hyperparameters, iterations: int, seed: int,
           n_jobs: int | None = None, weight=None, final: FinalFit | None = None) -> CapacityResult:
    """The budget (and under capacity_channels: both, the channels) `params.capacity: search`
    picks for (X, y), the learner's scaled rows (`weight`: their sample weights, rows of weight
    0 left out by the caller; None: unweighted).

    With n_jobs > 1 (or -1: every core) the trainings (a candidate on one part) run in parallel
    processes, started as processes free up: each running ladder's next candidate first (each
    needed by the sequential search), then, with `final`, the pieces of the caller's fit at the
    best candidate scored so far (needed unless a candidate still in flight beats it), then the
    ladders' later candidates, ahead of the stopping rule. The rule is applied to the scores in
    ladder order, so the choice, the candidates tried and their scores are those of the
    sequential search; a candidate past a ladder's stop, or a piece ahead at a candidate that
    is not chosen, is trained for nothing and is not reported. In one process the final fit's
    first piece, if asked for, is the last call, at the chosen candidate."""
    X, y = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
    if X.shape[0] < 2:
        raise ValueError("the capacity search needs at least two train rows")
    parts = [(fit, judged_rows(held, seed, i))
             for i, (fit, held) in enumerate(validation_parts(X.shape[0], params, seed))]
    # Read here and handed to every training: a process pool's workers score as this one does.
    refine_rows = row_caps.SEARCH_REFINE_MAX_ROWS
    held_weights = [float(len(held)) if weight is None else float(np.sum(weight[held])) for _, held in parts]
    budgets, channel_counts = candidate_budgets(params), candidate_channels(params, X.shape[1])
    ladders = ([params] if channel_counts is None
               else [params.with_overrides(channels=m) for m in channel_counts])
    width = worker_count(n_jobs)
    pool = executor(width)
    scores = [[] for _ in ladders]   # per ladder, the scores of its candidates so far, in ladder order
    strengths = [[] for _ in ladders]  # per ladder, its candidates' best smoothness (None: given)
    tried = tried_strengths(params)
    trained = {}                     # (ladder, step) -> each part's (MAEs, seconds), None until in
    flight = {}                      # future -> ("part", ladder, step, part) or ("final", key, piece)
    seconds = 0.0

    def running(ladder: int) -> bool:
        return len(scores[ladder]) < len(budgets) and not _stops(scores[ladder])

    def key(ladder: int, step: int) -> tuple[int, int | None, float | None]:
        # Of a scored candidate: its strength is known once it is scored.
        return (budgets[step], None if channel_counts is None else channel_counts[ladder],
                strengths[ladder][step])

    def best() -> tuple[int, int]:
        # Ladders by channels, fewest first, each smallest budget first: the first of equal
        # scores has the fewer channels, then the smaller budget.
        flat = [(i, step, score) for i in range(len(ladders)) for step, score in enumerate(scores[i])]
        i, step, _ = flat[int(np.argmin([score for _, _, score in flat]))]
        return i, step

    def start(ladder: int, step: int) -> None:
        trained[(ladder, step)] = [None] * len(parts)
        for k, (fit, held) in enumerate(parts):
            future = pool.submit(_score, method, X, y, fit, held, ladders[ladder], budgets[step], iterations,
                                 seed, weight, refine_rows)
            flight[future] = ("part", ladder, step, k)

    def fill() -> None:
        for i in range(len(ladders)):
            if running(i) and (i, len(scores[i])) not in trained:
                start(i, len(scores[i]))
        if final is not None and any(scores):
            at = key(*best())
            started = final.started.setdefault(at, set())   # each piece started once at most
            for piece in range(final.pieces):
                if len(flight) >= width:
                    break
                if piece not in started:
                    started.add(piece)
                    flight[pool.submit(final.fit, _at(params, *at), piece)] = ("final", at, piece)
        for i in range(len(ladders)):
            ahead = len(scores[i]) + 1
            while running(i) and ahead < len(budgets) and len(flight) < width:
                if (i, ahead) not in trained:
                    start(i, ahead)
                ahead += 1

    fill()
    while any(running(i) for i in range(len(ladders))):
        for future in wait(flight, return_when=FIRST_COMPLETED)[0]:
            what = flight.pop(future)
            if what[0] == "final":
                final.keep(what[1], what[2], future.result())
            else:
                trained[what[1:3]][what[3]] = future.result()
        for i in range(len(ladders)):
            while running(i) and all(r is not None for r in trained.get((i, len(scores[i])), [None])):
                results = trained[(i, len(scores[i]))]
                pooled = [pooled_score([maes[s] for maes, _ in results], held_weights)
                          for s in range(len(results[0][0]))]
                s = int(np.argmin(pooled))   # the first of equal scores: the weaker penalty
                scores[i].append(pooled[s])
                strengths[i].append(None if tried is None else tried[s])
                seconds += sum(spent for _, spent in results)
        fill()
    chosen = best()
    # Any other training still in flight is of no use: those not started are cancelled. The
    # pieces of the chosen candidate's fit ahead, if in flight, are waited for.
    wanted = ("final", key(*chosen))

    def is_wanted(what: tuple) -> bool:
        return what[:2] == wanted

    for future, what in list(flight.items()):
        if not is_wanted(what) and future.cancel():
            del flight[future]
    while any(is_wanted(what) for what in flight.values()):
        for future in wait(flight, return_when=FIRST_COMPLETED)[0]:
            what = flight.pop(future)
            if is_wanted(what):
                final.keep(what[1], what[2], future.result())
    return CapacityResult(
        chosen_N=budgets[chosen[1]], candidates=tuple(budgets[step] for i in range(len(ladders))
                                                      for step in range(len(scores[i]))),
        scores=tuple(score for i in range(len(ladders)) for score in scores[i]), seconds=seconds,
        channels=() if channel_counts is None else tuple(channel_counts[i] for i in range(len(ladders))
                                                         for _ in scores[i]),
        chosen_channels=None if channel_counts is None else channel_counts[chosen[0]],
        smoothness=() if tried is None else tuple(strength for i in range(len(ladders)) for strength in strengths[i]),
        chosen_smoothness=strengths[chosen[0]][chosen[1]])


def _at(params: Hyperparameters, N: int, channels: int | None, smoothness: float | None) -> Hyperparameters:
    """The run's hyperparameters at the candidate budget N (and channels and smoothness
    strength, when the search chose them: the strength then given, no longer searched)."""
    chosen = {} if channels is None else {"channels": channels}
    if smoothness is not None:
        chosen.update(smoothness="fixed", refine_smoothness=smoothness)
    return params.with_overrides(N=N, **chosen)


def chosen_params(params: Hyperparameters, result: CapacityResult) -> Hyperparameters:
    """The run's hyperparameters at what the search chose: its budget, and its channels and
    smoothness strength when it chose them."""
    return _at(params, result.chosen_N, result.chosen_channels, result.chosen_smoothness)


def _stops(scores: list[float]) -> bool:
    """The ladder's stopping rule: the last candidate did not lower the best score before it."""
    return len(scores) >= 2 and scores[-1] >= min(scores[:-1])
