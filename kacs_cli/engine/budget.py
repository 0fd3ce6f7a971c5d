"""The adaptive population budget of KACS (docs/adaptive_budget.md), compiled with numba.

Under `budget: adaptive` the training driver calls `after_iteration` once per iteration;
every `budget_window` iterations it reads the covering and deletion counters the engine
keeps anyway (S_COVERS_IN, S_COVERS_OUT, S_DELETIONS) and, while a cover-delete cycle
persists (the budget binds and covering stays above `budget_cover_rate`), raises the
population's budget N (`pop.budget`) by `budget_growth` * N, never above N_max. Nothing else
changes: deletion reads the budget every time it runs, so a larger N simply means fewer
deletions from then on.

It draws no random numbers, so the engine's random stream is the one of a fixed budget
until the first growth; under `budget: fixed` the driver never calls it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT
from kacs_cli.engine.kacs_submodels import channel_count
from kacs_cli.engine.params import Hyperparameters
from kacs_cli.engine.population import S_COVERS_IN, S_COVERS_OUT, S_DELETIONS, S_T, S_TOTAL

# Budget state (int64 vector): on/off, counters at the start of the current window, whether
# the population had filled its budget by the end of an earlier window, whether the previous
# window showed the cycle, number of growth steps, iteration of the last growth, and the two
# covering counts of the last window.
(BS_ON, BS_LAST_IN, BS_LAST_OUT, BS_LAST_DEL, BS_FILLED, BS_CYCLE, BS_STEPS, BS_LAST_STEP,
 BS_WIN_IN, BS_WIN_OUT) = range(10)
N_BS = 10


def new_budget(params: Hyperparameters) -> np.ndarray:
    """The budget state of a run; its BS_ON is 0 under a fixed budget. (The budget's
    hyperparameters reach the engine with the others; the driver has checked that the
    learner accepts `budget: adaptive`.)"""
    bs = np.zeros(N_BS, np.int64)
    if params.budget == "adaptive":
        bs[BS_ON] = 1
        bs[BS_LAST_STEP] = -1
    return bs


def capacity_budget(params: Hyperparameters) -> int:
    """The largest N a run can reach: what the population arrays must hold."""
    return int(params.N_max) if params.budget == "adaptive" else int(params.N)


@njit(**HOT)
def after_iteration(scal, budget, hp, bs, n):
    """At the end of every window of W iterations: grow N while a cover-delete cycle persists.

    Monitored (docs/algorithm.md section 7 rates over the window): r_inner = C_in / (W n m) and
    r_outer = C_out / (W m), m the outer channels (2n + 1 in the article). A window shows the
    cycle when the population had filled the
    budget by the end of an earlier window (covering while it first fills is not a cycle),
    deletion ran in it (the budget binds: covered rules displace others) and
    max(r_inner, r_outer) > budget_cover_rate; in practice r_outer decides, since the outer
    inputs span about [-n, n] and a starved budget shows there first (docs/adaptive_budget.md section 1).

    The cycle persists when it shows in this window and in the one before: a single covering
    burst (a late shift of an outer input, or one event in a short window at small n, where
    one cover is already a rate of 1 / (W m)) does not grow the budget.
    """
    t = scal[S_T]
    window = hp.budget_window
    if t % window != 0:
        return
    c_in = scal[S_COVERS_IN] - bs[BS_LAST_IN]
    c_out = scal[S_COVERS_OUT] - bs[BS_LAST_OUT]
    dels = scal[S_DELETIONS] - bs[BS_LAST_DEL]
    bs[BS_LAST_IN] = scal[S_COVERS_IN]
    bs[BS_LAST_OUT] = scal[S_COVERS_OUT]
    bs[BS_LAST_DEL] = scal[S_DELETIONS]
    bs[BS_WIN_IN] = c_in
    bs[BS_WIN_OUT] = c_out
    was_filled = bs[BS_FILLED] != 0
    if scal[S_TOTAL] >= budget[0]:
        bs[BS_FILLED] = 1
    n_q = channel_count(n, hp.channels)
    r_in = c_in / (window * n * n_q)
    r_out = c_out / (window * n_q)
    cycle = was_filled and dels > 0 and max(r_in, r_out) > hp.budget_cover_rate
    persists = cycle and bs[BS_CYCLE] != 0
    bs[BS_CYCLE] = cycle
    if not persists:
        return
    N = budget[0]
    n_max = hp.N_max
    if N >= n_max:
        return
    budget[0] = min(n_max, N + math.ceil(hp.budget_growth * N))
    bs[BS_STEPS] += 1
    bs[BS_LAST_STEP] = t
