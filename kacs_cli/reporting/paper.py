"""Our main experiment beside the published main table (docs/algorithm.md sections 9 and 10).

Per benchmark and metric: our mean against the published one in standard errors (z), whether
it lies within max(3 SE, 5 %), and whether the Wilcoxon verdicts agree; the across-benchmark
statistics recomputed from the published means; and a warning when the campaign is not the
published setting.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from kacs_cli.engine.registry import BASELINE, PROPOSED
from kacs_cli.experiments.data import PACKAGE_DATA
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.metrics import metric_label
from kacs_cli.reporting import stats
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.model import METHODS, ExperimentReport
from kacs_cli.reporting.pair import across_record
from kacs_cli.reporting.tables import Table, TCell, fmt_rank, fmt_value, fmt_z, tcell

PAPER_METRICS = ("train_mae", "test_mae", "rules", "params", "aic")
PAPER_VERDICT_METRICS = ("test_mae", "rules", "params")
PAPER_RUNS = 30
# The setting of the published main table (docs/algorithm.md sections 9 and 10).
PUBLISHED_SETTING = {"iterations": 100_000, "runs": PAPER_RUNS, "protocol": "main", "semantics": "reference"}


def load_paper_table() -> pd.DataFrame:
    """The published main table shipped as package data (kacs_cli/experiments/data/paper_main_table.csv)."""
    path = PACKAGE_DATA / "paper_main_table.csv"
    table = pd.read_csv(path)
    table["benchmark"] = table["benchmark"].str.strip().str.lower()
    return table


def is_published_campaign(config: results.ResolvedConfig) -> bool:
    """The main experiment in the published setting but perhaps its run count: its plain
    cells (label = benchmark, no variant) of XCSF and KACS are the published table's."""
    return ((config.experiment or "").lower() == "main" and config.protocol == PUBLISHED_SETTING["protocol"]
            and config.iterations == PUBLISHED_SETTING["iterations"]
            and (config.semantics or "reference").lower() == PUBLISHED_SETTING["semantics"])


def against_published(pub: pd.Series, method: str, mean: float, sd: float, n: int) -> dict[str, Any]:
    """One method's mean of n runs beside the published one (`pub`: the published table's row
    of a benchmark and metric): paper, paper_sd, z and within max(3 SE, 5 %) (NaN and None
    without runs)."""
    pm, ps = float(pub[f"{method}_mean"]), float(pub[f"{method}_sd"])
    out: dict[str, Any] = {"paper": pm, "paper_sd": ps, "z": math.nan, "within": None}
    if n > 0 and math.isfinite(mean):
        out["z"] = stats.fidelity_z(mean, sd, n, pm, ps, PAPER_RUNS)
        out["within"] = stats.within_published(mean, sd, n, pm, ps, PAPER_RUNS)
    return out


def paper_comparison(exp: ExperimentReport) -> pd.DataFrame:
    """One row per (benchmark, metric) of the published table that the experiment has: our
    means and the published ones, z, within, and both verdicts."""
    published = load_paper_table().set_index(["benchmark", "metric"])
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    records = []
    for cell in exp.cells:
        bench = cell.benchmark.lower()
        if not cell.plain_variant or cell.label != cell.benchmark:
            continue
        for metric in PAPER_METRICS:
            if (bench, metric) not in published.index or (cell.label, metric) not in stats_by.index:
                continue
            pub = published.loc[(bench, metric)]
            ours = stats_by.loc[(cell.label, metric)]
            rec: dict[str, Any] = {"cell": cell.label, "benchmark": bench, "metric": metric}
            for method in METHODS:
                mean, sd, n = ours[f"{method}_mean"], ours[f"{method}_sd"], int(ours[f"{method}_runs"])
                rec[f"{method}_ours"] = mean
                rec[f"{method}_ours_sd"] = sd
                rec[f"{method}_runs"] = n
                rec.update({f"{method}_{k}": v for k, v in against_published(pub, method, mean, sd, n).items()})
            rec["symbol_ours"] = ours["symbol"]
            rec["wilcoxon_p_paper"] = float(pub["wilcoxon_p"])
            rec["symbol_paper"] = stats.verdict(
                float(pub["wilcoxon_p"]), float(pub[f"{BASELINE}_mean"]) - float(pub[f"{PROPOSED}_mean"])
            )
            rec["verdict_agrees"] = bool(ours["symbol"]) and ours["symbol"] == rec["symbol_paper"]
            records.append(rec)
    return pd.DataFrame.from_records(records)


def _fidelity_line(paper: pd.DataFrame) -> str:
    if paper.empty:
        return "Fidelity: no cell of the published main table in this experiment."
    flags = [v for m in METHODS for v in paper[f"{m}_within"] if v is not None]
    within = sum(bool(v) for v in flags)
    parts = []
    for metric in PAPER_VERDICT_METRICS:
        part = paper[paper["metric"] == metric]
        if len(part):
            parts.append(f"{metric_label(metric)} {int(part['verdict_agrees'].sum())}/{len(part)}")
    n_cells = paper["cell"].nunique()
    return (
        f"Fidelity: {within} of {len(flags)} means within max(3 SE, 5 %) of the published ones "
        f"({n_cells} benchmarks); verdicts agree: {', '.join(parts)}."
    )


def _published_across() -> pd.DataFrame:
    """Ranks, counts and across-benchmark p recomputed from the published means."""
    table = load_paper_table()
    records = []
    for metric in PAPER_METRICS:
        part = table[table["metric"] == metric]
        symbols = [stats.verdict(p, xm - km) for p, xm, km in zip(part["wilcoxon_p"], part[f"{BASELINE}_mean"], part[f"{PROPOSED}_mean"])]
        records.append(across_record(metric, part, symbols))
    return pd.DataFrame.from_records(records)


def paper_setting_warning(config: results.ResolvedConfig, runs: pd.DataFrame) -> str | None:
    """A warning when the campaign is not the published setting, so its z scores mean little."""
    differences = []
    its = sorted({int(v) for v in pd.to_numeric(runs.get("iterations"), errors="coerce").dropna()}) \
        if "iterations" in runs.columns else []
    if not its and config.iterations is not None:
        its = [config.iterations]
    if its and its != [PUBLISHED_SETTING["iterations"]]:
        differences.append(f"{' / '.join(f'{i:,}' for i in its)} iterations per run instead of 100,000")
    semantics = (config.semantics or "reference").lower()
    if semantics != PUBLISHED_SETTING["semantics"]:
        differences.append(f"{semantics} semantics instead of reference")
    if config.runs is not None and config.runs != PUBLISHED_SETTING["runs"]:
        differences.append(f"{config.runs} runs per cell instead of 30")
    if not differences:
        return None
    return ("Warning: this campaign differs from the published setting (" + "; ".join(differences)
            + "): the comparison with the published table is not like for like.")


def choose_paper_experiments(exps: list[ExperimentReport]) -> None:
    """Compare with the published table only the main experiment (others reuse names like f3)."""
    named_main = [e for e in exps if e.name.lower() == "main" and e.paper is not None]
    keep = named_main or [e for e in exps if e.paper is not None and not e.paper.empty]
    for e in exps:
        if e.paper is not None and e not in keep:
            e.paper = None
    for e in keep:
        e.fidelity = _fidelity_line(e.paper)


def paper_table(exp: ExperimentReport) -> Table:
    paper = exp.paper
    headers = ["cell", "metric", "XCSF ours", "paper", "z", "within",
               "KACS ours", "paper", "z", "within", "sym ours", "paper"]
    rows: list[list[TCell]] = []
    rules: set[int] = set()
    last_cell = None
    for s in paper.itertuples(index=False):
        if last_cell is not None and s.cell != last_cell:
            rules.add(len(rows))
        row = [tcell(s.cell if s.cell != last_cell else ""), tcell(metric_label(s.metric))]
        last_cell = s.cell
        for method in METHODS:
            within = getattr(s, f"{method}_within")
            row += [
                tcell(fmt_value(s.metric, getattr(s, f"{method}_ours"))),
                tcell(fmt_value(s.metric, getattr(s, f"{method}_paper"))),
                tcell(fmt_z(getattr(s, f"{method}_z"))),
                tcell("n/a" if within is None else ("yes" if within else "NO")),
            ]
        row += [tcell(s.symbol_ours or "n/a"), tcell(s.symbol_paper)]
        rows.append(row)
    caption = (
        f"{exp.name} against the published main table: z = (ours - published) / "
        f"sqrt(SD_pub²/{PAPER_RUNS} + SD_ours²/n_ours); within: |ours - published| ≤ max(3 SE, 5 % "
        f"of the published mean); XCSF's symbol from our runs and from the published p and means."
    )
    return Table(f"{exp.name}: fidelity to the published table", caption, headers, rows, n_left=2,
                 rules_before=rules, label=f"tab:{slug(exp.name)}-paper")


def published_across_table(exp: ExperimentReport) -> Table:
    ours = exp.across.set_index("metric")
    pub = _published_across().set_index("metric")
    headers = ["metric", "avg rank ours", "paper", "+/-/~ ours", "paper", "Wilcoxon p ours", "paper"]
    rows = []
    for metric in PAPER_METRICS:
        if metric not in ours.index:
            continue
        o, p = ours.loc[metric], pub.loc[metric]
        rows.append(
            [
                tcell(metric_label(metric)),
                tcell(f"{fmt_rank(o[f'{BASELINE}_avg_rank'])} / {fmt_rank(o[PROPOSED + '_avg_rank'])}"),
                tcell(f"{fmt_rank(p[f'{BASELINE}_avg_rank'])} / {fmt_rank(p[PROPOSED + '_avg_rank'])}"),
                tcell(stats.format_counts({"+": o["plus"], "-": o["minus"], "~": o["tie"]})),
                tcell(stats.format_counts({"+": p["plus"], "-": p["minus"], "~": p["tie"]})),
                tcell(stats.format_p(o["across_p"]), suffix=stats.DAGGER if o["significant"] else ""),
                tcell(stats.format_p(p["across_p"]), suffix=stats.DAGGER if p["significant"] else ""),
            ]
        )
    caption = f"{exp.name}: across-benchmark statistics, ours and recomputed from the published means (XCSF / KACS ranks)."
    return Table(f"{exp.name}: across benchmarks vs the paper", caption, headers, rows, n_left=1,
                 label=f"tab:{slug(exp.name)}-paper-across")
