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


# The environment switch that compiles the engine without the private numba flag, the
# hand-written intrinsics and the duplicated specialisations (hot.py lists them), for a
# timing with and without them in one sitting; "1" turns it on.
PLAIN_SWITCH = "KACS_PLAIN_NUMBA"


def plain_numba() -> bool:
    return os.environ.get(PLAIN_SWITCH, "") == "1"


def drop_stale_cache(engine_dir: Path = ENGINE_DIR) -> bool:
    """Delete the engine's cached machine code if the sources changed since it was written.

    Returns whether anything was dropped. Where the package folder is read-only, numba keeps
    its cache elsewhere and the sources cannot have been edited in place: nothing to do.
    """
    cache_dir = engine_dir / "__pycache__"
    stamp = cache_dir / STAMP_NAME
    # The plain-numba switch (hot.py) changes the compiled code but no source: the machine
    # code of one setting must not be loaded under the other.
    digest = sources_digest(engine_dir) + (" plain" if plain_numba() else "")
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        cache_dir.mkdir(exist_ok=True)
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
