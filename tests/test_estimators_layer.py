"""The estimators layer imports only downward: no cycle, nothing hidden in a function."""

from pathlib import Path

import pytest

import kacs_cli.estimators

from layer_support import imports

LAYER = Path(kacs_cli.estimators.__file__).parent
# The order of the layer's docstring: each module imports only modules after it.
ORDER = ["regressors", "base", "validation", "explain", "plots", "inspection", "loading", "classes",
         "persistence"]
# What the layer may use of the package: the engine and the small shared modules.
BELOW = ("kacs_cli.engine", "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic",
         "kacs_cli.version")


def test_every_module_of_the_layer_is_in_the_order():
    assert sorted(p.stem for p in LAYER.glob("*.py") if p.stem != "__init__") == sorted(ORDER)


@pytest.mark.parametrize("name", ORDER)
def test_a_module_imports_the_layers_below_and_later_modules_only(name):
    later = ORDER[ORDER.index(name) + 1:]
    for imported, top_level in imports(LAYER / f"{name}.py"):
        if not top_level:  # only a heavy optional dependency, imported where it is needed
            assert imported.startswith("matplotlib"), (name, imported)
        elif imported.startswith("kacs_cli.estimators."):
            assert imported.split(".")[2] in later, (name, imported)
        elif imported.startswith("kacs_cli"):
            assert imported.startswith(BELOW), (name, imported)


def test_persistence_knows_the_engine_and_the_file_only():
    # An estimator reaches it only through its _export_state: no import of an estimator,
    # of scikit-learn or of a command.
    imported = {name for name, _ in imports(LAYER / "persistence.py")}
    assert not {name for name in imported
                if name.startswith(("kacs_cli.estimators", "sklearn", "kacs_cli.cli"))}, imported
