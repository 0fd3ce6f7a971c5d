"""What a module imports, for the tests that a layer imports only downward."""

import ast
import functools


def syntax_tree(path) -> ast.Module:
    """The module's syntax tree, parsed once per version of the file (several tests read every
    module of the package); not to be changed by the caller."""
    stat = path.stat()
    return _parse(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _parse(path, mtime_ns, size) -> ast.Module:
    return ast.parse(path.read_text())


def imports(path):
    """[(imported name, at module level?)]; `from a import b` gives a.b. An import in a
    module-level try (a platform's module, such as fcntl) is at module level too."""
    return list(_imports(syntax_tree(path)))


@functools.cache
def _imports(tree) -> tuple:
    module_level = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.Try):
            module_level += node.body + [s for h in node.handlers for s in h.body] + node.orelse
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        found += [(name, any(node is s for s in module_level)) for name in names]
    return tuple(found)
