"""Several models' learned effects against one function's true terms, side by side
(docs/explain.md, "Structural fidelity"): reads the effects that
`tools/fidelity_grid.py --effects DIR` wrote (FUNCTION_nN_runR_SETTING.npz, already on the
[-1, 1] target scale) and draws kacs_cli.estimators.fidelity.comparison_figure, one row per
model (NAME=SETTING: the row's label, then the setting's file; the last `=` separates
them), one column per chosen input. docs/fidelity/f4_n10_run0_compare.png is

    python tools/fidelity_compare.py DIR docs/fidelity/f4_n10_run0_compare.png --function f4 --n 10 --run 0 \\
        --models "KACS refined all levers=refined-levers,EBM=ebm,KAN=kan" --inputs x1,x2,x3
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from kacs_cli import atomic
from kacs_cli.estimators.fidelity import Fidelity, comparison_figure


def load_effects(path: Path) -> Fidelity:
    data = np.load(path)
    # The stored effects are on the [-1, 1] scale already; y_range and rows are not drawn.
    return Fidelity([str(v) for v in data["labels"]], data["grid"], data["true"], data["learned"], data["r2"],
                    (-1.0, 1.0), 0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("effects", type=Path, help="the folder of fidelity_grid.py --effects")
    ap.add_argument("out", type=Path, help="the figure (PNG)")
    ap.add_argument("--function", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--models", required=True, help="NAME=SETTING,...: row label (no comma) and fidelity_grid.py setting")
    ap.add_argument("--inputs", default=None, help="comma-separated input labels (default: all)")
    args = ap.parse_args()
    models = {}
    for item in args.models.split(","):
        name, _, setting = item.rpartition("=")
        models[name] = load_effects(args.effects / f"{args.function}_n{args.n}_run{args.run}_{setting or name}.npz")
    fig = comparison_figure(models, None if args.inputs is None else args.inputs.split(","))
    import matplotlib.pyplot as plt

    try:
        with atomic.replacing(args.out) as tmp:
            fig.savefig(tmp, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)


if __name__ == "__main__":
    main()
