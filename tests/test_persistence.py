"""Model files: exact round trips, and refusal of anything that is not a kacs-model v1 file."""

import copy
import inspect
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.estimators import persistence
from kacs_cli.engine import Hyperparameters, Model
from kacs_cli.engine.params import ARTICLE_SWITCHES, CODE_SWITCHES
from kacs_cli.errors import UserError

FIXTURES = Path(__file__).parent / "fixtures"

def target(X):
    return np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2.0, 3.0, (600, 3))
    Xh = rng.uniform(-2.5, 3.5, (300, 3))  # partly outside the train range: clipping applies
    return X, target(X), Xh


@pytest.fixture(scope="module")
def fitted(data):
    X, y, _ = data
    return {
        "kacs": KACSRegressor(n_iter=3000, random_state=4, N=1500).fit(X, y),
        "xcsf": XCSFRegressor(n_iter=3000, random_state=4, P_hash=0.3).fit(X, y),
    }


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_round_trip_is_exact(method, fitted, data, tmp_path):
    X, y, Xh = data
    est = fitted[method]
    path = tmp_path / "model.kacs"
    assert est.save(path) == path
    cls = type(est)
    loaded = cls.load(path)
    assert type(loaded) is cls
    np.testing.assert_array_equal(loaded.predict(Xh), est.predict(Xh))
    assert loaded.get_params() == est.get_params()
    assert (loaded.n_rules_, loaded.n_micro_, loaded.n_params_, loaded.iterations_done_) == (
        est.n_rules_, est.n_micro_, est.n_params_, est.iterations_done_)
    assert loaded.rules_.equals(est.rules_)
    np.testing.assert_array_equal(loaded.x_min_, est.x_min_)
    assert (loaded.y_min_, loaded.y_max_) == (est.y_min_, est.y_max_)
    if method == "kacs":
        np.testing.assert_array_equal(loaded.zhat_range_, est.zhat_range_)
        assert loaded.submodel_table_.equals(est.submodel_table_)
        for a, b in zip(loaded.predict_components(Xh), est.predict_components(Xh)):
            np.testing.assert_array_equal(a, b)
    # kacs_cli.load gives the same; further learning continues exactly alike
    again = load(path)
    np.testing.assert_array_equal(again.predict(Xh), est.predict(Xh))
    # The fitted estimator itself trains on as its file does (a copy leaves the fixture as it is).
    original = copy.deepcopy(est)
    original.partial_fit(X[:300], y[:300])
    again.partial_fit(X[:300], y[:300])
    np.testing.assert_array_equal(again.predict(Xh), original.predict(Xh))
    assert again.iterations_done_ == est.iterations_done_ + 300


def test_bare_engine_model_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 2))
    y = np.clip(X[:, 0] - X[:, 1], -1, 1)
    model = Model("kacs", 2, Hyperparameters(N=500))
    model.train(X, y, 1000, seed=3)
    path = persistence.save(model, tmp_path / "bare.kacs")
    loaded = load(path)
    assert isinstance(loaded, Model)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.params == model.params and loaded.iterations_done == 1000
    with pytest.raises(UserError, match="bare engine model"):
        KACSRegressor.load(path)


@pytest.mark.parametrize("name", ["kacs_v1.kacs", "xcsf_v1.kacs"])
def test_files_written_before_the_estimators_exported_their_state_still_load(name, tmp_path):
    # Files of the first model format, in which persistence set the estimators' attributes
    # itself (tests/fixtures/models_v1.json: the query rows and what the saved estimators
    # predicted).
    spec = json.loads((FIXTURES / "models_v1.json").read_text())
    est = load(FIXTURES / name)
    X = np.array(spec["X"])
    if getattr(est, "feature_names_in_", None) is not None:
        import pandas as pd

        X = pd.DataFrame(X, columns=list(est.feature_names_in_))
    expected = np.array([float(v) for v in spec["predictions"][name]])
    np.testing.assert_array_equal(est.predict(X), expected)
    # Saved again, the estimator's part of the file and every array are as the first format wrote them.
    est.save(tmp_path / name)
    with zipfile.ZipFile(FIXTURES / name) as old, zipfile.ZipFile(tmp_path / name) as new:
        old_meta, new_meta = (json.loads(z.read("metadata.json")) for z in (old, new))
        for key in ("scaling", "method", "n", "hyperparameters", "iterations_done", "n_rules",
                    "n_micro"):
            assert new_meta[key] == old_meta[key], key
        # The estimator's constructor arguments added since (the input transform, the
        # refinement, the compaction, the budget in passes, the outer channels, the capacity search, bagging,
        # the switches between the article's prose and the authors' code, the categorical
        # inputs) are saved at their defaults beside the old ones.
        # The old file recorded every declared hyperparameter; an estimator now records those
        # its learner acts on (XCSF: not KACS's adaptive budget, which it has no use for).
        new_params = new_meta["estimator"].pop("params")
        old_params = old_meta["estimator"].pop("params")
        assert new_meta["estimator"] == old_meta["estimator"]
        taken = set(inspect.signature(type(est)).parameters)
        assert {k: new_params[k] for k in old_params if k in taken} == {
            k: v for k, v in old_params.items() if k in taken}
        assert set(old_params) - taken == (set() if name == "kacs_v1.kacs" else
                                           {"budget", "N_max", "budget_window", "budget_cover_rate",
                                            "budget_growth"})
        added = {"input_transform": "minmax", "refinement": False, "refine_max_iter": 300,
                 "refine_pull": 1e-5, "refine_validation": 0.0, "compaction": "none", "compact_rules": 0.1,
                 "compact_tolerance": 0.0, "channels": 0, "capacity": "fixed", "capacity_max": 51200,
                 "capacity_validation": 0.2, "capacity_folds": 1, "capacity_channels": "given",
                 "capacity_min": 0, "n_passes": None, "bags": 1, "n_jobs": None, "refine_smoothness": 0.0,
                 "smoothness": "fixed", "missing_value": "centre", "categorical_features": None,
                 **{name: False for name in (*ARTICLE_SWITCHES, *CODE_SWITCHES)}}
        assert {k: v for k, v in new_params.items() if k not in old_params} == {
            k: v for k, v in added.items() if k in taken}
        for entry in old.namelist():
            if entry != "metadata.json":
                assert new.read(entry) == old.read(entry), entry


@pytest.mark.parametrize("method", ["kacs", "xcsf"])
def test_estimators_export_and_restore_their_own_state(method, fitted, data):
    est = fitted[method]
    model, state = est._export_state()
    assert model is est.model_ and set(state) == {"scaling", "estimator"}
    assert json.loads(json.dumps(state, allow_nan=False)) == state  # JSON values only
    cls = type(est)
    twin = cls(**state["estimator"]["params"])
    twin._restore_state(model, state)
    np.testing.assert_array_equal(twin.predict(data[2]), est.predict(data[2]))
    assert twin._export_state()[1] == state
    with pytest.raises(ValueError, match="scaling"):
        cls()._restore_state(model, {"scaling": {"x_min": [0.0]}, "estimator": state["estimator"]})
    other = XCSFRegressor if cls is KACSRegressor else KACSRegressor
    with pytest.raises(ValueError, match="cannot be a"):
        other()._restore_state(model, state)


def test_file_layout_is_documented_npz(fitted, tmp_path):
    path = fitted["kacs"].save(tmp_path / "m.kacs")
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        meta = json.loads(zf.read("metadata.json"))
    assert {"metadata.json", "a.npy", "w.npy", "F.npy", "num.npy", "sub.npy", "scal.npy", "fsum.npy",
            "layout_state.npy", "layout_closed_base.npy", "layout_closed_sizes.npy"} <= names
    assert meta["format"] == "kacs-model" and meta["format_version"] == 1
    assert meta["method"] == "kacs" and meta["n"] == 3
    assert meta["hyperparameters"] == Hyperparameters(N=1500).as_dict()
    assert meta["iterations_done"] == 3000 and meta["n_rules"] == fitted["kacs"].n_rules_
    assert set(meta["scaling"]) == {"x_min", "x_max", "y_min", "y_max"}
    from kacs_cli import __version__

    assert meta["package_version"] == __version__
    with np.load(path, allow_pickle=False) as npz:  # no pickled content anywhere
        for name in npz.files:
            if name != "metadata.json":
                arr = npz[name]
                assert arr.dtype != object
                if name not in ("scal", "fsum") and not name.startswith("layout_"):
                    assert arr.shape[0] == fitted["kacs"].n_rules_  # live rules only


def test_class_mismatch_and_unfitted(fitted, tmp_path):
    path = fitted["xcsf"].save(tmp_path / "x.kacs")
    with pytest.raises(UserError, match="XCSFRegressor"):
        KACSRegressor.load(path)
    with pytest.raises(UserError, match="unfitted"):
        KACSRegressor().save(tmp_path / "u.kacs")


def _rewrite(src, dst, edit_meta):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            payload = zin.read(item)
            if item == "metadata.json":
                meta = json.loads(payload)
                edit_meta(meta)
                payload = json.dumps(meta).encode()
            zout.writestr(item, payload)


def test_refuses_foreign_and_broken_files(fitted, tmp_path):
    good = fitted["kacs"].save(tmp_path / "good.kacs")
    raw = good.read_bytes()

    truncated = tmp_path / "truncated.kacs"
    truncated.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(UserError, match="truncated or corrupt") as exc:
        load(truncated)
    assert str(truncated) in str(exc.value)

    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, a=np.arange(3), w=np.ones((2, 2)))
    with pytest.raises(UserError, match="no metadata.json") as exc:
        load(foreign)
    assert str(foreign) in str(exc.value)

    text = tmp_path / "data.csv"
    text.write_text("1,2,3\n4,5,6\n")
    with pytest.raises(UserError, match="not a ZIP") as exc:
        KACSRegressor.load(text)
    assert str(text) in str(exc.value)

    newer = tmp_path / "v5.kacs"
    _rewrite(good, newer, lambda m: m.update(format_version=5))
    with pytest.raises(UserError, match="version 5 is not supported") as exc:
        load(newer)
    assert str(newer) in str(exc.value) and "newer kacs" in str(exc.value)

    other = tmp_path / "other.kacs"
    _rewrite(good, other, lambda m: m.update(format="something-else"))
    with pytest.raises(UserError, match="format 'something-else'"):
        load(other)

    bad_scaling = tmp_path / "bad_scaling.kacs"
    _rewrite(good, bad_scaling, lambda m: m["scaling"].update(x_min=[0.0]))
    with pytest.raises(UserError, match="corrupt") as exc:
        load(bad_scaling)
    assert str(bad_scaling) in str(exc.value) and "scaling" in str(exc.value)

    inconsistent = tmp_path / "inconsistent.kacs"
    _rewrite(good, inconsistent, lambda m: m.update(n=4))
    with pytest.raises(UserError, match="corrupt"):
        load(inconsistent)

    empty = tmp_path / "empty.kacs"
    empty.write_bytes(b"")
    with pytest.raises(UserError, match="empty"):
        load(empty)
    with pytest.raises(UserError, match="not found"):
        load(tmp_path / "missing.kacs")
    # none of these left a file behind or touched the good one
    assert KACSRegressor.load(good).n_rules_ == fitted["kacs"].n_rules_


def _with_entries(source, target, change):
    """A copy of model file `source` at `target` whose entries (name -> bytes) `change` edits."""
    with zipfile.ZipFile(source) as zf:
        entries = {name: zf.read(name) for name in zf.namelist()}
    change(entries)
    with zipfile.ZipFile(target, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return target


def test_a_layout_that_does_not_fit_the_population_is_refused(fitted, data, tmp_path):
    """KACS's layout (the slots training reopens the population into) is checked on load: the
    slots after its extent are written into. Without it, a model trains on from a fresh
    layout."""
    X, y, Xh = data
    good = fitted["kacs"].save(tmp_path / "good.kacs")

    capacity = fitted["kacs"].model_.capacity

    def beyond_capacity(entries):
        # Within the arrays, but without the room an iteration's births into full segments
        # take after the extent.
        base = np.load(io.BytesIO(entries["layout_closed_base.npy"]))
        base[-1] = capacity
        out = io.BytesIO()
        np.save(out, base)
        entries["layout_closed_base.npy"] = out.getvalue()

    bad = _with_entries(good, tmp_path / "bad.kacs", beyond_capacity)
    with pytest.raises(UserError, match=r"corrupt kacs model file, the layout does not fit the population$"):
        load(bad)
    bare = _with_entries(good, tmp_path / "bare.kacs",
                         lambda e: [e.pop(n) for n in list(e) if n.startswith("layout_")])
    model = load(bare)
    np.testing.assert_array_equal(model.predict(Xh), fitted["kacs"].predict(Xh))
    fresh = copy.deepcopy(fitted["kacs"])
    fresh.model_.layout.state[0] = 0  # its saved slots forgotten: it reopens into a fresh layout
    model.partial_fit(X[:100], y[:100])
    fresh.partial_fit(X[:100], y[:100])
    np.testing.assert_array_equal(model.predict(Xh), fresh.predict(Xh))
    # Part of a layout is no layout.
    partial = _with_entries(good, tmp_path / "partial.kacs", lambda e: e.pop("layout_state.npy"))
    with pytest.raises(UserError, match="the layout's 'state' is missing"):
        load(partial)


def test_save_writes_atomically(fitted, tmp_path, monkeypatch):
    path = tmp_path / "m.kacs"
    fitted["xcsf"].save(path)
    before = path.read_bytes()

    # A crash halfway through writing the archive (disk full after the metadata and a few
    # arrays): the previous file stays whole under `path`, and no temporary file is left.
    writestr = zipfile.ZipFile.writestr
    calls = []

    def crash_halfway(self, name, data, *args, **kwargs):
        calls.append(name)
        if len(calls) == 6:
            raise OSError(28, "No space left on device")
        return writestr(self, name, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", crash_halfway)
    with pytest.raises(OSError, match="(?i)no space left"):
        fitted["kacs"].save(path)
    monkeypatch.undo()
    assert len(calls) == 6  # the crash came mid-archive, not before the writing started
    assert path.read_bytes() == before
    assert type(load(path)) is XCSFRegressor
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.kacs"]

    fitted["kacs"].save(path)  # overwrite in place
    assert isinstance(load(path), KACSRegressor)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.kacs"]
    # A missing folder is created, as by every --out of the command line.
    fitted["kacs"].save(tmp_path / "no" / "such" / "m.kacs")
    assert isinstance(load(tmp_path / "no" / "such" / "m.kacs"), KACSRegressor)
    with pytest.raises(UserError, match="is a folder, where a file is expected"):
        fitted["kacs"].save(tmp_path / "no")
