"""The engine's numba cache is dropped when any engine source or the plain-numba switch's
setting changes (engine/cache.py), wherever numba keeps it."""

import hashlib
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from numba.core import config as numba_config
from numba.core.caching import UserProvidedCacheLocator

from kacs_cli.engine.cache import STAMP_NAME, drop_stale_cache, numba_cache_dir, sources_digest


def fake_engine(tmp_path):
    (tmp_path / "core.py").write_text("x = 1\n")
    (tmp_path / "kacs.py").write_text("y = 2\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("kacs.train_step-1.py311.nbi", "kacs.train_step-1.py311.1.nbc"):
        (cache / name).write_bytes(b"machine code")
    (cache / "core.cpython-311.pyc").write_bytes(b"bytecode")
    return cache


def cached(cache):
    return sorted(p.name for p in cache.iterdir() if p.suffix in (".nbi", ".nbc"))


def test_cache_without_stamp_is_dropped_and_stamped(tmp_path):
    cache = fake_engine(tmp_path)
    assert drop_stale_cache(tmp_path, cache_root="") is True
    assert cached(cache) == []
    assert (cache / "core.cpython-311.pyc").exists()
    assert (cache / STAMP_NAME).read_text() == sources_digest(tmp_path)


def test_cache_of_unchanged_sources_is_kept(tmp_path):
    cache = fake_engine(tmp_path)
    drop_stale_cache(tmp_path, cache_root="")
    (cache / "kacs.train_step-1.py311.nbi").write_bytes(b"fresh")
    assert drop_stale_cache(tmp_path, cache_root="") is False
    assert cached(cache) == ["kacs.train_step-1.py311.nbi"]


def test_edit_of_another_module_drops_every_cached_function(tmp_path):
    # kacs.train_step inlines core's functions; numba itself only checks kacs.py.
    cache = fake_engine(tmp_path)
    drop_stale_cache(tmp_path, cache_root="")
    (cache / "kacs.train_step-1.py311.nbi").write_bytes(b"compiled against x = 1")
    (tmp_path / "core.py").write_text("x = 3\n")
    assert drop_stale_cache(tmp_path, cache_root="") is True
    assert cached(cache) == []
    assert drop_stale_cache(tmp_path, cache_root="") is False


def test_each_setting_of_the_plain_switch_has_its_own_cache(tmp_path, monkeypatch):
    """KACS_PLAIN_NUMBA changes the machine code but no source: switching it drops the
    cache, as an edit does; "1" and "nrt" (its one kind) are the same setting."""
    cache = fake_engine(tmp_path)
    monkeypatch.delenv("KACS_PLAIN_NUMBA", raising=False)
    drop_stale_cache(tmp_path, cache_root="")
    (cache / "kacs.train_step-1.py311.nbi").write_bytes(b"compiled with every optimisation")
    monkeypatch.setenv("KACS_PLAIN_NUMBA", "nrt")
    assert drop_stale_cache(tmp_path, cache_root="") is True
    assert (cache / STAMP_NAME).read_text() == sources_digest(tmp_path) + " plain=nrt"
    monkeypatch.setenv("KACS_PLAIN_NUMBA", "1")
    drop_stale_cache(tmp_path, cache_root="")
    (cache / "kacs.train_step-1.py311.nbi").write_bytes(b"compiled plain")
    monkeypatch.setenv("KACS_PLAIN_NUMBA", "nrt")
    assert drop_stale_cache(tmp_path, cache_root="") is False
    assert cached(cache) == ["kacs.train_step-1.py311.nbi"]
    monkeypatch.delenv("KACS_PLAIN_NUMBA")
    assert drop_stale_cache(tmp_path, cache_root="") is True
    assert (cache / STAMP_NAME).read_text() == sources_digest(tmp_path)


def test_under_numba_cache_dir_the_stamp_sits_in_numbas_folder(tmp_path):
    """With NUMBA_CACHE_DIR numba keeps the engine's code in a folder of its own under it:
    the stamp goes there, so that each such folder keeps the code of its own setting, and
    the package's __pycache__ is left alone."""
    engine = tmp_path / "engine"
    engine.mkdir()
    in_tree = fake_engine(engine)
    root = tmp_path / "numba-cache"
    with numba_config_cache_dir(str(root)):
        locator = UserProvidedCacheLocator(fake_engine, str(engine / "kacs.py"))
        folder = Path(locator.get_cache_path())
    assert numba_cache_dir(engine, str(root)) == folder
    assert drop_stale_cache(engine, str(root)) is False  # nothing there yet to drop
    assert (folder / STAMP_NAME).read_text() == sources_digest(engine)
    assert cached(in_tree) == ["kacs.train_step-1.py311.1.nbc", "kacs.train_step-1.py311.nbi"]
    assert not (in_tree / STAMP_NAME).exists()


@contextmanager
def numba_config_cache_dir(value):
    saved = numba_config.CACHE_DIR
    numba_config.CACHE_DIR = value
    try:
        yield
    finally:
        numba_config.CACHE_DIR = saved


# Trains KACS (nu = 5, the deletion vote of the article, missing inputs) briefly and prints one
# sha256 over every population array, curve and prediction.
RUNS = """
import hashlib
import numpy as np
from kacs_cli.engine import Hyperparameters, Model

def walk(obj, digest):
    if isinstance(obj, tuple):
        for item in obj:
            walk(item, digest)
    else:
        digest.update(np.ascontiguousarray(obj).tobytes())

digest = hashlib.sha256()
rng = np.random.default_rng(0)
X = rng.random((300, 4))
y = np.sin(4 * X[:, 0]) + X[:, 3] ** 2
X[rng.random(X.shape) < 0.05] = np.nan
model = Model("kacs", 4, Hyperparameters(N=200, nu=5.0, article_deletion_vote=True))
walk(model.train(X[:200], y[:200], 3000, 1, X_test=X[200:], y_test=y[200:]), digest)
walk(tuple(model.pop), digest)
walk(model.predict(X[200:]), digest)
print(digest.hexdigest())
"""


def _runs_digest(tmp_path, plain):
    env = dict(os.environ)
    env.pop("KACS_PLAIN_NUMBA", None)
    if plain:
        # Its own cache folder: the checkout's cache keeps the default compilation, which the
        # default run reuses rather than compiling the engine cold once more.
        env["NUMBA_CACHE_DIR"] = str(tmp_path / f"numba-{plain}")
        env["KACS_PLAIN_NUMBA"] = plain
    done = subprocess.run([sys.executable, "-c", RUNS], capture_output=True, text=True, env=env,
                          timeout=3600)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_the_nrt_setting_computes_the_same_numbers(tmp_path):
    """KACS_PLAIN_NUMBA=nrt is another compilation of the same code: bit-identical runs.
    The plain setting compiles into a cache folder of its own, so the checkout's cache (the
    default's) is left alone. KACS alone is trained, at half the cost of compiling both
    learners cold: XCSF's own steps under the setting are not checked here."""
    default, plain = _runs_digest(tmp_path, ""), _runs_digest(tmp_path, "nrt")
    assert len(default) == 64 and default == plain
    assert default != hashlib.sha256().hexdigest()
