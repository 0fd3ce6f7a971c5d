"""How many training rows each step that would otherwise read all of them reads at most, and the
seeded sample that stands for the rest beyond that many.

Evolution reads a fixed number of rows whatever the data (its iterations). What grows with the
rows is every step that reads them all: the capacity search's scoring and refinement of each
candidate, the final refinement, and the range of the channel sums a fitted estimator records.
Each is bounded here, once (docs/performance.md, "Cost against rows", has the rule of every step
and its measurements). Every cap lies above what the same step read in any committed campaign:
the largest train split there is diamonds' (53,940 rows, 48,546 in a train split, of which a
search candidate is trained on 38,837 and scored on 9,709), so no committed number depends on a
cap.
"""

from __future__ import annotations

import numpy as np

# The final refinement: its design holds one cell index per row and inner function, so its time
# and memory would otherwise grow with every row, while a sample of this size still pins down
# each rule's two weights (docs/refinement.md, "Many rows").
REFINE_MAX_ROWS = 100_000
# A capacity-search candidate's refinement. The candidates only need ranking, each on a sample
# of the same size, and the search refines one per candidate tried (up to four with the default
# ladder) where the fit refines once: this cap is the smallest round number above every
# committed candidate's fit rows, so the search refines its candidates on larger data as it did
# on the largest committed dataset.
SEARCH_REFINE_MAX_ROWS = 40_000
# The held-out rows that judge a candidate, per held-out part. The ladder compares two
# candidates' MAEs on the same rows: the standard deviation of the difference of their absolute
# errors was 0.56 to 0.63 times the MAE on generated data (docs/performance.md, "Cost against
# rows"), and is at most sqrt(2) x 0.76 times it for unrelated errors (0.76 = sqrt(pi / 2 - 1),
# the ratio for a normal error), so on this many rows the standard error of the difference is 0.45 % of the
# MAE (0.76 % at most): a step of the ladder that lowers the error by 1 % stands 2.2 standard
# errors clear of chance.
SEARCH_SCORE_MAX_ROWS = 20_000
# The rows whose channel sums give a fitted KACS estimator's zhat_range_ (the span its outer
# functions are drawn over): a sample of this many misses only the most extreme sums, which
# the drawing does not need.
RANGE_MAX_ROWS = 100_000


def sample_rows(rows: int, cap: int, *entropy: int) -> np.ndarray | None:
    """A uniform sample of `cap` of `rows` rows drawn without replacement from the generator
    seeded with `entropy` (a seed and the caller's stream), as sorted row indices; None when
    rows <= cap: every row, no sample."""
    if rows <= cap:
        return None
    return np.sort(np.random.default_rng([int(e) for e in entropy]).choice(rows, cap, replace=False))
