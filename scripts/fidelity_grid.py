"""Structural fidelity of KACS (plain, refined, compacted) on f1-f4 (docs/explain.md,
"Structural fidelity"): one fit per (function, n, run) on the main protocol's train split of
run r (learner seed r, as `kacs run` would train it), refined and compacted copies of that fit,
and the fidelity of each on the train rows. Appends one row per model to OUT as it goes, run 0
of every cell first, so an interrupted sweep still covers every cell. With --figures, each
model's table and figure too: docs/fidelity/f1_n10_run0_refined.png is the figure
of `--runs 1 --functions f1 --ns 10 --figures DIR` (f4 likewise); docs/fidelity/grid.csv is
the default sweep (3 runs), rows sorted.

    python scripts/fidelity_grid.py OUT.csv [--runs 3] [--first-run 0] [--functions f1,f2,f3,f4] [--ns 2,4,6,10] [--figures DIR]
"""

from __future__ import annotations

import argparse
import copy
import csv
import time
from pathlib import Path

import numpy as np

from kacs_cli import KACSRegressor
from kacs_cli.estimators.fidelity import structural_fidelity
from kacs_cli.experiments.data.benchmarks import evaluate, generate
from kacs_cli.experiments.data.protocols import make_split

COLUMNS = ["function", "n", "run", "setting", "fidelity_mean", "fidelity_worst", "worst_input",
           "test_mae", "rules", "r2_per_input", "seconds"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first-run", type=int, default=0)
    ap.add_argument("--functions", default="f1,f2,f3,f4")
    ap.add_argument("--ns", default="2,4,6,10")
    ap.add_argument("--iterations", type=int, default=100_000)
    ap.add_argument("--figures", type=Path, default=None,
                    help="also write FUNCTION_nN_runR_SETTING.csv and .png (table and figure) here")
    args = ap.parse_args()
    done = set()
    if args.out.exists():
        with args.out.open() as fh:
            done = {(r["function"], int(r["n"]), int(r["run"])) for r in csv.DictReader(fh)}
    else:
        args.out.write_text(",".join(COLUMNS) + "\n")
    for run in range(args.first_run, args.runs):
        for function in args.functions.split(","):
            for n in (int(v) for v in args.ns.split(",")):
                if (function, n, run) in done:
                    continue
                X, y = generate(function, n, 1000)
                split = make_split(X, y, "main", run)
                Xtr, ytr = X[split.train_index], y[split.train_index]
                Xte, yte = X[split.test_index], y[split.test_index]
                half = 0.5 * (ytr.max() - ytr.min())
                start = time.process_time()
                plain = KACSRegressor(n_iter=args.iterations, random_state=run).fit(Xtr, ytr)
                refined = copy.deepcopy(plain).refine(Xtr, ytr)
                compacted = plain.compact(Xtr, ytr, method="piecewise")
                rows = []
                for setting, model in (("plain", plain), ("refined", refined), ("compacted", compacted)):
                    fid = structural_fidelity(model, lambda Z: evaluate(function, Z), Xtr,
                                              y_range=(ytr.min(), ytr.max()))
                    if args.figures is not None:
                        fid.write(args.figures, stem=f"{function}_n{n}_run{run}_{setting}")
                    mae = float(np.mean(np.abs(model.predict(Xte) - yte)) / half)
                    rows.append([function, n, run, setting, fid.mean, fid.worst, fid.worst_input, mae,
                                 model.n_rules_, " ".join(f"{v:.4f}" for v in fid.r2)])
                seconds = time.process_time() - start
                with args.out.open("a") as fh:
                    for row in rows:
                        fh.write(",".join(str(v) for v in row + [f"{seconds:.1f}"]) + "\n")
                print(function, n, run, [f"{r[3]} {r[4]:.3f}/{r[5]:.3f}" for r in rows], f"{seconds:.0f}s CPU",
                      flush=True)


if __name__ == "__main__":
    main()
