"""Deletion (docs/algorithm.md section 3): while sum(num) > N, one micro-rule leaves, drawn by roulette on
its deletion vote over the whole population.

Votes are summed in blocks of VOTE_BLOCK rules, so that the roulette pick scans the block
sums and then one block. `deletion` recomputes every vote for each draw; `deletion_ga`, used
between the offspring of a GA phase, keeps them up to date instead and draws the same rules.
XCSF keeps them from one GA phase to the next as well (`keep_votes_after_update`,
`keep_votes_after_compaction`): its population is large and its match set a few percent of
it, so recounting every vote at each phase's first deletion cost several times the set's
update of them. KACS updates most of its rules in every iteration and recounts once per
iteration, before its GA phase.

KACS's engine (its population's layout, layout.py) sums the block sums once more, per VOTE_SUPER blocks (a
`VoteTree`): between the deletions of a GA phase only the blocks whose votes changed and
their super-blocks are summed again, and a draw scans the super-block sums, then one
super-block's blocks, then one block. Without it (XCSF) every deletion adds up every block
sum and the draw scans half of them on average, two serial chains of additions as long as
the population has blocks. The total is the same sum in another association, so a draw can
differ from the flat sums' in the last bits of its threshold.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from kacs_cli.engine.hot import HOT, index_at
from kacs_cli.engine.population import S_DEATHS, S_DELETIONS, S_P, S_TOTAL

VOTE_BLOCK = 32
# Within one GA phase the votes are kept up to date incrementally (see `deletion_ga`); rules
# whose F/num lies within this relative margin above the low-fitness threshold are watched.
LOW_MARGIN = 0.02
# Scratch.del_state entries: votes valid, candidates, touched rules, votes zeroed up to here.
D_VALID, D_N_CAND, D_N_TOUCHED, D_ZEROED = 0, 1, 2, 3
# XCSF keeps its votes across GA phases until the candidates exceed 1/CAND_SHARE of the rules.
CAND_SHARE = 8
# Blocks per super-block of a VoteTree.
VOTE_SUPER = 32
# KACS's second level of vote sums: `sums` per super-block; `listed` the blocks
# whose votes changed since they were last summed (n_listed[0] of them); `flags` marks the
# super-blocks to sum again.
VoteTree = namedtuple("VoteTree", ["sums", "listed", "n_listed", "flags"])


def new_vote_tree(capacity: int) -> VoteTree:
    n_blocks = capacity // VOTE_BLOCK + 2
    n_super = n_blocks // VOTE_SUPER + 2
    return VoteTree(sums=np.zeros(n_super), listed=np.zeros(n_blocks, np.int64),
                    n_listed=np.zeros(1, np.int64), flags=np.zeros(n_super, np.uint8))


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
            picked = pick_in_block(votes, blk, P, acc, choice)
            break
        acc += blocks[blk]
    if picked < 0:
        # Rounding left choice at the very top: take the last rule with a vote.
        picked = last_with_vote(votes, P)
    return picked


@njit(**HOT, inline="always")
def pick_in_block(votes, blk, P, acc, choice):
    """The rule of block blk at which the cumulative vote, counted from acc, first exceeds
    choice; where rounding leaves none, the block's last rule with a vote; -1 if it has none."""
    picked = -1
    base = blk * VOTE_BLOCK
    for i in range(base, min(base + VOTE_BLOCK, P)):
        if votes[i] > 0.0:
            acc += votes[i]
            picked = i
            if acc > choice:
                break
    return picked


@njit(**HOT, inline="always")
def last_with_vote(votes, P):
    """The last of rules 0..P-1 with a vote, -1 if none has one."""
    for i in range(P - 1, -1, -1):
        if votes[i] > 0.0:
            return i
    return -1


@njit(**HOT, inline="always")
def super_sum(blocks, sup, n_blocks):
    """The sum of the block sums of super-block `sup` (the blocks below n_blocks)."""
    first = sup * VOTE_SUPER
    stop = min(first + VOTE_SUPER, n_blocks)
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    k = first
    while k + 4 <= stop:
        s0 += blocks[k]
        s1 += blocks[k + 1]
        s2 += blocks[k + 2]
        s3 += blocks[k + 3]
        k += 4
    while k < stop:
        s0 += blocks[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


@njit(**HOT, inline="always")
def tree_total(sums, n_blocks):
    """The total vote: the super-block sums added in order."""
    total = 0.0
    for sup in range((n_blocks + VOTE_SUPER - 1) // VOTE_SUPER):
        total += sums[sup]
    return total


@njit(**HOT, inline="always")
def tree_pick(votes, blocks, sums, n_blocks, P, vote_sum):
    """`roulette_pick` through the super-block sums: the super-block, then the block, then the
    rule whose cumulative vote first exceeds a uniform draw of the total."""
    choice = np.random.random() * vote_sum
    n_super = (n_blocks + VOTE_SUPER - 1) // VOTE_SUPER
    acc = 0.0
    sup = 0
    while sup < n_super - 1 and acc + sums[sup] <= choice:
        acc += sums[sup]
        sup += 1
    blk = sup * VOTE_SUPER
    last = min(blk + VOTE_SUPER, n_blocks) - 1
    while blk < last and acc + blocks[blk] <= choice:
        acc += blocks[blk]
        blk += 1
    picked = pick_in_block(votes, blk, P, acc, choice)
    if picked < 0:
        # Rounding left choice past the block's votes: take the last rule with a vote.
        picked = last_with_vote(votes, P)
    return picked


# The steps of `deletion_ga` that differ in KACS's engine, whose layout (layout.py) holds a
# VoteTree, from XCSF's (layout None); the branches on the layout are resolved as the engine
# is compiled.

@njit(**HOT, inline="always")
def mark_block(dirty, blk, layout):
    """Block blk's votes changed: it is summed again before the next draw."""
    if layout is None:
        dirty[blk] = 1
    elif dirty[blk] == 0:
        dirty[blk] = 1
        tree = layout.votes
        k = tree.n_listed[0]
        tree.listed[k] = blk
        tree.n_listed[0] = k + 1


@njit(**HOT, inline="always")
def summed_votes(votes, blocks, dirty, n_blocks, layout):
    """The changed blocks summed again; returns the total vote."""
    vote_sum = 0.0
    if layout is None:
        for blk in range(n_blocks):
            if dirty[blk]:
                blocks[blk] = block_sum(votes, blk)
                dirty[blk] = 0
            vote_sum += blocks[blk]
    else:
        tree = layout.votes
        listed = tree.listed
        flags = tree.flags
        sums = tree.sums
        n_listed = tree.n_listed[0]
        for k in range(n_listed):
            blk = listed[k]
            blocks[blk] = block_sum(votes, blk)
            dirty[blk] = 0
            flags[blk // VOTE_SUPER] = 1
        for k in range(n_listed):
            sup = listed[k] // VOTE_SUPER
            if flags[sup]:
                sums[sup] = super_sum(blocks, sup, n_blocks)
                flags[sup] = 0
        tree.n_listed[0] = 0
        vote_sum = tree_total(sums, n_blocks)
    return vote_sum


@njit(**HOT, inline="always")
def summed_afresh(blocks, n_blocks, vote_sum, layout):
    """After every block was summed (all_votes, whose total is vote_sum): the total vote."""
    if layout is None:
        return vote_sum
    tree = layout.votes
    sums = tree.sums
    for sup in range((n_blocks + VOTE_SUPER - 1) // VOTE_SUPER):
        sums[sup] = super_sum(blocks, sup, n_blocks)
    tree.n_listed[0] = 0
    return tree_total(sums, n_blocks)


@njit(**HOT, inline="always")
def drawn_rule(votes, blocks, n_blocks, P, vote_sum, layout):
    """The roulette's pick: `roulette_pick` (XCSF), or `tree_pick` with a layout (KACS)."""
    if layout is None:
        return roulette_pick(votes, blocks, n_blocks, P, vote_sum)
    return tree_pick(votes, blocks, layout.votes.sums, n_blocks, P, vote_sum)


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
    per_macro = hp.article_deletion_vote
    for i in range(P):
        votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del, per_macro)
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
def clear_new_blocks(sc, n_blocks, layout):
    """Blocks the population reached since the last full pass start with no votes: what that
    pass left beyond its last block is stale. The rules born there are touched, and get their
    votes after this."""
    state = sc.del_state
    end = n_blocks * VOTE_BLOCK
    if end > state[D_ZEROED]:
        sc.votes[state[D_ZEROED]:end] = 0.0
        for blk in range(state[D_ZEROED] // VOTE_BLOCK, n_blocks):
            mark_block(sc.dirty, blk, layout)
        state[D_ZEROED] = end


@njit(**HOT, inline="always")
def forget_votes(sc):
    """The population changed in a way the kept votes do not follow: the next deletion of a
    GA phase recomputes every vote."""
    sc.del_state[D_VALID] = 0
    sc.del_state[D_N_TOUCHED] = 0


@njit(**HOT, inline="always")
def keep_vote(pop, hp, sc, i):
    """Rule i's F, ms, exp or place changed outside a GA phase (XCSF keeps its votes from
    one GA phase to the next): its vote again, at the Fbar of the last full pass, and, if
    near the low-fitness threshold, a deletion candidate, whose vote the next deletion
    recomputes at the Fbar of then. Returns False where the candidates have no room left
    (the caller forgets the votes)."""
    state = sc.del_state
    f_bar = sc.del_ref[0]
    f_low = hp.delta * f_bar
    num = pop.counts.num
    F = pop.reals.F
    per_macro = hp.article_deletion_vote
    sc.votes[i] = rule_vote(num[i], pop.reals.ms[i], pop.counts.exp[i], F[i], f_bar, f_low,
                            hp.theta_del, per_macro)
    sc.dirty[i // VOTE_BLOCK] = 1
    if near_low_fitness(pop.counts.exp[i], F[i], num[i], hp.theta_del,
                        f_low * (1.0 + LOW_MARGIN), per_macro):
        k = state[D_N_CAND]
        if k == sc.cand.shape[0]:
            return False
        sc.cand[k] = i
        state[D_N_CAND] = k + 1
    return True


@njit(**HOT, inline="always")
def keep_votes_after_update(pop, hp, sc, members, count):
    """XCSF, after the update of match set members[:count]: their votes again (`keep_vote`).
    Without this every GA phase's first deletion recomputes all P votes, several times the
    work of the set's."""
    state = sc.del_state
    if state[D_VALID] == 0:
        return
    if state[D_N_CAND] > pop.scal[S_P] // CAND_SHARE:
        # Candidates pile up (a rule is listed once per update near the threshold): a full
        # pass lists each once again.
        forget_votes(sc)
        return
    clear_new_blocks(sc, (pop.scal[S_P] + VOTE_BLOCK - 1) // VOTE_BLOCK, None)
    for k in range(count):
        if not keep_vote(pop, hp, sc, index_at(members, k)):
            forget_votes(sc)
            return


@njit(**HOT, inline="always")
def keep_votes_after_compaction(pop, hp, sc, moved, n_dead):
    """XCSF, after `population.compact` filled hole dead[k] from slot moved[k] (-1: none),
    k < n_dead: the moved rules' votes at their new slots, none at their old ones."""
    if sc.del_state[D_VALID] == 0:
        return
    # The holes filled lie below P: their blocks hold votes before one is written there.
    clear_new_blocks(sc, (pop.scal[S_P] + VOTE_BLOCK - 1) // VOTE_BLOCK, None)
    for k in range(n_dead):
        src = moved[k]
        if src >= 0:
            sc.votes[src] = 0.0
            sc.dirty[src // VOTE_BLOCK] = 1
            if not keep_vote(pop, hp, sc, sc.dead[k]):
                forget_votes(sc)
                return


@njit(**HOT, inline="always")
def deletion_ga(pop, hp, sc, layout):
    """`deletion` with the votes kept up to date between the deletions of one GA phase;
    `layout` as in layout.new_slot (with a layout, through its VoteTree).

    Within a GA phase F, ms and exp of existing rules do not change; only numerosities change
    (deletion, merging, subsumption) and children arrive. Fbar moves with the fitness sum, so
    the votes that depend on it, those of low-fitness rules, are recomputed, from a candidate
    list of rules within LOW_MARGIN of the threshold. Every vote and block sum equals what
    `deletion` computes, so the draws are identical; the first deletion after the votes were
    forgotten (KACS: each phase's first; XCSF: after covering or at the start of a training
    call), any step where Fbar rose past the margin, and a candidate list that would overflow
    recompute everything.
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
        if (state[D_VALID] == 0 or f_bar > del_ref[0] * (1.0 + LOW_MARGIN)
                or state[D_N_CAND] + state[D_N_TOUCHED] > cand.shape[0]):
            n_blocks, vote_sum = all_votes(pop, hp, votes, blocks, f_bar)
            vote_sum = summed_afresh(blocks, n_blocks, vote_sum, layout)
            watch = f_low * (1.0 + LOW_MARGIN)
            # Usually no rule is near the threshold: a branch-free (vectorized) count settles
            # that before the collecting scan.
            n_near = 0
            for i in range(P):
                n_near += near_low_fitness(exp[i], F[i], num[i], theta_del, watch, per_macro)
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
            clear_new_blocks(sc, n_blocks, layout)
            watch = delta * del_ref[0] * (1.0 + LOW_MARGIN)
            n_cand = state[D_N_CAND]
            for k in range(state[D_N_TOUCHED]):
                i = touched[k]
                votes[i] = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del,
                                     per_macro)
                mark_block(dirty, i // VOTE_BLOCK, layout)
                if near_low_fitness(exp[i], F[i], num[i], theta_del, watch, per_macro):
                    cand[n_cand] = i
                    n_cand += 1
            state[D_N_CAND] = n_cand
            for k in range(n_cand):
                i = cand[k]
                vote = rule_vote(num[i], ms[i], exp[i], F[i], f_bar, f_low, theta_del, per_macro)
                if vote != votes[i]:
                    votes[i] = vote
                    mark_block(dirty, i // VOTE_BLOCK, layout)
            vote_sum = summed_votes(votes, blocks, dirty, n_blocks, layout)
        state[D_N_TOUCHED] = 0
        picked = drawn_rule(votes, blocks, n_blocks, P, vote_sum, layout)
        if picked < 0:
            return
        remove_micro(num, scal, fsum, F, picked, sc.dead)
        sc.stale[pop.counts.sub[picked]] = 1
        touch(state, touched, picked)
