"""`kacs fidelity`: a fitted model's per-input effects against a benchmark function's true ones
(estimators/fidelity.py, docs/explain.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kacs_cli.cli.model_rows import model_rows, output_folder, write_results
from kacs_cli.errors import UserError


def default_folder(model_path: Path) -> Path:
    """model.kacs -> model_fidelity/ beside it."""
    return model_path.with_name(f"{model_path.stem}_fidelity")


def _fidelity(model_path: Path, function: str, data: Optional[Path], out: Optional[Path]) -> None:
    import numpy as np
    import pandas as pd

    from kacs_cli.estimators import load_estimator
    from kacs_cli.estimators.fidelity import structural_fidelity
    from kacs_cli.experiments.data import benchmarks

    model_path = Path(model_path).expanduser()
    est = load_estimator(model_path)
    n = est.n_features_in_
    key = function.strip().lower()
    if key not in benchmarks.FUNCTIONS:
        raise UserError(f"unknown benchmark function {function!r}; choose one of {', '.join(benchmarks.FUNCTIONS)}")
    if data is None:
        X, y = benchmarks.generate(key, n, benchmarks.DEFAULT_SAMPLES)
    else:
        X, y = model_rows(data, est, model_path)
        missing = np.asarray(pd.isna(X)).any(axis=1)
        if missing.any():
            # The true function has no value at a missing input, so such a row has no true effect.
            raise UserError(f"{data}: {int(missing.sum())} of its {len(missing)} rows have missing inputs (the first "
                            f"is data row {int(np.argmax(missing)) + 1}); fidelity evaluates the true {key} at every "
                            f"row, which needs all inputs: drop those rows, or leave out --data to use {key}'s "
                            f"generated sample")
        if y is None:
            y = benchmarks.evaluate(key, X)
    folder = output_folder(out, default_folder(model_path), "fidelity")
    fid = structural_fidelity(est, lambda Z: benchmarks.evaluate(key, Z), X,
                              y_range=(float(np.min(y)), float(np.max(y))))
    write_results(folder, fid, f"{model_path} against {key}")


def register(app: typer.Typer) -> None:
    @app.command("fidelity")
    def fidelity_command(
        model: Path = typer.Argument(..., help="A model file written by `kacs fit`.", show_default=False),
        function: str = typer.Argument(..., help="The benchmark function the model learned: f1, f2, f3 or f4.",
                                       show_default=False),
        data: Optional[Path] = typer.Option(
            None, "--data", "-d",
            help="Headerless numeric CSV, n input columns in [0, 1] or n + 1 with the target last: the "
                 "rows over which effects are averaged (default: the function's generated 1000-row sample "
                 "at the model's n, dataset seed 0); or a dataset name (f1..f4: the authors' published sample)."),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Folder to write into (default: MODEL's name + _fidelity, beside it)."),
    ) -> None:
        """Structural fidelity: the model's per-input centred partial dependence against the
        function's, R^2 per input; writes fidelity.csv and fidelity.png (docs/explain.md)."""
        _fidelity(model, function, data, out)
