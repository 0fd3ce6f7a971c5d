"""The baselines and the regressors (docs/baselines.md): every method's mean test MAE and
average rank over the main benchmarks, the verdicts against a control, the k-method tests
(the reports' kmethods tables), and refinement's effect and cost."""

from __future__ import annotations

import numpy as np

from kacs_cli.reporting import kstats

from tools.doctables.common import (ALPHA, MAIN_BENCHMARKS, Runs, bold_min, integer, means, name, table,
                                    verdicts)

LABELS = {"kacs": "KACS", "xcsf": "XCSF", "xcsf-lib": "xcsf-lib", "ridge": "ridge", "knn": "kNN",
          "rf": "random forest", "gbr": "gradient boosting", "mlp": "MLP", "svr": "SVR", "kan": "KAN",
          "kacs-refined": "refined KACS", "kacs-quantile-refined": "refined KACS, quantile inputs"}


def across(runs: Runs, folder: str = "baselines"):
    return runs.report(folder, "kmethods-across").set_index("method")


def avg_ranks(runs: Runs, folder: str = "baselines"):
    """The report's average ranks, best first."""
    return across(runs, folder).avg_rank[list(means(runs, folder).columns)].sort_values()


def t_baselines(runs: Runs, folder: str = "baselines") -> str:
    mae, params, a = means(runs, folder).loc[list(MAIN_BENCHMARKS)], means(runs, folder, "params_mean"), across(runs, folder)
    seconds = runs(folder).groupby("method").seconds.mean()
    bold = {b: dict(zip(mae.columns, bold_min([f"{v:.3f}" for v in mae.loc[b]], list(mae.loc[b])))) for b in mae.index}
    rows = [[m.upper() if m in ("kacs", "xcsf") else m]
            + [f"{bold[b][m]} ({integer(params.loc[b, m])})" for b in MAIN_BENCHMARKS]
            + [f"{a.avg_rank[m]:.2f}", f"{seconds[m]:.1f}" if seconds[m] >= 1 else f"{seconds[m]:.2g}"]
            for m in mae.columns]
    return table(["method"] + [name(b) for b in MAIN_BENCHMARKS] + ["avg rank", "s per run"], rows, ["l"] + ["r"] * 10)


def t_regressors(runs: Runs) -> str:
    return t_baselines(runs, "regressors")


def t_baselines_verdicts(runs: Runs, folder: str = "baselines", control: str = "kacs") -> str:
    v = verdicts(runs, folder, control, MAIN_BENCHMARKS, list(means(runs, folder).columns))
    order = sorted(v, key=lambda m: (-len(v[m]["better"]), len(v[m]["worse"])))

    def cell(names):
        return f"{len(names)} ({', '.join(names)})" if 0 < len(names) <= 3 else str(len(names))
    rows = [[("XCSF (ours)" if m == "xcsf" else LABELS[m])] + [cell(v[m][w]) for w in ("better", "level", "worse")]
            for m in order]
    who = LABELS[control]
    return table(["against", f"{who} better on", "level on", f"{who} worse on"], rows, ["l", "l", "l", "l"])


def t_regressors_verdicts(runs: Runs) -> str:
    return t_baselines_verdicts(runs, "regressors", "kacs-refined")


def _kb(runs: Runs, folder: str | None):
    a = across(runs, folder or "baselines").iloc[0]
    return a, int(a.k), int(a.b)


def v_baselines_friedman(runs: Runs, folder: str | None = None) -> str:
    a, k, b = _kb(runs, folder)
    return (f"χ² = {a.chi2_f:.2f}, df {k - 1}, p = {a.p_chi2:.1e}; Iman-Davenport F = {a.f_f:.2f}, "
            f"df ({k - 1}, {(k - 1) * (b - 1)}), p = {a.p_f:.1e}")


def v_baselines_cd(runs: Runs, folder: str | None = None) -> str:
    a, k, b = _kb(runs, folder)
    return f"CD = {kstats.nemenyi_q(k):.3f} · sqrt({k} · {k + 1} / (6 · {b})) = {a.cd:.2f}"


def v_baselines_floor(runs: Runs, folder: str | None = None) -> str:
    a, k, b = _kb(runs, folder)
    return (f"over {b} benchmarks the smallest two-sided Wilcoxon p is 2/2^{b} = {2 / 2 ** b:.4f}, and Holm over "
            f"{k - 1} comparisons makes it at least {kstats.smallest_holm_p(b, k - 1):.3f}, above α = {ALPHA}")


def v_ranks(runs: Runs, folder: str) -> str:
    """The average ranks of a k-method folder's methods over the main benchmarks, best first."""
    r = avg_ranks(runs, folder)
    return ", ".join(f"{LABELS[m]} {r[m]:.2f}" for m in r.index)


def v_refined_sd(runs: Runs, folder: str) -> str:
    """The SD of test MAE over runs of KACS and refined KACS on f1-f4, and their mean ratio."""
    sd = means(runs, folder, "test_mae_sd")
    f = list(MAIN_BENCHMARKS[:4])
    parts = ", ".join(f"{b} {sd.loc[b, 'kacs']:.4f} to {sd.loc[b, 'kacs-refined']:.4f}" for b in f)
    return f"{parts}: {np.mean(sd.loc[f, 'kacs-refined'] / sd.loc[f, 'kacs']):.2f} of KACS's on average"


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
