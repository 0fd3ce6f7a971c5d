"""The package's layers: each is a subpackage, imports between them point down only, the
engine needs numpy and numba only, and no module of the package imports another in a cycle.
Read from the source (every import statement, also those inside functions, where a cycle
would hide). The modules are those on disk; inside the packages of `ORDERED` a module imports
only the modules after it in the order its package's docstring lists them, and
docs/architecture.md names exactly the modules of each package in the package's row."""

import ast
import re
import sys
from pathlib import Path

import pytest

import kacs_cli

from layer_support import imports, syntax_tree
from repo_support import REPO

PACKAGE = Path(kacs_cli.__file__).parent
# Lowest first. A module imports its own layer and the layers of lower rank; layers of equal
# rank (experiments and estimators) do not import each other.
RANKS = {
    "base": 0,         # kacs_cli.errors, atomic, scaling, version: what every layer needs
    "engine": 1,       # the numba engines and their driver
    "baselines": 2,    # the batch regressors beside the engines
    "experiments": 3,  # benchmarks, data, protocols, configs, the runner, the results folder
    "estimators": 3,   # the scikit-learn classes and the model file
    "reporting": 4,    # tables, statistics and figures of results folders
    "cli": 5,          # the `kacs` command line
    "package": 6,      # kacs_cli/__init__.py: the public names
}
BASE = ("kacs_cli.errors", "kacs_cli.atomic", "kacs_cli.scaling", "kacs_cli.version")
# Third-party packages of the engine (llvmlite is numba's code generator, for the cycle
# counter's intrinsic in cycles.py); pandas only for the tables its driver hands back, scipy only for the
# refinement's optimizer (L-BFGS-B), threadpoolctl only for the one BLAS thread of the steps
# after training.
ENGINE_USES = {"numpy", "numba", "llvmlite"}
ENGINE_TABLES = {"kacs_cli.engine.train": {"pandas", "threadpoolctl", "joblib"}, "kacs_cli.engine.refine": {"scipy"}}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}
# Every package (a folder with an __init__.py) and its modules (the __init__ left out), as on disk.
PACKAGES = {_module(init): sorted(_module(p).rsplit(".", 1)[1] for p in init.parent.glob("*.py")
                                  if p.name != "__init__.py")
            for init in sorted(PACKAGE.rglob("__init__.py"))}


def docstring_order(package: str) -> list[str]:
    """The modules of an ordered package in the order its docstring lists them: each item of
    the list after "from the top of this list to the bottom:" starts with a module's name and
    a colon."""
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text())) or ""
    parts = re.split(r"from\s+the\s+top\s+of\s+this\s+list\s+to\s+the\s+bottom:", doc)
    assert len(parts) == 2, f"the docstring of {package} gives no order of its modules"
    listing = parts[1]
    return re.findall(r"(?:^-\s+|;\s+|^\s+)([a-z_]+):", listing, flags=re.MULTILINE)


ORDERED = ("kacs_cli.experiments.campaign", "kacs_cli.experiments.data", "kacs_cli.estimators")
# What the ordered packages may use of the rest of the package, and what they may import inside
# a function only (an optional extra or a heavy dependency, where it is needed).
USES = {
    "kacs_cli.experiments.campaign": ("kacs_cli.engine", "kacs_cli.baselines", "kacs_cli.experiments.data",
                                      "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic"),
    "kacs_cli.experiments.data": ("kacs_cli.engine", "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic"),
    "kacs_cli.estimators": ("kacs_cli.engine", "kacs_cli.scaling", "kacs_cli.errors", "kacs_cli.atomic",
                            "kacs_cli.version"),
}
LOCAL_IMPORTS = {"kacs_cli.experiments.campaign": ("dask", "distributed", "xcsf"),
                 "kacs_cli.experiments.data": (), "kacs_cli.estimators": ("matplotlib",)}
ARCHITECTURE = REPO / "docs" / "architecture.md"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str | None:
    if module == "kacs_cli":
        return "package"
    if module in BASE:
        return "base"
    top = module.split(".")[1]
    return top if RANKS.get(top, 0) > 0 and top != "package" else None


def target(name: str) -> str | None:
    """The package module an imported name lives in (`a.b.c` of `from a.b import c` is the
    module a.b.c when there is one, else a.b), or None outside the package."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in MODULES:
            return candidate
    return None


def edges(extra=None) -> dict[str, set[str]]:
    """module -> the package modules it imports (plus `extra` edges, for the self-check)."""
    out = {m: {t for name, _ in imports(path) if (t := target(name)) and t != m} for m, path in MODULES.items()}
    for source, dest in extra or ():
        out[source].add(dest)
    return out


def upward(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} ({layer(m)}) imports {t} ({layer(t)})" for m, targets in graph.items() for t in sorted(targets)
            if layer(t) != layer(m) and RANKS[layer(t)] >= RANKS[layer(m)]]


def cycles(graph: dict[str, set[str]]) -> list[str]:
    state, stack, found = {}, [], []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_every_module_belongs_to_a_layer():
    homeless = [m for m in MODULES if layer(m) is None]
    assert not homeless, f"modules outside every layer ({', '.join(RANKS)}): {homeless}"


def test_imports_between_layers_point_down():
    wrong = upward(edges())
    assert not wrong, "imports up or sideways between layers:\n" + "\n".join(wrong)


def test_the_engine_needs_numpy_and_numba_only():
    wrong = []
    for module, path in MODULES.items():
        if layer(module) != "engine":
            continue
        allowed = ENGINE_USES | ENGINE_TABLES.get(module, set())
        for name, _ in imports(path):
            root = name.split(".")[0]
            if target(name) is None and root not in allowed and root not in sys.stdlib_module_names:
                wrong.append(f"{module} imports {name}")
            elif target(name) and layer(target(name)) not in ("engine", "base"):
                wrong.append(f"{module} imports {name}")
    assert not wrong, "the engine reaches beyond numpy, numba and the standard library:\n" + "\n".join(wrong)


def test_no_module_imports_another_in_a_cycle():
    found = cycles(edges())
    assert not found, "import cycles:\n" + "\n".join(found)


def test_the_checks_fail_on_an_upward_import_and_on_a_cycle():
    engine, report = "kacs_cli.engine.train", "kacs_cli.reporting.build"
    assert any(line.startswith(f"{engine} (engine) imports {report}") for line in upward(edges([(engine, report)])))
    graph = edges()
    below = sorted(graph[engine])[0]
    graph[below].add(engine)
    assert any(engine in c and below in c for c in cycles(graph))


def test_the_packages_are_found_on_disk():
    # the discovery itself: a wrong pattern would leave every check below with nothing to check
    assert {"kacs_cli.engine.train", "kacs_cli.experiments.campaign.runner", "kacs_cli.cli.run"} <= set(MODULES)
    assert "train" in PACKAGES["kacs_cli.engine"] and "errors" in PACKAGES["kacs_cli"]
    assert sum(len(names) for names in PACKAGES.values()) == len(MODULES) - len(PACKAGES)


@pytest.mark.parametrize("package", ORDERED)
def test_an_ordered_package_lists_each_of_its_modules_once_in_its_docstring(package):
    order = docstring_order(package)
    assert sorted(order) == PACKAGES[package], (package, order, PACKAGES[package])


ORDER_CASES = [(package, name) for package in ORDERED for name in PACKAGES[package]]


@pytest.mark.parametrize("package,name", ORDER_CASES, ids=[f"{p}.{n}" for p, n in ORDER_CASES])
def test_an_ordered_module_imports_the_modules_after_it_and_what_its_package_uses(package, name):
    order = docstring_order(package)
    later = order[order.index(name) + 1:] if name in order else []
    for imported, top_level in imports(MODULES[f"{package}.{name}"]):
        if not top_level and not imported.startswith("kacs_cli"):
            assert imported.startswith(LOCAL_IMPORTS[package]), (name, imported)
        elif imported.startswith(package + "."):
            part = imported.split(".")[len(package.split("."))]
            assert part in later or part not in PACKAGES[package], (name, imported)  # else: the package's own name
        elif imported.startswith("kacs_cli"):
            assert imported.startswith(USES[package]), (name, imported)


def _architecture_rows() -> dict[str, str]:
    """The first cell of each row of docs/architecture.md's layer table (a package's folder,
    e.g. `kacs_cli/engine/`, or for the top package its first module, `kacs_cli/errors.py`)
    and the row's text."""
    rows = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(kacs_cli(?:/[a-z_]+)*)/(?:[a-z_]+\.py)?`", line)
        if m:
            rows[m.group(1).replace("/", ".")] = line
    return rows


@pytest.mark.parametrize("package", [p for p, names in PACKAGES.items() if names])
def test_the_architecture_page_names_exactly_the_modules_of_each_package(package):
    rows = _architecture_rows()
    assert package in rows, f"docs/architecture.md has no row for {package}"
    named = set(re.findall(r"`(?:kacs_cli/)?([a-z_]+)\.py`", rows[package])) - {"__init__"}
    assert named == set(PACKAGES[package]), (package, sorted(named ^ set(PACKAGES[package])))


def test_persistence_knows_the_engine_and_the_file_only():
    # An estimator reaches it only through its _export_state: no import of an estimator,
    # of scikit-learn or of a command.
    imported = {name for name, _ in imports(MODULES["kacs_cli.estimators.persistence"])}
    assert not {name for name in imported
                if name.startswith(("kacs_cli.estimators", "sklearn", "kacs_cli.cli"))}, imported


# Names of the results folder's files: results.py alone spells them.
FOLDER_FILES = re.compile(r"""["'][^"'\n]*\b(runs\.csv|config\.yaml|curves\.csv\.gz)\b[^"'\n]*["']""")


def _code_strings(path):
    """The string constants of a module's code, docstrings left out (they are its documentation)."""
    tree = syntax_tree(path)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_only_results_names_the_files_of_the_results_folder():
    spelled = {module for module, path in MODULES.items() if module != "kacs_cli.experiments.campaign.results"
               for text in _code_strings(path) if FOLDER_FILES.search(repr(text))}
    # the command line's help texts describe the folder to the user
    assert spelled <= {"kacs_cli.cli.report", "kacs_cli.cli.run"}, spelled
