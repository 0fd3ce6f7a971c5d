"""`kacs data`: list, verify, import and fetch the article's datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kacs_cli.errors import UserError

data_app = typer.Typer(
    help="The article's datasets: list them, verify their checksums, import or fetch them.",
    no_args_is_help=True,
)

DataDirOption = Annotated[
    Optional[Path],
    typer.Option(
        "--data-dir",
        help="Directory holding the dataset CSVs (default: $KACS_DATA_DIR, else the project's datasets/).",
        show_default=False,
    ),
]


def _console():
    from rich.console import Console

    # Created per call so that it writes to the current sys.stdout (captured in tests).
    return Console(highlight=False, soft_wrap=True)


def _registered(name: str, command: str, verb: str):
    """The registry entry of `name`; anything else is refused listing the names this command knows
    (not dataset_registry.lookup's CSV-path hint: verify and fetch work on registered datasets only)."""
    from kacs_cli.experiments.data import registry as dataset_registry

    registry = dataset_registry.get_registry()
    info = registry.get(str(name).strip().lower())
    if info is not None:
        return info
    known = ", ".join(registry)
    if str(name).lower().endswith(".csv") or "/" in str(name):
        raise UserError(f"`kacs data {command}` {verb} registered datasets only, not {name!r}; use one of {known}")
    raise UserError(f"unknown dataset {name!r}; use one of {known} (the datasets `kacs data {command}` knows)")


def _data_dir_line(data_dir: Optional[Path]) -> str:
    from kacs_cli.experiments.data import registry as dataset_registry

    where, origin = dataset_registry.resolve_data_dir(data_dir), dataset_registry.data_dir_origin(data_dir)
    return f"data directory: {where} (from {origin})"


@data_app.command("list")
def list_cmd(data_dir: DataDirOption = None) -> None:
    """Show every registered dataset, its shape and kind, and whether its file is present."""
    from rich.table import Table

    from kacs_cli.experiments.data import registry as dataset_registry, datasets

    registry = dataset_registry.get_registry()
    table = Table(show_edge=False)
    table.add_column("dataset", no_wrap=True)
    table.add_column("file", no_wrap=True)
    table.add_column("rows x columns", justify="right", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("status", no_wrap=True)
    problems = []
    for name, status, path in datasets.dataset_status(data_dir):
        info = registry[name]
        style = {"present": "green", "missing": "yellow"}.get(status, "red")
        table.add_row(
            name, info.file, f"{info.rows} x {info.n_inputs + 1}", info.kind, f"[{style}]{status}[/{style}]"
        )
        if status != datasets.STATUS_PRESENT:
            problems.append(name)
    console = _console()
    console.print(table)
    console.print(_data_dir_line(data_dir))
    if problems:
        console.print(
            f"not usable: {' '.join(problems)}; get them with `kacs data fetch {' '.join(problems)}` "
            f"or `kacs data import DIR`"
        )


@data_app.command("verify")
def verify_cmd(
    names: Annotated[
        Optional[list[str]],
        typer.Argument(help="Datasets to check (default: all registered).", show_default=False),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Check that every dataset file is present and matches its SHA-256; exit 2 otherwise."""
    from kacs_cli.experiments.data import registry as dataset_registry, datasets

    wanted: set[str] | None = None
    if names:
        wanted = set()
        for name in names:
            wanted.add(_registered(name, "verify", "checks").name)
    console = _console()
    problems = []
    for name, status, path in datasets.dataset_status(data_dir):
        if wanted is not None and name not in wanted:
            continue
        mark = "ok" if status == datasets.STATUS_PRESENT else status
        console.print(f"{mark:<18} {name:<5} {path}")
        if status != datasets.STATUS_PRESENT:
            problems.append((name, status))
    if problems:
        listed = ", ".join(f"{name} ({status})" for name, status in problems)
        names_ = " ".join(name for name, _ in problems)
        raise UserError(
            f"{len(problems)} dataset(s) not usable in {dataset_registry.resolve_data_dir(data_dir)}: {listed}; "
            f"get them with `kacs data fetch {names_}` or `kacs data import DIR`"
        )
    count = len(wanted) if wanted else len(dataset_registry.get_registry())
    console.print(f"all {count} datasets verified; {_data_dir_line(data_dir)}")


@data_app.command("import")
def import_cmd(
    src: Annotated[Path, typer.Argument(help="Folder holding dataset CSVs (e.g. a local mirror).", show_default=False)],
    data_dir: DataDirOption = None,
) -> None:
    """Copy the registered dataset CSVs found in SRC into the data directory, checksum-checked."""
    from kacs_cli.experiments.data import fetch as dataset_fetch

    imported = dataset_fetch.import_datasets(src, data_dir)
    console = _console()
    console.print(f"imported {len(imported)} dataset(s): {' '.join(imported)}")
    console.print(_data_dir_line(data_dir))


@data_app.command("fetch")
def fetch_cmd(
    names: Annotated[
        Optional[list[str]],
        typer.Argument(help="Datasets to download (default: all registered).", show_default=False),
    ] = None,
    data_dir: DataDirOption = None,
    force: Annotated[bool, typer.Option("--force", help="Download again even if a verified copy is present.")] = False,
) -> None:
    """Download datasets from UCI and the authors' repository, convert and verify them."""
    from kacs_cli.experiments.data import fetch as dataset_fetch, registry as dataset_registry

    requested = []
    for name in names or list(dataset_registry.get_registry()):
        info = _registered(name, "fetch", "downloads")
        if info not in requested:
            requested.append(info)
    fetched = dataset_fetch.fetch_datasets([info.name for info in requested], data_dir, force=force)
    skipped = [info.name for info in requested if info.name not in fetched]
    console = _console()
    if fetched:
        console.print(f"fetched and verified: {' '.join(fetched)}")
    if skipped:
        console.print(f"already present and verified: {' '.join(skipped)}")
    console.print(_data_dir_line(data_dir))


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data", help="List, verify, import and fetch the datasets.")
