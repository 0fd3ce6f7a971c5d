"""Seconds of one evaluation of the refinement's objective with its gradient (docs/refinement.md),
on the model and rows where the outer stage costs most: KACS at N = 51,200 (quantile inputs,
n + 1 channels, P_hash 0.8, no refinement) trained for 100,000 iterations on 100,000 rows of
`kacs bench --workload rows`, its objective on the first 40,000 of them (a search candidate's
refinement cap), at weights moved off the evolved ones. Also prints the outer rules per channel
and how many of them a channel sum reads.

Written against the estimator and refine.Objective only, so that the same file runs with an
older checkout installed (docs/performance.md compares kernels this way).

    python tools/refine_eval_time.py [REPEAT]
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from kacs_cli import KACSRegressor
from kacs_cli.cli.timing import rows_data
from kacs_cli.engine import refine
from kacs_cli.engine.population import S_P

ROWS = 40_000


def main() -> None:
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    X, y, _, _ = rows_data(100_000)
    est = KACSRegressor.from_preset("recommended", P_hash=0.8, random_state=0, capacity="fixed", N=51_200,
                                    refinement=False).fit(X, y)
    model = est.model_
    pop, n, n_q = model.pop, model.n, model.n_channels
    P = int(pop.scal[S_P])
    rows = refine.design(pop, est._scale_X(X)[:ROWS], est._scale_y(y)[:ROWS], n, n_q)
    w0 = np.ascontiguousarray(pop.weights.w[:P]).ravel().copy()
    w = w0 + 0.01 * np.random.default_rng(1).normal(size=w0.size)
    objective = refine.Objective(pop, n, n_q, rows, 0.0, w0)
    loss, _ = objective(w)   # compiled before the clock starts
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        objective(w)
        seconds.append(time.perf_counter() - start)
    sub, lo, hi = pop.counts.sub[:P], pop.bounds.lo[0][:P], pop.bounds.hi[0][:P]
    zhat = est.predict_components(X[:2_000]).zhat
    below = matched = 0.0
    counts = []
    for q in range(n_q):
        outer = sub == n * n_q + q
        counts.append(int(outer.sum()))
        z = zhat[:, q][:, None]
        below += float(np.mean(np.sum(lo[outer][None, :] <= z, axis=1)))
        matched += float(np.mean(np.sum((lo[outer][None, :] <= z) & (z <= hi[outer][None, :]), axis=1)))
    print(f"{P:,} rules; outer rules per channel {min(counts)}-{max(counts)}; per row over the channels "
          f"{below:,.0f} outer rules with lower bound <= the channel sum, {matched:,.0f} matching")
    print(f"one evaluation with gradient on {ROWS:,} rows: median {statistics.median(seconds):.4f} s "
          f"(range {min(seconds):.4f}-{max(seconds):.4f}, {repeat} runs); loss {loss:.12g}")


if __name__ == "__main__":
    main()
