"""Hyperparameters of KACS and XCSF (docs/algorithm.md section 6), each declared once.

`DECLARATIONS` is the one list of hyperparameters: name, type, default, allowed values (one
range), what a learner needs to act on it, whether the compiled engine reads it, when a
resolved config leaves it out, its `kacs fit` flag and its help text. Everything else derives
from it: the `Hyperparameters` dataclass and its validation, the engine's typed tuple, the
estimators' parameter constraints and documentation (their constructors, written out, are held
to it by tests/test_estimator_signatures.py), the config schema's checks, `kacs fit`'s options,
the model file's fields and the table in docs/configs.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace
from typing import Any, NamedTuple

from kacs_cli.errors import UserError


@dataclass(frozen=True)
class Range:
    """The numbers a hyperparameter allows, in scikit-learn's terms: the fields of its
    `Interval` (the engine does not import scikit-learn; the estimators make their Interval
    of this). closed: which ends belong, "left", "right", "both" or "neither"; right None: no
    upper end; whole: whole numbers only."""
    left: float
    right: float | None = None
    closed: str = "left"
    whole: bool = False

    def __contains__(self, value) -> bool:
        if self.whole and int(value) != value:
            return False
        low_ok = self.left <= value if self.closed in ("left", "both") else self.left < value
        if self.right is None:
            return low_ok
        return low_ok and (value <= self.right if self.closed in ("right", "both") else value < self.right)

    @property
    def rule(self) -> str:
        """The range in one statement, as docs/configs.md shows it: `[0, 1)`, `> 0`, `whole, >= 1`."""
        low_closed, high_closed = self.closed in ("left", "both"), self.closed in ("right", "both")
        if self.right is None:
            rule = f"{'>=' if low_closed else '>'} {self.left:g}"
        else:
            rule = f"{'[' if low_closed else '('}{self.left:g}, {self.right:g}{']' if high_closed else ')'}"
        return f"whole, {rule}" if self.whole else rule


_WHOLE_FROM_1 = Range(1, whole=True)
_POSITIVE = Range(0, closed="neither")
_NON_NEGATIVE = Range(0)
_UNIT = Range(0, 1, closed="both")
_UNIT_OPEN_LOW = Range(0, 1, closed="right")


@dataclass(frozen=True)
class Declaration:
    """A hyperparameter. `kind` is int, float, bool or a tuple of the allowed texts.

    valid: the numbers allowed (an int's or a float's), one `Range`; why: what a value outside
    it is told. needs: what a learner must have to act on it, a key of engine/learner.py NEEDS,
    read from the learner's entry (None: every learner acts on it). engine: the compiled
    engine reads it from its typed tuple. switch: it is left out of a resolved config (and a model
    file) while this switch is at its default (itself for a switch: configs written before
    it existed stay byte-identical). config: "top" when a config sets it once at its top
    level. flag: `kacs fit`'s option for it, if any. estimator: it is a constructor argument of
    the estimators (False: a config's setting only, which an estimator derives from its own
    arguments).
    """
    name: str
    kind: Any
    default: Any
    help: str
    valid: Range | None = None
    why: str = ""
    needs: str | None = None
    engine: bool = True
    switch: str | None = None
    config: str = "any"
    flag: str | None = None
    per_input: bool = False  # may also be given per input, `a n + b` (per_input_value)
    estimator: bool = True

    @property
    def choices(self) -> tuple[str, ...] | None:
        return self.kind if isinstance(self.kind, tuple) else None

    @property
    def type_name(self) -> str:
        return "choice" if self.choices else self.kind.__name__

    @property
    def rule(self) -> str | None:
        """The allowed numbers in one statement (None: no range)."""
        return None if self.valid is None else self.valid.rule

    def problem(self, value) -> str | None:
        """Why a finite number `value` is not allowed (None: it is)."""
        if self.valid is None or value in self.valid:
            return None
        return self.why or f"must be {self.rule}"


_RATE = "a probability or rate must lie in [0, 1]"
_MUST_BE_POSITIVE = "must be > 0"
_MUST_BE_NON_NEGATIVE = "must be >= 0"
_WHOLE = "must be a whole number >= 1"
_ADAM_DECAY = Range(0, 1)
_ADAM_DECAY_WHY = "Adam decay rates must lie in [0, 1)"

D = Declaration
# Method settings of baselines and learners alike, by the name configs write: the baseline
# registry and the report read these names from here.
CATEGORICAL, IMPUTE = "categorical", "impute"
DECLARATIONS: tuple[Declaration, ...] = (
    D("N", int, 6400, "population budget (sum of numerosities)", engine=False, flag="--N",
      valid=_WHOLE_FROM_1, why="the population budget must be a whole number >= 1"),
    D("e0", float, 0.01, "error threshold of accuracy", valid=_POSITIVE, why=_MUST_BE_POSITIVE),
    D("beta", float, 0.2, "learning rate of error, fitness and match-set size", valid=_UNIT, why=_RATE),
    D("alpha", float, 1.0, "accuracy fall-off", valid=_POSITIVE, why=_MUST_BE_POSITIVE),
    D("nu", float, 1.0, "accuracy exponent", valid=_NON_NEGATIVE, why=_MUST_BE_NON_NEGATIVE),
    D("delta", float, 0.1, "deletion's fitness fraction", valid=_UNIT, why=_RATE),
    D("m0", float, 0.1, "mutation step", valid=_NON_NEGATIVE, why=_MUST_BE_NON_NEGATIVE),
    D("r0", float, 1.0, "covering spread", valid=_POSITIVE, why="covering needs a spread r0 > 0"),
    D("theta_GA", float, 50.0, "GA threshold (mean time since the last GA)", valid=_NON_NEGATIVE,
      why=_MUST_BE_NON_NEGATIVE),
    D("theta_del", float, 50.0, "deletion experience threshold", valid=_NON_NEGATIVE,
      why=_MUST_BE_NON_NEGATIVE),
    D("theta_sub", float, 50.0, "subsumption experience threshold", valid=_NON_NEGATIVE,
      why=_MUST_BE_NON_NEGATIVE),
    D("chi", float, 0.8, "crossover probability", valid=_UNIT, why=_RATE),
    D("mu", float, 0.04, "mutation probability", valid=_UNIT, why=_RATE),
    D("tau", float, 0.4, "tournament size (fraction of the action set)", valid=_UNIT_OPEN_LOW,
      why="tournament selection needs a fraction tau of the action set in (0, 1]"),
    D("F_I", float, 0.01, "initial fitness", valid=_POSITIVE,
      why="initial fitness must be > 0 (fitness-weighted predictions divide by it)"),
    D("do_subsumption", bool, True, "GA subsumption on or off"),
    D("P_hash", float, 0.0, "probability that covering takes an input's full range (0.8 on real-world data)",
      valid=_UNIT, why=_RATE),
    D("eta", float, 0.001, "Adam's step size", valid=_NON_NEGATIVE, why=_MUST_BE_NON_NEGATIVE),
    D("beta1", float, 0.9, "Adam's first-moment decay", valid=_ADAM_DECAY, why=_ADAM_DECAY_WHY),
    D("beta2", float, 0.999, "Adam's second-moment decay", valid=_ADAM_DECAY, why=_ADAM_DECAY_WHY),
    D("eps_adam", float, 1e-8, "Adam's epsilon", valid=_POSITIVE, why=_MUST_BE_POSITIVE),
    D("semantics", ("reference", "article"), "reference",
      "reference: the authors' code; article: the article's text (docs/algorithm.md, Two semantics)",
      engine=False, config="top", flag="--semantics"),
    # Population budget (docs/adaptive_budget.md): `fixed` keeps N for the whole run (the
    # article); `adaptive` lets KACS grow N from its starting value up to the ceiling N_max.
    D("budget", ("fixed", "adaptive"), "fixed", "population budget: fixed N, or adaptive up to N_max",
      needs="adaptive_budget", engine=False, switch="budget"),
    D("N_max", int, 25600, "adaptive budget: ceiling of N", needs="adaptive_budget", switch="budget",
      valid=_WHOLE_FROM_1, why=_WHOLE),
    D("budget_window", int, 1000, "adaptive budget: iterations between growth checks",
      needs="adaptive_budget", switch="budget", valid=_WHOLE_FROM_1, why=_WHOLE),
    D("budget_cover_rate", float, 0.002, "adaptive budget: covering rate above which N grows",
      needs="adaptive_budget", switch="budget", valid=_UNIT_OPEN_LOW, why="a covering rate must lie in (0, 1]"),
    D("budget_growth", float, 0.1, "adaptive budget: growth step as a fraction of N",
      needs="adaptive_budget", switch="budget", valid=_UNIT_OPEN_LOW,
      why="the growth step is a fraction of N in (0, 1]"),
    # How inputs reach the rules' [0, 1] domain (kacs_cli/scaling.py): the layers above
    # transform the data before the engine sees it.
    D("input_transform", ("minmax", "quantile"), "minmax",
      "minmax (the article) or quantile (each input through its train distribution to uniform: for skewed "
      "or discrete inputs)", engine=False, switch="input_transform", flag="--input-transform"),
    # Categorical inputs (kacs_cli/scaling.py CategoryMap, docs/algorithm.md section 12): in a
    # campaign, the columns the dataset registry declares categorical; an estimator has them
    # from its categorical_features and sets this itself.
    D(CATEGORICAL, bool, False, "the dataset registry's categorical inputs placed on their axis by their "
      "categories' mean target, false: their codes as numbers (estimators: categorical_features; kacs fit: "
      "--categorical)", engine=False, switch=CATEGORICAL, estimator=False),
    # Missing inputs in a campaign (docs/configs.md): the learners read NaN natively
    # (docs/algorithm.md section 12); `mean` fills each missing cell with its column's mean over
    # the run's train rows first, as scikit-learn's SimpleImputer does. A method setting of
    # learners and baselines alike (methods.py reads a baseline's from this declaration); an
    # estimator's user puts a SimpleImputer before it in a Pipeline.
    D(IMPUTE, ("none", "mean"), "none", "none: missing inputs (NaN) reach the method as they are; mean: each "
      "replaced by its column's mean over the run's train rows (weighted where the rows are)",
      engine=False, switch=IMPUTE, estimator=False),
    # Full-batch refinement after evolution (engine/refine.py).
    D("refinement", bool, False, "refit every rule's weights on the whole data after evolution "
      "(full-batch L-BFGS-B, early-stopped on a validation part)", needs="refine", engine=False,
      switch="refinement", flag="--refine"),
    D("refine_max_iter", int, 300, "at most this many L-BFGS-B iterations", needs="refine",
      engine=False, switch="refinement", flag="--refine-max-iter", valid=_WHOLE_FROM_1,
      why="the refinement's L-BFGS-B iterations must be a whole number >= 1"),
    D("refine_pull", float, 1e-5, "pull towards the evolved weights", needs="refine", engine=False,
      switch="refinement", flag="--refine-pull", valid=_NON_NEGATIVE,
      why="the pull towards the evolved weights must be >= 0"),
    D("refine_validation", float, 0.0, "fraction of the rows held out for early stopping (0: none)",
      needs="refine", engine=False, switch="refinement", flag="--refine-validation",
      valid=Range(0, 1),
      why="the validation fraction of the train rows must lie in [0, 1)"),
    # The refinement's penalty on rough functions (engine/refine.py): its own switch, so that
    # the resolved configs of refined runs made before it existed stay as they were.
    D("refine_smoothness", float, 0.0, "refinement: strength of the penalty on every learned function's second "
      "differences on a grid (0: none)", needs="refine", engine=False, switch="refine_smoothness",
      flag="--refine-smoothness", valid=_NON_NEGATIVE, why="the smoothness strength must be >= 0"),
    D("smoothness", ("fixed", "search"), "fixed",
      "refinement: the smoothness strength refine_smoothness as given, or chosen among 0, 1, 3, 10 and 30 by "
      "the capacity search on its held-out rows (needs capacity: search)", needs="refine", engine=False,
      switch="smoothness", flag="--smoothness"),
    # What a KACS inner function is at a missing input (docs/algorithm.md section 12): its
    # rules' lines at their intervals' centres, or one value per inner function learned by the
    # refinement (as EBM keeps a bin for missing values). Its own switch, so that the resolved
    # configs of runs made before it existed stay as they were.
    D("missing_value", ("centre", "learned"), "centre",
      "refinement: an inner function's value at a missing input: its rules' lines at their intervals' centres, "
      "or one value per inner function fitted by the refinement", needs="refine", engine=False,
      switch="missing_value", flag="--missing-value"),
    # Compaction after training (engine/compaction.py), a run's extra step whose metrics are
    # recorded beside the uncompacted model's.
    D("compaction", ("none", "piecewise", "single-winner", "closest"), "none",
      "compaction after training (docs/compaction.md)", needs="compactions", engine=False,
      switch="compaction"),
    D("compact_rules", float, 0.1, "compaction: the share of the rules it keeps", needs="compactions",
      engine=False, switch="compaction", valid=_UNIT_OPEN_LOW,
      why="the share of the rules a compaction keeps must lie in (0, 1]"),
    D("compact_tolerance", float, 0.0, "piecewise compaction: absolute tolerance instead of a rule budget "
      "(0: use compact_rules)", needs="compactions", engine=False, switch="compaction",
      valid=_NON_NEGATIVE, why="must be >= 0 (0: find the tolerance that meets compact_rules)"),
    # KACS's number of outer channels m (inner psi_{q,p} and outer Phi_q for q < m): 0 stands
    # for the article's 2n + 1, which depends on the data's n and so cannot be a fixed default.
    D("channels", int, 0, "the number m of outer channels (0: the article's 2n + 1), or per input as a n + b "
      "(n + 1, 4n + 1)", needs="channels", switch="channels", flag="--channels", per_input=True,
      valid=Range(0, whole=True),
      why="the number of outer channels must be a whole number >= 1 (0: the article's 2n + 1)"),
    # One switch per place where the article's prose and the authors' code disagree
    # (docs/algorithm.md, "Two semantics"): false follows the code, true the prose;
    # `semantics: article` turns every article_* switch on, and under `reference` each can be
    # turned on alone. Left out of a resolved config and a model file while false.
    D("article_intervals", bool, False, "intervals stored as ordered (lower, upper) bounds", switch="article_intervals"),
    D("article_reshuffle", bool, False, "a fresh random order of the training rows in every epoch",
      engine=False, switch="article_reshuffle"),
    D("article_cover_weights", bool, False, "every weight of a covered rule drawn independently",
      switch="article_cover_weights"),
    D("article_cover_deletion", bool, False, "covering does not trigger deletion (only the GA does)",
      switch="article_cover_deletion"),
    D("article_offspring", bool, False, "children always get the parents' mean error and 0.1 x their mean fitness",
      switch="article_offspring"),
    D("article_mutation", bool, False, "mutation with probability mu per bound, not per dimension",
      switch="article_mutation"),
    D("article_subsumption", bool, False, "a parent subsumes a child whose intervals are a subset of its own",
      switch="article_subsumption"),
    D("article_fresh_moments", bool, False, "children start with zero Adam moments", switch="article_fresh_moments"),
    D("article_deletion_vote", bool, False, "the deletion vote tests F < delta Fbar and scales by Fbar / F, "
      "Fbar = sum F / N", switch="article_deletion_vote"),
    D("article_deletion_timing", bool, False, "deletion after both children are inserted, not after each",
      switch="article_deletion_timing"),
    D("article_xcsf_inputs", bool, False, "XCSF predicts with w . (1, x), not w . (1, x - l)",
      needs="own_switches", switch="article_xcsf_inputs"),
    D("article_xcsf_error", bool, False, "XCSF's error update uses the prediction before the weight update",
      needs="own_switches", switch="article_xcsf_error"),
    # The one detail where the default follows the prose and not the authors' code: KACS's
    # inner gradients use the outer slope s_q at prediction time; true: after the outer rules'
    # update, as the code computes it.
    D("slope_after_outer_update", bool, False, "the inner gradients use the outer slope after the outer "
      "rules' update (the authors' code)", needs="own_switches", switch="slope_after_outer_update"),
    # Capacity chosen on the user's data (engine/capacity.py): the population budget N picked
    # by validation on a held-out part of the train rows, then refitted on all of them.
    D("capacity", ("fixed", "search"), "fixed",
      "the budget N as given, or N, 2N, 4N, ... up to capacity_max tried on a held-out part of the "
      "train rows while its error falls, the best refitted on all of them",
      engine=False, switch="capacity", flag="--capacity"),
    D("capacity_max", int, 51200, "the largest budget the search tries", engine=False, switch="capacity",
      flag="--capacity-max", valid=_WHOLE_FROM_1, why=_WHOLE),
    D("capacity_validation", float, 0.2, "fraction of the train rows held out to score the budgets",
      engine=False, switch="capacity", flag="--capacity-validation",
      valid=Range(0, 1, closed="neither"),
      why="the held-out fraction of the train rows must lie in (0, 1)"),
    # The search's judge, structure and start (docs/capacity.md section 1.1), each its own
    # switch so that the resolved configs of searches made without them stay as they were.
    D("capacity_folds", int, 1, "capacity search: 1 scores each candidate on one held-out part "
      "(capacity_validation); k >= 2 on k folds of the train rows, by the MAE of their held-out predictions",
      engine=False, switch="capacity_folds", flag="--capacity-folds", valid=_WHOLE_FROM_1,
      why="the number of folds must be a whole number >= 1 (1: one held-out part)"),
    D("capacity_channels", ("given", "both"), "given",
      "capacity search: the outer channels as given, or both n + 1 and 2n + 1 tried at every budget (the "
      "choice replaces channels)", needs="channels", engine=False, switch="capacity_channels",
      flag="--capacity-channels"),
    D("capacity_min", int, 0, "capacity search: the smallest budget it tries, the ladder's start (0: N)",
      engine=False, switch="capacity_min", flag="--capacity-min", valid=Range(0, whole=True),
      why="the search's smallest budget must be a whole number >= 1 (0: start at N)"),
    # Bagging (engine/bagging.py): `bags` models, each trained on a bootstrap sample of the
    # train rows with its own seed, averaged into one model (KACS: one model of bags x m
    # channels; XCSF: an ensemble of bags populations).
    D("bags", int, 1, "models trained on bootstrap samples of the train rows and averaged (1: one model)",
      needs="merge", engine=False, switch="bags", flag="--bags", valid=_WHOLE_FROM_1,
      why="the number of bags must be a whole number >= 1 (1: no bagging)"),
)
del D

DECLARED: dict[str, Declaration] = {d.name: d for d in DECLARATIONS}
# The hyperparameters that name one of a few settings, and those settings.
CHOICES = {d.name: d.choices for d in DECLARATIONS if d.choices}
SEMANTICS = CHOICES["semantics"]
BUDGETS = CHOICES["budget"]


# Named settings, for a user's own data (docs/capacity.md says what each is and what it was measured to do).
# A learner takes those of a preset's settings it can act on (registry.preset: XCSF has no refinement).
PRESETS = {
    "recommended": {"input_transform": "quantile", "refinement": True, "capacity": "search", "channels": "n + 1"},
}


def preset(name: str) -> dict:
    """The settings of preset `name`, every learner's (engine/registry.py `preset` keeps those
    one learner acts on)."""
    if name not in PRESETS:
        raise UserError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return dict(PRESETS[name])


def _followers(switch: str) -> tuple[str, ...]:
    return tuple(d.name for d in DECLARATIONS if d.switch == switch and d.name != switch)


ARTICLE_SWITCHES = tuple(d.name for d in DECLARATIONS if d.name.startswith("article_"))
CODE_SWITCHES = ("slope_after_outer_update",)

# The settings that act only while their switch is on (left out of a resolved config otherwise).
BUDGET_FIELDS = _followers("budget")
REFINE_FIELDS = _followers("refinement")
COMPACT_FIELDS = _followers("compaction")
# The capacity search's settings with a switch of their own: refused while the search is off.
_SEARCH_FIELDS = ("capacity_folds", "capacity_channels", "capacity_min", "smoothness")
# The overrides that make a searching run's settings those of one model at a fixed budget (a
# candidate of the search, a merged bag): the search off, and its own settings with it.
CAPACITY_FIXED = {"capacity": "fixed", **{name: DECLARED[name].default for name in _SEARCH_FIELDS}}


def _bad(name, value, why):
    return UserError(f"hyperparameter {name} = {value!r} is invalid: {why}")


def value_problem(name: str, value) -> str | None:
    """Why `value` is not allowed for hyperparameter `name` by its own declaration (None: it
    is); what it asks of the other settings is checked on all of them together (`_validate`)."""
    d = DECLARED[name]
    if d.choices:
        return None if value in d.choices else f"must be one of {', '.join(d.choices)}"
    if d.kind is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "must be a number"
    if not math.isfinite(value):
        return "must be finite"
    return d.problem(value)


def _validate(hp) -> None:
    for d in DECLARATIONS:
        why = value_problem(d.name, getattr(hp, d.name))
        if why is not None:
            raise _bad(d.name, getattr(hp, d.name), why)
    if hp.semantics == "article" and hp.slope_after_outer_update:
        raise _bad("slope_after_outer_update", True, "the authors' code's outer slope is not the article's; "
                                                     "use it under semantics: reference")
    if hp.budget == "adaptive" and hp.capacity != "fixed":
        raise _bad("capacity", hp.capacity, "the capacity search chooses a fixed budget N; it cannot be "
                                            "combined with budget: adaptive")
    for name in _SEARCH_FIELDS:
        if hp.capacity == "fixed" and getattr(hp, name) != DECLARED[name].default:
            raise _bad(name, getattr(hp, name), f"{name} acts in the capacity search; turn on capacity: search "
                                                f"or leave {name} at {DECLARED[name].default!r}")
    if hp.smoothness == "search" and not hp.refinement:
        raise _bad("smoothness", hp.smoothness, "the smoothness strength acts in the refinement; turn on "
                                                "refinement or leave smoothness: fixed")
    if hp.missing_value == "learned" and not hp.refinement:
        raise _bad("missing_value", hp.missing_value, "the value at a missing input is learned by the refinement; "
                                                      "turn on refinement or leave missing_value: centre")
    if hp.budget == "adaptive" and hp.bags > 1:
        raise _bad("bags", hp.bags, "bagging averages models of a fixed budget; it cannot be combined with "
                                    "budget: adaptive")
    if hp.budget == "adaptive" and hp.N_max < hp.N:
        raise _bad("N_max", hp.N_max, f"the ceiling of the adaptive budget must be >= the starting budget N = {hp.N}")


def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _with_overrides(self, **overrides):
    unknown = sorted(set(overrides) - set(DECLARED))
    if unknown:
        raise UserError(f"unknown hyperparameter {unknown[0]!r}; known: {', '.join(DECLARED)}")
    return replace(self, **overrides)


def _follows_article(self, switch: str) -> bool:
    """Whether the detail `switch` (ARTICLE_SWITCHES) follows the prose: set alone, or through
    `semantics: article`."""
    return self.semantics == "article" or getattr(self, switch)


def _for_engine(self) -> "EngineHyperparameters":
    """The typed tuple the compiled engine reads (see `EngineHyperparameters`); an article
    switch holds its value under the semantics (`follows_article`)."""
    values = {name: kind(getattr(self, name)) for name, kind in _ENGINE_TYPES.items()}
    for name in ARTICLE_SWITCHES:
        if name in values:
            values[name] = _follows_article(self, name)
    return EngineHyperparameters(**values)


def _as_dict(self) -> dict:
    """Every hyperparameter by name, less those whose switch is at its default (they do
    nothing there, and configs written before they existed stay equal)."""
    values = asdict(self)
    for d in DECLARATIONS:
        if d.switch is not None and getattr(self, d.switch) == DECLARED[d.switch].default:
            values.pop(d.name)
    return values


Hyperparameters = make_dataclass(
    "Hyperparameters",
    [(d.name, d.kind if not d.choices else str, field(default=d.default)) for d in DECLARATIONS],
    frozen=True,
    namespace={
        "__doc__": "The hyperparameters of one learner's run, validated when made (see DECLARATIONS).",
        "__post_init__": lambda self: _validate(self),
        "validate": _validate,
        "names": classmethod(_names),
        "with_overrides": _with_overrides,
        "for_engine": _for_engine,
        "follows_article": _follows_article,
        "as_dict": _as_dict,
    },
)
Hyperparameters.__module__ = __name__  # make_dataclass's `module=` argument is Python 3.12's

# The hyperparameters as the compiled engine reads them, `hp.beta` rather than an index into
# a float vector: one field per declaration the engine reads (same name, same Python type, so
# that the numba signature, and with it the cached machine code, is the same for every
# config; `semantics` reaches it through the article switches). numba types it as a heterogeneous tuple:
# a field read is a register, and the engine's compiled code stays cacheable (unlike a jitclass).
_ENGINE_TYPES = {d.name: d.kind for d in DECLARATIONS if d.engine}
EngineHyperparameters = NamedTuple("EngineHyperparameters", list(_ENGINE_TYPES.items()))


# A per-input value `a n + b` (declared per_input): a number of channels at every n, so one
# setting spans data of any dimension, as the article's 2n + 1 does.
PER_INPUT = re.compile(r"^\s*(\d*)\s*n\s*(?:\+\s*(\d+))?\s*$")


def per_input_problem(text: str) -> str | None:
    """Why `text` is not a per-input value (None when it is one)."""
    match = PER_INPUT.match(text)
    if match is None:
        return f"must be a whole number or a number per input such as 4n + 1, got {text!r}"
    if int(match.group(1) or 1) + int(match.group(2) or 0) < 1:
        return f"{text!r} gives no channel; a n + b needs a >= 1 or b >= 1"
    return None


def per_input_value(name: str, value: Any, n: int) -> Any:
    """A per-input value `a n + b` of the declaration `name` as its number at n inputs; any
    other value as given. A malformed text is refused in one line."""
    if not (DECLARED[name].per_input and isinstance(value, str)):
        return value
    problem = per_input_problem(value)
    if problem is not None:
        raise _bad(name, value, problem)
    a, b = PER_INPUT.match(value).groups()
    return int(a or 1) * int(n) + int(b or 0)


def coerce(name: str, value: Any) -> Any:
    """A value as its declaration's type where that is lossless (numpy scalars to Python, a
    whole float for an int field), for the front ends that pass on what a user gave."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        value = value.item()
    if DECLARED[name].kind is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def default_p_hash(real_world: bool) -> float:
    """docs/algorithm.md section 6: P_hash is 0.0 on synthetic functions and 0.8 on real-world data."""
    return 0.8 if real_world else 0.0
