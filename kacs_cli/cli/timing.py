"""`kacs bench`: the speed of both engines on a named workload (and, optionally, the `xcsf`
library from PyPI on the same data and settings).

Every workload is generated f3 with 1000 samples (dataset seed 0), main-protocol split 0,
learner seed 0, 100,000 iterations, evaluation every 2000 iterations; they differ in n and
the budget N (`WORKLOADS`). `reference` (n = 10, N = 6400) is the default; the others are
the costly cells of the dimensional-scaling experiment. Each learner is warmed up first
(inside train_run), so the timings exclude numba's compilation or cache loading. With
`repeat` > 1 each learner runs that many times and the median time is reported; the runs
must agree on every fingerprint (test MAE, rules), since the engines are deterministic.
With `profile`, KACS's timed runs also count the cycles of each phase of an iteration
(`phase_profile`); the runs compute the same numbers as without.

The `rows` workload times fits instead of engine runs: the recommended KACS
(`KACSRegressor.from_preset("recommended")`) beside scikit-learn's
HistGradientBoostingRegressor on ROWS generated training rows each (`rows_data`), both on one
core, each scored on TEST_ROWS further rows (docs/performance.md, "Cost against rows").
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import time
from dataclasses import dataclass, field

import numpy as np

from kacs_cli.estimators import KACSRegressor
from kacs_cli.baselines.xcsf_lib import XCSFLibRegressor
from kacs_cli.engine import Hyperparameters, train_run
from kacs_cli.engine.registry import BASELINE, PROPOSED
from kacs_cli.errors import UserError
from kacs_cli.experiments.data.benchmarks import generate
from kacs_cli.experiments.data.protocols import make_split

ITERATIONS = 100_000
EVAL_EVERY = 2000
# The article's pair (engine/registry.py), the proposal first as in the printed table.
LEARNERS = (PROPOSED, BASELINE)
# The learner `--profile` profiles (the only one with phases, Learner.phases).
PROFILED = PROPOSED
# The run outside the learner's phases: the driver's loop, the layout's opening and closing, evaluation.
REST = ("rest", "rest of the run")


@dataclass(frozen=True)
class Workload:
    name: str
    n: int
    N: int

    @property
    def title(self) -> str:
        return f"f3, n = {self.n}, N = {self.N}"


# The reference workload, then the cells of configs/dim_scaling.yaml that dominate its cost.
WORKLOADS = {
    w.name: w
    for w in (
        Workload("reference", 10, 6400),
        Workload("n18-N15984", 18, 15984),
        Workload("n20-N6400", 20, 6400),
        Workload("n20-N19680", 20, 19680),
    )
}


@dataclass
class Timing:
    method: str
    seconds: float
    iterations: int
    test_mae: float
    rules: int
    profiles: list = field(default_factory=list)  # engine Profile of each run, with profile

    @property
    def its_per_s(self) -> float:
        return self.iterations / self.seconds


# The workload of fits against the number of training rows (`run_rows_bench`), apart from the
# engine workloads above (`all` names those only: a fit on a million rows takes minutes).
ROWS_WORKLOAD = "rows"
ROWS = (10_000, 100_000, 1_000_000)
TEST_ROWS = 10_000


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UserError(
            f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}, {ROWS_WORKLOAD} (or all)"
        ) from None


def workload(seed: int = 0, n: int = 10):
    X, y = generate("f3", n, 1000, seed=0)
    return make_split(X, y, "main", split_seed=seed)


def time_engine(method: str, split, iterations: int = ITERATIONS, seed: int = 0,
                N: int = 6400, profile: bool = False) -> Timing:
    params = Hyperparameters(N=N)
    # train_run compiles (or loads numba's cache) before it starts its clock.
    result = train_run(method, split.X_train, split.y_train, split.X_test, split.y_test,
                       params=params, iterations=iterations, eval_every=EVAL_EVERY, seed=seed,
                       profile=profile)
    return Timing(method, result.seconds, iterations, float(result.final["test_mae"]),
                  int(result.final["rules"]), [result.profile] if profile else [])


def phase_profile(profiles: list, iterations: int) -> dict:
    """Cycles per iteration of each phase and of the whole run, pooled over the runs, and
    each phase's share of the whole; the last phase is the rest of the run."""
    phases = list(profiles[0].phases) + [REST]
    per_run = [list(p.cycles) + [p.rest] for p in profiles]
    runs_iterations = iterations * len(profiles)
    total = sum(p.total for p in profiles)
    return {
        "cycles_per_iteration": total / runs_iterations,
        "phases": {key: {"label": label,
                         "cycles_per_iteration": sum(run[k] for run in per_run) / runs_iterations,
                         "share": sum(run[k] for run in per_run) / total}
                   for k, (key, label) in enumerate(phases)},
    }


def time_xcsf_library(split, iterations: int = ITERATIONS, seed: int = 0, N: int = 6400) -> Timing:
    """The `xcsf` package (Preen's C implementation) configured as close to docs/algorithm.md sections 5-6 as it allows
    (the `xcsf-lib` baseline's settings, kacs_cli/baselines/xcsf_lib.py), evaluating the
    test split every EVAL_EVERY trials as the engines do."""
    try:
        import xcsf  # noqa: F401  (the optional xcsf-lib extra, needed only here)
    except ImportError as exc:
        raise UserError(
            "--vs-xcsf-lib needs the optional xcsf package: pip install 'kacs[xcsf-lib]'"
        ) from exc
    model = XCSFLibRegressor(N=N, iterations=iterations, perf_trials=EVAL_EVERY, random_state=seed)
    start = time.perf_counter()
    model.fit(split.X_train, split.y_train, validation_data=(split.X_test, split.y_test))
    seconds = time.perf_counter() - start
    test_mae = float(np.mean(np.abs(model.predict(split.X_test) - split.y_test)))
    return Timing("xcsf-lib", seconds, iterations, test_mae, model.rules_)


def peak_memory_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def median_timing(method: str, split, iterations: int, N: int, repeat: int,
                  profile: bool = False) -> tuple[Timing, list]:
    """`repeat` timed runs of one learner: the median time and every run's seconds; with
    `profile`, every run's profile."""
    runs = [time_engine(method, split, iterations, N=N, profile=profile) for _ in range(repeat)]
    for other in runs[1:]:
        if (other.test_mae, other.rules) != (runs[0].test_mae, runs[0].rules):
            raise RuntimeError(
                f"{method}: repeated runs disagree ({runs[0].test_mae!r}, {runs[0].rules}) vs "
                f"({other.test_mae!r}, {other.rules}): the engine is not deterministic")
    first = runs[0]
    profiles = [p for t in runs for p in t.profiles]
    return (Timing(method, statistics.median(t.seconds for t in runs), iterations,
                   first.test_mae, first.rules, profiles),
            [t.seconds for t in runs])


def run_bench(iterations: int = ITERATIONS, vs_xcsf_lib: bool = False, workload_name: str = "reference",
              repeat: int = 1, profile: bool = False) -> dict:
    wl = get_workload(workload_name)
    if repeat < 1:
        raise UserError(f"--repeat must be >= 1, got {repeat}")
    split = workload(n=wl.n)
    timings = {}
    all_seconds = {}
    for m in LEARNERS:
        timings[m], all_seconds[m] = median_timing(m, split, iterations, wl.N, repeat,
                                                   profile=profile and m == PROFILED)
    out = {
        "workload": wl.name,
        "n": wl.n,
        "N": wl.N,
        "repeat": repeat,
        "iterations": iterations,
    }
    for key, value in (("seconds", lambda m: timings[m].seconds),
                       ("test_mae", lambda m: timings[m].test_mae),
                       ("its_per_s", lambda m: timings[m].its_per_s),
                       ("rules", lambda m: timings[m].rules),
                       ("runs_seconds", lambda m: all_seconds[m])):
        for m in LEARNERS:
            out[f"{m}_{key}"] = value(m)
    if profile:
        out[f"{PROFILED}_profile"] = phase_profile(timings[PROFILED].profiles, iterations)
    if vs_xcsf_lib:
        # As often as the engines, so that the ratio compares medians with medians.
        libs = [time_xcsf_library(split, iterations, N=wl.N) for _ in range(repeat)]
        lib = Timing("xcsf-lib", statistics.median(t.seconds for t in libs), iterations,
                     libs[0].test_mae, libs[0].rules)
        out.update({
            "xcsf_lib_seconds": lib.seconds,
            "xcsf_lib_its_per_s": lib.its_per_s,
            "xcsf_lib_test_mae": lib.test_mae,
            "xcsf_lib_runs_seconds": [t.seconds for t in libs],
            "xcsf_speedup_vs_lib": timings[BASELINE].its_per_s / lib.its_per_s,
        })
    out["peak_memory_mib"] = peak_memory_mib()
    return out


def other_bench(command: str, workload_name: str, iterations: int) -> dict:
    """One `kacs bench --json` run of another installation (`command`: its `kacs`, such as an
    older checkout's .venv/bin/kacs) on one workload, as the dict it prints."""
    argv = [command, "bench", "--json", "--workload", workload_name, "--iterations", str(iterations)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        raise UserError(f"--against {command}: cannot run it ({exc.strerror}); give the path of another "
                        f"installation's kacs command") from None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"--against {command}: its kacs bench failed (exit {done.returncode}: {last})")
    return json.loads(lines[-1])


def run_against(command: str, workload_name: str, iterations: int, repeat: int) -> dict:
    """This code against another installation's `kacs` on one workload, in turn: `repeat`
    rounds, each one timed run of both learners by this code (in this process) and then by the
    other (`other_bench`, a process of its own, whose timing excludes its compilation as this
    code's does). A round's speed-up is the other code's seconds over this code's: pairing the
    runs of one round keeps the ratio meaningful when the machine's speed drifts. Returns
    `run_bench`'s result over this code's rounds, and per learner m `{m}_against_seconds` (the
    other's median), `{m}_against_runs_seconds`, `{m}_against_test_mae`, `{m}_against_rules`,
    `{m}_speedups` (per round) and `{m}_speedup` (their median)."""
    mine, theirs = [], []
    for _ in range(repeat):
        mine.append(run_bench(iterations=iterations, workload_name=workload_name))
        theirs.append(other_bench(command, workload_name, iterations))
    out = dict(mine[0], repeat=repeat, against=command)
    for m in LEARNERS:
        for runs, label in ((mine, "this code"), (theirs, command)):
            if len({(r[f"{m}_test_mae"], r[f"{m}_rules"]) for r in runs}) > 1:
                raise RuntimeError(f"{m} runs of {label} disagree on test MAE or rules: not deterministic")
        seconds = [r[f"{m}_seconds"] for r in mine]
        other = [r[f"{m}_seconds"] for r in theirs]
        speedups = [o / t for o, t in zip(other, seconds)]
        out.update({f"{m}_seconds": statistics.median(seconds), f"{m}_runs_seconds": seconds,
                    f"{m}_its_per_s": iterations / statistics.median(seconds),
                    f"{m}_against_seconds": statistics.median(other), f"{m}_against_runs_seconds": other,
                    f"{m}_against_test_mae": theirs[0][f"{m}_test_mae"], f"{m}_against_rules": theirs[0][f"{m}_rules"],
                    f"{m}_speedups": speedups, f"{m}_speedup": statistics.median(speedups)})
    out["peak_memory_mib"] = peak_memory_mib()
    return out


def rows_data(rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, X_test, y_test): `rows` rows of 8 inputs uniform on [0, 1] with
    y = sin(6 x1) + x2^2 + x3 x4 + 0.1 N(0, 1), then TEST_ROWS further rows of the same stream
    (docs/refinement.md, "Many rows")."""
    rng = np.random.default_rng(seed)
    drawn = []
    for count in (rows, TEST_ROWS):
        X = rng.random((count, 8))
        drawn += [X, np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=count)]
    return tuple(drawn)


def recommended_kacs(iterations: int = ITERATIONS) -> KACSRegressor:
    """The KACS fit of the rows workload: the recommended setting on real-valued data."""
    return KACSRegressor.from_preset("recommended", P_hash=0.8, n_iter=iterations, random_state=0)


def _timed_fit(model, data) -> tuple[float, float]:
    """(seconds of model.fit on the training rows, test MAE on the further rows)."""
    X, y, X_test, y_test = data
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    return seconds, float(np.mean(np.abs(model.predict(X_test) - y_test)))


def run_rows_bench(rows: int, iterations: int = ITERATIONS, repeat: int = 1) -> dict:
    """`repeat` timed fits of the recommended KACS and of HistGradientBoostingRegressor
    (scikit-learn's defaults, random_state 0) on `rows` generated rows, both on one core: the
    median seconds, every run's, the test MAE on TEST_ROWS further rows and KACS's chosen N.
    The KACS runs must agree on their test MAE, as the engines' runs must."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits

    if repeat < 1:
        raise UserError(f"--repeat must be >= 1, got {repeat}")
    data = rows_data(rows)
    warm = rows_data(300, seed=1)
    recommended_kacs(200).fit(warm[0], warm[1])  # compiles (or loads) every engine function the fit uses
    kacs_runs, gbr_runs, chosen = [], [], None
    with threadpool_limits(limits=1):
        for _ in range(repeat):
            model = recommended_kacs(iterations)
            kacs_runs.append(_timed_fit(model, data))
            chosen = model.capacity_N_
            gbr_runs.append(_timed_fit(HistGradientBoostingRegressor(random_state=0), data))
    for other in kacs_runs[1:]:
        if other[1] != kacs_runs[0][1]:
            raise RuntimeError(f"kacs: repeated fits disagree (test MAE {kacs_runs[0][1]!r} vs {other[1]!r}): "
                               f"the fit is not deterministic")
    kacs_seconds = statistics.median(s for s, _ in kacs_runs)
    gbr_seconds = statistics.median(s for s, _ in gbr_runs)
    return {
        "workload": ROWS_WORKLOAD, "rows": rows, "test_rows": TEST_ROWS, "repeat": repeat,
        "iterations": iterations,
        "kacs_seconds": kacs_seconds, "kacs_runs_seconds": [s for s, _ in kacs_runs],
        "kacs_test_mae": kacs_runs[0][1], "kacs_N": chosen,
        "gbr_seconds": gbr_seconds, "gbr_runs_seconds": [s for s, _ in gbr_runs],
        "gbr_test_mae": gbr_runs[0][1],
        "kacs_over_gbr": kacs_seconds / gbr_seconds,
        "peak_memory_mib": peak_memory_mib(),
    }
