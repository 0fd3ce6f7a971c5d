"""Structural fidelity on f1-f4 (docs/explain.md): the rows of docs/fidelity/grid.csv that
tools/fidelity_grid.py writes, one per (function, n, run, setting), as the tables of the
document. Each cell is the mean over the runs a setting has there; a table says how many."""

from __future__ import annotations

import pandas as pd

from tools.doctables.common import Runs, table

GRID = ("docs", "fidelity", "grid.csv")
KACS_SETTINGS = ("plain", "refined", "compacted")
LEVERS = ("refined", "refined-N25600", "refined-m-n+1", "refined-quantile", "refined-levers")
BASELINES = ("ebm", "kan")


def grid(runs: Runs) -> pd.DataFrame:
    return pd.read_csv(runs.root.joinpath(*GRID))


def _cells(g: pd.DataFrame, settings) -> list[tuple[str, int]]:
    """The (function, n) cells where every one of `settings` has a run, in order."""
    here = g[g.setting.isin(settings)]
    counts = here.groupby(["function", "n"]).setting.nunique()
    return [cell for cell, k in counts.items() if k == len(settings)]


def _score(sel: pd.DataFrame) -> str:
    return f"{sel.fidelity_mean.mean():.3f} ({sel.fidelity_worst.mean():.3f})"


def _runs_of(g: pd.DataFrame, cell, settings) -> pd.DataFrame:
    """The cell's rows of the runs every one of `settings` has there (paired)."""
    sel = g[(g.function == cell[0]) & (g.n == cell[1]) & g.setting.isin(settings)]
    per = [set(s.run) for _, s in sel.groupby("setting")]
    return sel[sel.run.isin(set.intersection(*per))]


def _rows(g: pd.DataFrame, settings, mae=()) -> list[list[str]]:
    """Per cell the runs, each setting's fidelity and the test MAE of the settings in `mae`."""
    rows = []
    for cell in _cells(g, settings):
        sel = _runs_of(g, cell, settings)
        row = [cell[0], str(cell[1]), ", ".join(str(r) for r in sorted(set(sel.run)))]
        row += [_score(sel[sel.setting == s]) for s in settings]
        row += [f"{sel[sel.setting == s].test_mae.mean():.3f}" for s in mae]
        rows.append(row)
    return rows


def t_fidelity_kacs(runs: Runs) -> str:
    """KACS plain, refined and compacted: fidelity and test MAE per function and n."""
    head = ["function", "n", "runs", "plain", "refined", "compacted", "test MAE plain", "refined", "compacted"]
    return table(head, _rows(grid(runs), KACS_SETTINGS, KACS_SETTINGS), ["l", "r", "l"] + ["r"] * 6)


def t_fidelity_baselines(runs: Runs) -> str:
    """Refined KACS, EBM and the KAN: fidelity and test MAE per function and n, paired runs."""
    settings = ("refined", *BASELINES)
    head = ["function", "n", "runs", "refined KACS", "EBM", "KAN", "test MAE refined KACS", "EBM", "KAN"]
    return table(head, _rows(grid(runs), settings, settings), ["l", "r", "l"] + ["r"] * 6)


def t_fidelity_levers(runs: Runs) -> str:
    """Refined KACS with each capacity lever at n = 10: fidelity (worst input) per function,
    test MAE of the default and of all three levers."""
    head = ["function", "n", "runs", "refined", "N = 25,600", "m = n + 1", "quantile", "all three",
            "test MAE refined", "all three"]
    rows = _rows(grid(runs), LEVERS, ("refined", "refined-levers"))
    return table(head, rows, ["l", "r", "l"] + ["r"] * 7)
