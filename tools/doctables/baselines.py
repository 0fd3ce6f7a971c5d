"""The baselines and the regressors (docs/baselines.md): every method's mean test MAE and
average rank over the main benchmarks, the verdicts against a control, the k-method tests,
and refinement's effect and cost."""

from __future__ import annotations

import numpy as np

from kacs_cli.reporting import kstats

from tools.doctables.common import (ALPHA, MAIN_BENCHMARKS, Runs, integer, main_ranks, mean, methods, name,
                                    sd, table, verdicts)

LABELS = {"kacs": "KACS", "xcsf": "XCSF", "xcsf-lib": "xcsf-lib", "ridge": "ridge", "knn": "kNN",
          "rf": "random forest", "gbr": "gradient boosting", "mlp": "MLP", "svr": "SVR", "kan": "KAN",
          "kacs-refined": "refined KACS", "kacs-quantile-refined": "refined KACS, quantile inputs"}


def baselines(runs: Runs, folder: str = "baselines") -> str:
    r = runs(folder)
    means, ranks = main_ranks(r)
    rows = []
    for m in methods(r):
        row = [m if m not in ("kacs", "xcsf") else m.upper()]
        for b in MAIN_BENCHMARKS:
            txt = f"{means.loc[b, m]:.3f}"
            if round(means.loc[b, m], 3) == round(means.loc[b].min(), 3):
                txt = f"**{txt}**"
            row.append(f"{txt} ({integer(mean(r, b, m, 'params'))})")
        sec = r[r.method == m].seconds.mean()
        row += [f"{ranks[m]:.2f}", f"{sec:.1f}" if sec >= 1 else f"{sec:.2g}"]
        rows.append(row)
    return table(["method"] + [name(b) for b in MAIN_BENCHMARKS] + ["avg rank", "s per run"], rows,
                 ["l"] + ["r"] * 10)


def regressors(runs: Runs) -> str:
    return baselines(runs, "regressors")


def baselines_verdicts(runs: Runs, folder: str = "baselines", control: str = "kacs") -> str:
    v = verdicts(runs(folder), control)
    order = sorted(v, key=lambda m: (-len(v[m]["better"]), len(v[m]["worse"])))

    def cell(names):
        return f"{len(names)} ({', '.join(names)})" if 0 < len(names) <= 3 else str(len(names))
    rows = [[("XCSF (ours)" if m == "xcsf" else LABELS[m]), cell(v[m]["better"]), cell(v[m]["level"]),
             cell(v[m]["worse"])] for m in order]
    who = LABELS[control]
    return table(["against", f"{who} better on", "level on", f"{who} worse on"], rows, ["l", "l", "l", "l"])


def regressors_verdicts(runs: Runs) -> str:
    return baselines_verdicts(runs, "regressors", "kacs-refined")


def _matrix(runs: Runs, folder: str | None = None) -> tuple[list[str], np.ndarray]:
    r = runs(folder or "baselines")
    ms = methods(r)
    return ms, np.array([[mean(r, b, m, "test_mae") for m in ms] for b in MAIN_BENCHMARKS])


def v_baselines_friedman(runs: Runs, folder: str | None = None) -> str:
    ms, m = _matrix(runs, folder)
    f = kstats.friedman(m)
    k, b = len(ms), len(m)
    return (f"χ² = {f.chi2_f:.2f}, df {k - 1}, p = {f.p_chi2:.1e}; Iman-Davenport F = {f.f_f:.2f}, "
            f"df ({k - 1}, {(k - 1) * (b - 1)}), p = {f.p_f:.1e}")


def v_baselines_cd(runs: Runs, folder: str | None = None) -> str:
    ms, m = _matrix(runs, folder)
    k, b = len(ms), len(m)
    return f"CD = {kstats.nemenyi_q(k):.3f} · sqrt({k} · {k + 1} / (6 · {b})) = {kstats.critical_difference(k, b):.2f}"


def v_baselines_floor(runs: Runs, folder: str | None = None) -> str:
    ms, m = _matrix(runs, folder)
    k, b = len(ms), len(m)
    return (f"over {b} benchmarks the smallest two-sided Wilcoxon p is 2/2^{b} = {2 / 2 ** b:.4f}, and Holm over "
            f"{k - 1} comparisons makes it at least {kstats.smallest_holm_p(b, k - 1):.3f}, above α = {ALPHA}")


def v_ranks(runs: Runs, folder: str) -> str:
    """The average ranks of a k-method folder's methods over the main benchmarks, best first."""
    _, ranks = main_ranks(runs(folder))
    return ", ".join(f"{LABELS[m]} {ranks[m]:.2f}" for m in ranks.index)


def v_refined_sd(runs: Runs, folder: str) -> str:
    """The SD of test MAE over runs of KACS and refined KACS on f1-f4, and their mean ratio."""
    r = runs(folder)
    ratios = [sd(r, b, "kacs-refined", "test_mae") / sd(r, b, "kacs", "test_mae") for b in MAIN_BENCHMARKS[:4]]
    parts = ", ".join(f"{b} {sd(r, b, 'kacs', 'test_mae'):.4f} to {sd(r, b, 'kacs-refined', 'test_mae'):.4f}"
                      for b in MAIN_BENCHMARKS[:4])
    return f"{parts}: {np.mean(ratios):.2f} of KACS's on average"


def v_refine_cost(runs: Runs, folder: str) -> str:
    """Refinement's seconds against the evolution's, over the refined runs of a folder."""
    r = runs(folder)
    r = r[r.method == "kacs-refined"]
    ratio = r.refine_seconds / r.seconds
    per = r.assign(ratio=ratio).groupby("benchmark").ratio.mean()
    worst = per.idxmax()
    return (f"{100 * ratio.mean():.0f} % of the evolution's time on average ({100 * ratio.median():.0f} % median, "
            f"wall time of the same run); most on {name(worst)} ({100 * per[worst]:.0f} % on average, "
            f"{100 * ratio[r.benchmark == worst].max():.0f} % in its longest run), where 8,611 training rows meet a "
            f"cheap evolution at n = 4")


TABLES = {
    "baselines": baselines,
    "baselines-verdicts": baselines_verdicts,
    "regressors": regressors,
    "regressors-verdicts": regressors_verdicts,
}
VALUES = {
    "baselines-friedman": v_baselines_friedman,
    "baselines-cd": v_baselines_cd,
    "baselines-floor": v_baselines_floor,
    "ranks": v_ranks,
    "refined-sd": v_refined_sd,
    "refine-cost": v_refine_cost,
}
