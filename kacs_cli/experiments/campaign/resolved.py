"""The parts of a results folder's config.yaml read back (results.ResolvedConfig holds them):
a cell, each method's settings in it, a report's include.

A hand-written config (the report reads those too) may give any field another form: such a
field reads as None (or empty), never as an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kacs_cli.baselines import PARTIAL


def int_or_none(value: Any) -> int | None:
    """A whole number written as a number or a text ("1000", 1000.0), rounded; None otherwise."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return int(round(f)) if math.isfinite(f) else None


@dataclass(frozen=True)
class MethodSettings:
    """One method's settings in a resolved cell, as written: a learner's hyperparameters (all of
    them) or a baseline's {estimator, params}. Kept as written, not parsed into Hyperparameters:
    a run's identity is what the folder holds, and a folder written before a hyperparameter
    existed must still read."""

    written: Any

    def _get(self, key: str) -> Any:
        return self.written.get(key) if isinstance(self.written, dict) else None

    @property
    def N(self) -> int | None:
        """The population budget; None for a baseline (or a budget of another form)."""
        return int_or_none(self._get("N"))

    @property
    def estimator(self) -> Any:
        """A baseline's estimator name (None for a learner)."""
        return self._get("estimator")

    @property
    def params(self) -> dict | None:
        """A baseline's parameters (None for a learner)."""
        params = self._get("params")
        return params if isinstance(params, dict) else None

    @property
    def partial(self) -> bool:
        """A baseline recorded without its optional extra: `params` holds only what the
        config and the entry gave, not every parameter of the class."""
        return self._get(PARTIAL) is True


# Fields of a resolved cell that name it or list its methods rather than say what its data are.
_NOT_DATA = ("label", "hyperparameters", "methods")


@dataclass(frozen=True)
class ResolvedCell:
    """One of a resolved config's `cells` (Cell.to_dict): its label, its data, its methods and
    each method's settings. A field of another form reads as None (or empty)."""

    label: str
    written: dict               # every key as written: the runner compares cells by all of them
    benchmark: str              # the benchmark its data are (the label where none is named)
    variant: Any                # variant, n and samples as written (None where absent)
    n: Any
    samples: Any
    methods: tuple[str, ...]    # its own `methods` (a subset of the config's); () when absent
    settings: dict              # method label -> MethodSettings; {} when none are written

    @classmethod
    def of(cls, written: dict) -> "ResolvedCell":
        hyper = written.get("hyperparameters")
        methods = written.get("methods")
        return cls(
            label=str(written["label"]), written=written,
            benchmark=str(written.get("benchmark") or written["label"]),
            variant=written.get("variant"), n=written.get("n"), samples=written.get("samples"),
            methods=tuple(str(m) for m in methods) if isinstance(methods, (list, tuple)) else (),
            settings=({str(m): MethodSettings(v) for m, v in hyper.items()} if isinstance(hyper, dict) else {}),
        )

    @property
    def data(self) -> dict:
        """What its data are (every written key but the label, methods and settings)."""
        return {k: v for k, v in self.written.items() if k not in _NOT_DATA}

    @property
    def N(self) -> int | None:
        """The budget every method of the cell runs with; None when they differ or one has none."""
        budgets = {s.N for s in self.settings.values() if isinstance(s.written, dict)}
        return budgets.pop() if len(budgets) == 1 else None

    def settings_of(self, method: str) -> Any:
        """A method's settings as written (None when the cell writes none for it)."""
        return self.settings[method].written if method in self.settings else None

    def with_settings(self, settings: dict) -> "ResolvedCell":
        """This cell with other settings written for its methods (MethodSettings by label)."""
        if "hyperparameters" not in self.written:
            return self
        return ResolvedCell.of({**self.written, "hyperparameters": {m: s.written for m, s in settings.items()}})


@dataclass(frozen=True)
class Include:
    """A `report: {include: ...}` entry: cells of another experiment shown in this one's report."""

    experiment: str
    benchmarks: tuple[str, ...] | None  # the cells named (label or benchmark); None: every cell

    @classmethod
    def of(cls, written: dict) -> "Include":
        wanted = written.get("benchmarks")
        return cls(str(written["experiment"]),
                   tuple(str(w) for w in wanted) if isinstance(wanted, (list, tuple)) else None)
