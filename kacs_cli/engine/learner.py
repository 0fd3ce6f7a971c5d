"""What a learner is: one `Learner` entry of the learner registry (engine/registry.py).

Each learner module (kacs.py, xcsf.py) declares its entry with this class; the registry
imports those modules and lists their entries. The entry is the one record of what a learner
supports (refinement, channels, compactions, the adaptive budget, bags, its own switches):
a hyperparameter that needs one of these (params.py `Declaration.needs`) is one the learner
acts on where its entry has it (`Learner.takes`), and every front end asks that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

# `Learner.takes` asked of a hyperparameter itself, not of one of its values.
ANY_VALUE = object()


@dataclass(frozen=True)
class Learner:
    """What the engine driver and the layers above need of one learner.

    Every callable taking `model` receives the engine `Model` (train.py): its `n`, `params`,
    `hp`, `capacity`, `pop`, `scratch`, `budget_state` and the buffers from `new_buffers`.
    """

    name: str                                    # configs, runs.csv, model files (lower case)
    label: str                                   # tables and messages ("KACS")
    width: Callable[[int], int]                  # D: condition dimensions of a rule, given n
    consequent: Callable[[int], int]             # K: weights of a rule (its parameter count)
    # rule sets (submodel ids 0..S-1), given n and the Hyperparameters (KACS's `channels`)
    submodels: Callable[[int, Any], int]
    # Per iteration, the match sets covering can fire in: (overall, inner, outer), given n and
    # the Hyperparameters; None where the learner has no such rate (the curve then holds
    # NaN). docs/algorithm.md section 7's cover rates.
    cover_slots: Callable[[int, Any], tuple]
    new_buffers: Callable[[Any], dict]           # work buffers, set as attributes of the Model
    # steps(model, X, y, order, start, stop, reshuffle): iterations start..stop-1 of one
    # training call, in a compiled loop (no Python per sample); the row of iteration `it` is
    # order.next_row(order, it, reshuffle). `order` holds row indices of X, not always a
    # permutation of them (weighted rows repeat: weights.WeightedOrder), so a loop reads its
    # rows through next_row only. A learner with `phases` also takes clock=, an
    # int64 array to which each phase's cycles are added (kacs.py, cycles.py).
    steps: Callable[..., None]
    predict: Callable[[Any, Any], Any]           # predict(model, X) -> y_hat
    population_frame: Callable[[Any], dict]      # learner-specific columns, one row per rule
    # prepare(model, X_eval): before each training call (XCSF turns its row index on or off).
    prepare: Optional[Callable[[Any, Any], None]] = None
    # evaluate(model, X_eval): predictions at an evaluation point, when faster than `predict`.
    evaluate: Optional[Callable[[Any, Any], Any]] = None
    # components(model, X): (psihat, zhat, phihat, y_hat) of a Kolmogorov-Arnold learner.
    components: Optional[Callable[[Any, Any], tuple]] = None
    # refine(model, X, y, max_iter=, pull=, validation=, seed=, smoothness=) -> refine.RefineResult: the
    # full-batch refit of every consequent weight with the rule structure fixed (refine.py);
    # given weighted rows, also weight= (their sample weights, weights.py), and given a row cap
    # other than row_caps.REFINE_MAX_ROWS (a capacity-search candidate's), also max_rows=.
    refine: Optional[Callable[..., Any]] = None
    # compact(model, X, y, method, rules=, tolerance=, seed=) -> compaction.CompactionResult:
    # the model made smaller in place; `compactions` names the methods it knows. Given
    # weighted rows, also weight= as for refine.
    compact: Optional[Callable[..., Any]] = None
    compactions: tuple = ()
    # merge(models, make) -> Model: the one model whose prediction is the mean of the trained
    # single models' (bagging.py); make(params) gives it empty. None: the learner has no bags.
    merge: Optional[Callable[..., Any]] = None
    adaptive_budget: bool = False                # accepts `budget: adaptive` (budget.py)
    channels: bool = False                       # accepts `channels` (outer channel count m)
    # The hyperparameters only this learner's engine reads (params.py, needs="own_switches"),
    # such as XCSF's article_xcsf_inputs.
    own_switches: tuple = ()
    # (key, label) of the phases of an iteration that steps(clock=) counts cycles in; empty:
    # the learner has no phase profile (`kacs bench --profile`).
    phases: tuple = ()
    # Relative seconds per iteration given (n, N): only to start the longest runs first.
    cost: Callable[[int, int], float] = lambda n, N: N * (n + 1) * 1.5e-9

    def takes(self, declared, value=ANY_VALUE) -> bool:
        """Whether this learner acts on the declared hyperparameter (params.py `Declaration`),
        or, given `value`, on that value of it (a compaction: one the learner knows). A value
        at its default is always taken: it asks nothing of a learner."""
        if declared.needs is None or (value is not ANY_VALUE and value == declared.default):
            return True
        return NEEDS[declared.needs](self, declared.name, value)


def _knows_compaction(learner: Learner, name: str, value) -> bool:
    # The compaction itself needs a method the learner knows, its settings that it knows one.
    return value in learner.compactions if isinstance(value, str) else bool(learner.compactions)


# What a hyperparameter may need of a learner (params.py `Declaration.needs`), each read from the
# learner's entry: need -> (learner, hyperparameter, value or ANY_VALUE) -> whether it has it.
NEEDS: dict[str, Callable[[Learner, str, Any], bool]] = {
    "adaptive_budget": lambda learner, name, value: learner.adaptive_budget,
    "channels": lambda learner, name, value: learner.channels,
    "refine": lambda learner, name, value: learner.refine is not None,
    "compactions": _knows_compaction,
    "merge": lambda learner, name, value: learner.merge is not None,
    "own_switches": lambda learner, name, value: name in learner.own_switches,
}
