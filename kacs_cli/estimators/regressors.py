"""The two public estimators: `KACSRegressor` and `XCSFRegressor`.

Each is `LearnerRegressor` with its learner's name; KACS adds what its structure offers to
inspect (components, submodels, the range of every channel sum zhat_q).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from kacs_cli.engine import Model
from kacs_cli.estimators.base import LearnerRegressor
from kacs_cli.estimators.explain import Explanation, explain_model
from kacs_cli.estimators.inspection import submodel_table
from kacs_cli.estimators.plots import plot_kacs_functions

__all__ = ["Components", "KACSRegressor", "XCSFRegressor"]

# Rows whose channel sums are computed at once for zhat_range_.
_RANGE_CHUNK = 65_536

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

    Parameters: every field of `kacs_cli.engine.Hyperparameters` (N, e0, beta, ..., P_hash,
    semantics and the article_* switches (docs/algorithm.md, "Two semantics"); docs/algorithm.md
    section 6 defaults; budget="adaptive" with N_max, budget_window,
    budget_cover_rate, budget_growth: docs/adaptive_budget.md). P_hash is 0.0 by default, the
    value for the generated f1-f4; pass P_hash=0.8 on real-world or your own data, as
    `kacs fit` and `kacs run` do (kacs_cli.estimators.base). And

    n_iter : int, default 100_000
        Training iterations (samples) of `fit`. `partial_fit` runs one pass over its batch.
    n_passes : float, optional
        Instead of n_iter: `fit` runs ceil(n_passes x rows) iterations, a budget that follows
        the data size (n_passes=150 gives about the budgets measured best in
        docs/refinement.md section 3 up to ~1,400 rows).
    random_state : int, None, RandomState or Generator, default 0
        Learner seed. An int is the engine seed of `fit` itself (the runner's `seed`).
    input_range : (min, max) or array (n_features, 2), optional
        Fixed input scaling instead of the data's min/max (fit and first partial_fit).
    target_range : (min, max), optional
        Fixed target scaling instead of the data's min/max.
    categorical_features : None, "from_dtype", or array of bool, int or str, default None
        The categorical inputs, as scikit-learn's HistGradientBoostingRegressor takes them: a
        boolean mask, 0-based column indices, column names (X a DataFrame), or "from_dtype"
        (a DataFrame's columns of pandas category dtype). Their cells may be numbers or texts;
        each input's categories are placed on its axis by their mean target in `fit`
        (docs/algorithm.md section 12); a category unseen in training goes where the most
        frequent one is.

    Fitted attributes: model_ (the engine `Model`), n_features_in_, n_rules_, n_micro_,
    n_params_ (|P| * 2), iterations_done_, x_min_, x_max_, y_min_, y_max_ (the scaling),
    categories_ (the categorical inputs' `kacs_cli.scaling.CategoryMap`, None without them),
    is_categorical_ (a boolean per input, None without categorical inputs),
    seed_, n_train_calls_, zhat_range_ ((2n+1, 2): min and max of every channel sum zhat_q
    over the inputs trained on, measured with the model after each fit/partial_fit call and
    accumulated), rules_ (DataFrame, one row per rule), submodel_table_ (DataFrame, one row
    per submodel).
    """

    _method = "kacs"

    def _after_training(self, Xs, reset_ranges):
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
        (sum of numerosities), lower, upper (the union of the rules' intervals; NaN if empty).
        `rules` sums to n_rules_ and `micro` to n_micro_.
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

    Parameters and fitted attributes as for `KACSRegressor` (n_params_ = |P| (n + 1)), without
    the KACS-only submodel_table_, zhat_range_ and predict_components.
    """

    _method = "xcsf"
