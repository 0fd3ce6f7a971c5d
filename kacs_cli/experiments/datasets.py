"""Datasets: the registry, a validating CSV loader, and fetch/import/verify of the data dir.

The eight datasets of the article (SPEC section 8) are described in kacs_cli/experiments/data/registry.yaml
(committed); the CSV files live in a data directory (never committed) and are pinned by
SHA-256, so every machine trains on byte-identical data. Any other headerless numeric CSV
(target last) can be used by path.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from kacs_cli import atomic
from kacs_cli.errors import UserError
from kacs_cli.experiments import PACKAGE_DATA

PROJECT_DIR = Path(__file__).resolve().parents[2]
REGISTRY_PATH = PACKAGE_DATA / "registry.yaml"
# A checkout's datasets/ folder; an installed package has none, and uses ./datasets instead.
IN_CHECKOUT = (PROJECT_DIR / "pyproject.toml").is_file()
DEFAULT_DATA_DIR = PROJECT_DIR / "datasets" if IN_CHECKOUT else Path("datasets")
DATA_DIR_ENV = "KACS_DATA_DIR"
# A mirror for `kacs data fetch`: each download URL's last path segment is fetched from it.
FETCH_BASE_URL_ENV = "KACS_FETCH_BASE_URL"

REAL_WORLD = ("asn", "ccpp", "cs", "eec")  # the main experiment's real-world benchmarks
SUPRB_EXTRA = ("pppts", "pt")  # the two further real-world sets of the SupRB comparison
PUBLISHED = ("f1", "f2", "f3", "f4")
KINDS = ("real", "published")

MIN_ROWS = 10
MIN_COLUMNS = 2
# Larger than any of the article's archives by far; guards against a wrong URL streaming forever.
MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024
FETCH_TIMEOUT_S = 60.0

STATUS_PRESENT = "present"
STATUS_MISSING = "missing"
STATUS_MISMATCH = "checksum mismatch"

GET_HINT = "get it with `kacs data fetch {name}` (needs internet) or copy it from a local mirror with `kacs data import DIR`"


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    file: str
    rows: int
    n_inputs: int
    columns: list[str]  # input names, then the target's name last
    sha256: str
    source: str  # where the data comes from (URL of its public page)
    kind: str  # "real" (UCI measurements) or "published" (the authors' synthetic samples)
    line_endings: str | None = None  # "CRLF" or "LF": part of the checksummed bytes
    title: str = ""
    license: str | None = None
    download: dict | None = field(default=None, compare=False)  # how `kacs data fetch` rebuilds it


# ----------------------------------------------------------------------------- registry


def load_registry(path: str | Path = REGISTRY_PATH) -> dict[str, DatasetInfo]:
    """Parse and validate a registry YAML file (kacs_cli/experiments/data/registry.yaml by default)."""
    import yaml

    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(
            f"dataset registry not found at {path}; it ships with the package "
            f"(kacs_cli/experiments/data/registry.yaml): reinstall kacs or restore the file"
        ) from None
    except yaml.YAMLError as exc:
        raise UserError(f"dataset registry {path} is not valid YAML: {str(exc).splitlines()[0]}; fix the file") from None
    entries = doc.get("datasets") if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise UserError(f"dataset registry {path} needs a non-empty mapping 'datasets:'; fix the file")

    registry: dict[str, DatasetInfo] = {}
    required = ("file", "rows", "n_inputs", "columns", "sha256", "source", "kind")
    for name, entry in entries.items():
        where = f"dataset registry {path}, entry {name!r}"
        if not isinstance(entry, dict):
            raise UserError(f"{where}: must be a mapping of fields; fix the file")
        missing = [key for key in required if key not in entry]
        if missing:
            raise UserError(f"{where}: missing field(s) {', '.join(missing)}; add them")
        info = DatasetInfo(
            name=str(name).lower(),
            file=str(entry["file"]),
            rows=int(entry["rows"]),
            n_inputs=int(entry["n_inputs"]),
            columns=[str(c) for c in entry["columns"]],
            sha256=str(entry["sha256"]).lower(),
            source=str(entry["source"]),
            kind=str(entry["kind"]),
            line_endings=entry.get("line_endings"),
            title=str(entry.get("title", "")),
            license=entry.get("license"),
            download=entry.get("download"),
        )
        if info.kind not in KINDS:
            raise UserError(f"{where}: kind {info.kind!r} must be one of {', '.join(KINDS)}")
        if len(info.columns) != info.n_inputs + 1:
            raise UserError(
                f"{where}: {len(info.columns)} column names for n_inputs = {info.n_inputs}; "
                f"list every input and the target last"
            )
        if not re.fullmatch(r"[0-9a-f]{64}", info.sha256):
            raise UserError(f"{where}: sha256 must be 64 hex digits")
        if info.line_endings not in (None, "CRLF", "LF"):
            raise UserError(f"{where}: line_endings must be CRLF or LF")
        registry[info.name] = info
    return registry


_REGISTRY: dict[str, DatasetInfo] | None = None


def get_registry() -> dict[str, DatasetInfo]:
    """The project registry, read once on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = load_registry()
    return _REGISTRY


def __getattr__(name: str):
    # REGISTRY is lazy so that importing the module (e.g. for the CLI's --help) reads no file.
    if name == "REGISTRY":
        return get_registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _is_path_like(name_or_path: str | Path) -> bool:
    if isinstance(name_or_path, Path):
        return True
    text = str(name_or_path)
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return text.lower().endswith(".csv") or any(sep in text for sep in separators)


def lookup(name_or_path: str | Path) -> DatasetInfo | None:
    """The registry entry of a dataset name (case-insensitive); None for a CSV path.

    Anything that is neither a registry name nor path-like (ends in .csv or contains a path
    separator) is a UserError listing the known names.
    """
    registry = get_registry()
    if not isinstance(name_or_path, Path):
        key = str(name_or_path).strip().lower()
        if key in registry:
            return registry[key]
    if _is_path_like(name_or_path):
        return None
    raise UserError(
        f"unknown dataset {str(name_or_path)!r}; use one of {', '.join(registry)} "
        f"or the path of a CSV file (ending in .csv)"
    )


def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    """Where dataset CSVs live: the argument, else $KACS_DATA_DIR, else the project's datasets/
    (./datasets for an installed package)."""
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser()
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return DEFAULT_DATA_DIR


def _data_dir_origin(data_dir: str | Path | None) -> str:
    if data_dir is not None and str(data_dir) != "":
        return "--data-dir"
    if os.environ.get(DATA_DIR_ENV):
        return f"${DATA_DIR_ENV}"
    if IN_CHECKOUT:
        return "the default, the project's datasets/"
    return "the default, datasets/ in the current folder"


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ----------------------------------------------------------------------------- CSV loading

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def _fast_parse(raw: bytes) -> np.ndarray | None:
    """All-numeric, rectangular, finite data via pandas' C parser; None if anything is off."""
    import pandas as pd

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
    if rows < MIN_ROWS:
        raise UserError(f"{path}: found {rows} data rows; a dataset needs at least {MIN_ROWS}")
    y = data[:, -1]
    if np.all(y == y[0]):
        raise UserError(
            f"{path}: the target (last column) is constant ({y[0]:g}) on all {rows} rows; "
            f"a regression target must vary, check that the target is the last column"
        )
    X = np.ascontiguousarray(data[:, :-1])
    return X, np.ascontiguousarray(y)


# ----------------------------------------------------------------------------- named datasets


def _dataset_path(info: DatasetInfo, data_dir: str | Path | None) -> Path:
    return resolve_data_dir(data_dir) / info.file


def _status(info: DatasetInfo, path: Path) -> str:
    if not path.is_file():
        return STATUS_MISSING
    return STATUS_PRESENT if sha256_file(path) == info.sha256 else STATUS_MISMATCH


def _missing_message(info: DatasetInfo, data_dir: str | Path | None) -> str:
    path = _dataset_path(info, data_dir)
    return (
        f"dataset {info.name} not found: looked for {path} (data directory from "
        f"{_data_dir_origin(data_dir)}); " + GET_HINT.format(name=info.name)
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
    path = _dataset_path(info, data_dir)
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
        path = _dataset_path(info, data_dir)
        out.append((info.name, _status(info, path), path))
    return out


def missing_datasets(names: Iterable[str], data_dir: str | Path | None = None) -> list[str]:
    """Those of `names` (registry names or CSV paths) whose file is absent or fails its checksum."""
    missing = []
    for name in names:
        info = lookup(name)
        if info is None:
            if not Path(name).expanduser().is_file():
                missing.append(str(name))
        elif _status(info, _dataset_path(info, data_dir)) != STATUS_PRESENT:
            missing.append(info.name)
    return missing


# ----------------------------------------------------------------------------- writing files


def _write_atomic(dest: Path, chunks: Iterable[bytes]) -> None:
    """Write via a temp file in the destination directory and os.replace, so a reader (or a
    crash) never sees a half-written dataset."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(dest, suffix=".part") as tmp, open(tmp, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
        fh.flush()
        os.fsync(fh.fileno())


def _ensure_dir(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create the data directory {directory}: {exc.strerror or exc}; "
            f"choose another with --data-dir or ${DATA_DIR_ENV}"
        ) from None


def _source_names(info: DatasetInfo) -> list[str]:
    # A mirror may hold a file under the registry name or under its upstream name
    # (e.g. the authors' f1_rastrigin_10dim_1000.csv).
    names = [info.file]
    spec = info.download or {}
    if spec.get("format", "csv") == "csv" and spec.get("url"):
        upstream = spec["url"].rstrip("/").rsplit("/", 1)[-1]
        if upstream not in names:
            names.append(upstream)
    return names


def import_datasets(src_dir: str | Path, data_dir: str | Path | None = None) -> list[str]:
    """Copy every registry CSV found in src_dir into the data dir, after checking its SHA-256.

    Returns the imported names. Files that fail the checksum are refused (UserError after the
    good ones are copied); finding no dataset file at all is a UserError too.
    """
    src = Path(src_dir).expanduser()
    if not src.is_dir():
        raise UserError(f"import source {src} is not a directory; give the folder that holds the dataset CSVs")
    dest_dir = resolve_data_dir(data_dir)
    imported: list[str] = []
    refused: list[str] = []
    for info in get_registry().values():
        source = next((src / n for n in _source_names(info) if (src / n).is_file()), None)
        if source is None:
            continue
        found = sha256_file(source)
        if found != info.sha256:
            refused.append(f"{source.name} (SHA-256 {found}, expected {info.sha256})")
            continue
        dest = dest_dir / info.file
        if dest.exists() and dest.resolve() == source.resolve():
            imported.append(info.name)  # importing the data dir into itself: already in place
            continue
        _ensure_dir(dest_dir)

        def chunks(path: Path = source):
            with open(path, "rb") as fh:
                yield from iter(lambda: fh.read(1 << 20), b"")

        _write_atomic(dest, chunks())
        imported.append(info.name)
    if refused:
        done = f"; imported {', '.join(imported)}" if imported else ""
        raise UserError(
            f"refused {len(refused)} file(s) from {src} whose checksum does not match the registry: "
            f"{'; '.join(refused)}{done}; get correct copies with `kacs data fetch`"
        )
    if not imported:
        expected = ", ".join(info.file for info in get_registry().values())
        raise UserError(f"no dataset files found in {src}; expected any of {expected}")
    return imported


# ----------------------------------------------------------------------------- fetching


def _format_value(value: float) -> str:
    # Shortest round-trip text, integers without a decimal point: the form of the registry CSVs.
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))


def _to_csv_bytes(data: np.ndarray, line_endings: str | None) -> bytes:
    eol = "\r\n" if line_endings == "CRLF" else "\n"
    return "".join(",".join(_format_value(v) for v in row) + eol for row in data.tolist()).encode("ascii")


def _require(module: str, what: str, info: DatasetInfo) -> None:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"converting dataset {info.name} needs the Python package {module} to read {what}; "
            f"install it (pip install {module}) and run `kacs data fetch {info.name}` again, "
            f"or import the CSV from a mirror with `kacs data import DIR`"
        ) from None


def _zip_member(payload: bytes, member: str, info: DatasetInfo) -> bytes:
    try:
        archive = zipfile.ZipFile(io.BytesIO(payload))
    except zipfile.BadZipFile:
        raise UserError(f"download of dataset {info.name} is not a zip archive; check the URL") from None
    with archive:
        names = [n for n in archive.namelist() if not n.startswith("__MACOSX/") and not n.endswith("/")]
        wanted = member.lower()
        hits = [n for n in names if n.rsplit("/", 1)[-1].lower() == wanted]
        if not hits:
            raise UserError(
                f"download of dataset {info.name}: no {member} in the archive "
                f"(it holds {', '.join(names) or 'nothing'}); the source changed, import the CSV instead"
            )
        return archive.read(hits[0])


def _numeric_tables(payload: bytes, info: DatasetInfo) -> list[np.ndarray]:
    """Candidate numeric tables of a download, before column selection (one per sheet)."""
    import pandas as pd

    spec = info.download or {}
    fmt = spec.get("format", "csv")
    if fmt != "zip":
        raise UserError(f"registry entry {info.name}: unknown download format {fmt!r}; use csv or zip")
    member = str(spec.get("member", ""))
    content = _zip_member(payload, member, info)
    reader = spec.get("reader", "whitespace")
    header = 0 if spec.get("header") else None
    if reader == "whitespace":
        frames = [pd.read_csv(io.BytesIO(content), sep=r"\s+", header=header, engine="python")]
    elif reader == "csv":
        # The python engine parses with float(), which is exact; the C engine's fast parser
        # has been one ulp off, and the rebuilt file must print every value exactly.
        frames = [pd.read_csv(io.BytesIO(content), sep=",", header=header, engine="python")]
    elif reader in ("xlsx", "xls"):
        engine = "openpyxl" if reader == "xlsx" else "xlrd"
        _require(engine, f".{reader} workbooks", info)
        sheet = spec.get("sheet", 0)
        book = pd.read_excel(
            io.BytesIO(content), sheet_name=None if sheet == "any" else sheet, header=header, engine=engine
        )
        frames = list(book.values()) if isinstance(book, dict) else [book]
    else:
        raise UserError(f"registry entry {info.name}: unknown reader {reader!r}; use whitespace, csv, xlsx or xls")

    tables = []
    for frame in frames:
        frame = frame.dropna(axis=0, how="all").dropna(axis=1, how="all")
        if "select" in spec:
            try:
                frame = frame.iloc[:, list(spec["select"])]
            except IndexError:
                continue
        try:
            data = frame.apply(pd.to_numeric, errors="raise").to_numpy(dtype=np.float64)
        except (ValueError, TypeError):
            continue
        if data.ndim == 2 and data.shape[1] == len(info.columns) and np.all(np.isfinite(data)):
            tables.append(data)
    if not tables:
        raise UserError(
            f"download of dataset {info.name}: {member} holds no all-numeric table of "
            f"{len(info.columns)} columns; the source changed, import the CSV instead"
        )
    return tables


def convert_download(info: DatasetInfo, payload: bytes) -> bytes:
    """The registry CSV bytes rebuilt from a downloaded payload (not yet checksum-verified)."""
    spec = info.download or {}
    if spec.get("format", "csv") == "csv":
        return payload
    candidates = [_to_csv_bytes(t, info.line_endings) for t in _numeric_tables(payload, info)]
    # Several candidates only for workbooks with one shuffled copy per sheet: keep the sheet
    # that reproduces the registry file.
    for candidate in candidates:
        if hashlib.sha256(candidate).hexdigest() == info.sha256:
            return candidate
    return candidates[0]


def _download_url(info: DatasetInfo, base_urls: dict | None) -> str:
    if base_urls and info.name in base_urls:
        return str(base_urls[info.name])
    url = (info.download or {}).get("url")
    if not url:
        raise UserError(f"dataset {info.name} has no download URL in the registry; import it with `kacs data import DIR`")
    base = os.environ.get(FETCH_BASE_URL_ENV)
    if base:
        return base.rstrip("/") + "/" + url.rstrip("/").rsplit("/", 1)[-1]
    return url


def _http_get(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "kacs-data-fetch"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        payload = response.read(MAX_DOWNLOAD_BYTES + 1)
    if len(payload) > MAX_DOWNLOAD_BYTES:
        raise UserError(f"download from {url} exceeds {MAX_DOWNLOAD_BYTES} bytes; check the URL")
    return payload


def fetch_datasets(
    names: Iterable[str] | None = None,
    data_dir: str | Path | None = None,
    base_urls: dict | None = None,
    force: bool = False,
    timeout: float = FETCH_TIMEOUT_S,
) -> list[str]:
    """Download registry datasets, rebuild their CSV form, verify the SHA-256 and store them.

    names: registry names (default all). base_urls: {name: URL} overriding the registry's
    download URL (else $KACS_FETCH_BASE_URL as a mirror, else the registry URL). A dataset
    already present with the right checksum is skipped unless force. Returns the names
    downloaded; any failure (network, missing reader package, checksum) is collected and
    reported as one UserError after the others were fetched.
    """
    registry = get_registry()
    if names is None:
        selected = list(registry.values())
    else:
        selected = []
        for name in names:
            key = str(name).strip().lower()
            if key not in registry:
                raise UserError(f"unknown dataset {name!r}; `kacs data fetch` knows {', '.join(registry)}")
            if registry[key] not in selected:
                selected.append(registry[key])
    dest_dir = resolve_data_dir(data_dir)
    fetched: list[str] = []
    failures: list[str] = []
    for info in selected:
        dest = dest_dir / info.file
        if not force and _status(info, dest) == STATUS_PRESENT:
            continue
        try:
            url = _download_url(info, base_urls)
            try:
                payload = _http_get(url, timeout)
            except urllib.error.HTTPError as exc:
                raise UserError(f"download from {url} failed (HTTP {exc.code} {exc.reason})") from None
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise UserError(f"download from {url} failed ({reason})") from None
            content = convert_download(info, payload)
            found = hashlib.sha256(content).hexdigest()
            if found != info.sha256:
                raise UserError(
                    f"the file built from {url} has SHA-256 {found}, the registry expects "
                    f"{info.sha256}; refused (the source changed or the download is damaged)"
                )
            _ensure_dir(dest_dir)
            _write_atomic(dest, [content])
            fetched.append(info.name)
        except UserError as exc:
            failures.append(f"{info.name}: {exc}")
    if failures:
        done = f" (fetched {', '.join(fetched)})" if fetched else ""
        raise UserError(
            f"could not fetch {len(failures)} dataset(s){done}: {' | '.join(failures)}; "
            f"without internet, copy the CSVs from a mirror and run `kacs data import DIR`"
        )
    return fetched
