"""What a fitted KACS model consists of: rule counts per submodel and the learned functions.

Each takes an engine `Model` or a fitted estimator (anything with `model_`), so it serves the
estimators' `submodel_table_` and `kacs plot-model` alike without importing the estimator
classes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from kacs_cli.engine import Model
from kacs_cli.engine.kacs_predict import values_at_missing
from kacs_cli.errors import UserError

__all__ = ["kacs_functions", "submodel_table"]


def submodel_table(model: Model) -> pd.DataFrame:
    """Per-submodel rule counts of a KACS engine model (see KACSRegressor.submodel_table_)."""
    if model.learner.components is None:
        raise UserError(f"submodels exist only in KACS models; this is an {model.learner.label} model")
    n = model.n
    n_q = model.n_channels
    s_in = n * n_q
    s_all = s_in + n_q
    ids = np.arange(s_all)
    inner = ids < s_in
    frame = model.population_frame()
    is_inner = (frame["type"] == "inner").to_numpy()
    q0 = frame["q"].to_numpy(np.int64) - 1
    sub = np.where(is_inner, q0 * n + frame["p"].to_numpy(np.int64) - 1, s_in + q0)
    rules = np.bincount(sub, minlength=s_all)
    micro = np.bincount(sub, weights=frame["num"].to_numpy(np.float64), minlength=s_all)
    lower = np.full(s_all, np.nan)
    upper = np.full(s_all, np.nan)
    if len(frame):
        np.fmin.at(lower, sub, frame["lower"].to_numpy(np.float64))
        np.fmax.at(upper, sub, frame["upper"].to_numpy(np.float64))
    return pd.DataFrame({
        "submodel": ids,
        "type": np.where(inner, "inner", "outer"),
        "q": np.where(inner, ids // n, ids - s_in) + 1,
        "p": np.where(inner, ids % n + 1, 0),
        "rules": rules.astype(np.int64),
        "micro": micro.astype(np.int64),
        "lower": lower,
        "upper": upper,
        "at_missing": np.concatenate([values_at_missing(model.pop, n, n_q, model.inner_missing),
                                      np.full(n_q, np.nan)]),
    })


def _submodel_curve(rules: pd.DataFrame, z: np.ndarray) -> np.ndarray:
    """Fitness-weighted mean of the rules' lines at every z; NaN where no rule matches."""
    if len(rules) == 0:
        return np.full(z.shape, np.nan)
    lo = rules["lower"].to_numpy()[:, None]
    hi = rules["upper"].to_numpy()[:, None]
    F = rules["F"].to_numpy()[:, None]
    w0 = rules["w0"].to_numpy()[:, None]
    w1 = rules["w1"].to_numpy()[:, None]
    match = (lo <= z[None, :]) & (z[None, :] <= hi)
    fw = np.where(match, F, 0.0)
    sum_f = fw.sum(axis=0)
    sum_fp = (fw * (w0 + w1 * z[None, :])).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sum_f > 0.0, sum_fp / np.where(sum_f > 0.0, sum_f, 1.0), np.nan)


def kacs_functions(model_or_estimator, points: int = 200) -> list[dict]:
    """Every learned one-dimensional function of a KACS model, sampled on a grid.

    Returns one dict per submodel: type ("inner"/"outer"), q, p (1-based; p = 0 for outer),
    z (grid), value (the submodel's fitness-weighted prediction, NaN where no rule matches),
    rules (number of macro-rules). Inner psi_{q,p} are sampled on the scaled input range
    [0, 1]; outer Phi_q on the range of zhat_q over the training inputs when the estimator
    recorded it (zhat_range_), else on the union of its rules' intervals.
    """
    if isinstance(model_or_estimator, Model):
        model, zhat_range = model_or_estimator, None
    else:
        check_is_fitted(model_or_estimator, "model_")
        model = model_or_estimator.model_
        zhat_range = getattr(model_or_estimator, "zhat_range_", None)
    if model.learner.components is None:
        raise UserError("only KACS models consist of one-dimensional functions; this is an "
                        f"{model.learner.label} model")
    n, n_q = model.n, model.n_channels
    frame = model.population_frame()
    groups = {key: g for key, g in frame.groupby(["type", "q", "p"], sort=False)}
    empty = frame.iloc[:0]
    out = []
    grid01 = np.linspace(0.0, 1.0, points)
    for q in range(1, n_q + 1):
        for p in range(1, n + 1):
            rules = groups.get(("inner", q, p), empty)
            out.append(dict(type="inner", q=q, p=p, z=grid01,
                            value=_submodel_curve(rules, grid01), rules=len(rules)))
    for q in range(1, n_q + 1):
        rules = groups.get(("outer", q, 0), empty)
        if zhat_range is not None:
            lo, hi = float(zhat_range[q - 1, 0]), float(zhat_range[q - 1, 1])
        elif len(rules):
            lo, hi = float(rules["lower"].min()), float(rules["upper"].max())
        else:
            lo, hi = 0.0, 1.0
        pad = max(0.05 * (hi - lo), 1e-3)
        z = np.linspace(lo - pad, hi + pad, points)
        out.append(dict(type="outer", q=q, p=0, z=z, value=_submodel_curve(rules, z),
                        rules=len(rules), observed=(lo, hi) if zhat_range is not None else None))
    return out
