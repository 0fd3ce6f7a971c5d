"""The recommended KACS on CCPP, as docs/usage.md's worked example fits it: 90 % of the rows
(`train_test_split(test_size=0.1, random_state=0)`), `from_preset("recommended", P_hash=0.8,
random_state=0)`, and `n_jobs` processes for the capacity search's candidates where given
(docs/performance.md, "Command times"). Prints the test MAE in MW, the budget the search
chose, the rules and the process's peak resident memory; time it from outside.

Written against the estimator API only, so that the same file runs with an older checkout of
the package installed (which may not know `n_jobs`: then leave it out).

    KACS_DATA_DIR=... python tools/ccpp_fit.py [N_JOBS [SEED]]

SEED (default 0, the example's) is the estimator's random_state: the search's choice, and with
it the fit's time, varies with it.
"""

from __future__ import annotations

import resource
import sys

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from kacs_cli import KACSRegressor
from kacs_cli.experiments.data.registry import resolve_data_dir


def main() -> None:
    data = pd.read_csv(resolve_data_dir() / "ccpp.csv", header=None).to_numpy()
    X, y = data[:, :-1], data[:, -1]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.1, random_state=0)
    options = dict(P_hash=0.8, random_state=int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    if len(sys.argv) > 1:
        options["n_jobs"] = int(sys.argv[1])
    model = KACSRegressor.from_preset("recommended", **options).fit(X_tr, y_tr)
    mae = float(np.mean(np.abs(model.predict(X_te) - y_te)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"test MAE {mae:.4f} MW, chosen N {model.capacity_N_:,}, {model.n_rules_:,} rules, "
          f"peak {peak} MiB (this process)")


if __name__ == "__main__":
    main()
