"""Command groups of the `kacs` CLI. Each module has `register(app)`."""

import importlib

_NAMES = ("bench", "data", "run", "report", "model")

COMMAND_MODULES = []
for _name in _NAMES:
    try:
        COMMAND_MODULES.append(importlib.import_module(f"kacs_cli.commands.{_name}"))
    except ModuleNotFoundError as _exc:  # a command group not written yet
        if _exc.name != f"kacs_cli.commands.{_name}":
            raise
