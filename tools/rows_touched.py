"""Where a fit on many rows does its work: the rows each phase touches, counted, and a profile's
shares (docs/performance.md, "Cost against rows"). No seconds are printed: shares of one run
only, which load on the machine moves little.

    python tools/rows_touched.py ROWS [--preset recommended] [--profile]

The data are `kacs bench --workload rows`'s (kacs_cli/cli/timing.py `rows_data`: 8 inputs
uniform on [0, 1], y = sin(6 x1) + x2^2 + x3 x4 + 0.1 N(0, 1), seed 0), P_hash 0.8. A phase is
where the call happens: the capacity search, the final training, the final refinement, or the
fitted attributes after them. Counted are rows given to the input transform, rows evolved on
(once per training: the iterations are fixed), rows predicted, rows of a refinement's design,
and rows its objective sums over (its evaluations times the design's rows).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
from collections import defaultdict

from kacs_cli import KACSRegressor
from kacs_cli.cli.timing import rows_data
from kacs_cli.engine import kacs, refine
from kacs_cli.estimators import base
from kacs_cli.scaling import InputTransform

COUNTS: dict[tuple[str, str], int] = defaultdict(int)
_PHASE = ["outside"]


@contextlib.contextmanager
def _phase(name):
    _PHASE.append(name)
    try:
        yield
    finally:
        _PHASE.pop()


def _count(kind, rows):
    COUNTS[(_PHASE[-1], kind)] += int(rows)


def _wrap_method(owner, name, phase):
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        with _phase(phase):
            return original(*args, **kwargs)
    setattr(owner, name, wrapped)


def instrument():
    """Count rows by phase: wrap the estimator's steps and the engine's row-bound calls."""
    _wrap_method(base.LearnerRegressor, "_search_capacity", "capacity search")
    _wrap_method(base.LearnerRegressor, "_train", "final training")
    _wrap_method(base.LearnerRegressor, "_refine_scaled", "final refinement")
    _wrap_method(KACSRegressor, "_after_training", "fitted attributes")

    fit, apply = InputTransform.fit.__func__, InputTransform.apply

    def counted_fit(cls, name, X01, keep=()):
        _count("input transform fitted", len(X01))
        return fit(cls, name, X01, keep)

    def counted_apply(self, X01, **options):
        _count("input transform applied", len(X01))
        return apply(self, X01, **options)
    InputTransform.fit, InputTransform.apply = classmethod(counted_fit), counted_apply

    predict, components, steps = kacs.predict, kacs.predict_components, kacs.train_steps

    def counted_predict(pop, X, *args):
        _count("rows predicted", X.shape[0])
        return predict(pop, X, *args)

    def counted_components(pop, X, *args):
        _count("rows predicted", X.shape[0])
        return components(pop, X, *args)

    def counted_steps(pop, wk, X, y, order, start, stop, *args):
        _count("evolution iterations", stop - start)
        return steps(pop, wk, X, y, order, start, stop, *args)
    kacs.predict, kacs.predict_components, kacs.train_steps = counted_predict, counted_components, counted_steps

    design, run = refine.design, refine.Objective._run

    def counted_design(pop, X, y, n, n_q, weight=None):
        _count("refinement design rows", X.shape[0])
        return design(pop, X, y, n, n_q, weight)

    def counted_run(self, w_flat, want_grad, d=None):
        _count("refinement objective rows", (self.rows if d is None else d).y.shape[0])
        return run(self, w_flat, want_grad, d)
    refine.design, refine.Objective._run = counted_design, counted_run

    scale = base.scale_inputs

    def counted_scaling(X, x_min, x_max, *, clip):
        _count("rows min-max scaled", len(X))
        return scale(X, x_min, x_max, clip=clip)
    base.scale_inputs = counted_scaling


# The profile's steps (the estimator's methods) and kinds of work (the counting wrappers above).
STEPS = {"_search_capacity": "capacity search", "_train": "final training (with its ranges)",
         "_refine_scaled": "final refinement (with its ranges)", "_after_training": "channel ranges (both)"}
WORKS = {"counted_steps": "evolution", "counted_run": "refinement objective",
         "counted_design": "refinement design", "counted_predict": "prediction",
         "counted_components": "prediction (channel ranges)", "counted_fit": "input transform fitted",
         "counted_apply": "input transform applied", "counted_scaling": "min-max scaling"}


def shares(stats: pstats.Stats, names: dict) -> dict:
    """Each named function's cumulative share of the profiled fit."""
    total = max(cumulative for (_, _, name), (_, _, _, cumulative, _) in stats.stats.items() if name == "fit")
    found = {}
    for (_, _, name), (_, _, _, cumulative, _) in stats.stats.items():
        if name in names:
            found[names[name]] = found.get(names[name], 0.0) + cumulative / total
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("--preset", default="recommended")
    parser.add_argument("--profile", action="store_true", help="also print the steps' and works' shares")
    args = parser.parse_args()
    X, y, _, _ = rows_data(args.rows)
    KACSRegressor.from_preset(args.preset, P_hash=0.8, n_iter=200).fit(X[:500], y[:500])  # compile first
    instrument()
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    model = KACSRegressor.from_preset(args.preset, P_hash=0.8, random_state=0).fit(X, y)
    if profiler is not None:
        profiler.disable()
    print(f"{args.rows:,} rows, preset {args.preset}: candidates {model.capacity_result_.candidates}, "
          f"chosen N {model.capacity_N_}")
    for (phase, kind), rows in sorted(COUNTS.items()):
        print(f"  {phase:20s} {kind:30s} {rows:>14,}")
    if profiler is not None:
        stats = pstats.Stats(profiler)
        for title, names in (("by step", STEPS), ("by kind of work", WORKS)):
            found = shares(stats, names)
            print(f"shares of the fit, {title} (cProfile, cumulative):")
            for label in names.values():
                if label in found:
                    print(f"  {label:36s} {100 * found[label]:5.1f} %")
            if names is WORKS:
                print(f"  {'the rest':36s} {100 * (1 - sum(found.values())):5.1f} %")


if __name__ == "__main__":
    main()
