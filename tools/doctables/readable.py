"""The accuracy-against-size campaign (results/readable; the README and docs/baselines.md): per
benchmark the readable Pareto front and where compacted KACS stands on it, from the report's
pareto table."""

from __future__ import annotations

from fnmatch import fnmatch

import pandas as pd

from kacs_cli.experiments.campaign.config import load_config

from tools.doctables.common import MAIN_BENCHMARKS, REAL, Runs, name, table

READABLE = "readable"  # the experiment: configs/readable.yaml, results/readable

KACS_PREFIX = "kacs-r"


def points(runs: Runs) -> pd.DataFrame:
    return runs.report(READABLE, "pareto")


def _point(rec) -> str:
    return f"{rec['method']} ({rec['test_error']:.4f}, {rec['params']:,.0f})"


def _dominator(rec) -> str:
    return f"{rec['dominated_by']} (MAE x{rec['error_ratio']:.2f}, params x{rec['params_ratio']:.2f})"


def t_readable_front(runs: Runs) -> str:
    """Per benchmark: the readable front from the smallest model up (test MAE, parameters),
    which compacted KACS budgets are on it, and for those off it the front method dominating
    the most accurate of them, with the error and parameter ratios."""
    p = points(runs)
    rows = []
    for bench in MAIN_BENCHMARKS:
        here = p[(p.cell == bench) & (p.kind == "readable")]
        if here.empty:
            continue
        on = here[here.on_front == True].sort_values("params")  # noqa: E712 - object column
        kacs = here[here.method.str.startswith(KACS_PREFIX)]
        kacs_on = [m for m in on.method if m.startswith(KACS_PREFIX)]
        off = kacs[kacs.on_front != True].sort_values("test_error")  # noqa: E712
        note = "—" if off.empty else f"{off.iloc[0]['method']} by {_dominator(off.iloc[0])}"
        rows.append([name(bench), str(int(here.runs.iloc[0])), "; ".join(_point(r) for _, r in on.iterrows()),
                     ", ".join(kacs_on) or "none", note])
    return table(["benchmark", "runs", "readable front, smallest first: method (test MAE, parameters)",
                  "compacted KACS on it", "the most accurate compacted KACS off it, dominated by"],
                 rows, ["l", "r", "l", "l", "l"])


XKAN = "xkan"


def t_readable_xkan(runs: Runs) -> str:
    """Per benchmark X-KAN's compacted model (test MAE, parameters) beside the most accurate
    compacted KACS, whether X-KAN is on the readable front, and else what dominates it."""
    p = points(runs)
    rows = []
    for bench in MAIN_BENCHMARKS:
        here = p[(p.cell == bench) & (p.kind == "readable")]
        mine = here[here.method == XKAN]
        if mine.empty:
            continue
        rec = mine.iloc[0]
        kacs = here[here.method.str.startswith(KACS_PREFIX)].sort_values("test_error").iloc[0]
        where = "on the front" if rec["on_front"] == True else f"dominated by {_dominator(rec)}"  # noqa: E712 - object column
        rows.append([name(bench), str(int(rec["runs"])), f"{rec['test_error']:.4f}", f"{rec['params']:,.0f}",
                     f"{kacs['method']} ({kacs['test_error']:.4f}, {kacs['params']:,.0f})", where])
    return table(["benchmark", "runs", "X-KAN test MAE", "X-KAN parameters",
                  "most accurate compacted KACS (test MAE, parameters)", "X-KAN on the readable front"],
                 rows, ["l", "r", "r", "r", "l", "l"])


def v_readable_front_count(runs: Runs, _arg) -> str:
    """On how many of the eight benchmarks some compacted KACS budget is on the readable front."""
    p = points(runs)
    on = p[(p.on_front == True) & p.method.str.startswith(KACS_PREFIX)]  # noqa: E712
    return f"{on.cell.nunique()} of {p.cell.nunique()}"


# ---- the numbers of the reading's prose ---------------------------------------------------
# Arguments name a benchmark and a method as BENCH:METHOD; METHODS is a comma-separated list
# of shell patterns (kacs-r* is every compacted KACS budget); BENCHES is "all", "real", "front"
# (the points on the front) or a comma-separated list of benchmarks.

KACS_LARGEST = "kacs-r20"  # the prose compares X-KAN with KACS compacted to 20 % of its rules


def _readable(runs: Runs) -> pd.DataFrame:
    p = points(runs)
    return p[p.kind == "readable"]


def _one(runs: Runs, arg: str):
    bench, method = arg.split(":")
    return _readable(runs).set_index(["cell", "method"]).loc[(bench, method)]


def _names(benches) -> str:
    """f1, f2 and f4; all eight; none."""
    benches = set(benches)
    shown = [name(b) for b in MAIN_BENCHMARKS if b in benches]
    if len(shown) == len(MAIN_BENCHMARKS):
        return "all eight"
    return "none" if not shown else shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _count(x: float) -> str:
    """Parameters: whole below a thousand, else two significant figures (2,400; 76,000)."""
    return f"{x:,.0f}" if x < 1000 else f"{float(f'{x:.2g}'):,.0f}"


def _rules(x: float) -> str:
    """Mean rules: one decimal below ten (3.7), whole above (32)."""
    return f"{x:.1f}" if x < 10 else f"{x:,.0f}"


def _xkan_rules(rec) -> float:
    """X-KAN records its parameters, not its rules: every rule holds one KAN of [n, 2n + 1, 1]
    at the estimator's grid and order, which the readable config leaves at their defaults."""
    from kacs_cli.baselines.spline_kan import count_parameters
    from kacs_cli.baselines.xkan import XKANRegressor
    est, n = XKANRegressor(), int(rec["n"])
    return rec["params"] / count_parameters(n, 2 * n + 1, est.grid, est.k)


def v_readable_mae(runs: Runs, arg: str) -> str:
    return f"{_one(runs, arg)['test_error']:.3f}"


def v_readable_params(runs: Runs, arg: str) -> str:
    return f"{_one(runs, arg)['params']:,.0f}"


def v_readable_best_kacs(runs: Runs, bench: str) -> str:
    """The test MAE of the most accurate compacted KACS budget on a benchmark."""
    p = _readable(runs)
    return f"{p[(p.cell == bench) & p.method.str.startswith(KACS_PREFIX)].test_error.min():.3f}"


def v_readable_dominated(runs: Runs, arg: str) -> str:
    rec = _one(runs, arg)
    return "on the front" if rec["on_front"] == True else f"dominated by {_dominator(rec)}"  # noqa: E712 - object column


def _matching(p: pd.DataFrame, patterns: str) -> pd.Series:
    """Which points' methods match one of the comma-separated shell patterns (kacs-r* is every
    compacted KACS budget)."""
    return p.method.map(lambda m: any(fnmatch(m, w) for w in patterns.split(",")))


def v_readable_front_of(runs: Runs, methods: str) -> str:
    """The benchmarks where one of the methods is on the readable front."""
    p = _readable(runs)
    return _names(p[(p.on_front == True) & _matching(p, methods)].cell)  # noqa: E712


def _extreme_is(runs: Runs, methods: str, column: str, largest: bool) -> str:
    """The benchmarks whose readable point with the smallest (largest) column is one of the methods."""
    p = _readable(runs)
    by_cell = p.groupby("cell")[column]
    chosen = p.loc[by_cell.idxmax() if largest else by_cell.idxmin()]
    return _names(chosen[_matching(chosen, methods)].cell)


def v_readable_top_of(runs: Runs, methods: str) -> str:
    """The benchmarks whose most accurate readable model is one of the methods."""
    return _extreme_is(runs, methods, "test_error", largest=False)


def v_readable_least(runs: Runs, methods: str) -> str:
    """The benchmarks whose least accurate readable model is one of the methods."""
    return _extreme_is(runs, methods, "test_error", largest=True)


def v_readable_smallest_of(runs: Runs, methods: str) -> str:
    """The benchmarks whose smallest readable model is one of the methods."""
    return _extreme_is(runs, methods, "params", largest=False)


def v_readable_kacs_alone(runs: Runs, _arg) -> str:
    """The benchmarks whose whole readable front is compacted KACS."""
    on = _readable(runs)
    on = on[on.on_front == True]  # noqa: E712
    return _names(b for b, here in on.groupby("cell") if here.method.str.startswith(KACS_PREFIX).all())


def v_readable_range(runs: Runs, arg: str) -> str:
    """METRIC:METHODS:BENCHES: the smallest and largest mean over those points, 'X to Y' ('X' when they show alike)."""
    metric, methods, benches = arg.split(":")
    p = _readable(runs)
    chosen = (set(MAIN_BENCHMARKS) if benches == "all" else set(MAIN_BENCHMARKS) & set(REAL) if benches == "real"
              else None if benches == "front" else set(benches.split(",")))
    sel = p[_matching(p, methods) & (p.on_front == True if chosen is None else p.cell.isin(chosen))]  # noqa: E712
    if sel.empty:
        raise ValueError(f"readable-range {arg}: no points")
    if metric == "mae":
        got, show = sel.test_error, (lambda x: f"{x:.2f}")
    elif metric == "params":
        got, show = sel.params, _count
    elif metric == "rules" and methods == XKAN:
        runs_n = runs(READABLE).groupby("benchmark").n.first()
        got, show = sel.apply(lambda r: _xkan_rules({"params": r.params, "n": runs_n[r.cell]}), axis=1), _rules
    else:
        raise ValueError(f"readable-range {arg}: metric {metric!r} is one of mae, params, rules (X-KAN's)")
    low, high = show(got.min()), show(got.max())
    return low if low == high else f"{low} to {high}"


def _xkan_against_kacs(runs: Runs) -> pd.DataFrame:
    """On the real data: X-KAN's and the largest compacted KACS's test MAE and parameters."""
    p = _readable(runs).set_index(["cell", "method"])
    real = [b for b in MAIN_BENCHMARKS if b in REAL]
    return pd.DataFrame({"xkan_mae": [p.loc[(b, XKAN), "test_error"] for b in real],
                         "kacs_mae": [p.loc[(b, KACS_LARGEST), "test_error"] for b in real],
                         "size": [p.loc[(b, XKAN), "params"] / p.loc[(b, KACS_LARGEST), "params"] for b in real]},
                        index=real)


def _xkan_gain(runs: Runs) -> pd.Series:
    """Where X-KAN's test MAE is below KACS's at 20 % on the real data: by how much, least first."""
    t = _xkan_against_kacs(runs)
    return (1 - t.xkan_mae / t.kacs_mae)[t.xkan_mae < t.kacs_mae].sort_values()


def v_readable_xkan_beats(runs: Runs, _arg) -> str:
    """On how many real datasets X-KAN's test MAE is below KACS's at 20 %."""
    beaten, real = len(_xkan_gain(runs)), len(_xkan_against_kacs(runs))
    return "all four" if beaten == real == 4 else f"{beaten} of {real}"


def v_readable_xkan_gain(runs: Runs, _arg) -> str:
    """By how much, on the real datasets where it is lower: '5 % on CCPP to 60 % on EEC'."""
    gain = _xkan_gain(runs)
    ends = [f"{100 * gain.iloc[i]:.0f} % on {name(gain.index[i])}" for i in ((0, -1) if len(gain) > 1 else (0,))]
    return " to ".join(ends) if ends and not gain.empty else "nowhere"


def v_readable_runs(runs: Runs, arg) -> str:
    """How many paired runs the tables use per benchmark (the runs every method has); with
    `configured`, against the runs configs/readable.yaml asks for: '20 of the 30 configured runs'."""
    counts = _readable(runs).groupby("cell").runs.first()
    low, high = int(counts.min()), int(counts.max())
    held = f"{low}" if low == high else f"{low} to {high}"
    if arg != "configured":
        return f"{held} runs"
    wanted = load_config(runs.root / "configs" / f"{READABLE}.yaml").protocol.runs
    return f"all {wanted} configured runs" if low == high == wanted else f"{held} of the {wanted} configured runs"


def v_readable_xkan_size(runs: Runs, _arg) -> str:
    """How many times the parameters of KACS at 20 % X-KAN's model has on the real data."""
    t = _xkan_against_kacs(runs)
    return f"{t['size'].min():.0f} to {t['size'].max():.0f}"
