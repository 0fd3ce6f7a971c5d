"""The baselines and the regressors (docs/baselines.md and their lines of
docs/results-summary.md): every method's mean test MAE and average rank over the main
benchmarks, the verdicts against a control, the k-method tests (the kmethods tables), and
refinement's effect and cost."""

from __future__ import annotations

import numpy as np

from kacs_cli.reporting import kstats
from kacs_cli.reporting.quoted.common import (ALPHA, MAIN_BENCHMARKS, Quoted, Source, bold_min, compare, integer,
                                              means, name, table, values, verdicts, word)

LABELS = {"kacs": "KACS", "xcsf": "XCSF", "xcsf-lib": "xcsf-lib", "ridge": "ridge", "knn": "kNN",
          "rf": "random forest", "gbr": "gradient boosting", "mlp": "MLP", "svr": "SVR", "kan": "KAN",
          "kacs-refined": "refined KACS", "kacs-quantile-refined": "refined KACS, quantile inputs"}


def _across(src: Source):
    return src.report("kmethods-across").set_index("method")


def avg_ranks(src: Source):
    """The report's average ranks, best first."""
    return _across(src).avg_rank[list(means(src).columns)].sort_values()


def _methods_table(src: Source) -> Quoted:
    """Per method the mean test MAE (parameters) per main benchmark, the best in bold, its
    average rank and seconds per run."""
    mae, params, a = means(src).loc[list(MAIN_BENCHMARKS)], means(src, "params_mean"), _across(src)
    seconds = src.runs().groupby("method").seconds.mean()
    bold = {b: dict(zip(mae.columns, bold_min([f"{v:.3f}" for v in mae.loc[b]], list(mae.loc[b])))) for b in mae.index}
    rows = [[m.upper() if m in ("kacs", "xcsf") else m]
            + [f"{bold[b][m]} ({integer(params.loc[b, m])})" for b in MAIN_BENCHMARKS]
            + [f"{a.avg_rank[m]:.2f}", f"{seconds[m]:.1f}" if seconds[m] >= 1 else f"{seconds[m]:.2g}"]
            for m in mae.columns]
    return table("methods", ["method"] + [name(b) for b in MAIN_BENCHMARKS] + ["avg rank", "s per run"], rows)


def _verdicts_table(src: Source, control: str) -> Quoted:
    v = verdicts(src, control, MAIN_BENCHMARKS, list(means(src).columns))
    order = sorted(v, key=lambda m: (-len(v[m]["better"]), len(v[m]["worse"])))

    def cell(found):
        return f"{len(found)} ({', '.join(found)})" if 0 < len(found) <= 3 else str(len(found))
    rows = [[("XCSF (ours)" if m == "xcsf" else LABELS[m])] + [cell(v[m][w]) for w in ("better", "level", "worse")]
            for m in order]
    who = LABELS[control]
    return table("verdicts", ["against", f"{who} better on", "level on", f"{who} worse on"], rows)


def _tests(src: Source) -> Quoted:
    """The k-method tests over the main benchmarks in a few words, and the average ranks."""
    a = _across(src).iloc[0]
    k, b = int(a.k), int(a.b)
    r = avg_ranks(src)
    return values(
        friedman=f"χ² = {a.chi2_f:.2f}, df {k - 1}, p = {a.p_chi2:.1e}; Iman-Davenport F = {a.f_f:.2f}, "
                 f"df ({k - 1}, {(k - 1) * (b - 1)}), p = {a.p_f:.1e}",
        cd=f"CD = {kstats.nemenyi_q(k):.3f} · sqrt({k} · {k + 1} / (6 · {b})) = {a.cd:.2f}",
        floor=f"over {b} benchmarks the smallest two-sided Wilcoxon p is 2/2^{b} = {2 / 2 ** b:.4f}, and Holm over "
              f"{k - 1} comparisons makes it at least {kstats.smallest_holm_p(b, k - 1):.3f}, above α = {ALPHA}",
        ranks=", ".join(f"{LABELS[m]} {r[m]:.2f}" for m in r.index))


def baselines(src: Source) -> Quoted:
    out = _methods_table(src)
    out.update(_verdicts_table(src, "kacs"))
    out.update(_tests(src))
    ranked = avg_ranks(src)
    lead = [LABELS[m] for m in ranked.index[:3]]
    v = verdicts(src, "kacs", MAIN_BENCHMARKS, list(means(src).columns))
    out.update(values(headline=f"KACS's average rank is {ranked['kacs']:.2f}, {list(ranked.index).index('kacs') + 1}th "
                               f"of {len(ranked)} ({', '.join(lead)} lead); per benchmark it beats XCSF on "
                               f"{len(v['xcsf']['better'])} and xcsf-lib on {len(v['xcsf-lib']['better'])} of 8, and "
                               f"loses to gradient boosting on {len(v['gbr']['worse'])}"))
    return out


def _lower(src: Source, a: str, b: str, benchmarks) -> int:
    """On how many benchmarks a's test MAE is significantly lower than b's (the raw paired p)."""
    pairs = compare(src, a, b)
    return sum(word(pairs[x].p, pairs[x].a_mean, pairs[x].b_mean) == "better" for x in benchmarks)


def regressors(src: Source) -> Quoted:
    out = _methods_table(src)
    out.update(_verdicts_table(src, "kacs-refined"))
    out.update(_tests(src))
    sd = means(src, "test_mae_sd")
    f = list(MAIN_BENCHMARKS[:4])
    parts = ", ".join(f"{b} {sd.loc[b, 'kacs']:.4f} to {sd.loc[b, 'kacs-refined']:.4f}" for b in f)
    r = src.runs()
    r = r[r.method == "kacs-refined"]
    ratio = r.refine_seconds / r.seconds
    per = r.assign(ratio=ratio).groupby("benchmark").ratio.mean()
    worst = per.idxmax()
    ranked = avg_ranks(src)
    lead = [LABELS[m] for m in ranked.index[:2]]
    out.update(values(
        refined_sd=f"{parts}: {np.mean(sd.loc[f, 'kacs-refined'] / sd.loc[f, 'kacs']):.2f} of KACS's on average",
        refine_cost=f"{100 * ratio.mean():.0f} % of the evolution's time on average ({100 * ratio.median():.0f} % "
                    f"median, wall time of the same run); most on {name(worst)} ({100 * per[worst]:.0f} % on average, "
                    f"{100 * ratio[r.benchmark == worst].max():.0f} % in its longest run), where 8,611 training rows "
                    f"meet a cheap evolution at n = 4",
        headline=f"refined KACS has a lower test MAE than KACS on "
                 f"{_lower(src, 'kacs-refined', 'kacs', MAIN_BENCHMARKS)} of 8 benchmarks (same rules); average rank "
                 f"{ranked['kacs-refined']:.2f} ({ranked['kacs-quantile-refined']:.2f} with quantile inputs) among "
                 f"{len(ranked)} methods, against {ranked['kacs']:.2f} for KACS ({', '.join(lead)} lead)"))
    return out


EXPERIMENTS = {"baselines": (baselines,), "regressors": (regressors,)}
