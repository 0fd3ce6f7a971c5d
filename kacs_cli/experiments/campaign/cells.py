"""What an experiment's benchmarks are: the data identity, the benchmark entries of a config
and the cells they resolve to, with the labels that name the cells in the results.

A benchmark entry is a name (f1-f4, generated or the authors' published sample; a registry
data set) or a CSV path, with options. f1-f4 default to `source: generated` with n = 10,
1000 samples and dataset seed 0; a published sample is fixed, so n, samples, dataset_seed
and variant are refused with it. Relative CSV paths are taken relative to the config file's
folder and stored absolute. A file's entry (a CSV path or a registry data set) may name one of
its columns as the rows' sample weights (`weights`, docs/configs.md); that column is then no
input. A registry data set's entry may read its unordered (one-hot) inputs as one column of
level codes each (`nominal: codes`): those columns are the cell's categorical inputs. Any
entry may remove a fraction of its input values completely at random (`missing`,
docs/configs.md; the cells removed are execution.missing_cells').
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from kacs_cli.engine.params import Hyperparameters, default_p_hash
from kacs_cli.experiments.data.benchmarks import (DEFAULT_N, DEFAULT_SAMPLES, F3_VARIANTS, FUNCTIONS,
                                             MIN_INPUTS, VARIANTS)
from kacs_cli.experiments.data.registry import get_registry
from kacs_cli.experiments.campaign.schema import (SAFE_LABEL, choice, fail, mapping, nonempty_text, number, safe_name,
                                         type_name, whole)

SOURCES = ("published", "generated")
DEFAULT_DATASET_SEED = 0
# The budget a cell label leaves unsaid (f3-n16 beside f3-n16-N12672).
DEFAULT_N_BUDGET = Hyperparameters().N
BENCHMARK_KEYS = (
    "name", "path", "label", "source", "n", "samples", "dataset_seed", "variant", "weights", "missing", "P_hash",
    "N", "methods", "nominal",
)
# How a registry data set's nominal inputs are read: as the file stores them (one 0/1 column per
# level after the reference, the default) or merged into one column of level codes each.
NOMINAL = ("codes",)
# Keys of the benchmark entry that only make sense for a generated synthetic function.
GENERATION_KEYS = ("n", "samples", "dataset_seed", "variant")


@dataclass(frozen=True)
class DataIdentity:
    """What a cell's data are, apart from the budget it is run with: cells with equal
    identities read or generate the same rows (and share one load in a worker).

    `kind` says where the data come from: "function" (generated from f1-f4 with n, samples,
    dataset_seed and variant), "dataset" (a registry file: a published f1-f4 sample or a
    real-world set, read from the data directory) or "csv" (a user file at `path`).
    `weights`: the 0-based column of a file's data that holds the rows' sample weights
    (docs/algorithm.md section 12), None for unweighted rows.
    `nominal`: "codes" when a registry data set's one-hot groups are read merged into one
    column of level codes each (its categorical inputs), None for the file as it is.
    `missing`: the fraction of the input values removed completely at random before each run's
    split (execution.missing_cells), in (0, 1); None for the data as they are (`missing: 0`
    is None too, so that it names the same cell as an entry without the key).
    """

    benchmark: str
    kind: str
    path: str | None = None
    n: int | None = None
    samples: int | None = None
    dataset_seed: int | None = None
    variant: str | None = None
    weights: int | None = None
    nominal: str | None = None
    missing: float | None = None

    @property
    def categorical_columns(self) -> tuple[int, ...]:
        """The 0-based input columns that name categories without an order: a registry data
        set's nominal inputs once merged (`nominal: codes`); none otherwise (the one-hot file,
        f1-f4, a CSV file)."""
        if self.kind != "dataset" or self.nominal is None:
            return ()
        return get_registry()[self.benchmark].categorical_columns

    @property
    def source(self) -> str | None:
        """generated or published for f1-f4 (the authors' fixed sample is a registry file)."""
        if self.kind == "function":
            return "generated"
        return "published" if self.kind == "dataset" and self.benchmark in FUNCTIONS else None

    @property
    def real_world(self) -> bool:
        """Measured data (a registry data set other than f1-f4, or a user CSV): P_hash defaults
        to 0.8 there (docs/algorithm.md section 6)."""
        return self.kind == "csv" or (self.kind == "dataset" and self.benchmark not in FUNCTIONS)

    def to_dict(self) -> dict:
        """The resolved config's fields of a cell's data, in their written order; `weights` only
        where a column holds weights and `missing` only where values are removed, so that the
        records of other cells keep their form."""
        out = {
            "benchmark": self.benchmark,
            "kind": self.kind,
            "source": self.source,
            "path": self.path,
            "n": self.n,
            "samples": self.samples,
            "dataset_seed": self.dataset_seed,
            "variant": self.variant,
            "real_world": self.real_world,
        }
        if self.weights is not None:
            out["weights"] = self.weights
        if self.nominal is not None:
            out["nominal"] = self.nominal
        if self.missing is not None:
            out["missing"] = self.missing
        return out

    @classmethod
    def from_written(cls, written: dict) -> "DataIdentity":
        """The identity a resolved config's cell records (`to_dict`); absent fields are None."""
        return cls(**{f.name: written.get(f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class BenchmarkEntry:
    """A checked item of a config's `benchmarks`, before labels are assigned."""

    where: str  # its key path in the config, for messages: benchmarks[2]
    data: DataIdentity
    label: str | None = None  # the entry's own label, if it gives one
    N: int | None = None
    P_hash: float | None = None


@dataclass(frozen=True, eq=False)
class Cell:
    """One benchmark setting of an experiment: its data plus the budget each method runs with.

    `label` is the filename-safe name the results use (runs.csv's benchmark column, the
    curve and population file names).
    """

    index: int
    label: str
    data: DataIdentity
    # Per method: a learner's hyperparameters, or a baseline's resolved spec (baselines.Spec).
    params: dict[str, Any] = field(default_factory=dict)
    # The methods run on this cell (labels, config order) and the learner of each label; a
    # label missing from `engines` is the learner of that name.
    methods: tuple[str, ...] = ()
    engines: dict[str, str] = field(default_factory=dict)

    def engine(self, method: str) -> str:
        return self.engines.get(method, method)

    def to_dict(self, methods: Iterable[str]) -> dict:
        methods = tuple(methods)
        # Written only for a cell that runs a subset of the config's methods, so the records
        # of configs without that option keep their form.
        subset = bool(self.methods) and self.methods != methods
        out = {
            "label": self.label,
            **self.data.to_dict(),
            "hyperparameters": {m: self.params[m].as_dict() for m in (self.methods if subset else methods)},
        }
        if subset:
            out["methods"] = list(self.methods)
        return out


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.lower().endswith(".csv")


def benchmark_entry(value: Any, where: str, base_dir: Path | None) -> BenchmarkEntry:
    """Check one item of `benchmarks` and say what data it names (labels come later)."""
    registry = tuple(get_registry())
    if isinstance(value, str):
        value = {"name": value} if value.strip().lower() in registry or not _looks_like_path(value) else {"path": value}
    if not isinstance(value, dict):
        fail(where, f"must be a benchmark name ({', '.join(registry)}), a CSV path, or a mapping "
                    f"with name/path and options; got {type_name(value)}")
    entry = mapping(value, where, BENCHMARK_KEYS, "benchmark options")
    if ("name" in entry) == ("path" in entry):
        fail(where, "give exactly one of name (a built-in benchmark) or path (a CSV file)")

    label = None
    if "label" in entry:
        label = nonempty_text(entry["label"], f"{where}.label")
        if not SAFE_LABEL.match(label):
            fail(f"{where}.label", f"must be filename-safe (letters, digits, . _ -), got {label!r}")

    N = whole(entry["N"], f"{where}.N", 1) if "N" in entry else None
    P_hash = number(entry["P_hash"], f"{where}.P_hash", 0.0, 1.0) if "P_hash" in entry else None
    weights = whole(entry["weights"], f"{where}.weights", 0) if "weights" in entry else None
    missing = None
    if "missing" in entry:
        missing = number(entry["missing"], f"{where}.missing", 0.0, 1.0, open_hi=True) or None
    nominal = choice(entry["nominal"], f"{where}.nominal", NOMINAL) if "nominal" in entry else None
    if nominal is not None:
        name = str(entry.get("name", "")).strip().lower()
        info = get_registry().get(name)
        if info is None or not info.categorical:
            with_groups = ", ".join(n for n, i in get_registry().items() if i.categorical)
            fail(f"{where}.nominal", f"reads a registry data set's one-hot inputs as codes; "
                                     f"{entry.get('name') or entry.get('path')!r} has none (those that do: {with_groups})")
        for key in ("source", *GENERATION_KEYS):
            if key in entry:
                fail(f"{where}.{key}", f"only applies to the synthetic functions f1-f4, not to the data set {name}")
        if weights is not None:
            fail(f"{where}.nominal", "is not combined with weights (the weights column counts the file's columns); "
                                     "drop one of them")
        data = DataIdentity(benchmark=name, kind="dataset", n=len(info.merged_columns) - 1, samples=info.rows,
                            nominal=nominal, missing=missing)
        return BenchmarkEntry(where=where, data=data, label=label, N=N, P_hash=P_hash)

    if "path" in entry:
        raw_path = nonempty_text(entry["path"], f"{where}.path")
        for key in ("source", *GENERATION_KEYS):
            if key in entry:
                fail(f"{where}.{key}", "only applies to the synthetic functions f1-f4; a CSV file is used as it is")
        p = Path(raw_path).expanduser()
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        p = p.resolve()
        data = DataIdentity(benchmark=safe_name(p.stem), kind="csv", path=str(p), weights=weights, missing=missing)
        return BenchmarkEntry(where=where, data=data, label=label, N=N, P_hash=P_hash)

    name = nonempty_text(entry["name"], f"{where}.name").lower()
    if name in FUNCTIONS:
        source = choice(entry.get("source", "generated"), f"{where}.source", SOURCES)
        if source == "published":
            for key in GENERATION_KEYS:
                if key in entry:
                    fail(f"{where}.{key}",
                         "the published sample is fixed (n = 10, 1000 samples); use source: generated "
                         "to choose n, samples, dataset_seed or a variant")
            info = get_registry()[name]
            data = dataclasses.replace(_registry_data(name, info, weights, where), missing=missing)
            return BenchmarkEntry(where=where, data=data, label=label, N=N, P_hash=P_hash)
        if weights is not None:
            fail(f"{where}.weights", f"a generated {name} has no columns to take weights from; weights "
                                     f"name a column of a data file (a CSV path or a registry data set)")
        n = whole(entry.get("n", DEFAULT_N), f"{where}.n", 1)
        samples = whole(entry.get("samples", DEFAULT_SAMPLES), f"{where}.samples", 10)
        seed = whole(entry.get("dataset_seed", DEFAULT_DATASET_SEED), f"{where}.dataset_seed", 0)
        variant = entry.get("variant")
        if variant is not None:
            variant = choice(variant, f"{where}.variant", VARIANTS)
            if name != "f3" and variant in F3_VARIANTS:
                fail(f"{where}.variant", f"{variant} is defined for f3 only (docs/algorithm.md section 8), not {name}; "
                                         f"the input laws skewed and discrete apply to every function")
        # Rosenbrock and Cross are undefined below two inputs: refuse before any run.
        if n < MIN_INPUTS[name]:
            fail(f"{where}.n", f"{name} needs n >= {MIN_INPUTS[name]} input variables, got {n}")
        data = DataIdentity(benchmark=name, kind="function", n=n, samples=samples, dataset_seed=seed,
                            variant=variant, missing=missing)
        return BenchmarkEntry(where=where, data=data, label=label, N=N, P_hash=P_hash)

    if name in registry:
        for key in ("source", *GENERATION_KEYS):
            if key in entry:
                fail(f"{where}.{key}", f"only applies to the synthetic functions f1-f4, not to the data set {name}")
        info = get_registry()[name]
        data = dataclasses.replace(_registry_data(name, info, weights, where), missing=missing)
        return BenchmarkEntry(where=where, data=data, label=label, N=N, P_hash=P_hash)

    fail(f"{where}.name", f"unknown benchmark {entry['name']!r}; use one of {', '.join(registry)}, "
                          f"or path: <file.csv> for your own data")


def _registry_data(name: str, info, weights: int | None, where: str) -> DataIdentity:
    """The identity of a registry data set's cell, with `weights` (a column of its file) checked
    against the registry's shape: an input column, which then is no input."""
    if weights is not None and weights >= info.n_inputs:
        fail(f"{where}.weights", f"{name} has input columns 0 to {info.n_inputs - 1} (the target is column "
                                 f"{info.n_inputs}); the weights must be one of them, got {weights}")
    n = info.n_inputs if weights is None else info.n_inputs - 1
    return DataIdentity(benchmark=name, kind="dataset", n=n, samples=info.rows, weights=weights)


# Suffixes that tell cells of one benchmark apart, in label order. Data attributes are
# shown on every cell once they vary; budget attributes only where they depart from the
# default, so the guideline cells of the dimension sweep read f3-n16-N12672 beside f3-n16.
def _suffixes(group: list[BenchmarkEntry], p_hash_default: dict[int, float]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {id(e): [] for e in group}
    if len(group) == 1:
        return out

    def varies(values: list, none_is_value: bool = False) -> bool:
        # None means "not applicable" (the seed of a published sample), except for the
        # variant, where it is the plain function.
        return len({v for v in values if none_is_value or v is not None}) > 1

    attrs = [
        ("source", lambda e: e.data.source, lambda v: "published" if v == "published" else None),
        ("variant", lambda e: e.data.variant, lambda v: v),
        # A data set's n follows from its file (it differs only where a column holds weights,
        # which the weights suffix says): n labels generated cells alone.
        ("n", lambda e: e.data.n if e.data.kind == "function" else None, lambda v: f"n{v}"),
        ("samples", lambda e: e.data.samples, lambda v: f"s{v}"),
        ("dataset_seed", lambda e: e.data.dataset_seed, lambda v: f"d{v}"),
        ("weights", lambda e: e.data.weights, lambda v: f"w{v}"),
        # boston-m10 beside boston: the share of input values removed, in percent.
        ("missing", lambda e: e.data.missing, lambda v: f"m{100 * v:g}"),
    ]
    for name, get, fmt in attrs:
        values = [get(e) for e in group]
        if not varies(values, none_is_value=name in ("variant", "weights", "missing")):
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


def assign_labels(entries: list[BenchmarkEntry]) -> list[str]:
    """The cell label of each entry: its own, else its benchmark with the suffixes that tell
    it apart from the other entries of that benchmark; a label used twice is refused."""
    p_default = {id(e): default_p_hash(e.data.real_world) for e in entries}
    labels: list[str | None] = [e.label for e in entries]
    groups: dict[str, list[BenchmarkEntry]] = {}
    for e in entries:
        if e.label is None:
            groups.setdefault(e.data.benchmark, []).append(e)
    for base, group in groups.items():
        suffixes = _suffixes(group, p_default)
        for e in group:
            # A cell reading nominal inputs as codes always says so: the same name without it
            # is the file as stored (one-hot), in this config and any other.
            nominal = [e.data.nominal] if e.data.nominal else []
            labels[entries.index(e)] = "-".join([base, *nominal, *suffixes[id(e)]])
    seen: dict[str, int] = {}
    for i, (e, label) in enumerate(zip(entries, labels)):
        if label in seen:
            other = entries[seen[label]]
            if (other.data, other.N, other.P_hash) == (e.data, e.N, e.P_hash):
                fail(e.where, f"repeats {other.where}; remove one of them")
            fail(e.where, f"its cell label {label!r} is already used by {other.where}; "
                          f"give one of them a distinct label: <name>")
        seen[label] = i
    return labels  # type: ignore[return-value]
