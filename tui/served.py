"""Served mode: the app as `gpuadvisor serve` runs it for a visitor's browser, which must not become a remote shell.

A visitor's session may read and write nothing of the server's but what the operator named: reports and answers go
to the visitor's browser as downloads (`App.deliver_text`, which textual-serve forwards), never to the server's disk;
answers are opened from pasted text, or by name from the one directory the operator gave (`--data-dir`), resolved
and confined (no absolute path, no `..`, no link out of it); the model field takes names and Hugging Face ids, never
a server path; `current.gpu = "auto"` (this machine's GPUs: the server's, not the visitor's) and the price refresh
are not offered. The session's own state (recent consultations, the draft, the theme) lives in a directory the
server gives each session (GPUADVISOR_DATA_DIR) and removes when it ends, so visitors never see each other's or the
operator's.

The mode is process-wide (`enable` in `launch`), because plain functions far from the app (the model field's
reader) must know it too.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuadvisor.knowledge.errors import InputError

if TYPE_CHECKING:
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers


@dataclass(frozen=True)
class Served:
    data_dir: Path | None = None
    """The directory visitors may open answers from (resolved when the server started), None for none."""


_current: Served | None = None


def current() -> Served | None:
    """The served mode of this process, None in a terminal."""
    return _current


def enable(served: Served) -> None:
    global _current
    _current = served


def disable() -> None:
    global _current
    _current = None


NO_SERVER_PATHS = ("the shared app reads no file on the server: give the model's name (llama-3.1-8b), its size "
                   "(70B) or a Hugging Face id (Qwen/Qwen3-32B)")
NO_DETECTION = ("current.gpu: \"auto\" would detect the server's GPUs, not yours: in the shared app name the GPUs you "
                "have (e.g. nvidia-rtx-4090) or leave it empty")
PASTE_MAX_CHARS = 1_000_000
"""Longest pasted answers text (a 70B consultation's JSON report is about 0.5 MB)."""
ANSWER_SUFFIXES = (".toml", ".json")


def refusal(answers: Answers | LifecycleAnswers) -> str | None:
    """Why these answers cannot run in the shared app (a server path, detection on the server), or None."""
    from gpuadvisor.rules.inputs.current_gpu import wants_detection

    for label, one in _each(answers):
        if one.model.config is not None:
            return f"{label}model.config: {NO_SERVER_PATHS}"
        if wants_detection(one):
            return f"{label}{NO_DETECTION}"
    return None


def _each(answers: Answers | LifecycleAnswers) -> list[tuple[str, Answers]]:
    phases = getattr(answers, "phases", None)
    if phases is None:
        return [("", answers)]  # type: ignore[list-item]
    return [(f"phase[{p.index}].", p.answers) for p in phases]


# --- the operator's data directory ------------------------------------------------------------------------------

def confined(data_dir: Path, name: str) -> Path:
    """The answers file `name` inside `data_dir`; InputError (naming what was typed, never what a file holds) when
    it is outside, not a regular answers file, or reached through a symbolic link that leaves the directory."""
    from gpuadvisor.knowledge.sanitize import shorten

    shown = shorten(repr(name), 80)
    text = name.strip()
    if not text:
        raise InputError("give the name of an answers file in the shared folder")
    if "\x00" in text or text.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", text):
        raise InputError(f"{shown}: give a name inside the shared folder, not a path on the server")
    parts = re.split(r"[\\/]+", text)
    if any(p in ("", ".", "..") for p in parts):
        raise InputError(f"{shown}: '..' and empty parts are not allowed; give a name inside the shared folder")
    if not text.lower().endswith(ANSWER_SUFFIXES):
        raise InputError(f"{shown}: not an answers file (.toml) or a JSON report (.json)")
    root = os.path.realpath(data_dir)
    path = os.path.realpath(os.path.join(root, *parts))
    if os.path.commonpath([root, path]) != root:
        raise InputError(f"{shown}: it leads out of the shared folder (a symbolic link); not opened")
    try:
        mode = os.stat(path).st_mode
    except OSError:
        raise InputError(f"{shown}: no such answers file in the shared folder") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{shown}: not a regular file")
    return Path(path)


def completions(data_dir: Path, typed: str) -> list[str]:
    """Names in the shared folder that complete `typed` (answers files and folders, not hidden, not leading out of
    it): what the open dialog suggests. Nothing is listed outside the folder."""
    parts = re.split(r"[\\/]", typed)
    folder_parts, stem = parts[:-1], parts[-1]
    if any(p in ("", ".", "..") for p in folder_parts) or typed.startswith(("/", "\\", "~")):
        return []
    root = os.path.realpath(data_dir)
    folder = os.path.realpath(os.path.join(root, *folder_parts))
    if os.path.commonpath([root, folder]) != root:
        return []
    prefix = "".join(f"{p}/" for p in folder_parts)
    out = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.startswith(stem) or entry.name.startswith("."):
                    continue
                real = os.path.realpath(entry.path)
                if os.path.commonpath([root, real]) != root:
                    continue
                if os.path.isdir(real):
                    out.append(f"{prefix}{entry.name}/")
                elif entry.name.lower().endswith(ANSWER_SUFFIXES):
                    out.append(f"{prefix}{entry.name}")
    except (OSError, ValueError):
        return []
    return sorted(out)


# --- pasted answers -------------------------------------------------------------------------------------------------

def parse_pasted(text: str, scratch: Path) -> Answers | LifecycleAnswers:
    """Answers from pasted text: a TOML answers file, or a JSON report (it starts with `{`). Read exactly as a file
    is (the same caps, nesting limit and messages) through a scratch file in the session's own directory, which
    messages call "pasted answers"."""
    import tempfile

    from gpuadvisor.knowledge.errors import AdvisorError
    from gpuadvisor.rules.lifecycle.answers import load_any

    if not text.strip():
        raise InputError("paste an answers file (TOML) or a gpuadvisor JSON report first")
    if len(text) > PASTE_MAX_CHARS:
        raise InputError(f"pasted answers: {len(text):,} characters, over the {PASTE_MAX_CHARS:,} a paste may hold")
    suffix = ".json" if text.lstrip().startswith("{") else ".toml"
    scratch.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="pasted-", suffix=suffix, dir=scratch)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            return load_any(Path(name))
        except AdvisorError as exc:
            raise InputError(str(exc).replace(name, "pasted answers")) from None
    finally:
        Path(name).unlink(missing_ok=True)


# --- downloads ------------------------------------------------------------------------------------------------------

MIME_TYPES = {"md": "text/markdown", "html": "text/html", "json": "application/json", "toml": "application/toml"}


def download_name(typed: str, default: str, fmt: str) -> str:
    """A file name for the visitor's browser: the last part of what was typed, in safe characters, with the
    format's extension (the server writes nothing: the name is only a suggestion to the browser)."""
    base = re.split(r"[\\/]", typed.strip())[-1] or default
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip(".-") or default
    ext = f".{fmt}"
    if not safe.lower().endswith(ext):
        stem = re.sub(r"\.(md|html|json|toml)$", "", safe, flags=re.IGNORECASE)
        safe = stem + ext
    return safe[-120:]


def deliver(app: Any, text: str, name: str, fmt: str) -> str | None:
    """Send `text` to the visitor's browser as a download named `name`; the problem in words when the app is not
    running in a browser (the terminal driver would write the file to the server's downloads folder instead)."""
    import io

    from gpuadvisor.knowledge.sanitize import safe_text

    if not app.is_web:
        return "downloads need the browser: this session is not running in one"
    app.deliver_text(io.StringIO(safe_text(text, keep_newlines=True)), save_filename=name,
                     mime_type=MIME_TYPES.get(fmt, "text/plain"),
                     open_method="download", encoding="utf-8")
    return None
