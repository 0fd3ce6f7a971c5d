"""The `kacs` command line: one typer app; each command group lives in kacs_cli/commands."""

from __future__ import annotations

import sys

import typer

from kacs_cli.errors import UserError

app = typer.Typer(
    name="kacs",
    help="KACS and XCSF: train, run the article's experiments, and report them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    from kacs_cli.commands import COMMAND_MODULES

    for module in COMMAND_MODULES:
        module.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: bad input becomes one line on stderr and exit code 2."""
    try:
        # Outside standalone mode click returns the exit code (e.g. 130 after Ctrl-C).
        code = app(args=argv, standalone_mode=False)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("aborted", file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # click's usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    if isinstance(code, int) and code:
        sys.exit(code)
