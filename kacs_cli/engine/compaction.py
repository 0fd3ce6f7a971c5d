"""Compaction of a trained KACS model into a few readable rules per learned function.

A trained KACS population holds hundreds of overlapping rules per one-dimensional function;
what the model computes is, per submodel, a piecewise-linear function of one variable (within
a stretch of the input where the match set does not change, the fitness-weighted mean of
lines is a line). `piecewise` re-segments each function, where the training data lie, into
as few least-squares line pieces as a tolerance allows, one rule per piece:

1. The model's functions on the training rows: psi_{q,p}(x_p), zhat_q and Phi_q(zhat_q).
2. Each function's tolerance follows its influence on the prediction: an outer function's
   error reaches the output unchanged, so its tolerance is `tolerance`; an inner function's
   error reaches it through its channel's outer slope Phi_q', so its tolerance is `tolerance`
   divided by the mean |Phi_q'| over the rows.
3. Greedy segmentation (`_segment`): from the lowest input value up, each piece is the longest
   run of consecutive input values whose weighted least-squares line stays within the
   tolerance at every one of them. Piece boundaries lie halfway between the last value of one
   piece and the first of the next; the end pieces reach the ends of the function's domain
   ([0, 1] for inner functions, the original outer rules' span for outer ones), so the
   compacted model matches wherever the original did.
4. Functions that carry nothing go: an inner function that is constant within its tolerance
   is dropped and its constant moved into its channel's outer function (whose input it only
   shifts: bounds - c, w0 + w1 c, exact). Channels whose outer function is one line within
   the tolerance (a + b z, constant when b = 0) add up to a single channel: their sum is
   A + sum_p G_p(x_p) with G_p = sum_q b_q psi_{q,p}, so the first of them takes the G_p as
   its inner functions and the identity line as its outer function, and the others go.
5. The pieces' weights are then refitted jointly on the training rows (refine.py), with the
   new rules' structure fixed.

With sample weights (weights.py) the rows weigh in wherever they are summed: a piece's
least-squares line, the mean |Phi_q'| of step 2, the constant an inner function leaves in step 4
and the refit of step 5; the tolerance itself is a bound on every row's error, whatever its
weight. `single_winner` and `closest` keep rules for the rows there are (rows of weight 0 are
gone before), so weights do not change them.

The result is still a KACS population (one rule per piece: a submodel, an interval, a line,
fitness 1), predicted by the same engine. An inner function is re-segmented where its input
is known; at a missing input (NaN) the compacted rules, like every rule, all match and read
it at their centres (docs/algorithm.md section 12), and the refit of step 5 fits that value
with the rest (under missing_value: learned, a value of each inner function's own there).
`single_winner` is the field's reference (X-KAN, Fuzzy-UCS): keep, for every training row and
submodel, the matching rule of highest fitness, and drop every rule that no row keeps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from kacs_cli.engine.kacs_predict import predict_components
from kacs_cli.engine.population import S_P, S_TOTAL
from kacs_cli.engine.refine import refine_weights
from kacs_cli.engine.weights import weighted_mean

# The least half-width of the one outer rule of merged linear channels (its channel sum is 0
# when all its inner functions were constant).
CONSTANT_CHANNEL_SPAN = 1.0


@dataclass(frozen=True)
class CompactionResult:
    """What a compaction did: rules before and after, the functions dropped, its seconds."""

    method: str
    rules_before: int
    rules_after: int
    inner_dropped: int       # inner functions found constant and folded into their outer one
    channels_merged: int     # channels with a linear outer function merged into another
    refit_iterations: int
    seconds: float
    tolerance: float = float("nan")  # piecewise: the tolerance used (given or found)


@njit(cache=True)
def _segment(z, v, weight, tol):
    """Pieces of the sorted distinct inputs z (values v, multiplicities weight): returns
    (start index of each piece, intercept, slope); piece k covers z[start[k]:start[k+1]]."""
    m = z.shape[0]
    # Prefix sums of the weighted least-squares statistics: a piece's line in O(1).
    s_w = np.zeros(m + 1)
    s_z = np.zeros(m + 1)
    s_zz = np.zeros(m + 1)
    s_v = np.zeros(m + 1)
    s_zv = np.zeros(m + 1)
    for k in range(m):
        s_w[k + 1] = s_w[k] + weight[k]
        s_z[k + 1] = s_z[k] + weight[k] * z[k]
        s_zz[k + 1] = s_zz[k] + weight[k] * z[k] * z[k]
        s_v[k + 1] = s_v[k] + weight[k] * v[k]
        s_zv[k + 1] = s_zv[k] + weight[k] * z[k] * v[k]
    starts = np.empty(m + 1, np.int64)
    a_out = np.empty(m)
    b_out = np.empty(m)
    n_pieces = 0
    i = 0
    while i < m:
        # Longest feasible end j (exclusive): gallop, then bisect between the last feasible
        # and the first infeasible length. Two points are always feasible (their line).
        good = min(i + 2, m)
        step = 2
        bad = -1
        while good < m:
            j = min(i + 2 * step, m)
            a, b = _line(s_w, s_z, s_zz, s_v, s_zv, i, j)
            if _fits(z, v, i, j, a, b, tol):
                good = j
                step *= 2
            else:
                bad = j
                break
        if bad > 0:
            while bad - good > 1:
                mid = (good + bad) // 2
                a, b = _line(s_w, s_z, s_zz, s_v, s_zv, i, mid)
                if _fits(z, v, i, mid, a, b, tol):
                    good = mid
                else:
                    bad = mid
        a, b = _line(s_w, s_z, s_zz, s_v, s_zv, i, good)
        starts[n_pieces] = i
        a_out[n_pieces] = a
        b_out[n_pieces] = b
        n_pieces += 1
        i = good
    starts[n_pieces] = m
    return starts[:n_pieces + 1], a_out[:n_pieces], b_out[:n_pieces]


@njit(cache=True)
def _line(s_w, s_z, s_zz, s_v, s_zv, i, j):
    w = s_w[j] - s_w[i]
    sz = s_z[j] - s_z[i]
    szz = s_zz[j] - s_zz[i]
    sv = s_v[j] - s_v[i]
    szv = s_zv[j] - s_zv[i]
    det = w * szz - sz * sz
    if det <= 1e-12 * max(w * szz, 1e-300):
        return sv / w, 0.0
    b = (w * szv - sz * sv) / det
    return (sv - b * sz) / w, b


@njit(cache=True)
def _fits(z, v, i, j, a, b, tol):
    for k in range(i, j):
        if abs(v[k] - a - b * z[k]) > tol:
            return False
    return True


class _Grouping:
    """The distinct values of one input over the rows, sorted, and which rows hold each: a
    function of that input is then sampled once per distinct value by a reduction, without
    sorting again (every tolerance tried and every function of that input share it). Rows
    missing the input (NaN) are left out. `counts`, each value's weight in a piece's
    least-squares line, is its number of rows, or with sample weights the sum of their
    weights."""

    def __init__(self, z, weight=None):
        known = ~np.isnan(z)
        self.order = (np.argsort(z, kind="mergesort") if known.all()
                      else np.flatnonzero(known)[np.argsort(z[known], kind="mergesort")])
        self.keys, self.first, counts = np.unique(z[self.order], return_index=True,
                                                  return_counts=True)
        self.counts = counts.astype(np.float64)
        self.weight = None if weight is None else weight[self.order]
        if weight is not None:
            self.counts = np.add.reduceat(self.weight, self.first)

    def values(self, v):
        """The function's value at each distinct input (the mean over the rows holding it,
        weighted with sample weights: the same value, up to rounding)."""
        if self.weight is None:
            return np.add.reduceat(v[self.order], self.first) / self.counts
        return np.add.reduceat(v[self.order] * self.weight, self.first) / self.counts


def _known_mean(column, weight=None):
    """The mean of a column over the rows where it is known (not NaN), weighted by the rows'
    sample weights when given."""
    known = ~np.isnan(column)
    if known.all():
        return weighted_mean(column, weight)
    return weighted_mean(column[known], None if weight is None else weight[known])


def _pieces(grouping, v, tol, lo_end, hi_end):
    """(lo, hi, intercept, slope) of the pieces of one function with values v on the rows."""
    keys = grouping.keys
    starts, a, b = _segment(keys, grouping.values(v), grouping.counts, tol)
    inner_bounds = (keys[starts[1:-1] - 1] + keys[starts[1:-1]]) / 2.0
    lo = np.concatenate([[lo_end], inner_bounds])
    hi = np.concatenate([inner_bounds, [hi_end]])
    return lo, hi, a, b, keys


def _outer_slopes(pop, n, zhat):
    """Per row and channel, the outer function's slope at zhat_q: sum F w1 / sum F over the
    matching outer rules (0 where none matches); one column of zhat per channel."""
    P = int(pop.scal[S_P])
    n_q = zhat.shape[1]
    s_in = n * n_q
    sub = pop.counts.sub[:P]
    lo, hi = pop.bounds.lo[0, :P], pop.bounds.hi[0, :P]
    F, w1 = pop.reals.F[:P], pop.weights.w[:P, 1]
    slopes = np.zeros_like(zhat)
    for q in range(n_q):
        rules = np.flatnonzero(sub == s_in + q)
        z = zhat[:, q:q + 1]
        match = (lo[rules] <= z) & (z <= hi[rules])
        f = match * F[rules]
        total = f.sum(axis=1)
        slopes[:, q] = np.divide(f @ w1[rules], total, out=np.zeros(len(total)), where=total > 0)
    return slopes


def _replace_rules(pop, sub, lo, hi, w0, w1, F):
    """The population becomes exactly these rules (num 1, fresh bookkeeping), in this order."""
    P = len(sub)
    if P > pop.reals.F.shape[0]:
        raise ValueError("the compacted model needs more rule slots than the population has")
    for arr in (*pop.pairs, *pop.bounds, *pop.weights, *pop.reals, *pop.counts):
        arr[...] = 0
    pop.pairs.a[:P, 0], pop.pairs.b[:P, 0] = lo, hi
    pop.bounds.lo[0, :P], pop.bounds.hi[0, :P] = lo, hi
    pop.weights.w[:P, 0], pop.weights.w[:P, 1] = w0, w1
    pop.reals.F[:P] = F
    pop.reals.kappa[:P] = 1.0
    pop.reals.ms[:P] = 1.0
    pop.reals.b1t[:P] = 1.0
    pop.reals.b2t[:P] = 1.0
    pop.counts.num[:P] = 1
    pop.counts.sub[:P] = sub
    pop.scal[S_P] = P
    pop.scal[S_TOTAL] = P
    pop.fsum[0] = float(np.sum(F))


def _components(pop, n, n_q, X, inner_missing):
    rows = X.shape[0]
    psihat = np.empty((rows, n * n_q))
    zhat = np.empty((rows, n_q))
    phihat = np.empty((rows, n_q))
    predict_components(pop, X, n, psihat, zhat, phihat, inner_missing)
    return psihat, zhat, phihat


class _Functions:
    """The learned functions of a population sampled on the training rows, and what each
    compaction tolerance makes of them (`rules`)."""

    def __init__(self, pop, n, n_q, X, inner_missing, weight=None):
        self.n = n
        self.n_q = n_q
        self.X = X
        self.weight = weight
        P = int(pop.scal[S_P])
        self.psihat, self.zhat, self.phihat = _components(pop, n, n_q, X, inner_missing)
        slopes = np.abs(_outer_slopes(pop, n, self.zhat))
        self.influence = (slopes.mean(axis=0) if weight is None
                          else np.average(slopes, axis=0, weights=weight))
        self.sub = np.array(pop.counts.sub[:P])
        self.lo = np.array(pop.bounds.lo[0, :P])
        self.hi = np.array(pop.bounds.hi[0, :P])
        self.inputs = [_Grouping(X[:, p], weight) for p in range(n)]
        self.channels = [_Grouping(self.zhat[:, q], weight) for q in range(n_q)]

    def rules(self, tolerance):
        """(sub, lo, hi, w0, w1) of the compacted rules, by submodel; and the counts of
        inner functions dropped and of channels merged into another."""
        n, n_q, X = self.n, self.n_q, self.X
        s_in = n * n_q
        outer, linear = {}, {}
        for q in range(n_q):
            s = s_in + q
            mine = self.sub == s
            if not np.any(mine):
                continue
            z = self.zhat[:, q]
            lo_end = min(float(self.lo[mine].min()), float(z.min()))
            hi_end = max(float(self.hi[mine].max()), float(z.max()))
            outer[q] = _pieces(self.channels[q], self.phihat[:, q], tolerance, lo_end, hi_end)
            if len(outer[q][2]) == 1:
                linear[q] = (outer[q][2][0], outer[q][3][0])
        # Channels whose outer function is one line a + b z (within the tolerance) add up to
        # one: sum_q (a_q + b_q zhat_q) = A + sum_p G_p(x_p), G_p = sum_q b_q psi_{q,p}. They
        # become the first such channel with G_p as its inner functions and the identity
        # line as its outer function; the others lose every rule.
        inner_values = {}
        for q in range(n_q):
            if q not in linear:
                for p in range(n):
                    inner_values[q * n + p] = self.psihat[:, q * n + p]
        merged = sorted(linear)
        if merged:
            target = merged[0]
            for p in range(n):
                inner_values[target * n + p] = sum(linear[q][1] * self.psihat[:, q * n + p]
                                                   for q in merged)
        pieces = {}
        shift = np.zeros(n_q)  # constants of dropped inner functions, per channel
        inner_dropped = 0
        for s, values in sorted(inner_values.items()):
            q, p = divmod(s, n)
            if q not in linear and not np.any(self.sub == s):
                continue
            slope = 1.0 if q in linear else self.influence[q]
            tol_s = tolerance / max(slope, 1e-12)
            if len(self.inputs[p].keys) == 0:
                # The input is missing on every row: the function is its one value there.
                shift[q] += weighted_mean(values, self.weight)
                inner_dropped += 1
                continue
            lo, hi, a, b, keys = _pieces(self.inputs[p], values, tol_s, 0.0, 1.0)
            if len(a) == 1 and abs(b[0]) * (keys[-1] - keys[0]) <= tol_s:
                shift[q] += a[0] + b[0] * _known_mean(X[:, p], self.weight)
                inner_dropped += 1
                continue
            pieces[s] = (lo, hi, a, b)
        for q, (lo, hi, a, b, _) in outer.items():
            if q in linear:
                continue
            # The channel's input no longer holds its dropped inner constants: Phi_q(z + c).
            c = shift[q]
            pieces[s_in + q] = (lo - c, hi - c, a + b * c, b)
        if merged:
            target = merged[0]
            # The merged channel sum over the rows (its kept inner functions), for the span
            # of its one outer rule: twice the largest |sum| seen, at least 1.
            zsum = np.zeros(X.shape[0])
            for p in range(n):
                if target * n + p in pieces:
                    zsum += inner_values[target * n + p]
            span = max(float(np.abs(zsum).max()), CONSTANT_CHANNEL_SPAN) * 2.0
            total = sum(linear[q][0] for q in merged)
            # Phi(z) = total + z, with z the kept inner functions' sum; the dropped ones'
            # constants (shift) enter as total + shift.
            pieces[s_in + target] = ([-span], [span], [total + shift[target]], [1.0])
        order = sorted(pieces)
        sub = np.concatenate([np.full(len(pieces[s][0]), s, np.int64) for s in order]) \
            if order else np.zeros(0, np.int64)
        cols = [np.concatenate([np.asarray(pieces[s][k], dtype=np.float64) for s in order])
                if order else np.zeros(0) for k in range(4)]
        return (sub, *cols), inner_dropped, max(len(merged) - 1, 0)


# The tolerance search of `piecewise(max_rules=...)`: bisection in log space over this range.
TOLERANCE_RANGE = (1e-4, 10.0)
SEARCH_STEPS = 14


def piecewise(model, X, y, *, tolerance: float | None = None, max_rules: int | None = None,
              refit: bool = True, seed: int = 0, weight=None) -> CompactionResult:
    """Compact the KACS engine model in place (module docstring); X, y the scaled training rows,
    `weight` their sample weights (None: unweighted).

    With `tolerance`, that tolerance; with `max_rules` instead, the smallest tolerance (to a
    factor of about 1.0007: SEARCH_STEPS bisections of TOLERANCE_RANGE's log) whose compacted
    model has at most that many rules.
    """
    if (tolerance is None) == (max_rules is None):
        raise ValueError("give either a tolerance or max_rules")
    start = time.perf_counter()
    pop, n = model.pop, model.n
    n_q = model.n_channels
    P = int(pop.scal[S_P])
    X = np.ascontiguousarray(X, dtype=np.float64)
    functions = _Functions(pop, n, n_q, X, model.inner_missing, weight)
    if tolerance is None:
        low, high = np.log(TOLERANCE_RANGE[0]), np.log(TOLERANCE_RANGE[1])
        best = functions.rules(float(np.exp(high)))
        if len(best[0][0]) <= max_rules:
            for _ in range(SEARCH_STEPS):
                mid = (low + high) / 2.0
                trial = functions.rules(float(np.exp(mid)))
                if len(trial[0][0]) <= max_rules:
                    high, best = mid, trial
                else:
                    low = mid
        tolerance = float(np.exp(high))
        built = best
    else:
        built = functions.rules(tolerance)
    (sub, lo, hi, w0, w1), inner_dropped, channels_merged = built
    _replace_rules(pop, sub, lo, hi, w0, w1, np.ones(len(sub)))
    # New functions: their values at missing inputs are the rules' centres' until the refit
    # learns them again (missing_value: learned).
    model.inner_missing[:] = np.nan
    iterations = 0
    if refit and len(sub):
        iterations = refine_weights(pop, n, n_q, X, y, max_iter=model.params.refine_max_iter,
                                    pull=model.params.refine_pull, validation=0.0, seed=seed, weight=weight,
                                    learn_missing=model.params.missing_value == "learned",
                                    inner_missing=model.inner_missing).iterations
    return CompactionResult("piecewise", P, len(sub), inner_dropped, channels_merged,
                            iterations, time.perf_counter() - start, tolerance)


def single_winner(model, X, y=None, *, seed: int = 0) -> CompactionResult:
    """Keep, for every training row and submodel, the matching rule of highest fitness (the
    first in population order on a tie); drop the rest. Weights and fitness stay."""
    start = time.perf_counter()
    pop, n = model.pop, model.n
    n_q = model.n_channels
    s_in = n * n_q
    P = int(pop.scal[S_P])
    X = np.ascontiguousarray(X, dtype=np.float64)
    _, zhat, _ = _components(pop, n, n_q, X, model.inner_missing)
    sub = pop.counts.sub[:P]
    lo, hi, F = pop.bounds.lo[0, :P], pop.bounds.hi[0, :P], pop.reals.F[:P]
    keep = np.zeros(P, bool)
    for s in range(s_in + n_q):
        members = np.flatnonzero(sub == s)
        if not members.size:
            continue
        z = X[:, s % n] if s < s_in else zhat[:, s - s_in]
        # A missing input (NaN) is matched by every rule (docs/algorithm.md section 12).
        match = ((lo[members] <= z[:, None]) & (z[:, None] <= hi[members])) | np.isnan(z)[:, None]
        score = np.where(match, F[members], -np.inf)
        winners = np.argmax(score, axis=1)[match.any(axis=1)]
        keep[members[np.unique(winners)]] = True
    kept = np.flatnonzero(keep)
    fields = {name: np.array(arr[:P][kept]) for name, arr in
              (("sub", sub), ("lo", lo), ("hi", hi), ("F", F))}
    w = np.array(pop.weights.w[:P][kept])
    a, b = np.array(pop.pairs.a[:P, 0][kept]), np.array(pop.pairs.b[:P, 0][kept])
    _replace_rules(pop, fields["sub"], fields["lo"], fields["hi"], w[:, 0], w[:, 1], fields["F"])
    pop.pairs.a[:len(kept), 0], pop.pairs.b[:len(kept), 0] = a, b
    return CompactionResult("single-winner", P, len(kept), 0, 0, 0, time.perf_counter() - start)


def compact_kacs(model, X, y, method: str, *, rules: float, tolerance: float, seed: int, weight=None):
    """A KACS model compacted in place by `method`: `piecewise` to at most `rules` times its
    rules (a fraction; the smallest tolerance that meets it) or, with tolerance > 0, at that
    tolerance; or `single-winner` (which the rows' sample weights do not change)."""
    if method == "single-winner":
        return single_winner(model, X, y, seed=seed)
    if tolerance > 0.0:
        return piecewise(model, X, y, tolerance=tolerance, seed=seed, weight=weight)
    budget = max(1, int(rules * int(model.pop.scal[S_P])))
    return piecewise(model, X, y, max_rules=budget, seed=seed, weight=weight)


@njit(cache=True)
def _closest(lo, hi, P, X):
    """Per row of X, the rule (of P, bounds D x rules) whose box holds it and whose centre is
    closest in the box's own scale, max_d |x_d - c_d| / half-width_d; -1 where none holds it.
    A missing x_d (NaN) lies in every box and adds no distance."""
    rows, D = X.shape
    best = np.full(rows, -1, np.int64)
    for r in range(rows):
        best_distance = np.inf
        for i in range(P):
            distance = 0.0
            inside = True
            for d in range(D):
                x = X[r, d]
                if x != x:
                    continue
                if x < lo[d, i] or x > hi[d, i]:
                    inside = False
                    break
                half = 0.5 * (hi[d, i] - lo[d, i])
                off = abs(x - 0.5 * (lo[d, i] + hi[d, i]))
                scaled = off / half if half > 0.0 else 0.0
                if scaled > distance:
                    distance = scaled
            if inside and distance < best_distance:
                best_distance = distance
                best[r] = i
    return best


def closest_classifier(model, X, y=None, *, seed: int = 0) -> CompactionResult:
    """XCSF's compaction after Butz, Lanzi and Wilson (2008, closest classifier matching):
    keep, for every training row, the matching rule whose condition centre is closest to it
    (in each rule's own scale, so wide and narrow boxes compare fairly); drop every rule no
    row keeps. The kept rules predict as before (fitness-weighted mean of the matching ones)."""
    start = time.perf_counter()
    pop = model.pop
    P = int(pop.scal[S_P])
    X = np.ascontiguousarray(X, dtype=np.float64)
    winners = _closest(pop.bounds.lo, pop.bounds.hi, P, X)
    kept = np.unique(winners[winners >= 0])
    fields = [np.array(arr[:P][kept]) for arr in (*pop.pairs, *pop.weights, *pop.reals, *pop.counts)]
    bounds = [np.array(arr[:, :P][:, kept]) for arr in pop.bounds]
    for arr in (*pop.pairs, *pop.weights, *pop.reals, *pop.counts):
        arr[...] = 0
    for arr in pop.bounds:
        arr[...] = 0
    for arr, values in zip((*pop.pairs, *pop.weights, *pop.reals, *pop.counts), fields):
        arr[:len(kept)] = values
    for arr, values in zip(pop.bounds, bounds):
        arr[:, :len(kept)] = values
    pop.scal[S_P] = len(kept)
    pop.scal[S_TOTAL] = int(pop.counts.num[:len(kept)].sum())
    pop.fsum[0] = float(pop.reals.F[:len(kept)].sum())
    return CompactionResult("closest", P, len(kept), 0, 0, 0, time.perf_counter() - start)


def compact_xcsf(model, X, y, method: str, *, rules: float, tolerance: float, seed: int, weight=None):
    """An XCSF model compacted in place: `closest` (the only method; rules and tolerance are
    the piecewise compaction's and do not apply; the rows' sample weights do not change it)."""
    return closest_classifier(model, X, y, seed=seed)
