"""The summary of docs/results-summary.md: one line per experiment, its headline from the
committed reports, and a link to its page (relative to docs/). Each line is a function of its own."""

from __future__ import annotations

from tools.doctables.article import cells, fidelity
from tools.doctables.baselines import LABELS as BASELINE_LABELS
from tools.doctables.baselines import avg_ranks
from tools.doctables.common import ALPHA, MAIN_BENCHMARKS, Runs, compare, integer, means, table, verdicts
from tools.doctables.compaction import compacted, word
from tools.doctables.refinement import ROBUSTNESS_CELLS
from tools.doctables.semantics import ABLATION, ablation


def _count(runs: Runs, folder: str, sign: str, metric: str = "test_mae", where=lambda cell: True) -> int:
    """On how many cells XCSF against KACS gets the symbol `sign` ('-': KACS lower)."""
    c = cells(runs, folder, metric)
    return sum(s == sign for cell, s in c.symbol.items() if where(cell))


def _params_ratios(runs: Runs, folder: str) -> list[float]:
    c = cells(runs, folder, "params")
    return list(c.xcsf_mean / c.kacs_mean)


def _lower(runs: Runs, folder: str, a: str, b: str, benchmarks) -> int:
    """On how many benchmarks a's test MAE is significantly lower than b's (the raw paired p)."""
    pairs = compare(runs, folder, a, b)
    return sum(word(pairs[x].p, pairs[x].a_mean, pairs[x].b_mean) == "better" for x in benchmarks)


def main_line(runs: Runs) -> list[str]:
    inside, total, *_ = fidelity(runs)
    lower_on, higher_on = _count(runs, "paper/main", "-"), _count(runs, "paper/main", "+")
    ratio = _params_ratios(runs, "paper/main")
    return ["[main](experiments.md#1-main-experiment)", integer(len(runs("paper/main"))),
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
    f = "paper/sample_scaling"
    ratio = _params_ratios(runs, f)
    return ["[sample-size scaling](experiments.md#2-sample-size-scaling)", integer(len(runs(f))),
            f"KACS lower test MAE at {_count(runs, f, '-')} of {len(cells(runs, f))} sample sizes, "
            f"{min(ratio):.0f} to {max(ratio):.0f} times fewer parameters"]


def dim_scaling_line(runs: Runs) -> list[str]:
    f = "paper/dim_scaling"
    c = cells(runs, f)
    fixed = c[~c.index.str.contains("N=")]
    better, worse = fixed.n[fixed.symbol == "-"], fixed.n[fixed.symbol == "+"]
    guide = [x for x in c.index if "N=" in x]
    return ["[dimensional scaling](experiments.md#3-dimensional-scaling)", integer(len(runs(f))),
            f"at N = 6400 KACS is better for n = {min(better)}-{max(better)} and worse from n = {min(worse)}; "
            f"with the guideline N = 24n(2n+1) better again at {_count(runs, f, '-', where=lambda x: 'N=' in x)} of "
            f"{len(guide)} (n = 16, 18, 20)"]


def f3_variants_line(runs: Runs) -> list[str]:
    f = "paper/f3_variants"
    return ["[f3 variants](experiments.md#4-f3-variants)", integer(len(runs(f))),
            f"KACS lower test MAE on {_count(runs, f, '-')} of 3 variants (rotated, translated, scaled)"]


def alt_protocol_line(runs: Runs) -> list[str]:
    f = "paper/alt_protocol"
    return ["[alternative protocol](experiments.md#5-alternative-protocol)", integer(len(runs(f))),
            f"KACS lower test MSE on {_count(runs, f, '-', 'test_mse')} of 8 benchmarks (64 paired runs each)"]


def suprb_line(runs: Runs) -> list[str]:
    sym = cells(runs, "paper/suprb", "test_mse").symbol
    return ["[SupRB comparison](experiments.md#6-suprb-comparison)", integer(len(runs("paper/suprb"))),
            f"PPPTS: KACS {'lower' if sym['pppts'] == '-' else 'not lower'} test MSE than XCSF; "
            f"PT (n = 18): XCSF {'lower' if sym['pt'] == '+' else 'not lower'}; both far from SupRB's rule counts"]


def adaptive_line(runs: Runs) -> list[str]:
    mae, rules = means(runs, "adaptive").loc["f3-n20"], means(runs, "adaptive", "rules_mean").loc["f3-n20"]
    return ["[adaptive budget](experiments.md#7-adaptive-budget-beyond-the-article)", integer(len(runs("adaptive"))),
            f"f3 at n = 20: test MAE {mae['kacs-adaptive']:.3f} against {mae['kacs']:.3f} at N = 6400 and "
            f"{mae['kacs-guideline']:.3f} with the hand-set guideline N, with "
            f"{100 * rules['kacs-adaptive'] / rules['kacs-guideline']:.0f} % of its rules"]


def baselines_line(runs: Runs) -> list[str]:
    ranks = avg_ranks(runs)
    lead = [BASELINE_LABELS[m] for m in ranks.index[:3]]
    v = verdicts(runs, "baselines", "kacs", MAIN_BENCHMARKS, list(means(runs, "baselines").columns))
    return ["[baselines](baselines.md#results)", integer(len(runs("baselines"))),
            f"KACS's average rank is {ranks['kacs']:.2f}, {list(ranks.index).index('kacs') + 1}th of {len(ranks)} "
            f"({', '.join(lead)} lead); per benchmark it beats XCSF on {len(v['xcsf']['better'])} and xcsf-lib on "
            f"{len(v['xcsf-lib']['better'])} of 8, and loses to gradient boosting on {len(v['gbr']['worse'])}"]


def regressors_line(runs: Runs) -> list[str]:
    ranks = avg_ranks(runs, "regressors")
    lead = [BASELINE_LABELS[m] for m in ranks.index[:2]]
    return ["[regressors](baselines.md#with-refinement-and-a-converged-mlp)", integer(len(runs("regressors"))),
            f"refined KACS has a lower test MAE than KACS on "
            f"{_lower(runs, 'regressors', 'kacs-refined', 'kacs', MAIN_BENCHMARKS)} of 8 benchmarks (same rules); "
            f"average rank {ranks['kacs-refined']:.2f} ({ranks['kacs-quantile-refined']:.2f} with "
            f"quantile inputs) among {len(ranks)} methods, against {ranks['kacs']:.2f} for KACS "
            f"({', '.join(lead)} lead)"]


def robustness_line(runs: Runs) -> list[str]:
    v = verdicts(runs, "robustness", "xcsf", ROBUSTNESS_CELLS, list(means(runs, "robustness").columns))
    quantile = _lower(runs, "robustness", "kacs-quantile-refined", "kacs-refined", ROBUSTNESS_CELLS)
    return ["[robustness](refinement.md#2-input-transforms)", integer(len(runs("robustness"))),
            f"f1-f4 with skewed or discrete inputs: refined KACS better than XCSF on "
            f"{len(v['kacs-refined']['worse'])} of 8 cells (KACS on {len(v['kacs']['worse'])}), worse on "
            f"{len(v['kacs-refined']['better'])}; the quantile transform better than min-max on "
            f"{quantile} of 8 (refined KACS)"]


def compaction_line(runs: Runs) -> list[str]:
    c = compacted(runs)
    piecewise, single = (c.xs(m, level="method").loc[list(MAIN_BENCHMARKS)] for m in ("kacs-piecewise", "kacs-single-winner"))
    vs = compare(runs, "compaction", "kacs-piecewise", "xcsf-closest", metric="compacted_test_mae")

    def count(frame, w):
        return sum(word(x.p, x.compacted_mean, x.error_mean) == w for _, x in frame.iterrows())
    wins = sum(word(vs[b].p, vs[b].a_mean, vs[b].b_mean) == "better" for b in MAIN_BENCHMARKS)
    return ["[compaction](compaction.md#5-the-campaign)", integer(len(runs("compaction"))),
            f"compacted to at most {100 * piecewise.kept_share_max.max():.0f} % of its rules, KACS has a lower test "
            f"MAE than uncompacted on {count(piecewise, 'better')} of 8 benchmarks; single-winner compaction raises "
            f"it on {count(single, 'worse')} of 8; compacted KACS beats compacted XCSF (closest classifier) on "
            f"{wins} of 8"]


LINES = (main_line, main_article_line, ablation_line, sample_scaling_line, dim_scaling_line, f3_variants_line,
         alt_protocol_line, suprb_line, adaptive_line, baselines_line, regressors_line, robustness_line,
         compaction_line)


def t_summary(runs: Runs) -> str:
    """One line per experiment: its headline, from the reports, and its page."""
    return table(["experiment", "runs", "headline (from the committed runs)"], [line(runs) for line in LINES],
                 ["l", "r", "l"])
