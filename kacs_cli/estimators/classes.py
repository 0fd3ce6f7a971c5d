"""The estimator classes by name: a model file names its class, `load` finds it here.

Every estimator class with a learner (`_method`) enters itself when it is defined
(`LearnerRegressor.__init_subclass__`), so this module imports no estimator: the loader
reads it without depending on the classes, and a learner added at run time (its estimator a
subclass, as in tests/test_learner_registry.py) is found like the built-in ones.
"""

from __future__ import annotations

from kacs_cli.errors import UserError

__all__ = ["class_named", "estimator_class", "register"]

_CLASSES: dict[str, type] = {}


def register(cls: type) -> None:
    _CLASSES[cls.__name__] = cls


def class_named(name) -> type | None:
    """The registered class called `name`, or None."""
    return _CLASSES.get(name) if isinstance(name, str) else None


def estimator_class(method: str) -> type:
    """The estimator class of the learner named `method` (the first one defined)."""
    for cls in _CLASSES.values():
        if cls._method == method:
            return cls
    raise UserError(f"no estimator for the learner {method!r}; known: "
                    f"{', '.join(sorted({c._method for c in _CLASSES.values()}))}")
