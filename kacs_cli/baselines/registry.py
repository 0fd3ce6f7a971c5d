"""The baseline registry: the entries (sklearn_models.py, xcsf_lib.py, kan_net.py, xkan.py,
interpretable.py) by name, their resolution into a `Spec` and one run's fit.
`kacs_cli.baselines` re-exports its names."""

from __future__ import annotations

import importlib
import importlib.util
import time
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np

# The entries import only kacs_cli.baselines.entry, so this registry can import them here.
from kacs_cli.baselines import interpretable, kan_net, sklearn_models, xcsf_lib, xkan
from kacs_cli.baselines.entry import JOBS_PARAM, OPEN, SEED_PARAM, Entry
from kacs_cli.engine.params import CATEGORICAL, DECLARED, IMPUTE
from kacs_cli.errors import UserError

# The key a baseline's record carries when its class could not be asked for its parameters.
PARTIAL = "partial"
# The estimator parameter (scikit-learn's histogram gradient boosting's) that receives the cell's
# categorical inputs when a method sets CATEGORICAL (a setting engine/params.py declares, as IMPUTE).
CATEGORICAL_PARAM = "categorical_features"


@dataclass(frozen=True, eq=False)
class Spec:
    """One baseline method of a config, resolved: what to build, with every parameter."""

    engine: str                  # the registry entry
    estimator: str               # import path of the class
    args: dict                   # constructor arguments: entry defaults, then the config's
    params: dict                 # every parameter of the built estimator, YAML-safe
    seed_param: Optional[str]    # receives the run's learner seed (None: deterministic)
    iterations: Optional[int]    # the value of the entry's iterations_param, if any
    # Set when the entry's optional extra is not installed: the one line saying how to get it.
    # `params` then holds only what the config and the entry give (the class could not be
    # asked for the rest); the runner accepts such a spec where every run of the method is
    # finished already, and refuses it (with this line) where one is still to do.
    missing: Optional[str] = None
    # A campaign method's `categorical: true`: each run's estimator gets the cell's categorical
    # inputs as CATEGORICAL_PARAM, their columns holding the data's level codes.
    categorical: bool = False
    impute: str = DECLARED[IMPUTE].default

    def as_dict(self) -> dict:
        """The resolved config's record: a changed parameter is a different config. A spec
        resolved without its extra says so (`partial`), so that the folder's record can be
        completed once the extra is there instead of refusing the folder as another config."""
        record = {"estimator": self.estimator, "seed_param": self.seed_param, "params": dict(self.params)}
        # Written only when set, so that the records of other baselines keep their form.
        if self.impute != DECLARED[IMPUTE].default:
            record[IMPUTE] = self.impute
        if self.missing:
            record[PARTIAL] = True
        if self.categorical:
            record[CATEGORICAL] = True
        return record


_ENTRIES: dict[str, Entry] = {e.name: e for e in (*sklearn_models.ENTRIES, xcsf_lib.ENTRY, kan_net.ENTRY,
                                                   xkan.ENTRY, *interpretable.ENTRIES)}


def names() -> tuple[str, ...]:
    return tuple(_ENTRIES)


def find(name: str) -> Optional[Entry]:
    """The entry of `name`, or None when it is no baseline (a learner, say)."""
    return _ENTRIES.get(name) if isinstance(name, str) else None


def get(name: str) -> Entry:
    entry = find(name)
    if entry is None:
        raise ValueError(f"baseline must be one of {', '.join(names())}, got {name!r}")
    return entry


# --------------------------------------------------------------------------- resolution


def _missing_extra(entry: Entry) -> Optional[str]:
    if any(importlib.util.find_spec(m) is None for m in entry.modules):
        return f"method {entry.name} needs the optional extra: pip install 'kacs[{entry.extra}]'"
    return None


def import_estimator(path: Any):
    """The estimator class at a dotted import path, or a UserError naming what is wrong."""
    example = "e.g. sklearn.tree.DecisionTreeRegressor"
    if not isinstance(path, str) or "." not in path.strip().strip("."):
        raise UserError(f"estimator must be an import path such as module.Class ({example}), got {path!r}")
    module_name, _, attr = path.strip().rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"estimator {path}: cannot import {module_name} ({exc}); check the path ({example}) "
                        f"or install its package") from None
    cls = getattr(module, attr, None)
    if not isinstance(cls, type):
        what = "has no" if cls is None else "has no class"
        raise UserError(f"estimator {path}: {module_name} {what} {attr}; check the path ({example})")
    if not all(callable(getattr(cls, m, None)) for m in ("fit", "predict", "get_params")):
        raise UserError(f"estimator {path} is not a scikit-learn estimator (it needs fit, predict and "
                        f"get_params); name a regressor class ({example})")
    return cls


def _plain(value: Any) -> Any:
    """A parameter value as YAML writes it: tuples as lists, numpy scalars as numbers, and
    anything else that is not plain data by its repr (only defaults can be such objects)."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return repr(value)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def resolve(engine: str, overrides: Any, iterations: Optional[int] = None, cell_p_hash: Optional[float] = None,
            entry_p_hash: Optional[float] = None) -> Spec:
    """A baseline method's config entry as a Spec, every parameter checked (UserError else).

    overrides: the method's mapping without `method`: estimator parameters given flat
    ({n_estimators: 50}) or under `params`, and for OPEN the class under `estimator`; `impute`
    is the method's setting (engine/params.py declares it), no estimator parameter.
    For an entry with a `p_hash_param`, a cell's P_hash: `cell_p_hash` (the kind of data's
    default) unless the method sets it, `entry_p_hash` (the benchmark entry's own) in any case.
    """
    entry = get(engine)
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, dict):
        raise UserError(f"must be a mapping of {entry.name} parameters such as {{params: {{...}}}}, "
                        f"got {type(overrides).__name__}")
    overrides = dict(overrides)
    impute = overrides.pop(IMPUTE, DECLARED[IMPUTE].default)
    choices = DECLARED[IMPUTE].choices
    if not isinstance(impute, str) or impute.strip().lower() not in choices:
        raise UserError(f"{IMPUTE} must be one of {', '.join(choices)}, got {impute!r}")
    impute = impute.strip().lower()
    path = entry.estimator
    if entry.estimator is None:
        if OPEN not in overrides:
            raise UserError("needs estimator: <import path of a regressor class>, e.g. "
                            "{estimator: sklearn.tree.DecisionTreeRegressor, params: {max_depth: 5}}")
        path = overrides.pop(OPEN)
        if isinstance(path, str):
            path = path.strip()
    elif OPEN in overrides:
        raise UserError(f"estimator is set by method {entry.name} ({entry.estimator}); for another class "
                        f"write {{estimator: module.Class}} without method")
    categorical = overrides.pop(CATEGORICAL, False)
    if not isinstance(categorical, bool):
        raise UserError(f"{CATEGORICAL} must be true or false, got {categorical!r}")
    nested = overrides.pop("params", None)
    if nested is not None and not isinstance(nested, dict):
        raise UserError(f"params must be a mapping of estimator parameters, got {type(nested).__name__}")
    user = dict(overrides)
    for key, value in (nested or {}).items():
        if key in user:
            raise UserError(f"{key} is given twice (flat and under params); keep one")
        user[key] = value
    for key in (SEED_PARAM, JOBS_PARAM):
        if key in user:
            why = "each run's learner seed" if key == SEED_PARAM else "1: `kacs run --jobs` runs the runs in parallel"
            raise UserError(f"{key} is set by the runner ({why}); remove it")
    args = {**entry.defaults, **user}
    if entry.iterations_param and entry.iterations_param not in user and iterations is not None:
        args[entry.iterations_param] = int(iterations)
    if entry.p_hash_param and entry_p_hash is not None:
        args[entry.p_hash_param] = float(entry_p_hash)
    elif entry.p_hash_param and entry.p_hash_param not in user and cell_p_hash is not None:
        args[entry.p_hash_param] = float(cell_p_hash)
    missing = _missing_extra(entry) if entry.modules else None
    if missing:
        its = args.get(entry.iterations_param) if entry.iterations_param else None
        return Spec(entry.name, path, args, {k: _plain(v) for k, v in args.items()}, None,
                    None if its is None else int(its), missing=missing, categorical=categorical,
                    impute=impute)
    cls = import_estimator(path)
    try:
        estimator = cls(**args)
    except TypeError as exc:
        known = ", ".join(sorted(cls().get_params(deep=False))) if _constructible(cls) else "see its documentation"
        raise UserError(f"{path}: {_first_line(exc)}; its parameters: {known}") from None
    from sklearn.base import is_regressor

    try:
        regressor = is_regressor(estimator)
    except (AttributeError, TypeError):
        regressor = False
    if not regressor:
        raise UserError(f"estimator {path} is not a scikit-learn regressor; name a regressor class "
                        f"(e.g. sklearn.tree.DecisionTreeRegressor)")
    names_ = estimator.get_params(deep=False)
    if categorical and CATEGORICAL_PARAM not in names_:
        raise UserError(f"{CATEGORICAL}: true needs an estimator that takes {CATEGORICAL_PARAM} (such as gbr); "
                        f"{path} does not, remove the setting")
    if categorical and CATEGORICAL_PARAM in user:
        raise UserError(f"{CATEGORICAL_PARAM} is set by the runner with {CATEGORICAL}: true (the cell's categorical "
                        f"inputs); remove it")
    if JOBS_PARAM in names_:
        args[JOBS_PARAM] = 1
        estimator.set_params(**{JOBS_PARAM: 1})
    # Only a class declaring its constraints can check them before fitting (imodels' and
    # interpret's do not: theirs fail at the first fit).
    validate = getattr(estimator, "_validate_params", None)
    if callable(validate) and hasattr(estimator, "_parameter_constraints"):
        try:
            validate()
        except (ValueError, TypeError) as exc:
            raise UserError(f"{path}: {_first_line(exc)}") from None
    seed_param = SEED_PARAM if SEED_PARAM in names_ else None
    params = {k: _plain(v) for k, v in estimator.get_params(deep=False).items() if k != seed_param}
    its = args.get(entry.iterations_param) if entry.iterations_param else None
    return Spec(entry.name, path, args, params, seed_param, None if its is None else int(its),
                categorical=categorical, impute=impute)


def _constructible(cls) -> bool:
    try:
        cls()
    except Exception:  # noqa: BLE001 - only to list parameter names in a message
        return False
    return True


# --------------------------------------------------------------------------- one run


def specs_of(params: Iterable[Any]) -> tuple[Spec, ...]:
    """The distinct baseline specs among per-method settings (learners' are skipped)."""
    out: dict[tuple, Spec] = {}
    for p in params:
        if isinstance(p, Spec):
            out.setdefault((p.engine, p.estimator), p)
    return tuple(out.values())


_PRELOADED: set[tuple] = set()


def preload(specs: Iterable[Spec]) -> None:
    """Import what these baselines fit with, once per process (their runs' timing then
    holds no import, and a worker's memory does not grow after its first run)."""
    for spec in specs:
        key = (spec.engine, spec.estimator)
        if key in _PRELOADED:
            continue
        import_estimator(spec.estimator)
        entry = get(spec.engine)
        for module in entry.modules:
            importlib.import_module(module)
        if entry.warm_up is not None:
            entry.warm_up()
        _PRELOADED.add(key)


@dataclass
class Fitted:
    y_train: np.ndarray   # predictions on the train rows
    y_test: np.ndarray    # predictions on the test rows
    params: Optional[int]
    seconds: float        # fit and both predictions, wall time
    estimator: Any


def build(spec: Spec, seed: int, categorical: tuple[int, ...] = ()):
    """The unfitted estimator of one run: the spec's arguments and the run's learner seed (and
    `categorical`, the cell's categorical input columns, where the spec says categorical)."""
    if spec.missing:
        raise UserError(spec.missing)
    cls = import_estimator(spec.estimator)
    args = dict(spec.args)
    if spec.seed_param is not None:
        args[spec.seed_param] = int(seed)
    if spec.categorical and categorical:
        args[CATEGORICAL_PARAM] = list(categorical)
    return cls(**args)


def takes_missing(spec: Spec) -> bool:
    """Whether the baseline's estimator accepts missing inputs (NaN), as its scikit-learn tags
    say (`input_tags.allow_nan`); an estimator that cannot be built or has no tags does not."""
    if spec.missing:
        return False
    from sklearn.utils import get_tags

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(get_tags(build(spec, 0)).input_tags.allow_nan)
    except Exception:  # a third-party estimator without scikit-learn's tags
        return False


def takes_sample_weight(spec: Spec) -> bool:
    """Whether the spec's estimator fits with sample weights (its fit takes sample_weight).
    A spec whose optional extra is missing counts as taking them: the runner refuses it by
    its own line."""
    if spec.missing:
        return True
    from sklearn.utils.validation import has_fit_parameter

    return has_fit_parameter(import_estimator(spec.estimator), "sample_weight")


def fit_predict(spec: Spec, seed: int, X_train, y_train, X_test, sample_weight=None,
                categorical: tuple[int, ...] = ()) -> Fitted:
    """Fit on the train split (with the train rows' sample weights, when given), predict train
    and test rows, count the parameters (`categorical`: as `build` takes it).

    One thread for every native library (BLAS, OpenMP; torch sets its own in kan_net), so
    the numbers do not depend on how many runs share the machine (`kacs run --jobs`)."""
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    entry = get(spec.engine)
    estimator = build(spec, seed, categorical)
    with threadpool_limits(limits=1), warnings.catch_warnings():
        # An MLP that stops at max_iter says so for every run; its errors tell the story.
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        estimator.fit(X_train, y_train, **({} if sample_weight is None else {"sample_weight": sample_weight}))
        train_hat = np.asarray(estimator.predict(X_train), dtype=np.float64).reshape(-1)
        test_hat = np.asarray(estimator.predict(X_test), dtype=np.float64).reshape(-1)
        seconds = time.perf_counter() - start
    count = entry.param_count(estimator, int(np.shape(X_train)[1]))
    return Fitted(train_hat, test_hat, None if count is None else int(count), seconds, estimator)
