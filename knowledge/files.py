"""Read a file the user named without ever hanging: regular files only, under a size cap, strict UTF-8.

A plain `open()` of a FIFO blocks until a writer appears, `/dev/zero` never ends and a 200 MB file is read whole before
anything can complain. So every reader of answers, config.json, overlays, rule packs and reports goes through here:
the path is stat'ed first (following symlinks) and anything that is not a regular file, or is over the cap for its kind,
is refused before it is opened; the open itself is non-blocking and re-checked on the descriptor, in case the path was
swapped in between; at most cap + 1 bytes are read. Every refusal is an `InputError` naming the file and the reason.
The caps are documented in the README ("Files gpuadvisor reads").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from gpuadvisor.knowledge.errors import InputError

MIB = 1024 * 1024
# Caps per kind of file, each far above a real one: a JSON report of a 70B consultation is about 0.5 MiB (and an
# answers file may be such a report), a model's config.json a few KiB, the largest shipped knowledge file 0.1 MiB and
# the largest shipped rule pack 35 KiB.
ANSWERS_MAX_BYTES = 16 * MIB
REPORT_MAX_BYTES = 16 * MIB
CONFIG_MAX_BYTES = 4 * MIB
KNOWLEDGE_MAX_BYTES = 8 * MIB
PACK_MAX_BYTES = 8 * MIB
STATE_MAX_BYTES = 1 * MIB  # the TUI's own list of recent consultations
CACHE_MAX_BYTES = 64 * MIB  # parsed copies of knowledge files (marshal)

NOT_REGULAR: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileReadError(InputError):
    """A file that cannot be read as asked; `reason` is the message without the path (for callers that add it)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n and n % MIB == 0 else f"{n:,} bytes"


def _check(path: Path | str, st: os.stat_result, what: str, max_bytes: int) -> None:
    """Refuse a non-regular file or one over the cap, from its stat alone."""
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in NOT_REGULAR if test(st.st_mode)), "a special file")
        raise FileReadError(path, f"cannot read {what}: it is {kind}, not a regular file")
    if st.st_size > max_bytes:
        raise FileReadError(path, f"cannot read {what}: it is {st.st_size:,} bytes, over the {_size(max_bytes)} limit")


def read_file_bytes(path: Path | str, *, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; `what` names the kind of file ("answers file")."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        dangling = os.path.islink(path)
        raise FileReadError(path, f"no such {what}" + (" (a symbolic link to nothing)" if dangling else "")) from None
    except OSError as exc:
        raise FileReadError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    _check(path, st, what, max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise FileReadError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        _check(path, os.fstat(fd), what, max_bytes)  # the path may have been replaced since the stat
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise FileReadError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew since the stat
        raise FileReadError(path, f"cannot read {what}: it is over the {_size(max_bytes)} limit")
    return data


def read_text_file(path: Path | str, *, what: str, max_bytes: int) -> str:
    """The text of a regular UTF-8 file of at most `max_bytes` (see `read_file_bytes`); refuses binary content.
    A leading UTF-8 byte-order mark (Windows editors write one) is accepted and dropped."""
    data = read_file_bytes(path, what=what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise FileReadError(path, f"cannot read {what}: not UTF-8 text (byte {exc.start})") from None


def list_files(folder: Path, suffix: str | tuple[str, ...], *, what: str) -> list[Path]:
    """The entries of `folder` whose name ends with `suffix` (any case; hidden names left out), sorted; [] when the
    folder does not exist.

    Unlike `Path.glob`, which skips what it cannot read without a word, an unreadable folder (or one that is not a
    directory) is a `FileReadError` naming it; dangling and looping symbolic links are listed, so that reading them
    reports them by name instead of their being skipped."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.lower().endswith(suffix) and not e.name.startswith(".")]
    except FileNotFoundError:
        if os.path.islink(folder):
            raise FileReadError(folder, f"cannot read the {what} directory: a symbolic link to nothing") from None
        return []
    except NotADirectoryError:
        raise FileReadError(folder, f"cannot read the {what} directory: it is not a directory") from None
    except OSError as exc:
        raise FileReadError(folder, f"cannot read the {what} directory: {exc.strerror or exc}") from None
    return [folder / name for name in sorted(names)]
