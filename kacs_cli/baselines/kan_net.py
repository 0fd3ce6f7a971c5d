"""`kan`: a Kolmogorov-Arnold network from pykan (extra kan, CPU) as a baseline.

Shape [n, 2n + 1, 1], the Kolmogorov-Arnold representation's (`hidden` changes the middle
layer), B-spline edges of order k on `grid` intervals, trained by pykan's `fit` for `steps`
optimizer steps on the whole train split (or on `batch` rows drawn per step), with its
regular grid updates. One torch thread, float32, no checkpoints written, the symbolic branch
off (it is not used to predict).
"""

from __future__ import annotations

import contextlib
import io
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from kacs_cli.baselines.entry import Entry
from kacs_cli.errors import UserError

EXTRA = "kan"
MISSING = f"method kan needs the optional extra: pip install 'kacs[{EXTRA}]'"


def _torch_kan():
    try:
        import torch
        from kan import KAN
    except ImportError:
        raise UserError(MISSING) from None
    return torch, KAN


@contextlib.contextmanager
def _single_threaded_deterministic(torch):
    """One torch thread and deterministic kernels while fitting: without the latter, two
    fits with one seed differed in the last bits of some gradients (torch 2.13 on CPU), which
    LBFGS then amplified to 1e-4 in the predictions."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(threads)


def _warm_up() -> None:
    # torch imports its compiler stack on the first use_deterministic_algorithms call (4 s).
    torch, _ = _torch_kan()
    torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled())


class KANRegressor(RegressorMixin, BaseEstimator):
    """pykan's KAN [n, hidden, 1] (hidden = 2n + 1 when None) as a scikit-learn regressor."""

    _parameter_constraints = {
        "hidden": [Interval(Integral, 1, None, closed="left"), None],
        "grid": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "steps": [Interval(Integral, 1, None, closed="left")],
        "opt": [StrOptions({"LBFGS", "Adam"})],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "batch": [Interval(Integral, 1, None, closed="left"), None],
        "update_grid": ["boolean"],
        "grid_update_num": [Interval(Integral, 1, None, closed="left")],
        "stop_grid_update_step": [Interval(Integral, 1, None, closed="left")],
        "noise_scale": [Interval(Real, 0, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(self, hidden=None, grid=5, k=3, steps=20, opt="LBFGS", lr=1.0, batch=None,
                 update_grid=True, grid_update_num=10, stop_grid_update_step=50, noise_scale=0.3,
                 random_state=None):
        self.hidden = hidden
        self.grid = grid
        self.k = k
        self.steps = steps
        self.opt = opt
        self.lr = lr
        self.batch = batch
        self.update_grid = update_grid
        self.grid_update_num = grid_update_num
        self.stop_grid_update_step = stop_grid_update_step
        self.noise_scale = noise_scale
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        if self.update_grid and self.grid_update_num > self.stop_grid_update_step:
            # pykan updates every stop_grid_update_step // grid_update_num steps: never 0
            raise ValueError(f"grid_update_num ({self.grid_update_num}) must not exceed "
                             f"stop_grid_update_step ({self.stop_grid_update_step})")

    def width(self, n: int) -> list[int]:
        return [n, self.hidden if self.hidden is not None else 2 * n + 1, 1]

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        torch, KAN = _torch_kan()
        with _single_threaded_deterministic(torch):
            return self._fit(torch, KAN, X, y)

    def _fit(self, torch, KAN, X, y):
        x = torch.tensor(X, dtype=torch.float32)
        t = torch.tensor(y.reshape(-1, 1), dtype=torch.float32)
        # pykan's fit also scores a test set at every step: one train row is the cheapest.
        data = {"train_input": x, "train_label": t, "test_input": x[:1], "test_label": t[:1]}
        width = self.width(X.shape[1])
        # pykan prints (checkpoint notes, a tqdm bar): keep a campaign's terminal clean.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            # seed: torch, numpy's and random's global generators (pykan draws from all).
            model = KAN(width=list(width), grid=int(self.grid), k=int(self.k), seed=int(self.random_state or 0),
                        noise_scale=float(self.noise_scale), symbolic_enabled=False, save_act=False,
                        auto_save=False, device="cpu")
            model.fit(data, opt=self.opt, steps=int(self.steps), lr=float(self.lr),
                      batch=-1 if self.batch is None else int(self.batch),
                      update_grid=bool(self.update_grid), grid_update_num=int(self.grid_update_num),
                      stop_grid_update_step=int(self.stop_grid_update_step), log=int(self.steps) + 1)
        self.model_ = model
        self.width_ = width
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        torch, _ = _torch_kan()
        with torch.no_grad():
            out = self.model_(torch.tensor(X, dtype=torch.float32))
        return out.numpy().astype(np.float64).reshape(-1)


def count_parameters(est: KANRegressor, n: int) -> int:
    """Per edge of [n, h, 1]: grid + k B-spline coefficients, its base scale and its spline
    scale (pykan's coef, scale_base, scale_sp): (n h + h) (grid + k + 2)."""
    n_in, h, n_out = est.width_
    return (n_in * h + h * n_out) * (int(est.grid) + int(est.k) + 2)


ENTRY = Entry(
    "kan", "KAN", f"{__name__}.KANRegressor", count_parameters,
    counted="edges x (grid + k B-spline coefficients + 2 scales); edges = n h + h, h = 2n + 1",
    extra=EXTRA, modules=("kan", "torch", "tqdm", "sympy"), warm_up=_warm_up,
    # 20 LBFGS steps: about 3e-5 s per train row and edge (docs/baselines.md)
    cost=lambda rows, n: 3e-5 * rows * (n + 1) * (2 * n + 1),
)
