"""Saving a report atomically: the file appears complete or not at all, and an existing file is only replaced on
request.

The text is written to a temporary file in the target's own directory (same filesystem, so the final step is a
rename) and fsynced. With `force`, `os.replace` swaps it in. Without, `os.link` publishes it, which fails if the name
exists, so a file that appeared meanwhile is still not clobbered; where hard links are unsupported the fallback is a
fresh existence check then `os.replace`. On any failure the temporary file is removed and the error says what to do.

A signal is a failure too: while a save runs (in the main thread, where handlers can be set) SIGTERM and SIGHUP raise
`Terminated`, so the same clean-up runs, and then the signal is delivered again with its previous handler, so the
process ends as the sender asked. Ctrl+C raises KeyboardInterrupt, which the clean-up already covers.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType

from gpuadvisor.knowledge.errors import EXIT_IO, AdvisorError
from gpuadvisor.knowledge.files import NOT_REGULAR
from gpuadvisor.knowledge.sanitize import safe_text, shorten

_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


class ReportSaveError(AdvisorError):
    """The report could not be written; the message names the path and the cause. Nothing was left behind."""

    exit_code = EXIT_IO


class NotARegularFileError(ReportSaveError):
    """The target is a device, a named pipe, a socket or a symbolic link: refused, --force or not (a bad --output,
    exit 2, never an offer to overwrite)."""

    exit_code = 2


class ReportExistsError(ReportSaveError):
    """The target exists and `force` was not given (the TUI asks for confirmation and retries with force)."""

    exit_code = 2


def _explain(exc: OSError, target: Path) -> ReportSaveError:
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return ReportSaveError(f"{target}: the disk is full (or over quota); nothing was written. Free some space or "
                               "save elsewhere.")
    if code in (errno.EACCES, errno.EPERM):
        return ReportSaveError(f"{target}: permission denied: cannot write in {_dir_of(target)}; choose another "
                               "directory (for example with --output).")
    if code == errno.EROFS:
        return ReportSaveError(f"{target}: {_dir_of(target)} is on a read-only filesystem; save elsewhere.")
    if code == errno.ENOENT:
        return ReportSaveError(f"{target}: directory {_dir_of(target)} does not exist; create it or save elsewhere.")
    if code == errno.ENAMETOOLONG:
        return ReportSaveError(f"{target}: file name too long")
    return ReportSaveError(f"{target}: cannot write report: {exc.strerror or exc}")


def _dir_of(target: Path) -> str:
    return str(target.parent) if str(target.parent) not in ("", ".") else "the current directory"


def _check(target: Path, force: bool) -> None:
    directory = target.parent
    if not directory.exists():
        raise ReportSaveError(f"{target}: directory {_dir_of(target)} does not exist; create it or save elsewhere.")
    if not directory.is_dir():
        raise ReportSaveError(f"{target}: {directory} is not a directory")
    if target.is_dir() and not target.is_symlink():
        raise ReportSaveError(f"{target}: is a directory; give a file name")
    _regular_or_absent(target)
    if target.exists() and not force:
        raise ReportExistsError(f"{target}: already exists; use --force to overwrite it")


def _regular_or_absent(target: Path) -> None:
    """Refuse a target that is not a regular file — a device, a named pipe, a socket, or a symbolic link (renaming
    over /dev/stdout replaces the link itself: as root, the system's) — with or without --force: a report replaces
    regular files only, and never through a link. Standard output is `-`."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise NotARegularFileError(f"{target}: is a symbolic link, not a regular file; reports are saved to regular "
                                   "files only (give the file it points to, or - for standard output)")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in NOT_REGULAR if test(mode)), "a special file")
        raise NotARegularFileError(f"{target}: is {kind}, not a regular file; reports are saved to regular files "
                                   "only (give - for standard output)")


def _write_temp(directory: Path, name: str, data: bytes, made: list[Path] | None = None) -> Path:
    """A new file next to the target (O_EXCL, so never someone else's), written in full and fsynced; its path goes
    into `made` at once, so that a signal arriving at any point can still remove it."""
    while True:
        tmp = directory / f".{name[:200]}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any new file
        except FileExistsError:
            continue
        if made is not None:
            made.append(tmp)
        break
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _publish(tmp: Path, target: Path, force: bool) -> None:
    if force:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise ReportExistsError(f"{target}: already exists; use --force to overwrite it") from None
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        if target.exists():
            raise ReportExistsError(f"{target}: already exists; use --force to overwrite it") from None
        os.replace(tmp, target)
        return
    with suppress(OSError):  # published already; a stray second name is harmless
        os.unlink(tmp)


class Terminated(BaseException):
    """A catchable termination signal arrived during a save (a BaseException, like KeyboardInterrupt)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


_CAUGHT = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


@contextmanager
def _signals_clean_up() -> Iterator[list[Path]]:
    """Turn SIGTERM/SIGHUP into `Terminated` for the duration (main thread only), remove the temporary files made
    (listed in the list yielded) when anything interrupts the save, then re-deliver the signal."""
    made: list[Path] = []
    if threading.current_thread() is not threading.main_thread():
        yield made
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signum)

    previous = {sig: signal.signal(sig, handler) for sig in _CAUGHT}
    try:
        yield made
    except BaseException as exc:
        for tmp in made:
            with suppress(OSError):
                os.unlink(tmp)
        if not isinstance(exc, Terminated):
            raise
        for sig, old in previous.items():
            signal.signal(sig, old)
        previous = {}
        os.kill(os.getpid(), exc.signum)  # the previous handler (by default: the process ends)
        raise
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def save_report(text: str, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write `text` (UTF-8) to `path` atomically and return the path written.

    Raises ReportExistsError if the file exists and `force` is false, ReportSaveError for a missing or unwritable
    directory, a full disk or any other I/O failure.
    """
    with _signals_clean_up() as made:
        return _save(text, path, force=force, made=made)


def _save(text: str, path: str | os.PathLike[str], *, force: bool, made: list[Path]) -> Path:
    target = Path(path).expanduser()
    if not target.name or target.name in (".", ".."):
        raise ReportSaveError(f"{path}: not a file name")
    if "\x00" in str(target):
        raise ReportSaveError(f"{shorten(repr(str(path)))}: not a file name (it holds a NUL byte)")
    try:
        _check(target, force)
    except OSError as exc:  # an over-long name, a path through a file, a folder that cannot be searched
        raise _explain(exc, target) from None
    data = safe_text(text, keep_newlines=True).encode("utf-8")  # the one sanitiser, at the file's edge
    try:
        tmp = _write_temp(target.parent, target.name, data, made)
    except OSError as exc:
        raise _explain(exc, target) from None
    try:
        _regular_or_absent(target)  # again: it may have been replaced by a device while the text was written
        _publish(tmp, target, force)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _explain(exc, target) from None
        raise
    _sync_dir(target.parent)
    return target


def _sync_dir(directory: Path) -> None:
    """Make the rename itself durable (best effort: not every platform can fsync a directory)."""
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
