"""The accuracy-against-size campaign (results/readable; the README and docs/baselines.md): per
benchmark the readable Pareto front and where compacted KACS stands on it, from the campaign's
report (`kacs report results/readable` writes readable_pareto.csv from the committed runs;
`make paper-tables` renders it again and tests/test_report_experiments.py checks it is
unchanged)."""

from __future__ import annotations

import pandas as pd

from tools.doctables.common import MAIN_BENCHMARKS, Runs, name, table

KACS_PREFIX = "kacs-r"


def points(runs: Runs) -> pd.DataFrame:
    return pd.read_csv(runs.root / "results" / "readable" / "report" / "readable_pareto.csv")


def _point(rec) -> str:
    return f"{rec['method']} ({rec['test_error']:.4f}, {rec['params']:,.0f})"


def front(runs: Runs) -> str:
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
        note = "—"
        if not off.empty:
            best_off = off.iloc[0]
            note = (f"{best_off['method']} by {best_off['dominated_by']} (MAE x{best_off['error_ratio']:.2f}, "
                    f"params x{best_off['params_ratio']:.2f})")
        rows.append([name(bench), str(int(here.runs.iloc[0])), "; ".join(_point(r) for _, r in on.iterrows()),
                     ", ".join(kacs_on) or "none", note])
    return table(["benchmark", "runs", "readable front, smallest first: method (test MAE, parameters)",
                  "compacted KACS on it", "the most accurate compacted KACS off it, dominated by"],
                 rows, ["l", "r", "l", "l", "l"])


XKAN = "xkan"


def xkan(runs: Runs) -> str:
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
        where = "on the front" if rec["on_front"] == True else (  # noqa: E712 - object column
            f"dominated by {rec['dominated_by']} (MAE x{rec['error_ratio']:.2f}, params x{rec['params_ratio']:.2f})")
        rows.append([name(bench), str(int(rec["runs"])), f"{rec['test_error']:.4f}", f"{rec['params']:,.0f}",
                     f"{kacs['method']} ({kacs['test_error']:.4f}, {kacs['params']:,.0f})", where])
    return table(["benchmark", "runs", "X-KAN test MAE", "X-KAN parameters",
                  "most accurate compacted KACS (test MAE, parameters)", "X-KAN on the readable front"],
                 rows, ["l", "r", "r", "r", "l", "l"])


def v_front_count(runs: Runs, _arg) -> str:
    """On how many of the eight benchmarks some compacted KACS budget is on the readable front."""
    p = points(runs)
    on = p[(p.on_front == True) & p.method.str.startswith(KACS_PREFIX)]  # noqa: E712
    return f"{on.cell.nunique()} of {p.cell.nunique()}"


TABLES = {"readable-front": front, "readable-xkan": xkan}
VALUES = {"readable-front-count": v_front_count}
