"""The accuracy-against-size campaign (results/readable; the README, docs/baselines.md and
docs/results-summary.md): per benchmark the readable Pareto front and where compacted KACS
stands on it, from the report's pareto table."""

from __future__ import annotations

from fnmatch import fnmatch

import pandas as pd

from kacs_cli.reporting.quoted.common import MAIN_BENCHMARKS, REAL, Quoted, Source, name, names, table, values

KACS_PREFIX = "kacs-r"  # the compacted KACS budgets: kacs-r20 keeps 20 % of the rules
KACS_LARGEST = "kacs-r20"  # the budget X-KAN is set beside
XKAN = "xkan"


def _readable(src: Source) -> pd.DataFrame:
    p = src.report("pareto")
    return p[p.kind == "readable"]


def _point(rec) -> str:
    return f"{rec['method']} ({rec['test_error']:.4f}, {rec['params']:,.0f})"


def _dominator(rec) -> str:
    return f"{rec['dominated_by']} (MAE x{rec['error_ratio']:.2f}, params x{rec['params_ratio']:.2f})"


def _standing(rec) -> str:
    return "on the front" if rec["on_front"] == True else f"dominated by {_dominator(rec)}"  # noqa: E712 - object column


def _tables(src: Source) -> Quoted:
    """Per benchmark: the readable front from the smallest model up (test MAE, parameters),
    which compacted KACS budgets are on it, and for those off it the front method dominating
    the most accurate of them; X-KAN's compacted model beside the most accurate compacted
    KACS, and where X-KAN stands; every point's standing; the most accurate compacted KACS."""
    p = _readable(src)
    front, xkan, best = [], [], []
    for bench in MAIN_BENCHMARKS:
        here = p[p.cell == bench]
        if here.empty:
            continue
        on = here[here.on_front == True].sort_values("params")  # noqa: E712 - object column
        kacs = here[here.method.str.startswith(KACS_PREFIX)]
        kacs_on = [m for m in on.method if m.startswith(KACS_PREFIX)]
        off = kacs[kacs.on_front != True].sort_values("test_error")  # noqa: E712
        note = "—" if off.empty else f"{off.iloc[0]['method']} by {_dominator(off.iloc[0])}"
        front.append([name(bench), str(int(here.runs.iloc[0])), "; ".join(_point(r) for _, r in on.iterrows()),
                      ", ".join(kacs_on) or "none", note])
        top = kacs.sort_values("test_error").iloc[0]
        best.append([bench, top["method"], f"{top['test_error']:.10g}"])
        mine = here[here.method == XKAN]
        if not mine.empty:
            rec = mine.iloc[0]
            xkan.append([name(bench), str(int(rec["runs"])), f"{rec['test_error']:.4f}", f"{rec['params']:,.0f}",
                         f"{top['method']} ({top['test_error']:.4f}, {top['params']:,.0f})", _standing(rec)])
    out = table("front", ["benchmark", "runs", "readable front, smallest first: method (test MAE, parameters)",
                          "compacted KACS on it", "the most accurate compacted KACS off it, dominated by"], front)
    out.update(table("xkan", ["benchmark", "runs", "X-KAN test MAE", "X-KAN parameters",
                              "most accurate compacted KACS (test MAE, parameters)", "X-KAN on the readable front"], xkan))
    out.update(table("standing", ["cell", "method", "standing"],
                     [[r.cell, r.method, _standing(r)] for _, r in p.iterrows()]))
    out.update(table("best-kacs", ["cell", "method", "test_error"], best))
    return out


def patterns(methods) -> list[str]:
    """Every method, then every family of them (ebm* for ebm and ebm-additive)."""
    return list(dict.fromkeys(methods)) + list(dict.fromkeys(m.split("-")[0] + "*" for m in methods))


def _matching(p: pd.DataFrame, pattern: str) -> pd.Series:
    return p.method.map(lambda m: fnmatch(m, pattern))


def _roles(src: Source) -> Quoted:
    """Per method and family: the benchmarks whose most accurate, least accurate and smallest
    readable model it is, and those where it is on the readable front."""
    p = _readable(src)

    def extreme(pattern: str, column: str, largest: bool) -> str:
        by_cell = p.groupby("cell")[column]
        chosen = p.loc[by_cell.idxmax() if largest else by_cell.idxmin()]
        return names(chosen[_matching(chosen, pattern)].cell)
    rows = [[x, extreme(x, "test_error", False), extreme(x, "test_error", True), extreme(x, "params", False),
             names(p[(p.on_front == True) & _matching(p, x)].cell)]  # noqa: E712
            for x in patterns(p.method)]
    return table("roles", ["methods", "most_accurate", "least_accurate", "smallest", "on_front"], rows)


def _xkan_against_kacs(p: pd.DataFrame) -> pd.DataFrame:
    """On the real data: X-KAN's and the largest compacted KACS's test MAE and parameters."""
    p = p.set_index(["cell", "method"])
    real = [b for b in MAIN_BENCHMARKS if b in REAL]
    return pd.DataFrame({"xkan_mae": [p.loc[(b, XKAN), "test_error"] for b in real],
                         "kacs_mae": [p.loc[(b, KACS_LARGEST), "test_error"] for b in real],
                         "size": [p.loc[(b, XKAN), "params"] / p.loc[(b, KACS_LARGEST), "params"] for b in real]},
                        index=real)


def _quotes(src: Source) -> Quoted:
    p = _readable(src)
    on = p[p.on_front == True]  # noqa: E712
    kacs_on = on[on.method.str.startswith(KACS_PREFIX)]
    t = _xkan_against_kacs(p)
    gain = (1 - t.xkan_mae / t.kacs_mae)[t.xkan_mae < t.kacs_mae].sort_values()
    ends = [f"{100 * gain.iloc[i]:.0f} % on {name(gain.index[i])}" for i in ((0, -1) if len(gain) > 1 else (0,))
            if not gain.empty]
    counts = p.groupby("cell").runs.first()
    low, high = int(counts.min()), int(counts.max())
    held = f"{low}" if low == high else f"{low} to {high}"
    wanted = src.config.runs
    return values(
        front_count=f"{kacs_on.cell.nunique()} of {src.report('pareto').cell.nunique()}",
        kacs_alone=names(b for b, here in on.groupby("cell") if here.method.str.startswith(KACS_PREFIX).all()),
        xkan_beats="all four" if len(gain) == len(t) == 4 else f"{len(gain)} of {len(t)}",
        xkan_gain=" to ".join(ends) or "nowhere",
        xkan_size=f"{t['size'].min():.0f} to {t['size'].max():.0f}",
        runs=f"{held} runs",
        runs_configured=(f"all {wanted} configured runs" if low == high == wanted
                         else f"{held} of the {wanted} configured runs"))


def readable(src: Source) -> Quoted:
    out = _tables(src)
    out.update(_roles(src))
    out.update(_quotes(src))
    return out


EXPERIMENTS = {"readable": (readable,)}
