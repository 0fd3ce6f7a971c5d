"""EBM's cost and accuracy at a few budgets (docs/baselines.md, "EBM's budget"): one fit per
(benchmark, budget) through the baseline registry on run 0 of the main protocol (split 0,
learner seed 0), as `kacs run` fits it, timed in CPU seconds of this process
(time.process_time: the fit and both predictions, one thread) so that a loaded machine
slows the wall clock but not the figure. Appends one row per fit to OUT as it goes and skips
the (benchmark, budget) pairs OUT holds, so an interrupted sweep resumes.

    python tools/ebm_budgets.py OUT.csv [--benchmarks f3,ccpp] [--budgets b1-64-16,b4-64-16,...]

A budget is bOUTER-BINS-PAIRBINS (outer_bags, max_bins, max_interaction_bins; PAIRBINS 0: no
pairs, interactions 0), or `default` (InterpretML's own: 14 bags, 1,024 bins, 64 pair bins,
up to 5n pairs).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from kacs_cli import baselines
from kacs_cli.engine.train import errors
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.execution import load_cell_data
from kacs_cli.experiments.data.protocols import make_split

COLUMNS = ["benchmark", "budget", "outer_bags", "max_bins", "max_interaction_bins", "interactions", "train_mae",
           "test_mae", "params", "pair_terms", "cpu_seconds", "wall_seconds"]
DEFAULT_BUDGETS = ("b1-1024-64", "b1-256-32", "b1-64-32", "b1-64-16", "b1-32-16", "b4-256-32", "b4-64-32",
                   "b4-64-16", "b4-32-16", "b14-64-16", "b14-32-16", "default", "b4-64-0", "b4-32-0", "b4-256-0")
BENCHMARKS = {"f3": {"name": "f3", "source": "published"}, "ccpp": "ccpp"}


def budget_params(budget: str) -> dict:
    if budget == "default":
        return {}
    outer, bins, pair_bins = (int(v) for v in budget.lstrip("b").split("-"))
    pairs = {"max_interaction_bins": pair_bins} if pair_bins else {"interactions": 0}
    return {"outer_bags": outer, "max_bins": bins, **pairs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--benchmarks", default="f3,ccpp")
    ap.add_argument("--budgets", default=",".join(DEFAULT_BUDGETS))
    args = ap.parse_args()
    done = set()
    if args.out.exists():
        with args.out.open() as fh:
            done = {(r["benchmark"], r["budget"]) for r in csv.DictReader(fh)}
    else:
        args.out.write_text(",".join(COLUMNS) + "\n")
    names = args.benchmarks.split(",")
    config = resolve_config({"experiment": "ebm_budgets", "methods": {"ebm": None},
                             "benchmarks": [BENCHMARKS.get(b, b) for b in names],
                             "protocol": {"name": "main", "runs": 1}})
    for budget in args.budgets.split(","):
        for cell in config.cells:
            if (cell.label, budget) in done:
                continue
            X, y = load_cell_data(cell)
            split = make_split(X, y, config.protocol, 0, config.protocol.train_fraction)
            spec = baselines.resolve("ebm", budget_params(budget))
            baselines.preload([spec])
            start, wall = time.process_time(), time.perf_counter()
            fitted = baselines.fit_predict(spec, 0, split.X_train, split.y_train, split.X_test)
            cpu, wall = time.process_time() - start, time.perf_counter() - wall
            train_mae, _ = errors(fitted.y_train, split.y_train)
            test_mae, _ = errors(fitted.y_test, split.y_test)
            pairs = sum(1 for t in fitted.estimator.term_features_ if len(t) == 2)
            p = spec.params
            row = [cell.label, budget, p["outer_bags"], p["max_bins"], p["max_interaction_bins"], p["interactions"],
                   f"{train_mae:.6f}", f"{test_mae:.6f}", fitted.params, pairs, f"{cpu:.1f}", f"{wall:.1f}"]
            with args.out.open("a") as fh:
                fh.write(",".join(str(v) for v in row) + "\n")
            print(*row, flush=True)


if __name__ == "__main__":
    main()
