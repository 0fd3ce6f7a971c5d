"""How bagging's members are drawn and refined (docs/variance.md, section 1.2): on three small
suite datasets, run r of the main protocol (split r, learner seed r), the recommended KACS
setting at a fixed N = 6,400 (quantile inputs, refinement, n + 1 channels, P_hash 0.8), fitted

- alone (`single`);
- with 5 bags on bootstrap samples, each member refined on its own sample (`boot`, what
  `bags` does);
- the same merged model refined once more on all the train rows (`boot_merged_refined`);
- with 5 bags on half-samples drawn without replacement (`half`).

Test MAE on the [-1, 1] target scale; seconds are wall time of the fit, one process.

    python tools/bag_choice.py OUT.csv [--datasets diabetes,carseats,windsor] [--runs 5]
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from kacs_cli import KACSRegressor
from kacs_cli.engine import bagging
from kacs_cli.experiments.data.datasets import load_dataset
from kacs_cli.experiments.data.protocols import make_split

SETTING = dict(N=6400, input_transform="quantile", refinement=True, channels="n + 1", P_hash=0.8)
COLUMNS = ["dataset", "run", "single", "boot", "boot_merged_refined", "half", "single_seconds", "boot_seconds",
           "half_seconds", "boot_rules"]


def half_sample(rows: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([int(seed), bagging.BAG_STREAM, int(k)])
    return np.sort(rng.permutation(rows)[: rows // 2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--datasets", default="diabetes,carseats,windsor")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    bootstrap = bagging.member_rows
    mae = lambda model, X, y: float(np.mean(np.abs(model.predict(X) - y)))
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        writer.writeheader()
        for name in args.datasets.split(","):
            X, y = load_dataset(name, args.data_dir)
            for run in range(args.runs):
                split = make_split(X, y, "main", run)
                data = (split.X_train, split.y_train)
                row = {"dataset": name, "run": run}
                start = time.perf_counter()
                single = KACSRegressor(random_state=run, **SETTING).fit(*data)
                row["single_seconds"] = time.perf_counter() - start
                row["single"] = mae(single, split.X_test, split.y_test)
                bagging.member_rows = bootstrap
                start = time.perf_counter()
                bagged = KACSRegressor(random_state=run, bags=5, **SETTING).fit(*data)
                row["boot_seconds"] = time.perf_counter() - start
                row["boot"], row["boot_rules"] = mae(bagged, split.X_test, split.y_test), bagged.n_rules_
                row["boot_merged_refined"] = mae(bagged.refine(*data), split.X_test, split.y_test)
                bagging.member_rows = half_sample
                start = time.perf_counter()
                halves = KACSRegressor(random_state=run, bags=5, **SETTING).fit(*data)
                row["half_seconds"] = time.perf_counter() - start
                row["half"] = mae(halves, split.X_test, split.y_test)
                bagging.member_rows = bootstrap
                writer.writerow(row)
                fh.flush()


if __name__ == "__main__":
    main()
