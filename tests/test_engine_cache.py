"""The engine's numba cache is dropped when any engine source or the plain-numba switch's
setting changes (engine/cache.py), wherever numba keeps it."""

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

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


# Every compiled function of the engine and its compilation options, as a process with the
# switch set by its environment imports them (importing compiles nothing).
OPTIONS = """
import importlib, json, pkgutil
import kacs_cli.engine as engine
from numba.core.registry import CPUDispatcher

options = {}
for info in pkgutil.iter_modules(engine.__path__):
    module = importlib.import_module(f"kacs_cli.engine.{info.name}")
    for name, obj in vars(module).items():
        if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__:
            options[f"{info.name}.{name}"] = {k: repr(v) for k, v in obj.targetoptions.items()}
print(json.dumps(options))
"""


def _engine_options(plain: str, cache: Path) -> dict[str, dict[str, str]]:
    env = dict(os.environ)
    env.pop("KACS_PLAIN_NUMBA", None)
    # Importing the engine under another setting drops the cache it finds (cache.py): a cache
    # folder of its own leaves the checkout's compiled engines to the rest of the suite.
    env["NUMBA_CACHE_DIR"] = str(cache)
    if plain:
        env["KACS_PLAIN_NUMBA"] = plain
    done = subprocess.run([sys.executable, "-c", OPTIONS], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_nrt_setting_compiles_the_same_functions_without_the_private_flag_alone(tmp_path):
    """KACS_PLAIN_NUMBA=nrt is another compilation of the same code: every engine function
    keeps its options but `_nrt=False`, which the setting drops. That flag decides whether
    compiled code may allocate and counts references, not how it computes, so the numbers stay
    the same (the engine's functions on the training path allocate nothing). Compiling the
    engine a second time to compare its numbers would cost about two minutes of the suite."""
    cache = tmp_path / "numba"
    default, plain = _engine_options("", cache), _engine_options("nrt", cache)
    assert default.keys() == plain.keys() and len(default) > 50
    flagged = {name for name, opts in default.items() if opts.get("_nrt") == "False"}
    assert {"kacs.train_step", "xcsf.train_step", "kacs_update.update_sets"} <= flagged
    for name, opts in default.items():
        expected = {k: v for k, v in opts.items() if k != "_nrt"}
        assert plain[name] == expected, name
    assert _engine_options("1", cache) == plain
