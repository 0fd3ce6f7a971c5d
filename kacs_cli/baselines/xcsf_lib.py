"""`xcsf-lib`: Preen's XCSF library (the `xcsf` package, extra xcsf-lib) as a baseline.

Configured as close to docs/algorithm.md section 6 as the library allows, the settings `kacs bench
--vs-xcsf-lib` times (bench.time_xcsf_library builds its model here): hyperrectangle
conditions, linear NLMS predictions, the defaults of docs/algorithm.md section 6 for every shared hyperparameter (the
parameter names are those of kacs/xcsf), one OpenMP thread.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from kacs_cli.baselines.entry import Entry
from kacs_cli.engine.params import DECLARED, Hyperparameters
from kacs_cli.errors import UserError

EXTRA = "xcsf-lib"
MISSING = f"method xcsf-lib needs the optional extra: pip install 'kacs[{EXTRA}]'"
_DEFAULTS = Hyperparameters()


def xcs_model(n: int, p: Hyperparameters, iterations: int, seed: int, perf_trials: int):
    """The library's XCS for n inputs under hyperparameters p (raises ImportError without it)."""
    import xcsf

    return xcsf.XCS(
        x_dim=n, y_dim=1, n_actions=1, omp_num_threads=1,
        random_state=seed, pop_size=p.N, max_trials=iterations, perf_trials=perf_trials,
        loss_func="mae", set_subsumption=False, theta_sub=int(p.theta_sub), e0=p.e0,
        alpha=p.alpha, nu=p.nu, beta=p.beta, delta=p.delta, theta_del=int(p.theta_del),
        init_fitness=p.F_I, init_error=0.0, stateful=True, compaction=False,
        ea={"select_type": "tournament", "select_size": p.tau, "theta_ea": p.theta_GA,
            "lambda": 2, "p_crossover": p.chi, "err_reduc": 1.0, "fit_reduc": 0.1,
            "subsumption": p.do_subsumption, "pred_reset": False},
        condition={"type": "hyperrectangle_ubr",
                   "args": {"eta": 0.0, "min": 0.0, "max": 1.0, "spread_min": p.r0,
                            "mu": p.m0, "p_mu": p.mu, "sam": False}},
        prediction={"type": "nlms_linear",
                    "args": {"x0": 1.0, "eta": p.eta, "evolve_eta": False, "eta_min": 1e-5}},
    )


def _declared_constraints(declared) -> list:
    """scikit-learn's constraint of a declared hyperparameter: its `Range` as an `Interval`."""
    if declared.kind is bool:
        return ["boolean"]
    valid = declared.valid
    return [Interval(Integral if valid.whole else Real, valid.left, valid.right, closed=valid.closed)]


_HP = ("N", "e0", "beta", "alpha", "nu", "delta", "theta_GA", "theta_del", "theta_sub", "chi",
       "mu", "tau", "F_I", "do_subsumption", "m0", "r0", "eta")


class XCSFLibRegressor(RegressorMixin, BaseEstimator):
    """The xcsf library's XCSF as a scikit-learn regressor on [0, 1]-scaled inputs.

    `iterations` training trials (samples drawn by the library), the hyperparameters of docs/algorithm.md section 6
    under kacs's names; `perf_trials` only paces the library's own progress reports.
    """

    # The shared hyperparameters' ranges are their declarations' (engine/params.py), so the
    # library is refused exactly what the engines are; then the library's own arguments.
    _parameter_constraints = {
        **{name: _declared_constraints(DECLARED[name]) for name in _HP},
        "iterations": [Interval(Integral, 1, None, closed="left")],
        "perf_trials": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(self, N=_DEFAULTS.N, iterations=100_000, e0=_DEFAULTS.e0, beta=_DEFAULTS.beta, alpha=_DEFAULTS.alpha,
                 nu=_DEFAULTS.nu, delta=_DEFAULTS.delta, theta_GA=_DEFAULTS.theta_GA, theta_del=_DEFAULTS.theta_del,
                 theta_sub=_DEFAULTS.theta_sub, chi=_DEFAULTS.chi, mu=_DEFAULTS.mu, tau=_DEFAULTS.tau, F_I=_DEFAULTS.F_I,
                 do_subsumption=_DEFAULTS.do_subsumption, m0=_DEFAULTS.m0, r0=_DEFAULTS.r0, eta=_DEFAULTS.eta,
                 perf_trials=2000, random_state=None):
        self.N = N
        self.iterations = iterations
        self.e0 = e0
        self.beta = beta
        self.alpha = alpha
        self.nu = nu
        self.delta = delta
        self.theta_GA = theta_GA
        self.theta_del = theta_del
        self.theta_sub = theta_sub
        self.chi = chi
        self.mu = mu
        self.tau = tau
        self.F_I = F_I
        self.do_subsumption = do_subsumption
        self.m0 = m0
        self.r0 = r0
        self.eta = eta
        self.perf_trials = perf_trials
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        self._hyperparameters()  # docs/algorithm.md section 6's own checks (chi <= 1, tau > 0, ...)

    def _hyperparameters(self) -> Hyperparameters:
        return Hyperparameters().with_overrides(**{k: getattr(self, k) for k in _HP})

    def fit(self, X, y, validation_data=None):
        """Train for `iterations` trials; validation_data (X, y) only feeds the library's
        progress reports (kacs bench), and costs an evaluation every perf_trials."""
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        try:
            model = xcs_model(X.shape[1], self._hyperparameters(), int(self.iterations), int(self.random_state or 0),
                              int(self.perf_trials))
        except ImportError:
            raise UserError(MISSING) from None
        kwargs = {}
        if validation_data is not None:
            Xv, yv = validation_data
            kwargs["validation_data"] = (np.asarray(Xv, np.float64), np.asarray(yv, np.float64).reshape(-1, 1))
        model.fit(X, y.reshape(-1, 1), verbose=False, **kwargs)
        self.model_ = model
        self.rules_ = int(model.pset_size())
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.asarray(self.model_.predict(X), dtype=np.float64).reshape(-1)


def count_parameters(est: XCSFLibRegressor, n: int) -> int:
    """As docs/algorithm.md section 7 counts XCSF's: every macro-rule's n + 1 prediction weights."""
    return est.rules_ * (n + 1)


ENTRY = Entry(
    "xcsf-lib", "XCSF (xcsf library)", f"{__name__}.XCSFLibRegressor", count_parameters,
    counted="macro-rules x (n + 1) prediction weights, as for xcsf (docs/algorithm.md section 7)",
    extra=EXTRA, modules=("xcsf",), iterations_param="iterations",
    # about 50 s at 100,000 trials and N = 6400, whatever the data (docs/baselines.md)
    cost=lambda rows, n: 40.0 + n,
)
