"""Files no reader may hang on or read whole: a FIFO, a character device, a directory, an oversized (sparse) file,
binary bytes, a dangling symlink and a symlink to itself, with the reason `gpuadvisor.knowledge.files` gives for
each."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from gpuadvisor.knowledge.files import MIB

BAD_KINDS = ("fifo", "char-device", "directory", "oversized", "binary", "dangling-symlink", "looping-symlink")


def _unblock_later(fifo: Path) -> None:
    """If a regression opens the FIFO for reading, the open blocks until a writer comes: come after 10 s, so the test
    fails (the reader sees an empty file) instead of hanging. With nobody reading, the open fails (ENXIO) and is
    harmless; so is a FIFO already removed with its tmp_path."""

    def writer() -> None:
        time.sleep(10)
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    threading.Thread(target=writer, daemon=True).start()


def make_bad_file(directory: Path, kind: str, *, max_bytes: int, name: str = "bad.toml") -> Path:
    """A path of `kind` inside `directory` (the character device is /dev/zero itself)."""
    path = directory / name
    if kind == "fifo":
        os.mkfifo(path)
        _unblock_later(path)
    elif kind == "char-device":
        return Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "oversized":
        with path.open("wb") as fh:
            fh.truncate(max_bytes + 1)  # sparse: nothing is written, the size alone is over the cap
    elif kind == "binary":
        path.write_bytes(b"abc\xff\xfe\x00\x01")
    elif kind == "dangling-symlink":
        path.symlink_to(directory / "nowhere.toml")
    elif kind == "looping-symlink":  # issue 20: reported by name, never skipped or a traceback
        path.symlink_to(path)
    else:
        raise ValueError(kind)
    return path


def _size(n: int) -> str:
    return f"{n // MIB} MiB"


def reason(kind: str, *, what: str, max_bytes: int) -> str:
    """The message after `<path>: ` for a file of `kind` read as `what` under a cap of `max_bytes` (whole MiB)."""
    return {
        "fifo": f"cannot read {what}: it is a named pipe (FIFO), not a regular file",
        "char-device": f"cannot read {what}: it is a character device, not a regular file",
        "directory": f"cannot read {what}: it is a directory, not a regular file",
        "oversized": f"cannot read {what}: it is {max_bytes + 1:,} bytes, over the {_size(max_bytes)} limit",
        "binary": f"cannot read {what}: not UTF-8 text (byte 3)",
        "dangling-symlink": f"no such {what} (a symbolic link to nothing)",
        "looping-symlink": f"cannot read {what}: Too many levels of symbolic links",
    }[kind]
