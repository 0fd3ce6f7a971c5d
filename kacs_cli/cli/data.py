"""`kacs data`: list, verify, import and fetch the registered datasets (the article's and the suite's)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kacs_cli.errors import UserError

data_app = typer.Typer(
    help="The registered datasets (the article's and the suite's): list them, verify their checksums, "
    "import or fetch them.",
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
    known = f"{', '.join(registry)} or a group ({', '.join(dataset_registry.GROUPS)})"
    if str(name).lower().endswith(".csv") or "/" in str(name):
        raise UserError(f"`kacs data {command}` {verb} registered datasets only, not {name!r}; use one of {known}")
    raise UserError(f"unknown dataset {name!r}; use one of {known} (the datasets `kacs data {command}` knows)")


def _requested(names: Optional[list[str]], command: str, verb: str) -> list:
    """The registry entries `names` stand for, in order and once each: a dataset name, or a
    group's name (article, suite) for all of its datasets; no names: the article's group."""
    from kacs_cli.experiments.data import registry as dataset_registry

    registry = dataset_registry.get_registry()
    wanted = []
    for name in names or ["article"]:
        key = str(name).strip().lower()
        members = dataset_registry.group_members(key) if key in dataset_registry.GROUPS else [key]
        for member in members:
            info = registry.get(member) or _registered(member, command, verb)
            if info not in wanted:
                wanted.append(info)
    return wanted


def _data_dir_line(data_dir: Optional[Path]) -> str:
    from kacs_cli.experiments.data import registry as dataset_registry

    where, origin = dataset_registry.resolve_data_dir(data_dir), dataset_registry.data_dir_origin(data_dir)
    return f"data directory: {where} (from {origin})"


@data_app.command("list")
def list_cmd(data_dir: DataDirOption = None) -> None:
    """Show every registered dataset, its shape and kind, and whether its file is present."""
    from rich.markup import escape
    from rich.table import Table

    from kacs_cli.experiments.data import registry as dataset_registry, datasets

    registry = dataset_registry.get_registry()
    titles = {"article": "the article's datasets (kacs data fetch)",
              "suite": "the suite beyond the article (pip install -e '.[suite]'; kacs data fetch suite)"}
    tables = {}
    for group in dataset_registry.GROUPS:
        table = tables[group] = Table(show_edge=False, title=escape(titles[group]), title_justify="left")
        table.add_column("dataset", no_wrap=True)
        table.add_column("file", no_wrap=True)
        table.add_column("rows x columns", justify="right", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("status", no_wrap=True)
        if group == "suite":
            table.add_column("categorical inputs (one-hot)")
    problems = []
    for name, status, path in datasets.dataset_status(data_dir):
        info = registry[name]
        style = {"present": "green", "missing": "yellow"}.get(status, "red")
        cells = [name, info.file, f"{info.rows} x {info.n_inputs + 1}", info.kind, f"[{style}]{status}[/{style}]"]
        if info.group == "suite":
            cells.append(escape(", ".join(info.categorical)))
        tables[info.group].add_row(*cells)
        if status != datasets.STATUS_PRESENT:
            problems.append(name)
    console = _console()
    for table in tables.values():
        if table.row_count:
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
        typer.Argument(help="Datasets to check, or a group: article, suite (default: the article's ten).",
                       show_default=False),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Check that every dataset file is present and matches its SHA-256; exit 2 otherwise."""
    from kacs_cli.experiments.data import registry as dataset_registry, datasets

    wanted = {info.name for info in _requested(names, "verify", "checks")}
    console = _console()
    problems = []
    for name, status, path in datasets.dataset_status(data_dir):
        if name not in wanted:
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
    console.print(f"all {len(wanted)} datasets verified; {_data_dir_line(data_dir)}")


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
        typer.Argument(help="Datasets to get, or a group: article, suite (default: the article's ten).",
                       show_default=False),
    ] = None,
    data_dir: DataDirOption = None,
    force: Annotated[bool, typer.Option("--force", help="Get again even if a verified copy is present.")] = False,
) -> None:
    """Get datasets, convert and verify them: the article's from UCI and the authors' repository,
    the suite's from the copies bundled in the installed packages of the `suite` extra (offline)."""
    from kacs_cli.experiments.data import fetch as dataset_fetch

    requested = _requested(names, "fetch", "downloads")
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
