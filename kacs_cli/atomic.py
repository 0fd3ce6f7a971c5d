"""Temporary files for atomic writes that end up with the permissions of any other output.

tempfile.mkstemp creates its file with mode 0600 whatever the umask, because a temporary
file may hold secrets; once moved into place with os.replace that mode sticks, so a report or
a model written that way was unreadable to the group and others while every other file of the
project (and of any other tool) follows the umask (0644 under umask 022).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def current_umask() -> int:
    """The process umask, read without changing it where Linux allows."""
    try:
        # os.umask can only be read by setting it, which races with other threads creating files.
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def mkstemp(*, dir: str | Path, prefix: str, suffix: str) -> tuple[int, str]:
    """tempfile.mkstemp, then the mode a plain open() would have given (0666 minus the umask)."""
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=dir)
    if not hasattr(os, "fchmod"):  # Windows: no POSIX modes to fix
        return fd, path
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    return fd, path


@contextmanager
def replacing(path: str | Path, *, suffix: str = ".tmp") -> Iterator[Path]:
    """The one way the project writes a file: yield a temporary path beside `path` (same
    filesystem, so os.replace is atomic) for the caller to fill; on success it replaces
    `path`, on any exception it is removed. A reader, or a crash, never sees a half file."""
    path = Path(path)
    fd, tmp = mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: str | Path, data: bytes) -> None:
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | Path, text: str) -> None:
    """UTF-8 with LF line ends on every platform: committed results stay byte-identical."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")
