"""Experiment configs: the YAML schema, its validation, and resolution to explicit cells.

A config file describes one experiment (SPEC section 10). Example::

    experiment: main
    semantics: reference          # reference (default) | article, SPEC "Two semantics"
    methods: [xcsf, kacs]         # or a mapping: {xcsf: {N: 3200}, kacs: null, rf: null}
    # method variants under their own labels (docs/adaptive_budget.md):
    #   methods: {kacs: null, kacs-adaptive: {method: kacs, budget: adaptive},
    #             kacs-guideline: {method: kacs, N: guideline}, xcsf: null}
    hyperparameters: {beta: 0.2}  # shared overrides of the SPEC section 6 defaults
    benchmarks:
      - {name: f1, source: published}   # the authors' 1000-point sample at n = 10
      - {name: f3, n: 12, samples: 1000, dataset_seed: 0, variant: rotated, N: 7200}
      - asn                               # real-world data set of the registry
      - {name: cs, methods: [kacs, kacs-adaptive]}   # only these methods on this cell
      - data/my_problem.csv               # any headerless numeric CSV, target last
    protocol: {name: main, runs: 30, train_fraction: 0.9}
    iterations: 100000
    eval_every: 2000

Choices made here (documented in the README's config section too):

- f1-f4 default to `source: generated` (inputs drawn from `dataset_seed`, default 0, with
  n = 10 and 1000 samples unless set), because every experiment but the main one generates
  its inputs (SPEC section 8). The main experiment says `source: published` explicitly; a
  published sample is fixed, so n, samples, dataset_seed and variant are refused with it.
- P_hash defaults per benchmark (SPEC section 6): 0.0 on f1-f4, 0.8 on real-world data and
  on user CSV files.
- Precedence of hyperparameters, lowest first: SPEC defaults, the benchmark's P_hash
  default, top-level `hyperparameters`, the method's overrides, and finally the benchmark
  entry's own `N` / `P_hash` (the most specific setting wins).
- Relative CSV paths are taken relative to the config file's folder and stored absolute.
- A method is a learner (`xcsf`, `kacs`), a baseline (kacs_cli/baselines: `ridge`, `rf`,
  ..., `xcsf-lib`, `kan`, or any regressor as `{estimator: module.Class, params: {...}}`), or
  a labelled variant of either (`kacs-adaptive: {method: kacs, budget: adaptive}`,
  `rf-50: {method: rf, n_estimators: 50}`); the label names the method in the results. A
  baseline's parameters are its estimator's, spelled out in full in the resolved config. `N: guideline` (a method override) is the article's budget guideline
  24 n (2n + 1) at each cell's n. A benchmark entry's `methods` runs only those methods there.
- `methods` defaults to both learners, `protocol` to main, `iterations` to 100,000 and
  `eval_every` to 2000; `experiment` to the config file's name.

Resolution yields an ExperimentConfig whose `to_dict()` names every hyperparameter of every
(cell, method); the runner writes it to `<out>/config.yaml`, and a different resolved config
is how it recognizes that an output folder belongs to another experiment.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NoReturn

import yaml

from kacs_cli import baselines
from kacs_cli.experiments.benchmarks import DEFAULT_N, DEFAULT_SAMPLES, FUNCTIONS, MIN_INPUTS, VARIANTS
from kacs_cli.engine import registry
from kacs_cli.engine import budget
from kacs_cli.engine.params import BUDGETS, SEMANTICS, Hyperparameters, default_p_hash
from kacs_cli.errors import UserError
from kacs_cli.experiments import results
from kacs_cli.experiments.protocols import PROTOCOLS, Protocol, run_plan

SOURCES = ("published", "generated")
DEFAULT_ITERATIONS = 100_000
DEFAULT_EVAL_EVERY = 2000
DEFAULT_DATASET_SEED = 0
DEFAULT_N_BUDGET = Hyperparameters().N

TOP_KEYS = (
    "experiment", "description", "semantics", "methods", "hyperparameters", "benchmarks",
    "protocol", "iterations", "eval_every", "report", "reuse",
)
REPORT_KEYS = ("include",)
INCLUDE_KEYS = ("experiment", "benchmarks")
BENCHMARK_KEYS = (
    "name", "path", "label", "source", "n", "samples", "dataset_seed", "variant", "P_hash", "N",
    "methods",
)
# A method override `N: guideline` is the article's budget guideline at each cell's n.
GUIDELINE = "guideline"
PROTOCOL_KEYS = ("name", "runs", "train_fraction")
# Keys of the benchmark entry that only make sense for a generated synthetic function.
GENERATION_KEYS = ("n", "samples", "dataset_seed", "variant")

_SAFE_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


# --------------------------------------------------------------------------- resolved form


@dataclass(frozen=True, eq=False)
class Cell:
    """One benchmark setting of an experiment: a dataset plus the budget it is run with.

    `label` is the filename-safe name the results use (runs.csv's benchmark column, the
    curve and population file names). `kind` says where the data comes from: "function"
    (generated from f1-f4), "dataset" (a registry file: a published f1-f4 sample or a
    real-world set, read from the data directory) or "csv" (a user file at `path`).
    """

    index: int
    label: str
    benchmark: str
    kind: str
    source: str | None
    path: str | None
    n: int | None
    samples: int | None
    dataset_seed: int | None
    variant: str | None
    real_world: bool
    # Per method: a learner's hyperparameters, or a baseline's resolved spec (baselines.Spec).
    params: dict[str, Any] = field(default_factory=dict)
    # The methods run on this cell (labels, config order) and the learner of each label; a
    # label missing from `engines` is the learner of that name.
    methods: tuple[str, ...] = ()
    engines: dict[str, str] = field(default_factory=dict)

    def engine(self, method: str) -> str:
        return self.engines.get(method, method)

    @property
    def dataset_id(self) -> tuple:
        """What identifies the data (not the budget): cells sharing it share one load."""
        return (self.kind, self.benchmark, self.path, self.n, self.samples, self.dataset_seed, self.variant)

    def to_dict(self, methods: Iterable[str]) -> dict:
        methods = tuple(methods)
        out = {
            "label": self.label,
            "benchmark": self.benchmark,
            "kind": self.kind,
            "source": self.source,
            "path": self.path,
            "n": self.n,
            "samples": self.samples,
            "dataset_seed": self.dataset_seed,
            "variant": self.variant,
            "real_world": self.real_world,
            "hyperparameters": {m: self.params[m].as_dict() for m in methods},
        }
        # Written only for a cell that runs a subset of the config's methods, so the records
        # of configs without that option keep their form.
        if self.methods and self.methods != methods:
            out["methods"] = list(self.methods)
            out["hyperparameters"] = {m: self.params[m].as_dict() for m in self.methods}
        return out


@dataclass(frozen=True, eq=False)
class ExperimentConfig:
    experiment: str
    semantics: str
    methods: tuple[str, ...]
    protocol: Protocol  # the registered protocol with the config's runs and train_fraction
    iterations: int
    eval_every: int
    cells: tuple[Cell, ...]
    description: str | None = None
    source_file: str | None = None
    # Report-only settings ({"include": [{"experiment": ..., "benchmarks": [...]}]}); they do
    # not change a single run, so the runner ignores them when it matches an output folder.
    report: dict | None = None
    # Learner of each method label that is a variant (e.g. kacs-adaptive -> kacs).
    engines: dict[str, str] = field(default_factory=dict)
    # Results folders whose identical runs are copied instead of trained again (kacs_cli.experiments.reuse):
    # as written in the config, and resolved against the config file's folder. Like `report`,
    # they change no number, so the runner ignores them when it matches an output folder.
    reuse: tuple[str, ...] = ()
    reuse_dirs: tuple[str, ...] = ()

    def engine(self, method: str) -> str:
        return self.engines.get(method, method)

    def plan(self) -> list[tuple[int, int, int]]:
        """(run, split_seed, seed) of every run, shared by every cell and method."""
        return run_plan(self.protocol, self.protocol.runs)

    def cell(self, label: str) -> Cell:
        for c in self.cells:
            if c.label == label:
                return c
        raise KeyError(label)

    def to_dict(self) -> dict:
        """The fully explicit config written to <out>/config.yaml."""
        proto = self.protocol
        return {
            "experiment": self.experiment,
            "description": self.description,
            "semantics": self.semantics,
            "methods": list(self.methods),
            **({"method_engines": dict(self.engines)} if self.engines else {}),
            "protocol": {
                "name": proto.name,
                "runs": proto.runs,
                "train_fraction": proto.train_fraction,
                "target": proto.target,
                "metric": proto.metric,
            },
            "iterations": self.iterations,
            "eval_every": self.eval_every,
            "cells": [c.to_dict(self.methods) for c in self.cells],
            **({"report": self.report} if self.report else {}),
            **({"reuse": list(self.reuse)} if self.reuse else {}),
        }

    def to_yaml(self) -> str:
        header = (
            "# Resolved config of this campaign, written by `kacs run`: every hyperparameter of\n"
            "# every (cell, method) spelled out. Do not edit: a different config is refused\n"
            "# in this folder unless --force is given.\n"
        )
        return header + yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False)


# --------------------------------------------------------------------------- YAML loading


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None,
                f"key {key!r} appears twice (lines {seen[key] + 1} and {key_node.start_mark.line + 1}); keep one",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: str | Path) -> dict:
    """Parse a config file into a mapping; unreadable or malformed files are UserErrors."""
    path = Path(path)
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.yaml"))
        hint = f" such as {path / found[0]}" if found else " (see configs/)"
        raise UserError(f"{path} is a directory; `kacs run` expects a YAML config file{hint}")
    if not path.is_file():
        raise UserError(f"config file {path} not found; give the path of a YAML config (see configs/)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read config file {path}: {exc}") from None
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{path}: not valid YAML{where}: {problem}") from None
    if not isinstance(raw, dict):
        raise UserError(
            f"{path}: a config must be a YAML mapping with keys such as experiment, methods, "
            f"benchmarks, protocol; got {type(raw).__name__}"
        )
    return raw


def load_config(
    path: str | Path,
    *,
    runs: int | None = None,
    iterations: int | None = None,
) -> ExperimentConfig:
    """Read, validate and resolve a config file; `runs` / `iterations` are CLI overrides."""
    path = Path(path)
    raw = load_yaml(path)
    return resolve_config(
        raw,
        base_dir=path.resolve().parent,
        default_name=path.stem,
        origin=str(path),
        runs=runs,
        iterations=iterations,
    )


# --------------------------------------------------------------------------- validation helpers


def _fail(path: str, message: str) -> NoReturn:
    raise UserError(f"{path}: {message}")


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return {bool: "true/false", int: "a whole number", float: "a number", str: "text",
            list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


def _whole(value: Any, path: str, minimum: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        ok, value = True, int(value)
    if not ok:
        hint = ""
        if isinstance(value, str) and re.fullmatch(r"[0-9.]+[eE][+-]?[0-9]+", value.strip()):
            hint = " (YAML reads 1e5 as text: write 100000 or 100_000)"
        _fail(path, f"must be a whole number >= {minimum}, got {value!r}{hint}")
    if value < minimum:
        _fail(path, f"must be a whole number >= {minimum}, got {value}")
    return int(value)


def _number(value: Any, path: str, lo: float, hi: float, *, open_lo: bool = False, open_hi: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(path, f"must be a number, got {value!r}")
    lo_ok = value > lo if open_lo else value >= lo
    hi_ok = value < hi if open_hi else value <= hi
    if not (lo_ok and hi_ok):
        interval = f"{'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        _fail(path, f"must lie in {interval}, got {value}")
    return float(value)


def _text(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        _fail(path, f"must be non-empty text, got {_type_name(value)} {value!r}")
    return value.strip()


def _choice(value: Any, path: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if not isinstance(value, str) or value.strip().lower() not in choices:
        _fail(path, f"must be one of {', '.join(choices)}, got {value!r}")
    return value.strip().lower()


def _mapping(value: Any, path: str, allowed: Iterable[str], what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(path, f"must be a mapping of {what}, got {_type_name(value)}")
    allowed = tuple(allowed)
    for key in value:
        if key not in allowed:
            close = [a for a in allowed if str(key).lower() == a.lower()]
            hint = f"did you mean {close[0]!r}? " if close else ""
            _fail(f"{path}.{key}" if path else str(key),
                  f"unknown key; {hint}allowed keys: {', '.join(allowed)}")
    return value


def _hyperparameter_overrides(value: Any, path: str, *, guideline_ok: bool = False) -> dict:
    """Validate a mapping of hyperparameter overrides, naming the offending key.

    `guideline_ok`: N may be the text `guideline` (method overrides), resolved per cell.
    """
    names = tuple(n for n in Hyperparameters.names() if n != "semantics")
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(path, f"must be a mapping of hyperparameter overrides such as {{N: 3200}}, got {_type_name(value)}")
    out: dict[str, Any] = {}
    for key, v in value.items():
        where = f"{path}.{key}"
        if key == "semantics":
            _fail(where, "set semantics once at the top level of the config (semantics: reference|article)")
        if key not in names:
            close = [n for n in names if str(key).lower() == n.lower()]
            hint = f"did you mean {close[0]!r}? " if close else ""
            _fail(where, f"unknown hyperparameter; {hint}known: {', '.join(names)}")
        if key == "N" and guideline_ok and isinstance(v, str) and v.strip().lower() == GUIDELINE:
            out[key] = GUIDELINE
            continue
        if key in ("N", "N_max", "budget_window"):
            v = _whole(v, where, 1)
        elif key == "budget":
            v = _choice(v, where, BUDGETS)
        elif key == "do_subsumption":
            if not isinstance(v, bool):
                _fail(where, f"must be true or false, got {v!r}")
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            _fail(where, f"must be a number, got {_type_name(v)} {v!r}")
        else:
            v = float(v)  # theta_GA: 50 and 50.0 are one setting, also in the resolved YAML
        try:
            Hyperparameters().with_overrides(**{key: v})
        except UserError as exc:
            why = str(exc)
            m = re.match(r"hyperparameter \S+ = (.*) is invalid: (.*)$", why)
            _fail(where, f"{m.group(2)}, got {m.group(1)}" if m else why)
        out[key] = v
    return out


# --------------------------------------------------------------------------- resolution


def _registry_names() -> tuple[str, ...]:
    # The registry file is read on first use only, so `kacs --help` touches no data file.
    from kacs_cli.experiments.datasets import get_registry

    return tuple(get_registry())


def _registry_info(name: str):
    from kacs_cli.experiments.datasets import get_registry

    return get_registry()[name]


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.lower().endswith(".csv")


def _safe_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return name or "data"


@dataclass
class _Entry:
    """A validated benchmark entry before labels are assigned."""

    where: str
    benchmark: str
    kind: str
    source: str | None
    path: str | None
    n: int | None
    samples: int | None
    dataset_seed: int | None
    variant: str | None
    real_world: bool
    label: str | None
    N: int | None
    P_hash: float | None
    methods: tuple[str, ...] | None = None

    def identity(self) -> tuple:
        return (self.kind, self.benchmark, self.path, self.n, self.samples, self.dataset_seed,
                self.variant, self.N, self.P_hash)


def _benchmark_entry(value: Any, where: str, base_dir: Path | None) -> _Entry:
    registry = _registry_names()
    if isinstance(value, str):
        value = {"name": value} if value.strip().lower() in registry or not _looks_like_path(value) else {"path": value}
    if not isinstance(value, dict):
        _fail(where, f"must be a benchmark name ({', '.join(registry)}), a CSV path, or a mapping "
                     f"with name/path and options; got {_type_name(value)}")
    entry = _mapping(value, where, BENCHMARK_KEYS, "benchmark options")
    if ("name" in entry) == ("path" in entry):
        _fail(where, "give exactly one of name (a built-in benchmark) or path (a CSV file)")

    label = None
    if "label" in entry:
        label = _text(entry["label"], f"{where}.label")
        if not _SAFE_LABEL.match(label):
            _fail(f"{where}.label", f"must be filename-safe (letters, digits, . _ -), got {label!r}")

    N = _whole(entry["N"], f"{where}.N", 1) if "N" in entry else None
    P_hash = _number(entry["P_hash"], f"{where}.P_hash", 0.0, 1.0) if "P_hash" in entry else None

    if "path" in entry:
        raw_path = _text(entry["path"], f"{where}.path")
        for key in ("source", *GENERATION_KEYS):
            if key in entry:
                _fail(f"{where}.{key}", "only applies to the synthetic functions f1-f4; a CSV file is used as it is")
        p = Path(raw_path).expanduser()
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        p = p.resolve()
        return _Entry(where, _safe_name(p.stem), "csv", None, str(p), None, None, None, None,
                      True, label, N, P_hash)

    name = _text(entry["name"], f"{where}.name").lower()
    if name in FUNCTIONS:
        source = _choice(entry.get("source", "generated"), f"{where}.source", SOURCES)
        if source == "published":
            for key in GENERATION_KEYS:
                if key in entry:
                    _fail(f"{where}.{key}",
                          "the published sample is fixed (n = 10, 1000 samples); use source: generated "
                          "to choose n, samples, dataset_seed or a variant")
            info = _registry_info(name)
            return _Entry(where, name, "dataset", "published", None, info.n_inputs, info.rows, None,
                          None, False, label, N, P_hash)
        n = _whole(entry.get("n", DEFAULT_N), f"{where}.n", 1)
        samples = _whole(entry.get("samples", DEFAULT_SAMPLES), f"{where}.samples", 10)
        seed = _whole(entry.get("dataset_seed", DEFAULT_DATASET_SEED), f"{where}.dataset_seed", 0)
        variant = entry.get("variant")
        if variant is not None:
            variant = _choice(variant, f"{where}.variant", VARIANTS)
            if name != "f3":
                _fail(f"{where}.variant", f"variants are defined for f3 only (SPEC section 8), not {name}")
        # Rosenbrock and Cross are undefined below two inputs: refuse before any run.
        if n < MIN_INPUTS[name]:
            _fail(f"{where}.n", f"{name} needs n >= {MIN_INPUTS[name]} input variables, got {n}")
        return _Entry(where, name, "function", "generated", None, n, samples, seed, variant,
                      False, label, N, P_hash)

    if name in registry:
        for key in ("source", *GENERATION_KEYS):
            if key in entry:
                _fail(f"{where}.{key}", f"only applies to the synthetic functions f1-f4, not to the data set {name}")
        info = _registry_info(name)
        return _Entry(where, name, "dataset", None, None, info.n_inputs, info.rows, None, None,
                      True, label, N, P_hash)

    _fail(f"{where}.name", f"unknown benchmark {entry['name']!r}; use one of {', '.join(registry)}, "
                           f"or path: <file.csv> for your own data")


# Suffixes that tell cells of one benchmark apart, in label order. Data attributes are
# shown on every cell once they vary; budget attributes only where they depart from the
# default, so the guideline cells of the dimension sweep read f3-n16-N12672 beside f3-n16.
def _suffixes(group: list[_Entry], p_hash_default: dict[int, float]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {id(e): [] for e in group}
    if len(group) == 1:
        return out

    def varies(values: list, none_is_value: bool = False) -> bool:
        # None means "not applicable" (the seed of a published sample), except for the
        # variant, where it is the plain function.
        return len({v for v in values if none_is_value or v is not None}) > 1

    attrs = [
        ("source", lambda e: e.source, lambda v: "published" if v == "published" else None),
        ("variant", lambda e: e.variant, lambda v: v),
        ("n", lambda e: e.n, lambda v: f"n{v}"),
        ("samples", lambda e: e.samples, lambda v: f"s{v}"),
        ("dataset_seed", lambda e: e.dataset_seed, lambda v: f"d{v}"),
    ]
    for name, get, fmt in attrs:
        values = [get(e) for e in group]
        if not varies(values, none_is_value=name == "variant"):
            continue
        for e in group:
            v = get(e)
            if v is not None and (s := fmt(v)):
                out[id(e)].append(s)
    budgets = [e.N if e.N is not None else DEFAULT_N_BUDGET for e in group]
    if varies(budgets):
        for e, b in zip(group, budgets):
            if b != DEFAULT_N_BUDGET:
                out[id(e)].append(f"N{b}")
    hashes = [e.P_hash if e.P_hash is not None else p_hash_default[id(e)] for e in group]
    if varies(hashes):
        for e, h in zip(group, hashes):
            if h != p_hash_default[id(e)]:
                out[id(e)].append(f"h{h:g}")
    return out


def _assign_labels(entries: list[_Entry]) -> list[str]:
    p_default = {id(e): default_p_hash(e.real_world) for e in entries}
    labels: list[str | None] = [e.label for e in entries]
    groups: dict[str, list[_Entry]] = {}
    for e in entries:
        if e.label is None:
            groups.setdefault(e.benchmark, []).append(e)
    for base, group in groups.items():
        suffixes = _suffixes(group, p_default)
        for e in group:
            labels[entries.index(e)] = "-".join([base, *suffixes[id(e)]])
    seen: dict[str, int] = {}
    for i, (e, label) in enumerate(zip(entries, labels)):
        if label in seen:
            other = entries[seen[label]]
            if other.identity() == e.identity():
                _fail(e.where, f"repeats {other.where}; remove one of them")
            _fail(e.where, f"its cell label {label!r} is already used by {other.where}; "
                           f"give one of them a distinct label: <name>")
        seen[label] = i
    return labels  # type: ignore[return-value]


def _methods(value: Any) -> dict[str, tuple[str, Any]]:
    """label -> (engine, overrides); a plain method's label is its name.

    An engine is a learner (engine/registry.py) or a baseline (kacs_cli/baselines). A
    learner's overrides are checked hyperparameters; a baseline's stay as written, resolved
    in _resolve against the config's iterations.
    """
    learners = registry.names()
    known = (*learners, *baselines.names())
    if value is None:
        return {m: (m, {}) for m in registry.DEFAULT_PAIR}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        if not value:
            _fail("methods", f"must name at least one of {', '.join(known)}")
        out: dict[str, tuple[str, Any]] = {}
        for i, m in enumerate(value):
            name = _choice(m, f"methods[{i}]", known)
            if name in out:
                _fail(f"methods[{i}]", f"{name} is listed twice")
            out[name] = (name, {})
        return out
    if isinstance(value, dict):
        if not value:
            _fail("methods", f"must name at least one of {', '.join(known)}")
        out = {}
        for key, overrides in value.items():
            where = f"methods.{key}"
            labelled = isinstance(overrides, dict) and ("method" in overrides or baselines.OPEN in overrides)
            if labelled:
                # A variant: its own label, an engine, and that engine's overrides; a bare
                # {estimator: module.Class} is a variant of the open baseline entry.
                if not isinstance(key, str):
                    _fail(where, "a method label must be text")
                label = _text(key, where).lower()
                if not _SAFE_LABEL.match(label):
                    _fail(where, f"a method label must be filename-safe (letters, digits, . _ -), got {key!r}")
                engine = (_choice(overrides["method"], f"{where}.method", known) if "method" in overrides
                          else baselines.OPEN)
                if label in known and label != engine:
                    _fail(where, f"the label {label} names a method; give the {engine} variant another label")
                overrides = {k: v for k, v in overrides.items() if k != "method"}
            else:
                if not (isinstance(key, str) and key.strip().lower() in known):
                    _fail(where, f"unknown method; use {', '.join(known)}, a labelled variant such as "
                                 f"kacs-adaptive: {{method: kacs, budget: adaptive}} or rf-50: {{method: rf, "
                                 f"n_estimators: 50}}, or any regressor as {{estimator: module.Class}}")
                label = engine = key.strip().lower()
            if label in out:
                _fail(where, f"{label} is given twice")
            if baselines.find(engine) is None:
                overrides = _hyperparameter_overrides(overrides, where, guideline_ok=True)
            out[label] = (engine, overrides)
        return out
    _fail("methods", f"must be a list such as [xcsf, kacs] or a mapping of method to overrides, "
                     f"got {_type_name(value)}")


def _cell_methods(raw_entry: Any, where: str, methods: tuple[str, ...]) -> tuple[str, ...]:
    """The methods a benchmark entry runs: its `methods` list (config order), else all."""
    if not isinstance(raw_entry, dict) or "methods" not in raw_entry:
        return methods
    value = raw_entry["methods"]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        _fail(f"{where}.methods", f"must be a non-empty list of the config's methods ({', '.join(methods)})")
    chosen = set()
    for k, m in enumerate(value):
        name = _choice(m, f"{where}.methods[{k}]", methods)
        if name in chosen:
            _fail(f"{where}.methods[{k}]", f"{name} is listed twice")
        chosen.add(name)
    return tuple(m for m in methods if m in chosen)


def _protocol(value: Any, runs_override: int | None) -> Protocol:
    if value is None:
        value = {"name": "main"}
    if isinstance(value, str):
        value = {"name": value}
    spec = _mapping(value, "protocol", PROTOCOL_KEYS, "protocol options (name, runs, train_fraction)")
    name = _choice(spec.get("name", "main"), "protocol.name", PROTOCOLS)
    base = PROTOCOLS[name]
    runs = _whole(spec["runs"], "protocol.runs", 1) if "runs" in spec else base.runs
    where = "protocol.runs"
    if runs_override is not None:
        runs, where = _whole(runs_override, "--runs", 1), "--runs"
    fraction = base.train_fraction
    if "train_fraction" in spec:
        fraction = _number(spec["train_fraction"], "protocol.train_fraction", 0.0, 1.0, open_lo=True, open_hi=True)
    try:
        run_plan(base, runs)
    except UserError as exc:
        _fail(where, str(exc))
    return Protocol(base.name, runs, fraction, base.target, base.metric, base.splits, base.seeds)


def resolve_config(
    raw: dict,
    *,
    base_dir: Path | None = None,
    default_name: str | None = None,
    origin: str | None = None,
    runs: int | None = None,
    iterations: int | None = None,
) -> ExperimentConfig:
    """Validate a parsed config mapping and resolve it to explicit cells.

    Every problem raises a UserError naming the key path; `origin` (the file) is prefixed.
    """
    try:
        return _resolve(raw, base_dir, default_name, runs, iterations, origin)
    except UserError as exc:
        if origin:
            raise UserError(f"{origin}: {exc}") from None
        raise


def _resolve(raw, base_dir, default_name, runs, iterations, origin) -> ExperimentConfig:
    if not isinstance(raw, dict):
        _fail("config", f"must be a mapping, got {_type_name(raw)}")
    if "cells" in raw and "benchmarks" not in raw:
        _fail("cells", "this is the resolved config `kacs run` writes into its output folder, a record "
                       "of a campaign; run the config file it came from (e.g. configs/main.yaml)")
    _mapping(raw, "", TOP_KEYS, "config keys")

    if "experiment" in raw:
        experiment = _text(raw["experiment"], "experiment")
    elif default_name:
        experiment = _safe_name(default_name)
    else:
        _fail("experiment", "missing; name the experiment (it is the default output folder)")
    if not _SAFE_LABEL.match(experiment):
        _fail("experiment", f"must be filename-safe (letters, digits, . _ -), got {experiment!r}")
    description = raw.get("description")
    if description is not None:
        description = _text(description, "description")

    semantics = _choice(raw.get("semantics", "reference"), "semantics", SEMANTICS)
    methods = _methods(raw.get("methods"))
    shared = _hyperparameter_overrides(raw.get("hyperparameters"), "hyperparameters")
    protocol = _protocol(raw.get("protocol"), runs)

    its = raw.get("iterations", DEFAULT_ITERATIONS)
    its_where = "iterations"
    if iterations is not None:
        its, its_where = iterations, "--iterations"
    its = _whole(its, its_where, 1)
    eval_every = _whole(raw.get("eval_every", DEFAULT_EVAL_EVERY), "eval_every", 1)

    if "benchmarks" not in raw:
        _fail("benchmarks", "missing; list at least one benchmark, e.g. benchmarks: [f1, asn]")
    bench = raw["benchmarks"]
    if isinstance(bench, (str, dict)):
        bench = [bench]
    if not isinstance(bench, list) or not bench:
        _fail("benchmarks", f"must be a non-empty list of benchmarks, got {bench!r}")
    entries = [_benchmark_entry(v, f"benchmarks[{i}]", base_dir) for i, v in enumerate(bench)]
    labels = _assign_labels(entries)

    all_methods = tuple(methods)
    engines = {m: eng for m, (eng, _) in methods.items() if m != eng}
    # Baselines: resolved once (every parameter spelled out, checked, extras present), the
    # same on every cell; budgets, P_hash and the shared hyperparameters are the learners'.
    specs: dict[str, baselines.Spec] = {}
    for method, (engine, overrides) in methods.items():
        if baselines.find(engine) is not None:
            try:
                specs[method] = baselines.resolve(engine, overrides, its)
            except UserError as exc:
                _fail(f"methods.{method}", str(exc))
    cells = []
    for i, (e, label) in enumerate(zip(entries, labels)):
        cell_methods = _cell_methods(bench[i], e.where, all_methods)
        params: dict[str, Hyperparameters | baselines.Spec] = dict(specs)
        for method, (engine, overrides) in methods.items():
            if method in specs:
                continue
            values: dict[str, Any] = {"P_hash": default_p_hash(e.real_world), "semantics": semantics}
            values.update(shared)
            values.update(overrides)
            if values.get("N") == GUIDELINE:
                if e.n is None:
                    _fail(f"methods.{method}.N", f"guideline needs the number of inputs, unknown for "
                                                 f"the CSV file of {e.where}; give that entry its own N")
                values["N"] = guideline_budget(e.n)
            if e.N is not None:
                values["N"] = e.N
            if e.P_hash is not None:
                values["P_hash"] = e.P_hash
            try:
                params[method] = Hyperparameters().with_overrides(**values)
            except UserError as exc:
                _fail(f"{e.where} ({method})", str(exc))
            if (params[method].budget != "fixed" and method in cell_methods
                    and not registry.get(engine).adaptive_budget):
                _fail(f"{e.where} ({method})", budget.adaptive_refusal(registry.label(engine)))
        cells.append(Cell(i, label, e.benchmark, e.kind, e.source, e.path, e.n, e.samples,
                          e.dataset_seed, e.variant, e.real_world, params, cell_methods,
                          {m: methods[m][0] for m in cell_methods if m in engines}))

    return ExperimentConfig(
        engines=engines,
        experiment=experiment,
        semantics=semantics,
        methods=all_methods,
        protocol=protocol,
        iterations=its,
        eval_every=eval_every,
        cells=tuple(cells),
        description=description,
        source_file=origin,
        report=_report_settings(raw.get("report")),
        **_reuse_settings(raw.get("reuse"), base_dir),
    )


def _reuse_settings(value: Any, base_dir: Path | None) -> dict:
    """`reuse: [../results/paper/main]`: folders of finished campaigns whose identical runs
    are copied (kacs_cli.experiments.reuse). Relative paths are taken from the config file's folder, as
    CSV paths are; they must exist, or the runs would silently be trained again."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        _fail("reuse", f"must be a results folder or a list of them, got {_type_name(value)}")
    written, dirs = [], []
    for i, item in enumerate(value):
        text = _text(item, f"reuse[{i}]")
        folder = Path(text).expanduser()
        if not folder.is_absolute() and base_dir is not None:
            folder = base_dir / folder
        folder = folder.resolve()
        if not results.is_results_folder(folder):
            _fail(f"reuse[{i}]", f"{folder} is not a results folder of `kacs run` (it needs {results.CONFIG_FILE} "
                                 f"and {results.RUNS_FILE}); fix the path (relative to the config file) or remove it")
        written.append(text)
        dirs.append(str(folder))
    return {"reuse": tuple(written), "reuse_dirs": tuple(dirs)}


def _report_settings(value: Any) -> dict | None:
    """`report: {include: {experiment: NAME, benchmarks: [...]}}` (or a list of such): cells the
    report takes from another experiment's results beside this one instead of training them
    again. Returns the normalized form written to the resolved config, or None."""
    spec = _mapping(value, "report", REPORT_KEYS, "report options (include)")
    if not spec:
        return None
    includes = spec.get("include")
    if includes is None:
        _fail("report.include", "missing; name the experiment to take cells from, "
                                "e.g. include: {experiment: alt_protocol, benchmarks: [asn, cs]}")
    if isinstance(includes, dict):
        includes = [includes]
    if not isinstance(includes, list) or not includes:
        _fail("report.include", f"must be a mapping or a list of mappings, got {_type_name(includes)}")
    out = []
    for i, item in enumerate(includes):
        where = f"report.include[{i}]"
        entry = _mapping(item, where, INCLUDE_KEYS, "include options (experiment, benchmarks)")
        if "experiment" not in entry:
            _fail(f"{where}.experiment", "missing; name the experiment whose results hold the cells")
        name = _text(entry["experiment"], f"{where}.experiment")
        if not _SAFE_LABEL.match(name):
            _fail(f"{where}.experiment", f"must be an experiment name (letters, digits, . _ -), got {name!r}")
        benches = entry.get("benchmarks")
        if benches is None:
            out.append({"experiment": name, "benchmarks": None})
            continue
        if isinstance(benches, str):
            benches = [benches]
        if not isinstance(benches, list) or not benches:
            _fail(f"{where}.benchmarks", f"must be a non-empty list of cell labels, got {benches!r}")
        out.append({"experiment": name,
                    "benchmarks": [_text(b, f"{where}.benchmarks[{j}]") for j, b in enumerate(benches)]})
    return {"include": out}


# --------------------------------------------------------------------------- programmatic configs


def parse_int_list(text: str, what: str, *, default_step: str) -> list[int]:
    """'2,4,8' -> [2, 4, 8]; 'a..b' -> a default progression; 'a..b..s' step s, 'a..b..x2' doubling.

    `default_step` is "+2"-style (arithmetic) or "x2"-style (geometric); used for 'a..b'.
    """
    text = str(text).strip()
    bad = (f"{what}: expected a list such as 2,4,8 or a range a..b (step {default_step.lstrip('+')}) "
           f"or a..b..step (e.g. 2..20..4, 125..8000..x2), got {text!r}")
    if ".." not in text:
        try:
            values = [int(t) for t in text.split(",") if t.strip()]
        except ValueError:
            raise UserError(bad) from None
        if not values:
            raise UserError(bad)
    else:
        parts = text.split("..")
        if len(parts) not in (2, 3):
            raise UserError(bad)
        step = parts[2].strip() if len(parts) == 3 else default_step
        try:
            start, stop = int(parts[0]), int(parts[1])
            geometric = step.lower().startswith(("x", "*"))
            k = int(step.lstrip("xX*+"))
        except ValueError:
            raise UserError(bad) from None
        if start > stop or k < (2 if geometric else 1):
            raise UserError(f"{bad}: need start <= stop and a step >= 1 (factor >= 2)")
        values, v = [], start
        while v <= stop:
            values.append(v)
            v = v * k if geometric else v + k
    if len(set(values)) != len(values):
        raise UserError(f"{what}: {text!r} lists a value twice")
    return values


def guideline_budget(n: int) -> int:
    """The article's budget guideline for KACS at n inputs: N = 24 n (2n + 1)."""
    return 24 * n * (2 * n + 1)


def scaling_raw_config(
    *,
    dims: list[int] | None = None,
    sample_sizes: list[int] | None = None,
    function: str = "f3",
    guideline: bool = False,
    n: int = DEFAULT_N,
    samples: int = DEFAULT_SAMPLES,
) -> dict:
    """The config mapping behind `kacs scale`: one generated cell per n or per sample size."""
    if (dims is None) == (sample_sizes is None):
        raise UserError("choose one sweep: --dim (input dimension n) or --samples (sample size)")
    benchmarks = []
    if dims is not None:
        experiment = "dim_scaling"
        for d in dims:
            entry: dict[str, Any] = {"name": function, "source": "generated", "n": d, "samples": samples}
            if guideline:
                entry["N"] = max(DEFAULT_N_BUDGET, guideline_budget(d))
            benchmarks.append(entry)
    else:
        experiment = "sample_scaling"
        for s in sample_sizes or []:
            entry = {"name": function, "source": "generated", "n": n, "samples": s}
            if guideline:
                entry["N"] = max(DEFAULT_N_BUDGET, guideline_budget(n))
            benchmarks.append(entry)
    return {"experiment": experiment, "benchmarks": benchmarks, "protocol": {"name": "main"}}
