"""Experiment configs: the YAML schema, its validation, and resolution to explicit cells.

A config file describes one experiment (docs/algorithm.md section 10). Example::

    experiment: main
    semantics: reference          # reference (default) | article: docs/algorithm.md, "Two semantics"
    methods: [xcsf, kacs]         # or a mapping: {xcsf: {N: 3200}, kacs: null, rf: null}
    # method variants under their own labels (docs/adaptive_budget.md):
    #   methods: {kacs: null, kacs-adaptive: {method: kacs, budget: adaptive},
    #             kacs-guideline: {method: kacs, N: guideline}, xcsf: null}
    hyperparameters: {beta: 0.2}  # shared overrides of the docs/algorithm.md section 6 defaults
    # one difference between prose and code: {article_mutation: true}, also per method
    benchmarks:
      - {name: f1, source: published}   # the authors' 1000-point sample at n = 10
      - {name: f3, n: 12, samples: 1000, dataset_seed: 0, variant: rotated, N: 7200}
      - asn                               # real-world data set of the registry
      - {name: cs, methods: [kacs, kacs-adaptive]}   # only these methods on this cell
      - data/my_problem.csv               # any headerless numeric CSV, target last
    protocol: {name: main, runs: 30, train_fraction: 0.9}
    iterations: 100000
    eval_every: 2000

Choices made here (documented in docs/configs.md too; the benchmark entries and
cells are cells.py's, the methods and their hyperparameters methods.py's, the checks of
single keys schema.py's and the configs of `kacs scale` sweeps.py's):

- f1-f4 default to `source: generated` (inputs drawn from `dataset_seed`, default 0, with
  n = 10 and 1000 samples unless set), because every experiment but the main one generates
  its inputs (docs/algorithm.md section 8). The main experiment says `source: published` explicitly; a
  published sample is fixed, so n, samples, dataset_seed and variant are refused with it.
- P_hash defaults per benchmark (docs/algorithm.md section 6): 0.0 on f1-f4, 0.8 on real-world data and
  on user CSV files; for the learners and for a baseline whose entry takes it (X-KAN).
- Precedence of hyperparameters, lowest first: the defaults (docs/algorithm.md section 6), the benchmark's P_hash
  default, top-level `hyperparameters`, the method's overrides, and finally the benchmark
  entry's own `N` / `P_hash` (the most specific setting wins).
- Relative CSV paths are taken relative to the config file's folder and stored absolute.
- A method is a learner (`xcsf`, `kacs`), a baseline (kacs_cli/baselines: `ridge`, `rf`,
  ..., `xcsf-lib`, `kan`, or any regressor as `{estimator: module.Class, params: {...}}`), or
  a labelled variant of either (`kacs-adaptive: {method: kacs, budget: adaptive}`,
  `rf-50: {method: rf, n_estimators: 50}`); the label names the method in the results. A
  baseline's parameters are its estimator's, spelled out in full in the resolved config.
  `N: guideline` (a method override) is the article's budget guideline 24 n (2n + 1) at
  each cell's n. A benchmark entry's `methods` runs only those methods there.
- `methods` defaults to both learners, `protocol` to main, `iterations` to 100,000 and
  `eval_every` to 2000; `experiment` to the config file's name.

Resolution yields an ExperimentConfig whose `to_dict()` names every hyperparameter of every
(cell, method); the runner writes it to `<out>/config.yaml`, and a different resolved config
is how it recognizes that an output folder belongs to another experiment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kacs_cli import baselines
from kacs_cli.engine.params import SEMANTICS
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.cells import Cell, DataIdentity, assign_labels, benchmark_entry
from kacs_cli.experiments.campaign.methods import (baseline_specs, cell_methods, cell_params, hyperparameter_overrides,
                                          parse_methods, recorded_params)
from kacs_cli.experiments.data.protocols import DEFAULT_PROTOCOL, PROTOCOLS, Protocol, run_plan
from kacs_cli.experiments.campaign.schema import (SAFE_LABEL, choice, fail, load_yaml, mapping, nonempty_text, number,
                                         safe_name, type_name, whole)

DEFAULT_ITERATIONS = 100_000
DEFAULT_EVAL_EVERY = 2000

TOP_KEYS = (
    "experiment", "description", "semantics", "methods", "hyperparameters", "benchmarks",
    "protocol", "iterations", "eval_every", "report", "reuse",
)
REPORT_KEYS = ("include",)
INCLUDE_KEYS = ("experiment", "benchmarks")
PROTOCOL_KEYS = ("name", "runs", "train_fraction")


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
    # Results folders whose identical runs are copied instead of trained again (kacs_cli.experiments.campaign.reuse):
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


# --------------------------------------------------------------------------- resolution


def _protocol(value: Any, runs_override: int | None) -> Protocol:
    if value is None:
        value = {"name": DEFAULT_PROTOCOL}
    if isinstance(value, str):
        value = {"name": value}
    spec = mapping(value, "protocol", PROTOCOL_KEYS, "protocol options (name, runs, train_fraction)")
    name = choice(spec.get("name", DEFAULT_PROTOCOL), "protocol.name", PROTOCOLS)
    base = PROTOCOLS[name]
    runs = whole(spec["runs"], "protocol.runs", 1) if "runs" in spec else base.runs
    where = "protocol.runs"
    if runs_override is not None:
        runs, where = whole(runs_override, "--runs", 1), "--runs"
    fraction = base.train_fraction
    if "train_fraction" in spec:
        fraction = number(spec["train_fraction"], "protocol.train_fraction", 0.0, 1.0, open_lo=True, open_hi=True)
    try:
        run_plan(base, runs)
    except UserError as exc:
        fail(where, str(exc))
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
        fail("config", f"must be a mapping, got {type_name(raw)}")
    if "cells" in raw and "benchmarks" not in raw:
        fail("cells", "this is the resolved config `kacs run` writes into its output folder, a record "
                      "of a campaign; run the config file it came from (e.g. configs/main.yaml)")
    mapping(raw, "", TOP_KEYS, "config keys")

    if "experiment" in raw:
        experiment = nonempty_text(raw["experiment"], "experiment")
    elif default_name:
        experiment = safe_name(default_name)
    else:
        fail("experiment", "missing; name the experiment (it is the default output folder)")
    if not SAFE_LABEL.match(experiment):
        fail("experiment", f"must be filename-safe (letters, digits, . _ -), got {experiment!r}")
    description = raw.get("description")
    if description is not None:
        description = nonempty_text(description, "description")

    semantics = choice(raw.get("semantics", "reference"), "semantics", SEMANTICS)
    methods = parse_methods(raw.get("methods"))
    shared = hyperparameter_overrides(raw.get("hyperparameters"), "hyperparameters")
    protocol = _protocol(raw.get("protocol"), runs)

    its = raw.get("iterations", DEFAULT_ITERATIONS)
    its_where = "iterations"
    if iterations is not None:
        its, its_where = iterations, "--iterations"
    its = whole(its, its_where, 1)
    eval_every = whole(raw.get("eval_every", DEFAULT_EVAL_EVERY), "eval_every", 1)

    if "benchmarks" not in raw:
        fail("benchmarks", "missing; list at least one benchmark, e.g. benchmarks: [f1, asn]")
    bench = raw["benchmarks"]
    if isinstance(bench, (str, dict)):
        bench = [bench]
    if not isinstance(bench, list) or not bench:
        fail("benchmarks", f"must be a non-empty list of benchmarks, got {bench!r}")
    entries = [benchmark_entry(v, f"benchmarks[{i}]", base_dir) for i, v in enumerate(bench)]
    labels = assign_labels(entries)

    all_methods = tuple(methods)
    engines = {m: eng for m, (eng, _) in methods.items() if m != eng}
    specs = baseline_specs(methods, its)
    cells = []
    for i, (e, label) in enumerate(zip(entries, labels)):
        runs_here = cell_methods(bench[i], e.where, all_methods)
        params = cell_params(e, methods, {**specs, **baseline_specs(methods, its, e)}, shared, semantics, runs_here)
        if e.data.weights is not None:
            _check_weighted(e.where, runs_here, params)
        _check_categorical(e, label, runs_here, params)
        cells.append(Cell(index=i, label=label, data=e.data, params=params, methods=runs_here,
                          engines={m: methods[m][0] for m in runs_here if m in engines}))

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


def _check_weighted(where: str, methods: tuple[str, ...], params: dict) -> None:
    """A cell with sample weights runs only methods that fit with them: every learner, and
    the baselines whose estimator's fit takes sample_weight."""
    for method in methods:
        spec = params[method]
        if isinstance(spec, baselines.Spec) and not baselines.takes_sample_weight(spec):
            fail(f"{where}.weights", f"method {method} ({spec.estimator}) cannot fit with sample weights (its fit "
                                     f"takes no sample_weight); leave it out of this entry with methods: [...]")


def _check_categorical(entry, label: str, methods: tuple[str, ...], params: dict) -> None:
    """A method with `categorical: true` runs only on a cell that has categorical inputs: on
    any other it would train what the same method without it trains, under another name."""
    if entry.data.categorical_columns:
        return
    for method in methods:
        if getattr(params[method], "categorical", False):
            fail(f"{entry.where}", f"method {method} has categorical: true, but cell {label} has no categorical "
                                   f"inputs (a registry data set's one-hot inputs become categorical with "
                                   f"nominal: codes); leave the method out of this entry with methods: [...]")


def recorded_config(resolved: results.ResolvedConfig, where: Path | str) -> ExperimentConfig:
    """The config a results folder's config.yaml records, to run again (`kacs reproduce`):
    every cell, method and hyperparameter as written there, without `reuse:` (a run to
    reproduce is trained, never copied). A record this version cannot run is a UserError
    naming the key; the caller compares the config it gets with the record."""
    data = resolved.data
    protocol = data.get("protocol") if isinstance(data.get("protocol"), dict) else {}
    try:
        cells = []
        for i, cell in enumerate(resolved.cells or ()):
            runs_here = cell.methods or resolved.methods
            params = {}
            for method in cell.settings:
                try:
                    params[method] = recorded_params(resolved.method_engines.get(method, method),
                                                     cell.settings_of(method))
                except (UserError, TypeError) as exc:
                    fail(f"cells[{i}].hyperparameters.{method}", str(exc))
            cells.append(Cell(index=i, label=cell.label, data=DataIdentity.from_written(cell.written),
                              params=params, methods=runs_here,
                              engines={m: resolved.method_engines[m] for m in runs_here
                                       if m in resolved.method_engines}))
        if not cells:
            fail("cells", "missing; the record lists no cell")
        return ExperimentConfig(
            engines=dict(resolved.method_engines),
            experiment=nonempty_text(data.get("experiment"), "experiment"),
            semantics=choice(data.get("semantics", "reference"), "semantics", SEMANTICS),
            methods=resolved.methods,
            protocol=_protocol({k: protocol[k] for k in PROTOCOL_KEYS if k in protocol}, None),
            iterations=whole(data.get("iterations"), "iterations", 1),
            eval_every=whole(data.get("eval_every"), "eval_every", 1),
            cells=tuple(cells),
            description=data.get("description"),
            report=data.get("report"),
        )
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None


def _reuse_settings(value: Any, base_dir: Path | None) -> dict:
    """`reuse: [../results/paper/main]`: folders of finished campaigns whose identical runs
    are copied (kacs_cli.experiments.campaign.reuse). Relative paths are taken from the config file's folder, as
    CSV paths are; they must exist, or the runs would silently be trained again."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        fail("reuse", f"must be a results folder or a list of them, got {type_name(value)}")
    written, dirs = [], []
    for i, item in enumerate(value):
        text = nonempty_text(item, f"reuse[{i}]")
        folder = Path(text).expanduser()
        if not folder.is_absolute() and base_dir is not None:
            folder = base_dir / folder
        folder = folder.resolve()
        if not results.is_results_folder(folder):
            fail(f"reuse[{i}]", f"{folder} is not a results folder of `kacs run` (it needs {results.CONFIG_FILE} "
                                f"and {results.RUNS_FILE}); fix the path (relative to the config file) or remove it")
        written.append(text)
        dirs.append(str(folder))
    return {"reuse": tuple(written), "reuse_dirs": tuple(dirs)}


def _report_settings(value: Any) -> dict | None:
    """`report: {include: {experiment: NAME, benchmarks: [...]}}` (or a list of such): cells the
    report takes from another experiment's results beside this one instead of training them
    again. Returns the normalized form written to the resolved config, or None."""
    spec = mapping(value, "report", REPORT_KEYS, "report options (include)")
    if not spec:
        return None
    includes = spec.get("include")
    if includes is None:
        fail("report.include", "missing; name the experiment to take cells from, "
                               "e.g. include: {experiment: alt_protocol, benchmarks: [asn, cs]}")
    if isinstance(includes, dict):
        includes = [includes]
    if not isinstance(includes, list) or not includes:
        fail("report.include", f"must be a mapping or a list of mappings, got {type_name(includes)}")
    out = []
    for i, item in enumerate(includes):
        where = f"report.include[{i}]"
        entry = mapping(item, where, INCLUDE_KEYS, "include options (experiment, benchmarks)")
        if "experiment" not in entry:
            fail(f"{where}.experiment", "missing; name the experiment whose results hold the cells")
        name = nonempty_text(entry["experiment"], f"{where}.experiment")
        if not SAFE_LABEL.match(name):
            fail(f"{where}.experiment", f"must be an experiment name (letters, digits, . _ -), got {name!r}")
        benches = entry.get("benchmarks")
        if benches is None:
            out.append({"experiment": name, "benchmarks": None})
            continue
        if isinstance(benches, str):
            benches = [benches]
        if not isinstance(benches, list) or not benches:
            fail(f"{where}.benchmarks", f"must be a non-empty list of cell labels, got {benches!r}")
        out.append({"experiment": name,
                    "benchmarks": [nonempty_text(b, f"{where}.benchmarks[{j}]") for j, b in enumerate(benches)]})
    return {"include": out}


