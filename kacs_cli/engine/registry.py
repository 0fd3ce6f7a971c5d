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
from kacs_cli.engine.learner import ANY_VALUE, Learner
from kacs_cli.engine.params import DECLARATIONS, DECLARED, preset as preset_settings

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


# ---------------------------------------------------------------- what a learner supports
# Read from each learner's entry (`Learner.takes`, engine/learner.py): the estimators'
# parameters, `kacs fit`'s options, a campaign's methods and the engine `Model` all ask here.


def takes(method: str, name: str, value=ANY_VALUE) -> bool:
    """Whether learner `method` acts on hyperparameter `name` (at `value`, when given)."""
    return get(method).takes(DECLARED[name], value)


def takers(name: str) -> tuple[str, ...]:
    """The labels of the learners that act on hyperparameter `name`."""
    return tuple(learner.label for learner in _LEARNERS.values() if learner.takes(DECLARED[name]))


def preset(name: str, method: str) -> dict:
    """The settings preset `name` (params.py PRESETS) gives learner `method`: those it acts on."""
    return {key: value for key, value in preset_settings(name).items() if takes(method, key, value)}


def refusal(method: str, params) -> tuple[str, str] | None:
    """The first of the Hyperparameters `params` that learner `method` cannot run, as
    (hyperparameter, why in one line); None when it runs them all. A setting that acts only
    while its switch is on (params.py `switch`) asks nothing while the switch is off."""
    learner = get(method)
    for declared in DECLARATIONS:
        value = getattr(params, declared.name)
        if learner.takes(declared, value):
            continue
        switch = declared.switch
        if switch not in (None, declared.name) and getattr(params, switch) == DECLARED[switch].default:
            continue
        return declared.name, _WHY_NOT[declared.needs](learner, declared.name, value)
    return None


def channels_refusal(label: str) -> str:
    """Why `channels` is refused for the learner labelled `label`."""
    return (f"channels (the number of outer channels) is defined for {', '.join(takers('channels'))} only; "
            f"drop it from {label}")


def adaptive_refusal(label: str) -> str:
    """Why `budget: adaptive` is refused for the learner labelled `label`."""
    return f"budget: adaptive is defined for {', '.join(takers('budget'))} only; {label} keeps a fixed N"


def refinement_refusal() -> str:
    """Why refinement is refused for a learner without it."""
    return f"refinement exists only for {', '.join(takers('refinement'))}"


def compaction_refusal(learner: Learner, method: str) -> str:
    """Why the compaction `method` is refused for `learner`."""
    known = [f"{other.label}: {', '.join(other.compactions)}" for other in _LEARNERS.values() if other.compactions]
    return f"{learner.label} models have no compaction {method!r}; known: {'; '.join(known)}"


def bags_refusal(label: str) -> str:
    """Why `bags` is refused for the learner labelled `label`."""
    return f"bags (bagging) is defined for {', '.join(takers('bags'))} only; {label} cannot average its models"


# Each need's refusal: (learner, hyperparameter, value) -> why, in one line.
_WHY_NOT = {
    "adaptive_budget": lambda learner, name, value: adaptive_refusal(learner.label),
    "channels": lambda learner, name, value: (
        channels_refusal(learner.label) if name == "channels"
        else f"{name}: {value} chooses among outer channel counts, which {', '.join(takers(name))} has and "
             f"{learner.label} has not; drop it from {learner.label}"),
    "refine": lambda learner, name, value: (
        refinement_refusal() if name == "refinement"
        else f"{name} acts in the refinement, which exists only for {', '.join(takers(name))}"),
    "compactions": lambda learner, name, value: compaction_refusal(learner, value),
    "merge": lambda learner, name, value: bags_refusal(learner.label),
    "own_switches": lambda learner, name, value: (f"{name} is defined for {', '.join(takers(name))} only; "
                                                  f"drop it from {learner.label}"),
}
