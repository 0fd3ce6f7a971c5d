"""Saving and loading KACS/XCSF models: one portable file, no pickle.

File format "kacs-model", version 3 (reads 1, 2 and 3)
-------------------------------------------------------
A single ZIP archive (readable as a NumPy ``.npz``: ``np.load(path, allow_pickle=False)``;
the suggested suffix is ``.kacs``) holding:

``metadata.json``
    UTF-8 JSON object:

    - ``format``: ``"kacs-model"``; ``format_version``: ``3`` for a model with categorical
      inputs, else ``2`` for a model with an input transform other than min-max, else ``1``
      (each version is the next one without what that one added, so an older reader still
      reads every model it would predict correctly);
    - ``package_version``: the kacs version that wrote the file;
    - ``method``: a registered learner (engine/registry.py), e.g. ``"kacs"``; ``n``: number of inputs;
    - ``hyperparameters``: every field of `kacs_cli.engine.Hyperparameters`;
    - ``iterations_done``: training samples seen (the global iteration counter t);
    - ``n_rules``, ``n_micro``: macro-rules |P| and total numerosity;
    - ``arrays``: name -> {``shape``, ``dtype``} of every array entry (checked on load);
    - ``scaling``: ``null`` for a bare engine model, else ``{"x_min": [...], "x_max": [...],
      "y_min": float, "y_max": float}`` and, in version 2, ``"input_transform": {"name":
      "quantile", "quantiles": [[...]], "references": [...]}``: inputs map to [0, 1] by
      ``clip((x - x_min) / (x_max - x_min), 0, 1)`` (0.5 for a constant column), then through
      the input transform (``quantile``: each column's train quantiles, rows x n, mapped to
      the uniform references by linear interpolation, scikit-learn's QuantileTransformer;
      version 2 and 3), the target to [-1, 1] by ``2 (y - y_min) / (y_max - y_min) - 1``;
      in version 3, ``"categories": {"columns": [j, ...], "categories": [[c, ...], ...],
      "counts": [[k, ...], ...]}``: the categorical inputs (0-based), each one's categories
      (numbers or texts) in rank order and their train rows; category k of K of input j is
      placed at (k + 0.5) / K, a category not listed (and a missing cell) is a missing input,
      NaN (kacs_cli.scaling.CategoryMap), x_min 0 and x_max 1 for these inputs, and the input
      transform passes them through unchanged;
    - ``estimator``: ``null`` for a bare engine model, else ``{"class": "KACSRegressor" |
      "XCSFRegressor", "params": {...constructor arguments...}, "seed": int,
      "n_train_calls": int, "feature_names": [...] | null, "zhat_range": [[min, max], ...] |
      null}``.

``<name>.npy`` (NumPy ``.npy`` format, never object arrays)
    The population (docs/algorithm.md section 2), live rules only, one row per macro-rule in population
    order (the order matters: predictions sum over rules in this order):
    ``a, b, lo, hi`` (rules x D interval pairs and their resolved bounds; D = n for XCSF,
    1 for KACS), ``w, m, v`` (rules x K weights and Adam moments; K = n + 1 for XCSF, 2 for
    KACS), ``F, eps, kappa, ms, b1t, b2t`` (float64, rules; b1t/b2t are the running powers
    beta1^t_k, beta2^t_k of Adam's bias correction), ``exp, num, ts, sub`` (int64, rules;
    ``sub`` is the KACS submodel id: inner (q, p) -> q n + p, outer q -> n m + q (m outer
    channels: the hyperparameter ``channels``, 2n + 1 when it is absent or 0),
    0-based; 0 for XCSF), and the engine state ``scal`` (int64[8]: |P|, sum(num), t,
    covering/deletion counters, pending deaths) and ``fsum`` (float64[1], running sum of F).
    Any further rule field the engine declares (engine/population.py) is stored the same way
    under its own name; on load, a field the file lacks keeps its fresh value, a required one
    (the list above) missing makes the file corrupt.
    KACS's layout (engine/layout.py), which training reopens the population into: ``layout_state``
    (int64[2]: whether the closed layout holds, and its number of rules), ``layout_closed_base``
    (int64[S + 1], each submodel's first slot and the extent) and ``layout_closed_sizes``
    (int64[S], each submodel's rules). A file without them trains on from a fresh layout.
    With an adaptive budget, ``budget_state`` and ``budget_N`` (budget.py).

Floats are stored exactly (binary .npy; JSON floats are written with Python's round-trip
repr), so a loaded model predicts bit for bit what the saved one predicted, and training it
further continues exactly as the saved one would have.

Reading (`load_state`, `load_model`, `read_metadata`) refuses, with a `UserError` naming the
file, anything that is not such a file: a missing, empty, truncated or corrupt file, a text
file, a foreign ``.npz``/ZIP, another format name or version, or inconsistent arrays.

This module knows the file and the engine model only. The estimators of `kacs_cli.estimators`
export their state as the dict stored under ``scaling`` and ``estimator`` and restore
themselves from it (``_export_state``/``_restore_state``); `kacs_cli.load` reads either kind
of file.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

from kacs_cli import atomic
from kacs_cli.version import __version__
from kacs_cli.engine import Hyperparameters, Model, registry
from kacs_cli.engine.population import S_P, S_TOTAL, STATE_FIELDS, rule_fields
from kacs_cli.engine.layout import L_CLOSED_P, L_VALID
from kacs_cli.errors import UserError

FORMAT_NAME = "kacs-model"
FORMAT_VERSION = 4
# Version 2 added the input transform, version 3 the categorical inputs, version 4 the values
# learned at missing inputs (a reader of an earlier version would ignore them and predict wrong).
READABLE_VERSIONS = (1, 2, 3, 4)
METADATA_ENTRY = "metadata.json"

# What every format-1 file holds: the population's rule fields and state as they were when the
# format was fixed (the engine declares its fields in engine/population.py). Files are written
# and read by looping over that declaration, so a field added there later is saved too, and
# an older file without it loads with the field's fresh value.
REQUIRED_ARRAYS = ("a", "b", "lo", "hi", "w", "m", "v", "F", "eps", "kappa", "ms", "b1t", "b2t",
                   "exp", "num", "ts", "sub", *STATE_FIELDS)
# The model's values at missing inputs (Model.inner_missing), in files of version 4 on; NaN is a
# value there: an inner function without a learned one.
INNER_MISSING = "inner_missing"
# The fields of KACS's layout a file keeps (engine/layout.py's Layout).
LAYOUT_FIELDS = ("state", "closed_base", "closed_sizes")

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "corrupt", "load_model", "load_state",
           "read_metadata", "save"]


# ----------------------------------------------------------------------------- engine layout


def _population_arrays(model: Model) -> dict[str, np.ndarray]:
    """Every rule field (live rules only, one row per rule) and the saved state, by name."""
    P = model.n_rules
    out = {name: np.ascontiguousarray(arr[:P]) for name, arr in rule_fields(model.pop).items()}
    for name in STATE_FIELDS:
        out[name] = np.ascontiguousarray(getattr(model.pop, name))
    missing = [name for name in REQUIRED_ARRAYS if name not in out]
    if missing:  # pragma: no cover - guards against an engine change
        raise RuntimeError(f"engine population lacks {missing}; persistence needs updating")
    return out


# ----------------------------------------------------------------------------- saving


def _version_needed(model: Model, scaling: dict) -> int:
    """The oldest format version that holds everything the model and `scaling` say."""
    if not np.all(np.isnan(model.inner_missing)):
        return 4
    if scaling.get("categories"):
        return 3
    return 2 if scaling.get("input_transform") else 1


def save(obj, path) -> Path:
    """Write an engine `Model`, or an estimator's exported state, to `path` (one file).

    `obj` is either an engine `Model` (a bare-model file: ``scaling`` and ``estimator`` are
    null) or an object with ``_export_state() -> (Model, state)`` such as a fitted
    KACSRegressor/XCSFRegressor, where ``state`` is the dict ``{"scaling": {...},
    "estimator": {...}}`` of JSON values that becomes those two metadata entries as is. This
    module knows the engine model and the file; what the state means is the estimator's.

    The file is written to a temporary name beside `path` and renamed, so an interrupted save
    never leaves a half-written model under `path`. Returns the path.
    """
    path = Path(path).expanduser()
    if isinstance(obj, Model):
        model, state = obj, {"scaling": None, "estimator": None}
    elif callable(getattr(obj, "_export_state", None)):
        model, state = obj._export_state()
        if not isinstance(model, Model) or set(state) != {"scaling", "estimator"}:
            raise RuntimeError(f"{type(obj).__name__}._export_state must return (Model, "
                               f"{{'scaling': ..., 'estimator': ...}})")  # pragma: no cover
    else:
        raise UserError(
            f"cannot save a {type(obj).__name__}: give a KACSRegressor, XCSFRegressor or engine Model"
        )

    arrays = _population_arrays(model)
    version = _version_needed(model, state["scaling"] or {})
    if getattr(model, "layout", None) is not None:
        for name in LAYOUT_FIELDS:
            arrays[f"layout_{name}"] = np.ascontiguousarray(getattr(model.layout, name))
    if version >= 4:
        arrays[INNER_MISSING] = np.ascontiguousarray(model.inner_missing)
    if model.params.budget == "adaptive":
        arrays["budget_state"] = np.ascontiguousarray(model.budget_state)
        arrays["budget_N"] = np.array([model.budget_N], np.int64)
    meta = {
        "format": FORMAT_NAME,
        # A model an older reader predicts correctly keeps that reader's version.
        "format_version": version,
        "package_version": __version__,
        "method": model.method,
        "n": model.n,
        "hyperparameters": model.params.as_dict(),
        "iterations_done": model.iterations_done,
        "n_rules": model.n_rules,
        "n_micro": model.n_micro,
        "arrays": {k: {"shape": list(v.shape), "dtype": v.dtype.str} for k, v in arrays.items()},
        "scaling": state["scaling"],
        "estimator": state["estimator"],
    }
    text = json.dumps(meta, indent=2, allow_nan=False)

    # As every --out of the command line: a missing folder is created, a file in its way named.
    atomic.make_dirs(atomic.output_file(path, "save()", "model.kacs").parent)
    with atomic.replacing(path) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA_ENTRY, text)
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, arr, allow_pickle=False)
            zf.writestr(f"{name}.npy", buf.getvalue())
    return path


# ----------------------------------------------------------------------------- loading


def _open(path):
    """(path, metadata, arrays) of a kacs-model file, or a UserError naming the file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise UserError(f"model file not found: {path}")
    if path.is_dir():
        raise UserError(f"{path} is a directory, not a model file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    what = f"{path} is not a kacs model file"
    if not head:
        raise UserError(f"{what}: the file is empty")
    if head != b"PK\x03\x04":
        raise UserError(f"{what}: it is not a ZIP/npz archive (e.g. a text or CSV file?); "
                        f"write models with `kacs fit` or estimator.save()")
    try:
        with np.load(path, allow_pickle=False) as npz:
            entries = set(npz.files)
            if METADATA_ENTRY not in entries:
                raise UserError(f"{what}: the archive has no {METADATA_ENTRY} (a foreign .npz or ZIP file)")
            raw = npz[METADATA_ENTRY]
            try:
                meta = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else str(raw))
            except (UnicodeDecodeError, ValueError):
                raise UserError(f"{what}: its {METADATA_ENTRY} is not valid JSON") from None
            if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
                found = meta.get("format") if isinstance(meta, dict) else None
                raise UserError(f"{what}: format {found!r}, expected {FORMAT_NAME!r}")
            version = meta.get("format_version")
            if version not in READABLE_VERSIONS or isinstance(version, bool):
                newer = isinstance(version, int) and version > FORMAT_VERSION
                hint = ("; it was written by a newer kacs, upgrade to read it" if newer
                        else "")
                raise UserError(
                    f"{path}: kacs model format version {version!r} is not supported "
                    f"(this kacs reads versions {', '.join(map(str, READABLE_VERSIONS))}){hint}"
                )
            arrays = {}
            for name in REQUIRED_ARRAYS:
                if name not in entries:
                    raise UserError(f"{path}: corrupt kacs model file, array {name!r} is missing")
            for name in entries:
                if name != METADATA_ENTRY:
                    arrays[name] = npz[name]
    except UserError:
        raise
    except Exception as exc:  # zipfile.BadZipFile, EOFError, zlib.error, ValueError, ...
        raise UserError(
            f"{path}: truncated or corrupt kacs model file ({type(exc).__name__}: {exc}); "
            f"save the model again"
        ) from None
    return path, meta, arrays


def _restore_layout(path, model, arrays, P) -> None:
    """The closed layout of a KACS model's file, checked to fit its population and capacity
    (a slot beyond them would be written into)."""
    layout = model.layout
    got = {}
    for name in LAYOUT_FIELDS:
        arr, fresh = arrays.get(f"layout_{name}"), getattr(layout, name)
        if arr is None or arr.shape != fresh.shape or arr.dtype != fresh.dtype:
            raise corrupt(path, f"the layout's {name!r} is missing or has another shape or dtype")
        got[name] = arr
    state, base, sizes = got["state"], got["closed_base"], got["closed_sizes"]
    # Training reopens into the saved slots only where the layout was closed with as many
    # rules as the population holds (a compacted model's is not; it reopens into a fresh one).
    # Its extent must leave the room a fresh layout leaves for an iteration's births into full
    # segments (layout.relayout: three per submodel), which take the slots after it.
    reopened = state[L_VALID] == 1 and state[L_CLOSED_P] == P
    room = max(model.capacity - 3 * model.n_submodels, P)
    if state[L_VALID] not in (0, 1) or (reopened and (
            base[0] != 0 or np.any(sizes < 0) or np.any(np.diff(base) < sizes) or base[-1] > room)):
        raise corrupt(path, "the layout does not fit the population")
    for name, arr in got.items():
        getattr(layout, name)[...] = arr
    if not reopened:
        layout.state[L_VALID] = 0


def corrupt(path, why) -> UserError:
    """The error for a model file that opens but whose content does not add up."""
    return UserError(f"{path}: corrupt kacs model file, {why}")


def _build_model(path, meta, arrays) -> Model:
    method = meta.get("method")
    n = meta.get("n")
    if method not in registry.names():
        raise corrupt(path, f"unknown method {method!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise corrupt(path, f"bad number of inputs n = {n!r}")
    hp = meta.get("hyperparameters")
    if not isinstance(hp, dict):
        raise corrupt(path, "hyperparameters missing")
    unknown = sorted(set(hp) - set(Hyperparameters.names()))
    if unknown:
        raise corrupt(path, f"unknown hyperparameter {unknown[0]!r}")
    try:
        params = Hyperparameters(**hp)
    except (TypeError, ValueError) as exc:
        raise corrupt(path, str(exc)) from None
    model = Model(method, n, params)
    expected = _population_arrays(model)  # a fresh model: names, trailing shapes, dtypes
    scal = arrays.get("scal")
    n_scal = model.pop.scal.shape[0]
    if scal is None or scal.shape != (n_scal,) or scal.dtype != np.int64:
        raise corrupt(path, f"the engine state 'scal' must be {n_scal} int64 values")
    P = int(scal[S_P])
    if not 0 <= P <= model.capacity or P != meta.get("n_rules"):
        raise corrupt(path, f"{P} rules recorded, metadata says {meta.get('n_rules')!r}")
    rows = rule_fields(model.pop)
    for name, fresh in expected.items():
        if name not in arrays:
            if name in REQUIRED_ARRAYS:
                raise corrupt(path, f"array {name!r} is missing")
            continue  # an engine field newer than the file: keeps its fresh value
        arr = arrays[name]
        shape = (P,) + fresh.shape[1:] if name in rows else fresh.shape
        if arr.shape != shape or arr.dtype != fresh.dtype:
            raise corrupt(path, f"array {name!r} has shape {arr.shape} and dtype {arr.dtype}, "
                                 f"expected {shape} {fresh.dtype}")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise corrupt(path, f"array {name!r} holds non-finite values")
    budget_N = params.N
    if params.budget == "adaptive":
        state, reached = arrays.get("budget_state"), arrays.get("budget_N")
        fresh = model.budget_state
        if (state is None or reached is None or state.shape != fresh.shape or state.dtype != fresh.dtype
                or reached.shape != (1,) or reached.dtype != np.int64
                or not params.N <= int(reached[0]) <= params.N_max):
            raise corrupt(path, "the adaptive budget's state is missing or out of range")
        budget_N = int(reached[0])
        fresh[...] = state
        model.pop.budget[0] = budget_N
    held = arrays.get(INNER_MISSING)
    if held is not None:
        if held.shape != model.inner_missing.shape or held.dtype != np.float64 or np.any(np.isinf(held)):
            raise corrupt(path, f"the values at missing inputs must be {model.n_submodels} finite or NaN floats")
        model.inner_missing[...] = held
    if getattr(model, "layout", None) is not None and any(f"layout_{name}" in arrays for name in LAYOUT_FIELDS):
        _restore_layout(path, model, arrays, P)
    num = arrays["num"]
    if np.any(num < 1) or int(num.sum()) != int(scal[S_TOTAL]) or int(scal[S_TOTAL]) > budget_N:
        raise corrupt(path, "rule numerosities do not add up")
    n_sub = model.n_submodels
    if P and (arrays["sub"].min() < 0 or arrays["sub"].max() >= n_sub):
        raise corrupt(path, "submodel ids out of range")
    for name in expected:
        if name not in arrays:
            continue
        if name in rows:
            rows[name][:P] = arrays[name]
        else:
            getattr(model.pop, name)[...] = arrays[name]
    return model


def read_metadata(path) -> dict:
    """The metadata.json of a kacs model file (checked like `load`)."""
    _, meta, _ = _open(path)
    return meta


def load_model(path) -> Model:
    """The engine `Model` stored in a model file (either kind: estimator or bare model)."""
    path, meta, arrays = _open(path)
    return _build_model(path, meta, arrays)


def load_state(path) -> tuple[Model, dict | None]:
    """The engine `Model` of a model file and the estimator state saved with it.

    The state is the dict ``{"scaling": ..., "estimator": ...}`` that the estimator's
    ``_export_state`` gave to `save` (JSON values; the estimator checks them in
    ``_restore_state``), or None for a bare engine model. `kacs_cli.load` turns the pair
    back into a fitted estimator.
    """
    path, meta, arrays = _open(path)
    model = _build_model(path, meta, arrays)
    if meta.get("estimator") is None:
        return model, None
    return model, {"scaling": meta.get("scaling"), "estimator": meta.get("estimator")}
