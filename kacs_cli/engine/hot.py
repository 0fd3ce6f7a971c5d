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

The environment switch KACS_PLAIN_NUMBA (cache.py) compiles the engine without some or all
of three kinds of hand optimisation, each replaced by its plain numba form, to time what each
kind buys in one sitting; every setting computes the same numbers (`PLAIN`: the kinds dropped):
- "nrt" (`PLAIN_NRT`): the private flag `_nrt=False` of `HOT` (dropped);
- "intrinsics" (`PLAIN_INTRINSICS`): the hand-written LLVM intrinsics of lanes.py, `div_pair`
  and `sqrt_pair` (KACS's rule update, kacs._update_rule and kacs_update.py), `float_bits`
  (the antecedent key, identical.py) and `trailing_zeros` (XCSF's row index);
- "specialisations" (`PLAIN_SPECIALISATIONS`): the call sites duplicated for nu = 1 and
  nu != 1 (kacs.train_step's rule update: one call with nu tested per rule), and deletion's
  loops duplicated per deletion vote (deletion.all_votes, deletion.deletion_ga: one loop with
  the vote tested per rule).
Not switched: cycles.py's counter intrinsic, compiled only into the profile's
specialization (`kacs bench --profile`), never into an ordinary run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.cache import plain_kinds

PLAIN = plain_kinds()
PLAIN_NRT = "nrt" in PLAIN
PLAIN_INTRINSICS = "intrinsics" in PLAIN
PLAIN_SPECIALISATIONS = "specialisations" in PLAIN
HOT = dict(cache=True, error_model="numpy") if PLAIN_NRT else dict(cache=True, _nrt=False, error_model="numpy")


@njit(**HOT, inline="always")
def index_at(indices, k):
    """indices[k] as an unsigned integer, for use as an index.

    Indexing with a signed integer makes numba emit the wraparound for negative indices on
    every access; for indices read from an array LLVM cannot prove them non-negative, and
    that wraparound would be about a third of the instructions of the KACS update loop."""
    return np.uint64(indices[k])
