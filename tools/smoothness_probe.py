"""The smoothness penalty's strength (docs/variance.md, section 2.2): on four suite datasets,
runs 0-5 of the main protocol (split r, learner seed r), the recommended KACS setting at a
fixed N = 6,400 without refinement (quantile inputs, n + 1 channels, P_hash 0.8) is evolved
once and then refined (its default settings) with each strength mu of MUS; one row per
(dataset, run, mu): the refined model's test MAE on the [-1, 1] target scale. With --search,
each run is also fitted with `smoothness: search` at the same N (a capacity search of the one
budget, capacity_max = N: the strength chosen on the search's held-out fifth, which the
candidate's evolution did not see; the refit on all the train rows is the model evolved above,
refined at that strength), a row with mu empty and the chosen strength in `chosen`.

    python tools/smoothness_probe.py OUT.csv [--datasets diabetes,carseats,windsor,boston] [--runs 6] [--search]
"""

from __future__ import annotations

import argparse
import copy
import csv
from pathlib import Path

import numpy as np

from kacs_cli import KACSRegressor
from kacs_cli.experiments.data.datasets import load_dataset
from kacs_cli.experiments.data.protocols import make_split

MUS = (0.0, 0.3, 1.0, 3.0, 10.0, 30.0)
SETTING = dict(N=6400, input_transform="quantile", channels="n + 1", P_hash=0.8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--datasets", default="diabetes,carseats,windsor,boston")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--search", action="store_true", help="also fit with smoothness: search, chosen by a capacity search of the one budget")
    args = parser.parse_args()
    with open(args.out, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dataset", "run", "mu", "test_mae", *(["chosen"] if args.search else [])])
        for name in args.datasets.split(","):
            X, y = load_dataset(name, args.data_dir)
            for run in range(args.runs):
                split = make_split(X, y, "main", run)
                evolved = KACSRegressor(random_state=run, **SETTING).fit(split.X_train, split.y_train)
                for mu in MUS:
                    refined = copy.deepcopy(evolved).set_params(refinement=True, refine_smoothness=mu)
                    refined.model_.params = refined.model_.params.with_overrides(refinement=True,
                                                                                 refine_smoothness=mu)
                    refined.refine(split.X_train, split.y_train)
                    mae = float(np.mean(np.abs(refined.predict(split.X_test) - split.y_test)))
                    writer.writerow([name, run, mu, mae, *([""] if args.search else [])])
                if args.search:
                    searched = KACSRegressor(random_state=run, refinement=True, capacity="search",
                                             capacity_max=SETTING["N"], smoothness="search", **SETTING)
                    searched.fit(split.X_train, split.y_train)
                    mae = float(np.mean(np.abs(searched.predict(split.X_test) - split.y_test)))
                    writer.writerow([name, run, "", mae, searched.capacity_result_.chosen_smoothness])
                fh.flush()


if __name__ == "__main__":
    main()
