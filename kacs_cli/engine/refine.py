"""Full-batch refinement of a trained KACS model: every consequent weight fitted jointly on the
training rows, the rule structure (submodels, intervals, fitness) kept as evolution left it.

With the structure fixed, the model is

    yhat(x) = sum_q Phi_q(zhat_q),   zhat_q = sum_p psi_{q,p}(x_p),

each function the fitness-weighted mean of its matching rules' lines (an empty match set
gives 0, as in prediction). The inner functions are linear in the inner weights and their
match sets do not depend on any weight, so the inner stage is a fixed sparse design built
once per row set (`Design`). The outer match sets follow zhat, so they are found anew at every
evaluation, but each channel's rules cut the line into cells of one match set each
(`_outer_cells`, built once per structure), where Phi_q is one line: a row finds its cell by
two binary searches. The objective is

    L(w) = 1/(2m) sum_r (y_r - yhat_r)^2 + lambda/2 sum_k |w_k - w_k^evolved|^2,

its gradient the backpropagation of docs/algorithm.md section 4 summed over the rows (the
outer slope s_q = sum F w1 / sum F is dPhi_q/dz between match-set changes, where L is
piecewise smooth). With sample weights v_r (weights.py) the squared errors are weighted,
1/(2m) sum_r becoming 1/(2 sum_r v_r) sum_r v_r, as is the validation MSE. The pull lambda
keeps rules that few rows reach near what evolution gave them. Under `missing_value: learned`
w also holds, for every inner function whose input is missing on a fitted row, its value at a
missing input (docs/algorithm.md section 12), fitted and pulled like a weight. With a smoothness strength mu > 0 (`refine_smoothness`) L gains

    mu/2 sum_f 1/G sum_j (f(g_{j-1}) - 2 f(g_j) + f(g_{j+1}))^2,

the second differences of every learned function f on a grid of G points (an inner psi_{q,p}
on [0, 1], an outer Phi_q over the range its channel sum takes on the rows), as a difference
penalty on spline coefficients: it pulls each function towards a line between its grid
points, where the rules' intervals give it jumps and zig-zags, and leaves linear trends
alone. With the structure fixed each f(g_j) is linear in the weights, so the penalty is the
squared norm of one sparse matrix times w (`roughness_matrix`); a second difference touching
a grid point that no rule covers (the function is 0 there, an empty match set) is left out. L-BFGS-B (scipy) minimizes L; with a validation part of the training rows, the
weights of the iteration with the lowest validation MSE are kept and the search stops after
`PATIENCE` iterations without a new best.

Beyond `max_rows` rows (row_caps.REFINE_MAX_ROWS unless the caller gives another cap: the
capacity search's candidates are refined on row_caps.SEARCH_REFINE_MAX_ROWS), a seeded sample
of that many stands for all of them.

Deterministic for a seed: the validation rows (and the sample) come from the seed, every sum
runs in a fixed order, and L-BFGS-B is deterministic.
"""

from __future__ import annotations

import time
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import sparse
from scipy.optimize import minimize

from kacs_cli.engine import row_caps
from kacs_cli.engine.kacs_predict import values_at_missing
from kacs_cli.engine.kacs_submodels import submodel_input_table
from kacs_cli.engine.population import S_P

# The refinement's kernel, in words a results folder records (engine.yaml's `refinement`):
# the outer functions evaluated by cells of one match set (`_outer_cells`).
ENGINE_NAME = "cells"
# L-BFGS-B iterations without a lower validation MSE before the search stops.
PATIENCE = 20
# Fewer validation rows than this make early stopping noise: all rows are fitted instead.
MIN_VALIDATION_ROWS = 20
# Grid points per learned function of the smoothness penalty.
SMOOTH_GRID = 64
# Mixed into the seed so that the sample of rows refined beyond the cap follows no other stream.
_SAMPLE_STREAM = 0x5A3D

# The inner stage of a set of rows. Within one inner submodel, rows whose input has the same
# rank among the rules' lower bounds (<=) and upper bounds (<) have the same match set (the
# set is {lo <= x} minus {hi < x}), so psi_{q,p} is one line A + B x per such cell. A row
# then costs one lookup per inner submodel, whatever the number of rules that match it (with
# P_hash 0.8 most inner rules span [0, 1] and match every row). The rows missing the input
# (NaN) form a cell of their own: every rule of the submodel matches and reads the input at
# its interval's centre (docs/algorithm.md section 12), so psi_{q,p} there is the constant
# A = sum share (w0 + w1 centre) and B = 0; or, where the inner function holds a value of its
# own at a missing input (`held`, missing_value: learned), that value.
#   cell_of[r, s]: the cell of row r in inner submodel s; cell_start/cell_rule/cell_share:
#   each cell's rules (population order) with their share F / sum F of the cell's set;
#   cell_missing[c]: whether cell c holds the rows missing its input, cell_centre: each
#   rule's interval centre there (0 in the other cells), cell_sub[c]: its inner submodel. X
#   holds 0 for a missing input, which a missing cell's B = 0 multiplies.
#   v: each row's weight in the loss (all ones without sample weights: v_r e_r^2 is then
#   e_r^2 bit for bit).
Design = namedtuple("Design", ["cell_of", "cell_start", "cell_rule", "cell_share", "cell_missing",
                               "cell_centre", "cell_sub", "X", "y", "v"])


@njit(cache=True)
def _inner_design(sub, lo, hi, F, P, X, n, n_q):
    """The cells of every inner submodel over the rows of X (see `Design`); n_q channels."""
    s_in = n * n_q
    sub_input = submodel_input_table(n, n_q)
    rows = X.shape[0]
    # The rules of each inner submodel, in population order.
    first = np.zeros(s_in + 1, np.int64)
    for i in range(P):
        if sub[i] < s_in:
            first[sub[i] + 1] += 1
    for s in range(s_in):
        first[s + 1] += first[s]
    members = np.empty(first[s_in], np.int64)
    fill = first[:-1].copy()
    for i in range(P):
        if sub[i] < s_in:
            members[fill[sub[i]]] = i
            fill[sub[i]] += 1
    cell_of = np.empty((rows, s_in), np.int64)
    rep = np.empty(rows * s_in, np.int64)  # a row of each cell, to find its match set
    keys = np.empty(rows, np.int64)
    n_cells = 0
    for s in range(s_in):
        rules = members[first[s]:first[s + 1]]
        los = np.sort(lo[rules])
        his = np.sort(hi[rules])
        R = rules.shape[0]
        for r in range(rows):
            z = X[r, sub_input[s]]
            # Ranks are >= 0: the rows missing the input get the key -1, a cell of their own.
            keys[r] = (-1 if z != z else np.searchsorted(los, z, side="right") * (R + 1)
                       + np.searchsorted(his, z, side="left"))
        order = np.argsort(keys, kind="mergesort")
        last = -2  # below every key, the missing rows' -1 included
        for k in range(rows):
            r = order[k]
            if keys[r] != last:
                last = keys[r]
                rep[n_cells] = r
                n_cells += 1
            cell_of[r, s] = n_cells - 1
    cell_sub = np.empty(n_cells, np.int64)
    for s in range(s_in):
        for r in range(rows):
            cell_sub[cell_of[r, s]] = s
    cell_start = np.zeros(n_cells + 1, np.int64)
    cell_missing = np.zeros(n_cells, np.bool_)
    for c in range(n_cells):
        s = cell_sub[c]
        z = X[rep[c], sub_input[s]]
        cell_missing[c] = z != z
        count = 0
        for k in range(first[s], first[s + 1]):
            i = members[k]
            if (lo[i] <= z and z <= hi[i]) or z != z:
                count += 1
        cell_start[c + 1] = cell_start[c] + count
    cell_rule = np.empty(cell_start[n_cells], np.int64)
    cell_share = np.empty(cell_start[n_cells])
    cell_centre = np.zeros(cell_start[n_cells])
    for c in range(n_cells):
        s = cell_sub[c]
        z = X[rep[c], sub_input[s]]
        k = cell_start[c]
        total = 0.0
        for m in range(first[s], first[s + 1]):
            i = members[m]
            if (lo[i] <= z and z <= hi[i]) or z != z:
                cell_rule[k] = i
                total += F[i]
                if z != z:
                    cell_centre[k] = 0.5 * (lo[i] + hi[i])
                k += 1
        for k in range(cell_start[c], cell_start[c + 1]):
            cell_share[k] = F[cell_rule[k]] / total if total > 0.0 else 0.0
    return cell_of, cell_start, cell_rule, cell_share, cell_missing, cell_centre, cell_sub


@njit(cache=True, inline="always")
def _cell_line(w, held, c, cell_start, cell_rule, cell_share, cell_missing, cell_centre, cell_sub):
    """(A, B) of cell c's line A + B x under the weights w; a cell of missing inputs is its
    submodel's held value where it has one (not NaN), else the constant of its rules' lines at
    their centres (B = 0)."""
    a = 0.0
    b = 0.0
    if cell_missing[c]:
        h = held[cell_sub[c]]
        if h == h:
            return h, b
        for k in range(cell_start[c], cell_start[c + 1]):
            i = cell_rule[k]
            a += cell_share[k] * (w[i, 0] + w[i, 1] * cell_centre[k])
        return a, b
    for k in range(cell_start[c], cell_start[c + 1]):
        i = cell_rule[k]
        a += cell_share[k] * w[i, 0]
        b += cell_share[k] * w[i, 1]
    return a, b


@njit(cache=True)
def _outer_groups(sub, P, n, n_q):
    """The outer rules of each of the n_q channels, in population order: start (n_q + 1),
    rules."""
    s_in = n * n_q
    start = np.zeros(n_q + 1, np.int64)
    for i in range(P):
        if sub[i] >= s_in:
            start[sub[i] - s_in + 1] += 1
    for q in range(n_q):
        start[q + 1] += start[q]
    fill = start[:-1].copy()
    rules = np.empty(start[n_q], np.int64)
    for i in range(P):
        if sub[i] >= s_in:
            q = sub[i] - s_in
            rules[fill[q]] = i
            fill[q] += 1
    return start, rules


@njit(cache=True)
def _outer_cells(out_start, out_lo, out_hi):
    """The outer stage's cells, as the inner stage's (`Design`): within channel q, whose m rules
    are out_start[q]:out_start[q + 1] sorted by lower bound, a channel sum z with a rules'
    lower bounds <= z and b upper bounds < z lies in cell a + b of the channel's 2 m + 1, and
    every z of one cell has the same match set, {lo <= z} minus {hi < z}. Returns the channel's
    upper bounds sorted (to find b), and each cell's matching rules (positions in the out
    arrays, ascending: by lower bound) as start (one per cell, plus one) and rules; channel q's
    cells are 2 out_start[q] + q onwards. Built once per refinement, in time linear in the
    rules plus the cells' entries."""
    n_q = out_start.shape[0] - 1
    n_out = out_lo.shape[0]
    hi_sorted = np.empty(n_out)
    by_hi = np.empty(n_out, np.int64)
    for q in range(n_q):
        s, e = out_start[q], out_start[q + 1]
        by_hi[s:e] = s + np.argsort(out_hi[s:e], kind="mergesort")
        hi_sorted[s:e] = out_hi[by_hi[s:e]]
    n_cells = 2 * n_out + n_q
    start = np.zeros(n_cells + 1, np.int64)
    rules = np.empty(0, np.int64)
    # The active rules as a list linked in lower-bound order: a rule joins at the tail (lower
    # bounds arrive in that order) and leaves from anywhere, so a cell is listed by walking it.
    next_active = np.empty(n_out, np.int64)
    prev_active = np.empty(n_out, np.int64)
    for sweep in range(2):
        if sweep == 1:
            for c in range(n_cells):
                start[c + 1] += start[c]
            rules = np.empty(start[n_cells], np.int64)
        for q in range(n_q):
            s, e = out_start[q], out_start[q + 1]
            head, tail = -1, -1
            count = 0
            # Events in the order a growing z meets them: a lower bound at v before an upper
            # bound at v (z = v matches both); cell t holds the state after t events.
            i, j = s, s
            for t in range(2 * (e - s) + 1):
                c = 2 * s + q + t
                if sweep == 0:
                    start[c + 1] = count
                else:
                    fill = start[c]
                    k = head
                    while k >= 0:
                        rules[fill] = k
                        fill += 1
                        k = next_active[k]
                if i < e and (j >= e or out_lo[i] <= hi_sorted[j]):
                    prev_active[i] = tail
                    next_active[i] = -1
                    if tail >= 0:
                        next_active[tail] = i
                    else:
                        head = i
                    tail = i
                    count += 1
                    i += 1
                elif j < e:
                    k = by_hi[j]
                    before, after = prev_active[k], next_active[k]
                    if before >= 0:
                        next_active[before] = after
                    else:
                        head = after
                    if after >= 0:
                        prev_active[after] = before
                    else:
                        tail = before
                    count -= 1
                    j += 1
    return hi_sorted, start, rules


@njit(cache=True)
def _loss_grad(w, held, n, cell_of, cell_start, cell_rule, cell_share, cell_missing, cell_centre, cell_sub,
               X, y, v, out_start, out_rule, out_lo, out_hi_sorted, out_F, oc_start, oc_rule, want_grad, grad,
               grad_held):
    """The summed squared error of the two-stage prediction with weights w (P x 2) and held
    values at missing inputs `held` (one per inner submodel, NaN: none) on the design's rows,
    each row's weighted by v, and (want_grad) the gradient of half the weighted mean squared
    error (sum v e^2 / (2 sum v)) into grad (P x 2) and grad_held (one per inner submodel).
    The pull is the caller's.

    The outer rules of channel q are out_rule[out_start[q]:out_start[q + 1]], sorted by
    lower bound, with their lower bounds alongside and the channel's upper bounds sorted
    (out_hi_sorted); oc_start/oc_rule are their cells (`_outer_cells`). Phi_q is one line
    per cell, so a row costs two binary searches per channel, whatever the number of rules
    that match its channel sum; each cell's gradient is summed over its rows first and shared
    out to its rules once. The channel count is out_start's length minus one.
    """
    n_q = out_start.shape[0] - 1
    rows = y.shape[0]
    n_cells = cell_start.shape[0] - 1
    line_a = np.zeros(n_cells)
    line_b = np.zeros(n_cells)
    for c in range(n_cells):
        line_a[c], line_b[c] = _cell_line(w, held, c, cell_start, cell_rule, cell_share, cell_missing,
                                          cell_centre, cell_sub)
    n_out_cells = oc_start.shape[0] - 1
    out_f = np.zeros(n_out_cells)
    out_a = np.zeros(n_out_cells)
    out_b = np.zeros(n_out_cells)
    for c in range(n_out_cells):
        f_sum = 0.0
        fw0_sum = 0.0
        fw1_sum = 0.0
        for j in range(oc_start[c], oc_start[c + 1]):
            k = oc_rule[j]
            i = out_rule[k]
            f_sum += out_F[k]
            fw0_sum += out_F[k] * w[i, 0]
            fw1_sum += out_F[k] * w[i, 1]
        out_f[c] = f_sum
        if f_sum > 0.0:
            out_a[c] = fw0_sum / f_sum
            out_b[c] = fw1_sum / f_sum
    grad_a = np.zeros(n_cells)
    grad_b = np.zeros(n_cells)
    out_ga = np.zeros(n_out_cells)
    out_gb = np.zeros(n_out_cells)
    zhat = np.empty(n_q)
    out_cell = np.empty(n_q, np.int64)
    sse = 0.0
    total = 0.0
    for r in range(rows):
        total += v[r]
    inv_m = 1.0 / total
    for r in range(rows):
        y_hat = 0.0
        for q in range(n_q):
            z = 0.0
            for p in range(n):
                c = cell_of[r, q * n + p]
                z += line_a[c] + line_b[c] * X[r, p]
            zhat[q] = z
            first, stop = out_start[q], out_start[q + 1]
            c = (2 * first + q + np.searchsorted(out_lo[first:stop], z, side="right")
                 + np.searchsorted(out_hi_sorted[first:stop], z, side="left"))
            out_cell[q] = c
            y_hat += out_a[c] + out_b[c] * z
        e = y[r] - y_hat
        ve = v[r] * e
        sse += ve * e
        if not want_grad:
            continue
        g = -ve * inv_m
        for q in range(n_q):
            c = out_cell[q]
            if out_f[c] <= 0.0:
                continue
            z = zhat[q]
            out_ga[c] += g
            out_gb[c] += g * z
            gz = g * out_b[c]
            for p in range(n):
                c = cell_of[r, q * n + p]
                grad_a[c] += gz
                grad_b[c] += gz * X[r, p]
    if want_grad:
        grad[:, :] = 0.0
        grad_held[:] = 0.0
        for c in range(n_out_cells):
            if out_f[c] <= 0.0:
                continue
            ga = out_ga[c] / out_f[c]
            gb = out_gb[c] / out_f[c]
            for j in range(oc_start[c], oc_start[c + 1]):
                k = oc_rule[j]
                grad[out_rule[k], 0] += out_F[k] * ga
                grad[out_rule[k], 1] += out_F[k] * gb
        for c in range(n_cells):
            # A missing cell's value is its held value, or moves with w1 by the rule's centre
            # (its grad_b is 0).
            missing = cell_missing[c]
            if missing and held[cell_sub[c]] == held[cell_sub[c]]:
                grad_held[cell_sub[c]] += grad_a[c]
                continue
            for k in range(cell_start[c], cell_start[c + 1]):
                i = cell_rule[k]
                grad[i, 0] += cell_share[k] * grad_a[c]
                if missing:
                    grad[i, 1] += cell_share[k] * cell_centre[k] * grad_a[c]
                else:
                    grad[i, 1] += cell_share[k] * grad_b[c]
    return sse


def design(pop, X: np.ndarray, y: np.ndarray, n: int, n_q: int, weight: np.ndarray | None = None) -> Design:
    """The inner stage of the rows (X, y) under the population's current structure; `weight`:
    the rows' sample weights (None: every row weighs 1)."""
    P = int(pop.scal[S_P])
    X = np.ascontiguousarray(X, dtype=np.float64)
    cells = _inner_design(pop.counts.sub, pop.bounds.lo[0], pop.bounds.hi[0], pop.reals.F, P, X, n,
                          n_q)
    missing = np.isnan(X)
    if missing.any():
        X = np.where(missing, 0.0, X)  # read only through a missing cell's slope B = 0
    v = np.ones(X.shape[0]) if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    return Design(*cells, X, np.ascontiguousarray(y, dtype=np.float64), v)


def _function_values(sub, lo, hi, F, P, grids):
    """The sparse map from the weights (flat, P * 2) to every function's values on its grid:
    row s * G + j is function s (its submodel id) at grids[s, j], the F-weighted mean of the
    matching rules' lines; and whether each grid point has a matching rule. grids: one row of
    G points per submodel."""
    S, G = grids.shape
    rule = np.arange(P)
    points = grids[sub[:P]]                                   # P x G: each rule's function's grid
    match = (lo[:P, None] <= points) & (points <= hi[:P, None])
    rows = sub[:P, None] * G + np.arange(G)[None, :]
    f_sum = np.bincount(rows[match], weights=np.broadcast_to(F[:P, None], match.shape)[match], minlength=S * G)
    r_idx, j_idx = np.nonzero(match)
    at = rows[r_idx, j_idx]
    share = F[r_idx] / f_sum[at]
    g = points[r_idx, j_idx]
    values = sparse.csr_matrix(
        (np.concatenate([share, share * g]), (np.concatenate([at, at]), np.concatenate([2 * rule[r_idx], 2 * rule[r_idx] + 1]))),
        shape=(S * G, 2 * P))
    return values, f_sum > 0.0


def roughness_matrix(pop, n: int, n_q: int, X: np.ndarray, w: np.ndarray, held: np.ndarray | None = None):
    """R with mu/2 |R w|^2 the smoothness penalty of the module docstring, for the population's
    structure; the outer grids span each channel sum's range on the rows X under the weights w
    (P x 2) and the values at missing inputs `held` (one per inner submodel, NaN or None: none)."""
    P = int(pop.scal[S_P])
    s_in, G = n * n_q, SMOOTH_GRID
    held = np.full(s_in, np.nan) if held is None else held
    rows = design(pop, X, np.zeros(X.shape[0]), n, n_q)
    zhat = _channel_sums(w, held, n, n_q, rows.cell_of, rows.cell_start, rows.cell_rule,
                         rows.cell_share, rows.cell_missing, rows.cell_centre, rows.cell_sub, rows.X)
    grids = np.empty((s_in + n_q, G))
    grids[:s_in] = np.linspace(0.0, 1.0, G)
    for q in range(n_q):
        low, high = (zhat[:, q].min(), zhat[:, q].max()) if X.shape[0] else (0.0, 0.0)
        grids[s_in + q] = np.linspace(low, high, G)
    values, covered = _function_values(pop.counts.sub, pop.bounds.lo[0], pop.bounds.hi[0], pop.reals.F, P, grids)
    # Second differences within each function, where all three points are covered.
    centre = np.arange((s_in + n_q) * G).reshape(-1, G)[:, 1:-1].ravel()
    keep = covered[centre - 1] & covered[centre] & covered[centre + 1]
    centre = centre[keep]
    k = np.arange(centre.size)
    diff = sparse.csr_matrix((np.tile([1.0, -2.0, 1.0], centre.size),
                              (np.repeat(k, 3), np.stack([centre - 1, centre, centre + 1], axis=1).ravel())),
                             shape=(centre.size, values.shape[0]))
    return (diff @ values) / np.sqrt(G)


@njit(cache=True)
def _channel_sums(w, held, n, n_q, cell_of, cell_start, cell_rule, cell_share, cell_missing, cell_centre,
                  cell_sub, X):
    """zhat (rows x n_q) of the rows of a design under the weights w and held values."""
    rows = X.shape[0]
    zhat = np.zeros((rows, n_q))
    for r in range(rows):
        for q in range(n_q):
            zq = 0.0
            for p in range(n):
                c = cell_of[r, q * n + p]
                a, b = _cell_line(w, held, c, cell_start, cell_rule, cell_share, cell_missing, cell_centre,
                                  cell_sub)
                zq += a + b * X[r, p]
            zhat[r, q] = zq
    return zhat


def _total(rows: Design) -> float:
    """The rows' summed weight: their number without sample weights (the sum of ones is exact)."""
    return float(np.sum(rows.v))


class Objective:
    """L and its gradient on one design, for a flat vector: the weights (P * 2), then the held
    values at missing inputs of the inner submodels `learn` (missing_value: learned; none
    otherwise). The other inner submodels keep their values in `held` (one per submodel, NaN:
    the rules' lines at their centres; None: all NaN)."""

    def __init__(self, pop, n: int, n_q: int, rows: Design, pull: float, w_ref: np.ndarray,
                 smoothness: float = 0.0, roughness=None, learn: np.ndarray | None = None,
                 held: np.ndarray | None = None):
        self.P = int(pop.scal[S_P])
        self.n = n
        self.learn = np.zeros(0, np.int64) if learn is None else learn
        self._held = np.full(n * n_q, np.nan) if held is None else np.array(held[:n * n_q])
        self._grad_held = np.zeros(n * n_q)
        self.rows = rows
        self.pull = float(pull)
        self.w_ref = w_ref
        self.smoothness = float(smoothness)
        self.roughness = roughness
        lo, hi, F = pop.bounds.lo[0], pop.bounds.hi[0], pop.reals.F
        self.out_start, out_rule = _outer_groups(pop.counts.sub, self.P, n, n_q)
        # Within each channel, by lower bound (stable: ties keep population order).
        channel = np.repeat(np.arange(self.out_start.shape[0] - 1), np.diff(self.out_start))
        self.out_rule = out_rule[np.lexsort((lo[out_rule], channel))]
        self.out_lo = np.ascontiguousarray(lo[self.out_rule])
        self.out_F = np.ascontiguousarray(F[self.out_rule])
        self.out_hi_sorted, self.oc_start, self.oc_rule = _outer_cells(self.out_start, self.out_lo,
                                                                       np.ascontiguousarray(hi[self.out_rule]))
        self._grad = np.zeros((self.P, 2))

    def mse(self, w_flat: np.ndarray, rows: Design | None = None) -> float:
        """Mean squared error of the prediction with these weights (no pull; weighted by the
        rows' sample weights), on the design's rows or on `rows` (another design of the same
        population: the validation rows)."""
        rows = self.rows if rows is None else rows
        if rows.y.shape[0] == 0:
            return float("nan")
        return self._run(w_flat, False, rows) / _total(rows)

    def held(self, x: np.ndarray) -> np.ndarray:
        """The values at missing inputs of every inner submodel under the flat vector x."""
        self._held[self.learn] = x[2 * self.P:]
        return self._held

    def _run(self, x, want_grad, d=None):
        d = self.rows if d is None else d
        return _loss_grad(x[:2 * self.P].reshape(self.P, 2), self.held(x), self.n, d.cell_of, d.cell_start,
                          d.cell_rule, d.cell_share, d.cell_missing, d.cell_centre, d.cell_sub, d.X, d.y,
                          d.v, self.out_start, self.out_rule, self.out_lo, self.out_hi_sorted, self.out_F,
                          self.oc_start, self.oc_rule, want_grad, self._grad, self._grad_held)

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        sse = self._run(x, True)
        diff = x - self.w_ref
        loss = 0.5 * sse / _total(self.rows) + 0.5 * self.pull * float(diff @ diff)
        grad = self._grad.ravel()
        if self.learn.size:
            grad = np.concatenate([grad, self._grad_held[self.learn]])
        grad = grad + self.pull * diff
        if self.smoothness > 0.0:
            w_flat = x[:2 * self.P]
            rough = self.roughness @ w_flat
            loss += 0.5 * self.smoothness * float(rough @ rough)
            grad[:2 * self.P] += self.smoothness * (self.roughness.T @ rough)
        return loss, grad


@dataclass(frozen=True)
class RefineResult:
    """What a refinement did: L-BFGS-B iterations run, the kept one (0: the evolved weights),
    the MSE of the fitted and the validation rows before and after, its seconds."""

    iterations: int
    best_iteration: int
    fit_mse_before: float
    fit_mse_after: float
    valid_mse_before: float
    valid_mse_after: float
    validation_rows: int
    seconds: float
    smoothness: float = 0.0                 # the strength of the smoothness penalty used


def _learned_submodels(X: np.ndarray, n: int, n_q: int) -> np.ndarray:
    """The inner submodels whose input is missing on some row of X, ascending."""
    missing = np.isnan(X).any(axis=0)
    sub_input = submodel_input_table(n, n_q)[:n * n_q]
    return np.flatnonzero(missing[sub_input]).astype(np.int64)


def validation_split(rows: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fitted rows, validation rows) of `rows` training rows, both sorted; the validation
    part is a seeded random `fraction` of them (none when that is below MIN_VALIDATION_ROWS)."""
    n_valid = int(round(fraction * rows))
    if fraction <= 0.0 or n_valid < MIN_VALIDATION_ROWS or rows - n_valid < 1:
        return np.arange(rows), np.arange(0)
    perm = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EF1])).permutation(rows)
    return np.sort(perm[n_valid:]), np.sort(perm[:n_valid])


def refine_weights(pop, n: int, n_q: int, X: np.ndarray, y: np.ndarray, *, max_iter: int,
                   pull: float, validation: float, seed: int, smoothness: float = 0.0,
                   weight: np.ndarray | None = None,
                   max_rows: int | None = None, learn_missing: bool = False,
                   inner_missing: np.ndarray | None = None) -> RefineResult:
    """Refit every consequent weight of the KACS population `pop` (n inputs, n_q outer
    channels; in place) on the scaled training rows (X in [0, 1]^n, NaN where an input is
    missing; y on the target scale), each row's error weighted by its sample weight when
    `weight` is given (rows of weight 0 left out by the caller); see the module docstring.
    Beyond `max_rows` rows (None: row_caps.REFINE_MAX_ROWS) a seeded
    sample of that many is refitted on. `inner_missing` (one per submodel, Model.inner_missing;
    None: none learned, and none to learn) holds the inner functions' values at missing inputs,
    in place: with `learn_missing` (missing_value: learned) every inner function whose input is
    missing on a fitted row gets a value of its own there, fitted with the weights from its
    value before (the rules' lines at their centres, or the value learned before), with the
    same pull; without it, values learned before are dropped."""
    start = time.perf_counter()
    cap = row_caps.REFINE_MAX_ROWS if max_rows is None else int(max_rows)
    sample = row_caps.sample_rows(X.shape[0], cap, seed, _SAMPLE_STREAM)
    if sample is not None:
        # A uniform sample keeps its rows' weights: the weighted loss on it estimates the
        # weighted loss on all rows.
        X, y = X[sample], y[sample]
        weight = None if weight is None else weight[sample]
    if inner_missing is None:
        inner_missing = np.full(n * n_q, np.nan)
        learn_missing = False
    if not learn_missing:
        inner_missing[:] = np.nan
    P = int(pop.scal[S_P])
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    fit_rows, valid_rows = validation_split(X.shape[0], validation, seed)
    w = pop.weights.w
    learn = _learned_submodels(X[fit_rows], n, n_q) if learn_missing else np.zeros(0, np.int64)
    w0 = np.ascontiguousarray(w[:P]).ravel().copy()
    if learn.size:
        w0 = np.concatenate([w0, values_at_missing(pop, n, n_q, inner_missing)[learn]])
    roughness = (roughness_matrix(pop, n, n_q, X[fit_rows], w0[:2 * P].reshape(P, 2), inner_missing[:n * n_q])
                 if smoothness > 0.0 and P > 0 else None)
    part = (lambda rows: None) if weight is None else (lambda rows: weight[rows])
    fit = Objective(pop, n, n_q, design(pop, X[fit_rows], y[fit_rows], n, n_q, part(fit_rows)), pull, w0,
                    smoothness, roughness, learn, inner_missing)
    valid = design(pop, X[valid_rows], y[valid_rows], n, n_q, part(valid_rows)) if valid_rows.size else None
    fit_before = fit.mse(w0)
    valid_before = fit.mse(w0, valid) if valid is not None else float("nan")
    best = {"w": w0.copy(), "mse": valid_before, "iteration": 0, "done": 0}

    def watch(intermediate_result):
        best["done"] += 1
        if valid is None:
            return
        mse = fit.mse(intermediate_result.x, valid)
        if mse < best["mse"]:
            best.update(w=intermediate_result.x.copy(), mse=mse, iteration=best["done"])
        elif best["done"] - best["iteration"] >= PATIENCE:
            raise StopIteration

    if P > 0 and max_iter > 0:
        result = minimize(fit, w0, jac=True, method="L-BFGS-B", callback=watch,
                          options={"maxiter": int(max_iter)})
        if valid is None:
            best.update(w=result.x.copy(), iteration=best["done"])
    w[:P] = best["w"][:2 * P].reshape(P, 2)
    inner_missing[learn] = best["w"][2 * P:]
    seconds = time.perf_counter() - start
    return RefineResult(
        iterations=best["done"], best_iteration=best["iteration"], fit_mse_before=fit_before,
        fit_mse_after=fit.mse(best["w"]), valid_mse_before=valid_before,
        valid_mse_after=fit.mse(best["w"], valid) if valid is not None else float("nan"),
        validation_rows=int(valid_rows.size), seconds=seconds, smoothness=float(smoothness))


__all__ = ["ENGINE_NAME", "Design", "Objective", "PATIENCE", "RefineResult", "SMOOTH_GRID",
           "design", "refine_weights", "roughness_matrix", "validation_split"]
