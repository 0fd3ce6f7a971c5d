"""The exceptions the CLI turns into a single line: UserError (exit code 2) and Interrupted."""

from __future__ import annotations

import signal


class UserError(ValueError):
    """Bad input from the user: a config, a data file, a parameter.

    The message must name what is wrong and how to fix it, in one line. The CLI prints it
    without a traceback and exits with code 2.
    """


# Ctrl-C, `kill` or a batch scheduler's SIGTERM, a closed terminal's SIGHUP: the signals that
# stop a command (Interrupted) and that a campaign's worker processes ignore.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(BaseException):
    """A stop asked for by a signal: Ctrl-C's SIGINT, SIGTERM (what a batch scheduler or `kill`
    sends) or SIGHUP (the terminal closed); the command line raises it from its signal handlers
    and exits with 128 + signum after one line.

    Not a KeyboardInterrupt: typer turns those into a silent exit 130, whatever the signal.
    A BaseException, so that no `except Exception` swallows it; code that must clean up on a
    stop (the runner) catches BaseException. `kept` is what the interrupted command leaves, for
    the line.
    """

    def __init__(self, signum: int, kept: str = ""):
        super().__init__(signum)
        self.signum, self.kept = signum, kept

    @property
    def name(self) -> str:
        return "Ctrl-C" if self.signum == signal.SIGINT else signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        return f"interrupted ({self.name})" + (f": {self.kept}" if self.kept else "")
