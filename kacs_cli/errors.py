"""The one exception type the CLI turns into a single line and exit code 2."""


class UserError(ValueError):
    """Bad input from the user: a config, a data file, a parameter.

    The message must name what is wrong and how to fix it, in one line. The CLI prints it
    without a traceback and exits with code 2.
    """
