"""Keep numba's on-disk cache of the engines consistent with their sources.

numba checks only the source file of each cached function, but the engine's functions
inline code from its other modules: after an edit of ga.py, a cached kacs.train_step would
still run the old GA code, silently. So the cache is keyed on all engine sources together:
when any of them changes, every cached engine function is dropped and compiled afresh.
The same digest, taken over the engine and the baselines together, is the engine fingerprint
a results folder records (kacs_cli/experiments/campaign/provenance.py).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba.core import config as numba_config

from kacs_cli.errors import UserError

ENGINE_DIR = Path(__file__).resolve().parent
STAMP_NAME = "engine-sources.sha256"


def sources_digest(*source_dirs: Path) -> str:
    """sha256 over the name and bytes of every *.py file of the folders (default: the engine's),
    folder by folder, files by name."""
    digest = hashlib.sha256()
    for folder in source_dirs or (ENGINE_DIR,):
        for path in sorted(Path(folder).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


# The environment switch that compiles the engine without its hand optimisations, for timing
# what they buy in one sitting (hot.py says which): "1" drops every kind, a comma-separated
# list of PLAIN_KINDS the kinds it names; unset or empty, none (the default).
PLAIN_SWITCH = "KACS_PLAIN_NUMBA"
# numba's private flag `_nrt=False`.
PLAIN_KINDS = ("nrt",)


def plain_kinds() -> frozenset[str]:
    """The kinds of hand optimisation the switch drops (see PLAIN_SWITCH)."""
    value = os.environ.get(PLAIN_SWITCH, "").strip()
    if not value:
        return frozenset()
    if value == "1":
        return frozenset(PLAIN_KINDS)
    kinds = {kind.strip() for kind in value.split(",")}
    unknown = sorted(kinds - set(PLAIN_KINDS))
    if unknown:
        raise UserError(f"{PLAIN_SWITCH}={value}: unknown kind {', '.join(map(repr, unknown))}; set it to 1 "
                        f"(every kind) or to kinds among {', '.join(PLAIN_KINDS)} (comma-separated), "
                        f"or unset it")
    return frozenset(kinds)


def plain_label() -> str:
    """The switch's setting in one canonical word: "" (off) or the kinds it drops, sorted
    and comma-separated ("1" names them all); equal labels compile the same code."""
    return ",".join(sorted(plain_kinds()))


def numba_cache_dir(engine_dir: Path = ENGINE_DIR, cache_root: str | None = None) -> Path:
    """The folder numba keeps the engine's compiled code in: the engine's __pycache__, or,
    where NUMBA_CACHE_DIR (numba's `cache_root`) is set, numba's folder for the engine under
    it: the source folder's name and the sha1 of its absolute path
    (numba.core.caching.UserProvidedCacheLocator). So each cache folder has its own stamp,
    and one NUMBA_CACHE_DIR per setting of PLAIN_SWITCH keeps every setting's compilation."""
    root = numba_config.CACHE_DIR if cache_root is None else cache_root
    if not root:
        return Path(engine_dir) / "__pycache__"
    folder = os.path.abspath(engine_dir)
    return Path(root) / f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"


def drop_stale_cache(engine_dir: Path = ENGINE_DIR, cache_root: str | None = None) -> bool:
    """Delete the engine's cached machine code (`numba_cache_dir`) if the sources or the
    switch's setting changed since it was written.

    Returns whether anything was dropped. Where the package folder is read-only, numba keeps
    its cache elsewhere and the sources cannot have been edited in place: nothing to do.
    """
    cache_dir = numba_cache_dir(engine_dir, cache_root)
    stamp = cache_dir / STAMP_NAME
    # The plain-numba switch (hot.py) changes the compiled code but no source: the machine
    # code of one setting must not be loaded under another.
    plain = plain_label()
    digest = sources_digest(engine_dir) + (f" plain={plain}" if plain else "")
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        dropped = False
        for cached in cache_dir.glob("*.nb[ic]"):
            cached.unlink(missing_ok=True)
            dropped = True
        partial = cache_dir / f"{STAMP_NAME}.{os.getpid()}.tmp"
        partial.write_text(digest)
        os.replace(partial, stamp)
    except OSError:
        return False
    return dropped
