"""Structural fidelity: how close a fitted regressor's per-input effects are to those of a
known target function (docs/explain.md, section "Structural fidelity").

Model-agnostic: the model is anything with `predict(X)` (or a plain callable X -> y), the
truth a callable X -> y in the same units; neither is inspected. On background rows B
(m rows, the data's distribution) and a grid of G values per input:

- the effect of input p at grid value g is the centred partial dependence
  e_p(g) = mean_r f(B_r with x_p := g) - mean_k mean_r f(B_r with x_p := g_k);
- the grid of input p is the quantiles of B's column p at the probabilities (k + 1/2) / G,
  k = 0 .. G-1, so each grid value stands for an equal share of the input's distribution
  and the mean over the grid is the mean over that distribution (midpoint rule);
- fidelity of input p is R^2 = 1 - sum_k (t_k - l_k)^2 / sum_k t_k^2 of the true effect t
  explained by the learned one l (both centred); the model's fidelity is the mean over the
  inputs and its worst input the minimum. An input whose true effect is constant on the grid
  has no R^2 (NaN) and is left out of both.

For y = sum_p g_p(x_p) the true effect is g_p(g) - mean_k g_p(g_k) exactly, whatever B is:
the other terms are averaged to a constant that the centring removes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from kacs_cli import atomic
from kacs_cli.errors import UserError

__all__ = ["Fidelity", "FIDELITY_COLUMNS", "GRID_POINTS", "BACKGROUND_ROWS", "comparison_figure",
           "effect_grid", "partial_dependence", "structural_fidelity"]

# 100 grid values resolve the fastest true term of the benchmarks (f1's cosine: 10.24
# periods over an input's range) with about 10 points per period.
GRID_POINTS = 100
# Background rows beyond this many are subsampled (seed 0): the expectation's sampling error
# then stays well under the grid's resolution while a model at n = 10 makes
# n * GRID_POINTS * 500 = 500,000 predictions.
BACKGROUND_ROWS = 500

# A true effect within this of 0 on the whole grid (on the [-1, 1] target scale) is constant.
FLAT = 1e-12

FIDELITY_COLUMNS = {
    "input": "the input's label (x1, x2, ...)",
    "r2": "R^2 of the true centred effect explained by the learned one over the grid (NaN: "
          "the true effect is constant)",
    "true_sd": "standard deviation over the grid of the true effect, on the [-1, 1] target scale",
    "learned_sd": "the same of the learned effect",
    "rmse": "root mean square difference of the two effects over the grid, on the [-1, 1] "
            "target scale",
}


def _predictor(model) -> Callable[[np.ndarray], np.ndarray]:
    if hasattr(model, "predict"):
        return model.predict
    if callable(model):
        return model
    raise UserError(f"fidelity needs a fitted regressor with predict(X) or a callable, got {type(model).__name__}")


def _background(X, rows: int) -> np.ndarray:
    B = np.asarray(X, dtype=np.float64)
    if B.ndim != 2 or B.shape[0] < 2 or B.shape[1] < 1:
        raise UserError(f"fidelity needs background rows as a matrix of at least 2 rows and 1 input, "
                        f"got an array of shape {B.shape}")
    if not np.all(np.isfinite(B)):
        raise UserError("fidelity's background rows contain NaN or infinite values; pass finite inputs")
    if B.shape[0] > rows:
        keep = np.sort(np.random.default_rng(0).choice(B.shape[0], size=rows, replace=False))
        B = B[keep]
    return B


def effect_grid(B: np.ndarray, points: int = GRID_POINTS) -> np.ndarray:
    """(points, n): column p holds the quantiles of B[:, p] at the probabilities (k + 1/2) / points."""
    if points < 2:
        raise UserError(f"the fidelity grid needs at least 2 points, got {points}")
    probs = (np.arange(points) + 0.5) / points
    return np.quantile(np.asarray(B, dtype=np.float64), probs, axis=0)


def partial_dependence(predict: Callable[[np.ndarray], np.ndarray], B: np.ndarray,
                       grid: np.ndarray) -> np.ndarray:
    """(G, n): the centred partial dependence of `predict` on each input at its grid values,
    averaged over the rows of B. One call of `predict` per input, on G * m rows."""
    G, n = grid.shape
    m = B.shape[0]
    out = np.empty((G, n))
    for p in range(n):
        stacked = np.tile(B, (G, 1))
        stacked[:, p] = np.repeat(grid[:, p], m)
        values = np.asarray(predict(stacked), dtype=np.float64).reshape(G, m)
        out[:, p] = values.mean(axis=1)
    return out - out.mean(axis=0)


def _r2(true: np.ndarray, learned: np.ndarray) -> np.ndarray:
    total = np.sum(true**2, axis=0)
    resid = np.sum((true - learned) ** 2, axis=0)
    # The effects are on the [-1, 1] target scale: below FLAT everywhere is rounding, not an effect.
    flat = np.max(np.abs(true), axis=0) <= FLAT
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(flat, np.nan, 1.0 - resid / np.where(flat, 1.0, total))


@dataclass
class Fidelity:
    """What `structural_fidelity` measured. grid, true, learned: (G, n), the effects centred
    and on the [-1, 1] target scale of y_range; r2: (n,)."""

    labels: list[str]
    grid: np.ndarray
    true: np.ndarray
    learned: np.ndarray
    r2: np.ndarray
    y_range: tuple[float, float]
    rows: int

    @property
    def mean(self) -> float:
        """Mean R^2 over the inputs that have a true effect (NaN if none has)."""
        ok = ~np.isnan(self.r2)
        return float(np.mean(self.r2[ok])) if ok.any() else float("nan")

    @property
    def worst(self) -> float:
        ok = ~np.isnan(self.r2)
        return float(np.min(self.r2[ok])) if ok.any() else float("nan")

    @property
    def worst_input(self) -> str | None:
        ok = ~np.isnan(self.r2)
        return self.labels[int(np.nanargmin(self.r2))] if ok.any() else None

    def table(self) -> pd.DataFrame:
        """One row per input, the columns of FIDELITY_COLUMNS."""
        return pd.DataFrame({
            "input": self.labels,
            "r2": self.r2,
            "true_sd": self.true.std(axis=0),
            "learned_sd": self.learned.std(axis=0),
            "rmse": np.sqrt(np.mean((self.true - self.learned) ** 2, axis=0)),
        })

    def summary(self) -> str:
        return (f"structural fidelity over {len(self.labels)} inputs ({self.grid.shape[0]} grid values, "
                f"{self.rows} background rows): mean R^2 {self.mean:.3f}, worst {self.worst:.3f} "
                f"({self.worst_input})")

    def figure(self, columns: int | None = None, dpi: int = 100):
        """Small multiples, one panel per input: the true effect (black) and the learned one
        (orange) against the input, one shared y axis; title: the input and its R^2."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        n = len(self.labels)
        cols = columns or min(n, 5)
        rows = -(-n // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.2 * rows), sharey=True,
                                 squeeze=False, dpi=dpi)
        for p in range(rows * cols):
            ax = axes[p // cols][p % cols]
            if p >= n:
                ax.set_visible(False)
                continue
            ax.plot(self.grid[:, p], self.true[:, p], color="black", lw=1.2, label="true")
            ax.plot(self.grid[:, p], self.learned[:, p], color="tab:orange", lw=1.2, label="learned")
            r2 = self.r2[p]
            ax.set_title(f"{self.labels[p]}: R² {r2:.3f}" if np.isfinite(r2) else f"{self.labels[p]}: no effect",
                         fontsize=9)
            ax.tick_params(labelsize=7)
            if p % cols == 0:
                ax.set_ylabel("centred effect", fontsize=8)
        axes[0][0].legend(fontsize=7, frameon=False)
        fig.tight_layout()
        return fig

    def write(self, folder, stem: str = "fidelity") -> list[Path]:
        """STEM.csv (the table, numbers in full) and STEM.png (the figure) into folder."""
        import matplotlib.pyplot as plt

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        csv_path, png_path = folder / f"{stem}.csv", folder / f"{stem}.png"
        atomic.write_text(csv_path, self.table().to_csv(index=False, float_format="%.17g"))
        fig = self.figure()
        try:
            with atomic.replacing(png_path) as tmp:
                fig.savefig(tmp, format="png", metadata={"Software": None})
        finally:
            plt.close(fig)
        return [csv_path, png_path]


def structural_fidelity(model, truth: Callable[[np.ndarray], np.ndarray], X, *,
                        y_range: tuple[float, float] | None = None, points: int = GRID_POINTS,
                        rows: int = BACKGROUND_ROWS, labels: list[str] | None = None) -> Fidelity:
    """Fidelity of `model` (a fitted regressor with predict, or a callable) to `truth` (a
    callable, same input and output units) on the background rows X (the data's inputs).

    y_range: the target's (min, max) whose [-1, 1] image the effects are reported on (the
    scale the learners train on); default: the truth's range over the background rows. It
    changes the effects' sizes, never R^2.
    """
    predict = _predictor(model)
    if not callable(truth):
        raise UserError(f"fidelity needs the true function as a callable X -> y, got {type(truth).__name__}")
    B = _background(X, int(rows))
    grid = effect_grid(B, int(points))
    if y_range is None:
        yt = np.asarray(truth(B), dtype=np.float64)
        y_range = (float(yt.min()), float(yt.max()))
    lo, hi = float(y_range[0]), float(y_range[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise UserError(f"fidelity's y_range must be two finite numbers, min < max, got {y_range}")
    half = 0.5 * (hi - lo)
    true = partial_dependence(truth, B, grid) / half
    learned = partial_dependence(predict, B, grid) / half
    n = B.shape[1]
    names = list(labels) if labels is not None else [f"x{p + 1}" for p in range(n)]
    if len(names) != n:
        raise UserError(f"fidelity got {len(names)} labels for {n} inputs; give one label per input")
    return Fidelity(names, grid, true, learned, _r2(true, learned), (lo, hi), B.shape[0])


def comparison_figure(models: dict[str, Fidelity], inputs: list[str] | None = None, dpi: int = 100):
    """Several models' fidelity to one function side by side: one row of panels per model (its
    name on the left), one column per input of `inputs` (default: all of the first model's),
    the true effect (black) and the model's learned one (orange) in each, one shared y axis,
    each panel titled with the input and its R^2. The models must share the inputs' labels."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if not models:
        raise UserError("comparison_figure needs at least one model's fidelity")
    first = next(iter(models.values()))
    inputs = list(first.labels) if inputs is None else list(inputs)
    for name, fid in models.items():
        missing = [label for label in inputs if label not in fid.labels]
        if missing:
            raise UserError(f"model {name!r} has no input {missing[0]!r}; its inputs are {', '.join(fid.labels)}")
    rows, cols = len(models), len(inputs)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.2 * rows), sharey=True, squeeze=False, dpi=dpi)
    for i, (name, fid) in enumerate(models.items()):
        for j, label in enumerate(inputs):
            p = fid.labels.index(label)
            ax = axes[i][j]
            ax.plot(fid.grid[:, p], fid.true[:, p], color="black", lw=1.2, label="true")
            ax.plot(fid.grid[:, p], fid.learned[:, p], color="tab:orange", lw=1.2, label="learned")
            r2 = fid.r2[p]
            ax.set_title(f"{label}: R² {r2:.3f}" if np.isfinite(r2) else f"{label}: no effect", fontsize=9)
            ax.tick_params(labelsize=7)
            if j == 0:
                ax.set_ylabel(f"{name}\ncentred effect", fontsize=8)
    axes[0][0].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
