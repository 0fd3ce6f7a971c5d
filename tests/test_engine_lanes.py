"""Two-lane division and square root (engine/lanes.py) are, lane by lane, the scalar IEEE
operations: the KACS update relies on this for results identical to scalar code."""

import numpy as np
from numba import njit

from kacs_cli.engine.lanes import div_pair, sqrt_pair


@njit(cache=False, error_model="numpy")
def lanes(a, b, c, d):
    n = a.shape[0]
    out = np.empty((n, 4))
    for k in range(n):
        out[k, 0], out[k, 1] = div_pair(a[k], b[k], c[k], d[k])
        out[k, 2], out[k, 3] = sqrt_pair(a[k], c[k])
    return out


def operands(seed, size):
    rng = np.random.default_rng(seed)
    # Every bit pattern class: normal numbers over the whole exponent range, subnormals,
    # zeros of both signs, infinities, NaN and negative operands of the square root.
    x = rng.standard_normal(size) * 10.0 ** rng.integers(-300, 300, size)
    specials = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, np.inf, -np.inf, np.nan, 1.0,
                         -1.0, 1e308, 1 - 2**-53])
    x[: specials.size] = specials
    return x


def test_two_lane_results_are_bitwise_the_scalar_results():
    a, b, c, d = (operands(seed, 4000) for seed in range(4))
    c = np.roll(c, 5)  # special divisors meet other dividends
    out = lanes(a, b, c, d)
    with np.errstate(all="ignore"):
        expected = np.stack([a / c, b / d, np.sqrt(a), np.sqrt(c)], axis=1)
    # NaN payloads may differ; everything else must match bit for bit.
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(out), nan)
    assert np.array_equal(out[~nan].view(np.uint64), expected[~nan].view(np.uint64))
