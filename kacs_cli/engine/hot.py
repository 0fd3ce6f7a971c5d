"""Compilation options and helpers of the engine's per-iteration (hot) code.

Functions on the training path are compiled with the options `HOT`:
- `_nrt=False`: they allocate nothing, and without numba's reference counting a call that
  passes the Population (19 arrays) costs nothing instead of ~40 atomic increments and
  decrements, which would be a large share of an iteration made of many such calls.
  Functions that allocate (prediction, the driver) keep it.
- `error_model="numpy"`: a division is one instruction rather than a test for a Python
  ZeroDivisionError first, and a loop with divisions can be vectorized; no division on these
  paths can have a zero divisor.
The GA's functions (ga.run_ga and what it calls per offspring) are inlined: a call between
compiled functions passes every array of its tuple arguments (Population, Scratch) field by
field, and KACS makes about 25 GA events and 50 offspring per iteration at n = 20.

An `@overload` (a function whose code depends on an argument's type, such as `layout` None
for XCSF) is never inlined by numba (`inline="always"`) but compiled with `OVERLOAD` and left
to LLVM, which inlines such small functions as well. numba's typed pass that inlines an
overload runs a dead-code elimination afterwards whose alias analysis visits blocks in
storage order, not control-flow order: once an inlined call splits a block, a store into an
array reached through a tuple argument (`kids.reals.F[c] = ...`) can be taken for a store
into a dead local and deleted, silently (a call to cycles.now added to ga.run_ga as an inlined
overload deletes make_child's fitness store). The njit `inline="always"` path runs no such
elimination.

The engine is otherwise plain numba: a hand optimisation stays only where one sitting shows
it buys at least 10 % (docs/performance.md, "The engines in one sitting"). `_nrt=False` is
the one that does, and the environment switch KACS_PLAIN_NUMBA (cache.py) drops it, to time
it again in one sitting; it computes the same numbers (`PLAIN`: the kinds dropped):
- "nrt" (`PLAIN_NRT`; also "1"): compile `HOT` without the private flag `_nrt=False`.
No hand-written LLVM intrinsic and no call site or loop duplicated to specialise on a
constant (nu = 1, the deletion vote): the same sitting measured no gain from them. The one
intrinsic, cycles.py's cycle counter, is compiled only into the profile's specialisation
(`kacs bench --profile`), never into an ordinary run, so the switch leaves it alone.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.cache import plain_kinds

PLAIN = plain_kinds()
PLAIN_NRT = "nrt" in PLAIN
HOT = dict(cache=True, error_model="numpy") if PLAIN_NRT else dict(cache=True, _nrt=False, error_model="numpy")
# The options of an overload's implementations: HOT's but `cache`, as numba compiles them
# into their callers, whose cache keeps them.
OVERLOAD = {key: value for key, value in HOT.items() if key != "cache"}


@njit(**HOT, inline="always")
def index_at(indices, k):
    """indices[k] as an unsigned integer, for use as an index.

    Indexing with a signed integer makes numba emit the wraparound for negative indices on
    every access; for indices read from an array LLVM cannot prove them non-negative, and
    that wraparound would be about a third of the instructions of the KACS update loop."""
    return np.uint64(indices[k])
