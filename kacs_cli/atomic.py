"""Atomic writes: temporary files that end up with the permissions of any other output, and
write failures that name the file they were writing.

tempfile.mkstemp creates its file with mode 0600 whatever the umask, because a temporary
file may hold secrets; once moved into place with os.replace that mode sticks, so a report or
a model written that way would be unreadable to the group and others while every other file of the
project (and of any other tool) follows the umask (0644 under umask 022).
"""

from __future__ import annotations

import errno
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kacs_cli.errors import UserError


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


class WriteFailed(OSError):
    """A file (or folder) of the project's output could not be written: `filename` is the file
    meant, not the temporary one beside it, and `reason` says why in a few plain words.

    Still an OSError (with the original errno), so that code catching OSError keeps working;
    the command line prints it as one line and exits with code 2 (kacs_cli.cli.main).
    """

    def __init__(self, path: str | Path, cause: OSError):
        super().__init__(cause.errno, cause.strerror or str(cause), str(path))
        self.reason = _reason(Path(path), cause)

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.reason}"


def _reason(path: Path, cause: OSError) -> str:
    if cause.errno == errno.ENOENT:
        # Raised by mkstemp or os.replace when the folder is gone (deleted, unmounted).
        if not path.parent.is_dir():
            return f"its folder {path.parent} no longer exists"
    if cause.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if cause.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return "no space left on the device (disk or quota full)"
    if cause.errno == errno.EROFS:
        return "the file system is read-only"
    return cause.strerror or str(cause) or type(cause).__name__


def failed(path: str | Path, cause: OSError) -> WriteFailed:
    """`cause` as a WriteFailed about `path` (unchanged when it already is one)."""
    return cause if isinstance(cause, WriteFailed) else WriteFailed(path, cause)


def _file_in_the_way(folder: Path) -> Path | None:
    """`folder` or the nearest of its parents that exists as something other than a folder."""
    for candidate in (folder, *folder.parents):
        if candidate.exists() or candidate.is_symlink():
            return None if candidate.is_dir() else candidate
    return None


def output_folder(path: str | Path, option: str = "--out", *, given: Path | None = None) -> Path:
    """`path` as an output folder (created later if missing), or the one message every
    command gives when a file stands where the folder should be (`given`: the path the user
    typed, when `path` is its folder)."""
    path = Path(path).expanduser()
    given = path if given is None else given
    blocker = _file_in_the_way(path)
    if blocker is not None:
        where = f"{option} {given}" if blocker == given else f"{option} {given}: {blocker}"
        raise UserError(f"{where} is a file, where a folder is expected; choose another {option}")
    return path


def output_file(path: str | Path, option: str = "--out", example: str = "out.txt") -> Path:
    """`path` as an output file (its folder created later if missing), or the one message
    every command gives when a folder stands where the file should be (or a file where its
    folder should be)."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise UserError(f"{option} {path} is a folder, where a file is expected; give a file name "
                        f"such as {path / example}")
    output_folder(path.parent, option, given=path)
    return path


def make_dirs(path: str | Path) -> Path:
    """mkdir -p, failing as WriteFailed: a report or a model cannot be written there."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise WriteFailed(path, OSError(errno.ENOTDIR, "a file of that name is in the way")) from None
    except OSError as exc:
        raise WriteFailed(path, exc) from None
    return path


# What an OSError raised while a caller fills the temporary file means: a write failed. Other
# errnos (a download's connection refused, say) are the caller's own and pass unchanged.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG, errno.EIO,
                 errno.ENOENT, getattr(errno, "EDQUOT", errno.ENOSPC)}


@contextmanager
def replacing(path: str | Path, *, suffix: str = ".tmp") -> Iterator[Path]:
    """The one way the project writes a file: yield a temporary path beside `path` (same
    filesystem, so os.replace is atomic) for the caller to fill; on success it replaces
    `path`, on any exception it is removed. A reader, or a crash, never sees a half file.
    A failed write (no permission, disk full, folder gone) raises WriteFailed naming `path`."""
    path = Path(path)
    try:
        fd, tmp = mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    except OSError as exc:
        raise failed(path, exc) from None
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        if exc.errno in _WRITE_ERRNOS and not isinstance(exc, WriteFailed):
            raise WriteFailed(path, exc) from exc
        raise
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    try:
        Path(tmp).unlink(missing_ok=True)
    except OSError:  # a folder gone or made read-only: nothing left to clean, or nothing we can
        pass


def write_bytes(path: str | Path, data: bytes) -> None:
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | Path, text: str) -> None:
    """UTF-8 with LF line ends on every platform: committed results stay byte-identical."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")
