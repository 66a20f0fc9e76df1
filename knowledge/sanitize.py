"""The one sanitiser for strings that come from data (overlays, configs, reports, catalogs, model ids, answers).

Why: a model or accelerator name can carry terminal escape sequences (an OSC 52 clipboard write, a cursor move, a
bidi override). Printed raw, they act on the user's terminal. Every channel — text output, the TUI, Markdown, HTML
attributes and titles, SVG titles — passes data through `safe_text`, and long values are cut with `shorten` before
they are echoed in a message.

The rule is `str.isprintable()`: control characters (C0, DEL, C1 such as CSI 0x9b), format characters (bidi
overrides U+202A-U+202E and isolates U+2066-U+2069, U+200E/F, U+061C, zero-width joiners), line and paragraph
separators and unassigned code points become a space. Newlines and tabs survive only where asked (multi-line text
output).

The output edges that call it (issue 41: one function at every edge): standard output and error (`tui.streams`, so
every command's text, Markdown, JSON and `report --from`), every saved file (`tui.report.atomic.save_report`:
reports and answers, from the CLI and the TUI), every download of the served app (`tui.served.deliver`), the TUI's
screens (`clean_strings` on each result; `safe_text` on messages) and the served app's log lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ELLIPSIS = "…"
MAX_SHOWN = 80
"""Longest data value echoed in a message before it is shortened (a 1 MB name is never echoed whole)."""


def safe_text(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every non-printable character replaced by a space (newlines and tabs kept if asked)."""
    if text.isprintable():
        return text
    if not keep_newlines:
        return _replace(text, "")
    lines = text.split("\n")  # per line, so a long clean output is checked at C speed
    if all(line.isprintable() or line.replace("\t", "").isprintable() for line in lines):
        return text
    return "\n".join(line if line.isprintable() else _replace(line, "\t") for line in lines)


def _replace(text: str, keep: str) -> str:
    return "".join(ch if ch.isprintable() or ch in keep else " " for ch in text)


def one_line(text: str) -> str:
    """`safe_text` with runs of whitespace collapsed: a data string cannot break a table row or a heading."""
    return " ".join(safe_text(text).split())


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` made safe and cut to `limit` characters with an ellipsis and the full length."""
    text = safe_text(text)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}{ELLIPSIS} ({len(text):,} characters)"


def show_value(value: Any, limit: int = MAX_SHOWN) -> str:
    """A value for an error message: repr-like, safe, never longer than about `limit` characters."""
    text = repr(value) if isinstance(value, str) else str(value)
    if isinstance(value, list | dict | tuple) and len(text) > limit:
        return f"{type(value).__name__} of {len(value):,} items"
    return shorten(text, limit)


def clean_strings(value: Any) -> Any:
    """Every string inside `value` (dicts, lists, tuples; pydantic models via `model_copy`) made `safe_text`
    (newlines kept, so multi-line notes stay readable): used where a whole result reaches a screen."""
    from pydantic import BaseModel

    if isinstance(value, str):
        return safe_text(value, keep_newlines=True)
    if isinstance(value, BaseModel):
        changes = {}
        for name in type(value).model_fields:
            old = getattr(value, name)
            new = clean_strings(old)
            if new is not old:
                changes[name] = new
        return value.model_copy(update=changes) if changes else value
    if isinstance(value, Mapping):
        items = {k: clean_strings(v) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, list | tuple):
        out = [clean_strings(v) for v in value]
        if all(a is b for a, b in zip(out, value, strict=True)):
            return value
        return tuple(out) if isinstance(value, tuple) else out
    return value
