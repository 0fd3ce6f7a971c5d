"""The grammar of config files: YAML that refuses a repeated key, and the checks every key shares.

Each check returns its value in normalized form or raises a UserError naming the key path
(`benchmarks[2].n: must be a whole number >= 1, got 0`), the form of every config error.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, NoReturn

import yaml

from kacs_cli.errors import UserError

# Cell labels, method labels and experiment names end up in file names.
SAFE_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None,
                f"key {key!r} appears twice (lines {seen[key] + 1} and {key_node.start_mark.line + 1}); keep one",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: str | Path) -> dict:
    """Parse a config file into a mapping; unreadable or malformed files are UserErrors."""
    path = Path(path)
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.yaml"))
        hint = f" such as {path / found[0]}" if found else " (see configs/)"
        raise UserError(f"{path} is a directory; `kacs run` expects a YAML config file{hint}")
    if not path.is_file():
        raise UserError(f"config file {path} not found; give the path of a YAML config (see configs/)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read config file {path}: {exc}") from None
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{path}: not valid YAML{where}: {problem}") from None
    if not isinstance(raw, dict):
        raise UserError(
            f"{path}: a config must be a YAML mapping with keys such as experiment, methods, "
            f"benchmarks, protocol; got {type(raw).__name__}"
        )
    return raw


def fail(path: str, message: str) -> NoReturn:
    raise UserError(f"{path}: {message}")


def type_name(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return {bool: "true/false", int: "a whole number", float: "a number", str: "text",
            list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


def whole(value: Any, path: str, minimum: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        ok, value = True, int(value)
    if not ok:
        hint = ""
        if isinstance(value, str) and re.fullmatch(r"[0-9.]+[eE][+-]?[0-9]+", value.strip()):
            hint = " (YAML reads 1e5 as text: write 100000 or 100_000)"
        fail(path, f"must be a whole number >= {minimum}, got {value!r}{hint}")
    if value < minimum:
        fail(path, f"must be a whole number >= {minimum}, got {value}")
    return int(value)


def number(value: Any, path: str, lo: float, hi: float, *, open_lo: bool = False, open_hi: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        fail(path, f"must be a number, got {value!r}")
    lo_ok = value > lo if open_lo else value >= lo
    hi_ok = value < hi if open_hi else value <= hi
    if not (lo_ok and hi_ok):
        interval = f"{'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        fail(path, f"must lie in {interval}, got {value}")
    return float(value)


def nonempty_text(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        fail(path, f"must be non-empty text, got {type_name(value)} {value!r}")
    return value.strip()


def choice(value: Any, path: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if not isinstance(value, str) or value.strip().lower() not in choices:
        fail(path, f"must be one of {', '.join(choices)}, got {value!r}")
    return value.strip().lower()


def mapping(value: Any, path: str, allowed: Iterable[str], what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail(path, f"must be a mapping of {what}, got {type_name(value)}")
    allowed = tuple(allowed)
    for key in value:
        if key not in allowed:
            close = [a for a in allowed if str(key).lower() == a.lower()]
            hint = f"did you mean {close[0]!r}? " if close else ""
            fail(f"{path}.{key}" if path else str(key),
                 f"unknown key; {hint}allowed keys: {', '.join(allowed)}")
    return value


def safe_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return name or "data"
