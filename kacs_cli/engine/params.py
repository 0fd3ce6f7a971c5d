"""Hyperparameters of KACS and XCSF (docs/algorithm.md section 6), validated once, and their typed form
for the compiled engine."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import NamedTuple

from kacs_cli.errors import UserError

SEMANTICS = ("reference", "article")
# One switch per place where the article's prose and the authors' code disagree
# (docs/algorithm.md, "Two semantics"): false follows the code, true the prose. `semantics:
# article` turns every one of them on; under `reference` each can be turned on alone. They
# are left out of `as_dict()` while false, so resolved configs and model files of runs
# without them read as before.
ARTICLE_SWITCHES = (
    "article_intervals",        # intervals stored as ordered (lower, upper) bounds
    "article_reshuffle",        # a fresh random order of the training rows in every epoch
    "article_cover_weights",    # every weight of a covered rule drawn independently
    "article_cover_deletion",   # covering does not trigger deletion (only the GA does)
    "article_offspring",        # children always get the parents' mean eps and 0.1 x mean F
    "article_mutation",         # mutation with probability mu per bound, not per dimension
    "article_subsumption",      # a parent subsumes a child whose intervals are a subset of its own
    "article_fresh_moments",    # children start with zero Adam moments
    "article_deletion_vote",    # the vote tests F < delta Fbar and scales by Fbar / F, Fbar = sum F / N
    "article_deletion_timing",  # deletion after both children are inserted, not after each
    "article_xcsf_inputs",      # XCSF predicts with w . (1, x), not w . (1, x - l)
    "article_xcsf_error",       # XCSF's error update uses the prediction before the weight update
)
# The one detail where the default follows the prose and not the authors' code: KACS's
# inner gradients use the outer slope s_q at prediction time; true: after the outer rules'
# update, as the code computes it. Left out of `as_dict()` while false.
CODE_SWITCHES = ("slope_after_outer_update",)
# Population budget (docs/adaptive_budget.md): `fixed` keeps N for the whole run (the
# article, docs/algorithm.md section 6); `adaptive` lets KACS grow N from its starting value up to the ceiling N_max.
BUDGETS = ("fixed", "adaptive")
# The adaptive budget's own hyperparameters. They are left out of `as_dict()` under a fixed
# budget, so the resolved configs (and model files) of fixed-budget runs read as before.
BUDGET_FIELDS = ("N_max", "budget_window", "budget_cover_rate", "budget_growth")
# How inputs reach the rules' [0, 1] domain (kacs_cli/scaling.py): `minmax` (docs/algorithm.md section 1,
# the article) or `quantile` (each column's empirical distribution on the train rows mapped
# to uniform, for skewed or discrete inputs). The engine never reads it: the layers above
# transform the data before the engine sees it.
INPUT_TRANSFORMS = ("minmax", "quantile")
# Full-batch refinement after evolution (engine/refine.py; KACS only). Like the budget's,
# its settings are left out of `as_dict()` while refinement is off.
REFINE_FIELDS = ("refine_max_iter", "refine_pull", "refine_validation")
# Compaction after training (engine/compaction.py), a run's extra step whose metrics are
# recorded beside the uncompacted model's; left out of `as_dict()` while it is `none`.
COMPACTIONS = ("none", "piecewise", "single-winner", "closest")
COMPACT_FIELDS = ("compact_rules", "compact_tolerance")
# The hyperparameters that name one of a few settings, and those settings.
CHOICES = {"semantics": SEMANTICS, "budget": BUDGETS, "input_transform": INPUT_TRANSFORMS,
           "compaction": COMPACTIONS}
# The hyperparameters that are true or false.
BOOLEANS = ("do_subsumption", "refinement", *ARTICLE_SWITCHES, *CODE_SWITCHES)


@dataclass(frozen=True)
class Hyperparameters:
    N: int = 6400
    e0: float = 0.01
    beta: float = 0.2
    alpha: float = 1.0
    nu: float = 1.0
    delta: float = 0.1
    m0: float = 0.1
    r0: float = 1.0
    theta_GA: float = 50.0
    theta_del: float = 50.0
    theta_sub: float = 50.0
    chi: float = 0.8
    mu: float = 0.04
    tau: float = 0.4
    F_I: float = 0.01
    do_subsumption: bool = True
    P_hash: float = 0.0
    eta: float = 0.001
    beta1: float = 0.9
    beta2: float = 0.999
    eps_adam: float = 1e-8
    semantics: str = "reference"
    budget: str = "fixed"
    N_max: int = 25600
    budget_window: int = 1000
    budget_cover_rate: float = 0.002
    budget_growth: float = 0.1
    input_transform: str = "minmax"
    refinement: bool = False
    refine_max_iter: int = 300
    refine_pull: float = 1e-5
    refine_validation: float = 0.0
    compaction: str = "none"
    compact_rules: float = 0.1
    compact_tolerance: float = 0.0
    article_intervals: bool = False
    article_reshuffle: bool = False
    article_cover_weights: bool = False
    article_cover_deletion: bool = False
    article_offspring: bool = False
    article_mutation: bool = False
    article_subsumption: bool = False
    article_fresh_moments: bool = False
    article_deletion_vote: bool = False
    article_deletion_timing: bool = False
    article_xcsf_inputs: bool = False
    article_xcsf_error: bool = False
    slope_after_outer_update: bool = False

    def __post_init__(self):
        self.validate()

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def with_overrides(self, **overrides) -> "Hyperparameters":
        unknown = sorted(set(overrides) - set(self.names()))
        if unknown:
            raise UserError(
                f"unknown hyperparameter {unknown[0]!r}; known: {', '.join(self.names())}"
            )
        return replace(self, **overrides)

    def follows_article(self, switch: str) -> bool:
        """Whether the detail `switch` (ARTICLE_SWITCHES) follows the prose: set alone, or
        through `semantics: article`."""
        return self.semantics == "article" or getattr(self, switch)

    def for_engine(self) -> "EngineHyperparameters":
        """The typed tuple the compiled engine reads (see `EngineHyperparameters`)."""
        values = {name: _ENGINE_TYPES[name](getattr(self, name)) for name in _ENGINE_TYPES}
        for name in ARTICLE_SWITCHES:
            if name in values:
                values[name] = self.follows_article(name)
        return EngineHyperparameters(**values)

    def as_dict(self) -> dict:
        """Every hyperparameter by name; under `budget: fixed` without the adaptive budget's
        own (they do nothing there, and configs written before they existed stay equal)."""
        values = asdict(self)
        if self.budget == "fixed":
            for name in ("budget", *BUDGET_FIELDS):
                values.pop(name)
        if self.input_transform == "minmax":
            values.pop("input_transform")
        if not self.refinement:
            for name in ("refinement", *REFINE_FIELDS):
                values.pop(name)
        if self.compaction == "none":
            for name in ("compaction", *COMPACT_FIELDS):
                values.pop(name)
        for name in (*ARTICLE_SWITCHES, *CODE_SWITCHES):
            if not values[name]:
                values.pop(name)
        return values

    def validate(self) -> None:
        def bad(name, why):
            raise UserError(f"hyperparameter {name} = {getattr(self, name)!r} is invalid: {why}")

        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in CHOICES:
                if value not in CHOICES[f.name]:
                    bad(f.name, f"must be one of {', '.join(CHOICES[f.name])}")
                continue
            if f.name in BOOLEANS:
                if not isinstance(value, bool):
                    bad(f.name, "must be true or false")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                bad(f.name, "must be a number")
            if not math.isfinite(value):
                bad(f.name, "must be finite")
        if self.semantics == "article" and self.slope_after_outer_update:
            bad("slope_after_outer_update", "the authors' code's outer slope is not the article's; "
                                            "use it under semantics: reference")
        if int(self.N) != self.N or self.N < 1:
            bad("N", "the population budget must be a whole number >= 1")
        for name in ("chi", "mu", "tau", "P_hash", "delta", "beta", "beta1", "beta2"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                bad(name, "a probability or rate must lie in [0, 1]")
        if self.tau == 0.0:
            bad("tau", "tournament selection needs tau > 0")
        if self.beta2 >= 1.0 or self.beta1 >= 1.0:
            bad("beta1" if self.beta1 >= 1.0 else "beta2", "Adam decay rates must be < 1")
        for name in ("e0", "eps_adam", "alpha"):
            if getattr(self, name) <= 0.0:
                bad(name, "must be > 0")
        for name in ("nu", "m0", "r0", "theta_GA", "theta_del", "theta_sub", "F_I", "eta"):
            if getattr(self, name) < 0.0:
                bad(name, "must be >= 0")
        if self.r0 == 0.0:
            bad("r0", "covering needs a spread r0 > 0")
        if self.F_I == 0.0:
            bad("F_I", "initial fitness must be > 0 (fitness-weighted predictions divide by it)")
        if int(self.refine_max_iter) != self.refine_max_iter or self.refine_max_iter < 1:
            bad("refine_max_iter", "the refinement's L-BFGS-B iterations must be a whole number >= 1")
        if self.refine_pull < 0.0:
            bad("refine_pull", "the pull towards the evolved weights must be >= 0")
        if not 0.0 <= self.refine_validation < 1.0:
            bad("refine_validation", "the validation fraction of the train rows must lie in [0, 1)")
        if not 0.0 < self.compact_rules <= 1.0:
            bad("compact_rules", "the share of the rules a compaction keeps must lie in (0, 1]")
        if self.compact_tolerance < 0.0:
            bad("compact_tolerance", "must be >= 0 (0: find the tolerance that meets compact_rules)")
        for name in ("N_max", "budget_window"):
            value = getattr(self, name)
            if int(value) != value or value < 1:
                bad(name, "must be a whole number >= 1")
        if self.budget == "adaptive" and self.N_max < self.N:
            bad("N_max", f"the ceiling of the adaptive budget must be >= the starting budget "
                         f"N = {self.N}")
        if not 0.0 < self.budget_cover_rate <= 1.0:
            bad("budget_cover_rate", "a covering rate must lie in (0, 1]")
        if not 0.0 < self.budget_growth <= 1.0:
            bad("budget_growth", "the growth step is a fraction of N in (0, 1]")


# Hyperparameters the engine does not read from its tuple: the budget N is population state
# (it grows under budget: adaptive; population.py), `semantics` reaches it through the
# article switches and `budget` as budget state (budget.py), and the input transform, the
# order of the training rows and the refinement act before, around and after the compiled
# training loop.
_NOT_IN_ENGINE = ("N", "semantics", "budget", "input_transform", "refinement", *REFINE_FIELDS,
                  "compaction", *COMPACT_FIELDS, "article_reshuffle")
_ENGINE_TYPES = {f.name: {"float": float, "int": int, "bool": bool}[f.type]
                 for f in fields(Hyperparameters) if f.name not in _NOT_IN_ENGINE}

# The hyperparameters as the compiled engine reads them, `hp.beta` rather than an index into
# a float vector: one field per dataclass field above (same name, same Python type, so that
# the numba signature, and with it the cached machine code, is the same for every config;
# an article switch holds its value under the semantics, `follows_article`). numba types it
# as a heterogeneous tuple: a field read is a register, and the engine's compiled code stays
# cacheable (unlike a jitclass).
EngineHyperparameters = NamedTuple("EngineHyperparameters", list(_ENGINE_TYPES.items()))


def default_p_hash(real_world: bool) -> float:
    """docs/algorithm.md section 6: P_hash is 0.0 on synthetic functions and 0.8 on real-world data."""
    return 0.8 if real_world else 0.0
