"""Evaluation protocols (docs/algorithm.md section 9) and the per-run train/test split (docs/algorithm.md section 1).

A run is identified by (run, split_seed, seed): the split seed fixes the train/test
permutation, the learner seed everything the learner draws. XCSF and KACS of the same run
call make_split with the same split seed, so the comparison is paired on identical data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kacs_cli.errors import UserError
from kacs_cli.scaling import empty_columns, empty_columns_message, input_ranges, scale_inputs, scale_target

TARGETS = ("minmax", "standard")
METRICS = ("mae", "mse")


@dataclass(frozen=True)
class Protocol:
    name: str
    runs: int
    train_fraction: float
    target: str  # "minmax": [-1, 1] with train min/max; "standard": train mean/std
    metric: str  # the error the article reports under this protocol: "mae" or "mse"
    splits: int | None = None  # alternative protocol: number of train/test splits ...
    seeds: int | None = None  # ... times learner seeds per split


PROTOCOLS: dict[str, Protocol] = {
    "main": Protocol("main", 30, 0.9, "minmax", "mae"),
    "alternative": Protocol("alternative", 64, 0.75, "standard", "mse", splits=8, seeds=8),
}
# The protocol of a config that names none.
DEFAULT_PROTOCOL = "main"


def protocol_or_default(name: str) -> Protocol:
    """The registered protocol of that name, the default one for any other (a report of a
    hand-written config): its `metric` is the error the tables of its runs compare by."""
    return PROTOCOLS.get(str(name).strip().lower(), PROTOCOLS[DEFAULT_PROTOCOL])


def get_protocol(protocol: str | Protocol) -> Protocol:
    """The Protocol itself, or the registered one of that name (case-insensitive)."""
    if isinstance(protocol, Protocol):
        return protocol
    key = str(protocol).strip().lower()
    if key not in PROTOCOLS:
        raise UserError(
            f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}"
        )
    return PROTOCOLS[key]


def run_plan(protocol: str | Protocol, runs: int | None = None) -> list[tuple[int, int, int]]:
    """The (run, split_seed, seed) triples of a protocol, in run order.

    main: run r uses split seed r and learner seed r. alternative: run r = split * seeds +
    seed_index, i.e. split-major, so the first 8 runs share split 0. `runs` (the CLI's
    --runs K) keeps the first K runs; under main it may also extend past 30, since the rule
    "run r uses seeds r" continues naturally, while the alternative grid is capped at
    splits x seeds.
    """
    proto = get_protocol(protocol)
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 1):
        raise UserError(f"number of runs must be an integer >= 1, got {runs!r}")
    if proto.splits is not None and proto.seeds is not None:
        total = proto.splits * proto.seeds
        if runs is not None and runs > total:
            raise UserError(
                f"protocol {proto.name} has {proto.splits} splits x {proto.seeds} seeds = "
                f"{total} runs; --runs {runs} asks for more, use at most {total}"
            )
        plan = [
            (split * proto.seeds + k, split, k)
            for split in range(proto.splits)
            for k in range(proto.seeds)
        ]
    else:
        plan = [(r, r, r) for r in range(max(proto.runs, runs or 0))]
    count = proto.runs if runs is None else int(runs)
    return plan[:count]


@dataclass
class Split:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    train_index: np.ndarray  # rows of the original matrix, in permutation order
    test_index: np.ndarray
    # How the raw data became the arrays above, to reproduce or invert it:
    # x_min, x_max (per input column, train split), target ("minmax"|"standard"),
    # y_a, y_b with y_scaled = y_a * y + y_b (y = (y_scaled - y_b) / y_a), and
    # y_min, y_max (minmax) or y_mean, y_std (standard).
    scaling: dict = field(default_factory=dict)

    def inverse_target(self, y_scaled: np.ndarray) -> np.ndarray:
        """Map normalized target values back to the data's original units."""
        return (np.asarray(y_scaled, dtype=np.float64) - self.scaling["y_b"]) / self.scaling["y_a"]


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _scaled_target(target: str, y_tr, y_te, split_seed):
    """(train targets, test targets, their scaling's numbers) under the protocol's `target`
    scaling, from the train split's statistics (make_split's docstring)."""
    scales: dict = {}
    if target == "minmax":
        y_min, y_max = float(y_tr.min()), float(y_tr.max())
        if y_max == y_min:
            raise UserError(
                f"the target is constant ({y_min}) on the train split of split seed {split_seed}; "
                f"min-max scaling needs a varying target (use a larger or different dataset)"
            )
        y_tr_s = scale_target(y_tr, y_min, y_max, clip=False)
        y_te_s = scale_target(y_te, y_min, y_max, clip=True)
        scales.update(
            y_min=y_min,
            y_max=y_max,
            y_a=2.0 / (y_max - y_min),
            y_b=-2.0 * y_min / (y_max - y_min) - 1.0,
        )
    else:
        y_mean = float(y_tr.mean())
        y_std = float(y_tr.std(ddof=0))
        if y_std == 0.0:
            raise UserError(
                f"the target is constant ({y_mean}) on the train split of split seed {split_seed}; "
                f"standardization needs a varying target (use a larger or different dataset)"
            )
        y_tr_s = (y_tr - y_mean) / y_std
        y_te_s = (y_te - y_mean) / y_std
        scales.update(y_mean=y_mean, y_std=y_std, y_a=1.0 / y_std, y_b=-y_mean / y_std)
    return y_tr_s, y_te_s, scales


def make_split(
    X: np.ndarray,
    y: np.ndarray,
    protocol: str | Protocol,
    split_seed: int,
    train_fraction: float | None = None,
) -> Split:
    """Train/test split and normalization of one run (docs/algorithm.md section 1).

    The first floor(train_fraction * rows) rows of default_rng(split_seed).permutation(rows)
    are the train split, the rest the test split. Inputs are min-max scaled with the train
    split's min/max over its known values (constant column -> 0.5; a missing value, NaN,
    stays NaN), test inputs clipped to [0, 1]. Target: main
    ("minmax") -> [-1, 1] with train min/max, test clipped to [-1, 1]; alternative
    ("standard") -> (y - train mean) / train std, with the population std (ddof = 0, as
    numpy's default), no clipping.
    """
    proto = get_protocol(protocol)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2:
        raise UserError(f"inputs must be a matrix (rows x n), got shape {X.shape}")
    y = y.reshape(-1)
    rows = X.shape[0]
    if y.shape[0] != rows:
        raise UserError(f"inputs have {rows} rows but the target has {y.shape[0]}; they must match")
    fraction = proto.train_fraction if train_fraction is None else float(train_fraction)
    if not 0.0 < fraction < 1.0:
        raise UserError(f"train fraction must lie strictly between 0 and 1, got {fraction}")
    if isinstance(split_seed, bool) or not isinstance(split_seed, (int, np.integer)) or split_seed < 0:
        raise UserError(f"split seed must be a non-negative integer, got {split_seed!r}")
    # Plain float product then floor, like the authors' floor(rows * 0.9).
    n_train = math.floor(fraction * rows)
    if n_train < 2 or rows - n_train < 1:
        raise UserError(
            f"a train fraction of {fraction} of {rows} rows leaves {n_train} train and "
            f"{rows - n_train} test rows; need at least 2 train rows and 1 test row"
        )
    if proto.target not in TARGETS:
        raise UserError(f"protocol {proto.name}: unknown target scaling {proto.target!r}; use one of {', '.join(TARGETS)}")

    perm = np.random.default_rng(int(split_seed)).permutation(rows)
    train_index, test_index = perm[:n_train], perm[n_train:]
    X_tr, X_te = X[train_index], X[test_index]
    y_tr, y_te = y[train_index], y[test_index]

    empty = empty_columns(X_tr)
    if empty:
        raise UserError(f"on the train split of split seed {split_seed}, "
                        + empty_columns_message([f"input column {j + 1}" for j in empty]))
    x_min, x_max = input_ranges(X_tr)
    X_tr_s = scale_inputs(X_tr, x_min, x_max, clip=False)
    X_te_s = scale_inputs(X_te, x_min, x_max, clip=True)

    y_tr_s, y_te_s, target_scales = _scaled_target(proto.target, y_tr, y_te, split_seed)
    scales: dict = {"x_min": x_min, "x_max": x_max, "target": proto.target, **target_scales}

    return Split(
        X_train=_f64(X_tr_s),
        y_train=_f64(y_tr_s),
        X_test=_f64(X_te_s),
        y_test=_f64(y_te_s),
        train_index=np.ascontiguousarray(train_index, dtype=np.int64),
        test_index=np.ascontiguousarray(test_index, dtype=np.int64),
        scaling=scales,
    )
