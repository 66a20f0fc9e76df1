"""A content-addressed cache of parsed shipped TOML files.

tomllib is pure Python and parsing the shipped files costs about 40 ms, most of a CLI run's loading time. The parse
depends only on the bytes, so the result is stored under the file's SHA-256 (with `marshal`, which handles the plain
dicts/lists/strings/numbers the knowledge files contain). Any failure to read or write the cache is ignored: the
cache can only make loading faster, never change what is loaded.

Trust nothing on disk: an entry carries its format version and the SHA-256 it was made from, and its document must
have the shape of a knowledge file (a table of arrays of tables); anything else — truncated, foreign, from another
version, a dict of the wrong shape — is ignored and rewritten. And should a cached document still fail validation,
the loader parses the text again without the cache (`refresh=True`) before blaming the file.
"""

from __future__ import annotations

import marshal
import os
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.budget import KNOWLEDGE, Budget, check_text, loads_toml
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.files import CACHE_MAX_BYTES, read_file_bytes
from gpuadvisor.knowledge.paths import cache_dir

_FORMAT = f"toml2-py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}"


def parse_toml(text: str, sha256: str, *, use_cache: bool, source: str = "knowledge file",
               refresh: bool = False, budget: Budget = KNOWLEDGE, checked: bool = False) -> dict[str, Any]:
    """tomllib.loads(text) with the nesting limited and the text within `budget` (unless the caller `checked` it),
    served from the cache when `use_cache` and a sound copy for this content exists; `refresh` ignores the copy and
    rewrites it. A cached copy skips the budget's scan (about 80 ms for the shipped files and packs): it exists only
    because this very text passed it (the budget is part of the entry's name)."""
    path = _path(sha256, budget)
    if use_cache and not refresh:
        cached = _read(path, sha256)
        if cached is not None:
            return cached
    if not checked:
        check_text(text, source, budget)
    doc = loads_toml(text, source, checked=True)  # TOMLDecodeError propagates: a broken file is never cached
    if use_cache:
        _store(path, sha256, doc)
    return doc


def _read(path: Path, sha256: str) -> dict[str, Any] | None:
    """The cached document if the entry is sound (format, digest and shape), else None."""
    try:
        entry = marshal.loads(read_file_bytes(path, what="cache file", max_bytes=CACHE_MAX_BYTES))
    except (AdvisorError, ValueError, EOFError, TypeError):
        return None
    if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == _FORMAT and entry[1] == sha256):
        return None
    doc = entry[2]
    return doc if _sound(doc) else None


def _sound(doc: Any) -> bool:
    """A knowledge file's shape: string keys; each value an array of tables or a plain metadata value or table."""
    if not isinstance(doc, dict) or not all(isinstance(k, str) for k in doc):
        return False
    for value in doc.values():
        if isinstance(value, list) and not all(isinstance(row, dict) for row in value):
            return False
    return True


def _path(sha256: str, budget: Budget = KNOWLEDGE) -> Path:
    limits = f"b{budget.tables}-{budget.keys}-{budget.values}"
    return cache_dir() / "knowledge" / f"{sha256}.{_FORMAT}.{limits}"


def _store(path: Path, sha256: str, doc: dict[str, Any]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        data = marshal.dumps((_FORMAT, sha256, doc))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except (OSError, ValueError):
        with suppress(OSError):  # a full disk must not leave half an entry behind
            tmp.unlink()
        # unmarshallable values (TOML dates) or a read-only cache: just don't cache
