"""Interpretable regressors as baselines: InterpretML's Explainable Boosting Machine (`ebm`,
extra ebm) and imodels' FIGS and RuleFit (`figs`, `rulefit`, extra imodels), each the
library's own class, with the budgets of docs/baselines.md and a parameter count read from
what the fitted model stores: what a person needs to write the model down and evaluate it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kacs_cli.baselines.entry import Entry

EBM_EXTRA = "ebm"
IMODELS_EXTRA = "imodels"


def count_ebm(est: Any, n: int) -> int:
    """Every bin score of every term (the n shape functions and the pair tables) + 1 intercept.

    term_scores_ holds, per input of a term, one score per bin plus a bin for missing values
    and one for unseen categories, both zero on complete numeric data and never reached by
    it: those two are not counted. Nor are the bin edges: quantiles of the train inputs
    fixed before boosting starts, as the KAN's grid points are."""
    scores = sum(int(np.prod([s - 2 for s in np.shape(t)])) for t in est.term_scores_)
    return scores + int(np.size(est.intercept_))


def _figs_nodes(node) -> int:
    """A FIGS tree from its root: 2 per split (feature, threshold), 1 per leaf (its value)."""
    count, stack = 0, [node]
    while stack:
        node = stack.pop()
        if node.left is None:
            count += 1
        else:
            count += 2
            stack.extend((node.left, node.right))
    return count


def count_figs(est: Any, n: int) -> int:
    """Over its trees, as a scikit-learn tree: 2 per split, 1 per leaf (FIGS has no intercept:
    its prediction is the sum of the leaves reached)."""
    return sum(_figs_nodes(root) for root in est.trees_)


def count_rulefit(est: Any, n: int) -> int:
    """Per rule kept by the lasso: 2 per condition (feature, threshold) + its coefficient; per
    linear term with a non-zero coefficient: that coefficient; + 1 intercept.

    imodels keeps only the rules with a non-zero coefficient and merges a rule's repeated
    bounds on one input (x0 <= 0.5 and x0 <= 0.3 is one condition). A linear term's
    winsorizing bounds and scale are fixed from the train inputs before the lasso, so they are
    not counted, as the KAN's grid points are not."""
    linear = np.asarray(est.coef[: len(est.coef) - len(est.rules_without_feature_names_)], dtype=float)
    rules = sum(2 * len(rule.agg_dict) + 1 for rule in est.rules_without_feature_names_)
    return rules + int(np.count_nonzero(linear)) + 1


ENTRIES = (
    Entry("ebm", "EBM", "interpret.glassbox.ExplainableBoostingRegressor", count_ebm,
          counted="bin scores of the n shape functions and the pair tables + 1 intercept (bin edges not counted)",
          # InterpretML's defaults but for two (docs/baselines.md, "EBM's budget"): 4 outer
          # bags, not 14 (within 1 % of 14's test MAE on f3 and CCPP, at a quarter of the
          # cost), and pair tables of 16 x 16 bins, not 64 x 64 (the pairs are most of its
          # size; on f3 a tenth of the parameters for a lower test MAE). Its rounds stop by
          # its own early stopping.
          defaults={"outer_bags": 4, "max_bins": 1024, "max_interaction_bins": 16},
          extra=EBM_EXTRA, modules=("interpret",), readable=True,
          # 2.5 CPU s on f3 (900 x 10), 45 on CCPP (8,611 x 4) at that budget
          cost=lambda rows, n: rows * n * 1e-3),
    Entry("figs", "FIGS", "kacs_cli.baselines.imodels_seeded.SeededFIGSRegressor", count_figs,
          counted="per tree: 2 per split node (feature, threshold) + 1 per leaf (value)",
          # No budget converges: more rules overfit f3 and help CCPP; 50 is the measured
          # budget furthest from neither's best (docs/baselines.md, The interpretable models).
          defaults={"max_rules": 50}, extra=IMODELS_EXTRA, modules=("imodels", "six"), readable=True,
          cost=lambda rows, n: rows * n * 1e-5),
    Entry("rulefit", "RuleFit", "imodels.RuleFitRegressor", count_rulefit,
          counted="per rule kept: 2 per condition (feature, threshold) + 1 coefficient; "
                  "1 per non-zero linear term; + 1 intercept",
          # the lowest test MAE of 30, 100 and 300 terms on f3 (docs/baselines.md)
          defaults={"max_rules": 100}, extra=IMODELS_EXTRA, modules=("imodels", "six"), readable=True,
          # 2 to 9 CPU s on 768 to 1,503 rows, far more on CCPP's 8,611 (docs/baselines.md)
          cost=lambda rows, n: rows * rows * 3e-6),
)
