"""A parse budget for every TOML text gpuadvisor reads, checked in linear time before the parser sees the text.

Why: tomllib is pure Python and not linear in everything it accepts. A dotted key of 100,000 parts (200 KB) takes
it minutes (each part re-walks the parts before it); a 10 MB file of a million empty tables builds a million dicts
(over 1 GB); a number of 5,000 digits raises Python's "Exceeds the limit (4300 digits)" ValueError from inside
the parser. The nesting pre-scan (`nesting.check_text`) counts brackets only. So, before parsing, `scan` reduces the
text to its skeleton (strings and comments replaced, at C speed by one regular expression) and measures it: the
tables and arrays (each `[` and `{`), the keys (`=`), the values (keys and array elements), the longest dotted key
and the longest run of digits. `check` refuses what is over the budget of its kind of file, naming the file and line.

Every limit is far above a real file (see each budget). A dotted key deeper than `MAX_DEPTH` parts would nest
the document deeper than the nesting limit refuses anyway, and a number of more than `MAX_DIGITS` digits is over
every bound a field has (the largest is 10^15).
"""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge import nesting
from gpuadvisor.knowledge.nesting import MAX_DEPTH, MAX_DIGITS, NestingError


@dataclass(frozen=True)
class Budget:
    """What one file (or one set of overlay files, summed) may hold."""

    what: str
    tables: int
    keys: int
    values: int


ANSWERS = Budget("an answers file", tables=20_000, keys=50_000, values=200_000)
"""A lifecycle of 12 phases has a few hundred keys; the budget stops what would hurt the parser and leaves the
rest to the answers' own checks, which name what is wrong: 1,000 [[phase]] tables (3,000 tables) reach "a
lifecycle holds at most 12", a list of 10,000 entries its field's message."""
KNOWLEDGE = Budget("a knowledge file", tables=200_000, keys=400_000, values=1_000_000)
"""One knowledge file: a shipped one (accelerators.toml: 2,600 tables and arrays, 4,700 keys), an overlay, the quotes
or the refreshed prices (a full catalog: a few thousand instances of about 15 keys)."""
OVERLAY_SET = Budget("the overlay files together", tables=200_000, keys=400_000, values=1_000_000)
"""Every overlay file of one load, summed: four files each under the size cap may not add up to more than one
could hold. 5,000 complete accelerators (165,000 tables and arrays, 300,000 keys) pass; 50,000 do not."""
PACK = Budget("a rule pack", tables=20_000, keys=100_000, values=200_000)
"""The largest shipped pack has about 1,500 tables and arrays and 1,900 keys."""


@dataclass(frozen=True)
class Shape:
    """What a TOML text holds, counted on its skeleton (`scan`)."""

    tables: int = 0
    """Tables and arrays: headers, inline tables and arrays (each `[` and `{`), what costs a parser memory."""
    keys: int = 0
    values: int = 0
    dates: bool = False
    """Whether a bare TOML date or time may be in it (`as_of = 2026-10-01`, not `"2026-10-01"`)."""

    def __add__(self, other: Shape) -> Shape:
        return Shape(self.tables + other.tables, self.keys + other.keys, self.values + other.values,
                     self.dates or other.dates)


class BudgetError(NestingError):
    """A text over its parse budget (a NestingError, so every reader already words and places it)."""


_SKIP = re.compile(
    r'"""(?:[^"\\]++|\\[\s\S]|"(?!""))*+"""(?:""?)?+'  # multi-line basic: escapes, ends at """ (plus up to 2 ")
    r"|'''(?:[^']++|'(?!''))*+'''(?:''?)?+"  # multi-line literal
    r'|"(?:[^"\\\n]++|\\.)*+"'  # basic
    r"|'[^'\n]*+'"  # literal
    r"|#[^\n]*+"  # comment
)
"""A string of any of TOML's four kinds exactly as TOML ends it, or a comment: replaced by `""` in the skeleton (an
unterminated string is left as it is, for the parser to report). Possessive runs keep it linear and at C speed."""
_KEY_CHARS = str.maketrans("", "", string.ascii_letters + string.digits + '_-" \t')
"""Deleting what a bare or quoted key part (or a number) is made of, and the blanks around dots, turns a dotted key of
n parts into n - 1 dots in a row: str.translate and `in` then find one at C speed (a float is one dot, a date
none; a newline, `=`, `,` and brackets stay and separate)."""
_DIGIT_CHARS = str.maketrans({**dict.fromkeys(string.digits, "0"), "_": None})
"""Digits become "0" and the underscores TOML allows between them go: a number's digits are then a run of zeros."""
_DATE = re.compile(r"-[0-9]{2}-[0-9]{2}|:[0-9]{2}:[0-9]{2}")  # literal first character: a fast search
_DOTTED = re.compile(rf'(?:[A-Za-z0-9_-]++|"")(?:[ \t]*+\.[ \t]*+(?:[A-Za-z0-9_-]++|"")){{{MAX_DEPTH}}}')


def skeleton(text: str) -> str:
    """`text` with every string and comment replaced by `""` (keys, `=`, brackets, commas and numbers remain)."""
    return _SKIP.sub('""', text)


def scan(text: str, source: str) -> Shape:
    """Count what `text` holds and refuse, before any parsing, a dotted key or a number no real file has. Every step
    is one pass of a regular expression or a str method over the text (a 2.7 MB overlay: about 0.1 s)."""
    skel = skeleton(text)
    if "." * MAX_DEPTH in skel.translate(_KEY_CHARS):
        m = _DOTTED.search(skel)
        raise BudgetError(source, _line(text, skel, m.start()) if m else None,
                          f"nested more than {MAX_DEPTH} levels deep (a dotted key of more than {MAX_DEPTH} "
                          "parts, a.b.c...); a real file is far shallower")
    if "0" * (MAX_DIGITS + 1) in skel.translate(_DIGIT_CHARS):
        m = re.search(rf"[0-9_]{{{MAX_DIGITS + 1},}}", skel)
        digits = sum(map(str.isdigit, m.group())) if m else MAX_DIGITS + 1
        raise BudgetError(source, _line(text, skel, m.start()) if m else None,
                          f"a number of {digits:,} digits; no field takes more than {MAX_DIGITS}")
    keys = skel.count("=")
    return Shape(tables=skel.count("[") + skel.count("{"), keys=keys, values=keys + skel.count(","),
                 dates=_DATE.search(skel) is not None)


def check(shape: Shape, budget: Budget, source: str) -> None:
    """Refuse `shape` if it holds more than `budget` allows."""
    for name, have, most in (("tables and arrays", shape.tables, budget.tables), ("keys", shape.keys, budget.keys),
                             ("values", shape.values, budget.values)):
        if have > most:
            raise BudgetError(source, None, f"{have:,} {name}, over the {most:,} {budget.what} may hold; a real "
                                            "file holds far fewer")


def check_text(text: str, source: str, budget: Budget) -> Shape:
    """The nesting pre-scan, `scan` and `check`: the one call a reader makes before tomllib sees `text`; returns the
    shape (for sums)."""
    nesting.check_text(text, source, "toml")
    shape = scan(text, source)
    check(shape, budget, source)
    return shape


def _line(text: str, skel: str, at: int) -> int:
    """The line of `text` that position `at` of its skeleton falls on (strings and comments may span lines)."""
    line, pos = 1, 0
    for m in _SKIP.finditer(text):
        gap = m.start() - pos  # text before this string/comment is the same in both
        if at < gap:
            break
        at -= gap
        line += text.count("\n", pos, m.start())
        if at < 2:  # inside the `""` that replaced it
            return line
        at -= 2
        line += m.group().count("\n")
        pos = m.end()
    return line + text.count("\n", pos, pos + at)


def loads_toml(text: str, source: str, budget: Budget | None = None, *, checked: bool = False) -> dict[str, Any]:
    """tomllib.loads with the depth limited before and after and the text within `budget` (default: an answers
    file's; see `budget`) before; `checked`: the caller has checked the budget (`budget.check_text`) already.
    TOMLDecodeError propagates for the caller to word."""
    if not checked:  # the budget's check includes the nesting pre-scan
        check_text(text, source, budget or ANSWERS)
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise nesting.too_deep(source) from None
    nesting.check_doc(doc, source)
    return doc


def read_toml(path: Path | str, *, what: str, max_bytes: int, budget: Budget | None = None) -> dict[str, Any]:
    """A TOML file read as every reader reads one: a regular UTF-8 file under `max_bytes` (`files.read_text_file`),
    within `budget` (default: a knowledge file's) and the nesting limit. Raises an AdvisorError naming the file, or
    TOMLDecodeError for the caller to word."""
    from gpuadvisor.knowledge.files import read_text_file

    return loads_toml(read_text_file(path, what=what, max_bytes=max_bytes), str(path), budget or KNOWLEDGE)
