"""The experiments layer imports only downward: no cycle, nothing hidden in a function, and the
results folder's file names spelled in one module."""

import ast
import re
from pathlib import Path

import pytest

import kacs_cli.experiments

from layer_support import imports

LAYER = Path(kacs_cli.experiments.__file__).parent
PACKAGE = LAYER.parent
# The order of the layer's docstring: each module imports only modules after it.
ORDER = ["runner", "workers", "execution", "tasks", "reuse", "curvestore", "sweeps", "config",
         "methods", "cells", "schema", "results", "metrics", "bench", "dataset_fetch", "datasets",
         "dataset_registry", "protocols", "benchmarks"]
# What the layer may use of the package: the engine, the baselines and the small shared modules.
BELOW = ("kacs_cli.engine", "kacs_cli.baselines", "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic",
         "kacs_cli.experiments.PACKAGE_DATA")
# The optional extras, imported where they are needed.
OPTIONAL = ("dask", "distributed", "xcsf")
# Names of the results folder's files: results.py alone spells them.
FOLDER_FILES = re.compile(r"""["'][^"'\n]*\b(runs\.csv|config\.yaml|curves\.csv\.gz)\b[^"'\n]*["']""")


def test_every_module_of_the_layer_is_in_the_order():
    assert sorted(p.stem for p in LAYER.glob("*.py") if p.stem != "__init__") == sorted(ORDER)


@pytest.mark.parametrize("name", ORDER)
def test_a_module_imports_the_layers_below_and_later_modules_only(name):
    later = ORDER[ORDER.index(name) + 1:]
    for imported, top_level in imports(LAYER / f"{name}.py"):
        if not top_level:
            assert imported.startswith(OPTIONAL), (name, imported)
        elif imported.startswith("kacs_cli.experiments.") and imported != "kacs_cli.experiments.PACKAGE_DATA":
            assert imported.split(".")[2] in later, (name, imported)
        elif imported.startswith("kacs_cli"):
            assert imported.startswith(BELOW), (name, imported)


def _code_strings(path):
    """The string constants of a module's code, docstrings left out (they are its documentation)."""
    tree = ast.parse(path.read_text())
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_only_results_names_the_files_of_the_results_folder():
    spelled = {path.relative_to(PACKAGE).as_posix()
               for path in PACKAGE.rglob("*.py") if path != LAYER / "results.py"
               for text in _code_strings(path) if FOLDER_FILES.search(repr(text))}
    # the command line's help texts describe the folder to the user
    assert spelled <= {"cli/report.py", "cli/run.py"}, spelled
