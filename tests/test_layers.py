"""The package's layers: each is a subpackage, imports between them point down only, the
engine needs numpy and numba only, and no module of the package imports another in a cycle.
Read from the source (every import statement, also those inside functions, where a cycle
would hide). Within a layer, tests/test_layer_order.py checks the order of the modules."""

import sys
from pathlib import Path

import kacs_cli

from layer_support import imports

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
# Third-party packages of the engine (llvmlite is numba's code generator, for two intrinsics
# in lanes.py); pandas only for the tables its driver hands back, scipy only for the
# refinement's optimizer (L-BFGS-B), threadpoolctl only for the one BLAS thread of the steps
# after training.
ENGINE_USES = {"numpy", "numba", "llvmlite"}
ENGINE_TABLES = {"kacs_cli.engine.train": {"pandas", "threadpoolctl"}, "kacs_cli.engine.refine": {"scipy"}}


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
