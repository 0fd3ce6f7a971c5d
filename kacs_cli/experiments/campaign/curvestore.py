"""The learning curves of an experiment folder: per-run files and one compact aggregate.

`kacs run` writes one curve file per run (curves/<cell>__<method>__<run>.csv, every engine
column at full precision). Those files are not committed (about 9 kB each), so a fresh
clone could not draw the learning and covering-rate figures. This module owns a compact
form that is committed instead: `curves.csv.gz` in the experiment folder, one row per
(run, evaluation point), only the columns the figures use, every value rounded to
SIGNIFICANT significant digits (far below what a figure can show), gzip with a zero time
stamp and no file name, so the same curves always give the same bytes.

The runner refreshes the aggregate at the end of every `kacs run` (`update_aggregate`);
the report reads curves through `load_curves`, which takes a run's per-run file when it
exists and its aggregate rows otherwise, and rounds both the same way: a report drawn from
the per-run files and one drawn on a fresh clone from the aggregate alone are identical. Where
the files lie in the folder is results.py's to say.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Collection, Iterable, Sequence

import numpy as np
import pandas as pd

from kacs_cli import atomic
from kacs_cli.experiments.campaign import results

KEY_COLUMNS = ("cell", "method", "run")
# What the report's figures draw: errors (MAE for the main protocol, MSE for the
# alternative), model size and the covering rates (docs/algorithm.md section 7).
VALUE_COLUMNS = (
    "iteration", "train_mae", "test_mae", "train_mse", "test_mse", "rules", "params",
    "cover_rate", "cover_rate_inner", "cover_rate_outer",
)
SIGNIFICANT = 6


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """VALUE_COLUMNS (absent ones as NaN) rounded to SIGNIFICANT digits through their text,
    the one representation both the writer and the readers end up with."""
    out = pd.DataFrame(index=range(len(frame)))
    for col in VALUE_COLUMNS:
        values = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float) if col in frame.columns \
            else np.full(len(frame), np.nan)
        out[col] = [float(f"{v:.{SIGNIFICANT}g}") for v in values.tolist()]
    out["iteration"] = out["iteration"].round()
    return out


def _read_run_file(path: Path) -> pd.DataFrame | None:
    try:
        frame = pd.read_csv(path)
    except (OSError, pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError):
        return None
    if "iteration" not in frame.columns or frame.empty:
        return None
    return _canonical(frame)


def read_aggregate(exp_dir: Path) -> dict[tuple[str, str, int], pd.DataFrame]:
    """{(cell, method, run): canonical frame} from curves.csv.gz; empty when absent or unreadable."""
    path = results.aggregate_path(exp_dir)
    if not path.is_file():
        return {}
    try:
        table = pd.read_csv(path, compression="gzip", dtype={"cell": str, "method": str})
    except (OSError, EOFError, gzip.BadGzipFile, pd.errors.EmptyDataError, pd.errors.ParserError,
            UnicodeDecodeError):
        return {}
    if any(c not in table.columns for c in (*KEY_COLUMNS, "iteration")):
        return {}
    out = {}
    for (cell, method, run), part in table.groupby(list(KEY_COLUMNS), sort=False):
        out[(str(cell), str(method).lower(), int(run))] = _canonical(part.reset_index(drop=True))
    return out


def collect(exp_dir: Path) -> dict[tuple[str, str, int], pd.DataFrame]:
    """Every run's curve: the per-run file where there is one, else the aggregate's rows."""
    exp_dir = Path(exp_dir)
    runs = read_aggregate(exp_dir)
    for path in results.curve_files(exp_dir):
        key = results.parse_run_key(path.stem)
        if key is None:
            continue
        frame = _read_run_file(path)
        if frame is not None:
            runs[key] = frame
    return runs


def load_curves(exp_dir: Path, runs: Collection[tuple[str, str, int]] | None = None
                ) -> dict[str, dict[str, list[pd.DataFrame]]]:
    """{cell: {method: [one frame per run, in run order]}}, each frame with a `run` column;
    only the runs (cell, method, run) of `runs` when given."""
    return group(collect(exp_dir), runs)


def group(curves: dict[tuple[str, str, int], pd.DataFrame], runs: Collection[tuple[str, str, int]] | None = None
          ) -> dict[str, dict[str, list[pd.DataFrame]]]:
    """`collect`'s curves as `load_curves` gives them."""
    grouped: dict[str, dict[str, list[pd.DataFrame]]] = {}
    for (cell, method, run), frame in sorted(curves.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        if runs is not None and (cell, method, run) not in runs:
            continue
        grouped.setdefault(cell, {}).setdefault(method, []).append(frame.assign(run=run))
    return grouped


def aggregate_bytes(curves: Sequence[tuple[tuple[str, str, int], pd.DataFrame]]) -> bytes:
    """The gzip bytes of the aggregate of these (key, canonical frame) pairs, in that order."""
    parts = []
    for (cell, method, run), frame in curves:
        part = frame[list(VALUE_COLUMNS)].copy()
        part.insert(0, "run", run)
        part.insert(0, "method", method)
        part.insert(0, "cell", cell)
        parts.append(part)
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*KEY_COLUMNS, *VALUE_COLUMNS])
    table["iteration"] = table["iteration"].astype("Int64")
    text = table.to_csv(index=False, float_format=f"%.{SIGNIFICANT}g", lineterminator="\n")
    buffer = io.BytesIO()
    # mtime=0 and no file name in the header: the bytes depend on the curves alone
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as fh:
        fh.write(text.encode("utf-8"))
    return buffer.getvalue()


def update_aggregate(exp_dir: Path, keys: Iterable[str]) -> Path | None:
    """Rewrite curves.csv.gz with the curves of the finished runs `keys` (task keys, in the
    order the rows should have), from per-run files or the previous aggregate. Runs with no
    curve anywhere are left out; nothing is written when no run has one. Returns the path
    when the file exists afterwards."""
    exp_dir = Path(exp_dir)
    available = collect(exp_dir)
    chosen = []
    for key in keys:
        parsed = results.parse_run_key(key)
        if parsed is not None and parsed in available:
            chosen.append((parsed, available[parsed]))
    path = results.aggregate_path(exp_dir)
    if not chosen:
        return path if path.is_file() else None
    data = aggregate_bytes(chosen)
    if path.is_file() and path.read_bytes() == data:
        return path
    atomic.write_bytes(path, data)
    return path
