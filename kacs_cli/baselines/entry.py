"""What a baseline is: one `Entry` of the baseline registry (kacs_cli/baselines/__init__.py).

Each family module (sklearn_models, xcsf_lib, kan_net) declares its entries with this class;
the registry imports those modules and lists their entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

# The entry whose estimator class comes from the config: {estimator: sklearn.tree.DecisionTreeRegressor}.
OPEN = "estimator"
# Set by the runner, never by a config: each run's learner seed, and one thread (runs are
# what runs in parallel).
SEED_PARAM = "random_state"
JOBS_PARAM = "n_jobs"


@dataclass(frozen=True)
class Entry:
    """What the config, the runner and the report need of one baseline."""

    name: str                                    # configs and runs.csv (lower case)
    label: str                                   # tables and messages
    # Import path of the estimator class; None for OPEN (the config names it).
    estimator: Optional[str]
    # param_count(fitted estimator, n inputs) -> its parameter count, or None where undefined.
    param_count: Callable[[Any, int], Optional[int]]
    counted: str = ""                            # what param_count counts (docs/baselines.md's table)
    defaults: dict = field(default_factory=dict)  # departures from the class's own defaults
    extra: Optional[str] = None                  # pip extra of kacs bringing its packages
    modules: tuple[str, ...] = ()                # importable once that extra is installed
    # The estimator parameter that takes the config's `iterations` unless the method sets it.
    iterations_param: Optional[str] = None
    # The estimator parameter that takes each cell's P_hash in a campaign, as a learner's does
    # (docs/algorithm.md section 6: 0.0 on f1-f4, 0.8 on real-world data; the method's own
    # value beats that default, the benchmark entry's P_hash beats both): for a rule learner
    # whose authors set its covering's generality by the kind of data.
    p_hash_param: Optional[str] = None
    # Run once per process before the first fit, beside importing `modules`: what the first
    # fit would otherwise pay inside its timing.
    warm_up: Optional[Callable[[], None]] = None
    # Relative seconds of one fit on (rows, n): only to start the longest runs first.
    cost: Callable[[int, int], float] = lambda rows, n: rows * n * 1e-6
    # A model a person can read whole (an additive model, a few trees or rules, compacted
    # rules): the accuracy-against-size report draws its front through these; every other
    # baseline is an accurate reference drawn beside it.
    readable: bool = False
