"""Peak resident memory of a KACS fit on generated rows (docs/refinement.md, "Many rows";
docs/performance.md, "Cost against rows"), and its test MAE on 10,000 further rows of the same
generator (`kacs bench --workload rows`'s data, kacs_cli/cli/timing.py `rows_data`: 8 inputs
uniform on [0, 1], y = sin(6 x1) + x2^2 + x3 x4 + 0.1 N(0, 1), seed 0), P_hash 0.8, seed 0.
`plain` and `refined` are N = 6,400 (without and with refinement), `recommended` is
`KACSRegressor.from_preset("recommended")`, as the bench fits it. Run it twice: the first run
may compile the engines, whose compiler memory counts too.

    python tools/memory_1m.py plain|refined|recommended ROWS
"""

from __future__ import annotations

import resource
import sys

import numpy as np

from kacs_cli import KACSRegressor
from kacs_cli.cli.timing import TEST_ROWS, recommended_kacs, rows_data


def estimator(kind: str) -> KACSRegressor:
    if kind == "recommended":
        return recommended_kacs()
    if kind in ("plain", "refined"):
        return KACSRegressor(N=6400, P_hash=0.8, refinement=kind == "refined", random_state=0)
    raise SystemExit(f"unknown kind {kind!r}: plain, refined or recommended")


def main() -> None:
    kind, rows = sys.argv[1], int(sys.argv[2])
    model = estimator(kind)
    X, y, X_test, y_test = rows_data(rows)
    model.fit(X, y)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    mae = float(np.mean(np.abs(model.predict(X_test) - y_test)))
    chosen = f", chosen N {model.capacity_N_:,}" if model.capacity == "search" else ""
    print(f"{kind} {rows} rows: peak {peak} MB, test MAE {mae:.4f} on {TEST_ROWS:,} further rows{chosen}")


if __name__ == "__main__":
    main()
