"""Each switch between the authors' code and the article's prose (docs/algorithm.md, "Two
semantics") on a tiny case whose outcome under either reading is computed by hand.

Every test runs the case twice: with the switch off (the authors' code, the default) and
with the switch alone on, and checks both against the hand-computed values; the bundle
`semantics: article` must give what the switch gives.
"""

import numpy as np
import pytest

from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine import deletion, ga
from kacs_cli.engine.order import seed_rng
from kacs_cli.engine.params import ARTICLE_SWITCHES
from kacs_cli.engine.population import S_COVERS, S_DELETIONS, S_P, S_TOTAL, new_children
from kacs_cli.errors import UserError

from test_engine_support import finish, kacs_step, put_rule, xcsf_step

ETA = 0.001


def adam_first_step(g):
    """Adam's first step from zero moments (t = 1): -eta g / (|g| + 1e-8)."""
    return -ETA * g / (abs(g) + 1e-8)


def params(switch, on, **kw):
    return Hyperparameters(**kw, **({switch: True} if on else {}))


def binom_ok(count, trials, p, sigmas=5.0):
    sd = np.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= sigmas * sd + 1


# --------------------------------------------------------------------------------------------
# The switches as hyperparameters
# --------------------------------------------------------------------------------------------

def test_article_semantics_is_every_switch_and_reference_none():
    article = Hyperparameters(semantics="article")
    reference = Hyperparameters()
    assert all(article.follows_article(s) for s in ARTICLE_SWITCHES)
    assert not any(reference.follows_article(s) for s in ARTICLE_SWITCHES)
    one = Hyperparameters(article_offspring=True)
    assert [s for s in ARTICLE_SWITCHES if one.follows_article(s)] == ["article_offspring"]
    # Left out of the resolved hyperparameters while off, named when on.
    assert not any(s in reference.as_dict() for s in ARTICLE_SWITCHES)
    assert "slope_after_outer_update" not in reference.as_dict()
    assert one.as_dict()["article_offspring"] is True
    with pytest.raises(UserError, match="slope_after_outer_update"):
        Hyperparameters(semantics="article", slope_after_outer_update=True)


# --------------------------------------------------------------------------------------------
# Deletion vote (article_deletion_vote)
# --------------------------------------------------------------------------------------------

# (num, ms, F, exp) of three rules; total numerosity 4, budget N = 3, delta 0.1, theta_del 50.
VOTE_RULES = [(2, 3.0, 0.03, 100), (1, 2.0, 0.6, 100), (1, 1.0, 0.4, 100)]


def vote_case(on):
    model = Model("xcsf", 1, params("article_deletion_vote", on, N=3, theta_del=50, delta=0.1))
    for i, (num, ms, F, exp) in enumerate(VOTE_RULES):
        put_rule(model.pop, i, [0.1 * i], [0.1 * i + 0.05], [0, 0], F, num=num, ms=ms, exp=exp)
    finish(model.pop, 3)
    return model


@pytest.mark.parametrize("on", [False, True])
def test_deletion_vote_by_hand(on):
    """Code: Fbar = sum F / sum num = 1.03 / 4 = 0.2575; rule 0 has F/num = 0.015 < 0.02575,
    vote 3 * 2 * 0.2575 / 0.015 = 103. Article: Fbar = sum F / N = 1.03 / 3; rule 0 has
    F = 0.03 < 0.1 * 1.03 / 3 = 0.034333, vote 3 * 2 * (1.03 / 3) / 0.03 = 68.667.
    Rules 1 and 2 are above the threshold either way: votes ms * num = 2 and 1."""
    model = vote_case(on)
    pop = model.pop
    f_bar = deletion.mean_fitness(pop.fsum[0], pop.scal[S_TOTAL], pop.budget[0], model.hp)
    assert f_bar == pytest.approx(1.03 / 3 if on else 1.03 / 4, rel=1e-12)
    votes = model.scratch.votes
    deletion.all_votes(pop, model.hp, votes, model.scratch.blocks, f_bar)
    expected = [6.0 * (1.03 / 3) / 0.03 if on else 103.0, 2.0, 1.0]
    np.testing.assert_allclose(votes[:3], expected, rtol=1e-12)


def test_deletion_vote_thresholds_differ():
    """A rule with num = 4, F = 0.09 (F/num = 0.0225) among rules of F = 1: the code's test
    F/num < 0.1 * Fbar holds (Fbar = 2.09 / 6 = 0.348), the article's F < 0.1 * Fbar does
    not (0.09 > 0.1 * 2.09 / 5 = 0.0418): vote 4 * 0.348 / 0.0225 = 61.93 against 4."""
    for on, expected in [(False, 4.0 * (2.09 / 6) / 0.0225), (True, 4.0)]:
        model = Model("xcsf", 1, params("article_deletion_vote", on, N=5, theta_del=50))
        pop = model.pop
        put_rule(pop, 0, [0.0], [0.5], [0, 0], 0.09, num=4, ms=1.0, exp=100)
        put_rule(pop, 1, [0.5], [1.0], [0, 0], 1.0, num=1, ms=1.0, exp=100)
        put_rule(pop, 2, [0.2], [1.0], [0, 0], 1.0, num=1, ms=1.0, exp=100)
        finish(pop, 3)
        f_bar = deletion.mean_fitness(pop.fsum[0], pop.scal[S_TOTAL], pop.budget[0], model.hp)
        deletion.all_votes(pop, model.hp, model.scratch.votes, model.scratch.blocks, f_bar)
        assert model.scratch.votes[0] == pytest.approx(expected, rel=1e-12)


def test_article_vote_kept_up_to_date_within_a_ga_phase_draws_as_a_full_recount():
    """deletion_ga (votes updated incrementally) and deletion (every vote recounted) pick the
    same rules under the article's vote, over three deletions in one call."""
    for seed in range(30):
        models = []
        for _ in range(2):
            model = Model("xcsf", 1, Hyperparameters(N=37, theta_del=5, article_deletion_vote=True))
            r = np.random.default_rng(seed)
            for i in range(20):
                put_rule(model.pop, i, [0.05 * i], [0.05 * i + 0.04], [0, 0],
                         float(r.uniform(0.001, 0.3)), num=int(r.integers(1, 4)),
                         ms=float(r.uniform(1, 5)), exp=int(r.integers(0, 20)))
            finish(model.pop, 20)
            models.append(model)
        total = int(models[0].pop.scal[S_TOTAL])
        models[0].pop.budget[0] = models[1].pop.budget[0] = total - 3
        seed_rng(seed)
        deletion.deletion(models[0].pop, models[0].hp, models[0].scratch)
        ga.begin_ga_phase(models[1].scratch)
        seed_rng(seed)
        deletion.deletion_ga(models[1].pop, models[1].hp, models[1].scratch, None)
        np.testing.assert_array_equal(models[0].pop.counts.num[:20], models[1].pop.counts.num[:20])


# --------------------------------------------------------------------------------------------
# XCSF's prediction and error (article_xcsf_inputs, article_xcsf_error)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("on", [False, True])
def test_xcsf_prediction_with_x_or_x_minus_l(on):
    """Box [0.2, 1] x [0.1, 0.6], w = (0, 1, 1), at x = (0.3, 0.5): w . (1, x - l) = 0.1 + 0.4
    = 0.5 (code); w . (1, x) = 0.3 + 0.5 = 0.8 (article's eq. 1)."""
    for hp in (params("article_xcsf_inputs", on, N=50),
               Hyperparameters(N=50, semantics="article" if on else "reference")):
        model = Model("xcsf", 2, hp)
        put_rule(model.pop, 0, [0.2, 0.6], [1.0, 0.1], [0.0, 1.0, 1.0], 1.0)
        finish(model.pop, 1)
        assert model.predict(np.array([[0.3, 0.5]]))[0] == pytest.approx(0.8 if on else 0.5,
                                                                          abs=1e-15)


@pytest.mark.parametrize("switch", ["article_xcsf_error", "article_xcsf_inputs"])
@pytest.mark.parametrize("on", [False, True])
def test_xcsf_update_by_hand(switch, on):
    """One rule [0.3, 1] with w = (0.5, 0), eps = 0, at x = 0.4, y = 1: the prediction is 0.5
    either way (w1 = 0), e = 0.5. The gradient is -e (1, x - l) = (-0.5, -0.05) in the code,
    -e (1, x) = (-0.5, -0.2) in the article. Adam's first step moves each weight by
    eta g / (|g| + 1e-8) (about +0.001). The error estimate moves toward |y - P(x)|: with the
    updated weights in the code (0.2 * |1 - 0.501 - 0.001 * 0.1|), with the prediction before
    the update (0.2 * 0.5 = 0.1) in the article."""
    model = Model("xcsf", 1, params(switch, on, N=50, beta=0.2))
    put_rule(model.pop, 0, [0.3], [1.0], [0.5, 0.0], 1.0, eps=0.0)
    finish(model.pop, 1)
    xcsf_step(model, np.array([0.4]), 1.0)
    dx = 0.4 if (switch == "article_xcsf_inputs" and on) else 0.1
    w0 = 0.5 + adam_first_step(-0.5)
    w1 = 0.0 + adam_first_step(-0.5 * dx)
    np.testing.assert_allclose(model.pop.weights.w[0], [w0, w1], rtol=1e-12)
    after = w0 + w1 * dx
    eps = 0.2 * (0.5 if (switch == "article_xcsf_error" and on) else abs(1.0 - after))
    assert model.pop.reals.eps[0] == pytest.approx(eps, rel=1e-12)
    assert (model.pop.reals.eps[0] == pytest.approx(0.1, rel=1e-12)) == (
        switch == "article_xcsf_error" and on)


# --------------------------------------------------------------------------------------------
# The GA: offspring F and eps, mutation, subsumption, moments, deletion timing
# --------------------------------------------------------------------------------------------

def ga_model(rules, t=200, **kw):
    base = dict(N=1000, do_subsumption=False)
    base.update(kw)
    model = Model("xcsf", 1, Hyperparameters(**base))
    for i, r in enumerate(rules):
        put_rule(model.pop, i, **r)
    finish(model.pop, len(rules), t=t)
    return model


def rule(a, b, F, num=1, eps=0.02, exp=10, ms=3.0, m=(0.01, 0.02), v=(1e-4, 2e-4)):
    return dict(a=[a], b=[b], w=[0.5, -0.5], F=F, num=num, eps=eps, exp=exp, ts=0, m=list(m),
                v=list(v), ms=ms)


def run_ga(model, members):
    members = np.asarray(members, dtype=np.int64)
    ga.run_ga(model.pop, members, 0, len(members), True, model.hp, model.scratch, None)


@pytest.mark.parametrize("on", [False, True])
def test_offspring_fitness_and_error(on):
    """Parents A (F 3.2, num 4, eps 0.02, [0.3, 0.7]) and B (F 0.6, num 1, eps 0.04,
    [0.1, 0.9]), no crossover (chi = 0), every bound mutated by at most 1e-6 (so each child
    is a new rule next to its parent). Code: a child of A has F = 0.1 * 3.2 / 4 = 0.08 and
    eps 0.02, a child of B F = 0.06 and eps 0.04. Article: both children get the parents'
    means, always: F = 0.1 * (F1 + F2) / 2 and eps = (eps1 + eps2) / 2 (0.19 and 0.03 for
    the parents A and B; 0.32 and 0.02 for A and A)."""
    parents = [rule(0.3, 0.7, 3.2, num=4, eps=0.02), rule(0.1, 0.9, 0.6, num=1, eps=0.04)]
    F_own = {0: 0.08, 1: 0.06}
    eps_own = {0: 0.02, 1: 0.04}
    mixed = 0
    for seed in range(40):
        model = ga_model(parents, chi=0.0, mu=1.0, m0=1e-6, tau=0.5,
                         **({"article_offspring": True} if on else {}))
        seed_rng(seed)
        run_ga(model, [0, 1])
        pop = model.pop
        assert int(pop.scal[S_P]) == 4
        which = [0 if abs(pop.pairs.a[j, 0] - 0.3) < 1e-5 else 1 for j in (2, 3)]
        mixed += which[0] != which[1]
        for j, p in zip((2, 3), which):
            if on:
                F = 0.1 * (parents[which[0]]["F"] + parents[which[1]]["F"]) / 2
                eps = (eps_own[which[0]] + eps_own[which[1]]) / 2
            else:
                F, eps = F_own[p], eps_own[p]
            assert pop.reals.F[j] == pytest.approx(F, rel=1e-12)
            assert pop.reals.eps[j] == pytest.approx(eps, rel=1e-12)
    assert mixed >= 5


@pytest.mark.parametrize("on", [False, True])
def test_mutation_per_dimension_or_per_bound(on):
    """mu = 0.5 on one interval: the code moves both bounds together (P(only a moves) = 0),
    the article each bound on its own draw (P(only a) = P(only b) = 0.25, P(both) = 0.25)."""
    kids = new_children(1, 2)
    counts = {"a": 0, "b": 0, "both": 0, "none": 0}
    draws = 4000
    seed_rng(9)
    for _ in range(draws):
        kids.pairs.a[0, 0] = 0.3
        kids.pairs.b[0, 0] = 0.7
        if on:
            ga.mutate_per_bound(kids.pairs, 0, 0.5, 0.05, True, False)
        else:
            ga.mutate(kids.pairs, 0, 0.5, 0.05, True, False)
        ma = kids.pairs.a[0, 0] != 0.3
        mb = kids.pairs.b[0, 0] != 0.7
        counts["both" if ma and mb else "a" if ma else "b" if mb else "none"] += 1
    shares = {"a": 0.25, "b": 0.25, "both": 0.25, "none": 0.25} if on else \
        {"a": 0.0, "b": 0.0, "both": 0.5, "none": 0.5}
    for key, p in shares.items():
        assert binom_ok(counts[key], draws, p), counts


@pytest.mark.parametrize("on", [False, True])
def test_mutation_switch_reaches_the_ga(on):
    """mu = 0.5 in the GA: over many events, a child with exactly one moved bound appears only
    under the article's per-bound mutation."""
    one_moved = 0
    for seed in range(60):
        model = ga_model([rule(0.3, 0.7, 0.8)], chi=0.0, mu=0.5, m0=0.05,
                         **({"article_mutation": True} if on else {}))
        seed_rng(seed)
        run_ga(model, [0])
        pop = model.pop
        for j in range(1, int(pop.scal[S_P])):
            one_moved += (pop.pairs.a[j, 0] != 0.3) != (pop.pairs.b[j, 0] != 0.7)
    assert (one_moved > 10) if on else (one_moved == 0)


@pytest.mark.parametrize("on", [False, True])
def test_subsumption_of_an_identical_child(on):
    """An experienced, accurate parent [0.2, 0.8] and a child with the same interval: the code
    (strict containment) does not subsume it, the article (subset) does. A child strictly
    inside is subsumed either way; one reaching outside never."""
    model = Model("xcsf", 1, params("article_subsumption", on, N=50, theta_sub=50, e0=0.01))
    put_rule(model.pop, 0, [0.2], [0.8], [0, 0], 0.5, exp=51, eps=0.005)
    finish(model.pop, 1)
    kids = model.scratch.children
    for (a, b), expected in [((0.2, 0.8), on), ((0.8, 0.2), on), ((0.3, 0.8), True),
                             ((0.1, 0.8), False)]:
        kids.pairs.a[0, 0] = a
        kids.pairs.b[0, 0] = b
        kids.counts.sub[0] = 0
        assert ga.subsumes(model.pop, 0, kids, 0, model.hp) == expected, (a, b)


@pytest.mark.parametrize("on", [False, True])
def test_children_moments(on):
    """A parent with Adam moments m = (0.01, 0.02), v = (1e-4, 2e-4): its mutated children
    inherit them in the code and start from zero in the article."""
    model = ga_model([rule(0.3, 0.7, 0.8)], chi=0.0, mu=1.0, m0=0.05,
                     **({"article_fresh_moments": True} if on else {}))
    seed_rng(2)
    run_ga(model, [0])
    pop = model.pop
    assert int(pop.scal[S_P]) == 3
    for j in (1, 2):
        np.testing.assert_array_equal(pop.weights.m[j], [0.0, 0.0] if on else [0.01, 0.02])
        np.testing.assert_array_equal(pop.weights.v[j], [0.0, 0.0] if on else [1e-4, 2e-4])
    np.testing.assert_array_equal(pop.weights.m[0], [0.01, 0.02])


@pytest.mark.parametrize("on", [False, True])
def test_deletion_after_each_child_or_after_both(on):
    """The population is at its budget: a parent (num 1, ms 1) and fillers whose vote is 0
    (ms 0). Both children are new rules with the parent's ms, so the two deletions pick among
    the parent and the children present. Code (after each child): the first deletion picks
    the parent or child 1 (1/2 each), the second among the two left: P(parent deleted) =
    1/2 + 1/4 = 3/4. Article (after both): three candidates, then two: 1/3 + 2/3 * 1/2 = 2/3;
    P(both children deleted) = 1/4 against 1/3."""
    rules = [rule(0.4, 0.6, 1.0, num=1, exp=0, ms=1.0)]
    rules += [rule(0.05 * k, 0.05 * k + 0.3, 0.5, num=2, exp=100, ms=0.0) for k in range(5)]
    N = sum(r["num"] for r in rules)
    draws = 3000
    parent_deleted = both_children = 0
    for seed in range(draws):
        model = ga_model(rules, N=N, chi=0.0, mu=1.0, m0=0.05,
                         **({"article_deletion_timing": True} if on else {}))
        seed_rng(seed)
        run_ga(model, [0])
        pop = model.pop
        assert int(pop.scal[S_TOTAL]) == N and int(pop.scal[S_DELETIONS]) == 2
        parent_deleted += pop.counts.num[0] == 0
        both_children += pop.counts.num[len(rules)] == 0 and pop.counts.num[len(rules) + 1] == 0
    assert binom_ok(parent_deleted, draws, 2 / 3 if on else 3 / 4)
    assert binom_ok(both_children, draws, 1 / 3 if on else 1 / 4)


# --------------------------------------------------------------------------------------------
# Covering (article_cover_deletion, article_cover_weights, article_intervals)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("on", [False, True])
def test_covering_with_or_without_deletion(on):
    """XCSF at its budget N = 4 (one rule [0, 0.2], num 4), an input at 0.9 it does not match:
    covering adds a rule; the code then deletes one micro-rule (total stays 4), the article's
    Algorithm 1 does not (total 5). At twice the budget covering deletes under either."""
    model = Model("xcsf", 1, params("article_cover_deletion", on, N=4, theta_GA=1e9, r0=0.05))
    put_rule(model.pop, 0, [0.0], [0.2], [0, 0], 0.5, num=4, ms=1.0)
    finish(model.pop, 1)
    xcsf_step(model, np.array([0.9]), 0.0)
    assert int(model.pop.scal[S_COVERS]) == 1
    assert int(model.pop.scal[S_TOTAL]) == (5 if on else 4)
    assert int(model.pop.scal[S_DELETIONS]) == (0 if on else 1)
    if on:
        model = Model("xcsf", 1, params("article_cover_deletion", on, N=4, theta_GA=1e9, r0=0.05))
        put_rule(model.pop, 0, [0.0], [0.2], [0, 0], 0.5, num=8, ms=1.0)
        finish(model.pop, 1)
        xcsf_step(model, np.array([0.9]), 0.0)
        assert int(model.pop.scal[S_TOTAL]) == 8 and int(model.pop.scal[S_DELETIONS]) == 1


@pytest.mark.parametrize("on", [False, True])
def test_covered_weights_one_value_or_independent(on):
    """n = 3, no weight update (eta = 0): the code copies one U[-1, 1] draw into all four
    weights, the article draws each."""
    distinct = 0
    for seed in range(10):
        model = Model("xcsf", 3, params("article_cover_weights", on, N=50, theta_GA=1e9, eta=0.0))
        finish(model.pop, 0)
        seed_rng(seed)
        xcsf_step(model, np.array([0.2, 0.5, 0.7]), 0.0)
        w = model.pop.weights.w[0]
        assert np.all(np.abs(w) <= 1.0)
        distinct += len(set(w.tolist())) == 4
        if not on:
            assert len(set(w.tolist())) == 1
    assert distinct == (10 if on else 0)


@pytest.mark.parametrize("on", [False, True])
def test_covered_intervals_stored_in_order_or_either_way(on):
    """The code stores a covered interval as (lower, upper) or (upper, lower), 1/2 each; the
    article's ordered bounds always as (lower, upper)."""
    reversed_count = 0
    for seed in range(40):
        model = Model("xcsf", 1, params("article_intervals", on, N=50, theta_GA=1e9, r0=0.1))
        finish(model.pop, 0)
        seed_rng(seed)
        xcsf_step(model, np.array([0.5]), 0.0)
        reversed_count += model.pop.pairs.a[0, 0] > model.pop.pairs.b[0, 0]
    assert (reversed_count == 0) if on else (5 <= reversed_count <= 35)


# --------------------------------------------------------------------------------------------
# KACS's outer slope (slope_after_outer_update: the code)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("on", [False, True])
def test_outer_slope_at_prediction_or_after_the_outer_update(on):
    """n = 1: one inner rule per submodel (w = (0.2, 0), so zhat_q = 0.2) and one outer rule
    per channel (w = (0.1, 0.0005)): yhat = 3 * (0.1 + 0.0005 * 0.2) = 0.3003; with y = 0,
    e = -0.3003. The outer gradient -e (1, zhat) is positive: Adam's first step lowers w1 by
    about 0.001, to about -0.0005. At prediction time s_q = 0.0005 > 0 and the inner gradient
    -e s_q (1, x) is positive: w0 = 0.2 - 0.001. Read after the outer update (the code),
    s_q < 0 and the inner w0 = 0.2 + 0.001."""
    model = Model("kacs", 1, params("slope_after_outer_update", on, N=100, theta_GA=1e9))
    pop = model.pop
    for s in range(3):
        put_rule(pop, s, 0.0, 1.0, [0.2, 0.0], 1.0, sub=s)
    for q in range(3):
        put_rule(pop, 3 + q, -1.0, 1.0, [0.1, 0.0005], 1.0, sub=3 + q)
    finish(pop, 6)
    y_hat = kacs_step(model, np.array([0.5]), 0.0)
    assert y_hat == pytest.approx(0.3003, rel=1e-12)
    e = -0.3003
    g_outer = np.array([-e, -e * 0.2])
    w_outer = np.array([0.1, 0.0005]) + adam_first_step(g_outer)
    for q in range(3):
        np.testing.assert_allclose(pop.weights.w[3 + q], w_outer, rtol=1e-12)
    slope = w_outer[1] if on else 0.0005
    g_inner = -e * slope * np.array([1.0, 0.5])
    w_inner = np.array([0.2, 0.0]) + adam_first_step(g_inner)
    for s in range(3):
        np.testing.assert_allclose(pop.weights.w[s], w_inner, rtol=1e-12, atol=1e-15)
    assert (pop.weights.w[0, 0] > 0.2) == on
