"""A content-addressed cache of parsed shipped TOML files.

tomllib is pure Python and parsing the shipped files costs about 40 ms, most of a CLI run's loading time. The parse
depends only on the bytes, so the result is stored under the file's SHA-256 (with `marshal`, which handles the plain
dicts/lists/strings/numbers the knowledge files contain). Any failure to read or write the cache is ignored: the
cache can only make loading faster, never change what is loaded.
"""

from __future__ import annotations

import marshal
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.files import CACHE_MAX_BYTES, read_file_bytes
from gpuadvisor.knowledge.paths import cache_dir

_FORMAT = f"toml1-py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}"


def parse_toml(text: str, sha256: str, *, use_cache: bool) -> dict[str, Any]:
    """tomllib.loads(text), served from the cache when `use_cache` and a copy for this content exists."""
    if not use_cache:
        return tomllib.loads(text)
    path = _path(sha256)
    try:
        cached = marshal.loads(read_file_bytes(path, what="cache file", max_bytes=CACHE_MAX_BYTES))
        if isinstance(cached, dict):
            return cached
    except (AdvisorError, ValueError, EOFError, TypeError):
        pass
    doc = tomllib.loads(text)  # TOMLDecodeError propagates: a broken file is never cached
    _store(path, doc)
    return doc


def _path(sha256: str) -> Path:
    return cache_dir() / "knowledge" / f"{sha256}.{_FORMAT}"


def _store(path: Path, doc: dict[str, Any]) -> None:
    try:
        data = marshal.dumps(doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass  # unmarshallable values (TOML dates) or a read-only cache: just don't cache
