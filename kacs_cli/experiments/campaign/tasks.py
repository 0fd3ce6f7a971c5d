"""The tasks of a campaign: the runs a resolved config asks for, the ones chosen now, their cost.

A task is one run: (cell, method, run index) with the split seed and learner seed of the
protocol's run plan. Both methods of one run share the split seed, so XCSF and KACS see
the identical split (docs/algorithm.md section 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kacs_cli import baselines
from kacs_cli.engine import registry
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.cells import Cell
from kacs_cli.experiments.campaign.config import ExperimentConfig


@dataclass(frozen=True, eq=False)
class Task:
    cell: Cell
    method: str
    run: int
    split_seed: int
    seed: int
    cost: float = 0.0  # rough relative duration, only for longest-first scheduling

    @property
    def key(self) -> str:
        return results.run_key(self.cell.label, self.method, self.run)

    @property
    def identity(self) -> tuple:
        """The values of results.IDENTITY_COLUMNS that the task's row holds."""
        return (self.cell.label, self.method, self.run, self.split_seed, self.seed)


def select_cells(config: ExperimentConfig, benchmarks: Iterable[str] | None) -> list[Cell]:
    """Cells picked by --benchmarks: a term matches a cell label or a benchmark name."""
    if not benchmarks:
        return list(config.cells)
    terms = [t.strip() for t in benchmarks if t and t.strip()]
    chosen: list[Cell] = []
    for term in terms:
        hits = [c for c in config.cells if term.lower() in (c.label.lower(), c.data.benchmark.lower())]
        if not hits:
            known = ", ".join(dict.fromkeys([c.label for c in config.cells] + [c.data.benchmark for c in config.cells]))
            raise UserError(f"--benchmarks: {term!r} is not in experiment {config.experiment}; choose from {known}")
        chosen.extend(c for c in hits if c not in chosen)
    return [c for c in config.cells if c in chosen]


def select_methods(config: ExperimentConfig, methods: Iterable[str] | None) -> list[str]:
    if not methods:
        return list(config.methods)
    chosen = []
    for m in methods:
        key = m.strip().lower()
        if not key:
            continue
        if key not in config.methods:
            raise UserError(f"--methods: {m!r} is not a method of experiment {config.experiment}; "
                            f"choose from {', '.join(config.methods)}")
        if key not in chosen:
            chosen.append(key)
    if not chosen:
        raise UserError(f"--methods: name at least one of {', '.join(config.methods)}")
    return [m for m in config.methods if m in chosen]


def expand_tasks(
    config: ExperimentConfig,
    cells: Iterable[Cell] | None = None,
    methods: Iterable[str] | None = None,
) -> list[Task]:
    """Tasks in result order: cell order, then method order, then run."""
    cells = list(config.cells if cells is None else cells)
    methods = list(config.methods if methods is None else methods)
    plan = config.plan()
    return [
        Task(cell, method, run, split_seed, seed)
        for cell in cells
        for method in methods
        if not cell.methods or method in cell.methods
        for run, split_seed, seed in plan
    ]


def estimate_cost(task: Task, iterations: int, eval_every: int, rows: int, n: int) -> float:
    """Relative run time, only to start the longest runs first.

    Per iteration as the learner's registry entry estimates it (`Learner.cost`). Evaluation
    passes over all rows add the rest (what makes CCPP's 9568 rows slow). A bagged run costs
    its members'.
    """
    baseline = baselines.find(task.cell.engine(task.method))
    if baseline is not None:  # one batch fit, whatever the iterations
        return baseline.cost(rows, n)
    params = task.cell.params[task.method]
    per_iteration = registry.get(task.cell.engine(task.method)).cost(n, params.N)
    if params.bags > 1:  # the members one after another, each evaluated once at its end
        return params.bags * (iterations * per_iteration + rows * per_iteration * 0.3)
    evaluations = iterations // eval_every + 1
    return iterations * per_iteration + evaluations * rows * per_iteration * 0.3


class Eta:
    """Time left from the runner's cost model (Task.cost, estimate_cost), not from the
    first runs' average: the longest runs start first, so an average over the first runs to
    finish underestimates the rest.

    The model's costs are estimates; the finished runs calibrate them: seconds per unit of
    cost = their training seconds over their cost, taken from the finished runs of the same
    cell and method (whose runs all cost the same), else of the same method (the model weighs
    the learners and the baselines by different formulas), else of all finished runs. The
    time left is the cost not done yet spread over the workers, and at least the longest run
    still in flight (runs in flight are credited with the seconds they have been running).
    """

    def __init__(self, todo: list[Task], jobs: int):
        self.cost = {t.key: max(t.cost, 1e-12) for t in todo}
        # Most specific first: (cell, method), method, everything.
        self.groups = {t.key: ((t.cell.label, t.method), t.method, None) for t in todo}
        self.jobs = max(1, jobs)
        self.finished: set[str] = set()
        self._spent: dict = {None: [0.0, 0.0]}  # group: [cost, seconds] of its finished runs

    def finish(self, key: str, seconds: float) -> None:
        if key in self.cost and key not in self.finished:
            self.finished.add(key)
            for group in self.groups[key]:
                spent = self._spent.setdefault(group, [0.0, 0.0])
                spent[0] += self.cost[key]
                spent[1] += max(float(seconds), 0.0)

    def _per_cost(self, key: str) -> float:
        for group in self.groups[key]:
            cost, seconds = self._spent.get(group, (0.0, 0.0))
            if seconds > 0:
                return seconds / cost
        return 0.0

    def left(self, running: dict[str, float]) -> float | None:
        """Seconds left, given the runs in flight and how long each has been running; None
        until a run has finished (nothing to calibrate the model with yet)."""
        if self._spent[None][1] <= 0:
            return None
        remaining, longest = 0.0, 0.0
        for key, cost in self.cost.items():
            if key in self.finished:
                continue
            expected = cost * self._per_cost(key)
            if key in running:
                expected = max(expected - running[key], 0.0)
                longest = max(longest, expected)
            remaining += expected
        return max(remaining / self.jobs, longest)
