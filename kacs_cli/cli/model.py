"""`kacs fit`, `kacs predict`, `kacs plot-model`: train one model, use it, look at it."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Optional

import typer

from kacs_cli import atomic
from kacs_cli.errors import UserError
from kacs_cli.scaling import ScaleWarning



def _load_estimator(path: Path):
    from kacs_cli.estimators import load_estimator

    return load_estimator(path)


def _fit(data, method, out, iterations, seed, p_hash, data_dir):
    import numpy as np

    from kacs_cli.engine import default_p_hash, registry
    from kacs_cli.estimators import estimator_class
    from kacs_cli.experiments import datasets

    method = method.strip().lower()
    if method not in registry.names():
        raise UserError(f"--method must be one of {', '.join(registry.names())}, got {method!r}")
    if iterations < 1:
        raise UserError(f"--iterations must be a whole number >= 1, got {iterations}")
    if seed < 0:
        raise UserError(f"--seed must be a non-negative integer, got {seed}")
    out = atomic.output_file(out, example="model.kacs")
    X, y = datasets.load_dataset(data, data_dir)
    if p_hash is None:
        p_hash = default_p_hash(datasets.is_real_world(data))
    cls = estimator_class(method)
    est = cls(n_iter=iterations, random_state=seed, P_hash=float(p_hash))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ScaleWarning)
        est.fit(X, y)
    for warning in caught:  # one line each, as the command line's errors (no source line)
        if issubclass(warning.category, ScaleWarning):
            typer.echo(f"warning: {data}: {warning.message}", err=True)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    # Like `kacs run --out`, a missing folder is created (only now: bad data leaves no folder).
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder {out.parent}: {exc.strerror or exc}") from None
    pred = est.predict(X)
    mae = float(np.mean(np.abs(pred - y)))
    mae_scaled = float(np.mean(np.abs(est.scale_target(pred) - est.scale_target(y))))
    est.save(out)
    typer.echo(
        f"{method.upper()} fitted on {data}: {X.shape[0]} rows x {X.shape[1]} inputs, "
        f"{iterations} iterations, seed {seed}, P_hash {p_hash:g}"
    )
    typer.echo(
        f"rules {est.n_rules_} (micro {est.n_micro_}), parameters {est.n_params_}; train MAE "
        f"{mae:.6g} ({mae_scaled:.6g} on the [-1, 1] target scale)"
    )
    typer.echo(f"saved to {out}")


def _predict(model_path, data, out):
    import numpy as np

    est = _load_estimator(model_path)
    n = est.n_features_in_
    from kacs_cli.experiments.datasets import read_matrix

    M = read_matrix(data)
    if M.shape[1] == n:
        X, y = M, None
    elif M.shape[1] == n + 1:
        X, y = M[:, :n], M[:, n]
    else:
        raise UserError(
            f"{data}: found {M.shape[1]} columns; the model in {model_path} takes {n} inputs, so "
            f"give {n} columns (inputs) or {n + 1} (inputs, target last)"
        )
    pred = est.predict(X)
    lines = "".join(f"{float(v)!r}\n" for v in pred)
    if out is not None:
        out = atomic.output_file(out, example="predictions.txt")
        atomic.make_dirs(out.parent)  # as `kacs fit --out`: a missing folder is created
        atomic.write_text(out, lines)
        typer.echo(f"wrote {len(pred)} predictions to {out}")
    else:
        sys.stdout.write(lines)
        sys.stdout.flush()
    if y is not None:
        mae = float(np.mean(np.abs(pred - y)))
        scaled = float(np.mean(np.abs(est.scale_target(pred) - np.clip(est.scale_target(y), -1.0, 1.0))))
        # To stderr when the predictions go to stdout, so that they stay pipeable.
        typer.echo(f"MAE {mae:.6g} against the last column ({scaled:.6g} on the [-1, 1] target "
                   f"scale, targets clipped)", err=out is None)


def _plot(model_path, out, points):
    from kacs_cli.estimators import load, plot_kacs_functions

    if points < 2:
        raise UserError(f"--points must be >= 2, got {points}")
    obj = load(model_path)
    model = getattr(obj, "model_", obj)
    if model.learner.components is None:
        raise UserError(
            f"{model_path} holds an {model.learner.label} model; plot-model draws the one-dimensional functions "
            f"of KACS models only (XCSF rules are n-dimensional boxes: inspect them with rules_)"
        )
    out = Path(out).expanduser() if out is not None else Path(model_path).with_suffix(".png")
    atomic.output_file(out, example="model.png")  # a missing folder is created, as by `kacs fit`
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise UserError(f"--out {out}: use a .png, .pdf or .svg file name")
    plot_kacs_functions(obj, out, points=points)
    n = model.n
    typer.echo(
        f"drew {n * (2 * n + 1)} inner and {2 * n + 1} outer functions of {model_path} "
        f"({model.n_rules} rules) to {out}"
    )


def register(app: typer.Typer) -> None:
    @app.command("fit")
    def fit_command(
        data: str = typer.Argument(
            ..., help="Headerless numeric CSV (inputs, target last) or a dataset name (f1..f4, asn, ...).",
            show_default=False),
        out: Path = typer.Option(..., "--out", "-o", help="Model file to write, e.g. model.kacs.",
                                 show_default=False),
        method: str = typer.Option("kacs", "--method", "-m",
                                   help="The learner: kacs, xcsf, or one added to engine/registry.py."),
        iterations: int = typer.Option(100_000, "--iterations", "-n", help="Training iterations (samples)."),
        seed: int = typer.Option(0, "--seed", help="Learner seed."),
        p_hash: Optional[float] = typer.Option(
            None, "--P-hash", "--p-hash",
            help="Covering probability of a full-range interval (default: 0.0 for f1-f4, 0.8 for "
                 "real-world data and user CSVs, as in the article).", show_default=False),
        data_dir: Optional[Path] = typer.Option(
            None, "--data-dir", help="Folder of the named datasets (default $KACS_DATA_DIR, else datasets/)."),
    ) -> None:
        """Train KACS or XCSF on a whole dataset and save the model (inputs and target are min-max scaled)."""
        _fit(data, method, out, iterations, seed, p_hash, data_dir)

    @app.command("predict")
    def predict_command(
        model: Path = typer.Argument(..., help="A model file written by `kacs fit`.", show_default=False),
        data: Path = typer.Argument(
            ..., help="Headerless numeric CSV with n input columns, or n + 1 with the target last.",
            show_default=False),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Write the predictions here (one per line) instead of printing them."),
    ) -> None:
        """Predict every row of DATA in the target's original units; with a target column, report the MAE."""
        _predict(model, data, out)

    @app.command("plot-model")
    def plot_model_command(
        model: Path = typer.Argument(..., help="A KACS model file written by `kacs fit`.", show_default=False),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Image to write (.png, .pdf, .svg; default: MODEL with .png)."),
        points: int = typer.Option(200, "--points", help="Sample points per function."),
    ) -> None:
        """Draw every learned function of a KACS model: inner psi_{q,p} and outer Phi_q, one small plot each."""
        _plot(model, out, points)
