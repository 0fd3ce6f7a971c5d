"""Critical-difference diagram in the style of Demšar (2006, JMLR 7), Fig. 1.

An axis of average ranks from 1 (left, best) to k, the CD interval drawn above it, every
method joined by an elbow line to its label (the better half on the left, the rest on the
right), and thick bars under the axis joining the groups of methods whose average ranks
differ by less than CD (`kstats.cd_groups`). The geometry is computed first (`cd_layout`,
pure) and then drawn (`render`), so tests can check what is drawn without reading pixels.

Uses matplotlib's Agg canvas directly (no pyplot state, no display), and writes PNGs whose
bytes depend on the input only: no 'Software' entry in the PNG metadata, no date.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from kacs_cli import atomic
from kacs_cli.reporting import kstats

DPI = 110
ROW = 0.22  # vertical distance between two label rows, in axis units (y grows downwards)
BAR_GAP = 0.12  # vertical distance between two group bars
BAR_PAD = 0.04  # bars reach this far past the outer methods, in ranks: a bar joining two
# methods of equal rank stays visible
FIRST_BAR = 0.22  # first bar below the axis


@dataclass(frozen=True)
class CDLayout:
    """What a CD diagram shows, in rank units (x) and axis units (y, downwards)."""

    k: int  # the axis runs from rank 1 to rank k
    cd: float
    ranks: tuple[tuple[str, float], ...]  # (method, average rank), best first
    left: tuple[str, ...]  # labelled on the left, top row first
    right: tuple[str, ...]  # labelled on the right, top row first
    groups: tuple[tuple[str, ...], ...]  # kstats.cd_groups
    bars: tuple[tuple[float, float], ...]  # (lowest, highest) average rank of each group

    @property
    def cd_interval(self) -> tuple[float, float]:
        """The CD interval above the axis, starting at rank 1 as in Demšar's figure."""
        return 1.0, 1.0 + self.cd

    def rank_of(self, method: str) -> float:
        return dict(self.ranks)[method]


def cd_layout(avg_ranks: Mapping[str, float], cd: float) -> CDLayout:
    """The geometry of the diagram for these average ranks and critical difference."""
    groups = kstats.cd_groups(avg_ranks, cd)
    ordered = tuple(kstats.by_rank(avg_ranks))
    k = len(ordered)
    half = math.ceil(k / 2)
    rank = dict(ordered)
    return CDLayout(
        k=k,
        cd=float(cd),
        ranks=ordered,
        # best method on the top-left row; the worst on the top-right row: no lines cross
        left=tuple(name for name, _ in ordered[:half]),
        right=tuple(name for name, _ in reversed(ordered[half:])),
        groups=tuple(groups),
        bars=tuple((rank[g[0]], rank[g[-1]]) for g in groups),
    )


def render(layout: CDLayout):
    """A matplotlib Figure of the layout. Artists carry gids: 'axis', 'tick', 'cd',
    'bar' (one per group, in layout order) and 'method:<name>' (the elbow line)."""
    # slow to import: only a report with a k-method section pays for it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    k = max(layout.k, 2)
    rows = max(len(layout.left), len(layout.right))
    first_row = FIRST_BAR + BAR_GAP * max(len(layout.bars), 1) + 0.1
    bottom = first_row + ROW * (rows - 1) + 0.15
    x_right = max(float(k), layout.cd_interval[1])
    span = x_right - 1.0
    label_room = 0.35 * span + 0.4  # ranks of room beside the axis for the labels

    fig = Figure(figsize=(6.4, 1.3 + 0.9 * bottom))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(1.0 - label_room, x_right + label_room)
    ax.set_ylim(bottom + 0.05, -0.75)  # y downwards, the CD interval above the axis

    line = dict(color="black", linewidth=1.0, solid_capstyle="butt")
    ax.plot([1.0, float(k)], [0.0, 0.0], gid="axis", **line)
    for tick in range(1, k + 1):
        ax.plot([tick, tick], [0.0, -0.08], gid="tick", **line)
        ax.text(tick, -0.12, str(tick), ha="center", va="bottom", fontsize=9)
    for half in (0.5 + t for t in range(1, k)):
        ax.plot([half, half], [0.0, -0.04], gid="tick", **line)

    lo, hi = layout.cd_interval
    y_cd = -0.5
    ax.plot([lo, hi], [y_cd, y_cd], gid="cd", **line)
    for end in (lo, hi):
        ax.plot([end, end], [y_cd - 0.04, y_cd + 0.04], gid="cd", **line)
    ax.text((lo + hi) / 2.0, y_cd - 0.06, "CD", ha="center", va="bottom", fontsize=9)

    for g, (a, b) in enumerate(layout.bars):
        y = FIRST_BAR + BAR_GAP * g
        ax.plot([a - BAR_PAD, b + BAR_PAD], [y, y], gid="bar", color="black", linewidth=3.0,
                solid_capstyle="butt")

    for side, names, x_end, align in (
        ("left", layout.left, 1.0 - 0.15 * label_room, "right"),
        ("right", layout.right, x_right + 0.15 * label_room, "left"),
    ):
        for row, name in enumerate(names):
            r = layout.rank_of(name)
            y = first_row + ROW * row
            ax.plot([r, r, x_end], [0.0, y, y], gid=f"method:{name}", **line)
            text = f"{name} ({r:.2f})" if side == "right" else f"({r:.2f}) {name}"
            pad = 0.02 * span if side == "right" else -0.02 * span
            ax.text(x_end + pad, y, text, ha=align, va="center", fontsize=9)
    return fig


def _save_png(fig, path: Path) -> Path:
    """savefig into a temporary file beside the target, then os.replace (never a half PNG).
    metadata Software=None: matplotlib would write its version, so a library upgrade alone
    would change the bytes."""
    atomic.make_dirs(path.parent)
    with atomic.replacing(path, suffix=".png.tmp") as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight",
                    metadata={"Software": None})
    return path


def cd_diagram(avg_ranks: dict, cd: float, path) -> CDLayout:
    """Write the critical-difference diagram of `avg_ranks` (method -> average rank) with
    critical difference `cd` to the PNG `path`; returns the layout that was drawn."""
    layout = cd_layout(avg_ranks, cd)
    if layout.k < 2:
        raise ValueError(f"a CD diagram needs at least 2 methods, got {layout.k}")
    _save_png(render(layout), Path(path))
    return layout
