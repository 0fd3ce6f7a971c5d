"""The engine's numba cache is dropped when any engine source changes (engine/cache.py)."""

from kacs_cli.engine.cache import STAMP_NAME, drop_stale_cache, sources_digest


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
    assert drop_stale_cache(tmp_path) is True
    assert cached(cache) == []
    assert (cache / "core.cpython-311.pyc").exists()
    assert (cache / STAMP_NAME).read_text() == sources_digest(tmp_path)


def test_cache_of_unchanged_sources_is_kept(tmp_path):
    cache = fake_engine(tmp_path)
    drop_stale_cache(tmp_path)
    (cache / "kacs.train_step-1.py311.nbi").write_bytes(b"fresh")
    assert drop_stale_cache(tmp_path) is False
    assert cached(cache) == ["kacs.train_step-1.py311.nbi"]


def test_edit_of_another_module_drops_every_cached_function(tmp_path):
    # kacs.train_step inlines core's functions; numba itself only checks kacs.py.
    cache = fake_engine(tmp_path)
    drop_stale_cache(tmp_path)
    (cache / "kacs.train_step-1.py311.nbi").write_bytes(b"compiled against x = 1")
    (tmp_path / "core.py").write_text("x = 3\n")
    assert drop_stale_cache(tmp_path) is True
    assert cached(cache) == []
    assert drop_stale_cache(tmp_path) is False
