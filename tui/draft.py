"""The questionnaire's draft: every entry is written to the data directory as it is made, so a crash, a kill or a
closed terminal never loses an answer; the welcome screen offers the draft back.

Why a file of its own, and why so careful: it is written on every change (small, no fsync: losing the last keystroke
to a power cut is fine, losing the file is not — it is replaced atomically) and read back at start, so it is treated
like any file on disk: size-capped, depth-limited, versioned, and its entries kept only if they have the shape of an
entry (a string, number, boolean or list of strings, under a question key); anything else is dropped, never trusted.
"""

from __future__ import annotations

import json
import math
from contextlib import suppress
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.nesting import loads_json
from gpuadvisor.knowledge.paths import user_data_dir
from gpuadvisor.knowledge.statefile import read_state, write_atomic

FORMAT = "gpuadvisor-draft"
VERSION = 1
MAX_ENTRY_CHARS = 16_384
"""Longest entry kept in a draft (a long paste into the model field is cut, not allowed to grow the file)."""


def draft_path() -> Path:
    return user_data_dir() / "draft.json"


def _entry(value: Any) -> Any:
    """The value as a draft keeps it, or None when it is not an entry's shape."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value[:MAX_ENTRY_CHARS]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [v[:MAX_ENTRY_CHARS] for v in value[:256]]
    return None


def _clean(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        return {}
    out = {}
    for key, value in raw.items():
        kept = _entry(value)
        if isinstance(key, str) and len(key) <= 100 and kept is not None:
            out[key] = kept
    return out


def save_draft(raw: dict[str, object]) -> bool:
    """Replace the draft with these entries; False (and nothing left behind) when it cannot be written."""
    entries = _clean(raw)
    try:
        write_atomic(draft_path(), json.dumps({"format": FORMAT, "version": VERSION, "raw": entries},
                                              ensure_ascii=False))
    except (OSError, ValueError):
        return False
    return True


def load_draft() -> dict[str, Any] | None:
    """The entries of the draft, or None when there is none (or it is unreadable, foreign or empty)."""
    path = draft_path()
    doc = read_state(path, "draft", lambda text: loads_json(text, str(path), finite=True), "no draft is offered")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        return None
    entries = _clean(doc.get("raw"))
    return entries if any(v not in ("", [], None) for v in entries.values()) else None


def clear_draft() -> None:
    """The answers are safe elsewhere (saved): the draft is no longer needed."""
    with suppress(OSError):
        draft_path().unlink()


WORKLOAD_WORDS = {"inference": "serving", "training": "training", "finetune": "fine-tuning"}


def draft_summary(raw: dict[str, Any]) -> str:
    """What a draft holds, in a few words: `fine-tuning llama-3.1-8b · 6 answers`."""
    parts = [WORKLOAD_WORDS.get(str(raw.get("workload", "")), "")]
    model = str(raw.get("model") or "").strip()
    if model:
        parts.append(model if len(model) <= 40 else model[:39] + "…")
    given = sum(1 for v in raw.values() if v not in ("", [], None))
    head = " ".join(p for p in parts if p)
    count = f"{given} answer{'s' if given != 1 else ''}"
    return f"{head} · {count}" if head else count
