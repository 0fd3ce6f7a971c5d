"""The results folder's file names are spelled in one module of the experiments layer (the
order of imports inside the layer: test_layer_order.py)."""

import ast
import re
from pathlib import Path

import kacs_cli.experiments

LAYER = Path(kacs_cli.experiments.__file__).parent
PACKAGE = LAYER.parent
# Names of the results folder's files: results.py alone spells them.
FOLDER_FILES = re.compile(r"""["'][^"'\n]*\b(runs\.csv|config\.yaml|curves\.csv\.gz)\b[^"'\n]*["']""")


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
