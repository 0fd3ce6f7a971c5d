"""The two public estimators: `KACSRegressor` and `XCSFRegressor`.

Each is `LearnerRegressor` with its learner's name and an explicit constructor listing exactly the
hyperparameters its learner acts on (engine/params.py declarations, engine/learner.py
`Learner.takes`); KACS adds what its structure offers to inspect (components, submodels, the
range of every channel sum zhat_q).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from kacs_cli.engine import Model, row_caps
from kacs_cli.estimators.base import LearnerRegressor
from kacs_cli.estimators.explain import Explanation, explain_model
from kacs_cli.estimators.inspection import submodel_table
from kacs_cli.estimators.plots import plot_kacs_functions
from kacs_cli.estimators.validation import parameter_constraints

__all__ = ["Components", "KACSRegressor", "XCSFRegressor"]

# Rows whose channel sums are computed at once for zhat_range_.
_RANGE_CHUNK = 65_536
# Mixed into the seed so that the rows measured for zhat_range_ follow no other stream.
_RANGE_STREAM = 0x7a686174

Components = namedtuple("Components", ["psihat", "zhat", "phihat", "y_hat"])
Components.__doc__ = """KACS intermediate values for rows X, in the model's scaled units.

psihat[r, q, p]: the inner function psi_{q+1,p+1} at the scaled input x_p (rows, m, n);
zhat[r, q] = sum_p psihat[r, q, p] (rows, m); phihat[r, q]: the outer function Phi_{q+1}
at zhat_q (rows, m); y_hat[r] = sum_q phihat[r, q], the prediction on the [-1, 1] target
scale (`predict` maps it back to the original units). Empty match sets contribute 0.
"""


class KACSRegressor(LearnerRegressor):
    """Kolmogorov-Arnold Classifier System as a scikit-learn regressor.

    The model is y ~ sum_q Phi_q(sum_p psi_{q,p}(x_p)), q = 1..m, every one-dimensional
    function a submodel of interval rules with linear consequents, all in one population of
    budget N (docs/algorithm.md sections 2-4). The number of outer channels m is `channels`;
    its default 0 is the article's m = 2n + 1.

    The hyperparameters have docs/algorithm.md section 6's defaults (the article_* switches:
    docs/algorithm.md, "Two semantics"; budget="adaptive": docs/adaptive_budget.md). P_hash is
    0.0 by default, the value for the generated f1-f4; pass P_hash=0.8 on real-world or your
    own data, as `kacs fit` and `kacs run` do (kacs_cli.estimators.base).

    Attributes
    ----------
    model_ : the engine `Model`
    n_features_in_, n_rules_, n_micro_, iterations_done_ : int
    n_params_ : int
        |P| * 2.
    x_min_, x_max_, y_min_, y_max_ : the scaling
    categories_ : `kacs_cli.scaling.CategoryMap` or None
        The categorical inputs' categories and their positions; None without categorical inputs.
    is_categorical_ : ndarray of bool or None
        A boolean per input, None without categorical inputs.
    seed_, n_train_calls_ : int
    zhat_range_ : ndarray (m, 2)
        Min and max of every channel sum zhat_q over the inputs trained on (beyond
        row_caps.RANGE_MAX_ROWS of them, over a seeded sample of that many), measured with the
        model after each fit/partial_fit call and accumulated.
    rules_ : DataFrame
        One row per rule.
    submodel_table_ : DataFrame
        One row per submodel.
    """

    _method = "kacs"
    _parameter_constraints: dict = parameter_constraints("kacs")

    # The parameters of every hyperparameter KACS acts on, in their declared order (engine/params.py
    # DECLARATIONS, which tests/test_estimator_signatures.py holds this list to), then the estimator's own.
    def __init__(self, *, N: int = 6400, e0: float = 0.01, beta: float = 0.2, alpha: float = 1.0, nu: float = 1.0,
                 delta: float = 0.1, m0: float = 0.1, r0: float = 1.0, theta_GA: float = 50.0,
                 theta_del: float = 50.0, theta_sub: float = 50.0, chi: float = 0.8, mu: float = 0.04,
                 tau: float = 0.4, F_I: float = 0.01, do_subsumption: bool = True, P_hash: float = 0.0,
                 eta: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps_adam: float = 1e-08,
                 semantics: str = "reference",
                 budget: str = "fixed", N_max: int = 25600, budget_window: int = 1000,
                 budget_cover_rate: float = 0.002, budget_growth: float = 0.1,
                 input_transform: str = "minmax",
                 refinement: bool = False, refine_max_iter: int = 300, refine_pull: float = 1e-05,
                 refine_validation: float = 0.0, refine_smoothness: float = 0.0, smoothness: str = "fixed",
                 missing_value: str = "centre",
                 compaction: str = "none", compact_rules: float = 0.1, compact_tolerance: float = 0.0,
                 channels: int | str = 0,
                 article_intervals: bool = False, article_reshuffle: bool = False,
                 article_cover_weights: bool = False, article_cover_deletion: bool = False,
                 article_offspring: bool = False, article_mutation: bool = False, article_subsumption: bool = False,
                 article_fresh_moments: bool = False, article_deletion_vote: bool = False,
                 article_deletion_timing: bool = False, slope_after_outer_update: bool = False,
                 capacity: str = "fixed", capacity_max: int = 51200, capacity_validation: float = 0.2,
                 capacity_folds: int = 1, capacity_channels: str = "given", capacity_min: int = 0,
                 bags: int = 1,
                 n_iter: int = 100_000, n_passes: float | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = 0,
                 input_range: ArrayLike | None = None, target_range: ArrayLike | None = None,
                 n_jobs: int | None = None, categorical_features: str | ArrayLike | None = None):
        self._keep(locals())

    def _after_training(self, Xs, reset_ranges):
        sample = row_caps.sample_rows(Xs.shape[0], row_caps.RANGE_MAX_ROWS, self.seed_, _RANGE_STREAM)
        Xs = Xs if sample is None else Xs[sample]
        # In chunks: the components of all rows at once take rows x m x n floats.
        low, high = np.full(self.model_.n_channels, np.inf), np.full(self.model_.n_channels, -np.inf)
        for start in range(0, Xs.shape[0], _RANGE_CHUNK):
            _, zhat, _, _ = self.model_.predict_components(Xs[start:start + _RANGE_CHUNK])
            low, high = np.minimum(low, zhat.min(axis=0)), np.maximum(high, zhat.max(axis=0))
        rng = np.column_stack([low, high])
        if reset_ranges or getattr(self, "zhat_range_", None) is None:
            self.zhat_range_ = rng
        else:
            self.zhat_range_ = np.column_stack([
                np.minimum(self.zhat_range_[:, 0], rng[:, 0]),
                np.maximum(self.zhat_range_[:, 1], rng[:, 1]),
            ])
        self._refresh_counts()

    def _restore_state(self, model: Model, state: dict) -> None:
        super()._restore_state(model, state)
        zr = state["estimator"].get("zhat_range")
        self.zhat_range_ = None if zr is None else np.asarray(zr, dtype=np.float64).reshape(-1, 2)

    def predict_components(self, X) -> Components:
        """psihat (rows, 2n+1, n), zhat (rows, 2n+1), phihat (rows, 2n+1), y_hat (rows,).

        All in the scaled units the model works in: inputs x in [0, 1] (clipped), target on the
        [-1, 1] scale; y_hat = phihat.sum(axis=1) and predict(X) = inverse_scale_target(y_hat).
        """
        check_is_fitted(self, "model_")
        psihat, zhat, phihat, y_hat = self.model_.predict_components(self._scale_X(self._rows(X)[0]))
        return Components(psihat, zhat, phihat, y_hat)

    @property
    def submodel_table_(self) -> pd.DataFrame:
        """One row per submodel: n(2n+1) inner (q, p) then 2n+1 outer (q, p = 0).

        Columns: submodel (engine id), type, q, p (1-based), rules (macro-rules), micro
        (sum of numerosities), lower, upper (the union of the rules' intervals; NaN if empty),
        at_missing (an inner function's value at a missing input: the value the refinement
        learned under missing_value: learned, else its rules' lines at their intervals' centres;
        NaN for outer functions). `rules` sums to n_rules_ and `micro` to n_micro_.
        """
        check_is_fitted(self, "model_")
        return submodel_table(self.model_)

    def plot_functions(self, path, points: int = 200):
        """Draw every learned psi_{q,p} and Phi_q into an image file (see plot_kacs_functions)."""
        return plot_kacs_functions(self, path, points=points)

    def explain(self, X=None) -> Explanation:
        """Rule table, variance shares of inputs and channels on X (original units; None: a
        uniform sample of the input space) and figures, as `kacs explain` (estimators/explain.py)."""
        return explain_model(self, X)


class XCSFRegressor(LearnerRegressor):
    """XCSF (hyperrectangle conditions, linear predictions) as a scikit-learn regressor.

    The hyperparameters have docs/algorithm.md section 6's defaults; pass P_hash=0.8 on
    real-world or your own data, as for `KACSRegressor`. XCSF has no refinement, outer
    channels or adaptive budget: those parameters are KACS's only.

    Attributes
    ----------
    As for `KACSRegressor` (n_params_ = |P| (n + 1)), without the KACS-only submodel_table_,
    zhat_range_ and predict_components.
    """

    _method = "xcsf"
    _parameter_constraints: dict = parameter_constraints("xcsf")

    # The parameters of every hyperparameter XCSF acts on, in their declared order (engine/params.py
    # DECLARATIONS, which tests/test_estimator_signatures.py holds this list to), then the estimator's own.
    def __init__(self, *, N: int = 6400, e0: float = 0.01, beta: float = 0.2, alpha: float = 1.0, nu: float = 1.0,
                 delta: float = 0.1, m0: float = 0.1, r0: float = 1.0, theta_GA: float = 50.0,
                 theta_del: float = 50.0, theta_sub: float = 50.0, chi: float = 0.8, mu: float = 0.04,
                 tau: float = 0.4, F_I: float = 0.01, do_subsumption: bool = True, P_hash: float = 0.0,
                 eta: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps_adam: float = 1e-08,
                 semantics: str = "reference",
                 input_transform: str = "minmax",
                 compaction: str = "none", compact_rules: float = 0.1, compact_tolerance: float = 0.0,
                 article_intervals: bool = False, article_reshuffle: bool = False,
                 article_cover_weights: bool = False, article_cover_deletion: bool = False,
                 article_offspring: bool = False, article_mutation: bool = False, article_subsumption: bool = False,
                 article_fresh_moments: bool = False, article_deletion_vote: bool = False,
                 article_deletion_timing: bool = False, article_xcsf_inputs: bool = False,
                 article_xcsf_error: bool = False,
                 capacity: str = "fixed", capacity_max: int = 51200, capacity_validation: float = 0.2,
                 capacity_folds: int = 1, capacity_min: int = 0,
                 bags: int = 1,
                 n_iter: int = 100_000, n_passes: float | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = 0,
                 input_range: ArrayLike | None = None, target_range: ArrayLike | None = None,
                 n_jobs: int | None = None, categorical_features: str | ArrayLike | None = None):
        self._keep(locals())
