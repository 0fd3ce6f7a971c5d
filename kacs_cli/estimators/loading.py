"""Model files back into objects: `load` (either kind of file) and `load_estimator`.

persistence reads a file into an engine model plus the state dict an estimator exported;
the class the state names (looked up in `classes`) rebuilds itself from its saved
constructor arguments and restores the rest with `_restore_state`.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from kacs_cli.engine.params import DECLARED
from kacs_cli.errors import UserError
from kacs_cli.estimators import persistence
from kacs_cli.estimators.classes import class_named

__all__ = ["load", "load_estimator"]


def load_estimator(path, expected=None):
    """A fitted estimator from a file written by its `save` (`expected`: the class it must be)."""
    model, state = persistence.load_state(path)
    path = Path(path).expanduser()
    if state is None:
        raise UserError(
            f"{path} holds a bare engine model without data scaling, not an estimator; "
            f"read it with kacs_cli.estimators.persistence.load_model"
        )
    return _from_state(path, model, state, expected)


def _from_state(path, model, state, expected):
    meta = state["estimator"]
    name = meta.get("class") if isinstance(meta, dict) else None
    cls = class_named(name)
    if cls is None or cls._method != model.method:
        raise persistence.corrupt(path, f"unknown estimator class {name!r} for method {model.method}")
    if expected is not None and expected is not cls and not issubclass(cls, expected):
        raise UserError(
            f"{path} holds a {cls.__name__} ({model.method.upper()}), not a {expected.__name__}; "
            f"load it with {cls.__name__}.load or kacs_cli.load"
        )
    params = meta.get("params")
    if not isinstance(params, dict):
        raise persistence.corrupt(path, "estimator parameters missing")
    # A file may record every declared hyperparameter, also those the class's learner does not
    # act on (its constructor once took them all); they did nothing there and are left out.
    taken = inspect.signature(cls).parameters
    params = {name: value for name, value in params.items() if name in taken or name not in DECLARED}
    try:
        est = cls(**params)
    except TypeError as exc:
        raise persistence.corrupt(path, f"estimator parameters do not fit {cls.__name__}: {exc}") from None
    try:
        est._restore_state(model, state)
    except ValueError as exc:
        raise persistence.corrupt(path, str(exc)) from None
    return est


def load(path):
    """What `save` wrote: a fitted estimator, or an engine `Model` for a bare-model file."""
    model, state = persistence.load_state(path)
    if state is None:
        return model
    return _from_state(Path(path).expanduser(), model, state, None)
