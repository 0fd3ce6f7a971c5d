"""Peak resident memory of a KACS fit on generated rows (docs/refinement.md, "Many rows"):
8 inputs uniform on [0, 1], y = sin(6 x1) + x2^2 + x3 x4 + 0.1 N(0, 1), N = 6,400, P_hash 0.8.
Run it twice: the first run may compile the engines, whose compiler memory counts too.

    python tools/memory_1m.py plain|refined ROWS
"""

from __future__ import annotations

import resource
import sys

import numpy as np

from kacs_cli import KACSRegressor


def main() -> None:
    kind, rows = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    X = rng.random((rows, 8))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=rows)
    KACSRegressor(N=6400, P_hash=0.8, refinement=kind == "refined", random_state=0).fit(X, y)
    print(f"{kind} {rows} rows: peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
