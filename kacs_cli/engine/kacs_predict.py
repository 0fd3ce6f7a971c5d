"""KACS prediction without learning (docs/algorithm.md section 4): the two stages without covering; an empty
match set contributes 0."""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.kacs_submodels import rule_input, submodel_input_table
from kacs_cli.engine.population import S_P

# Rows predicted together. The (submodels x rows) accumulators are rewritten by every rule of
# the chunk's pass, so they must stay in cache: at n = 20 (861 submodels) 128 rows keep them
# at 1.8 MB, where 1024 rows (14 MB) made an evaluation of 1000 rows 7 times slower (16 ms
# against 2.3 ms). The chunking does not change any sum: each (submodel, row) sum still adds
# its rules in population order.
PREDICT_CHUNK = 128


@njit(cache=True)
def predict_components(pop, X, n, psihat, zhat, phihat, inner_missing):
    """Prediction without learning: empty match sets contribute 0. Fills the components.
    Where an inner function has a learned value at a missing input (`inner_missing`, one per
    submodel, NaN: none; Model.inner_missing), a row missing that input takes it.

    Rule by rule over a chunk of rows, so that the inner loop runs over contiguous rows and
    vectorizes; each (submodel, row) sum still adds its rules in population order. The
    number of outer channels is zhat's column count.
    """
    n_q = zhat.shape[1]
    s_in = n * n_q
    s_all = s_in + n_q
    P = pop.scal[S_P]
    lo0 = pop.bounds.lo[0]
    hi0 = pop.bounds.hi[0]
    w = pop.weights.w
    F = pop.reals.F
    sub = pop.counts.sub
    sub_input = submodel_input_table(n, n_q)
    rows = X.shape[0]
    y_hat = np.zeros(rows)
    chunk = max(1, min(rows, PREDICT_CHUNK))
    columns = np.empty((n, chunk))
    channel = np.empty((n_q, chunk))
    sum_f = np.empty((s_all, chunk))
    sum_fp = np.empty((s_all, chunk))
    for r0 in range(0, rows, chunk):
        m = min(chunk, rows - r0)
        for p in range(n):
            for r in range(m):
                columns[p, r] = X[r0 + r, p]
        sum_f[:, :m] = 0.0
        sum_fp[:, :m] = 0.0
        # Branch-free: a non-matching rule adds zero to its submodel's sums.
        for i in range(P):
            s = sub[i]
            if s < s_in:
                _accumulate(sum_f[s], sum_fp[s], columns[sub_input[s]], m,
                            F[i], lo0[i], hi0[i], w[i, 0], w[i, 1])
        for r in range(m):
            for q in range(n_q):
                zq = 0.0
                for p in range(n):
                    s = q * n + p
                    psi = sum_fp[s, r] / sum_f[s, r] if sum_f[s, r] > 0.0 else 0.0
                    held = inner_missing[s]
                    if held == held and columns[sub_input[s], r] != columns[sub_input[s], r]:
                        psi = held
                    psihat[r0 + r, s] = psi
                    zq += psi
                zhat[r0 + r, q] = zq
                channel[q, r] = zq
        for i in range(P):
            s = sub[i]
            if s >= s_in:
                _accumulate(sum_f[s], sum_fp[s], channel[sub_input[s]], m,
                            F[i], lo0[i], hi0[i], w[i, 0], w[i, 1])
        for r in range(m):
            total = 0.0
            for q in range(n_q):
                s = s_in + q
                phi = sum_fp[s, r] / sum_f[s, r] if sum_f[s, r] > 0.0 else 0.0
                phihat[r0 + r, q] = phi
                total += phi
            y_hat[r0 + r] = total
    return y_hat


@njit(cache=True, inline="always")
def _accumulate(sum_f, sum_fp, z, m, f, lo, hi, w0, w1):
    """Add one rule's fitness and fitness-weighted prediction to its submodel, row by row. A
    missing input (NaN) matches and is read at the interval's centre (`rule_input`)."""
    for r in range(m):
        zr = z[r]
        fm = f * (((lo <= zr) & (zr <= hi)) | (zr != zr))
        sum_f[r] += fm
        sum_fp[r] += fm * (w0 + w1 * rule_input(zr, lo, hi))


def values_at_missing(pop, n: int, n_q: int, inner_missing: np.ndarray) -> np.ndarray:
    """Each inner function's value at a missing input (one per inner submodel): its learned
    value, or its rules' lines at their centres (the prediction of a row missing every input)."""
    X = np.full((1, n), np.nan)
    psihat = np.empty((1, n * n_q))
    predict_components(pop, X, n, psihat, np.empty((1, n_q)), np.empty((1, n_q)), inner_missing)
    return psihat[0]


# Rows whose components `predict` holds at once: the components of every row would take
# rows x (n + 2) m floats (at a million rows and n = 8, 0.7 GB with n + 1 channels and 1.4 GB
# with 2n + 1), where only the prediction is kept.
PREDICT_BLOCK = 4096


@njit(cache=True)
def predict(pop, X, n, n_q, inner_missing):
    """The predictions alone, a block of rows at a time (the same sums row by row)."""
    rows = X.shape[0]
    y_hat = np.empty(rows)
    block = max(1, min(rows, PREDICT_BLOCK))
    psihat = np.empty((block, n * n_q))
    zhat = np.empty((block, n_q))
    phihat = np.empty((block, n_q))
    for r0 in range(0, rows, block):
        m = min(block, rows - r0)
        y_hat[r0:r0 + m] = predict_components(pop, X[r0:r0 + m], n, psihat[:m], zhat[:m], phihat[:m],
                                              inner_missing)
    return y_hat
