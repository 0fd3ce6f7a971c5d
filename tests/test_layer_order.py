"""Inside the experiments and the estimators layers imports point one way: each module
imports only the modules after it in its layer's order (the order of the layer's docstring),
the layers below, and an optional dependency inside the function that needs it."""

from pathlib import Path
from typing import NamedTuple

import pytest

import kacs_cli.estimators
import kacs_cli.experiments

from layer_support import imports


class Layer(NamedTuple):
    folder: Path
    order: list[str]    # each module imports only modules after it
    below: tuple        # what the layer may use of the package outside it
    optional: tuple     # third-party packages imported inside functions only


LAYERS = {
    "experiments": Layer(
        Path(kacs_cli.experiments.__file__).parent,
        ["runner", "workers", "execution", "tasks", "reuse", "curvestore", "sweeps", "config", "methods", "cells",
         "schema", "results", "metrics", "bench", "dataset_fetch", "datasets", "dataset_registry", "protocols",
         "benchmarks"],
        # the engine, the baselines, the small shared modules, and the package data's folder
        ("kacs_cli.engine", "kacs_cli.baselines", "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic",
         "kacs_cli.experiments.PACKAGE_DATA"),
        ("dask", "distributed", "xcsf")),
    "estimators": Layer(
        Path(kacs_cli.estimators.__file__).parent,
        ["regressors", "base", "validation", "explain", "plots", "inspection", "loading", "classes", "persistence"],
        ("kacs_cli.engine", "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic", "kacs_cli.version"),
        ("matplotlib",)),
}
MODULES = [(name, module) for name, layer in LAYERS.items() for module in layer.order]


@pytest.mark.parametrize("name", LAYERS)
def test_every_module_of_the_layer_is_in_the_order(name):
    layer = LAYERS[name]
    assert sorted(p.stem for p in layer.folder.glob("*.py") if p.stem != "__init__") == sorted(layer.order)


@pytest.mark.parametrize("name, module", MODULES, ids=[f"{n}.{m}" for n, m in MODULES])
def test_a_module_imports_the_layers_below_and_later_modules_only(name, module):
    layer = LAYERS[name]
    later = layer.order[layer.order.index(module) + 1:]
    for imported, top_level in imports(layer.folder / f"{module}.py"):
        if not top_level:
            assert imported.startswith(layer.optional), (module, imported)
        elif imported.startswith(layer.below):
            continue
        elif imported.startswith(f"kacs_cli.{name}."):
            assert imported.split(".")[2] in later, (module, imported)
        else:
            assert not imported.startswith("kacs_cli"), (module, imported)
