"""The methods of a config and the hyperparameters each of them runs with on each cell.

A method is a learner (`xcsf`, `kacs`), a baseline (kacs_cli/baselines: `ridge`, `rf`, ...,
`xcsf-lib`, `kan`, or any regressor as `{estimator: module.Class, params: {...}}`), or a
labelled variant of either (`kacs-adaptive: {method: kacs, budget: adaptive}`). A learner's
hyperparameters on a cell come from, lowest first: the defaults of docs/algorithm.md section 6, the cell's P_hash
default, the config's shared `hyperparameters`, the method's overrides (`N: guideline` is
the article's budget guideline at the cell's n, `channels: 4n + 1` a number of channels at
the cell's n), and the benchmark entry's own N / P_hash.
A baseline's parameters are resolved once, the same on every cell, except the P_hash of a
baseline whose entry takes one (X-KAN's covering): that follows the cell as a learner's does.
`impute: mean` fills a method's missing inputs with their train means before it sees them, for
a learner (a declared hyperparameter) and a baseline (baselines.resolve takes it out of the
estimator's parameters) alike: one declaration, engine/params.py's.
"""

from __future__ import annotations

from typing import Any

from kacs_cli import baselines
from kacs_cli.engine import registry
from kacs_cli.engine.params import (DECLARATIONS, DECLARED, PRESETS, Hyperparameters, default_p_hash, per_input_problem,
                                    per_input_value, value_problem)
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.cells import BenchmarkEntry
from kacs_cli.experiments.campaign.schema import SAFE_LABEL, choice, fail, nonempty_text, type_name, whole

# A method override `N: guideline` is the article's budget guideline at each cell's n.
GUIDELINE = "guideline"


def guideline_budget(n: int) -> int:
    """The article's budget guideline for KACS at n inputs: N = 24 n (2n + 1)."""
    return 24 * n * (2 * n + 1)


def hyperparameter_overrides(value: Any, path: str, *, guideline_ok: bool = False) -> dict:
    """Validate a mapping of hyperparameter overrides, naming the offending key; each value is
    checked by its declaration (engine/params.py).

    `guideline_ok`: N may be the text `guideline` and channels a text `a n + b` (method
    overrides), resolved per cell.
    """
    names = tuple(d.name for d in DECLARATIONS if d.config != "top")
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail(path, f"must be a mapping of hyperparameter overrides such as {{N: 3200}}, got {type_name(value)}")
    out: dict[str, Any] = {}
    for key, v in value.items():
        where = f"{path}.{key}"
        if key in DECLARED and DECLARED[key].config == "top":
            choices = "|".join(DECLARED[key].choices or ())
            fail(where, f"set {key} once at the top level of the config ({key}: {choices})")
        if key not in names:
            close = [n for n in names if str(key).lower() == n.lower()]
            hint = f"did you mean {close[0]!r}? " if close else ""
            fail(where, f"unknown hyperparameter; {hint}known: {', '.join(names)}")
        if key == "N" and guideline_ok and isinstance(v, str) and v.strip().lower() == GUIDELINE:
            out[key] = GUIDELINE
            continue
        declared = DECLARED[key]
        if declared.per_input and guideline_ok and isinstance(v, str):
            problem = per_input_problem(v)
            if problem is not None:
                fail(where, problem)
            out[key] = v
            continue
        if declared.choices:
            v = choice(v, where, declared.choices)
        elif declared.kind is int:
            v = whole(v, where, declared.valid.left)
        elif declared.kind is bool:
            if not isinstance(v, bool):
                fail(where, f"must be true or false, got {v!r}")
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            fail(where, f"must be a number, got {type_name(v)} {v!r}")
        else:
            v = float(v)  # theta_GA: 50 and 50.0 are one setting, also in the resolved YAML
        # The value by its own declaration; what it asks of the method's other settings (the
        # capacity search's folds need capacity: search) is checked once they are all known.
        problem = value_problem(key, v)
        if problem is not None:
            fail(where, f"{problem}, got {v!r}")
        out[key] = v
    return out


def preset_methods() -> dict[str, tuple[str, str]]:
    """The built-in methods a preset makes of a learner (engine/params.py PRESETS), such as
    `kacs-recommended`: method name -> (learner, preset)."""
    return {f"{learner}-{name}": (learner, name) for learner in registry.names() for name in PRESETS}


def _preset_expanded(engine: str, overrides: Any, where: str) -> tuple[str, Any]:
    """A preset method as its learner with the preset's settings under the given overrides."""
    learner, name = preset_methods().get(engine, (None, None))
    if learner is None:
        return engine, overrides
    return learner, {**registry.preset(name, learner), **(overrides or {})}


def parse_methods(value: Any) -> dict[str, tuple[str, Any]]:
    """label -> (engine, overrides); a plain method's label is its name.

    An engine is a learner (engine/registry.py) or a baseline (kacs_cli/baselines). A
    learner's overrides are checked hyperparameters; a baseline's stay as written, resolved
    by `baseline_specs` against the config's iterations.
    """
    learners = registry.names()
    presets = preset_methods()
    known = (*learners, *baselines.names(), *presets)
    if value is None:
        return {m: (m, {}) for m in registry.DEFAULT_PAIR}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        if not value:
            fail("methods", f"must name at least one of {', '.join(known)}")
        out: dict[str, tuple[str, Any]] = {}
        for i, m in enumerate(value):
            name = choice(m, f"methods[{i}]", known)
            if name in out:
                fail(f"methods[{i}]", f"{name} is listed twice")
            out[name] = _preset_expanded(name, {}, f"methods[{i}]")
        return out
    if isinstance(value, dict):
        if not value:
            fail("methods", f"must name at least one of {', '.join(known)}")
        out = {}
        for key, overrides in value.items():
            where = f"methods.{key}"
            labelled = isinstance(overrides, dict) and ("method" in overrides or baselines.OPEN in overrides)
            if labelled:
                # A variant: its own label, an engine, and that engine's overrides; a bare
                # {estimator: module.Class} is a variant of the open baseline entry.
                if not isinstance(key, str):
                    fail(where, "a method label must be text")
                label = nonempty_text(key, where).lower()
                if not SAFE_LABEL.match(label):
                    fail(where, f"a method label must be filename-safe (letters, digits, . _ -), got {key!r}")
                engine = (choice(overrides["method"], f"{where}.method", known) if "method" in overrides
                          else baselines.OPEN)
                if label in known and label != engine:
                    fail(where, f"the label {label} names a method; give the {engine} variant another label")
                overrides = {k: v for k, v in overrides.items() if k != "method"}
            else:
                if not (isinstance(key, str) and key.strip().lower() in known):
                    fail(where, f"unknown method; use {', '.join(known)}, a labelled variant such as "
                                f"kacs-adaptive: {{method: kacs, budget: adaptive}} or rf-50: {{method: rf, "
                                f"n_estimators: 50}}, or any regressor as {{estimator: module.Class}}")
                label = engine = key.strip().lower()
            if label in out:
                fail(where, f"{label} is given twice")
            engine, overrides = _preset_expanded(engine, overrides, where)
            if baselines.find(engine) is None:
                overrides = hyperparameter_overrides(overrides, where, guideline_ok=True)
            out[label] = (engine, overrides)
        return out
    fail("methods", f"must be a list such as [xcsf, kacs] or a mapping of method to overrides, "
                    f"got {type_name(value)}")


def cell_methods(raw_entry: Any, where: str, methods: tuple[str, ...]) -> tuple[str, ...]:
    """The methods a benchmark entry runs: its `methods` list (config order), else all."""
    if not isinstance(raw_entry, dict) or "methods" not in raw_entry:
        return methods
    value = raw_entry["methods"]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        fail(f"{where}.methods", f"must be a non-empty list of the config's methods ({', '.join(methods)})")
    chosen = set()
    for k, m in enumerate(value):
        name = choice(m, f"{where}.methods[{k}]", methods)
        if name in chosen:
            fail(f"{where}.methods[{k}]", f"{name} is listed twice")
        chosen.add(name)
    return tuple(m for m in methods if m in chosen)


def baseline_specs(methods: dict[str, tuple[str, Any]], iterations: int,
                   entry: BenchmarkEntry | None = None) -> dict[str, baselines.Spec]:
    """The baselines among `methods`, resolved (every parameter spelled out, checked, its
    extras present): without `entry`, those that are the same on every cell; with it, those
    whose P_hash follows the cell, resolved on that benchmark entry."""
    specs: dict[str, baselines.Spec] = {}
    for method, (engine, overrides) in methods.items():
        found = baselines.find(engine)
        # each baseline is resolved once per cell it differs on, or once for all
        if found is None or (found.p_hash_param is None) != (entry is None):
            continue
        cell = {} if entry is None else {"cell_p_hash": default_p_hash(entry.data.real_world),
                                         "entry_p_hash": entry.P_hash}
        try:
            specs[method] = baselines.resolve(engine, overrides, iterations, **cell)
        except UserError as exc:
            fail(f"methods.{method}", str(exc))
    return specs


def cell_params(
    entry: BenchmarkEntry,
    methods: dict[str, tuple[str, Any]],
    specs: dict[str, baselines.Spec],
    shared: dict,
    semantics: str,
    runs_here: tuple[str, ...],
) -> dict[str, Hyperparameters | baselines.Spec]:
    """Every method's hyperparameters on one cell (the precedence of the module docstring);
    `runs_here` are the methods the cell runs, whose budget must be one their learner has."""
    params: dict[str, Hyperparameters | baselines.Spec] = dict(specs)
    for method, (engine, overrides) in methods.items():
        if method in specs:
            continue
        values: dict[str, Any] = {"P_hash": default_p_hash(entry.data.real_world), "semantics": semantics}
        values.update(shared)
        values.update(overrides)
        if values.get("N") == GUIDELINE:
            if entry.data.n is None:
                fail(f"methods.{method}.N", f"guideline needs the number of inputs, unknown for "
                                            f"the CSV file of {entry.where}; give that entry its own N")
            values["N"] = guideline_budget(entry.data.n)
        for key in [k for k, v in values.items() if DECLARED[k].per_input and isinstance(v, str)]:
            if entry.data.n is None:
                fail(f"methods.{method}.{key}", f"{values[key]} needs the number of inputs, unknown for "
                                                f"the CSV file of {entry.where}; give that method a number")
            values[key] = per_input_value(key, values[key], entry.data.n)
        if entry.N is not None:
            values["N"] = entry.N
        if entry.P_hash is not None:
            values["P_hash"] = entry.P_hash
        try:
            params[method] = Hyperparameters().with_overrides(**values)
        except UserError as exc:
            fail(f"{entry.where} ({method})", str(exc))
        refused = registry.refusal(engine, params[method]) if method in runs_here else None
        if refused is not None:
            fail(f"methods.{method}.{refused[0]}", refused[1])
    return params


def recorded_params(engine: str, written: Any) -> Hyperparameters | baselines.Spec:
    """A method's settings as a resolved config records them (Hyperparameters.as_dict of a
    learner, Spec.as_dict of a baseline) made into the settings it runs with again."""
    if not isinstance(written, dict):
        raise UserError(f"its settings are {type_name(written)}, not a mapping")
    if baselines.find(engine) is None:
        return Hyperparameters(**written)
    categorical = bool(written.get(baselines.CATEGORICAL, False))
    # categorical_features is each run's (the cell's categorical inputs) where the record says categorical.
    runner = {baselines.JOBS_PARAM} | ({baselines.CATEGORICAL_PARAM} if categorical else set())
    params = {k: v for k, v in (written.get("params") or {}).items() if k not in runner}
    overrides = {"params": params, baselines.CATEGORICAL: categorical}
    if baselines.IMPUTE in written:
        overrides[baselines.IMPUTE] = written[baselines.IMPUTE]
    if baselines.get(engine).estimator is None:
        overrides[baselines.OPEN] = written.get("estimator")
    return baselines.resolve(engine, overrides)
