"""The declaration of the per-rule fields (engine/population.py) and everything that loops over
it: copying a rule, the GA's children, permuting and compacting the population, model files.

Every check fills every declared field with distinct values and asks each operation to carry
all of them, so a field added to a group is covered here without being named.
"""

import numpy as np
import pytest

from kacs_cli.estimators import persistence
from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine.population import (
    FIELD_NAMES, GROUPS, S_P, S_TOTAL, STATE_FIELDS, Children, Population, copy_rule,
    copy_stored, new_children, new_population, permute_rules, rule_fields,
)
from test_engine_support import refresh_fitness_sum

CAPACITY, D, K = 12, 3, 4


def filled(seed, capacity=CAPACITY):
    """A population whose every per-rule entry holds a distinct value (integers for integers)."""
    pop = new_population(capacity, D, K, N=1000)
    rng = np.random.default_rng(seed)
    for name, arr in rule_fields(pop).items():
        if arr.dtype.kind == "i":
            arr[...] = rng.permutation(arr.size).reshape(arr.shape) + 1
        else:
            arr[...] = rng.random(arr.shape)
    return pop


def rule(pop, i):
    return {name: np.array(arr[i]) for name, arr in rule_fields(pop).items()}


def assert_same_rule(got, expected, names):
    for name in names:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_each_field_is_declared_once_in_a_group_of_one_shape_and_dtype():
    assert len(FIELD_NAMES) == len(set(FIELD_NAMES))
    assert Population._fields == tuple(g.name for g in GROUPS) + (*STATE_FIELDS, "budget")
    assert Children._fields == tuple(g.name for g in GROUPS if not g.derived)
    pop = new_population(CAPACITY, D, K, N=50)
    shapes = {"rules": (CAPACITY,), "rules x D": (CAPACITY, D), "rules x K": (CAPACITY, K),
              "D x rules": (D, CAPACITY)}
    for g in GROUPS:
        group = getattr(pop, g.name)
        assert type(group) is g.fields
        for arr in group:
            assert arr.dtype == g.dtype and arr.shape == shapes[g.layout], g.name
    # Integers stay integers, in the population and in the GA's children.
    for rules in (pop, new_children(D, K)):
        for name in ("exp", "num", "ts", "sub"):
            assert rule_fields(rules)[name].dtype == np.int64, name
    assert pop.budget.dtype == np.int64 and pop.budget[0] == 50


def test_copy_rule_carries_every_field():
    src, dst = filled(1), filled(2)
    expected = rule(src, 5)
    untouched = rule(dst, 3)
    copy_rule(src, 5, dst, 7)
    assert_same_rule(rule(dst, 7), expected, FIELD_NAMES)
    assert_same_rule(rule(dst, 3), untouched, FIELD_NAMES)


def test_children_carry_every_field_but_the_derived_bounds():
    pop = filled(3)
    kids = new_children(D, K)
    stored = [name for g in GROUPS if not g.derived for name in g.fields._fields]
    expected = rule(pop, 4)
    copy_stored(pop, 4, kids, 1)
    assert_same_rule(rule(kids, 1), expected, stored)
    before = rule(pop, 9)
    copy_stored(kids, 1, pop, 9)
    after = rule(pop, 9)
    assert_same_rule(after, expected, stored)
    derived = [name for g in GROUPS if g.derived for name in g.fields._fields]
    assert_same_rule(after, before, derived)  # left to insertion (ga.insert_child)


def test_permute_rules_moves_every_field():
    pop = filled(4)
    P = 10
    before = {name: np.array(arr) for name, arr in rule_fields(pop).items()}
    order = np.random.default_rng(5).permutation(P)
    permute_rules(pop, order, P, np.zeros(CAPACITY), np.zeros(CAPACITY, np.int64))
    for name, arr in rule_fields(pop).items():
        np.testing.assert_array_equal(arr[:P], before[name][order], err_msg=name)
        np.testing.assert_array_equal(arr[P:], before[name][P:], err_msg=name)


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_model_files_carry_every_field(method, tmp_path):
    model = Model(method, 2, Hyperparameters(N=100))
    rng = np.random.default_rng(6)
    P = 9
    for name, arr in rule_fields(model.pop).items():
        if name == "num":
            arr[:P] = rng.integers(1, 4, P)
        elif name == "sub":
            arr[:P] = rng.integers(0, model.n_submodels, P)
        elif arr.dtype.kind == "i":
            arr[:P] = rng.integers(0, 10**6, arr[:P].shape)
        else:
            arr[:P] = rng.random(arr[:P].shape)
    model.pop.scal[S_P] = P
    model.pop.scal[S_TOTAL] = int(model.pop.counts.num[:P].sum())
    refresh_fitness_sum(model.pop)
    loaded = persistence.load_model(persistence.save(model, tmp_path / "m.kacs"))
    saved = rule_fields(model.pop)
    for name, arr in rule_fields(loaded.pop).items():
        np.testing.assert_array_equal(arr[:P], saved[name][:P], err_msg=name)
    for name in STATE_FIELDS:
        np.testing.assert_array_equal(getattr(loaded.pop, name), getattr(model.pop, name))
