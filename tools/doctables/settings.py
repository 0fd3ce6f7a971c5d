"""The settings tables of docs/configs.md, rendered from their declarations in the package
(every hyperparameter: kacs_cli/engine/params.py DECLARATIONS), so that a new one appears there
with its type, default, allowed values, learners and flag."""

from __future__ import annotations

from kacs_cli.engine import registry
from kacs_cli.engine.params import DECLARATIONS

from tools.doctables.common import Runs, table


def _allowed(declared) -> str:
    if declared.choices:
        return ", ".join(declared.choices)
    if declared.kind is bool:
        return "true, false"
    rules = declared.rule or "any number"
    return f"{rules}, or per input a n + b" if declared.per_input else rules


def _learners(declared) -> str:
    takers = registry.takers(declared.name)
    return "both" if len(takers) == len(registry.names()) else ", ".join(takers)


def t_hyperparameters(_: Runs) -> str:
    rows = []
    for d in DECLARATIONS:
        rows.append([f"`{d.name}`", d.type_name, f"`{d.default!r}`".replace("'", ""), _allowed(d),
                     _learners(d),
                     "" if d.switch is None or d.switch == d.name else f"`{d.switch}`",
                     f"`{d.flag}`" if d.flag else "", d.help])
    return table(["name", "type", "default", "allowed", "learners", "acts with", "`kacs fit`", "what it is"],
                 rows, ["l", "l", "l", "l", "l", "l", "l", "l"])
