"""The dataset registry and the data directory: which datasets exist, where their files live.

The datasets of the article (docs/algorithm.md section 8), and a suite of further real
regression datasets built from copies bundled in Python packages, are described in
kacs_cli/experiments/data/registry.yaml (committed, read on first use); the CSV files live in
a data directory (never committed) and are pinned by SHA-256, so every machine trains on
byte-identical data.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kacs_cli.errors import UserError
from kacs_cli.experiments.data import PACKAGE_DATA

PROJECT_DIR = Path(__file__).resolve().parents[3]
REGISTRY_PATH = PACKAGE_DATA / "registry.yaml"
# A checkout's datasets/ folder; an installed package has none, and uses ./datasets instead.
IN_CHECKOUT = (PROJECT_DIR / "pyproject.toml").is_file()
DEFAULT_DATA_DIR = PROJECT_DIR / "datasets" if IN_CHECKOUT else Path("datasets")
DATA_DIR_ENV = "KACS_DATA_DIR"

KINDS = ("real", "published")
# The article's ten datasets (fetched from the web) and the suite beyond the article (built
# from Python packages, the `suite` extra). `kacs data fetch` and `verify` without names act on
# the article's group; a group's name stands for all of its datasets.
GROUPS = ("article", "suite")
# The benchmarks of the article's main table, in its order: the four synthetic functions,
# then the real-world datasets (docs/algorithm.md section 10). The one list of them: the
# report's order and the documents' tables read it.
MAIN_TABLE = ("f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec")


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
    group: str = "article"
    build: dict | None = field(default=None, compare=False)  # how a bundled copy becomes the CSV
    # The unordered (nominal) inputs: each a build's `one_hot` group, (its column, its levels
    # with the reference first), stored in the file as one 0/1 column per level after the first.
    nominal: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def indicators(self, column: str) -> tuple[int, ...]:
        """The 0-based input columns of the file holding nominal input `column`'s indicators,
        one per level after the reference, in the order of its levels."""
        levels = dict(self.nominal)[column]
        return tuple(self.columns.index(f"{column}={level}") for level in levels[1:])

    @property
    def categorical(self) -> tuple[str, ...]:
        """The inputs whose values name categories without an order: the nominal inputs. A
        build's `codes` columns are binary or ordered labels, numbers in their order."""
        return tuple(column for column, _ in self.nominal)

    @property
    def merged_columns(self) -> list[str]:
        """The column names of the file with each nominal input's indicators merged into one
        column of level codes (docs/datasets.md), at its first indicator's place; target last."""
        first = {self.indicators(column)[0]: column for column in self.categorical}
        dropped = {j for column in self.categorical for j in self.indicators(column)[1:]}
        return [first.get(j, name) for j, name in enumerate(self.columns) if j not in dropped]

    @property
    def categorical_columns(self) -> tuple[int, ...]:
        """The 0-based input columns of `categorical` once merged (`merged_columns`)."""
        merged = self.merged_columns
        return tuple(merged.index(name) for name in self.categorical)


# ----------------------------------------------------------------------------- registry


def load_registry(path: str | Path = REGISTRY_PATH) -> dict[str, DatasetInfo]:
    """Parse and validate a registry YAML file (kacs_cli/experiments/data/registry.yaml by default)."""
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
            group=str(entry.get("group", "article")),
            build=entry.get("build"),
            nominal=nominal_inputs(entry.get("build")),
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
        if info.name in GROUPS:
            raise UserError(f"{where}: a dataset cannot be named like a group ({', '.join(GROUPS)}); rename it")
        if info.group not in GROUPS:
            raise UserError(f"{where}: group {info.group!r} must be one of {', '.join(GROUPS)}")
        strays = [f"{column}={level}" for column, levels in info.nominal for level in levels[1:]
                  if f"{column}={level}" not in info.columns[:-1]]
        if strays:
            raise UserError(f"{where}: the build's one_hot makes the column {strays[0]!r}, which is not one of its "
                            f"input columns; list it in columns")
        if info.download is not None and info.build is not None:
            raise UserError(f"{where}: give download (from the web) or build (from a Python package), not both")
        registry[info.name] = info
    return registry


def nominal_inputs(build: dict | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The inputs a build spec expands to 0/1 indicator columns (`{column, one_hot: [levels]}`,
    kacs_cli/experiments/data/packaged.py), with their levels: the dataset's unordered
    categorical inputs. Labels turned into codes (`codes`) are binary or ordered: numbers."""
    items = (build or {}).get("inputs") or []
    return tuple((str(item["column"]), tuple(str(level) for level in item["one_hot"]))
                 for item in items if isinstance(item, dict) and "one_hot" in item)


_REGISTRY: dict[str, DatasetInfo] | None = None


def get_registry() -> dict[str, DatasetInfo]:
    """The project registry, read once on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = load_registry()
    return _REGISTRY


def group_members(group: str) -> list[str]:
    """The registry names of one group, in registry order."""
    return [info.name for info in get_registry().values() if info.group == group]


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


def data_dir_origin(data_dir: str | Path | None) -> str:
    """Where `resolve_data_dir` took the folder from, for messages."""
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
