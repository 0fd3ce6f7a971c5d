"""The learner registry: the one place that lists learners and says what each one needs.

A learner is one engine module plus one `Learner` entry here. The driver (train.py), the
runner, the config schema, persistence and the report ask the registry; none of them names a
learner. Dispatch happens in Python, once per training call or evaluation point: numba cannot
cache a compiled function that takes another compiled function as an argument, and the
engines' machine code must stay cached (a cold compile costs about 40 s). So each learner
brings its own compiled training loop (`steps`) and the driver calls it between evaluations.

An entry is a `Learner` (engine/learner.py says what each field is). The two built-in
entries, declared in kacs.py and xcsf.py, are listed in `_LEARNERS` when this module is
imported; `register` adds a learner at run time (the tests' toy learner does so).
"""

from __future__ import annotations

from kacs_cli.engine import kacs, xcsf
from kacs_cli.engine.learner import Learner

# The article compares XCSF (the baseline) with KACS (the proposal): the report's two-method
# tables, the default `methods` of a config and `kacs bench` use this pair.
BASELINE = "xcsf"
PROPOSED = "kacs"
DEFAULT_PAIR = (BASELINE, PROPOSED)


# The built-in pair; `register` adds others at run time.
_LEARNERS: dict[str, Learner] = {BASELINE: xcsf.LEARNER, PROPOSED: kacs.LEARNER}


def register(learner: Learner, *, replace: bool = False) -> Learner:
    """Add `learner` under its name (lower case, no '-': labels of variants use it)."""
    name = learner.name
    if not name or name != name.strip().lower() or "-" in name:
        raise ValueError(f"a learner's name must be lower case without spaces or '-', got {name!r}")
    if name in _LEARNERS and not replace:
        raise ValueError(f"a learner named {name!r} is already registered")
    _LEARNERS[name] = learner
    return learner


def names() -> tuple[str, ...]:
    """Every registered learner, the built-in pair first (baseline, proposed)."""
    return tuple(_LEARNERS)


def get(name: str) -> Learner:
    try:
        return _LEARNERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {', '.join(_LEARNERS)}, got {name!r}") from None


def label(name: str) -> str:
    """The display label of a learner, or of a labelled variant such as 'kacs-adaptive'."""
    learner = _LEARNERS.get(name)
    return learner.label if learner is not None else name


def channels_refusal(label: str) -> str:
    """Why `channels` is refused for the learner labelled `label`."""
    able = [learner.label for learner in _LEARNERS.values() if learner.channels]
    return (f"channels (the number of outer channels) is defined for {', '.join(able)} only; "
            f"drop it from {label}")


def adaptive_refusal(label: str) -> str:
    """Why `budget: adaptive` is refused for the learner labelled `label`."""
    able = [learner.label for learner in _LEARNERS.values() if learner.adaptive_budget]
    return f"budget: adaptive is defined for {', '.join(able)} only; {label} keeps a fixed N"
