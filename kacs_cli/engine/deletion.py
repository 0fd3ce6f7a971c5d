"""Deletion (docs/algorithm.md section 3): while sum(num) > N, one micro-rule leaves, drawn by roulette on
its deletion vote over the whole population.

Votes are summed in blocks of VOTE_BLOCK rules, so that the roulette pick scans the block
sums and then one block. `deletion` recomputes every vote for each draw; `deletion_ga`, used
between the offspring of a GA phase, keeps them up to date instead and draws the same rules.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT, PLAIN
from kacs_cli.engine.population import S_DEATHS, S_DELETIONS, S_P, S_TOTAL

VOTE_BLOCK = 32
# Within one GA phase the votes are kept up to date incrementally (see `deletion_ga`); rules
# whose F/num lies within this relative margin above the low-fitness threshold are watched.
LOW_MARGIN = 0.02
# Scratch.del_state entries: votes valid, candidates, touched rules, votes zeroed up to here.
D_VALID, D_N_CAND, D_N_TOUCHED, D_ZEROED = 0, 1, 2, 3


@njit(**HOT, inline="always")
def rule_vote(n_i, ms_i, exp_i, f_i, f_bar, f_low, theta_del, per_macro):
    """vote = ms * num, times Fbar / (F/num) when exp > theta_del and F/num < delta * Fbar;
    `per_macro` (the article's vote): times Fbar / F when F < delta * Fbar."""
    vote = ms_i * n_i
    if per_macro:
        if exp_i > theta_del and f_i < f_low:
            vote *= f_bar / f_i
        return vote
    # F/num < delta Fbar tested as F < delta Fbar num: no division for most rules.
    if exp_i > theta_del and f_i < f_low * n_i:
        vote *= f_bar * n_i / f_i
    return vote


@njit(**HOT, inline="always")
def mean_fitness(fsum, total, N, hp):
    """Fbar of the deletion vote: sum(F) / sum(num), or sum(F) / N under the article's vote."""
    if hp.article_deletion_vote:
        return fsum / N
    return fsum / total


@njit(**HOT, inline="always")
def block_sum(votes, blk):
    base = blk * VOTE_BLOCK
    # Four independent partial sums instead of one serial chain of additions.
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(base, base + VOTE_BLOCK, 4):
        s0 += votes[i]
        s1 += votes[i + 1]
        s2 += votes[i + 2]
        s3 += votes[i + 3]
    return (s0 + s1) + (s2 + s3)


@njit(**HOT, inline="always")
def roulette_pick(votes, blocks, n_blocks, P, vote_sum):
    """Index of the rule whose cumulative vote first exceeds a uniform draw of the total."""
    choice = np.random.random() * vote_sum
    picked = -1
    acc = 0.0
    for blk in range(n_blocks):
        if acc + blocks[blk] > choice:
            base = blk * VOTE_BLOCK
            for i in range(base, min(base + VOTE_BLOCK, P)):
                if votes[i] > 0.0:
                    acc += votes[i]
                    picked = i
                    if acc > choice:
                        break
            break
        acc += blocks[blk]
    if picked < 0:
        # Rounding left choice at the very top: take the last rule with a vote.
        for i in range(P - 1, -1, -1):
            if votes[i] > 0.0:
                picked = i
                break
    return picked


@njit(**HOT, inline="always")
def remove_micro(num, scal, fsum, F, picked, dead):
    num[picked] -= 1
    scal[S_TOTAL] -= 1
    scal[S_DELETIONS] += 1
    if num[picked] == 0:
        dead[scal[S_DEATHS]] = picked
        scal[S_DEATHS] += 1
        fsum[0] -= F[picked]


@njit(**HOT)
def all_votes(pop, hp, votes, blocks, f_bar):
    """Every rule's deletion vote and the block sums; returns (number of blocks, total)."""
    theta_del = hp.theta_del
    f_low = hp.delta * f_bar
    num = pop.counts.num
    F = pop.reals.F
    ms = pop.reals.ms
    exp = pop.counts.exp
    P = pop.scal[S_P]
    # One loop per vote, each with its rule fixed: the default's loop stays as it was
    # (hot.PLAIN: one loop, the vote tested per rule).
    if PLAIN:
        per_macro = hp.article_deletion_vote
        for i in range(P):
            votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del, per_macro)
    elif hp.article_deletion_vote:
        for i in range(P):
            votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del, True)
    else:
        for i in range(P):
            votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del, False)
    n_blocks = (P + VOTE_BLOCK - 1) // VOTE_BLOCK
    for i in range(P, n_blocks * VOTE_BLOCK):
        votes[i] = 0.0
    vote_sum = 0.0
    for blk in range(n_blocks):
        blocks[blk] = block_sum(votes, blk)
        vote_sum += blocks[blk]
    return n_blocks, vote_sum


@njit(**HOT)
def deletion(pop, hp, sc):
    """While sum(num) > N: roulette on the deletion vote over the whole population."""
    deletion_above(pop, hp, sc, pop.budget[0])


@njit(**HOT)
def deletion_above(pop, hp, sc, limit):
    """`deletion` while sum(num) > limit (Fbar still relative to the budget N)."""
    votes = sc.votes
    blocks = sc.blocks
    N = pop.budget[0]
    scal = pop.scal
    fsum = pop.fsum
    num = pop.counts.num
    F = pop.reals.F
    while scal[S_TOTAL] > limit:
        f_bar = mean_fitness(fsum[0], scal[S_TOTAL], N, hp)
        n_blocks, vote_sum = all_votes(pop, hp, votes, blocks, f_bar)
        picked = roulette_pick(votes, blocks, n_blocks, scal[S_P], vote_sum)
        if picked < 0:
            return
        remove_micro(num, scal, fsum, F, picked, sc.dead)


@njit(**HOT, inline="always")
def touch(del_state, touched, i):
    """Record that rule i's numerosity changed (or that it is new) during the GA phase."""
    k = del_state[D_N_TOUCHED]
    if k == touched.shape[0]:
        del_state[D_VALID] = 0
        return
    touched[k] = i
    del_state[D_N_TOUCHED] = k + 1


@njit(**HOT, inline="always")
def near_low_fitness(exp_i, f_i, n_i, theta_del, watch, per_macro):
    """A deletion candidate of `deletion_ga`: experienced, F/num below `watch` (tested as
    F < watch * num, without a division); F below `watch` under the article's vote."""
    if per_macro:
        return (exp_i > theta_del) & (f_i < watch)
    return (exp_i > theta_del) & (f_i < watch * n_i)


@njit(**HOT, inline="always")
def deletion_ga(pop, hp, sc):
    """`deletion` with the votes kept up to date between the deletions of one GA phase.

    Within a GA phase F, ms and exp of existing rules do not change; only numerosities change
    (deletion, merging, subsumption) and children arrive. Fbar moves with the fitness sum, so
    the votes that depend on it, those of low-fitness rules, are recomputed, from a candidate
    list of rules within LOW_MARGIN of the threshold. Every vote and block sum equals what
    `deletion` computes, so the draws are identical; the first deletion of a phase (and any
    step where Fbar left the margin) recomputes everything.
    """
    N = pop.budget[0]
    theta_del = hp.theta_del
    delta = hp.delta
    scal = pop.scal
    num = pop.counts.num
    F = pop.reals.F
    ms = pop.reals.ms
    exp = pop.counts.exp
    fsum = pop.fsum
    votes = sc.votes
    blocks = sc.blocks
    state = sc.del_state
    cand = sc.cand
    dirty = sc.dirty
    del_ref = sc.del_ref
    touched = sc.touched
    per_macro = hp.article_deletion_vote
    while scal[S_TOTAL] > N:
        P = scal[S_P]
        f_bar = mean_fitness(fsum[0], scal[S_TOTAL], N, hp)
        f_low = delta * f_bar
        n_blocks = (P + VOTE_BLOCK - 1) // VOTE_BLOCK
        if state[D_VALID] == 0 or f_bar > del_ref[0] * (1.0 + LOW_MARGIN):
            n_blocks, vote_sum = all_votes(pop, hp, votes, blocks, f_bar)
            watch = f_low * (1.0 + LOW_MARGIN)
            # Usually no rule is near the threshold: a branch-free (vectorized) count settles
            # that before the collecting scan.
            n_near = 0
            if PLAIN:
                for i in range(P):
                    n_near += near_low_fitness(exp[i], F[i], num[i], theta_del, watch,
                                               per_macro)
            elif per_macro:
                for i in range(P):
                    n_near += near_low_fitness(exp[i], F[i], num[i], theta_del, watch, True)
            else:
                for i in range(P):
                    n_near += near_low_fitness(exp[i], F[i], num[i], theta_del, watch, False)
            n_cand = 0
            if n_near > 0:
                for i in range(P):
                    if near_low_fitness(exp[i], F[i], num[i], theta_del, watch, per_macro):
                        cand[n_cand] = i
                        n_cand += 1
            state[D_N_CAND] = n_cand
            state[D_ZEROED] = n_blocks * VOTE_BLOCK
            del_ref[0] = f_bar
            state[D_VALID] = 1
        else:
            if n_blocks * VOTE_BLOCK > state[D_ZEROED]:
                # Blocks new since the full pass: clear what the last full pass left there.
                votes[state[D_ZEROED]:n_blocks * VOTE_BLOCK] = 0.0
                for blk in range(state[D_ZEROED] // VOTE_BLOCK, n_blocks):
                    dirty[blk] = 1
                state[D_ZEROED] = n_blocks * VOTE_BLOCK
            watch = delta * del_ref[0] * (1.0 + LOW_MARGIN)
            n_cand = state[D_N_CAND]
            for k in range(state[D_N_TOUCHED]):
                i = touched[k]
                votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del,
                                     per_macro)
                dirty[i // VOTE_BLOCK] = 1
                if near_low_fitness(exp[i], F[i], num[i], theta_del, watch, per_macro):
                    cand[n_cand] = i
                    n_cand += 1
            state[D_N_CAND] = n_cand
            for k in range(n_cand):
                i = cand[k]
                vote = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del, per_macro)
                if vote != votes[i]:
                    votes[i] = vote
                    dirty[i // VOTE_BLOCK] = 1
            vote_sum = 0.0
            for blk in range(n_blocks):
                if dirty[blk]:
                    blocks[blk] = block_sum(votes, blk)
                    dirty[blk] = 0
                vote_sum += blocks[blk]
        state[D_N_TOUCHED] = 0
        picked = roulette_pick(votes, blocks, n_blocks, P, vote_sum)
        if picked < 0:
            return
        remove_micro(num, scal, fsum, F, picked, sc.dead)
        sc.stale[pop.counts.sub[picked]] = 1
        touch(state, touched, picked)
