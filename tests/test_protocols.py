"""Protocols and per-run splits (docs/algorithm.md sections 1 and 9)."""

import math

import numpy as np
import pytest

from kacs_cli.errors import UserError
from kacs_cli.experiments.data.datasets import load_dataset
from kacs_cli.experiments.data.protocols import PROTOCOLS, Protocol, make_split, run_plan


def toy(rows=200, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 3)) * [1.0, 10.0, 100.0] + [0.0, 5.0, -50.0]
    y = X @ [1.0, -0.5, 0.01] + rng.normal(size=rows)
    return X, y


def test_protocol_table():
    assert PROTOCOLS["main"] == Protocol("main", 30, 0.9, "minmax", "mae")
    assert PROTOCOLS["alternative"] == Protocol("alternative", 64, 0.75, "standard", "mse", splits=8, seeds=8)


def test_run_plan_main():
    plan = run_plan("main")
    assert plan == [(r, r, r) for r in range(30)]
    assert run_plan("main", runs=3) == [(0, 0, 0), (1, 1, 1), (2, 2, 2)]
    assert run_plan(PROTOCOLS["main"], runs=32)[-1] == (31, 31, 31)


def test_run_plan_alternative():
    plan = run_plan("alternative")
    assert len(plan) == 64
    assert [r for r, _, _ in plan] == list(range(64))
    assert plan[0] == (0, 0, 0)
    assert plan[7] == (7, 0, 7)
    assert plan[8] == (8, 1, 0)
    assert plan[19] == (19, 2, 3)
    assert plan[63] == (63, 7, 7)
    assert {(s, k) for _, s, k in plan} == {(s, k) for s in range(8) for k in range(8)}
    assert run_plan("Alternative", runs=10) == plan[:10]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("alternative", 65), "use at most 64"),
        (("main", 0), "runs must be an integer >= 1"),
        (("nested", None), "unknown protocol 'nested'; choose one of main, alternative"),
    ],
)
def test_run_plan_errors(args, fragment):
    with pytest.raises(UserError) as info:
        run_plan(*args)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "protocol, rows, n_train",
    [("main", 1503, 1352), ("main", 1000, 900), ("main", 768, 691), ("alternative", 1503, 1127),
     ("alternative", 1030, 772), ("main", 9568, 8611)],
)
def test_split_sizes_floor(protocol, rows, n_train):
    X = np.arange(rows * 2, dtype=float).reshape(rows, 2)
    y = np.sin(np.arange(rows))
    split = make_split(X, y, protocol, split_seed=0)
    assert len(split.train_index) == n_train == math.floor(PROTOCOLS[protocol].train_fraction * rows)
    assert len(split.test_index) == rows - n_train
    assert split.X_train.shape == (n_train, 2) and split.X_test.shape == (rows - n_train, 2)
    assert split.y_train.shape == (n_train,) and split.y_test.shape == (rows - n_train,)


def test_split_is_a_partition_from_the_seeded_permutation():
    X, y = toy()
    split = make_split(X, y, "main", split_seed=5)
    perm = np.random.default_rng(5).permutation(200)
    np.testing.assert_array_equal(split.train_index, perm[:180])
    np.testing.assert_array_equal(split.test_index, perm[180:])
    assert set(split.train_index).isdisjoint(split.test_index)
    assert sorted(np.concatenate([split.train_index, split.test_index])) == list(range(200))


def test_split_deterministic_per_seed_and_different_across_seeds():
    X, y = toy()
    a = make_split(X, y, "main", 4)
    b = make_split(X, y, "main", 4)
    c = make_split(X, y, "main", 5)
    for name in ("X_train", "y_train", "X_test", "y_test", "train_index", "test_index"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.test_index, c.test_index)


def test_main_scaling_fitted_on_train_only():
    X, y = toy()
    # An extreme row: once it lands in the test split, its scaled input and target exceed
    # the train range and must be clipped.
    X[17] = [50.0, 1e4, 1e5]
    y[17] = 1e6
    seed = next(s for s in range(100) if 17 in make_split(X, y, "main", s).test_index)
    split = make_split(X, y, "main", seed)
    Xtr, ytr = X[split.train_index], y[split.train_index]
    lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
    np.testing.assert_array_equal(split.X_train.min(axis=0), 0.0)
    np.testing.assert_array_equal(split.X_train.max(axis=0), 1.0)
    np.testing.assert_allclose(split.X_train, (Xtr - lo) / (hi - lo), rtol=0, atol=1e-15)
    expected_test = np.clip((X[split.test_index] - lo) / (hi - lo), 0.0, 1.0)
    np.testing.assert_allclose(split.X_test, expected_test, rtol=0, atol=1e-15)
    row = list(split.test_index).index(17)
    np.testing.assert_array_equal(split.X_test[row], [1.0, 1.0, 1.0])
    assert split.X_test.min() >= 0.0 and split.X_test.max() <= 1.0
    # Target: [-1, 1] with the train min/max; the outlier is clipped to 1.
    assert split.y_train.min() == -1.0 and split.y_train.max() == 1.0
    np.testing.assert_allclose(split.y_train, 2 * (ytr - ytr.min()) / (ytr.max() - ytr.min()) - 1, atol=1e-15)
    assert split.y_test[row] == 1.0
    assert split.y_test.min() >= -1.0 and split.y_test.max() <= 1.0
    assert split.scaling["y_min"] == ytr.min() and split.scaling["y_max"] == ytr.max()
    np.testing.assert_array_equal(split.scaling["x_min"], lo)
    np.testing.assert_array_equal(split.scaling["x_max"], hi)
    np.testing.assert_allclose(split.inverse_target(split.y_train), ytr, rtol=1e-12)


def test_alternative_standardizes_with_population_std_and_no_clipping():
    X, y = toy(rows=400)
    y[3] = 1e3
    seed = next(s for s in range(100) if 3 in make_split(X, y, "alternative", s).test_index)
    split = make_split(X, y, "alternative", seed)
    assert len(split.train_index) == 300
    ytr = y[split.train_index]
    assert abs(split.y_train.mean()) < 1e-12
    assert split.y_train.std(ddof=0) == pytest.approx(1.0, abs=1e-12)
    assert split.scaling["y_std"] == pytest.approx(np.sqrt(np.mean((ytr - ytr.mean()) ** 2)), rel=1e-12)
    row = list(split.test_index).index(3)
    assert split.y_test[row] == pytest.approx((1e3 - ytr.mean()) / ytr.std(), rel=1e-12)
    assert split.y_test[row] > 10  # standardized, not clipped
    np.testing.assert_array_equal(split.X_train.min(axis=0), 0.0)
    np.testing.assert_allclose(split.inverse_target(split.y_test), y[split.test_index], rtol=1e-12)


def test_constant_column_maps_to_half():
    X, y = toy()
    X[:, 1] = 7.0
    split = make_split(X, y, "main", 0)
    np.testing.assert_array_equal(split.X_train[:, 1], 0.5)
    np.testing.assert_array_equal(split.X_test[:, 1], 0.5)


def test_arrays_are_float64_c_contiguous():
    X, y = toy()
    split = make_split(np.asfortranarray(X.astype(np.float32)), y.astype(np.float32), "main", 1)
    for name in ("X_train", "y_train", "X_test", "y_test"):
        array = getattr(split, name)
        assert array.dtype == np.float64 and array.flags["C_CONTIGUOUS"], name


def test_train_fraction_override():
    X, y = toy(rows=100)
    split = make_split(X, y, "main", 0, train_fraction=0.5)
    assert len(split.train_index) == 50


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"train_fraction": 1.0}, "strictly between 0 and 1"),
        ({"split_seed": -1}, "split seed must be a non-negative integer"),
        ({"protocol": "kfold"}, "unknown protocol 'kfold'"),
    ],
)
def test_split_errors(kwargs, fragment):
    X, y = toy()
    args = {"protocol": "main", "split_seed": 0} | kwargs
    with pytest.raises(UserError) as info:
        make_split(X, y, **args)
    assert fragment in str(info.value)


def test_split_constant_train_target_is_a_user_error():
    X, y = toy(rows=20)
    y[:] = 2.0
    with pytest.raises(UserError, match="target is constant"):
        make_split(X, y, "alternative", 0)


def test_real_dataset_split_is_paired(shared_data_dir):
    X, y = load_dataset("cs", shared_data_dir)
    # XCSF and KACS of run r call make_split independently with split seed r.
    first = make_split(X, y, "main", 12)
    second = make_split(X.copy(), y.copy(), "main", 12)
    np.testing.assert_array_equal(first.X_train, second.X_train)
    np.testing.assert_array_equal(first.y_test, second.y_test)
    assert first.X_train.shape == (927, 8) and first.X_test.shape == (103, 8)
