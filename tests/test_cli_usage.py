"""Every usage error of the whole `kacs` command tree: exit code 2, a short message, no traceback.

The commands, their options and which options are numeric are discovered from the app itself,
so a command added later is covered without touching this file.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import pytest
import typer.main

from kacs_cli.cli import app, main

# click's usage block (Usage line, hint, framed error) or one `error:` line; the help printed
# for a bare group goes to stdout.
MAX_ERROR_LINES = 12


def _numeric(annotation):
    """int or float, through Annotated[...] and Optional[...] (bool is not numeric), else None."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        annotation = args[0]
    return annotation if annotation in (int, float) else None


def _walk(command, path):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, path + [name])


def _tree():
    """(command path, is a group, params, {numeric param name: int or float}) of every node."""
    nodes = []
    for path, command in _walk(typer.main.get_command(app), []):
        numeric = {}
        if command.callback is not None:
            hints = typing.get_type_hints(inspect.unwrap(command.callback), include_extras=True)
            numeric = {name: _numeric(hint) for name, hint in hints.items() if _numeric(hint)}
        nodes.append((path, hasattr(command, "commands"), list(command.params), numeric))
    return nodes


TREE = _tree()


def _id(path):
    return " ".join(["kacs"] + path)


def _filler(param) -> list[str]:
    """A syntactically valid value for a required parameter (so the error is about the option
    under test); numeric parameters get a number."""
    value = "1"
    if param.param_type_name == "argument":
        return [value]
    return [param.opts[0], value]


def _cases():
    for path, is_group, params, numeric in TREE:
        required = [p for p in params if p.required]
        # A command whose parameters are all optional may legitimately run without any
        # (`kacs bench`, `kacs data list`); bare groups and missing required ones are errors.
        if is_group or required:
            yield pytest.param(path, [], None, id=f"{_id(path)} (no arguments)")
        yield pytest.param(path, ["--no-such-option"], "--no-such-option", id=f"{_id(path)} --no-such-option")
        for param in params:
            if param.name not in numeric or param.param_type_name != "option":
                continue
            filler = [v for p in required if p is not param for v in _filler(p)]
            # A fraction is as wrong as a word for a whole-number option.
            for bad in ("abc", "1.5") if numeric[param.name] is int else ("abc",):
                yield pytest.param(path, filler + [param.opts[0], bad], param.opts[0],
                                   id=f"{_id(path)} {param.opts[0]} {bad}")


def test_the_walk_finds_the_whole_tree():
    paths = {" ".join(p) for p, *_ in TREE}
    assert {"run", "scale", "report", "fit", "predict", "plot-model", "bench", "data", "data fetch",
            "data import", "data list", "data verify"} <= paths
    numeric = {(" ".join(p), n) for p, _, _, names in TREE for n in names}
    assert {("run", "iterations"), ("run", "runs"), ("run", "jobs"), ("plot-model", "points"),
            ("fit", "p_hash"), ("fit", "seed")} <= numeric


@pytest.mark.parametrize(("path", "args", "named"), list(_cases()))
def test_usage_error_exits_2_without_traceback(path, args, named, capsys, tmp_path, monkeypatch):
    # Nothing of a half-parsed command may land in the project folder.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(path + args)
    out, err = capsys.readouterr()
    assert exc.value.code == 2, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    if args:
        lines = err.strip().splitlines()
        assert 1 <= len(lines) <= MAX_ERROR_LINES, err
        assert "Usage:" in err or (len(lines) == 1 and lines[0].startswith("error: ")), err
        if named is not None:
            assert named in err, err
    else:
        assert "Usage:" in out + err
    assert list(tmp_path.iterdir()) == []


# Bad command lines, each through a real process as a user runs it.
REPRODUCTIONS = [
    [], ["run"], ["nosuchcmd"], ["run", "configs/smoke.yaml", "--bogus-opt"],
    ["run", "configs/smoke.yaml", "--iterations", "abc"], ["run", "configs/smoke.yaml", "--runs", "1.5"],
    ["fit", "x.csv"], ["plot-model", "m.kacs", "--points", "x"],
]


@pytest.mark.slow
def test_issue_reproductions_in_a_process_exit_2_without_traceback(tmp_path):
    for argv in REPRODUCTIONS:
        proc = subprocess.run(
            [sys.executable, "-c", "from kacs_cli.cli import main; main()", *argv],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 2, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr, (argv, proc.stderr)
        assert "Usage:" in proc.stdout + proc.stderr, (argv, proc.stderr)
