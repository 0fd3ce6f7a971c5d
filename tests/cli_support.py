"""One way for tests to call the `kacs` command line: in-process, through its real entry point."""

from kacs_cli.cli import main


def run_kacs(capsys, *argv) -> tuple[int, str, str]:
    """Run `kacs ARGV...`; returns (exit code, stdout, stderr) of this call alone."""
    capsys.readouterr()
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
    out, err = capsys.readouterr()
    return code, out, err
