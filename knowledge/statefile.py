"""Files gpuadvisor keeps for the user (quotes, recent consultations, settings, the draft, refreshed prices): written
atomically, and changed under a lock, so that concurrent writers never lose each other's changes.

Why: `kb quote add` reads the quotes, adds one and rewrites the file; ten of them at once each read the same old
file and the last rename wins (three or four of ten quotes were kept). `locked` serialises the read-modify-write
with an advisory lock on a companion file (`.NAME.lock` beside it: the data file itself is replaced by a rename, so
a lock on it would be on a file that is gone). The standard library is enough: `fcntl.flock` on POSIX, and
`msvcrt.locking` on Windows; a third-party locking library would add nothing here. A writer that cannot get the
lock within `timeout` seconds (another one hung) is told so instead of waiting for ever.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from gpuadvisor.knowledge.errors import IOFailure

LOCK_TIMEOUT_S = 30.0


class LockTimeout(IOFailure):
    """Another writer held the lock past the timeout."""


@contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of `path` (the directory is created if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd, lock, timeout)
        try:
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)


def _acquire(fd: int, lock: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if sys.platform == "win32":  # pragma: no cover - Windows
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except (BlockingIOError, PermissionError):
            if time.monotonic() > deadline:
                raise LockTimeout(f"{lock}: another gpuadvisor has held this lock for {timeout:g} s; try again, or "
                                  "remove the file if no gpuadvisor is running") from None
            time.sleep(0.02)


def _release(fd: int) -> None:
    with suppress(OSError):
        if sys.platform == "win32":  # pragma: no cover - Windows
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8): a temporary file beside it, fsynced, renamed over it; nothing is left
    behind on any failure, and a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
