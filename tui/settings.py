"""Where the TUI keeps its own small state: recent consultations and the chosen theme.

State is JSON in the user data directory (platformdirs). `GPUADVISOR_DATA_DIR` redirects it (the test seam); when
only `GPUADVISOR_CONFIG_DIR` is set, state goes to its `state/` subfolder so tests never touch the real home.
Unreadable state is ignored, never fatal: it is a convenience, not data the user made.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.nesting import loads_json
from gpuadvisor.knowledge.paths import user_data_dir
from gpuadvisor.knowledge.sanitize import one_line
from gpuadvisor.knowledge.statefile import LockTimeout, locked, read_state, write_atomic

MAX_RECENT = 8


def data_dir() -> Path:
    """The directory for TUI state (created on first write, not here): the knowledge layer's `user_data_dir`."""
    return user_data_dir()


MAX_WHAT_IFS = 5
"""What-ifs listed under one consultation (the latest)."""


@dataclass(frozen=True)
class Recent:
    """One recent consultation: the answers file that reopens it, a one-line summary, and the what-ifs tried on it
    (each an answers file and a title of its own), latest first."""

    path: str
    title: str
    what_ifs: tuple[Recent, ...] = ()


def _write_atomic(path: Path, text: str) -> None:
    write_atomic(path, text)


def _read_json(path: Path) -> dict[str, Any]:
    data = read_state(path, "state file", lambda text: loads_json(text, str(path)),
                      "no recent consultations, the default theme")
    return data if isinstance(data, dict) else {}


@contextmanager
def _changing() -> Iterator[dict[str, Any]]:
    """The state, to change in place and write back, under the state file's lock (a read-modify-write that a
    concurrent TUI cannot interleave). A lock held too long is given up: state is a convenience, never fatal."""
    try:
        with locked(_state_file(), timeout=5):
            state = _read_json(_state_file())
            yield state
            _write_atomic(_state_file(), json.dumps(state, indent=2) + "\n")
    except LockTimeout:
        return


def _state_file() -> Path:
    return data_dir() / "tui.json"


def _entries(items: Any, nested: bool = True) -> list[Recent]:
    out: list[Recent] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("path"), str) and isinstance(item.get("title"), str):
            if os.path.isfile(item["path"]):  # never raises (a 4,000-byte name, a path through a file)
                what_ifs = tuple(_entries(item.get("what_ifs"), False)[:MAX_WHAT_IFS]) if nested else ()
                out.append(Recent(item["path"], one_line(item["title"]), what_ifs))
    return out


def load_recent() -> list[Recent]:
    """Recent consultations, newest first, each with its what-ifs; entries whose file has gone are dropped."""
    return _entries(_read_json(_state_file()).get("recent", []))


def remember(path: Path, title: str, under: Path | None = None) -> None:
    """Put an answers file at the top of the recent list (no duplicates, at most MAX_RECENT); `under`: the answers
    file of the consultation it is a what-if of, which it is listed under (that one moves to the top)."""
    entry = Recent(str(path.resolve()), title)
    base = str(under.resolve()) if under is not None else None
    with _changing() as state:  # two TUIs finishing at once both stay listed
        recent = load_recent()
        parent = next((r for r in recent if r.path == base), None) if base != entry.path else None
        if parent is None:  # a consultation of its own (a what-if of one no longer listed is listed on its own)
            kept = next((r.what_ifs for r in recent if r.path == entry.path), ())
            entries = [Recent(entry.path, title, kept), *(r for r in recent if r.path != entry.path)]
        else:
            what_ifs = (entry, *(w for w in parent.what_ifs if w.path != entry.path))[:MAX_WHAT_IFS]
            entries = [Recent(parent.path, parent.title, what_ifs),
                       *(r for r in recent if r.path not in (parent.path, entry.path))]
        state["recent"] = [asdict(r) for r in entries[:MAX_RECENT]]


def record_consultation(answers_toml: str, title: str, under: Path | None = None) -> Path:
    """Keep the answers of a finished consultation in the data dir (named by content) and list it as recent
    (`under`: a what-if of that consultation, listed under it)."""
    digest = hashlib.sha256(answers_toml.encode("utf-8")).hexdigest()[:12]
    path = data_dir() / "consultations" / f"consultation-{digest}.toml"
    if not path.exists():
        _write_atomic(path, answers_toml)
    remember(path, title, under)
    return path


def load_theme() -> str | None:
    theme = _read_json(_state_file()).get("theme")
    return theme if isinstance(theme, str) else None


def save_theme(theme: str) -> None:
    with _changing() as state:
        state["theme"] = theme
