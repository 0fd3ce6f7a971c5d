"""The engine's overloads (cycles.now and cycles.lap, layout.new_slot) keep every store of the
code around them.

numba inlines an `@overload(..., inline="always")` in a typed pass that runs a dead-code
elimination afterwards; its alias analysis can take stores into arrays reached through a
tuple argument for stores into dead locals once the inlined call has split a block, and
deletes them without a word (engine/hot.py). So the engine's overloads are compiled as
functions of their own (`hot.OVERLOAD`) and left to LLVM to inline. The functions below
have the shape that loses its stores when an overload in it is inlined by numba: a call to
the overload, then stores through a tuple field by an `inline="always"` helper (with
`inline="always"` on cycles.now and cycles.lap, `profiled_step` stores nothing at all).
"""

from __future__ import annotations

import ast
from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.cache import ENGINE_DIR
from kacs_cli.engine.cycles import lap, now
from kacs_cli.engine.layout import new_layout, new_slot
from kacs_cli.engine.population import S_P

Kids = namedtuple("Kids", ["a", "F"])
Scratch = namedtuple("Scratch", ["children"])
Pop = namedtuple("Pop", ["scal"])


@njit(inline="always")
def _fill(kids, c, v):
    for j in range(kids.a.shape[1]):
        kids.a[c, j] = v
    kids.F[c] = 2.0 * v


@njit
def profiled_step(clock, sc, v):
    tick = now(clock)
    kids = sc.children
    _fill(kids, 0, v)
    _fill(kids, 1, v + 1.0)
    lap(clock, 0, tick)


@njit
def step_with_new_slot(pop, layout, sub, sc, v):
    i = new_slot(pop, layout, sub)
    kids = sc.children
    _fill(kids, 0, v)
    _fill(kids, 1, v + 1.0)
    return i


def _scratch():
    return Scratch(Kids(np.zeros((2, 3)), np.zeros(2)))


def _assert_filled(sc, v):
    assert sc.children.a.tolist() == [[v] * 3, [v + 1.0] * 3]
    assert sc.children.F.tolist() == [2.0 * v, 2.0 * (v + 1.0)]


def test_the_cycle_counter_keeps_the_stores_around_it_with_and_without_a_clock():
    for clock in (None, np.zeros(1, np.int64)):
        sc = _scratch()
        profiled_step(clock, sc, 1.5)
        _assert_filled(sc, 1.5)


def test_new_slot_keeps_the_stores_after_it_for_xcsf_and_for_kacs():
    pop = Pop(np.zeros(8, np.int64))
    pop.scal[S_P] = 5
    sc = _scratch()
    # XCSF (no layout): the population's next slot.
    assert step_with_new_slot(pop, None, 0, sc, 2.5) == 5
    _assert_filled(sc, 2.5)
    assert pop.scal[S_P] == 6
    # KACS: submodel 1's segment [4, 7) has its next spare slot at 4.
    layout = new_layout(2, 8, 0.9, 0.999)
    layout.base[:] = [0, 4, 7]
    layout.end[:] = [2, 4]
    sc = _scratch()
    assert step_with_new_slot(pop, layout, 1, sc, -1.0) == 4
    _assert_filled(sc, -1.0)
    assert layout.end.tolist() == [2, 5] and pop.scal[S_P] == 6


def test_no_engine_overload_is_inlined_by_numba():
    """The rule of engine/hot.py, for overloads added later: none asks numba to inline it."""
    overloaded, inlined = set(), []
    for path in sorted(ENGINE_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "overload":
                overloaded.add(node.args[0].id)
                if any(k.arg == "inline" for k in node.keywords):
                    inlined.append(f"{path.name}:{node.lineno}")
    assert not inlined, inlined
    # The scan sees the engine's overloads at all.
    assert {"now", "lap", "new_slot"} <= overloaded
