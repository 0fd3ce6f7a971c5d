"""Paper-style tables and figures from a results directory (docs/algorithm.md section 11).

`build_report` reads one experiment directory (config.yaml, runs.csv, curves/) or a directory
of experiment directories, and writes Markdown, LaTeX and CSV tables plus PNG figures:

- summary: per cell and method the mean train/test error, rules, params and AIC, XCSF's
  +/-/~ symbol against KACS (paired two-sided Wilcoxon over runs), the best mean per cell in
  bold, and across the cells: average ranks, +/-/~ counts, the paired Wilcoxon p over the
  per-cell means with a dagger when p < 0.05;
- detailed: mean ± SD per method, Wilcoxon p, rank-biserial effect size, runs paired;
- scaling: for cells of one benchmark that differ in n or sample count, keyed by them;
- paper (optional): our means beside the published main table, in standard errors;
- pairwise (CSV only): every two methods against each other per cell, Holm over the cells;
- quoted (CSV only): the tables and values README.md and docs/ quote, of the campaigns they
  quote (reporting/quoted).

Means and SDs use every run a method has; the tests pair only runs present for both methods.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Iterable

import pandas as pd

from kacs_cli import atomic
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.metrics import PROTOCOL_METRICS
from kacs_cli.reporting import figures as figs  # build_report's `figures` flag has the plain name
from kacs_cli.reporting import (capacity, compaction, kmethods, missing_inputs, pairwise, pareto, quoted, refinement,
                                suprb, variants)
from kacs_cli.reporting.files import FORMATS, atomic_write_text, parse_formats, slug, write_csv
from kacs_cli.reporting.include import load_included
from kacs_cli.reporting.index import experiment_order, index_markdown, scan_experiments
from kacs_cli.reporting.loading import (cells_of, check_values, compacted_methods, config_benchmarks, config_methods,
                                        final_models, last_rows, load_config, load_runs, planned_methods, protocol_of)
from kacs_cli.reporting.missing import what_is_missing
from kacs_cli.reporting.model import PLAIN_VARIANTS, ExperimentReport, ReportSummary
from kacs_cli.reporting.pair import (across_statistics, cell_statistics, detailed_table, empty_cell_statistics,
                                     other_method_statistics, other_methods_table, pair_ran, summary_table)
from kacs_cli.reporting.paper import (choose_paper_experiments, paper_comparison, paper_setting_warning, paper_table,
                                      published_across_table)
from kacs_cli.reporting.scaling import scaling_csv, scaling_groups, scaling_table
from kacs_cli.reporting.tables import md_prose, render_latex, render_markdown, tex_escape


def analyse_experiment(exp_dir: Path, paper: bool = False, control: str | None = None) -> ExperimentReport:
    """Load one experiment directory and compute its statistics (no files written)."""
    config = load_config(exp_dir)
    raw = load_runs(exp_dir, config)
    finished = frozenset(zip(raw["cell_id"], raw["method"], raw["run"].astype(int)))
    entries = config_benchmarks(config)
    included = load_included(exp_dir, config, {e.shown for e in entries})
    if included.runs is not None and len(included.runs):
        raw = pd.concat([included.runs, raw], ignore_index=True)
    entries = included.entries + entries  # included cells first (the SupRB table's order)
    protocol, expected = protocol_of(config, raw)
    metrics = PROTOCOL_METRICS[protocol]
    if results.runs_path(exp_dir).is_file():
        # Every run has its train and test error: the counts of the tables are the runs they use.
        check_values(results.runs_path(exp_dir), required=[m for m in metrics[:2] if m in raw.columns])
    name = str(config.experiment or (raw["experiment"].dropna().iloc[0] if "experiment" in raw.columns and raw["experiment"].notna().any() else exp_dir.name))
    notes = list(included.notes)
    if not config.data:
        notes.append(f"no {results.CONFIG_FILE} in {exp_dir}: missing benchmarks cannot be detected")
    lacking = [m for m in metrics if m not in raw.columns]
    if lacking:
        notes.append(f"{results.RUNS_FILE} lacks {', '.join(lacking)}; shown as n/a")
    runs = last_rows(raw)
    # The tables of every method read each run's final model; the compaction and refinement
    # tables compare the models before and after, from the runs as recorded.
    final = final_models(runs)
    methods = config_methods(config)
    cells = cells_of(runs, entries) if len(runs) else []
    missing = included.missing + what_is_missing(raw, cells, entries, methods, expected, planned_methods(config))
    cell_stats = cell_statistics(final, cells, metrics) if cells else empty_cell_statistics()
    exp = ExperimentReport(
        name=name,
        path=exp_dir,
        protocol=protocol,
        metrics=metrics,
        expected_runs=expected,
        cells=cells,
        cell_stats=cell_stats,
        across=across_statistics(cell_stats, metrics),
        scaling=[],
        missing=missing,
        notes=notes,
        sources=included.sources,
        others=other_method_statistics(final, cells, metrics) if cells else None,
        compacted_methods=compacted_methods(runs),
        finished=finished,
    )
    # The scaling tables set XCSF beside KACS: without either (a suite of other methods whose
    # cells differ in n only by how a dataset's columns are coded) they would be all n/a.
    exp.scaling = scaling_groups(cells) if pair_ran(exp) else []
    exp.kmethods = kmethods.analyse(exp, final, config, control)
    exp.refinement = refinement.analyse(exp, runs) if cells else None
    exp.compaction = compaction.analyse(exp, runs) if cells else None
    exp.capacity = capacity.analyse(exp, runs) if cells else None
    exp.variants = variants.analyse(exp, final, config, methods) if cells else None
    exp.pairwise = pairwise.analyse(exp, runs, methods) if cells else None
    exp.pareto = pareto.analyse(exp, runs, config) if cells else None
    exp.missing_inputs = missing_inputs.analyse(exp, final, config) if cells else None
    if exp.pareto is not None:
        exp.notes += [f"accuracy against size: {note}" for note in exp.pareto.notes]
    if not cells:
        exp.missing.insert(0, f"no finished runs in {results.RUNS_FILE}")
    if paper and protocol == "main":
        exp.paper = paper_comparison(exp)
        exp.paper_warning = paper_setting_warning(config, runs)
    return exp


def build_report(
    results_dir: str | Path,
    out_dir: str | Path | None = None,
    formats: Iterable[str] | str = FORMATS,
    paper: bool = False,
    figures: bool = True,
    control: str | None = None,
) -> ReportSummary:
    """Tables (md/tex/csv) and figures (PNG) for every experiment under RESULTS_DIR.

    Writes into out_dir (default RESULTS_DIR/report): report.md, report.tex,
    <experiment>_{summary,across,scaling-*,paper}.csv and figures/<experiment>_*.png.
    """
    fmts = parse_formats(formats)
    results_dir = Path(results_dir)
    exp_dirs, skipped = scan_experiments(results_dir)
    out = atomic.output_folder(Path(out_dir) if out_dir is not None else results_dir / "report")
    exps = [analyse_experiment(d, paper=paper, control=control) for d in exp_dirs]
    kmethods.check_control(control, exps)  # an unknown --control: nothing written
    # the article's main comparison first, the others in the article's order, then by name
    exps.sort(key=experiment_order)
    if paper:
        choose_paper_experiments(exps)
    _dedupe_names(exps, results_dir)

    files: list[Path] = []
    if figures:
        for exp in exps:
            exp.figures, exp.figure_notes = figs.experiment_figures(exp, out / "figures")
            files += exp.figures
    else:
        for exp in exps:
            own = exp.path / "report" / "report.md"
            if own.is_file() and own.parent.resolve() != out.resolve():
                rel = Path(os.path.relpath(own, out)).as_posix()
                exp.figure_notes = [f"Not drawn in this report (--no-figures): see the experiment's own report, [{rel}]({rel})."]
            else:
                exp.figure_notes = [f"Not drawn (--no-figures); `kacs report {exp.path.as_posix()}` draws them."]

    md_parts = [f"# Report: {results_dir.as_posix()}", ""]
    tex_parts = [
        "% Tables of `kacs report`. Needs \\usepackage{booktabs}.",
        f"% Source: {tex_escape(results_dir.as_posix())}",
        "",
    ]
    skipped_lines = [f"{p.as_posix()}: no {results.RUNS_FILE} at any depth" for p in skipped]
    if len(exps) > 1 or skipped_lines:
        md_parts.append(index_markdown(exps, skipped_lines))
    console = []
    for exp in exps:
        md, tex, con = _experiment_documents(exp, out)
        md_parts.append(md)
        tex_parts.append(tex)
        console.append(con)
        if "csv" in fmts:
            files += _experiment_csvs(exp, out)
    if paper and not any(e.paper is not None for e in exps):
        note = ("Paper comparison: none here; the published table covers the main experiment only "
                "(f1-f4, ASN, CCPP, CS, EEC under the main protocol).")
        md_parts.append(note + "\n")
        console.append(note)
    if "md" in fmts:
        path = out / "report.md"
        atomic_write_text(path, "\n".join(md_parts).rstrip() + "\n")
        files.append(path)
    if "tex" in fmts:
        path = out / "report.tex"
        atomic_write_text(path, "\n".join(tex_parts).rstrip() + "\n")
        files.append(path)
    missing = [f"{e.name}: {m}" for e in exps for m in e.missing]
    return ReportSummary(
        results_dir=results_dir,
        out_dir=out,
        experiments=exps,
        files=files,
        missing=missing,
        console_markdown="\n\n".join(console),
        skipped=skipped_lines,
    )


def _dedupe_names(exps: list[ExperimentReport], results_dir: Path) -> None:
    # Two directories may carry the same experiment name; file names must not collide.
    # Found at any depth, they may also share the folder name (results/main and
    # results/paper/main): the path below RESULTS_DIR tells them apart.
    seen: Counter = Counter(e.name for e in exps)
    for e in exps:
        if seen[e.name] > 1:
            try:
                where = e.path.relative_to(results_dir).as_posix()
            except ValueError:
                where = e.path.as_posix()
            e.name = f"{e.name}-{slug(where.replace('/', '-'))}"


def _experiment_csvs(exp: ExperimentReport, out: Path) -> list[Path]:
    stem = slug(exp.name)
    written = []
    frame = exp.cell_stats.copy()
    frame.insert(0, "experiment", exp.name)
    frame.insert(1, "protocol", exp.protocol)
    for path, data in ((out / f"{stem}_summary.csv", frame), (out / f"{stem}_across.csv", exp.across)):
        write_csv(path, data)
        written.append(path)
    for group in exp.scaling:
        name = group.benchmark + ("" if group.variant.lower() in PLAIN_VARIANTS else f"-{group.variant}")
        path = out / f"{stem}_scaling-{slug(name)}.csv"
        write_csv(path, scaling_csv(exp, group))
        written.append(path)
    # The tables a campaign has only when its runs call for them (None: not this campaign).
    pareto = exp.pareto is not None and not exp.pareto.points.empty
    sections = (("paper", exp.paper if exp.paper is not None and not exp.paper.empty else None),
                ("suprb", suprb.suprb_frame(exp) if exp.cells and suprb.applies(exp) else None),
                ("refinement", exp.refinement), ("compaction", exp.compaction), ("capacity", exp.capacity),
                ("variants", exp.variants), ("pairwise", exp.pairwise), ("pareto", exp.pareto.points if pareto else None),
                ("missing-inputs", missing_inputs.frame(exp.missing_inputs) if exp.missing_inputs else None),
                ("pareto-summary", exp.pareto.summary if pareto else None))
    for suffix, data in sections:
        path = out / f"{stem}_{suffix}.csv"
        if data is not None:
            write_csv(path, data)
            written.append(path)
        else:
            # A table of an earlier render that this one has not must not stay behind looking
            # current (as figures.experiment_figures does for figures).
            path.unlink(missing_ok=True)
    written += kmethods.write_csvs(exp, out)
    # last: the documents' quotes are made of the tables above as written
    return written + quoted.write(exp, out)


def _experiment_documents(exp: ExperimentReport, out: Path) -> tuple[str, str, str]:
    """(Markdown section, LaTeX section, console text) of one experiment."""
    runs_word = (f"{exp.expected_runs} run{'s' if exp.expected_runs != 1 else ''} per cell planned"
                 if exp.expected_runs else "runs per cell unknown")
    sources = "".join(f"; {s}" for s in exp.sources)
    head = f"## {exp.name}\n\nProtocol {exp.protocol} ({runs_word}); source `{exp.path.as_posix()}`{sources}.\n"
    md = [head]
    tex = [rf"% ---- experiment {tex_escape(exp.name)} ----"]
    console = [f"## {exp.name} ({exp.protocol} protocol)"]
    if exp.missing:
        lines = "\n".join(f"- {m}" for m in exp.missing)
        md.append(f"**Incomplete campaign** — what is missing:\n\n{lines}\n")
    for note in exp.notes:
        md.append(f"Note: {note}\n")
    if exp.paper_warning and exp.paper is not None:
        md.append(f"**{exp.paper_warning}**\n")
        tex.append(f"% {exp.paper_warning}")
        console.append(exp.paper_warning)
    if exp.cells:
        ran = pair_ran(exp)
        tables = [summary_table(exp)] if ran else []
        tables += [scaling_table(exp, g) for g in exp.scaling]
        if suprb.applies(exp):
            tables.append(suprb.suprb_table(exp))
        if exp.paper is not None and not exp.paper.empty:
            tables += [paper_table(exp), published_across_table(exp)]
        if ran:
            tables.append(detailed_table(exp))
        if exp.others is not None and not exp.others.empty:
            tables.append(other_methods_table(exp))
        tables += kmethods.tables(exp)
        if exp.refinement is not None:
            tables.append(refinement.table(exp, exp.refinement))
        if exp.compaction is not None:
            tables.append(compaction.table(exp, exp.compaction))
        if exp.capacity is not None:
            tables.append(capacity.table(exp, exp.capacity))
        if exp.variants is not None:
            tables += variants.tables(exp, exp.variants)
        tables += pareto.tables(exp)
        tables += missing_inputs.tables(exp, exp.missing_inputs)
        for i, t in enumerate(tables):
            rendered = render_markdown(t)
            fidelity = ""
            if exp.fidelity and t.label.endswith("-paper"):
                fidelity = f"**{exp.fidelity}**\n\n"
                tex.append(f"% {exp.fidelity}")
                console.append(exp.fidelity)
            md.append(f"### {t.title}\n\n{fidelity}{md_prose(t.caption)}\n\n{rendered}\n")
            tex.append(render_latex(t))
            if i == 0:
                exp.summary_markdown = rendered
                console.append(rendered)
            elif (t.title.startswith(f"{exp.name}: scaling")
                  or t.label.endswith(("-suprb", "-refinement", "-compaction", "-capacity", "-variants",
                                     "-pareto-summary", "-missing-summary"))
                  or kmethods.on_console(exp, t)):
                console.append(f"{t.title}\n\n{rendered}")
    if exp.figures or exp.figure_notes:
        md.append("### Figures\n")
        for path in exp.figures:
            rel = os.path.relpath(path, out)
            md.append(f"![{path.stem}]({Path(rel).as_posix()})\n")
        for note in exp.figure_notes:
            md.append(f"- {md_prose(note)}")
        if exp.figure_notes:
            md.append("")
    return "\n".join(md), "\n\n".join(tex) + "\n", "\n\n".join(console)
