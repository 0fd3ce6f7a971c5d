"""`kacs explain`: what a KACS model says, for a person (estimators/explain.py, docs/explain.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kacs_cli.cli.model_rows import model_rows, output_folder, write_results
from kacs_cli.errors import UserError

OUTPUTS = ("rules.csv", "rules.json", "shares.csv", "inputs.png", "channels.png", "shares.png")


def default_folder(model_path: Path) -> Path:
    """model.kacs -> model_explain/ beside it."""
    return model_path.with_name(f"{model_path.stem}_explain")


def _explain(model_path: Path, data: Optional[Path], out: Optional[Path]) -> None:
    from kacs_cli.estimators import explain_model, load_estimator

    model_path = Path(model_path).expanduser()
    est = load_estimator(model_path)
    model = est.model_
    if model.learner.components is None:
        raise UserError(
            f"{model_path} holds an {model.learner.label} model; explain draws KACS models only "
            f"(XCSF rules are n-dimensional boxes: inspect them with rules_)"
        )
    folder = output_folder(out, default_folder(model_path), "explanation")
    X = None if data is None else model_rows(data, est, model_path)[0]
    # Everything is measured and every figure drawn before the folder is made: bad data
    # leaves nothing behind.
    explanation = explain_model(est, X)
    write_results(folder, explanation, str(model_path))


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain_command(
        model: Path = typer.Argument(..., help="A KACS model file written by `kacs fit`.", show_default=False),
        data: Optional[Path] = typer.Option(
            None, "--data", "-d",
            help="Headerless numeric CSV, n input columns or n + 1 with the target last (a model with "
                 "categorical inputs: text in their columns, and a header row, as in training): the rows on "
                 "which the variance shares are measured (default: a uniform sample of the inputs' "
                 "training range); or a dataset name (f1..f4, asn, ...)."),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Folder to write into (default: MODEL's name + _explain, beside it)."),
    ) -> None:
        """What a KACS model says: rules.csv, rules.json, shares.csv (the share of the prediction's
        variance each input and channel carries) and small-multiple figures (docs/explain.md)."""
        _explain(model, data, out)
