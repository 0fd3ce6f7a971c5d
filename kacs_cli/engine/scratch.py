"""The shared operators' work space, allocated once per model: nothing on the training path
allocates (see hot.py)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from kacs_cli.engine.deletion import VOTE_BLOCK
from kacs_cli.engine.population import new_children

# `children`: the two offspring of a GA event (ga.py); deletion's votes and block sums and its
# incremental state (deletion.py: del_state, del_ref, cand, touched, dirty); the rules that
# died in the current iteration (`dead`, S_DEATHS of them; population.compact); the
# submodels whose numerosities deletion changed during a GA phase (`stale`, one flag per
# submodel); the antecedent keys of identical.py (`key`, one per rule slot, valid while
# key_state[0] == 1); XCSF's gradient and input offsets (`grad`, `dx`).
# Every call between compiled functions passes each array of its tuple arguments field by
# field, and the GA calls several functions per offspring: a field added here costs KACS time
# on every one of those calls, so what only XCSF needs lives in its own tuple (RowIndex).
Scratch = namedtuple(
    "Scratch",
    ["children", "votes", "blocks", "grad", "dx", "del_state", "del_ref", "cand", "touched",
     "dirty", "dead", "stale", "key", "key_state"],
)


def new_scratch(capacity: int, D: int, K: int, n_sets: int = 1) -> Scratch:
    return Scratch(
        children=new_children(D, K), grad=np.zeros(K), dx=np.zeros(D),
        # Votes are summed in whole blocks: room for the last block's padding.
        votes=np.zeros(capacity + VOTE_BLOCK), blocks=np.zeros(capacity // VOTE_BLOCK + 2),
        del_state=np.zeros(4, np.int64), del_ref=np.zeros(1), cand=np.zeros(capacity, np.int64),
        touched=np.zeros(16, np.int64), dirty=np.zeros(capacity // VOTE_BLOCK + 2, np.uint8),
        dead=np.zeros(capacity, np.int64), stale=np.zeros(n_sets, np.uint8),
        key=np.zeros(capacity, np.uint64), key_state=np.zeros(1, np.int64),
    )
