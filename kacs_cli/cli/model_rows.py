"""What the commands that take a saved model share: the rows given for it (inputs, or inputs
and the target last) and the folder their files go to."""

from __future__ import annotations

from pathlib import Path

import typer

from kacs_cli.errors import UserError


def model_rows(data, est, model_path, with_target: bool = False, data_dir=None):
    """(X, y or None) of a CSV or a dataset name for the fitted estimator `est` of n inputs.

    A dataset name (f1..f4, asn, ...; read from `data_dir`, else $KACS_DATA_DIR) gives its
    inputs and target, as `kacs fit` reads them. A CSV has n columns, or n + 1 with the target
    last (`with_target`: n + 1 only): headerless and numeric; for a model with categorical
    inputs, its categorical columns may hold text and the file may start with a header row
    (datasets.read_table), and X is a DataFrame named as the model's inputs."""
    from kacs_cli.experiments.data.datasets import load_dataset, read_matrix, read_table
    from kacs_cli.experiments.data.registry import get_registry

    n = est.n_features_in_
    # A missing file's message offers the dataset names, so every command that reads rows for
    # a model takes them; an existing file of that name is still read as the file.
    if not Path(data).expanduser().exists() and str(data).strip().lower() in get_registry():
        X, y = load_dataset(str(data), data_dir)
        if X.shape[1] != n:
            raise UserError(f"{data}: {X.shape[1]} inputs, but the model in {model_path} takes {n}")
        return X, y
    categories = getattr(est, "categories_", None)
    if categories is not None:
        names = getattr(est, "feature_names_in_", None)
        names = None if names is None else [str(v) for v in names]
        X, y, _ = read_table(data, list(categories.columns), inputs=n, with_target=with_target, known_names=names)
        X.columns = names if names is not None else range(n)
        return X, y
    M = read_matrix(data)
    if with_target and M.shape[1] != n + 1:
        raise UserError(f"{data}: found {M.shape[1]} columns; the model in {model_path} takes {n} inputs, so "
                        f"give {n + 1} (inputs, target last)")
    if M.shape[1] not in (n, n + 1):
        raise UserError(
            f"{data}: found {M.shape[1]} columns; the model in {model_path} takes {n} inputs, so "
            f"give {n} columns (inputs) or {n + 1} (inputs, target last)"
        )
    return (M[:, :n], M[:, n]) if M.shape[1] == n + 1 else (M, None)


def output_folder(out, default: Path, what: str) -> Path:
    """--out as a folder (default beside the model), refused when it is a file."""
    folder = Path(out).expanduser() if out is not None else default
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--out {folder} is a file; give a folder for the {what}'s files")
    return folder


def write_results(folder: Path, result, heading: str) -> None:
    """Create --out's folder, only once everything is computed (bad data leaves nothing
    behind), write `result` (an object with write(folder) and summary()) into it, and say so."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {folder}: cannot create the folder: {exc.strerror or exc}") from None
    written = result.write(folder)
    typer.echo(f"{heading}: " + result.summary())
    typer.echo(f"wrote {', '.join(p.name for p in written)} to {folder}")
