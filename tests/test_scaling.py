"""The one min-max scaling (docs/algorithm.md section 1) against hand-computed values."""

import numpy as np

from kacs_cli.scaling import scale_inputs, scale_target, unscale_target


def test_inputs_go_to_the_unit_interval_and_a_constant_column_to_one_half():
    X = np.array([[0.0, 5.0, -2.0], [10.0, 5.0, 2.0], [2.5, 5.0, 0.0]])
    x_min, x_max = X.min(axis=0), X.max(axis=0)
    expected = np.array([[0.0, 0.5, 0.0], [1.0, 0.5, 1.0], [0.25, 0.5, 0.5]])
    np.testing.assert_array_equal(scale_inputs(X, x_min, x_max, clip=False), expected)
    outside = np.array([[-5.0, 7.0, 4.0]])
    np.testing.assert_array_equal(scale_inputs(outside, x_min, x_max, clip=False), [[-0.5, 0.5, 1.5]])
    np.testing.assert_array_equal(scale_inputs(outside, x_min, x_max, clip=True), [[0.0, 0.5, 1.0]])


def test_the_target_goes_to_minus_one_one_and_back():
    y = np.array([3.0, 7.0, 4.0, 11.0])
    scaled = scale_target(y, 3.0, 7.0, clip=False)
    np.testing.assert_array_equal(scaled, [-1.0, 1.0, -0.5, 3.0])
    np.testing.assert_array_equal(scale_target(y, 3.0, 7.0, clip=True), [-1.0, 1.0, -0.5, 1.0])
    np.testing.assert_array_equal(unscale_target(scaled, 3.0, 7.0), y)
