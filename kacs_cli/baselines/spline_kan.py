"""A Kolmogorov-Arnold network [n, h, 1] as pykan defines it, in numpy with analytic gradients.

X-KAN's rule consequents (docs/xkan.md section 2). Every edge is
phi(x) = scale_base silu(x) + scale_sp sum_c coef_c B_c(x), B-splines of order k on a grid of
G intervals extended by k knots each side; a node sums its incoming edges. Arrays keep
pykan's layouts (per layer: grid (in, G + 2k + 1), coef (in, out, G + k), scale_base and
scale_sp (in, out)), so a model can be copied to or from pykan's `KAN` and compared.
Training: the full batch, mean squared error, scipy's L-BFGS-B in phases that each start
with pykan's grid update (the grid at the quantiles of the layer's inputs, the spline
coefficients refitted to the current curves by least squares). The loss and gradient kernel
reads the parameters from the optimizer's vector in place; the inner layer's B-splines and
silu of the rows, fixed while its grid is, are computed once per phase; and only the k + 1
B-splines that can be nonzero at a point are evaluated (the values and the order of every
sum are the dense recursion's, so the optimizer's path is the same number for number).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy
from numba import njit
from scipy.optimize import minimize

# pykan's defaults for what X-KAN leaves at them (KAN(...) and KAN.fit(...)).
NOISE_SCALE = 0.3
GRID_EPS = 0.02
GRID_RANGE = (-1.0, 1.0)
LBFGS_HISTORY = 10
ITERATIONS_PER_STEP = 20      # pykan's LBFGS max_iter per optimizer step
EVALUATIONS_PER_STEP = 25     # its max_eval (max_iter * 5 / 4)
GRID_UPDATE_NUM = 10
STOP_GRID_UPDATE_STEP = 50


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def extend_grid(grid: np.ndarray, k: int) -> np.ndarray:
    """k more knots each side, at the grid's mean spacing."""
    h = (grid[:, -1:] - grid[:, :1]) / (grid.shape[1] - 1)
    left = grid[:, :1] - h * np.arange(k, 0, -1)
    right = grid[:, -1:] + h * np.arange(1, k + 1)
    return np.concatenate([left, grid, right], axis=1)


_FLOAT_MAX = np.finfo(np.float64).max


@njit(cache=True, inline="always")
def _finite(v):
    """numpy's nan_to_num of one value (pykan cleans each recursion level so)."""
    if v != v:
        return 0.0
    if v > _FLOAT_MAX:
        return _FLOAT_MAX
    if v < -_FLOAT_MAX:
        return -_FLOAT_MAX
    return v


@njit(cache=True)
def _ordered_rows(grid):
    """Per row of knots: nondecreasing and free of NaN (every grid pykan makes is)."""
    ordered = np.ones(grid.shape[0], dtype=np.bool_)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1] - 1):
            if not grid[i, j] <= grid[i, j + 1]:
                ordered[i] = False
    return ordered


@njit(cache=True, error_model="numpy", inline="always")
def _basis_at(xv, grid, i, k, work, lower, ordered):
    """Cox-de Boor on the knots grid[i], only where a B-spline can be nonzero: returns
    (first, last), work[first:last + 1] the order-k B-splines at xv there (every other one
    is 0) and lower[first:last + 2] those of order k - 1 (for the slope); last < first when
    xv lies in no interval. Each value is the full recursion's (an entry outside this window
    has two zero terms), so sums over the window equal sums over all the B-splines. On
    ordered knots (`ordered`, _ordered_rows) the one interval holding xv is found by counting
    the knots at or below it, without a branch per knot."""
    n_knots = grid.shape[1]
    if ordered:
        below = 0
        for j in range(n_knots):
            below += 1 if xv >= grid[i, j] else 0
        if below == 0 or below == n_knots:
            return 0, -1
        first = below - 1
        last = first
    else:
        first = -1
        last = -2
        for j in range(n_knots - 1):
            if xv >= grid[i, j] and xv < grid[i, j + 1]:
                if first < 0:
                    first = j
                last = j
        if first < 0:
            return 0, -1
    for j in range(first, last + 1):
        work[j] = 1.0 if (xv >= grid[i, j] and xv < grid[i, j + 1]) else 0.0
    for p in range(1, k + 1):
        # the order p - 1 values, padded with the zeros either side that the recursion reads
        top = n_knots - 1 - p                       # the last order p - 1 index
        lo = max(first - 1, 0)
        for j in range(lo, min(last + 1, top) + 1):
            lower[j] = work[j] if j >= first and j <= last else 0.0
        first = lo
        last = min(last, top - 1)
        for j in range(first, last + 1):
            left = (xv - grid[i, j]) / (grid[i, j + p] - grid[i, j])
            right = (grid[i, j + p + 1] - xv) / (grid[i, j + p + 1] - grid[i, j + 1])
            work[j] = _finite(left * lower[j] + right * lower[j + 1])
    return first, last


@njit(cache=True, error_model="numpy")
def _slope_factors(grid, k):
    """k / (grid[i, c + k] - grid[i, c]) for c = 0 .. G + k: the constants of the B-splines'
    slopes, fixed while the grid is."""
    factors = np.empty((grid.shape[0], grid.shape[1] - k))
    for i in range(grid.shape[0]):
        for c in range(grid.shape[1] - k):
            factors[i, c] = k / (grid[i, c + k] - grid[i, c])
    return factors


@njit(cache=True, error_model="numpy", inline="always")
def _slope_at(factors, i, lower, j):
    """d/dx of the order-k B-spline j from the order k - 1 ones in lower."""
    return _finite(factors[i, j] * lower[j] - factors[i, j + 1] * lower[j + 1])


@njit(cache=True, error_model="numpy")
def _basis(x, grid, k, out, d_out, slope):
    work = np.zeros(grid.shape[1])
    lower = np.zeros(grid.shape[1])
    factors = _slope_factors(grid, k)
    ordered = _ordered_rows(grid)
    out[:] = 0.0
    if slope:
        d_out[:] = 0.0
    for r in range(x.shape[0]):
        for i in range(x.shape[1]):
            first, last = _basis_at(x[r, i], grid, i, k, work, lower, ordered[i])
            for j in range(first, last + 1):
                out[r, i, j] = work[j]
                if slope:
                    d_out[r, i, j] = _slope_at(factors, i, lower, j)


@njit(cache=True, error_model="numpy")
def _input_side(X, grid1, k, window, first1, b1, silu1):
    """What the inner layer's edges need of the rows and stays fixed while its grid does: per
    row and input `window` = k + 1 B-splines from first1 on, b1, that hold every nonzero one
    (the window ends at the last B-spline at most; zeros pad it), and silu(x)."""
    m, n = X.shape
    n_basis = grid1.shape[1] - 1 - k
    work = np.zeros(grid1.shape[1])
    lower = np.zeros(grid1.shape[1])
    ordered = _ordered_rows(grid1)
    for r in range(m):
        for i in range(n):
            xv = X[r, i]
            first, last = _basis_at(xv, grid1, i, k, work, lower, ordered[i])
            start = min(first, n_basis - window)
            first1[r, i] = start
            for c in range(window):
                b1[r, i, c] = work[start + c] if start + c >= first and start + c <= last else 0.0
            silu1[r, i] = xv / (1.0 + np.exp(-xv))


@njit(cache=True, error_model="numpy")
def _loss_and_gradient(theta, n, h, n_basis, y, first1, b1, silu1, grid2, factors2, ordered2, k, gradient):
    """Mean squared error of the [n, h, 1] network on the rows that _input_side prepared,
    parameters theta in SplineKAN.get_vector's order; its gradient into `gradient`. One pass
    per row: forward through both layers, then back. Every sum runs over the same terms in
    the same order as over all B-splines (the skipped ones are exact zeros)."""
    m = y.shape[0]
    window = b1.shape[2]
    at = 0
    coef1 = theta[at:at + n * h * n_basis].reshape((n, h, n_basis))
    g_coef1 = gradient[at:at + n * h * n_basis].reshape((n, h, n_basis))
    at += n * h * n_basis
    base1 = theta[at:at + n * h].reshape((n, h))
    g_base1 = gradient[at:at + n * h].reshape((n, h))
    at += n * h
    sp1 = theta[at:at + n * h].reshape((n, h))
    g_sp1 = gradient[at:at + n * h].reshape((n, h))
    at += n * h
    coef2 = theta[at:at + h * n_basis].reshape((h, n_basis))
    g_coef2 = gradient[at:at + h * n_basis].reshape((h, n_basis))
    at += h * n_basis
    base2 = theta[at:at + h]
    g_base2 = gradient[at:at + h]
    at += h
    sp2 = theta[at:at + h]
    g_sp2 = gradient[at:at + h]
    gradient[:] = 0.0
    # The inner layer with the hidden node innermost (coefficients and their gradient
    # transposed to (input, B-spline, hidden)): loops over h that vectorise, each number
    # summed over the same terms in the same order as in get_vector's layout.
    coef1_t = np.empty((n, n_basis, h))
    for i in range(n):
        for j in range(h):
            for c in range(n_basis):
                coef1_t[i, c, j] = coef1[i, j, c]
    g_coef1_t = np.zeros((n, n_basis, h))
    work = np.zeros(grid2.shape[1])
    lower = np.zeros(grid2.shape[1])
    s1 = np.empty((n, h))
    z = np.empty(h)
    gz = np.empty(h)
    first2 = np.empty(h, dtype=np.int64)
    last2 = np.empty(h, dtype=np.int64)
    b2 = np.zeros((h, window))
    s2 = np.empty(h)
    ds2 = np.empty(h)
    denominator = np.empty(h)
    loss = 0.0
    for r in range(m):
        for j in range(h):
            z[j] = 0.0
        for i in range(n):
            f = first1[r, i]
            sx = silu1[r, i]
            for j in range(h):
                s1[i, j] = 0.0
            for c in range(window):
                bc = b1[r, i, c]
                for j in range(h):
                    s1[i, j] += coef1_t[i, f + c, j] * bc
            for j in range(h):
                z[j] += base1[i, j] * sx + sp1[i, j] * s1[i, j]
        out = 0.0
        for j in range(h):
            zv = z[j]
            first, last = _basis_at(zv, grid2, j, k, work, lower, ordered2[j])
            first2[j] = first
            last2[j] = last
            acc = 0.0
            dacc = 0.0
            for c in range(first, last + 1):
                b2[j, c - first] = work[c]
                acc += coef2[j, c] * work[c]
                dacc += coef2[j, c] * _slope_at(factors2, j, lower, c)
            s2[j] = acc
            ds2[j] = dacc
            denominator[j] = 1.0 + np.exp(-zv)
            out += base2[j] * zv / denominator[j] + sp2[j] * acc
        e = out - y[r]
        loss += e * e
        g = 2.0 * e / m
        for j in range(h):
            zv = z[j]
            sig = 1.0 / denominator[j]
            first = first2[j]
            for c in range(first, last2[j] + 1):
                g_coef2[j, c] += g * sp2[j] * b2[j, c - first]
            g_base2[j] += g * zv * sig
            g_sp2[j] += g * s2[j]
            gz[j] = g * (base2[j] * sig * (1.0 + zv * (1.0 - sig)) + sp2[j] * ds2[j])
        for i in range(n):
            f = first1[r, i]
            sx = silu1[r, i]
            for c in range(window):
                bc = b1[r, i, c]
                for j in range(h):
                    g_coef1_t[i, f + c, j] += gz[j] * sp1[i, j] * bc
            for j in range(h):
                g_base1[i, j] += gz[j] * sx
                g_sp1[i, j] += gz[j] * s1[i, j]
    for i in range(n):
        for j in range(h):
            for c in range(n_basis):
                g_coef1[i, j, c] = g_coef1_t[i, c, j]
    return loss / m


def bspline_basis(x: np.ndarray, grid: np.ndarray, k: int, slope: bool = False):
    """B-splines of order k of every column of x (m, d) on its own knots grid (d, P):
    (m, d, P - 1 - k), half-open intervals as pykan's (a degenerate grid gives zeros).
    With slope, also their derivatives in x."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    grid = np.ascontiguousarray(grid, dtype=np.float64)
    out = np.empty((x.shape[0], x.shape[1], grid.shape[1] - 1 - k))
    d_out = np.empty_like(out) if slope else np.empty((0, 0, 0))
    _basis(x, grid, int(k), out, d_out, bool(slope))
    return (out, d_out) if slope else out


def curves_to_coef(x: np.ndarray, curves: np.ndarray, grid: np.ndarray, k: int) -> np.ndarray:
    """Least-squares spline coefficients (in, out, G + k) of curves (m, in, out) sampled at x
    (m, in), as pykan's curve2coef (minimum-norm where the rows leave them undetermined)."""
    basis = bspline_basis(x, grid, k)                       # (m, in, c)
    coef = np.empty((x.shape[1], curves.shape[2], basis.shape[2]))
    for i in range(x.shape[1]):
        coef[i] = np.linalg.lstsq(basis[:, i, :], curves[:, i, :], rcond=None)[0].T
    return coef


def _scipy_has_c_lbfgsb() -> bool:
    """scipy from 1.15 on: L-BFGS-B's step function `setulb` with the argument list that
    _lbfgsb below passes (older versions take another)."""
    try:
        major, minor = (int(part) for part in scipy.__version__.split(".")[:2])
        from scipy.optimize import _lbfgsb  # noqa: F401
    except (ValueError, ImportError):
        return False
    return (major, minor) >= (1, 15)


DIRECT_LBFGSB = _scipy_has_c_lbfgsb()
LINE_SEARCH_STEPS = 20       # scipy's maxls default


def _lbfgsb(objective, x0: np.ndarray, maxiter: int, maxfun: int) -> np.ndarray:
    """scipy.optimize.minimize(objective, x0, jac=True, method="L-BFGS-B", no bounds,
    ftol = gtol = 0, maxcor LBFGS_HISTORY)'s result x, by scipy's own L-BFGS-B step
    function driven as minimize drives it (one evaluation per new point, the first at x0;
    maxiter iterations; stop once more than maxfun evaluations were made), without the
    wrappers that minimize puts around every evaluation: the same points, the same x."""
    if not DIRECT_LBFGSB:
        return minimize(objective, x0, jac=True, method="L-BFGS-B",
                        options={"maxiter": maxiter, "maxfun": maxfun, "maxcor": LBFGS_HISTORY,
                                 "ftol": 0.0, "gtol": 0.0}).x
    from scipy.optimize import _lbfgsb as step

    m = LBFGS_HISTORY
    n = x0.size
    x = np.array(x0, dtype=np.float64)
    evaluated_at = x.copy()
    f, g = objective(x.copy())
    evaluations = 1
    no_bound = np.zeros(n, np.int32)
    low = np.zeros(n)
    high = np.zeros(n)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
    iwa = np.zeros(3 * n, np.int32)
    task = np.zeros(2, np.int32)
    ln_task = np.zeros(2, np.int32)
    lsave = np.zeros(4, np.int32)
    isave = np.zeros(44, np.int32)
    dsave = np.zeros(29)
    iterations = 0
    while True:
        g = g.astype(np.float64)
        step.setulb(m, x, low, high, no_bound, f, g, 0.0, 0.0, wa, iwa, task, lsave, isave, dsave,
                    LINE_SEARCH_STEPS, ln_task)
        if task[0] == 3:                        # evaluate at x
            if not np.array_equal(x, evaluated_at):
                evaluated_at = x.copy()
                f, g = objective(x.copy())
                evaluations += 1
        elif task[0] == 1:                      # a new iterate
            iterations += 1
            if iterations >= maxiter:
                task[0], task[1] = 5, 504
            elif evaluations > maxfun:
                task[0], task[1] = 5, 502
        else:
            return x


@dataclass
class Layer:
    grid: np.ndarray        # (in, G + 2k + 1)
    coef: np.ndarray        # (in, out, G + k)
    scale_base: np.ndarray  # (in, out)
    scale_sp: np.ndarray    # (in, out)
    k: int

    def copy(self) -> "Layer":
        return Layer(self.grid.copy(), self.coef.copy(), self.scale_base.copy(), self.scale_sp.copy(), self.k)

    def splines(self, x: np.ndarray, slope: bool = False):
        """Per edge the spline part sum_c coef B_c(x_i): (m, in, out) (and its slope in x)."""
        if slope:
            basis, d_basis = bspline_basis(x, self.grid, self.k, slope=True)
        else:
            basis, d_basis = bspline_basis(x, self.grid, self.k), None
        by_input = np.transpose(basis, (1, 0, 2))                            # (in, m, c)
        spline = np.transpose(by_input @ np.transpose(self.coef, (0, 2, 1)), (1, 0, 2))
        if not slope:
            return basis, spline
        d_spline = np.transpose(np.transpose(d_basis, (1, 0, 2)) @ np.transpose(self.coef, (0, 2, 1)), (1, 0, 2))
        return basis, spline, d_spline

    def forward(self, x: np.ndarray) -> np.ndarray:
        _, spline = self.splines(x)
        return silu(x) @ self.scale_base + np.einsum("mio,io->mo", spline, self.scale_sp)

    def update_grid(self, x: np.ndarray, grid_eps: float = GRID_EPS) -> None:
        """pykan's update_grid_from_samples: knots at the sorted inputs' quantiles (blended
        with a uniform grid by grid_eps), coefficients refitted to the current splines."""
        m = x.shape[0]
        x_sorted = np.sort(x, axis=0)
        _, curves = self.splines(x_sorted)
        intervals = self.grid.shape[1] - 1 - 2 * self.k
        ids = [int(m / intervals * i) for i in range(intervals)] + [-1]
        adaptive = x_sorted[ids, :].T                                         # (in, G + 1)
        h = (adaptive[:, -1:] - adaptive[:, :1]) / intervals
        uniform = adaptive[:, :1] + h * np.arange(intervals + 1)[None, :]
        self.grid = extend_grid(grid_eps * uniform + (1.0 - grid_eps) * adaptive, self.k)
        self.coef = curves_to_coef(x_sorted, curves, self.grid, self.k)


def init_layer(n_in: int, n_out: int, grid: int, k: int, rng: np.random.Generator) -> Layer:
    """pykan's KANLayer initialisation (scale_base_mu 0, scale_base_sigma 1, scale_sp 1)."""
    knots = extend_grid(np.tile(np.linspace(GRID_RANGE[0], GRID_RANGE[1], grid + 1), (n_in, 1)), k)
    noise = (rng.random((grid + 1, n_in, n_out)) - 0.5) * NOISE_SCALE / grid
    coef = curves_to_coef(knots[:, k:-k].T, noise, knots, k)
    scale_base = (rng.random((n_in, n_out)) * 2.0 - 1.0) / np.sqrt(n_in)
    scale_sp = np.ones((n_in, n_out)) / np.sqrt(n_in)
    return Layer(knots, coef, scale_base, scale_sp, k)


@dataclass
class SplineKAN:
    """A KAN [n, h, 1]: two layers."""

    inner: Layer
    outer: Layer

    @classmethod
    def initial(cls, n: int, hidden: int, grid: int, k: int, seed: int) -> "SplineKAN":
        rng = np.random.default_rng(seed)
        return cls(init_layer(n, hidden, grid, k, rng), init_layer(hidden, 1, grid, k, rng))

    def copy(self) -> "SplineKAN":
        return SplineKAN(self.inner.copy(), self.outer.copy())

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.outer.forward(self.inner.forward(X))[:, 0]

    def update_grid(self, X: np.ndarray) -> None:
        """pykan's MultKAN.update_grid: the inner layer's grid from X, then the outer layer's
        from the inner layer's new outputs."""
        self.inner.update_grid(X)
        self.outer.update_grid(self.inner.forward(X))

    # ---------------------------------------------------------------- training

    def _trained(self):
        layers = (self.inner, self.outer)
        return [a for layer in layers for a in (layer.coef, layer.scale_base, layer.scale_sp)]

    def get_vector(self) -> np.ndarray:
        return np.concatenate([a.ravel() for a in self._trained()])

    def set_vector(self, theta: np.ndarray) -> None:
        at = 0
        for layer in (self.inner, self.outer):
            for name in ("coef", "scale_base", "scale_sp"):
                shape = getattr(layer, name).shape
                size = int(np.prod(shape))
                setattr(layer, name, theta[at:at + size].reshape(shape).copy())
                at += size

    @property
    def n_params(self) -> int:
        return int(sum(a.size for a in self._trained()))

    def _input_side(self, X: np.ndarray):
        """The inner layer's B-spline windows and silu of X under its current grid."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        window = self.inner.k + 1
        first1 = np.empty(X.shape, dtype=np.int64)
        b1 = np.empty((*X.shape, window))
        silu1 = np.empty(X.shape)
        _input_side(X, self.inner.grid, int(self.inner.k), window, first1, b1, silu1)
        return first1, b1, silu1

    def _objective(self, X: np.ndarray, y: np.ndarray):
        """theta -> (mean squared error on (X, y), its gradient), parameters in get_vector()'s
        order, for the current grids (the trained arrays are not read)."""
        n, h = self.inner.scale_base.shape
        n_basis = self.inner.coef.shape[2]
        y = np.ascontiguousarray(y, dtype=np.float64)
        first1, b1, silu1 = self._input_side(X)
        grid2, k = self.outer.grid, int(self.outer.k)
        factors2 = _slope_factors(grid2, k)
        ordered2 = _ordered_rows(grid2)

        def objective(theta):
            gradient = np.empty_like(theta)
            loss = _loss_and_gradient(theta, n, h, n_basis, y, first1, b1, silu1, grid2, factors2, ordered2, k,
                                      gradient)
            return float(loss), gradient

        return objective

    def loss_and_gradient(self, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """Mean squared error on (X, y) and its gradient in get_vector()'s order."""
        return self._objective(X, y)(self.get_vector())

    def fit(self, X: np.ndarray, y: np.ndarray, steps: int) -> "SplineKAN":
        """pykan's fit(opt="LBFGS", steps) budget and grid schedule: a grid update every
        STOP_GRID_UPDATE_STEP // GRID_UPDATE_NUM steps before that step, and up to
        ITERATIONS_PER_STEP L-BFGS iterations per step, here one L-BFGS-B run per phase."""
        every = max(STOP_GRID_UPDATE_STEP // GRID_UPDATE_NUM, 1)
        updates = [s for s in range(steps) if s % every == 0 and s < STOP_GRID_UPDATE_STEP]
        bounds = [*updates, steps]
        for start, stop in zip(bounds[:-1], bounds[1:]):
            self.update_grid(X)
            span = stop - start
            self.set_vector(_lbfgsb(self._objective(X, y), self.get_vector(),
                                    span * ITERATIONS_PER_STEP, span * EVALUATIONS_PER_STEP))
        return self

    def mae(self, X: np.ndarray, y: np.ndarray) -> float:
        err = float(np.mean(np.abs(self.predict(X) - y)))
        return err if np.isfinite(err) else 1.0


def count_parameters(n: int, hidden: int, grid: int, k: int) -> int:
    """Trained numbers of [n, hidden, 1]: per edge grid + k coefficients and two scales."""
    return (n * hidden + hidden) * (grid + k + 2)
