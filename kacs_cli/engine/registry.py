"""The learner registry: the one place that lists learners and says what each one needs.

A learner is one engine module plus one `Learner` entry here. The driver (train.py), the
runner, the config schema, persistence and the report ask the registry; none of them names a
learner. Dispatch happens in Python, once per training call or evaluation point: numba cannot
cache a compiled function that takes another compiled function as an argument, and the
engines' machine code must stay cached (a cold compile costs about 40 s). So each learner
brings its own compiled training loop (`steps`) and the driver calls it between evaluations.

`register` adds a learner at run time (the tests' toy learner does so); the two built-in
ones (in kacs.py and xcsf.py, which import `Learner` from here) are registered on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

# The article compares XCSF (the baseline) with KACS (the proposal): the report's two-method
# tables, the default `methods` of a config and `kacs bench` use this pair.
BASELINE = "xcsf"
PROPOSED = "kacs"
DEFAULT_PAIR = (BASELINE, PROPOSED)


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
    submodels: Callable[[int], int]              # rule sets (submodel ids 0..S-1)
    # Per iteration, the match sets covering can fire in: (overall, inner, outer); None where
    # the learner has no such rate (the curve then holds NaN). SPEC section 7's cover rates.
    cover_slots: Callable[[int], tuple]
    new_buffers: Callable[[Any], dict]           # work buffers, set as attributes of the Model
    # steps(model, X, y, order, start, stop, reshuffle): iterations start..stop-1 of one
    # training call, in a compiled loop (no Python per sample); the row of iteration `it` is
    # order.next_row(order, it, reshuffle).
    steps: Callable[..., None]
    predict: Callable[[Any, Any], Any]           # predict(model, X) -> y_hat
    population_frame: Callable[[Any], dict]      # learner-specific columns, one row per rule
    # prepare(model, X_eval): before each training call (XCSF turns its row index on or off).
    prepare: Optional[Callable[[Any, Any], None]] = None
    # evaluate(model, X_eval): predictions at an evaluation point, when faster than `predict`.
    evaluate: Optional[Callable[[Any, Any], Any]] = None
    # components(model, X): (psihat, zhat, phihat, y_hat) of a Kolmogorov-Arnold learner.
    components: Optional[Callable[[Any, Any], tuple]] = None
    adaptive_budget: bool = False                # accepts `budget: adaptive` (budget.py)
    # Relative seconds per iteration given (n, N): only to start the longest runs first.
    cost: Callable[[int, int], float] = lambda n, N: N * (n + 1) * 1.5e-9


_LEARNERS: dict[str, Learner] = {}


def register(learner: Learner, *, replace: bool = False) -> Learner:
    """Add `learner` under its name (lower case, no '-': labels of variants use it)."""
    _builtins()
    name = learner.name
    if not name or name != name.strip().lower() or "-" in name:
        raise ValueError(f"a learner's name must be lower case without spaces or '-', got {name!r}")
    if name in _LEARNERS and not replace:
        raise ValueError(f"a learner named {name!r} is already registered")
    _LEARNERS[name] = learner
    return learner


def unregister(name: str) -> None:
    """Remove a learner added with `register` (the built-in pair stays)."""
    if name in DEFAULT_PAIR:
        raise ValueError(f"{name!r} is built in and cannot be removed")
    _LEARNERS.pop(name, None)


def names() -> tuple[str, ...]:
    """Every registered learner, the built-in pair first (baseline, proposed)."""
    _builtins()
    return tuple(_LEARNERS)


def get(name: str) -> Learner:
    _builtins()
    try:
        return _LEARNERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {', '.join(_LEARNERS)}, got {name!r}") from None


def label(name: str) -> str:
    """The display label of a learner, or of a labelled variant such as 'kacs-adaptive'."""
    _builtins()
    learner = _LEARNERS.get(name)
    return learner.label if learner is not None else name


def _builtins() -> None:
    # Imported here, not at the top: the engine modules import `Learner` from this module.
    if not _LEARNERS:
        from kacs_cli.engine import kacs, xcsf

        _LEARNERS[BASELINE] = xcsf.LEARNER
        _LEARNERS[PROPOSED] = kacs.LEARNER
