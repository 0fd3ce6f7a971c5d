"""Shared helpers of the engine tests (no tests here): plain-numpy references written from
docs/algorithm.md, hand-built populations, and thin adapters to the compiled entry points.

The adapters keep the tests independent of the engine's internal memory layout (e.g. lo/hi
stored rule-major [capacity, D] or dimension-major [D, capacity]) and of extra work buffers
that a compiled function may take, so that an optimization of the engine does not break a
test that checks behaviour. Whatever compares or restores whole rules loops over the
engine's declaration of the per-rule fields (population.GROUPS).
"""

import functools
import inspect

import numpy as np

from kacs_cli.engine import ga, kacs, xcsf
from kacs_cli.engine.population import FIELD_NAMES as FIELDS
from kacs_cli.engine.population import (
    S_COVERS, S_DELETIONS, S_P, S_T, S_TOTAL, permute_rules, rule_fields,
)


# ------------------------------------------------------------------------------------------
# Layout adapters
# ------------------------------------------------------------------------------------------

def rule_view(pop, name):
    """Rule field `name` as a writable view with the rules along the first axis."""
    return rule_fields(pop)[name]


def snapshot(pop, P=None):
    """Copies of every per-rule array over slots 0..P-1, lo/hi as [P, D]."""
    P = int(pop.scal[S_P]) if P is None else P
    views = rule_fields(pop)
    return {f: np.array(views[f][:P]) for f in FIELDS}


@functools.cache
def _parameter_names(fn) -> tuple[str, ...]:
    # Read once per compiled function: the invariant tests call the entry points thousands of times.
    return tuple(inspect.signature(fn.py_func).parameters)


def _call(fn, values):
    names = _parameter_names(fn)
    missing = [nm for nm in names if nm not in values]
    assert not missing, f"{fn.__name__} takes arguments the tests do not know: {missing}"
    return fn(*[values[nm] for nm in names])


def model_values(model, x=None, y=None):
    # Each model holds only its learner's buffers (KACS: work; XCSF: members, flags, index).
    return {"pop": model.pop, "wk": getattr(model, "work", None),
            "members": getattr(model, "members", None),
            "flags": getattr(model, "match_flags", None), "x": x, "y": y, "n": model.n,
            "hp": model.hp, "sc": model.scratch, "rx": getattr(model, "row_index", None), "row": -1,
            "clock": None, "layout": None}


def kacs_step(model, x, y):
    """One KACS iteration on (x, y) as a training call of one row runs it: the population is
    spread into its layout, trained, and packed dense again, sorted by submodel. Where the
    rules, covers and deletions are as many as before, no rule was born or died, and the rules
    are put back into their slots before the call, so that a test
    finds rule i of a population built by hand where it put it. Returns the prediction y_hat."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    pop = model.pop
    before = (int(pop.scal[S_P]), int(pop.scal[S_COVERS]), int(pop.scal[S_DELETIONS]))
    sub = pop.counts.sub[:before[0]].copy()
    values = model_values(model, x, float(y))
    values.update(X=x[None, :], y=np.array([float(y)]), order=np.zeros(1, np.int64), start=0, stop=1,
                  reshuffle=False, bs=model.budget_state, layout=model.layout)
    _call(kacs.train_steps, values)
    if (int(pop.scal[S_P]), int(pop.scal[S_COVERS]), int(pop.scal[S_DELETIONS])) == before:
        # Closing packed the rules stably by submodel: slot k holds the rule of slot moved[k].
        moved = np.argsort(sub, kind="stable")
        permute_rules(pop, np.argsort(moved).astype(np.int64), before[0], np.zeros(model.capacity),
                      np.zeros(model.capacity, np.int64))
    y_hat = 0.0  # the iteration's prediction: its outer estimates added in the engine's order
    for phi in model.work.phihat:
        y_hat += float(phi)
    return y_hat


def xcsf_step(model, x, y):
    x = np.ascontiguousarray(x, dtype=np.float64)
    return _call(xcsf.train_step, model_values(model, x, float(y)))


def insert_child(pop, sc, c, parents=(0, 0)):
    """ga.insert_child; `parents` is passed where the engine takes the GA parents as a hint
    of where an identical rule may sit (the result must not depend on it)."""
    values = {"pop": pop, "sc": sc, "c": c, "p1": parents[0], "p2": parents[1],
              "fresh_moments": False, "layout": None}
    return _call(ga.insert_child, values)


def step(model, x, y):
    return kacs_step(model, x, y) if model.method == "kacs" else xcsf_step(model, x, y)


# ------------------------------------------------------------------------------------------
# Hand-built populations
# ------------------------------------------------------------------------------------------

def put_rule(pop, i, a, b, w, F, *, sub=0, num=1, exp=0, eps=0.0, kappa=1.0, ms=1.0, ts=0,
             m=None, v=None, beta1=0.9, beta2=0.999):
    """Write rule i of a population, or child i of the GA's children (which have no resolved
    bounds). a, b: stored bounds (scalars for KACS, length-D for XCSF)."""
    a = np.atleast_1d(np.asarray(a, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    pop.pairs.a[i] = a
    pop.pairs.b[i] = b
    fields = rule_fields(pop)
    if "lo" in fields:
        fields["lo"][i] = np.minimum(a, b)
        fields["hi"][i] = np.maximum(a, b)
    pop.weights.w[i] = w
    pop.weights.m[i] = 0.0 if m is None else m
    pop.weights.v[i] = 0.0 if v is None else v
    pop.reals.F[i] = F
    pop.reals.eps[i] = eps
    pop.reals.kappa[i] = kappa
    pop.reals.ms[i] = ms
    pop.counts.exp[i] = exp
    # Running beta^t of the rule-local Adam step count (= number of updates so far).
    pop.reals.b1t[i] = beta1 ** exp
    pop.reals.b2t[i] = beta2 ** exp
    pop.counts.num[i] = num
    pop.counts.ts[i] = ts
    pop.counts.sub[i] = sub


def refresh_fitness_sum(pop):
    """pop.fsum from scratch: sum(F) over live rules, the sum training keeps running."""
    P = int(pop.scal[S_P])
    pop.fsum[0] = float(pop.reals.F[:P][pop.counts.num[:P] > 0].sum())


def finish(pop, P, t=0):
    """Declare slots 0..P-1 the population: P, total numerosity, t, counters, sum of F."""
    pop.counts.num[P:] = 0
    pop.scal[:] = 0
    pop.scal[S_P] = P
    pop.scal[S_TOTAL] = int(pop.counts.num[:P].sum())
    pop.scal[S_T] = t
    refresh_fitness_sum(pop)


def canonical(snap):
    """The rules of a snapshot in a layout-free order (by submodel, then stored bounds), for
    comparing populations whose slot order may differ."""
    keys = [snap["b"][:, d] for d in reversed(range(snap["b"].shape[1]))]
    keys += [snap["a"][:, d] for d in reversed(range(snap["a"].shape[1]))]
    order = np.lexsort(keys + [snap["sub"]])
    return {f: v[order] for f, v in snap.items()}


def restore(pop, snap, scal, fsum):
    P = len(snap["F"])
    for f in FIELDS:
        rule_view(pop, f)[:P] = snap[f]
    pop.scal[:] = scal
    pop.fsum[:] = fsum


# ------------------------------------------------------------------------------------------
# Plain-numpy references (docs/algorithm.md sections 3, 4, 5)
# ------------------------------------------------------------------------------------------

def np_accuracy(eps, e0=0.01, alpha=1.0, nu=1.0):
    eps = np.asarray(eps, dtype=float)
    return np.where(eps < e0, 1.0, alpha * (np.maximum(eps, 1e-300) / e0) ** (-nu))


def np_kacs_forward(lo, hi, w, F, sub, x, n, nq=None):
    """KACS two-stage prediction for one input; empty match sets contribute 0.

    lo, hi: [P] interval bounds; w: [P, 2]; F: [P]; sub: [P]; nq outer channels (None: the
    article's 2n+1). Returns psihat [nq, n], zhat [nq], phihat [nq], yhat.
    """
    nq = 2 * n + 1 if nq is None else nq
    s_in = n * nq
    psi = np.zeros((nq, n))
    for q in range(nq):
        for p in range(n):
            mk = (sub == q * n + p) & (lo <= x[p]) & (x[p] <= hi)
            if mk.any():
                psi[q, p] = np.sum(F[mk] * (w[mk, 0] + w[mk, 1] * x[p])) / np.sum(F[mk])
    z = psi.sum(axis=1)
    phi = np.zeros(nq)
    for q in range(nq):
        mk = (sub == s_in + q) & (lo <= z[q]) & (z[q] <= hi)
        if mk.any():
            phi[q] = np.sum(F[mk] * (w[mk, 0] + w[mk, 1] * z[q])) / np.sum(F[mk])
    return psi, z, phi, phi.sum()


def np_xcsf_rule_predictions(lo, hi, w, x):
    """Match mask and P(x) = w . (1, x - lo) of every rule; lo, hi: [P, n]."""
    match = np.all((lo <= x) & (x <= hi), axis=1)
    pred = w[:, 0] + np.sum(w[:, 1:] * (x - lo), axis=1)
    return match, pred


def np_xcsf_predict(lo, hi, w, F, X, raw=False):
    """raw: the article's eq. 1, P(x) = w . (1, x) (article_xcsf_inputs)."""
    out = np.zeros(X.shape[0])
    for r, x in enumerate(X):
        match, pred = np_xcsf_rule_predictions(lo, hi, w, x)
        if raw:
            pred = w[:, 0] + np.sum(w[:, 1:] * x, axis=1)
        if match.any():
            out[r] = np.sum(F[match] * pred[match]) / np.sum(F[match])
    return out
