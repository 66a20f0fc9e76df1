"""Files gpuadvisor keeps for the user (quotes, recent consultations, settings, the draft, refreshed prices): written
atomically, and changed under a lock, so that concurrent writers never lose each other's changes.

Why: `kb quote add` reads the quotes, adds one and rewrites the file; ten of them at once each read the same old
file and the last rename wins (three or four of ten quotes were kept). `locked` serialises the read-modify-write
with an advisory lock on a companion file (`.NAME.lock` beside it: the data file itself is replaced by a rename, so
a lock on it would be on a file that is gone). The standard library is enough: `fcntl.flock` on POSIX, and
`msvcrt.locking` on Windows; a third-party locking library would add nothing here. A writer that cannot get the
lock within `timeout` seconds (another one hung) is told so instead of waiting for ever.

Reading them is never fatal: a file gpuadvisor wrote itself that is corrupt, truncated, hostile or not a regular
file is skipped with one line on standard error (`skipped`), naming the file and the line, and the program goes on
without it (the built-in prices, no recent list, no draft).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from gpuadvisor.knowledge.errors import AdvisorError, IOFailure
from gpuadvisor.knowledge.files import STATE_MAX_BYTES, read_text_file
from gpuadvisor.knowledge.sanitize import one_line

LOCK_TIMEOUT_S = 30.0
T = TypeVar("T")
_WARNED: set[str] = set()


def skipped(problem: str, instead: str) -> None:
    """Say once a process, in one line on standard error, that a persistent file was skipped: `problem` names the
    file and line (`PATH:LINE: ...`), `instead` what is used in its place. Textual captures standard error while the
    TUI runs, so the screen is never written over."""
    line = f"gpuadvisor: warning: {one_line(problem)}; skipped: {instead}"
    if line not in _WARNED:
        _WARNED.add(line)
        with suppress(OSError, ValueError, AttributeError):  # no standard error (closed) must not make a warning fatal
            print(line, file=sys.stderr, flush=True)


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


def read_state(path: Path, what: str, parse: Callable[[str], T], instead: str) -> T | None:
    """`parse` of the file's text, or None when there is none; a file that cannot be read or parsed (not a regular
    file, over STATE_MAX_BYTES, not UTF-8, bad JSON, a hostile value `parse` refuses with ValueError or TypeError)
    is `skipped` with a one-line warning saying what is used `instead`."""
    if not os.path.lexists(path):
        return None
    try:
        return parse(read_text_file(path, what=what, max_bytes=STATE_MAX_BYTES))
    except json.JSONDecodeError as exc:
        skipped(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}", instead)
    except (AdvisorError, ValueError, TypeError, RecursionError) as exc:
        skipped(f"{path}: {exc}" if str(path) not in str(exc) else str(exc), instead)
    return None
