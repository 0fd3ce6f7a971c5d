"""The `kacs` command line: one typer app; each command group is a module of this package
(bench, data, run, report, model), each with `register(app)`."""

from __future__ import annotations

import sys

import typer

from kacs_cli import atomic
from kacs_cli.cli import bench, data, model, report, run
from kacs_cli.errors import UserError

app = typer.Typer(
    name="kacs",
    help="KACS and XCSF: train, run the article's experiments, and report them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


for _commands in (bench, data, run, report, model):
    _commands.register(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: bad input becomes one line on stderr and exit code 2.

    typer runs in standalone mode, so the click it is built on handles its own usage errors
    (unknown command or option, a value of the wrong type, a missing argument): usage block
    on stderr, exit code 2. Catching click's exceptions here instead breaks with the typer
    release: from 0.26 typer raises those of its vendored copy of click (typer._click), which
    are not click.ClickException, and from 0.28 typer.Abort and typer.Exit are typer's own.
    Standalone mode also turns Ctrl-C into exit code 130. Only the project's UserError, which
    click never sees as its own, is handled here, and a file the command could not write
    (atomic.WriteFailed: no permission, disk full, folder gone), which is the user's to fix too.
    """
    try:
        app(args=argv, prog_name="kacs")
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except atomic.WriteFailed as exc:
        print(f"error: {exc}; free space or fix the permissions, then run the command again", file=sys.stderr)
        sys.exit(2)
    except SystemExit as exc:
        # Standalone mode always ends with SystemExit; a success returns to the caller.
        if exc.code not in (0, None):
            raise
