"""What a fitted KACS model says, for a person: its rules as a table, the share of the
prediction's variance each input and each channel carries, and small-multiple figures
(`KACSRegressor.explain`, `kacs explain`; docs/explain.md defines every number).

The model is y ~ sum_q Phi_q(zhat_q), zhat_q = sum_p psi_{q,p}(x_p) (docs/algorithm.md
sections 2 and 4). Every number here is measured on rows: the given data, or without data
a fixed uniform sample of the model's input space (UNIFORM_ROWS rows, seed 0).

Shares, on the rows r (variances over the rows, population variance, on the model's [-1, 1]
target scale):

- channel q: its term Phi_q(zhat_q). `share` = Var(Phi_q) / sum_q' Var(Phi_q');
  `covariance_share` = Cov(Phi_q, yhat) / Var(yhat), which sums to 1 exactly over q
  (yhat = sum_q Phi_q) and is negative for a channel that cancels others.
- input p: its effect e_p = yhat - yhat^(p), where yhat^(p) is the prediction with every
  inner value psi_{q,p}(x_p) of that input replaced by its mean over the rows (in all m
  channels at once; the other inputs keep their row values). `share` = Var(e_p) /
  sum_p' Var(e_p'); `covariance_share` = Cov(e_p, yhat) / Var(yhat), which sums to 1 when
  the model is additive on the rows (every outer function linear where the rows reach
  it, so that sum_p e_p = yhat - mean yhat); the gap from 1 is what the inputs do only
  together. For y = sum_p g_p(x_p) learned exactly, share_p = Var(g_p) / sum Var(g_p').
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from kacs_cli import atomic
from kacs_cli.errors import UserError
from kacs_cli.scaling import category_position

__all__ = ["Explanation", "RULE_COLUMNS", "SHARE_COLUMNS", "explain_model"]

# Without data the shares are measured on this many rows drawn uniformly from the model's
# input space [0, 1]^n (independent inputs over the training range; under the quantile
# input transform that is every input's training distribution).
UNIFORM_ROWS = 4096
# Channels drawn in colour in each input's panel; the others are thin grey lines.
HIGHLIGHT = 3
DPI = 100

RULE_COLUMNS = {
    "rule": "the rule's row in the model's rules_ (population order, 0-based)",
    "type": "inner (a rule of psi_{q,p}, reading the input x_p) or outer (a rule of Phi_q, "
            "reading the channel sum zhat_q)",
    "q": "channel, 1..m",
    "p": "input, 1..n (0 for outer rules)",
    "lower": "interval lower bound on the scale the rule reads: the scaled input in [0, 1] "
             "(inner) or zhat_q (outer)",
    "upper": "interval upper bound, same scale as lower",
    "x_lower": "inner rules: lower in the input's original units (x_min + lower (x_max - x_min)); "
               "empty for outer rules, for a categorical input's rules, and for every rule when the "
               "model's input transform is not minmax (the scaled input is then not a linear map of x)",
    "x_upper": "inner rules: upper in the input's original units, as x_lower",
    "categories": "inner rules of a categorical input: the categories whose positions the interval "
                  "covers, in their order on the axis (the lowest mean target first), joined by |; "
                  "x_lower and x_upper are empty there (a category has no units); empty for other rules",
    "w0": "consequent intercept: the rule predicts w0 + w1 z for z in [lower, upper] (inner: a "
          "contribution to zhat_q; outer: a contribution to the prediction on the [-1, 1] "
          "target scale)",
    "w1": "consequent slope, as w0",
    "F": "fitness: the rule's weight in the fitness-weighted mean of its submodel's match set",
    "num": "numerosity: the micro-rules this macro-rule stands for",
    "eps": "the rule's error estimate (on the [-1, 1] target scale)",
    "exp": "experience: how many times the rule has been in a match set during training",
}
SHARE_COLUMNS = {
    "kind": "input or channel",
    "index": "p (input, 1..n) or q (channel, 1..m)",
    "label": "the input's feature name (x1, x2, ... without names) or q1, q2, ...",
    "variance": "variance over the rows of the effect (input: e_p = yhat - yhat with that input's "
                "inner values held at their mean; channel: Phi_q(zhat_q)), on the [-1, 1] "
                "target scale",
    "share": "variance / the sum of variance over the same kind (sums to 1 over inputs and over "
             "channels)",
    "covariance_share": "Cov(effect, yhat) / Var(yhat): sums to 1 exactly over channels, and over "
                        "inputs when the model is additive on the rows",
    "basis": "the rows measured: data (the rows given) or uniform (a fixed uniform sample of the "
             "input space, when no data is given)",
    "rows": "number of rows measured",
}


class _Function:
    """One submodel's function, exact and fast to evaluate.

    Between two consecutive rule bounds the match set does not change, so the fitness-
    weighted mean of the rules' lines is one line there (docs/algorithm.md section 4); the
    intervals are closed, so every bound gets its own match set. Evaluating is then a binary
    search instead of a pass over the rules. Where no rule matches the value is `empty`.
    """

    def __init__(self, rules: pd.DataFrame):
        lo = rules["lower"].to_numpy(np.float64)
        hi = rules["upper"].to_numpy(np.float64)
        self.bounds = np.unique(np.concatenate([lo, hi]))
        mids = 0.5 * (self.bounds[1:] + self.bounds[:-1])
        # At the bounds (index k) and the open gaps between them (index K + k).
        where = np.concatenate([self.bounds, mids])
        F = rules["F"].to_numpy(np.float64)[:, None]
        w0 = rules["w0"].to_numpy(np.float64)[:, None]
        w1 = rules["w1"].to_numpy(np.float64)[:, None]
        sums = np.zeros((3, len(where)))
        # Rules x locations at once, in slices of about 4 million cells: a submodel of
        # thousands of rules (the adaptive budget at small n) stays within tens of MB.
        step = max(1, 4_000_000 // max(1, len(lo)))
        for s in range(0, len(where), step):
            z = where[None, s:s + step]
            fw = np.where((lo[:, None] <= z) & (z <= hi[:, None]), F, 0.0)
            sums[:, s:s + step] = fw.sum(axis=0), (fw * w0).sum(axis=0), (fw * w1).sum(axis=0)
        self.matched = sums[0] > 0.0
        safe = np.where(self.matched, sums[0], 1.0)
        self.a = sums[1] / safe
        self.b = sums[2] / safe

    def __call__(self, z: np.ndarray, empty: float = 0.0) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        K = len(self.bounds)
        if K == 0:
            return np.full(z.shape, empty)
        i = np.searchsorted(self.bounds, z, side="left")
        inside = (i > 0) & (i < K)
        at_bound = (i < K) & (self.bounds[np.minimum(i, K - 1)] == z)
        slot = np.where(at_bound, np.minimum(i, K - 1), K + np.maximum(i - 1, 0))
        valid = at_bound | inside
        slot = np.where(valid, slot, 0)
        ok = valid & self.matched[slot]
        return np.where(ok, self.a[slot] + self.b[slot] * z, empty)


@dataclass
class Explanation:
    """What `explain_model` measured. Rule and share tables as DataFrames; `write` puts every
    file `kacs explain` writes into a folder; the figure_* methods return matplotlib Figures.

    rules: one row per rule (RULE_COLUMNS), sorted by submodel (inner (q, p), then outer q)
    and lower bound. input_shares, channel_shares: one row per input / channel
    (SHARE_COLUMNS). n_channels: the model's number m of outer channels (the article's
    2n + 1 unless it was trained with another `channels`). pathways: (m, n) variances
    Var(e_{q,p}) of input p's effect through
    channel q alone (the input ablation restricted to one channel), which decide the
    highlighted channels of each input's panel. functions: every submodel's function as an
    exact evaluator, keyed ("inner", q, p) and ("outer", q, 0): f(z, empty=0.0) is the
    model's value at z, `empty` where no rule matches. zhat_rows, zhat_train: (m, 2)
    ranges of zhat_q over the rows measured and over the training inputs (None when the
    model did not record them).
    """

    n: int
    n_channels: int
    n_rules: int
    n_micro: int
    input_transform: str
    labels: list[str]
    basis: str
    rows: int
    prediction_variance: float
    rules: pd.DataFrame
    input_shares: pd.DataFrame
    channel_shares: pd.DataFrame
    pathways: np.ndarray
    x_min: np.ndarray
    x_max: np.ndarray
    y_min: float
    y_max: float
    zhat_rows: np.ndarray
    zhat_train: np.ndarray | None
    functions: dict = field(repr=False, default_factory=dict)
    # The categorical inputs (0-based) and their categories' names, in their order on the axis:
    # category k of K sits at (k + 0.5) / K.
    categories: dict = field(default_factory=dict)
    # (m, n): each inner function's value at a missing input where the refinement learned one
    # (missing_value: learned), NaN where its rules' lines are read at their centres.
    inner_missing: np.ndarray | None = None

    # ------------------------------------------------------------------ tables

    def shares(self) -> pd.DataFrame:
        """Inputs then channels, the columns of SHARE_COLUMNS (shares.csv)."""
        return pd.concat([self.input_shares, self.channel_shares], ignore_index=True)

    def rules_json(self) -> dict:
        """The rule table with the model's scaling and the columns' meaning (rules.json)."""
        records = []
        for row in self.rules.itertuples(index=False):
            rec = {}
            for name, value in zip(self.rules.columns, row):
                if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
                    rec[name] = int(value)
                elif isinstance(value, (np.floating, float)):
                    rec[name] = None if math.isnan(value) else float(value)
                else:
                    rec[name] = str(value)
            records.append(rec)
        return {
            "format": "kacs-rules",
            "version": 1,
            "n": self.n,
            "channels": self.n_channels,
            "n_rules": self.n_rules,
            "n_micro": self.n_micro,
            "input_transform": self.input_transform,
            "feature_names": list(self.labels),
            "x_min": [float(v) for v in self.x_min],
            "x_max": [float(v) for v in self.x_max],
            "y_min": float(self.y_min),
            "y_max": float(self.y_max),
            "columns": RULE_COLUMNS,
            "rules": records,
            "inner_missing": (None if self.inner_missing is None else
                              [[None if math.isnan(v) else float(v) for v in row] for row in self.inner_missing]),
        }

    def write(self, folder) -> list[Path]:
        """rules.csv, rules.json, shares.csv, inputs.png, channels.png, shares.png into
        `folder` (created); returns the paths written."""
        folder = Path(folder).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        written = []

        def put(name, fill):
            path = folder / name
            with atomic.replacing(path, suffix=f"{path.suffix}.tmp") as tmp:
                fill(tmp)
            written.append(path)

        # float_format None writes repr(float): the CSV reads back bit for bit.
        put("rules.csv", lambda tmp: self.rules.to_csv(tmp, index=False))
        put("rules.json", lambda tmp: tmp.write_text(
            json.dumps(self.rules_json(), indent=1, allow_nan=False) + "\n", encoding="utf-8"))
        put("shares.csv", lambda tmp: self.shares().to_csv(tmp, index=False))
        for name, build in (("inputs.png", self.figure_inputs), ("channels.png", self.figure_channels),
                            ("shares.png", self.figure_shares)):
            fig = build()
            try:
                put(name, lambda tmp: _save_png(fig, tmp))
            finally:
                _pyplot().close(fig)
        return written

    def summary(self, top: int = 5) -> str:
        """A few plain lines: rule counts, and the inputs and channels with the largest shares."""
        n_q = self.n_channels
        kinds = self.rules["type"].to_numpy()
        inner = int((kinds == "inner").sum())
        subs = self.rules.groupby(["type", "q", "p"]).size()
        empty = self.n * n_q + n_q - len(subs)
        lines = [
            f"KACS model: n = {self.n} inputs, {n_q} channels, {self.n_rules} rules "
            f"({self.n_micro} micro): {inner} inner, {self.n_rules - inner} outer; "
            f"{empty} of {(self.n + 1) * n_q} submodels without rules",
        ]
        where = ("the data" if self.basis == "data"
                 else "a uniform sample of the input space (no data given)")
        if not self.prediction_variance > 0.0:
            lines.append(f"the prediction is constant on {self.rows} rows of {where}: no shares")
            return "\n".join(lines)
        lines.append(f"shares of the prediction's variance on {self.rows} rows of {where} "
                     f"(variance {self.prediction_variance:.4g} on the [-1, 1] target scale):")

        def ranked(frame):
            frame = frame.sort_values("share", ascending=False, kind="mergesort").head(top)
            return ", ".join(f"{r.label} {100 * r.share:.1f} %" for r in frame.itertuples())

        lines.append(f"  inputs:   {ranked(self.input_shares)}")
        lines.append(f"  channels: {ranked(self.channel_shares)}")
        additive = float(self.input_shares["covariance_share"].sum())
        lines.append(f"  the inputs' covariance shares add up to {100 * additive:.1f} % (100 % when the "
                     f"model is additive on these rows)")
        return "\n".join(lines)

    # ------------------------------------------------------------------ figures

    def _x_axis(self, p: int):
        """(grid on the scaled input, the same grid in the units drawn, axis label)."""
        t = np.linspace(0.0, 1.0, 200)
        if p in self.categories:
            return t, t, f"{self.labels[p]} (categories by mean target)"
        span = self.x_max[p] - self.x_min[p]
        if self.input_transform == "minmax" and span > 0.0:
            return t, self.x_min[p] + t * span, self.labels[p]
        note = "scaled" if self.input_transform == "minmax" else f"after {self.input_transform}"
        return t, t, f"{self.labels[p]} ({note}, [0, 1])"

    def figure_inputs(self):
        """One panel per input p with its m inner functions psi_{q,p} (thin grey), the
        HIGHLIGHT channels that carry most of that input's effect in colour."""
        plt = _pyplot()
        n, n_q = self.n, self.n_channels
        caption = (
            f"Inner functions $\\psi_{{q,p}}$ of each input p: all {n_q} channels in grey, in colour "
            f"the {HIGHLIGHT} channels\ncarrying most of the input's effect (legend: their part "
            f"of it). Title: the input's share of the\nprediction's variance ({self._basis_words()}). "
            f"Gaps: no rule matches (contributes 0)")
        fig, axes = _panels(plt, n, width=2.6, height=1.9, caption=caption)
        values = [self.functions[("inner", q, p)](self._x_axis(p - 1)[0], empty=np.nan)
                  for p in range(1, n + 1) for q in range(1, n_q + 1)]
        ylim = _limits(values)
        colors = plt.get_cmap("tab10").colors
        for p in range(n):
            ax = axes[p]
            t, x, label = self._x_axis(p)
            strength = self.pathways[:, p]
            total = float(strength.sum())
            top = [int(q) for q in np.argsort(-strength, kind="stable")[:HIGHLIGHT]
                   if total > 0.0 and strength[q] > 0.0]
            for q in range(n_q):
                if q in top:
                    continue
                ax.plot(x, values[p * n_q + q], color="0.72", lw=0.6)
            for rank, q in enumerate(top):
                ax.plot(x, values[p * n_q + q], color=colors[rank % len(colors)], lw=1.6,
                        label=f"q{q + 1} {100 * strength[q] / total:.0f} %")
            share = self.input_shares["share"].iloc[p]
            ax.set_title(f"{self.labels[p]}" + ("" if np.isnan(share) else f"  {100 * share:.1f} %"),
                         fontsize=9)
            ax.set_xlim(x[0], x[-1])
            ax.set_ylim(*ylim)
            if p in self.categories:
                names = self.categories[p]
                ax.set_xticks(category_position(np.arange(len(names)), len(names)), names, rotation=60,
                              fontsize=6)
            ax.set_xlabel(label, fontsize=7)
            ax.tick_params(labelsize=6.5, length=2, pad=1)
            ax.grid(True, color="0.92", lw=0.5)
            if top:
                ax.legend(fontsize=6, loc="best", frameon=False, handlelength=1.2)
        return fig

    def figure_channels(self):
        """One panel per channel q with its outer function Phi_q over the zhat_q the rows reach
        (and the training range, shaded, when recorded)."""
        plt = _pyplot()
        n_q = self.n_channels
        caption = (
            f"Outer functions $\\Phi_q$ over $\\hat z_q$ (shaded: the range seen in training), "
            f"target scale [-1, 1].\nTitle: the channel's share of the prediction's variance "
            f"({self._basis_words()});\norange: above the even share 1/{n_q}")
        fig, axes = _panels(plt, n_q, width=2.2, height=1.7, caption=caption)
        curves = []
        for q in range(n_q):
            lo, hi = self.zhat_rows[q]
            if self.zhat_train is not None:
                lo, hi = min(lo, self.zhat_train[q, 0]), max(hi, self.zhat_train[q, 1])
            pad = max(0.05 * (hi - lo), 1e-3)
            z = np.linspace(lo - pad, hi + pad, 300)
            curves.append((z, self.functions[("outer", q + 1, 0)](z, empty=np.nan)))
        ylim = _limits([v for _, v in curves])
        for q in range(n_q):
            ax = axes[q]
            z, v = curves[q]
            if self.zhat_train is not None:
                ax.axvspan(*self.zhat_train[q], color="0.93", lw=0)
            share = self.channel_shares["share"].iloc[q]
            strong = not np.isnan(share) and share >= 1.0 / n_q
            ax.plot(z, v, color="tab:orange" if strong else "0.45", lw=1.4 if strong else 0.9)
            ax.set_xlim(z[0], z[-1])
            ax.set_ylim(*ylim)
            ax.set_title(f"q{q + 1}" + ("" if np.isnan(share) else f"  {100 * share:.1f} %"),
                         fontsize=9, fontweight="bold" if strong else "normal")
            ax.tick_params(labelsize=6.5, length=2, pad=1)
            ax.locator_params(axis="x", nbins=4)
            ax.grid(True, color="0.92", lw=0.5)
        return fig

    def figure_shares(self):
        """Two bar charts: the inputs' and the channels' shares, largest first."""
        plt = _pyplot()
        n_q = self.n_channels
        height = 1.2 + 0.2 * n_q
        fig, axes = plt.subplots(1, 2, figsize=(10.0, height), squeeze=True)
        for ax, frame, color, title in (
            (axes[0], self.input_shares, "tab:blue", "inputs"),
            (axes[1], self.channel_shares, "tab:orange", "channels"),
        ):
            frame = frame.sort_values("share", ascending=False, kind="mergesort")
            ypos = np.arange(len(frame))
            shares = np.nan_to_num(frame["share"].to_numpy(np.float64))
            ax.barh(ypos, 100 * shares, color=color, height=0.7, label="share of the variance")
            ax.plot(100 * np.nan_to_num(frame["covariance_share"].to_numpy(np.float64)), ypos,
                    "k|", ms=8, mew=1.5, label="covariance share")
            ax.set_yticks(ypos, frame["label"].tolist(), fontsize=7)
            ax.set_ylim(len(frame) - 0.5, -0.5)
            ax.set_xlabel("% of the prediction's variance", fontsize=8)
            ax.set_title(title, fontsize=10)
            ax.tick_params(axis="x", labelsize=7)
            ax.grid(True, axis="x", color="0.9", lw=0.5)
            ax.legend(fontsize=7, loc="lower right", frameon=False)
        fig.suptitle(f"Shares of the prediction's variance ({self._basis_words()})", fontsize=10)
        fig.tight_layout()
        return fig

    def _basis_words(self) -> str:
        if self.basis == "data":
            return f"{self.rows} rows of data"
        return f"{self.rows} uniform rows, no data given"


def _pyplot():
    # matplotlib takes half a second to import: only a caller that draws pays for it.
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save_png(fig, path):
    # No "Software" entry (matplotlib's version) and no date: the same model and rows give
    # the same bytes on any install.
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def _panels(plt, count: int, width: float, height: float, caption: str):
    """A grid of `count` panels about as wide as tall overall, under a caption of a few lines;
    no unused cells, so the figure has exactly `count` axes."""
    cols = max(1, min(count, math.ceil(math.sqrt(count * 1.4))))
    rows = math.ceil(count / cols)
    fig_w = max(width * cols + 0.6, 7.5)
    top_in = 0.35 + 0.17 * (caption.count("\n") + 1)
    fig_h = height * rows + top_in + 0.45
    fig = plt.figure(figsize=(fig_w, fig_h))
    gs = fig.add_gridspec(rows, cols, left=0.5 / fig_w, right=1.0 - 0.15 / fig_w,
                          bottom=0.45 / fig_h, top=1.0 - top_in / fig_h, wspace=0.28, hspace=0.62)
    axes = [fig.add_subplot(gs[i // cols, i % cols]) for i in range(count)]
    fig.suptitle(caption, fontsize=9, y=1.0 - 0.1 / fig_h, va="top")
    return fig, axes


def _limits(values):
    finite = [v[np.isfinite(v)] for v in values]
    allv = np.concatenate(finite + [np.zeros(1)])
    lo, hi = float(allv.min()), float(allv.max())
    pad = max(0.06 * (hi - lo), 0.02)
    return lo - pad, hi + pad


def category_names(est) -> dict[int, list[str]]:
    """The categorical inputs of a fitted estimator (0-based) and their categories' names in
    their order on the axis; a category that is a number is written as it reads (1, not 1.0)."""
    categories = getattr(est, "categories_", None)
    if categories is None:
        return {}

    def name(value) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)

    return {int(j): [name(c) for c in cats] for j, cats in zip(categories.columns, categories.categories)}


def _covered(names: list[str], lower: float, upper: float) -> str:
    """The names of the categories whose positions lie in [lower, upper], joined by |."""
    positions = category_position(np.arange(len(names)), len(names))
    return "|".join(n for n, x in zip(names, positions) if lower <= x <= upper)


def _rule_table(est, frame: pd.DataFrame) -> pd.DataFrame:
    n = est.model_.n
    s_in = n * est.model_.n_channels
    inner = (frame["type"] == "inner").to_numpy()
    q0 = frame["q"].to_numpy(np.int64) - 1
    p0 = np.maximum(frame["p"].to_numpy(np.int64) - 1, 0)
    sub = np.where(inner, q0 * n + p0, s_in + q0)
    lower = frame["lower"].to_numpy(np.float64)
    upper = frame["upper"].to_numpy(np.float64)
    if est.input_transform_.name == "minmax":
        x_min, span = est.x_min_[p0], (est.x_max_ - est.x_min_)[p0]
        x_lower = np.where(inner, x_min + lower * span, np.nan)
        x_upper = np.where(inner, x_min + upper * span, np.nan)
    else:
        x_lower = x_upper = np.full(len(frame), np.nan)
    named = category_names(est)
    on_categories = inner & np.isin(p0, list(named))
    x_lower, x_upper = np.where(on_categories, np.nan, x_lower), np.where(on_categories, np.nan, x_upper)
    covered = [_covered(named[p], lo, hi) if cat else ""
               for cat, p, lo, hi in zip(on_categories, p0, lower, upper)]
    table = pd.DataFrame({
        "rule": np.arange(len(frame), dtype=np.int64),
        "type": frame["type"].to_numpy().astype(str),
        "q": frame["q"].to_numpy(np.int64),
        "p": frame["p"].to_numpy(np.int64),
        "lower": lower,
        "upper": upper,
        "x_lower": x_lower,
        "x_upper": x_upper,
        "categories": np.asarray(covered, dtype=object),
        "w0": frame["w0"].to_numpy(np.float64),
        "w1": frame["w1"].to_numpy(np.float64),
        "F": frame["F"].to_numpy(np.float64),
        "num": frame["num"].to_numpy(np.int64),
        "eps": frame["eps"].to_numpy(np.float64),
        "exp": frame["exp"].to_numpy(np.int64),
    })
    order = np.lexsort((upper, lower, sub))
    return table.iloc[order].reset_index(drop=True)


def _variance(a: np.ndarray) -> np.ndarray:
    """Population variance over the rows (axis 0); exactly 0 for a constant column, where the
    mean's rounding would leave a residue of 1e-31 and a share of noise."""
    return np.where(np.ptp(a, axis=0) == 0.0, 0.0, a.var(axis=0))


def _share_frame(kind, labels, effects, y_hat, basis) -> pd.DataFrame:
    """effects (rows, k): one column per input or channel."""
    rows = effects.shape[0]
    variance = _variance(effects)
    total = float(variance.sum())
    var_y = float(_variance(y_hat))
    cov = ((effects - effects.mean(axis=0)) * (y_hat - y_hat.mean())[:, None]).mean(axis=0)
    return pd.DataFrame({
        "kind": kind,
        "index": np.arange(1, effects.shape[1] + 1, dtype=np.int64),
        "label": labels,
        "variance": variance,
        "share": variance / total if total > 0.0 else np.full(len(variance), np.nan),
        "covariance_share": cov / var_y if var_y > 0.0 else np.full(len(variance), np.nan),
        "basis": basis,
        "rows": rows,
    })


def explain_model(estimator, X=None) -> Explanation:
    """Explain a fitted KACS estimator (see the module docstring for every definition).

    X: rows in the original input units on which the shares are measured (NaN where an input
    is missing: its inner values there are the model's, docs/algorithm.md section 12); None
    measures them on UNIFORM_ROWS rows drawn uniformly (seed 0) from the model's input space.
    Raises UserError for a model that is not KACS, or for X that is not a matrix of
    n_features_in_ columns and at least 2 rows without infinite values.
    """
    check_is_fitted(estimator, "model_")
    model = estimator.model_
    if model.learner.components is None:
        raise UserError(f"explain draws KACS models only; this is an {model.learner.label} model "
                        f"(its rules are n-dimensional boxes: inspect them with rules_)")
    n, n_q = model.n, model.n_channels
    if X is None:
        basis = "uniform"
        Xs = np.random.default_rng(0).uniform(0.0, 1.0, (UNIFORM_ROWS, n))
    else:
        basis = "data"
        try:
            Xs = estimator.scale_inputs(X)
        except UserError:
            raise
        except ValueError as exc:  # scikit-learn's checks: keep their first line
            raise UserError(f"explain: {str(exc).strip().splitlines()[0]}") from None
        if Xs.shape[0] < 2:
            raise UserError(f"explain needs at least 2 rows to measure variances, got {Xs.shape[0]}")
    Xs = np.ascontiguousarray(Xs, dtype=np.float64)
    psihat, zhat, phihat, y_hat = model.predict_components(Xs)

    frame = model.population_frame()
    groups = {key: g for key, g in frame.groupby(["type", "q", "p"], sort=False)}
    empty = frame.iloc[:0]
    functions = {("inner", q, p): _Function(groups.get(("inner", q, p), empty))
                 for q in range(1, n_q + 1) for p in range(1, n + 1)}
    functions.update({("outer", q, 0): _Function(groups.get(("outer", q, 0), empty))
                      for q in range(1, n_q + 1)})
    outer = [functions[("outer", q, 0)] for q in range(1, n_q + 1)]

    # Phi_q through the same evaluator as the ablated terms, so that an input whose inner
    # values do not vary has an effect of exactly 0.
    phi = np.column_stack([outer[q](zhat[:, q]) for q in range(n_q)])
    input_effects = np.empty((Xs.shape[0], n))
    pathways = np.empty((n_q, n))
    for p in range(n):
        held = zhat - psihat[:, :, p] + psihat[:, :, p].mean(axis=0)
        through = phi - np.column_stack([outer[q](held[:, q]) for q in range(n_q)])
        pathways[:, p] = _variance(through)
        input_effects[:, p] = through.sum(axis=1)

    names = getattr(estimator, "feature_names_in_", None)
    labels = [str(v) for v in names] if names is not None else [f"x{p}" for p in range(1, n + 1)]
    zr = getattr(estimator, "zhat_range_", None)
    return Explanation(
        n=n, n_channels=n_q, n_rules=model.n_rules, n_micro=model.n_micro,
        input_transform=estimator.input_transform_.name, labels=labels, basis=basis,
        rows=int(Xs.shape[0]), prediction_variance=float(_variance(y_hat)),
        rules=_rule_table(estimator, frame),
        input_shares=_share_frame("input", labels, input_effects, y_hat, basis),
        channel_shares=_share_frame("channel", [f"q{q}" for q in range(1, n_q + 1)], phihat,
                                    y_hat, basis),
        pathways=pathways,
        x_min=np.asarray(estimator.x_min_, dtype=np.float64),
        x_max=np.asarray(estimator.x_max_, dtype=np.float64),
        y_min=float(estimator.y_min_), y_max=float(estimator.y_max_),
        zhat_rows=np.column_stack([zhat.min(axis=0), zhat.max(axis=0)]),
        zhat_train=None if zr is None else np.asarray(zr, dtype=np.float64),
        functions=functions,
        categories=category_names(estimator),
        inner_missing=np.array(model.inner_missing[:n * n_q]).reshape(n_q, n),
    )
