"""PNG figures of a report: learning curves with 95 % bands, covering rates, scaling plots,
error against rules (compaction) and against parameters (the readable front).

One multi-panel PNG per experiment and figure kind, so the figure count stays bounded
however many cells an experiment has. Uses matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from kacs_cli import atomic
from kacs_cli.engine import Hyperparameters, registry
from kacs_cli.engine.registry import BASELINE, DEFAULT_PAIR, PROPOSED
from kacs_cli.experiments.campaign import curvestore, results
from kacs_cli.experiments.campaign.methods import guideline_budget
from kacs_cli.experiments.campaign.metrics import metric_label
from kacs_cli.reporting import kmethods, pareto, stats
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.loading import cell_values, runs_for_scaling
from kacs_cli.reporting.model import BENCHMARK_ORDER, ExperimentReport, ScalingGroup

# The report's pair (engine/registry.py): the baseline in blue, the proposal in red.
COLORS = {BASELINE: "tab:blue", PROPOSED: "tab:red"}
LABELS = {m: registry.label(m) for m in DEFAULT_PAIR}
# Methods beyond the pair (other learners, labelled variants such as kacs-adaptive), in the
# order they first appear; the pair keeps its colours whatever else is drawn.
OTHER_COLORS = ("tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")


def _method_styles(present) -> list[tuple[str, str, str]]:
    """(method, label, colour) of every method in `present`: the pair first, then the others."""
    present = list(dict.fromkeys(present))
    others = [m for m in present if m not in DEFAULT_PAIR]
    styles = [(m, LABELS[m], COLORS[m]) for m in DEFAULT_PAIR if m in present]
    return styles + [(m, m, OTHER_COLORS[i % len(OTHER_COLORS)]) for i, m in enumerate(others)]
# A learner with inner and outer cover rates (KACS) draws them in these colours and styles.
PART_STYLES = {"cover_rate_inner": ("tab:orange", "inner", "--"),
               "cover_rate_outer": ("tab:purple", "outer", ":")}
PANEL_W, PANEL_H = 3.6, 2.7
MAX_COLS = 4
DPI = 110


def _pyplot():
    # matplotlib takes about half a second to import: only a report that draws figures pays
    # for it (the matplotlib imports inside the functions below are there for the same reason).
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    """savefig to a temporary file beside the target, then os.replace (never a half PNG)."""
    atomic.make_dirs(path.parent)
    try:
        with atomic.replacing(path, suffix=".png.tmp") as tmp:
            # No "Software" entry (matplotlib's version): the same data give the same bytes on
            # any install, so re-rendering a committed report leaves the tree clean.
            fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    finally:
        _pyplot().close(fig)
    return path


def _grid(n_panels: int):
    plt = _pyplot()
    ncols = min(MAX_COLS, max(1, n_panels))
    nrows = math.ceil(n_panels / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(PANEL_W * ncols, PANEL_H * nrows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def _stack(frames: Sequence[pd.DataFrame], column: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(iterations, runs x iterations matrix) of one column; runs lacking a point give NaN."""
    pieces = []
    for i, f in enumerate(frames):
        if column not in f.columns:
            continue
        s = pd.to_numeric(f[column], errors="coerce")
        s.index = pd.to_numeric(f["iteration"], errors="coerce")
        pieces.append(s[~s.index.duplicated(keep="last")].rename(i))
    if not pieces:
        return None
    table = pd.concat(pieces, axis=1).sort_index()
    if table.notna().sum().sum() == 0:
        return None
    return table.index.to_numpy(dtype=float), table.to_numpy(dtype=float).T


# Up to this many evaluation points a curve also gets markers: a line through one or two
# points is invisible or easily missed.
MARKER_POINTS = 12


def _band_plot(ax, frames: Sequence[pd.DataFrame], column: str, color: str, label: str, style: str = "-") -> np.ndarray | None:
    """Mean and 95 % band of `column` over runs; returns the iterations drawn (None: no data)."""
    stacked = _stack(frames, column)
    if stacked is None:
        return None
    it, values = stacked
    band = stats.confidence_band(values)
    marker = "o" if len(it) <= MARKER_POINTS else None
    ax.plot(it, band.mean, style, color=color, lw=1.4, marker=marker, ms=3.5,
            label=f"{label} (n={int(band.count.max())})")
    # Every curve drawn is of a non-negative quantity (errors, counts, rates): a t-interval
    # reaching below zero says nothing, and on a log-like axis it would smear the band.
    lower = np.maximum(band.lower, 0.0)
    ax.fill_between(it, lower, band.upper, color=color, alpha=0.2, lw=0)
    if len(it) == 1:  # fill_between draws nothing for one point: show the interval as a bar
        ax.errorbar(it, band.mean, yerr=[band.mean - lower, band.upper - band.mean], fmt="none",
                    ecolor=color, alpha=0.5, capsize=3)
    return it


def _finish(fig, axes, title: str) -> None:
    """Title and one shared legend above the panels, in a band of fixed height (inches)."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            base = lab.split(" (n=")[0]  # per-panel run counts differ; the legend shows the series
            if base not in labels:
                handles.append(h)
                labels.append(base)
    height = fig.get_size_inches()[1]
    fig.suptitle(title, y=1.0 - 0.08 / height, va="top", fontsize=11)
    if handles:
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 4),
                   bbox_to_anchor=(0.5, 1.0 - 0.36 / height), frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1.0 - 0.6 / height))


def _iteration_axis(ax, iterations: Sequence[np.ndarray]) -> None:
    """x from 0 to the last evaluation; few evaluation points are the ticks themselves (a lone
    point otherwise gets an axis a few iterations wide whose labels run together)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    points = np.unique(np.concatenate([np.asarray(i, dtype=float) for i in iterations])) if iterations else np.array([])
    if points.size:
        ax.set_xlim(0, points.max() * 1.06)
        if points.size <= 5:
            ax.set_xticks([0.0, *points.tolist()] if points.min() > 0 else points.tolist())
        else:
            ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / 1000:g}k" if v else "0"))


def _has(curves: dict[str, dict[str, list[pd.DataFrame]]], cell: str, column: str) -> bool:
    return any(column in f.columns and f[column].notna().any() for fs in curves[cell].values() for f in fs)


def curve_panels(exp: ExperimentReport, curve_cells: Iterable[str]) -> list[tuple[str, str]]:
    """(curve file cell, panel title) in table order; the runner names curve files by the
    cell label that runs.csv also holds, so known cells get their table label."""
    names = list(curve_cells)
    ids = [c.cell_id for c in exp.cells]
    unique = len(set(ids)) == len(ids)
    known = [(c.cell_id, c.label) for c in exp.cells if unique and c.cell_id in names]
    seen = {k for k, _ in known}
    return known + [(n, n) for n in order_curve_cells(names) if n not in seen]


def order_curve_cells(names: Iterable[str]) -> list[str]:
    """Article's benchmark order first (by the name's leading token), then natural order."""

    def natural(text: str) -> list:
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text.lower())]

    def key(name: str):
        head = re.split(r"[-_ .]", name.lower(), maxsplit=1)[0]
        idx = BENCHMARK_ORDER.index(head) if head in BENCHMARK_ORDER else len(BENCHMARK_ORDER)
        return (idx, natural(name))

    return sorted(names, key=key)


def curve_figure(
    curves: dict[str, dict[str, list[pd.DataFrame]]],
    panels: Sequence[tuple[str, str]],
    column: str,
    ylabel: str,
    title: str,
    path: Path,
    log_y: bool = False,
) -> Path | None:
    """One panel per cell (panels: curve cell, title): mean and 95 % t-band over runs of `column`."""
    panels = [(c, t) for c, t in panels if _has(curves, c, column)]
    if not panels:
        return None
    fig, axes = _grid(len(panels))
    for ax, (cell, name) in zip(axes, panels):
        drawn = []
        for method in DEFAULT_PAIR:
            if method in curves[cell]:
                drawn.append(_band_plot(ax, curves[cell][method], column, COLORS[method], LABELS[method]))
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("iteration", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        if log_y:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        _iteration_axis(ax, [d for d in drawn if d is not None])
    _finish(fig, axes, title)
    return _save(fig, path)


COVER_RATE_LINEAR_BELOW = 1e-6


def covering_figure(
    curves: dict[str, dict[str, list[pd.DataFrame]]],
    panels: Sequence[tuple[str, str]],
    title: str,
    path: Path,
) -> Path | None:
    """Covering rates per evaluation interval: XCSF's, KACS's overall, inner and outer."""
    series = []
    for method in DEFAULT_PAIR:
        # Which rates the learner has (engine/registry.py, Learner.cover_slots): the same at
        # every n and setting, so n = 1 at the defaults asks.
        _, inner, outer = registry.get(method).cover_slots(1, Hyperparameters())
        parts = [c for c, slots in (("cover_rate_inner", inner), ("cover_rate_outer", outer))
                 if slots is not None]
        overall = f"{LABELS[method]} overall" if parts else LABELS[method]
        series.append((method, "cover_rate", COLORS[method], overall, "-"))
        for column in parts:
            color, part, style = PART_STYLES[column]
            series.append((method, column, color, f"{LABELS[method]} {part}", style))
    panels = [(c, t) for c, t in panels if _has(curves, c, "cover_rate")]
    if not panels:
        return None
    fig, axes = _grid(len(panels))
    for ax, (cell, name) in zip(axes, panels):
        drawn = []
        for method, column, color, label, style in series:
            if method in curves[cell]:
                drawn.append(_band_plot(ax, curves[cell][method], column, color, label, style))
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("iteration", fontsize=8)
        ax.set_ylabel("covering rate", fontsize=8)
        # The first interval covers orders of magnitude more than the later ones: only a log
        # axis shows the later dynamics. Intervals without a single cover (rate 0, common once
        # a population is stable) must stay on the plot rather than break the line, hence a
        # symmetric log axis, linear below 1e-6 (rare single covers in a few of the runs).
        if any(d is not None and len(d) > 1 for d in drawn):
            ax.set_yscale("symlog", linthresh=COVER_RATE_LINEAR_BELOW, linscale=0.5)
            ax.set_ylim(bottom=0.0)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        _iteration_axis(ax, [d for d in drawn if d is not None])
    _finish(fig, axes, title)
    return _save(fig, path)


def scaling_figure(exp: ExperimentReport, groups: Sequence[ScalingGroup], path: Path) -> Path | None:
    """Test error, rules and params against n or N_S: mean and 95 % t-interval over runs.

    Cells at a budget other than the group's usual N (the N = 24 n (2n + 1) guideline runs)
    form their own dashed series, so they are not joined with the fixed-budget line.
    """
    if not groups:
        return None
    runs = runs_for_scaling(exp)
    test_metric = next(m for m in exp.metrics if m.startswith("test_"))
    metrics = (test_metric, "rules", "params")
    plt = _pyplot()
    fig, axes = plt.subplots(len(groups), 3, figsize=(PANEL_W * 3, PANEL_H * len(groups)), squeeze=False)
    for row, group in zip(axes, groups):
        var = group.variables[0]
        odd = [c for c in group.cells if c.N is not None and c.N != group.modal_N]
        others = {c.N for c in odd}
        if odd and all(c.n is not None and c.N == guideline_budget(c.n) for c in odd):
            other_N = "guideline N = 24n(2n+1)"  # docs/algorithm.md section 10's budget guideline
        else:
            other_N = ("larger N" if all(b > group.modal_N for b in others)
                       else "smaller N" if all(b < group.modal_N for b in others) else "other N") if others else ""
        xlabel = "n" if var == "n" else "sample count N_S"
        name = group.benchmark if not group.variant or group.variant.lower() in ("none", "base") else f"{group.benchmark} {group.variant}"
        for ax, metric in zip(row, metrics):
            for method, method_label, color in _method_styles(runs["method"]):
                for usual in (True, False):
                    cells = [c for c in group.cells if (c.N == group.modal_N) == usual]
                    xs, means, halves = [], [], []
                    for c in cells:
                        v = cell_values(runs, c, method, metric)
                        if v.size == 0:
                            continue
                        band = stats.confidence_band(v.reshape(-1, 1))
                        xs.append(float(getattr(c, var)))
                        means.append(float(band.mean[0]))
                        halves.append(float(band.upper[0] - band.mean[0]))
                    if not xs:
                        continue
                    # A method beyond the pair may carry its own budget (kacs-guideline), so the
                    # cell's N would mislabel it: its name says what it is.
                    if usual:
                        label = method_label + (f" (N={group.modal_N})" if method in DEFAULT_PAIR else "")
                    else:
                        label = f"{method_label} ({other_N})"
                    ax.errorbar(xs, means, yerr=halves, fmt="o-" if usual else "s--", ms=3.5 if usual else 5, lw=1.2,
                                capsize=2, color=color, alpha=1.0 if usual else 0.7, label=label)
            if var == "samples":
                ax.set_xscale("log", base=2)
                ticks = sorted({float(getattr(c, var)) for c in group.cells})
                ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
                ax.minorticks_off()
            else:
                from matplotlib.ticker import MaxNLocator

                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(metric_label(metric), fontsize=8)
            ax.set_title(f"{name}: {metric_label(metric)}", fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    flat = list(axes.ravel())
    _finish(fig, flat, f"{exp.name}: scaling (mean and 95 % CI over runs)")
    return _save(fig, path)


def compaction_figure(exp: ExperimentReport, path: Path) -> Path | None:
    """Test error against macro-rules, both on log axes, one panel per cell: each trained model
    (a square) and the compacted models made from it (circles, joined by rules), one colour per
    trained model, from reporting/compaction.py's frame. None when no run was compacted."""
    from matplotlib.ticker import NullFormatter

    frame = exp.compaction
    if frame is None or frame.empty:
        return None
    error = exp.error
    cells = list(dict.fromkeys(frame["cell"]))
    fig, axes = _grid(len(cells))
    for ax, cell in zip(axes, cells):
        here = frame[frame["cell"] == cell]
        # The compacted methods of one trained model (KACS, XCSF) share its rules and error.
        trained = sorted(here.groupby(["rules", "error_mean"]), key=lambda kv: kv[1]["method"].min())
        for k, (_, group) in enumerate(trained):
            color = f"C{k}"  # ordered by method name: KACS's variants blue, XCSF's orange
            group = group.sort_values("compacted_rules")
            ax.plot(group["compacted_rules"], group["compacted_mean"], "o-", color=color, ms=3.5, lw=1.0,
                    label="compacted")
            ax.plot([group["rules"].iloc[0]], [group["error_mean"].iloc[0]], "s", color=color, ms=5,
                    label="trained (uncompacted)")
            for rec in group.to_dict("records"):
                ax.annotate(rec["method"], (rec["compacted_rules"], rec["compacted_mean"]), fontsize=6,
                            xytext=(3, 3), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # 2x10^2, 3x10^2, ... overlap at this width
        ax.set_xlabel("macro-rules (log scale)", fontsize=8)
        ax.set_ylabel(f"test {error.upper()} (log scale)", fontsize=8)
        ax.set_title(cell, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    _finish(fig, axes, f"{exp.name}: test {error.upper()} against rules (means over runs)")
    return _save(fig, path)


def pareto_figure(exp: ExperimentReport, path: Path) -> Path | None:
    """Test error against parameters, both on log axes, one panel per cell, from
    reporting/pareto.py's points: readable methods as filled circles (red on the front, blue off
    it), the front as a staircase through its points, references as grey open squares; every
    point named. None when the experiment has no such points."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    points = pareto.figure_points(exp)
    if points is None:
        return None
    word = exp.error.upper()
    cells = list(dict.fromkeys(points["cell"]))
    fig, axes = _grid(len(cells))
    for ax, cell in zip(axes, cells):
        here = points[points["cell"] == cell]
        readable = here[here["kind"] == pareto.READABLE]
        on = readable[readable["on_front"] == True]  # noqa: E712 - None for references
        off = readable[readable["on_front"] == False]  # noqa: E712
        references = here[here["kind"] == pareto.REFERENCE]
        xs, ys = pareto.front_line(here)
        if len(xs):
            ax.step(xs, ys, where="post", color="tab:red", lw=1.0, ls="--", alpha=0.7, label="readable front")
        ax.plot(on["params"], on["test_error"], "o", color="tab:red", ms=5, label="readable, on the front")
        ax.plot(off["params"], off["test_error"], "o", color="tab:blue", ms=4, alpha=0.8, label="readable, dominated")
        ax.plot(references["params"], references["test_error"], "s", mfc="none", color="0.4", ms=5, label="reference")
        for rec in here.to_dict("records"):
            ax.annotate(rec["method"], (rec["params"], rec["test_error"]), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        # The errors of one cell often span less than a decade: label 1, 1.5, 2, 3, 5 and 7 of each.
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("parameters (log scale)", fontsize=8)
        ax.set_ylabel(f"test {word} (log scale)", fontsize=8)
        runs = int(here["runs"].iloc[0])
        ax.set_title(f"{cell} ({runs} paired run{'s' if runs != 1 else ''})", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    _finish(fig, axes, f"{exp.name}: test {word} against parameters (means over paired runs)")
    return _save(fig, path)


def experiment_figures(exp: ExperimentReport, out_dir: Path) -> tuple[list[Path], list[str]]:
    """All figures of one experiment, and for each kind that cannot be drawn, why not."""
    stem = slug(exp.name)
    every = curvestore.collect(exp.path)
    curves = curvestore.group(every, exp.finished)
    stray = len(every) - sum(len(r) for m in curves.values() for r in m.values())
    panels = curve_panels(exp, curves)
    error = exp.error
    word = error.upper()
    written: list[Path] = []
    notes: list[str] = []
    kinds = {
        "train_error": (f"train_{error}", f"train {word}", f"{exp.name}: train {word} (mean and 95 % CI over runs)"),
        "test_error": (f"test_{error}", f"test {word}", f"{exp.name}: test {word} (mean and 95 % CI over runs)"),
        "params": ("params", "parameters k", f"{exp.name}: parameter count (mean and 95 % CI)"),
    }
    if stray:
        # Curves of runs that runs.csv does not hold (a campaign stopped between writing a run's
        # curve and its record, runs.csv cut or emptied by hand): the tables leave those runs
        # out, so the figures do too.
        notes.append(f"{stray} run curve(s) in {exp.path.as_posix()} left out: their runs are not in "
                     f"{results.RUNS_FILE} (`kacs run` with the same config redoes or records them).")
    if not curves:
        notes.append(
            f"Learning and covering-rate curves: not drawn, {exp.path.as_posix()} holds no curve data "
            f"(neither {results.CURVE_DIR}/ nor {results.AGGREGATE_FILE}); `kacs run` writes both."
            if not stray else
            f"Learning and covering-rate curves: not drawn, no run of {results.RUNS_FILE} has a curve."
        )
    else:
        for kind, (column, ylabel, title) in kinds.items():
            made = curve_figure(curves, panels, column, ylabel, title, out_dir / f"{stem}_{kind}.png")
            if made is None:
                notes.append(f"{ylabel} curves: not drawn, no run's curve has a {column} value.")
            else:
                written.append(made)
        made = covering_figure(curves, panels, f"{exp.name}: covering rate per evaluation interval (mean and 95 % CI)",
                               out_dir / f"{stem}_covering.png")
        if made is None:
            notes.append("Covering-rate curves: not drawn, no run's curve has a cover_rate value.")
        else:
            written.append(made)
    if exp.scaling:
        made = scaling_figure(exp, exp.scaling, out_dir / f"{stem}_scaling.png")
        if made is not None:
            written.append(made)
    made = compaction_figure(exp, out_dir / f"{stem}_compaction.png")
    if made is not None:
        written.append(made)
    made = pareto_figure(exp, out_dir / f"{stem}_pareto.png")
    if made is not None:
        written.append(made)
    # A figure of an earlier render that this one could not draw must not stay behind
    # looking current.
    for kind in (*kinds, "covering", "scaling", "compaction", "pareto"):
        stale = out_dir / f"{stem}_{kind}.png"
        if stale not in written:
            stale.unlink(missing_ok=True)
    made, why = kmethods.cd_figures(exp, out_dir)  # critical-difference diagrams
    return written + made, notes + why
