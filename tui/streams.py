"""Standard output and error that cannot hurt the terminal or crash the command.

Why: data reaches stdout (a model name from an overlay, a config's `model_type`, a catalog's instance name) and may
carry escape sequences; stdout may be closed (`>&-`), full (`> /dev/full`), a pipe whose reader left (`| head`), or an
ASCII/latin-1 terminal that cannot encode the shipped `·`. `install()` wraps both streams so that every write goes
through the one sanitiser (`safe_text`, newlines kept) and unencodable characters become `?`; `finish()` flushes
stdout inside the command's error handling, so a full or closed stdout is an `OutputError` (exit 4) with one line on
stderr, never a traceback at interpreter exit.
"""

from __future__ import annotations

import io
import os
import sys
from typing import TextIO

from gpuadvisor.knowledge.errors import IOFailure
from gpuadvisor.knowledge.sanitize import safe_text


class OutputError(IOFailure):
    """Standard output could not be written (closed, full, or another I/O error)."""


class SafeStream(io.TextIOBase):
    """A text stream that sanitises what is written to `inner` (None: the stream was closed when we started)."""

    def __init__(self, inner: TextIO | None, name: str) -> None:
        self.inner, self.name = inner, name

    def write(self, text: str) -> int:
        if self.inner is None:
            raise OutputError(f"cannot write to standard {self.name}: it is closed")
        try:
            self.inner.write(safe_text(text, keep_newlines=True))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard {self.name}: {exc.strerror or exc}") from None
        return len(text)

    def flush(self) -> None:
        if self.inner is None:
            return
        try:
            self.inner.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard {self.name}: {exc.strerror or exc}") from None

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.inner is not None and self.inner.isatty()

    def fileno(self) -> int:
        if self.inner is None:
            raise OSError("standard stream is closed")
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", None) or "utf-8"


def _prepare(stream: TextIO | None) -> TextIO | None:
    """Unencodable characters become '?' instead of raising UnicodeEncodeError (an ASCII or latin-1 terminal)."""
    if stream is not None and isinstance(stream, io.TextIOWrapper):
        try:
            stream.reconfigure(errors="replace")
        except (ValueError, OSError):
            pass
    return stream


def install() -> tuple[TextIO | None, TextIO | None]:
    """Wrap sys.stdout and sys.stderr; returns the originals for `restore`."""
    saved = (sys.stdout, sys.stderr)
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(_prepare(sys.stdout), "output")  # type: ignore[assignment]
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(_prepare(sys.stderr), "error")  # type: ignore[assignment]
    return saved


def restore(saved: tuple[TextIO | None, TextIO | None]) -> None:
    sys.stdout, sys.stderr = saved  # type: ignore[assignment]


def finish() -> None:
    """Flush stdout now, inside the command's error handling (a failure here is an OutputError)."""
    sys.stdout.flush()


def silence_stdout() -> None:
    """After stdout failed (a pipe closed, a full disk): point fd 1 at /dev/null so that the interpreter's own flush
    at exit cannot fail again and print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
        finally:
            os.close(devnull)
    except OSError:
        pass
    inner = getattr(sys.stdout, "inner", sys.stdout)
    if inner is not None:
        try:
            inner.flush()  # drains into /dev/null now
        except (OSError, ValueError):
            pass


def say(message: str) -> None:
    """One line on stderr, which may itself be closed or broken: then nothing is said."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def terminal_columns() -> int | None:
    """The width of the terminal standard output writes to (COLUMNS, when set, wins: `shutil.get_terminal_size`);
    None for a file or a pipe, whose reader wants each table row on one line."""
    import shutil

    if not sys.stdout.isatty():
        return None
    return max(40, shutil.get_terminal_size().columns)
