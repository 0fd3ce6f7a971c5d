"""The article's two-method statistics and tables: the baseline against the proposal.

Per cell and metric: each method's mean and SD over its runs, and over the runs both have,
the paired two-sided Wilcoxon p, the rank-biserial effect size and the baseline's +/-/~
symbol; across cells: average ranks, symbol counts and the Wilcoxon test over the per-cell
means. Methods beyond the pair are described (mean ± SD), not tested.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from kacs_cli.engine import registry
from kacs_cli.engine.registry import BASELINE, PROPOSED
from kacs_cli.experiments.campaign.metrics import BY_NAME as metrics_by_name
from kacs_cli.experiments.campaign.metrics import metric_label
from kacs_cli.reporting import kstats, stats
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.loading import compacted_note, method_values
from kacs_cli.reporting.model import METHODS, Cell, ExperimentReport
from kacs_cli.reporting.tables import Table, TCell, fmt_rank, fmt_sd, fmt_value, tcell


def pair_ran(exp: ExperimentReport) -> bool:
    """Whether XCSF or KACS ran in the experiment: its two-method tables (and the SupRB table)
    only then, since an experiment of other methods alone (a refined or compacted variant,
    baselines) would get tables of n/a."""
    return any(exp.cell_stats[f"{m}_runs"].sum() > 0 for m in registry.DEFAULT_PAIR
               if f"{m}_runs" in exp.cell_stats.columns)


def cell_statistics(runs: pd.DataFrame, cells: list[Cell], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per (cell, metric): each method's mean, SD and runs, and the paired tests."""
    records = []
    for cell in cells:
        for metric in metrics:
            x = method_values(runs, cell, BASELINE, metric)
            y = method_values(runs, cell, PROPOSED, metric)
            paired = pd.concat([x.rename("x"), y.rename("y")], axis=1, join="inner")
            rec: dict[str, Any] = {
                "cell": cell.label,
                "benchmark": cell.benchmark,
                "variant": cell.variant,
                "n": cell.n,
                "samples": cell.samples,
                "N": cell.N,
                "metric": metric,
            }
            for method, v in ((BASELINE, x), (PROPOSED, y)):
                rec[f"{method}_mean"] = float(v.mean()) if len(v) else math.nan
                rec[f"{method}_sd"] = float(v.std(ddof=1)) if len(v) > 1 else math.nan
                rec[f"{method}_runs"] = int(len(v))
            rec["n_pairs"] = int(len(paired))
            if len(paired):
                rec["wilcoxon_p"] = stats.wilcoxon_p(paired["x"], paired["y"])
                rec["effect_size"] = stats.rank_biserial(paired["x"], paired["y"])
                rec["symbol"] = stats.symbol(paired["x"], paired["y"])
            else:
                rec["wilcoxon_p"], rec["effect_size"], rec["symbol"] = math.nan, math.nan, ""
            xm, ym = rec[f"{BASELINE}_mean"], rec[f"{PROPOSED}_mean"]
            if math.isfinite(xm) and math.isfinite(ym):
                lower_wins = metrics_by_name[metric].lower_is_better
                rec["best"] = "tie" if xm == ym else (BASELINE if (xm < ym) == lower_wins else PROPOSED)
            else:
                rec["best"] = ""
            records.append(rec)
    return pd.DataFrame.from_records(records)


def empty_cell_statistics() -> pd.DataFrame:
    """`cell_statistics`' columns without rows, for an experiment without finished runs."""
    cols = ["cell", "benchmark", "variant", "n", "samples", "N", "metric", f"{BASELINE}_mean", f"{BASELINE}_sd",
            f"{BASELINE}_runs", f"{PROPOSED}_mean", f"{PROPOSED}_sd", f"{PROPOSED}_runs", "n_pairs", "wilcoxon_p", "effect_size",
            "symbol", "best"]
    return pd.DataFrame(columns=cols)


def other_method_statistics(runs: pd.DataFrame, cells: list[Cell], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per (cell, method beyond the pair) with runs: mean and SD of every metric."""
    names = [m for m in dict.fromkeys(runs["method"]) if m not in METHODS]
    records = []
    for cell in cells:
        for method in names:
            rec: dict[str, Any] = {"cell": cell.label, "method": method}
            count = 0
            for metric in metrics:
                v = method_values(runs, cell, method, metric)
                rec[f"{metric}_mean"] = float(v.mean()) if len(v) else math.nan
                rec[f"{metric}_sd"] = float(v.std(ddof=1)) if len(v) > 1 else math.nan
                count = max(count, len(v))
            rec["runs"] = count
            if count:
                records.append(rec)
    return pd.DataFrame.from_records(records)


def across_record(metric: str, part: pd.DataFrame, symbols: Sequence[str]) -> dict:
    """Average ranks, +/-/~ counts and the across-benchmark Wilcoxon test of one metric."""
    means = part[[f"{BASELINE}_mean", f"{PROPOSED}_mean"]].rename(columns={f"{BASELINE}_mean": BASELINE, f"{PROPOSED}_mean": PROPOSED})
    ranks = dict(zip(means.columns, kstats.average_ranks(means)))
    complete = means.dropna()
    test = stats.across_benchmark_test(complete[BASELINE], complete[PROPOSED])
    counts = stats.count_symbols(list(symbols))
    return {
        "metric": metric,
        f"{BASELINE}_avg_rank": float(ranks[BASELINE]),
        f"{PROPOSED}_avg_rank": float(ranks[PROPOSED]),
        "plus": counts["+"],
        "minus": counts["-"],
        "tie": counts["~"],
        "across_p": test.p,
        "significant": test.significant,
        "n_benchmarks": test.n_benchmarks,
    }


def across_statistics(cell_stats: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """`across_record` of every metric over the cells of `cell_statistics`."""
    records = []
    for metric in metrics:
        part = cell_stats[cell_stats["metric"] == metric]
        records.append(across_record(metric, part, part["symbol"]))
    return pd.DataFrame.from_records(records)


def summary_table(exp: ExperimentReport) -> Table:
    """Per cell two rows (XCSF with its symbol, KACS), the across-cell rows at the bottom."""
    metrics = exp.metrics
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    headers = ["cell", "method"] + [metric_label(m) for m in metrics] + ["runs"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    for cell in exp.cells:
        if rows:
            rules.add(len(rows))
        for method in METHODS:
            row = [tcell(cell.label if method == BASELINE else ""), tcell(registry.label(method))]
            runs = 0
            for metric in metrics:
                s = stats_by.loc[(cell.label, metric)]
                runs = max(runs, int(s[f"{method}_runs"]))
                bold = s["best"] in (method, "tie")
                suffix = s["symbol"] if method == BASELINE else ""
                row.append(tcell(fmt_value(metric, s[f"{method}_mean"]), bold, suffix))
            row.append(tcell(runs))
            rows.append(row)
    rules.add(len(rows))
    across = exp.across.set_index("metric")
    for method in METHODS:
        rows.append(
            [tcell("avg rank" if method == BASELINE else ""), tcell(registry.label(method))]
            + [tcell(fmt_rank(across.loc[m, f"{method}_avg_rank"])) for m in metrics]
            + [tcell("")]
        )
    rows.append(
        [tcell("+/-/~"), tcell(registry.label(BASELINE))]
        + [tcell(stats.format_counts({"+": across.loc[m, "plus"], "-": across.loc[m, "minus"], "~": across.loc[m, "tie"]})) for m in metrics]
        + [tcell("")]
    )
    rows.append(
        [tcell("Wilcoxon p"), tcell("")]
        + [
            tcell(stats.format_p(across.loc[m, "across_p"]), suffix=stats.DAGGER if across.loc[m, "significant"] else "")
            for m in metrics
        ]
        + [tcell("")]
    )
    caption = (
        f"{exp.name}: means over runs ({exp.protocol} protocol, errors are {exp.error_word} on the "
        f"{exp.target_word} target). Symbol after XCSF's mean: + XCSF significantly better (lower) than "
        f"KACS, - significantly worse, ~ no significant difference (paired two-sided Wilcoxon "
        f"over runs, α = 0.05). Best mean per cell in bold. Bottom: average ranks, +/-/~ counts, "
        f"paired Wilcoxon over the per-cell means († p < 0.05)." + compacted_note(exp, METHODS, metrics)
    )
    return Table(
        title=f"{exp.name}: summary",
        caption=caption,
        headers=headers,
        rows=rows,
        n_left=2,
        rules_before=rules,
        label=f"tab:{slug(exp.name)}-summary",
    )


def detailed_table(exp: ExperimentReport) -> Table:
    headers = ["cell", "metric"] + [f"{registry.label(m)} mean ± SD" for m in METHODS] + ["p", "effect r", "sym", "pairs"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    for cell in exp.cells:
        if rows:
            rules.add(len(rows))
        part = exp.cell_stats[exp.cell_stats["cell"] == cell.label]
        for i, s in enumerate(part.itertuples(index=False)):
            metric = s.metric
            row = [tcell(cell.label if i == 0 else ""), tcell(metric_label(metric))]
            for method in METHODS:
                mean, sd = getattr(s, f"{method}_mean"), getattr(s, f"{method}_sd")
                text = "n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"
                row.append(tcell(text, s.best in (method, "tie")))
            effect = s.effect_size
            row += [
                tcell(stats.format_p(s.wilcoxon_p)),
                tcell(f"{effect:+.3f}" if math.isfinite(effect) else "n/a"),
                tcell(s.symbol or "n/a"),
                tcell(s.n_pairs),
            ]
            rows.append(row)
    caption = (
        f"{exp.name}: mean ± SD over runs, two-sided paired Wilcoxon p, matched-pairs "
        f"rank-biserial effect size of XCSF - KACS (positive favours KACS), XCSF's symbol, "
        f"number of paired runs." + compacted_note(exp, METHODS, exp.metrics)
    )
    return Table(f"{exp.name}: detailed", caption, headers, rows, n_left=2, rules_before=rules,
                 label=f"tab:{slug(exp.name)}-detailed")


def other_methods_table(exp: ExperimentReport) -> Table:
    """Every method beyond the pair, per cell: mean ± SD of each metric, no test."""
    headers = ["cell", "method"] + [metric_label(m) for m in exp.metrics] + ["runs"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    last = None
    for s in exp.others.to_dict("records"):
        if s["cell"] != last and rows:
            rules.add(len(rows))
        row = [tcell(s["cell"] if s["cell"] != last else ""), tcell(registry.label(s["method"]))]
        for metric in exp.metrics:
            mean, sd = s[f"{metric}_mean"], s[f"{metric}_sd"]
            row.append(tcell("n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"))
        rows.append(row + [tcell(s["runs"])])
        last = s["cell"]
    pair = " and ".join(registry.label(m) for m in METHODS)
    caption = (f"{exp.name}: methods beyond {pair} (other learners, labelled variants), mean ± SD "
               f"over runs; described only, not tested."
               + compacted_note(exp, exp.others["method"], exp.metrics))
    return Table(f"{exp.name}: other methods", caption, headers, rows, n_left=2, rules_before=rules,
                 label=f"tab:{slug(exp.name)}-others")
