"""The estimators' explicit constructors, held to the declarations (kacs_cli/engine/params.py)
and to what each learner supports (its registry entry, `Learner.takes`): the same parameters
in the same order with the same defaults and types, each documented, each constrained the
way scikit-learn checks it; what a learner cannot run is refused before any training."""

import dataclasses
import inspect
from numbers import Integral, Real
import pydoc
import re

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine import Hyperparameters, Model, registry
from kacs_cli.engine.learner import NEEDS
from kacs_cli.engine.params import DECLARATIONS, DECLARED, Range
from kacs_cli.errors import UserError
from kacs_cli.estimators import LearnerRegressor, estimator_class
from kacs_cli.estimators.validation import ARGUMENTS

ESTIMATORS = {method: estimator_class(method) for method in registry.names()}
# What each learner does not act on, written out by hand.
KACS_ONLY = {"budget", "N_max", "budget_window", "budget_cover_rate", "budget_growth", "refinement",
             "refine_max_iter", "refine_pull", "refine_validation", "refine_smoothness", "smoothness", "missing_value",
             "channels",
             "slope_after_outer_update", "capacity_channels"}
XCSF_ONLY = {"article_xcsf_inputs", "article_xcsf_error"}


def _annotation(declared) -> str:
    if declared.per_input:
        return "int | str"
    return "str" if declared.choices else declared.kind.__name__


def _expected(method):
    """(name, default, annotation) of every parameter, in order: the declarations the learner
    acts on that are estimator arguments (not a config's setting such as `categorical`), then
    the estimator's own arguments."""
    learner = registry.get(method)
    return ([(d.name, d.default, _annotation(d)) for d in DECLARATIONS if d.estimator and learner.takes(d)]
            + [(name, a.default, a.annotation) for name, a in ARGUMENTS.items()])


@pytest.mark.parametrize("method", ESTIMATORS)
def test_each_constructor_lists_its_learners_declarations_then_its_own_arguments(method):
    cls = ESTIMATORS[method]
    parameters = list(inspect.signature(cls).parameters.values())
    assert [(p.name, p.default, p.annotation) for p in parameters] == _expected(method)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters)
    assert "__signature__" not in vars(cls.__init__)  # written out, not generated
    everything = {d.name for d in DECLARATIONS}
    missing = everything - {p.name for p in parameters}
    # `categorical` and `impute` are a config's settings (estimator False); an estimator has
    # categorical_features, and its user a Pipeline with a SimpleImputer.
    assert missing == (XCSF_ONLY if method == "kacs" else KACS_ONLY) | {"categorical", "impute"}
    assert {d.name for d in DECLARATIONS if not d.estimator} == {"categorical", "impute"}


@pytest.mark.parametrize("method", ESTIMATORS)
def test_the_docstring_documents_every_parameter_in_order(method):
    cls = ESTIMATORS[method]
    doc = cls.__doc__
    section = doc[doc.index("Parameters\n----------\n"):doc.index("Attributes\n----------")]
    entries = re.findall(r"^(\w+) : (.+), default=(.+)$", section, flags=re.MULTILINE)
    assert [name for name, _, _ in entries] == list(inspect.signature(cls).parameters)
    for name, kind, default in entries:
        if name in DECLARED:
            declared = DECLARED[name]
            assert default == repr(declared.default)
            assert declared.help in " ".join(section.split()), name
            if declared.rule is not None:
                assert f"Allowed: {declared.rule}" in section
    # The choices of compaction are the learner's own.
    assert dict((n, k) for n, k, _ in entries)["compaction"] == (
        "{'none', 'piecewise', 'single-winner'}" if method == "kacs" else "{'none', 'closest'}")


def test_help_shows_xcsf_its_own_parameters_only():
    text = pydoc.render_doc(XCSFRegressor, renderer=pydoc.plaintext)
    assert "article_xcsf_inputs : bool, default=False" in text
    for name in KACS_ONLY:
        # neither a documented parameter nor one of the signature (`name: 'int' = ...`)
        assert not re.search(rf"^\W*{name} : ", text, flags=re.MULTILINE) and f"{name}: '" not in text, name
    text = pydoc.render_doc(KACSRegressor, renderer=pydoc.plaintext)
    assert "refine_pull : float, default=1e-05" in text and "article_xcsf_error" not in text


@pytest.mark.parametrize("method", ESTIMATORS)
def test_the_constraints_are_the_declared_ranges_and_the_learners_choices(method):
    cls = ESTIMATORS[method]
    constraints = cls._parameter_constraints
    assert list(constraints) == list(inspect.signature(cls).parameters)
    for name, allowed in constraints.items():
        if name not in DECLARED:
            continue
        valid = DECLARED[name].valid
        if valid is not None:  # scikit-learn's Interval of the declared Range
            iv = allowed[0]
            assert (iv.left, iv.right, iv.closed, iv.type) == (valid.left, valid.right, valid.closed,
                                                               Integral if valid.whole else Real)
    assert constraints["compaction"][0].options == ({"none", "piecewise", "single-winner"} if method == "kacs"
                                                    else {"none", "closest"})


@pytest.mark.parametrize("method", ESTIMATORS)
def test_scikit_learns_parameter_validation_check_passes(method):
    # Every parameter, given a value of no valid type and values outside each constraint,
    # fails fit and partial_fit with scikit-learn's InvalidParameterError, before training.
    check_param_validation(ESTIMATORS[method].__name__, ESTIMATORS[method](n_iter=10))


def test_a_parameter_error_is_one_line_a_user_error_and_scikit_learns():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    with pytest.raises(UserError) as info:
        KACSRegressor(bags=0).fit(X, y)
    assert isinstance(info.value, InvalidParameterError)
    assert str(info.value) == ("The 'bags' parameter of KACSRegressor must be an int in the range [1, inf). "
                               "Got 0 instead.")
    # A whole float is the int it is (a grid's 6400.0); any other float is told why not.
    assert KACSRegressor(N=50.0, n_iter=20).fit(X, y).model_.params.N == 50
    with pytest.raises(UserError, match="N = 50.5 is invalid: the population budget must be a whole number >= 1"):
        KACSRegressor(N=50.5, n_iter=20).fit(X, y)


@pytest.fixture
def no_training(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("trained before refusing")

    monkeypatch.setattr(Model, "train", refuse)


def test_what_xcsf_does_not_support_is_refused_before_training(no_training):
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    for name, value in [("refinement", True), ("channels", 3), ("budget", "adaptive"), ("smoothness", "search")]:
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
            XCSFRegressor(**{name: value})
    with pytest.raises(UserError, match=r"^The 'compaction' parameter of XCSFRegressor must be a str among "
                                        r"\{.*\}\. Got 'piecewise' instead\.$"):
        XCSFRegressor(compaction="piecewise").fit(X, y)
    with pytest.raises(ValueError, match="Invalid parameter 'refine_pull' for estimator XCSFRegressor"):
        XCSFRegressor().set_params(refine_pull=0.1)


def test_the_learner_entries_say_who_acts_on_each_hyperparameter():
    assert {d.needs for d in DECLARATIONS} - {None} <= set(NEEDS)
    for d in DECLARATIONS:
        expected = (("KACS",) if d.name in KACS_ONLY else ("XCSF",) if d.name in XCSF_ONLY else ("XCSF", "KACS"))
        assert registry.takers(d.name) == expected, d.name
    assert registry.takes("xcsf", "compaction", "closest") and not registry.takes("xcsf", "compaction", "piecewise")
    assert registry.takes("kacs", "compaction", "single-winner") and not registry.takes("kacs", "compaction", "closest")
    assert registry.preset("recommended", "xcsf") == {"input_transform": "quantile", "capacity": "search"}


def test_a_learner_without_a_capability_is_refused_what_needs_it_and_nothing_else(monkeypatch):
    monkeypatch.setattr(registry, "_LEARNERS", dict(registry._LEARNERS))
    bare = registry.register(dataclasses.replace(registry.get("xcsf"), name="bare", label="Bare", merge=None,
                                                 compact=None, compactions=(), own_switches=()))
    assert not any(bare.takes(DECLARED[name]) for name in ("bags", "compaction", "compact_rules",
                                                              "article_xcsf_inputs"))
    for overrides, refused in [
        ({"bags": 2}, ("bags", "bags (bagging) is defined for XCSF, KACS only; Bare cannot average its models")),
        ({"compaction": "closest"}, ("compaction", "Bare models have no compaction 'closest'; known: "
                                                   "XCSF: closest; KACS: piecewise, single-winner")),
        ({"article_xcsf_inputs": True},
         ("article_xcsf_inputs", "article_xcsf_inputs is defined for XCSF only; drop it from Bare")),
        ({"refinement": True}, ("refinement", "refinement exists only for KACS")),
        ({"refine_smoothness": 3.0},
         ("refine_smoothness", "refine_smoothness acts in the refinement, which exists only for KACS")),
        # Settings whose switch is off act on nothing: no refusal.
        ({"compact_rules": 0.5, "refine_pull": 0.1, "N_max": 30000}, None),
    ]:
        params = Hyperparameters(**overrides)
        assert registry.refusal("bare", params) == refused, overrides
        if refused is not None:
            with pytest.raises(UserError, match=f"^{re.escape(refused[1])}$"):
                Model("bare", 2, params)


def test_the_generic_constructor_takes_every_declaration():
    class Generic(LearnerRegressor):  # no `_method`: never registered as a model file's class
        pass

    parameters = inspect.signature(Generic).parameters
    assert list(parameters) == [d.name for d in DECLARATIONS if d.estimator] + list(ARGUMENTS)
    assert "categorical" not in parameters and "categorical_features" in parameters
    assert set(Generic._parameter_constraints) == set(parameters)
    assert Generic(refinement=True).get_params()["refinement"] is True


def test_the_range_rule_is_one_statement():
    rules = {d.name: d.rule for d in DECLARATIONS if d.rule}
    assert rules["r0"] == "> 0" and rules["F_I"] == "> 0" and rules["tau"] == "(0, 1]"
    assert rules["beta1"] == rules["beta2"] == "[0, 1)" and rules["N"] == "whole, >= 1"
    assert rules["capacity_validation"] == "(0, 1)" and rules["channels"] == "whole, >= 0"
    assert all(";" not in rule for rule in rules.values())
    assert Range(0, 1, closed="both").rule == "[0, 1]" and Range(1, whole=True).rule == "whole, >= 1"
    assert 0.5 in Range(0, 1, closed="neither") and 1 not in Range(0, 1) and 2.5 not in Range(1, whole=True)
