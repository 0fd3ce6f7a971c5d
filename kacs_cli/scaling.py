"""The one min-max scaling of docs/algorithm.md section 1, shared by the protocols and the estimators.

Inputs go to [0, 1] with per-column (min, max) of the train rows; a constant column maps to
0.5. The target goes to [-1, 1] with the train rows' (min, max), in the authors' expression
2 (y - min) / (max - min) - 1, so that normalized targets match theirs bit for bit. A run of
the protocol and an estimator fitted on the same unscaled train rows therefore see the same
numbers (tests/test_api.py checks it).
"""

from __future__ import annotations

import numpy as np


def scale_inputs(X: np.ndarray, x_min: np.ndarray, x_max: np.ndarray, *, clip: bool) -> np.ndarray:
    """Inputs to [0, 1]; rows outside the train range are clipped when `clip` (test rows,
    predictions); train rows lie inside by construction."""
    span = x_max - x_min
    constant = span == 0.0
    safe = np.where(constant, 1.0, span)
    scaled = np.where(constant, 0.5, (X - x_min) / safe)
    return np.clip(scaled, 0.0, 1.0) if clip else scaled


def scale_target(y: np.ndarray, y_min: float, y_max: float, *, clip: bool) -> np.ndarray:
    """Target to [-1, 1] (y_max > y_min); clipped when `clip` (the main protocol's test rows)."""
    scaled = 2.0 * (y - y_min) / (y_max - y_min) - 1.0
    return np.clip(scaled, -1.0, 1.0) if clip else scaled


def unscale_target(y_scaled: np.ndarray, y_min: float, y_max: float) -> np.ndarray:
    """The [-1, 1] scale back to the target's units (the inverse of `scale_target`)."""
    return (y_scaled + 1.0) * (y_max - y_min) / 2.0 + y_min
