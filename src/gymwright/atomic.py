"""Atomic file writes: every file gymwright writes goes through `write_atomic` or `atomic_writer`.

A write goes to a temporary file in the target's folder (`.NAME.XXXX.tmp`), is flushed and
fsynced, and then renamed over the target (`os.replace`, atomic on POSIX), so a reader sees
the old file or the new one, never half of one. When anything fails (a full disk, a size
limit, a read-only folder, an error in the code producing the data) the temporary file is
removed and the target is left as it was; an `OSError` becomes a `WriteError` that names the
target, the OS's reason and what to do. The new file gets the mode of the file it replaces,
or the usual `0o666 & ~umask` of a new file.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import BinaryIO

from gymwright.errors import GymwrightError

__all__ = ["WriteError", "atomic_writer", "write_atomic", "write_error"]

FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


class WriteError(GymwrightError):
    """A file could not be written (disk full, over a size limit, no permission, no folder)."""


def write_error(path: str | Path, e: OSError) -> WriteError:
    """The `WriteError` for `e`, raised while writing `path`: the path, the OS reason, the fix."""
    path = Path(path)
    reason = e.strerror or str(e) or e.__class__.__name__
    name = errno.errorcode.get(e.errno or 0)
    other = e.filename and str(e.filename) != str(path) and not Path(str(e.filename)).name.startswith(f".{path.name}.")
    where = f" ({e.filename})" if other else ""  # another file than the target or its temporary
    code = e.errno
    if code in FULL:
        hint = f"free some disk space in {path.parent} (or lift the file-size limit), or write somewhere else, then run again"
    elif code in DENIED:
        hint = f"{path.parent} is not writable by this user: fix its permissions or choose another path"
    elif code == errno.ENOENT:
        hint = f"create the folder {path.parent} first, or choose another path"
    elif code == errno.EISDIR:
        hint = f"{path} is a folder: choose a file name"
    else:
        hint = "check the path and the disk, then run again"
    return WriteError(f"could not write the file: {reason}{f' [{name}]' if name else ''}{where}; "
                      f"nothing was written and any earlier file there is unchanged",
                      path=str(path), hint=hint, value=e.errno)


@cache
def _umask() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file to write `path` through: renamed over `path` when the block ends without an
    error, removed otherwise. For streams too large to hold in memory; `write_atomic` else."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise write_error(path, e) from e
    done = False
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), _mode_for(path))
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        done = True
    except OSError as e:
        raise write_error(path, e) from e
    finally:
        if not done:
            with suppress(OSError):
                os.unlink(tmp)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every file system lets a folder be fsynced)."""
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: str | Path, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Write `data` (text is encoded with `encoding`) to `path` atomically; returns `path`.

    Raises `WriteError` (naming `path`) when it cannot be written; then nothing is left behind.
    """
    blob = data.encode(encoding) if isinstance(data, str) else bytes(data)
    with atomic_writer(path) as f:
        f.write(blob)
    return Path(path)
