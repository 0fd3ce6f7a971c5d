"""The rule updates shared by KACS and XCSF (docs/algorithm.md section 3): accuracy, fitness within a match
set, Adam on a rule's weights, and the numerosity of a match set."""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT, index_at


@njit(**HOT, inline="always")
def accuracy(eps, hp):
    return accuracy_given(eps, hp.alpha * hp.e0 / eps, hp)


@njit(**HOT, inline="always")
def accuracy_given(eps, alpha_e0_over_eps, hp):
    """kappa from eps, with alpha e0 / eps (the usual nu = 1 case) computed by the caller.
    At nu = 1 it is `linear_accuracy`, a select: in a match set accurate and inaccurate
    rules alternate, and a branch on eps < e0 would mispredict."""
    e0 = hp.e0
    if hp.nu == 1.0:
        return linear_accuracy(eps, alpha_e0_over_eps, e0)
    return 1.0 if eps < e0 else hp.alpha * (eps / e0) ** (-hp.nu)


@njit(**HOT, inline="always")
def linear_accuracy(eps, alpha_e0_over_eps, e0):
    """kappa at nu = 1: 1 below e0, else alpha e0 / eps (given); a select, no call."""
    return 1.0 if eps < e0 else alpha_e0_over_eps


@njit(**HOT, inline="always")
def adam_bias(b1t, b2t, i, b1, b2):
    """Advance rule i's running powers beta1^t, beta2^t; return the two bias denominators.

    The step count t is rule-local: the number of updates this rule has received, this one
    included. A running product is one multiply where a power is a libm call.
    """
    p1 = b1t[i] * b1
    p2 = b2t[i] * b2
    b1t[i] = p1
    b2t[i] = p2
    return 1.0 - p1, 1.0 - p2


@njit(**HOT, inline="always")
def adam_step(w, m, v, b1t, b2t, i, grad, hp):
    """One Adam step on rule i with gradient vector `grad` (any number of weights)."""
    b1 = hp.beta1
    b2 = hp.beta2
    d1, d2 = adam_bias(b1t, b2t, i, b1, b2)
    inv_d1 = 1.0 / d1
    inv_d2 = 1.0 / d2
    eta = hp.eta
    eps_adam = hp.eps_adam
    for j in range(grad.shape[0]):
        g = grad[j]
        mj = b1 * m[i, j] + (1.0 - b1) * g
        vj = b2 * v[i, j] + (1.0 - b2) * g * g
        m[i, j] = mj
        v[i, j] = vj
        w[i, j] -= eta * (mj * inv_d1) / (np.sqrt(vj * inv_d2) + eps_adam)


@njit(**HOT, inline="always")
def adam_moments(m, v, j, j1, g0, g1, b1, b2):
    """Adam's moments of a rule's two weights, stored flat (the pair at j and j1), moved by
    the gradient (g0, g1); returns the new m0, m1, v0, v1 (KACS's update)."""
    m0 = b1 * m[j] + (1.0 - b1) * g0
    m1 = b1 * m[j1] + (1.0 - b1) * g1
    v0 = b2 * v[j] + (1.0 - b2) * g0 * g0
    v1 = b2 * v[j1] + (1.0 - b2) * g1 * g1
    m[j] = m0
    m[j1] = m1
    v[j] = v0
    v[j1] = v1
    return m0, m1, v0, v1


@njit(**HOT, inline="always")
def update_fitness(eps, kappa, F, num, members, start, stop, hp):
    """kappa and F within one match set; skipped when every member has been deleted.

    Returns by how much the fitness sum over live rules moved: the population keeps that sum
    running (population.fsum) instead of summing every slot after each update. A member
    deleted before the update (num = 0) left the sum when it died, so its change is not
    counted."""
    acc_sum = 0.0
    for k in range(start, stop):
        i = index_at(members, k)
        kap = accuracy(eps[i], hp)
        kappa[i] = kap
        acc_sum += kap * num[i]
    if acc_sum <= 0.0:
        return 0.0
    beta = hp.beta
    inv_sum = 1.0 / acc_sum
    moved = 0.0
    for k in range(start, stop):
        i = index_at(members, k)
        change = beta * (kappa[i] * num[i] * inv_sum - F[i])
        F[i] += change
        if num[i] > 0:
            moved += change
    return moved


@njit(**HOT, inline="always")
def set_numerosity(num, members, start, stop):
    total = 0
    for k in range(start, stop):
        total += num[index_at(members, k)]
    return total
