"""The k-method section of a report: whenever a cell has more than two methods.

The article's tables compare two methods (XCSF against KACS, docs/algorithm.md section 11) and stay as
they are. An experiment that runs more methods on some cells (KACS variants such as
kacs-adaptive and kacs-guideline, baselines without rules) gets, per set of methods, the
statistics of Demšar (2006, JMLR 7) over the error the protocol reports on the test split:

- per benchmark: each method's mean ± SD, mean rules and parameters (a dash where a method
  has none), its rank (rank 1 = lowest mean, ties averaged) and the paired two-sided Wilcoxon
  test against the control over runs (paired by run index), Holm-corrected over the k-1
  comparisons of that benchmark;
- across benchmarks: average ranks; the Friedman chi2_F and the Iman-Davenport F_F; the
  Wilcoxon test of every method against the control over the per-benchmark means, Holm over
  the k-1 comparisons; Nemenyi's critical difference at alpha = 0.05 and its diagram (PNG).

A "benchmark" here is a cell of the runner (one dataset): report cells that differ only in
the budget N of their methods (kacs-guideline at N = 24 n (2n + 1) beside XCSF at 6400,
baselines without N) are one benchmark. The across-benchmark statistics run over the
benchmarks that have every method of the set; the tables say which, and say so when a test
cannot be computed. The numbers come from `kstats` (and `stats` for p-value printing); this
module only picks the data and lays out tables, CSVs and the diagram.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from kacs_cli.engine import registry
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.metrics import metric_label
from kacs_cli.reporting import cd_diagram, kstats, stats
from kacs_cli.reporting.files import slug, write_csv
from kacs_cli.reporting.loading import (cell_mask, compacted_note, config_methods, label_cells, method_values,
                                        planned_methods)
from kacs_cli.reporting.model import Cell, ExperimentReport
from kacs_cli.reporting.tables import Table, fmt_rank, fmt_sd, fmt_value, tcell

CD_ALPHA = 0.05  # Nemenyi's critical difference, as in Demšar's diagrams
MIN_BENCHMARKS = 2  # for the Friedman test, the across-benchmark Wilcoxon tests and CD
DASH = "—"  # a quantity the method does not have (the rules of a baseline without rules)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of the k-method statistics: the report cells of one runner cell."""

    label: str
    cells: tuple[Cell, ...]
    methods: tuple[str, ...]  # planned or run on it, in the experiment's method order


@dataclass
class MethodSet:
    """The statistics of one set of k > 2 methods over the benchmarks that have them all."""

    methods: tuple[str, ...]
    control: str | None  # None: the control is not among these methods
    benchmarks: list[Benchmark]  # planned with every method of the set
    per_benchmark: pd.DataFrame  # one row per (benchmark, method)
    complete: list[str]  # benchmarks with a mean of every method: the ranks and tests use these
    incomplete: list[str]  # "label (no runs of X)"
    others: list[str]  # cells of the experiment without every method of the set
    average_ranks: np.ndarray
    friedman: kstats.FriedmanResult | None
    across: kstats.ControlTests | None
    cd: float
    # The smallest Holm p the across-benchmark tests could reach; above alpha they are not run.
    across_floor: float = math.nan

    @property
    def k(self) -> int:
        return len(self.methods)

    @property
    def b(self) -> int:
        return len(self.complete)


@dataclass
class KMethods:
    metric: str  # test_mae or test_mse
    control: str
    methods: tuple[str, ...]  # every method of the experiment (for --control)
    sets: list[MethodSet]


# --------------------------------------------------------------------------- analysis


def _benchmarks(exp: ExperimentReport, runs: pd.DataFrame, planned: dict, order: list[str]) -> list[Benchmark]:
    """Report cells grouped into benchmarks. Cells of one runner cell that differ only in N
    are one benchmark when no method appears in two of them (each method ran at its own
    budget); otherwise each stays its own benchmark (the same methods at other budgets)."""
    groups: dict[tuple, list] = {}
    for cell in exp.cells:
        groups.setdefault((cell.cell_id, cell.variant, cell.n, cell.samples), []).append(cell)
    parts, shown = [], []
    for cells in groups.values():
        present = {c.key: list(dict.fromkeys(runs.loc[cell_mask(runs, c), "method"])) for c in cells}
        every = [m for c in cells for m in present[c.key]]
        merged = len(cells) > 1 and len(every) == len(set(every))
        for members in ([cells] if merged else [[c] for c in cells]):
            found = {m for c in members for m in present[c.key]} | set(planned.get(members[0].cell_id, []))
            parts.append((members, tuple(m for m in order if m in found)))
            first = members[0]
            # a merged benchmark has no single N: labelled as the report labels cells, without it
            shown.append(replace(first, N=None, label="") if merged else first)
    labels = [c.label for c in label_cells(shown)]
    return [Benchmark(label, tuple(members), methods) for label, (members, methods) in zip(labels, parts)]


def _values(runs: pd.DataFrame, bench: Benchmark, method: str, metric: str) -> pd.Series:
    """metric per run (index = run id) of one method on one benchmark."""
    parts = [method_values(runs, c, method, metric) for c in bench.cells]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts) if parts else pd.Series(dtype=float)


def _mean(v: pd.Series) -> float:
    return float(v.mean()) if len(v) else math.nan


def _method_set(runs, methods, benchmarks, all_benchmarks, metric, control) -> MethodSet:
    control = control if control in methods else None
    records, means, complete, incomplete = [], [], [], []
    for bench in benchmarks:
        samples = {m: _values(runs, bench, m, metric) for m in methods}
        row = np.array([_mean(samples[m]) for m in methods])
        full = bool(np.all(np.isfinite(row)))
        ranks = kstats.rank_matrix(row[None, :])[0] if full else np.full(len(methods), math.nan)
        if full:
            complete.append(bench.label)
            means.append(row)
        else:
            lacking = [registry.label(m) for m, v in zip(methods, row) if not math.isfinite(v)]
            incomplete.append(f"{bench.label} (no runs of {', '.join(lacking)})")
        tests = None
        if control is not None:
            aligned = pd.concat(samples, axis=1)  # runs paired by run index
            tests = kstats.per_benchmark_tests({m: aligned[m].to_numpy() for m in methods}, control)
        for j, m in enumerate(methods):
            test = tests[m] if (tests is not None and m != control) else None
            v = samples[m]
            records.append({
                "cell": bench.label,
                "method": m,
                "control": m == control,
                "runs": int(len(v)),
                f"{metric}_mean": row[j],
                f"{metric}_sd": float(v.std(ddof=1)) if len(v) > 1 else math.nan,
                "rules_mean": _mean(_values(runs, bench, m, "rules")),
                "params_mean": _mean(_values(runs, bench, m, "params")),
                "rank": ranks[j],
                "p": test.p if test else math.nan,
                "p_holm": test.p_holm if test else math.nan,
                "symbol": test.verdict if test else "",
                "n_pairs": test.n_pairs if test else 0,
                "in_ranks": full,
            })
    matrix = np.array(means) if means else np.empty((0, len(methods)))
    b = len(means)
    enough = b >= MIN_BENCHMARKS
    floor = kstats.smallest_holm_p(b, len(methods) - 1)
    testable = enough and control is not None and floor <= stats.ALPHA
    inside = {id(x) for x in benchmarks}
    return MethodSet(
        methods=tuple(methods),
        control=control,
        benchmarks=list(benchmarks),
        per_benchmark=pd.DataFrame.from_records(records),
        complete=complete,
        incomplete=incomplete,
        others=[x.label for x in all_benchmarks if id(x) not in inside],
        average_ranks=kstats.average_ranks(matrix) if b else np.full(len(methods), math.nan),
        friedman=kstats.friedman(matrix) if enough else None,
        across=kstats.across_benchmark_tests(matrix, methods, control) if testable else None,
        cd=kstats.critical_difference(len(methods), b, CD_ALPHA) if enough else math.nan,
        across_floor=floor,
    )


def analyse(exp: ExperimentReport, runs: pd.DataFrame, config: results.ResolvedConfig, control: str | None) -> KMethods:
    """The k-method statistics of one experiment (no sets when no cell has more than two)."""
    control = normalise_control(control) or kstats.DEFAULT_CONTROL
    metric = next(m for m in exp.metrics if m.startswith("test_"))
    order = list(dict.fromkeys([*config_methods(config), *(runs["method"] if len(runs) else [])]))
    planned = planned_methods(config)
    benchmarks = _benchmarks(exp, runs, planned, order) if exp.cells else []
    known = tuple(dict.fromkeys([*order, *(m for ms in planned.values() for m in ms)]))
    sets = []
    for methods in dict.fromkeys(b.methods for b in benchmarks if len(b.methods) > 2):
        members = [b for b in benchmarks if set(methods) <= set(b.methods)]
        sets.append(_method_set(runs, methods, members, benchmarks, metric, control))
    return KMethods(metric=metric, control=control, methods=known, sets=sets)


def normalise_control(control: str | None) -> str | None:
    """Method names are lower case in runs.csv; None or blank: the default control."""
    name = str(control).strip().lower() if control is not None else ""
    return name or None


def check_control(control: str | None, exps: Sequence[ExperimentReport]) -> None:
    """An explicit --control must name a method of the report (runs.csv or config)."""
    name = normalise_control(control)
    if name is None:
        return
    known = sorted({m for e in exps if e.kmethods is not None for m in e.kmethods.methods})
    if name not in known:
        raise UserError(f"unknown control method {control!r}; the methods here are: {', '.join(known) or 'none'}")


# --------------------------------------------------------------------------- tables


def _set_name(exp: ExperimentReport, s: MethodSet) -> str:
    which = f"{s.k} methods" if len(exp.kmethods.sets) == 1 else ", ".join(registry.label(m) for m in s.methods)
    return f"{exp.name}: {which}"


def _suffix(i: int) -> str:
    return "" if i == 0 else f"-{i + 1}"


def _fmt_stat(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return "inf" if math.isinf(x) else f"{x:.3f}"


def _fmt_count(x: float) -> str:
    return DASH if not math.isfinite(x) else fmt_value("rules", x)


def _labels(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def _control_word(s: MethodSet, km: KMethods) -> str:
    if s.control is None:
        return (f"The control {km.control} is not among these methods: no comparison against a control "
                f"(choose one with --control).")
    return f"Control: {registry.label(s.control)}."


def _few_pairs_note(counts: Sequence[int], unit: str) -> str:
    few = [n for n in counts if 0 < n < 6]
    if not few:
        return ""
    return (f" With fewer than 6 {unit} a two-sided Wilcoxon p cannot fall below 0.05 "
            f"(here as few as {min(few)}).")


def per_benchmark_table(exp: ExperimentReport, s: MethodSet, i: int) -> Table:
    km = exp.kmethods
    metric = km.metric
    label = metric_label(metric)
    headers = ["cell", "method", f"{label} mean ± SD", "rules", "params", "rank", "runs", "p", "p Holm", "sym", "pairs"]
    rows, rules = [], set()
    for bench in s.benchmarks:
        part = s.per_benchmark[s.per_benchmark["cell"] == bench.label]
        if rows:
            rules.add(len(rows))
        best = part["rank"].min()
        for j, r in enumerate(part.to_dict("records")):
            mean, sd = r[f"{metric}_mean"], r[f"{metric}_sd"]
            text = "n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"
            name = registry.label(r["method"]) + (" (control)" if r["control"] else "")
            if r["control"]:
                tests = [DASH] * 4
            elif s.control is None:
                tests = ["n/a"] * 3 + ["0"]
            else:
                tests = [stats.format_p(r["p"]), stats.format_p(r["p_holm"]),
                         r["symbol"] if r["n_pairs"] else "n/a", str(r["n_pairs"])]
            rows.append([tcell(bench.label if j == 0 else ""), tcell(name),
                         tcell(text, math.isfinite(r["rank"]) and r["rank"] == best),
                         tcell(_fmt_count(r["rules_mean"])), tcell(_fmt_count(r["params_mean"])),
                         tcell(fmt_rank(r["rank"])), tcell(r["runs"])] + [tcell(t) for t in tests])
    caption = (
        f"{exp.name}, {s.k} methods per benchmark ({exp.protocol} protocol, {label} on the "
        f"{exp.target_word} target): mean ± SD over runs, mean rules and parameters ({DASH}: the "
        f"method has none), rank on the benchmark (1 = lowest mean, ties averaged; n/a when a method "
        f"has no runs there), best mean in bold. p: paired two-sided Wilcoxon over runs (paired by "
        f"run index) against the control, p Holm: Holm-corrected over the benchmark's {s.k - 1} "
        f"comparisons; sym: + the method is significantly better (lower) than the control, - "
        f"significantly worse, ~ no significant difference (Holm, α = 0.05); pairs: runs paired "
        f"with the control's. {_control_word(s, km)}"
        + compacted_note(exp, s.methods)
        + _few_pairs_note(s.per_benchmark.loc[~s.per_benchmark["control"], "n_pairs"] if len(s.per_benchmark) else [], "paired runs")
        + (f" Cells without all {s.k} methods are not in this table: {_labels(s.others)}." if s.others else "")
    )
    return Table(f"{_set_name(exp, s)} per benchmark", caption, headers, rows, n_left=2, rules_before=rules,
                    label=f"tab:{slug(exp.name)}-kmethods{_suffix(i)}")


def _which_benchmarks(s: MethodSet) -> str:
    text = f"the {s.b} benchmark{'s' if s.b != 1 else ''} with all {s.k} methods ({_labels(s.complete)})"
    if s.incomplete:
        text += f"; left out: {_labels(s.incomplete)}"
    return text


def _not_computed(s: MethodSet) -> str:
    if s.b >= MIN_BENCHMARKS:
        return ""
    return (f" Not computed: the Friedman test, the across-benchmark Wilcoxon tests and the critical "
            f"difference need at least {MIN_BENCHMARKS} benchmarks with all {s.k} methods, here {s.b}.")


def _cannot_reject(s: MethodSet) -> bool:
    """The across-benchmark tests were left out because none of them could reject."""
    return s.across is None and s.b >= MIN_BENCHMARKS and s.control is not None and s.across_floor > stats.ALPHA


def _floor_note(s: MethodSet) -> str:
    if not _cannot_reject(s):
        return ""
    return (f" Not run: over {s.b} benchmarks the smallest two-sided Wilcoxon p is 2/2^{s.b} = "
            f"{stats.format_p(2.0 / 2.0 ** s.b)}, and Holm over the {s.k - 1} comparisons makes it at least "
            f"{stats.format_p(s.across_floor)} > α = {stats.ALPHA}: no comparison across benchmarks could be "
            f"significant, whatever the data. The per-benchmark tests over runs and the Friedman and Nemenyi "
            f"tests stand.")


def ranks_table(exp: ExperimentReport, s: MethodSet, i: int) -> Table:
    km = exp.kmethods
    headers = ["method", "avg rank", "Wilcoxon p", "p Holm", "sym", "benchmarks"]
    rows = []
    for j, m in enumerate(s.methods):
        name = registry.label(m) + (" (control)" if m == s.control else "")
        if m == s.control:
            tests = [DASH] * 4
        elif _cannot_reject(s):
            tests = ["not run"] * 3 + [str(s.b)]
        elif s.across is None:
            tests = ["n/a"] * 3 + [str(s.b)]
        else:
            c = s.across[m]
            tests = [stats.format_p(c.p), stats.format_p(c.p_holm), c.verdict, str(c.n_pairs)]
        rows.append([tcell(name), tcell(fmt_rank(s.average_ranks[j]))] + [tcell(t) for t in tests])
    caption = (
        f"{exp.name}, {s.k} methods across benchmarks: average rank of the mean {metric_label(km.metric)} "
        f"(1 = best) and the paired two-sided Wilcoxon test of each method against the control over the "
        f"per-benchmark means, Holm-corrected over the {s.k - 1} comparisons (sym as per benchmark), over "
        f"{_which_benchmarks(s)}. {_control_word(s, km)}"
        + compacted_note(exp, s.methods)
        + _not_computed(s)
        + _floor_note(s)
        + (_few_pairs_note([s.b], "benchmarks") if s.across is not None else "")
    )
    return Table(f"{_set_name(exp, s)} across benchmarks", caption, headers, rows, n_left=1,
                    label=f"tab:{slug(exp.name)}-kmethods-ranks{_suffix(i)}")


def tests_table(exp: ExperimentReport, s: MethodSet, i: int) -> Table:
    f = s.friedman
    k, b = s.k, s.b
    rows = [
        ["Friedman χ²", _fmt_stat(f.chi2_f) if f else "n/a", f"df {k - 1}", stats.format_p(f.p_chi2) if f else "n/a"],
        ["Iman-Davenport F", _fmt_stat(f.f_f) if f else "n/a", f"df ({k - 1}, {(k - 1) * (b - 1)})" if f else "n/a",
         stats.format_p(f.p_f) if f else "n/a"],
        [f"Nemenyi CD (α = {CD_ALPHA:g})", _fmt_stat(s.cd),
         f"q = {kstats.nemenyi_q(k, CD_ALPHA):.3f}, k = {k}, N = {b}", ""],
    ]
    caption = (
        f"{exp.name}, {k} methods: the Friedman test over {_which_benchmarks(s)}, its Iman-Davenport "
        f"F (Demšar 2006, no correction for ties), and Nemenyi's critical difference CD = "
        f"q sqrt(k (k+1) / (6 N)): two methods whose average ranks differ by at least CD differ "
        f"significantly (the diagram among the figures)." + _not_computed(s)
    )
    return Table(f"{_set_name(exp, s)}: Friedman and Nemenyi", caption, ["test", "statistic", "parameters", "p"],
                    [[tcell(t) for t in r] for r in rows], n_left=1,
                    label=f"tab:{slug(exp.name)}-kmethods-tests{_suffix(i)}")


def tables(exp: ExperimentReport) -> list[Table]:
    km = exp.kmethods
    if km is None:
        return []
    out = []
    for i, s in enumerate(km.sets):
        out += [per_benchmark_table(exp, s, i), ranks_table(exp, s, i), tests_table(exp, s, i)]
    return out


def on_console(exp: ExperimentReport, table: Table) -> bool:
    """The across-benchmark tables are printed with the summary."""
    return re.fullmatch(rf"tab:{re.escape(slug(exp.name))}-kmethods-(ranks|tests)(-\d+)?", table.label) is not None


# --------------------------------------------------------------------------- CSV and figure


def _frames(exp: ExperimentReport) -> tuple[pd.DataFrame, pd.DataFrame]:
    km = exp.kmethods
    per, across = [], []
    for s in km.sets:
        name = ",".join(s.methods)
        frame = s.per_benchmark.copy()
        frame.insert(0, "methods", name)
        per.append(frame)
        f = s.friedman
        for j, m in enumerate(s.methods):
            c = s.across[m] if (s.across is not None and m != s.control) else None
            across.append({
                "methods": name, "method": m, "control": m == s.control, "avg_rank": s.average_ranks[j],
                "p": c.p if c else math.nan, "p_holm": c.p_holm if c else math.nan,
                "symbol": c.verdict if c else "", "n_benchmarks": c.n_pairs if c else s.b,
                "k": s.k, "b": s.b, "chi2_f": f.chi2_f if f else math.nan, "p_chi2": f.p_chi2 if f else math.nan,
                "f_f": f.f_f if f else math.nan, "p_f": f.p_f if f else math.nan, "cd": s.cd, "cd_alpha": CD_ALPHA,
                "benchmarks": ";".join(s.complete),
            })
    return pd.concat(per, ignore_index=True), pd.DataFrame.from_records(across)


def write_csvs(exp: ExperimentReport, out: Path) -> list[Path]:
    if exp.kmethods is None or not exp.kmethods.sets:
        return []
    stem = slug(exp.name)
    per, across = _frames(exp)
    written = []
    for path, frame in ((out / f"{stem}_kmethods.csv", per), (out / f"{stem}_kmethods-across.csv", across)):
        write_csv(path, frame)
        written.append(path)
    return written


def cd_figures(exp: ExperimentReport, out_dir: Path) -> tuple[list[Path], list[str]]:
    """One critical-difference diagram per method set; stale ones of an earlier render go."""
    stem = slug(exp.name)
    written, notes = [], []
    km = getattr(exp, "kmethods", None)
    for i, s in enumerate(km.sets if km is not None else []):
        names = ", ".join(registry.label(m) for m in s.methods)
        if s.b < MIN_BENCHMARKS:
            notes.append(f"Critical-difference diagram ({names}): not drawn, {s.b} benchmark(s) with all "
                         f"{s.k} methods (it needs at least {MIN_BENCHMARKS}).")
            continue
        ranks = {registry.label(m): float(r) for m, r in zip(s.methods, s.average_ranks)}
        path = out_dir / f"{stem}_cd{_suffix(i)}.png"
        cd_diagram.cd_diagram(ranks, s.cd, path)
        written.append(path)
    pattern = re.compile(rf"{re.escape(stem)}_cd(-\d+)?\.png")
    if out_dir.is_dir():
        for stale in out_dir.iterdir():
            if pattern.fullmatch(stale.name) and stale not in written:
                stale.unlink(missing_ok=True)
    return written, notes
