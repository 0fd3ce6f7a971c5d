"""Whether the deletion vote's low-fitness branch can fire at the end of a run: for KACS and
XCSF trained on f4 (the authors' sample, its first 900 rows, seed 0, the defaults), the rules
with exp > theta_del whose fitness is below delta times the mean under the code's test
(F/num < delta Fbar, Fbar = sum F / sum num) and under the article's (F < delta Fbar,
Fbar = sum F / N), and the smallest F/num against Fbar.

    KACS_DATA_DIR=... python tools/deletion_vote_reach.py
"""

import numpy as np

from kacs_cli import KACSRegressor, XCSFRegressor
from kacs_cli.engine.population import S_P
from kacs_cli.experiments.data import datasets

X, y = datasets.load_dataset("f4", None)
for cls in (KACSRegressor, XCSFRegressor):
    est = cls(random_state=0).fit(X[:900], y[:900])
    pop, hp = est.model_.pop, est.model_.params
    P = int(pop.scal[S_P])
    F, num, exp = pop.reals.F[:P], pop.counts.num[:P].astype(float), pop.counts.exp[:P]
    f_bar = F.sum() / num.sum()
    old = exp > hp.theta_del
    print(f"{cls.__name__}: {P} rules, {int(old.sum())} with exp > theta_del; low under the code's test "
          f"{int((old & (F / num < hp.delta * f_bar)).sum())}, under the article's "
          f"{int((old & (F < hp.delta * F.sum() / hp.N)).sum())}; smallest F/num = "
          f"{(F / num)[old].min() / f_bar:.2f} Fbar")
