"""Wall time of a recommended fit per dataset, today's setting beside a variant of it (the
variance levers' cost, docs/variance.md): for each dataset, split 0 of the main protocol (the
campaigns' first run), `from_preset("recommended", random_state=0, n_jobs=J)` of the learner
(P_hash 0.8 on real-world data, as the campaigns set it) and the same with the variant's
settings, fitted in turn for --repeat rounds; the median seconds of each, their ratio and each
round's ratio. Needs a quiet machine: the fits use J processes.

    KACS_DATA_DIR=... python tools/fit_wall_time.py --set bags=5 --set refine_smoothness=3 \
        [--learner kacs] [--datasets diabetes,boston] [--jobs 2] [--repeat 3]

A setting's value is read as YAML (`bags=5` is the number 5, `channels=n + 1` a string).
"""

from __future__ import annotations

import argparse
import statistics
import time

import yaml

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.experiments.data.datasets import is_real_world, load_dataset
from kacs_cli.experiments.data.protocols import make_split

SUITE = ("diabetes", "boston", "auto", "carseats", "windsor", "college", "saratoga", "wage",
         "cps1988", "fair", "randhie", "diamonds")
LEARNERS = {"kacs": KACSRegressor, "xcsf": XCSFRegressor}


def setting(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--set takes NAME=VALUE, got {text!r}")
    return name.strip(), yaml.safe_load(value)


def timed_fit(cls, options: dict, X, y) -> float:
    start = time.perf_counter()
    cls.from_preset("recommended", **options).fit(X, y)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="variant", type=setting, action="append", required=True)
    parser.add_argument("--learner", choices=sorted(LEARNERS), default="kacs")
    parser.add_argument("--datasets", default=",".join(SUITE))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    cls = LEARNERS[args.learner]
    variant = dict(args.variant)
    print("| dataset | train rows | inputs | recommended (s) | variant (s) | variant / recommended | by round |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name in args.datasets.split(","):
        X, y = load_dataset(name, args.data_dir)
        split = make_split(X, y, "main", 0)
        base = dict(random_state=0, n_jobs=args.jobs, **({"P_hash": 0.8} if is_real_world(name) else {}))
        # One unrecorded fit of each first: the engines compiled or loaded from numba's cache.
        timed_fit(cls, {**base, "n_iter": 1000}, split.X_train[:50], split.y_train[:50])
        rounds = [(timed_fit(cls, base, split.X_train, split.y_train),
                   timed_fit(cls, {**base, **variant}, split.X_train, split.y_train))
                  for _ in range(args.repeat)]
        today = statistics.median(r[0] for r in rounds)
        other = statistics.median(r[1] for r in rounds)
        by_round = ", ".join(f"{b / a:.2f}" for a, b in rounds)
        print(f"| {name} | {len(split.y_train):,} | {X.shape[1]} | {today:.1f} | {other:.1f} | "
              f"{other / today:.2f}x | {by_round} |", flush=True)


if __name__ == "__main__":
    main()
