"""The `kacs` command line: one typer app; each command group is a module of this package
(bench, data, run, report, reproduce, model, explain, fidelity), each with `register(app)`."""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager

import typer

from kacs_cli import atomic
from kacs_cli.errors import STOP_SIGNALS, Interrupted, UserError

try:
    from kacs_cli.cli import bench, data, explain, fidelity, model, report, reproduce, run
except UserError as _exc:
    # The engine reads its environment switches as it is imported (engine/cache.py): a bad
    # value is one line and exit 2 here too.
    print(f"error: {_exc}", file=sys.stderr)
    sys.exit(2)

app = typer.Typer(
    name="kacs",
    help="KACS and XCSF: train, run the article's experiments, and report them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


for _commands in (bench, data, run, report, reproduce, model, explain, fidelity):
    _commands.register(app)


@contextmanager
def stop_signals():
    """While a command runs, each of STOP_SIGNALS raises Interrupted in the main thread.

    So SIGTERM and SIGHUP stop `kacs run` as cleanly as Ctrl-C does; their default action
    would kill it on the spot (exit -15, no message, runs.csv behind the records, no
    curves.csv.gz, loky's "leaked semlock objects" warnings). Once one arrived, the others are ignored until the command
    has finished stopping: a scheduler that sends SIGTERM twice must not cut the flush short.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = []

    def handler(signum, frame):
        if not stopping:
            stopping.append(signum)
            raise Interrupted(signum)

    previous = {}
    try:
        for signum in STOP_SIGNALS:
            previous[signum] = signal.signal(signum, handler)
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: bad input becomes one line on stderr and exit code 2.

    typer runs in standalone mode, so the click it is built on handles its own usage errors
    (unknown command or option, a value of the wrong type, a missing argument): usage block
    on stderr, exit code 2. Catching click's exceptions here instead breaks with the typer
    release: from 0.26 typer raises those of its vendored copy of click (typer._click), which
    are not click.ClickException, and from 0.28 typer.Abort and typer.Exit are typer's own.
    Only the project's UserError, which click never sees as its own, is handled here; a file
    the command could not write (atomic.WriteFailed: no permission, disk full, folder gone),
    which is the user's to fix too; and a stop by a signal (Ctrl-C, SIGTERM, SIGHUP: one line,
    exit 128 + the signal's number, so 130 for Ctrl-C).
    """
    try:
        with stop_signals():
            app(args=argv, prog_name="kacs")
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except atomic.WriteFailed as exc:
        print(f"error: {exc}; free space or fix the permissions, then run the command again", file=sys.stderr)
        sys.exit(2)
    except Interrupted as exc:
        print(str(exc), file=sys.stderr)
        sys.exit(exc.exit_code)
    except SystemExit as exc:
        # Standalone mode always ends with SystemExit; a success returns to the caller.
        if exc.code not in (0, None):
            raise
