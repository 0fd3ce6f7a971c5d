"""What a module imports, for the tests that a layer imports only downward."""

import ast


def imports(path):
    """[(imported name, at module level?)]; `from a import b` gives a.b. An import in a
    module-level try (a platform's module, such as fcntl) is at module level too."""
    tree = ast.parse(path.read_text())
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
    return found
