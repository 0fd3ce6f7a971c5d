"""The summary of docs/results-summary.md: one line per experiment, its headline computed from
the committed runs, and a link to its page (relative to docs/). Each line is a function of its own."""

from __future__ import annotations

import numpy as np

from tools.doctables.article import dim_cells, fidelity
from tools.doctables.baselines import LABELS as BASELINE_LABELS
from tools.doctables.common import (ALPHA, MAIN_BENCHMARKS, Runs, integer, lower, main_ranks, mean, methods, symbol,
                                    table, verdicts)
from tools.doctables.compaction import compacted, verdict
from tools.doctables.refinement import ROBUSTNESS_CELLS
from tools.doctables.semantics import ABLATION, ablation


def _count(r, cells, metric: str, sign: str) -> int:
    """On how many cells XCSF against KACS gets the verdict `sign` ('-': KACS lower)."""
    return sum(symbol(r, b, metric) == sign for b in cells)


def _params_ratios(r, cells) -> list[float]:
    return [mean(r, b, "xcsf", "params") / mean(r, b, "kacs", "params") for b in cells]


def main_line(runs: Runs) -> list[str]:
    inside, total, *_ = fidelity(runs)
    m = runs("paper/main")
    lower_on = _count(m, MAIN_BENCHMARKS, "test_mae", "-")
    higher_on = _count(m, MAIN_BENCHMARKS, "test_mae", "+")
    ratio = _params_ratios(m, MAIN_BENCHMARKS)
    return ["[main](experiments.md#1-main-experiment)", integer(len(m)),
            f"KACS's test MAE is lower than XCSF's on {lower_on} of 8 benchmarks, "
            + ("no significant difference on the others" if higher_on == 0 else f"higher on {higher_on}")
            + f", with {min(ratio):.1f} to {max(ratio):.0f} times fewer parameters; {inside} of {total} means within "
            f"max(3 SE, 5 %) of the published ones"]


def main_article_line(runs: Runs) -> list[str]:
    inside, total, *_ = fidelity(runs, "main_article")
    reference, *_ = fidelity(runs)
    return ["[main, the article's prose](algorithm.md#two-semantics)", integer(len(runs("main_article"))),
            f"the main experiment under `semantics: article`: {inside} of {total} means within max(3 SE, 5 %) of "
            f"the published ones, against {reference} of {total} under the authors' code (the default)"]


def ablation_line(runs: Runs) -> list[str]:
    frame, switches = ablation(runs)
    moved = frame[(frame["error_p_holm"] < ALPHA) | (frame["rules_p_holm"] < ALPHA)]
    identical = [v for v, g in frame.groupby("variant") if (g["identical"] == g["n_pairs"]).all()]
    return ["[prose against code, one switch at a time](algorithm.md#two-semantics)",
            integer(len(runs(ABLATION))),
            f"of {len(switches)} switch-learner pairs, {moved['variant'].nunique()} move a mean test MAE or rule count "
            f"significantly on some benchmark (Holm over 8); under {len(identical)}, every run is identical to the "
            f"default's"]


def sample_scaling_line(runs: Runs) -> list[str]:
    s = runs("paper/sample_scaling")
    cells = list(s.benchmark.unique())
    ratio = _params_ratios(s, cells)
    return ["[sample-size scaling](experiments.md#2-sample-size-scaling)", integer(len(s)),
            f"KACS lower test MAE at {_count(s, cells, 'test_mae', '-')} of {len(cells)} sample sizes, "
            f"{min(ratio):.0f} to {max(ratio):.0f} times fewer parameters"]


def dim_scaling_line(runs: Runs) -> list[str]:
    d = runs("paper/dim_scaling")
    fixed = [b for b in dim_cells(d) if "-N" not in b]
    better = [int(b[4:]) for b in fixed if symbol(d, b, "test_mae") == "-"]
    worse = [int(b[4:]) for b in fixed if symbol(d, b, "test_mae") == "+"]
    guide = [b for b in dim_cells(d) if "-N" in b]
    return ["[dimensional scaling](experiments.md#3-dimensional-scaling)", integer(len(d)),
            f"at N = 6400 KACS is better for n = {min(better)}-{max(better)} and worse from n = {min(worse)}; "
            f"with the guideline N = 24n(2n+1) better again at {_count(d, guide, 'test_mae', '-')} of {len(guide)} "
            f"(n = 16, 18, 20)"]


def f3_variants_line(runs: Runs) -> list[str]:
    f = runs("paper/f3_variants")
    return ["[f3 variants](experiments.md#4-f3-variants)", integer(len(f)),
            f"KACS lower test MAE on {_count(f, f.benchmark.unique(), 'test_mae', '-')} of 3 variants "
            f"(rotated, translated, scaled)"]


def alt_protocol_line(runs: Runs) -> list[str]:
    a = runs("paper/alt_protocol")
    return ["[alternative protocol](experiments.md#5-alternative-protocol)", integer(len(a)),
            f"KACS lower test MSE on {_count(a, MAIN_BENCHMARKS, 'test_mse', '-')} of 8 benchmarks "
            f"(64 paired runs each)"]


def suprb_line(runs: Runs) -> list[str]:
    sp = runs("paper/suprb")
    sym = {b: symbol(sp, b, "test_mse") for b in ("pppts", "pt")}
    return ["[SupRB comparison](experiments.md#6-suprb-comparison)", integer(len(sp)),
            f"PPPTS: KACS {'lower' if sym['pppts'] == '-' else 'not lower'} test MSE than XCSF; "
            f"PT (n = 18): XCSF {'lower' if sym['pt'] == '+' else 'not lower'}; both far from SupRB's rule counts"]


def adaptive_line(runs: Runs) -> list[str]:
    ad = runs("adaptive")
    adm = {m: mean(ad, "f3-n20", m, "test_mae") for m in ("kacs", "kacs-adaptive", "kacs-guideline")}
    share = mean(ad, "f3-n20", "kacs-adaptive", "rules") / mean(ad, "f3-n20", "kacs-guideline", "rules")
    return ["[adaptive budget](experiments.md#7-adaptive-budget-beyond-the-article)", integer(len(ad)),
            f"f3 at n = 20: test MAE {adm['kacs-adaptive']:.3f} against {adm['kacs']:.3f} at N = 6400 and "
            f"{adm['kacs-guideline']:.3f} with the hand-set guideline N, with {100 * share:.0f} % of its rules"]


def baselines_line(runs: Runs) -> list[str]:
    b = runs("baselines")
    _, ranks = main_ranks(b)
    place = list(ranks.index).index("kacs") + 1
    lead = [BASELINE_LABELS[m] for m in ranks.index[:3]]
    v = verdicts(b)
    return ["[baselines](baselines.md#results)", integer(len(b)),
            f"KACS's average rank is {ranks['kacs']:.2f}, {place}th of {len(methods(b))} ({', '.join(lead)} lead); "
            f"per benchmark it beats XCSF on {len(v['xcsf']['better'])} and xcsf-lib on "
            f"{len(v['xcsf-lib']['better'])} of 8, and loses to gradient boosting on {len(v['gbr']['worse'])}"]


def regressors_line(runs: Runs) -> list[str]:
    g = runs("regressors")
    _, ranks = main_ranks(g)
    better = sum(lower(g, b, "kacs-refined", "kacs") for b in MAIN_BENCHMARKS)
    lead = [BASELINE_LABELS[m] for m in ranks.index[:2]]
    return ["[regressors](baselines.md#with-refinement-and-a-converged-mlp)", integer(len(g)),
            f"refined KACS has a lower test MAE than KACS on {better} of 8 benchmarks (same rules); "
            f"average rank {ranks['kacs-refined']:.2f} ({ranks['kacs-quantile-refined']:.2f} with "
            f"quantile inputs) among {len(methods(g))} methods, against {ranks['kacs']:.2f} for KACS "
            f"({', '.join(lead)} lead)"]


def robustness_line(runs: Runs) -> list[str]:
    rb = runs("robustness")
    v = verdicts(rb, control="xcsf", benchmarks=ROBUSTNESS_CELLS)
    quantile_better = sum(lower(rb, c, "kacs-quantile-refined", "kacs-refined") for c in ROBUSTNESS_CELLS)
    return ["[robustness](refinement.md#2-input-transforms)", integer(len(rb)),
            f"f1-f4 with skewed or discrete inputs: refined KACS better than XCSF on "
            f"{len(v['kacs-refined']['worse'])} of 8 cells (KACS on {len(v['kacs']['worse'])}), worse on "
            f"{len(v['kacs-refined']['better'])}; the quantile transform better than min-max on "
            f"{quantile_better} of 8 (refined KACS)"]


def compaction_line(runs: Runs) -> list[str]:
    cp = runs("compaction")
    lower_on = worse_sw = kacs_wins = 0
    kept = []
    for bench in MAIN_BENCHMARKS:
        rules, k, before, after = compacted(cp, bench, "kacs-piecewise")
        kept.append(np.max(k / rules))
        lower_on += verdict(after, before).startswith("better")
        _, _, sw_before, sw_after = compacted(cp, bench, "kacs-single-winner")
        worse_sw += verdict(sw_after, sw_before).startswith("worse")
        _, _, _, x_after = compacted(cp, bench, "xcsf-closest")
        kacs_wins += verdict(after, x_after).startswith("better")
    return ["[compaction](compaction.md#5-the-campaign)", integer(len(cp)),
            f"compacted to at most {100 * max(kept):.0f} % of its rules, KACS has a lower test MAE than "
            f"uncompacted on {lower_on} of 8 benchmarks; single-winner compaction raises it on {worse_sw} of 8; "
            f"compacted KACS beats compacted XCSF (closest classifier) on {kacs_wins} of 8"]


LINES = (main_line, main_article_line, ablation_line, sample_scaling_line, dim_scaling_line, f3_variants_line, alt_protocol_line, suprb_line,
         adaptive_line, baselines_line, regressors_line, robustness_line, compaction_line)


def summary(runs: Runs) -> str:
    """One line per experiment: its headline, computed, and its page."""
    return table(["experiment", "runs", "headline (from the committed runs)"], [line(runs) for line in LINES],
                 ["l", "r", "l"])


TABLES = {"summary": summary}
VALUES: dict = {}
