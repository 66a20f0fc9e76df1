"""Nesting depth is limited before TOML or JSON is parsed, and checked again on the parsed document.

Why: tomllib and json recurse once per level of `[`/`{`, so `[[[[...` ten thousand deep raises RecursionError (a
traceback) in the parser, and a document nested deep by dotted keys (`a.b.c.…`, which tomllib builds without
recursing) breaks every recursive walk after it (validation, merging, caching). Real files are shallow — the deepest
shipped file (a rule pack) is 8 levels — so anything over `MAX_DEPTH` is refused with the file and line named.

The pre-scan skips strings and comments, so brackets inside a name do not count; it visits only strings and
brackets, so even a file at the size cap is scanned in about a second. TOML is read through `budget.loads_toml`,
which runs this pre-scan with the rest of the parse budget.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from gpuadvisor.knowledge.errors import InputError

MAX_DEPTH = 32
MAX_DIGITS = 100
"""Longest number (in digits) any reader converts: 10^100 is far over every field's bound (the largest is 10^15), and
Python refuses to convert an integer of more than 4,300 digits with a ValueError no user should see."""

_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TOML_TOKENS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]')


_JSON_SKIP = re.compile(r'"(?:[^"\\]|\\.)*"')
_TOML_SKIP = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"[\[{][\]}]")


class NestingError(InputError):
    """A document nested deeper than `MAX_DEPTH` (the message names the file and line; `reason` is the message
    without them, for callers that place the file and line themselves)."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source, self.line, self.reason = source, line, reason
        super().__init__(f"{source}:{line}: {reason}" if line else f"{source}: {reason}")


def check_text(text: str, source: str, syntax: Literal["json", "toml"], limit: int = MAX_DEPTH) -> None:
    """Refuse `text` if its brackets nest deeper than `limit`, before any parser recurses on it."""
    if text.count("[") + text.count("{") <= limit:
        return  # cannot be deeper than the number of opening brackets
    tokens = _JSON_TOKENS if syntax == "json" else _TOML_TOKENS
    skip = _JSON_SKIP if syntax == "json" else _TOML_SKIP
    brackets = _NOT_BRACKET.sub("", skip.sub("", text))
    for _ in range(limit):  # each pass removes the innermost pairs: `limit` passes flatten `limit` levels
        brackets, removed = _PAIR.subn("", brackets)
        if not removed:
            return
    if not _PAIR.search(brackets):
        return  # only unbalanced brackets are left: a syntax error for the parser (its recursion is caught)
    depth = 0
    for m in tokens.finditer(text):  # deeper than the limit: find the line of the first bracket too many
        token = m.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                line = text.count("\n", 0, m.start()) + 1
                raise NestingError(source, line, f"nested more than {limit} levels deep (lists or tables inside "
                                   "one another); a real file is far shallower")
        elif token in ("]", "}"):
            depth = max(0, depth - 1)
    raise NestingError(source, None, f"nested more than {limit} levels deep; a real file is far shallower")


def check_doc(doc: Any, source: str, limit: int = MAX_DEPTH) -> None:
    """Refuse a parsed document deeper than `limit` (iteratively: the check itself cannot overflow the stack)."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            raise NestingError(source, None, f"nested more than {limit} levels deep (tables or dotted keys inside "
                               "one another); a real file is far shallower")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def too_deep(source: str) -> NestingError:
    return NestingError(source, None, f"nested too deeply to parse (more than {MAX_DEPTH} levels)")


def loads_json(text: str, source: str, *, finite: bool = False) -> Any:
    """json.loads with the depth limited before and after and every number's digits counted before it is converted;
    JSONDecodeError propagates for the caller to word. `finite`: refuse Python's NaN/Infinity extensions and numbers
    too large for a float (`1e400`, which json would read as infinity); gpuadvisor never writes them."""
    check_text(text, source, "json")

    def number(digits: str, kind: type[int] | type[float]) -> int | float:
        count = sum(map(str.isdigit, digits)) if len(digits) > MAX_DIGITS else 0  # Python's own limit never speaks
        if count > MAX_DIGITS:
            raise _refused(text, digits, source, f"a number of {count:,} digits; no field takes more than "
                                                 f"{MAX_DIGITS}")
        value = kind(digits)
        if finite and not math.isfinite(value):
            raise _refused(text, digits, source, f"{digits} is too large for a number (numbers must be finite)")
        return value

    try:
        return json.loads(text, parse_int=lambda d: number(d, int), parse_float=lambda d: number(d, float),
                          parse_constant=(lambda name: _not_finite(name, source)) if finite else None)
    except RecursionError:  # its depth is the brackets' depth, checked above
        raise too_deep(source) from None


def _refused(text: str, digits: str, source: str, reason: str) -> NestingError:
    at = text.find(digits)
    return NestingError(source, text.count("\n", 0, at) + 1 if at >= 0 else None, reason)


def _not_finite(name: str, source: str) -> Any:
    raise InputError(f"{source}: {name} is not a number JSON allows (numbers must be finite)")
