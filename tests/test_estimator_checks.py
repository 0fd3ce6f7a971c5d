"""scikit-learn's estimator contract: every check of `parametrize_with_checks` passes.

Where an expectation of the checks does not apply, the estimators say so with scikit-learn's
tags (`__sklearn_tags__` in kacs_cli/estimators/base.py, each with its reason) or, for a check
they are expected to fail, in base.py's `expected_failed_checks` (with its reason), never by
skipping a check here. The checks fit many times on tiny data sets, so they run with a small budget: the
contract does not depend on how long the learner trains.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from kacs_cli.engine import registry
from kacs_cli.estimators import estimator_class
from kacs_cli.estimators.base import expected_failed_checks

SMALL_BUDGET = dict(n_iter=300)
# Every registered learner's estimator.
ESTIMATORS = [estimator_class(method) for method in registry.names()]


@parametrize_with_checks([cls(**SMALL_BUDGET) for cls in ESTIMATORS],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.slow
def test_the_array_api_check_passes_where_scipy_enables_it():
    # check_array_api_input skips itself (SkipTest) unless SCIPY_ARRAY_API=1 was set before
    # scipy was imported, which would change scipy for the whole suite: run it on its own.
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", __file__,
         "-k", "test_sklearn_estimator_checks and check_array_api_input"],
        env=env, capture_output=True, text=True, cwd=Path(__file__).parent, timeout=300,
    )
    if proc.returncode == pytest.ExitCode.NO_TESTS_COLLECTED:  # e.g. scikit-learn 1.6
        pytest.skip("this scikit-learn yields check_array_api_input only for array-API estimators")
    assert proc.returncode == 0 and f"{len(ESTIMATORS)} passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout


def test_tags_state_what_does_not_apply():
    for est in (cls() for cls in ESTIMATORS):
        tags = get_tags(est)
        assert tags.estimator_type == "regressor" and tags.target_tags.required
        assert tags.regressor_tags.poor_score  # the score depends on the budget (estimators/base.py)
        assert tags.input_tags.allow_nan  # a missing input (docs/algorithm.md section 12)
