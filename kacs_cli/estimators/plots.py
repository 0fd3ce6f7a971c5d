"""The picture of a KACS model: every learned one-dimensional function, one small plot each."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kacs_cli import atomic
from kacs_cli.engine import Model
from kacs_cli.estimators.inspection import kacs_functions

__all__ = ["plot_kacs_functions"]


def _draw_function(axes, c, n, n_q, ylim, label_size):
    """One learned function `c` (kacs_functions) in its small plot: row q, column p or the
    outer column n."""
    q = c["q"]
    col = c["p"] - 1 if c["type"] == "inner" else n
    ax = axes[q - 1, col]
    color = "tab:blue" if c["type"] == "inner" else "tab:orange"
    if c["type"] == "outer" and c.get("observed") is not None:
        ax.axvspan(*c["observed"], color="0.93", lw=0)
    ax.axhline(0.0, color="0.75", lw=0.6, zorder=0)
    ax.plot(c["z"], c["value"], color=color, lw=1.2)
    ax.set_xlim(c["z"][0], c["z"][-1])
    ax.set_ylim(*ylim)
    ax.tick_params(labelsize=label_size - 1, length=2, pad=1)
    ax.text(0.98, 0.95, f"{c['rules']}", transform=ax.transAxes, ha="right", va="top",
            fontsize=label_size - 1, color="0.4")
    if c["type"] == "inner":
        ax.set_xticks([0.0, 0.5, 1.0], ["0", "0.5", "1"])
        if q < n_q:
            ax.set_xticklabels([])
        if col > 0:
            ax.set_yticklabels([])
    else:
        ax.locator_params(axis="x", nbins=3)
        ax.yaxis.tick_right()
    if q == 1:
        title = f"$\\psi_{{q,{c['p']}}}$" if c["type"] == "inner" else "$\\Phi_q$ (outer)"
        ax.set_title(title, fontsize=label_size + 2)
    if col == 0:
        ax.set_ylabel(f"q = {q}", fontsize=label_size + 1)


def plot_kacs_functions(model_or_estimator, path, points: int = 200, dpi: int = 100):
    """Draw every psi_{q,p} and Phi_q of a KACS model as a grid of small plots into `path`.

    Rows are the channels q = 1..m (the article's m = 2n + 1); columns p = 1..n hold the inner
    functions psi_{q,p}
    on the scaled input [0, 1], the last column the outer function Phi_q over its observed
    zhat_q range (grey band) with a small margin. Gaps are input values no rule matches (the
    submodel contributes 0 there). Returns the path written.
    """
    # matplotlib is heavy and needed only to draw: imported here, not with the estimators.
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    curves = kacs_functions(model_or_estimator, points)
    model = model_or_estimator if isinstance(model_or_estimator, Model) else model_or_estimator.model_
    n = model.n
    n_q = model.n_channels
    inner = [c for c in curves if c["type"] == "inner"]
    outer = [c for c in curves if c["type"] == "outer"]

    def limits(cs):
        vals = np.concatenate([c["value"][np.isfinite(c["value"])] for c in cs] + [np.zeros(1)])
        lo, hi = float(vals.min()), float(vals.max())
        pad = max(0.08 * (hi - lo), 0.05)
        return lo - pad, hi + pad

    inner_ylim, outer_ylim = limits(inner), limits(outer)
    # Fixed margins in inches; subplots_adjust instead of tight_layout (slow with 200+ axes).
    cell_w, cell_h = 1.3, 0.9
    narrow = n < 6  # the caption gets one more line on a narrow figure
    left, right, bottom, top = 0.75, 0.55, 0.55, 1.15 if narrow else 0.95
    width = max(left + right + cell_w * (n + 1.25), 6.5)
    height = bottom + top + cell_h * n_q
    fig = plt.figure(figsize=(width, height))
    gs = fig.add_gridspec(n_q, n + 2, width_ratios=[1.0] * n + [0.25, 1.0],
                          left=left / width, right=1 - right / width,
                          bottom=bottom / height, top=1 - top / height, wspace=0.12, hspace=0.22)
    axes = np.empty((n_q, n + 1), dtype=object)
    for q in range(n_q):
        for col in range(n + 1):
            axes[q, col] = fig.add_subplot(gs[q, col if col < n else n + 1])
    label_size = 7 if n > 4 else 8
    for c in curves:
        _draw_function(axes, c, n, n_q, inner_ylim if c["type"] == "inner" else outer_ylim, label_size)
    axes[-1, 0].set_xlabel("$x_p$ (scaled to [0, 1])", fontsize=label_size, loc="left")
    axes[-1, n].set_xlabel("$\\hat z_q$", fontsize=label_size)
    fig.suptitle(
        f"KACS model: n = {n}, {model.n_rules} rules ({model.n_micro} micro), "
        f"{model.iterations_done} iterations\n"
        f"inner $\\psi_{{q,p}}$ (blue) on the scaled inputs, outer $\\Phi_q$ (orange) over "
        f"$\\hat z_q$ (grey: observed range);{chr(10) if narrow else ' '}"
        f"target scale [-1, 1]; corner: number of rules",
        fontsize=label_size + 2, y=1 - 0.12 / height, va="top",
    )
    # Through a temporary file (never a half image), in the format the name asks for.
    try:
        atomic.make_dirs(Path(path).parent)
        with atomic.replacing(path, suffix=f"{Path(path).suffix}.tmp") as tmp:
            fig.savefig(tmp, dpi=dpi, format=Path(path).suffix.lstrip(".").lower() or None)
    finally:
        plt.close(fig)
    return path
