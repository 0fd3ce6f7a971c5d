"""Structural fidelity on f1-f4 (docs/explain.md, "Structural fidelity"): per (function, n,
run), models fitted on the main protocol's train split of run r (learner seed r, as `kacs run`
would train them) and the fidelity of each on the train rows. Appends one row per model to
OUT as it goes, run 0 of every cell first, so an interrupted sweep still covers every cell,
and skips the (function, n, run, setting) rows OUT already holds; at the end OUT's rows are
sorted (function, n, run, then the settings in the order below).

Settings (--settings, comma-separated; default `kacs`):
- `kacs`: one default KACS fit scored three ways, rows `plain`, `refined` (its full-batch
  refinement) and `compacted` (piecewise compaction of the plain model);
- refined KACS with one capacity lever: `refined-N25600` (budget N = 25,600),
  `refined-m-n+1` (m = n + 1 outer channels), `refined-quantile` (quantile input transform),
  and `refined-levers` (all three);
- the baselines `ebm` (InterpretML's EBM with one outer bag, pairs as it selects them) and
  `kan` (the registry's KAN at its campaign budget), fitted through the baseline registry on
  the run's split exactly as `kacs run` fits them (scaled inputs and target), then read back
  in the benchmark's units so that model and truth are scored by one call. They have no
  rules: the `rules` column is empty.

`seconds` is the CPU time of the cell's fits and scoring (all rows of one fit share it).
With --figures, each model's table and figure too: docs/fidelity/f1_n10_run0_refined.png is
the figure of `--runs 1 --functions f1 --ns 10 --figures DIR` (f4 likewise). docs/fidelity/grid.csv
holds the default sweep (3 runs) and, as far as they ran, `--settings ebm,kan` and
`--settings refined-N25600,refined-m-n+1,refined-quantile,refined-levers` at `--ns 10`
(docs/explain.md says which runs).

    python tools/fidelity_grid.py OUT.csv [--settings kacs] [--runs 3] [--first-run 0] [--functions f1,f2,f3,f4] [--ns 2,4,6,10] [--figures DIR] [--effects DIR]
"""

from __future__ import annotations

import argparse
import copy
import csv
import time
from pathlib import Path

import numpy as np

from kacs_cli import KACSRegressor
from kacs_cli.baselines import registry
from kacs_cli.estimators.fidelity import structural_fidelity
from kacs_cli.experiments.data.benchmarks import evaluate, generate
from kacs_cli.experiments.data.protocols import make_split
from kacs_cli.scaling import scale_inputs, unscale_target

COLUMNS = ["function", "n", "run", "setting", "fidelity_mean", "fidelity_worst", "worst_input",
           "test_mae", "rules", "r2_per_input", "seconds"]

KACS_ROWS = ("plain", "refined", "compacted")
# Refined KACS with a capacity lever: the estimator's arguments at n inputs.
LEVERS = {
    "refined-N25600": lambda n: {"N": 25_600},
    "refined-m-n+1": lambda n: {"channels": n + 1},
    "refined-quantile": lambda n: {"input_transform": "quantile"},
    "refined-levers": lambda n: {"N": 25_600, "channels": n + 1, "input_transform": "quantile"},
}
# Baselines by registry method and overrides. EBM: one outer bag instead of its 14 keeps a
# fit to seconds (docs/baselines.md, Budgets); everything else at its defaults.
BASELINES = {"ebm": ("ebm", {"outer_bags": 1}), "kan": ("kan", {})}
ORDER = {name: i for i, name in enumerate((*KACS_ROWS, *LEVERS, *BASELINES))}
GROUPS = {"kacs": KACS_ROWS, **{name: (name,) for name in (*LEVERS, *BASELINES)}}

# Rows per predict call of a baseline: the KAN's forward pass holds rows x edges x basis
# values, about 1 GB for the 50,000 rows of one input's grid at n = 10.
CHUNK = 5000


class InBenchmarkUnits:
    """A regressor fitted on the protocol's scaled split, read in the benchmark's units:
    inputs scaled with the split's train min/max (clipped, as test rows are), predictions
    taken back from [-1, 1] to the target's units."""

    def __init__(self, estimator, split):
        self.estimator = estimator
        self.x_min, self.x_max = split.scaling["x_min"], split.scaling["x_max"]
        self.y_min, self.y_max = split.scaling["y_min"], split.scaling["y_max"]

    def predict(self, X):
        Z = scale_inputs(np.asarray(X, dtype=np.float64), self.x_min, self.x_max, clip=True)
        out = np.concatenate([np.asarray(self.estimator.predict(Z[i:i + CHUNK]), dtype=np.float64).reshape(-1)
                              for i in range(0, Z.shape[0], CHUNK)])
        return unscale_target(out, self.y_min, self.y_max)


def fit_models(setting: str, X, y, split, run: int, iterations: int):
    """[(row setting, model in the benchmark's units, rules or None)] of one setting's fit."""
    Xtr, ytr = X[split.train_index], y[split.train_index]
    if setting == "kacs":
        plain = KACSRegressor(n_iter=iterations, random_state=run).fit(Xtr, ytr)
        refined = copy.deepcopy(plain).refine(Xtr, ytr)
        compacted = plain.compact(Xtr, ytr, method="piecewise")
        return [(name, m, m.n_rules_) for name, m in zip(KACS_ROWS, (plain, refined, compacted))]
    if setting in LEVERS:
        model = KACSRegressor(n_iter=iterations, random_state=run, **LEVERS[setting](X.shape[1])).fit(Xtr, ytr)
        model.refine(Xtr, ytr)
        return [(setting, model, model.n_rules_)]
    method, overrides = BASELINES[setting]
    spec = registry.resolve(method, overrides)
    fitted = registry.fit_predict(spec, run, split.X_train, split.y_train, split.X_test)
    return [(setting, InBenchmarkUnits(fitted.estimator, split), None)]


def sort_rows(path: Path) -> None:
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    rows.sort(key=lambda r: (r["function"], int(r["n"]), int(r["run"]), ORDER.get(r["setting"], len(ORDER))))
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--settings", default="kacs", help=f"comma-separated, of: {', '.join(GROUPS)}")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first-run", type=int, default=0)
    ap.add_argument("--functions", default="f1,f2,f3,f4")
    ap.add_argument("--ns", default="2,4,6,10")
    ap.add_argument("--iterations", type=int, default=100_000)
    ap.add_argument("--figures", type=Path, default=None,
                    help="also write FUNCTION_nN_runR_SETTING.csv and .png (table and figure) here")
    ap.add_argument("--effects", type=Path, default=None,
                    help="also write FUNCTION_nN_runR_SETTING.npz (labels, grid, true, learned, r2) here, "
                         "what tools/fidelity_compare.py draws")
    args = ap.parse_args()
    settings = args.settings.split(",")
    unknown = [s for s in settings if s not in GROUPS]
    if unknown:
        ap.error(f"unknown setting {unknown[0]!r}; use one of {', '.join(GROUPS)}")
    if any(s in BASELINES for s in settings):
        # The KAN predicts on one thread too (its fit does already), so CPU seconds are one core's.
        import torch

        torch.set_num_threads(1)
    done = set()
    if args.out.exists():
        with args.out.open() as fh:
            done = {(r["function"], int(r["n"]), int(r["run"]), r["setting"]) for r in csv.DictReader(fh)}
    else:
        args.out.write_text(",".join(COLUMNS) + "\n")
    for run in range(args.first_run, args.runs):
        for function in args.functions.split(","):
            for n in (int(v) for v in args.ns.split(",")):
                for setting in settings:
                    if all((function, n, run, row) in done for row in GROUPS[setting]):
                        continue
                    X, y = generate(function, n, 1000)
                    split = make_split(X, y, "main", run)
                    Xtr, ytr = X[split.train_index], y[split.train_index]
                    Xte, yte = X[split.test_index], y[split.test_index]
                    half = 0.5 * (ytr.max() - ytr.min())
                    start = time.process_time()
                    rows = []
                    for name, model, rules in fit_models(setting, X, y, split, run, args.iterations):
                        fid = structural_fidelity(model, lambda Z: evaluate(function, Z), Xtr,
                                                  y_range=(ytr.min(), ytr.max()))
                        if args.figures is not None:
                            fid.write(args.figures, stem=f"{function}_n{n}_run{run}_{name}")
                        if args.effects is not None:
                            args.effects.mkdir(parents=True, exist_ok=True)
                            np.savez(args.effects / f"{function}_n{n}_run{run}_{name}.npz", labels=fid.labels,
                                     grid=fid.grid, true=fid.true, learned=fid.learned, r2=fid.r2)
                        mae = float(np.mean(np.abs(model.predict(Xte) - yte)) / half)
                        rows.append([function, n, run, name, fid.mean, fid.worst, fid.worst_input, mae,
                                     "" if rules is None else rules, " ".join(f"{v:.4f}" for v in fid.r2)])
                    seconds = time.process_time() - start
                    with args.out.open("a") as fh:
                        for row in rows:
                            fh.write(",".join(str(v) for v in row + [f"{seconds:.1f}"]) + "\n")
                    print(function, n, run, [f"{r[3]} {r[4]:.3f}/{r[5]:.3f} mae {r[7]:.3f}" for r in rows],
                          f"{seconds:.0f}s CPU", flush=True)
    sort_rows(args.out)


if __name__ == "__main__":
    main()
