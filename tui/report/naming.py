"""Default report file names: `gpuadvisor-<workload>-<model>-<date>.<ext>`, safe on every filesystem.

The model part comes from user input (a model name, or a config.json path), so it is slugified: lower-case ASCII
letters, digits, single dots and dashes only; no `/`, `..`, spaces or control characters; never empty or hidden.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report import common as c

EXTENSIONS = {"text": "txt", "md": "md", "html": "html", "json": "json"}
MAX_PART = 48


def slugify(text: str, fallback: str = "model") -> str:
    """`Llama 3.1 70B` → `llama-3.1-70b`; `../../etc/passwd` → `etc-passwd`; `<script>` → `script`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9.]+", "-", ascii_text)
    slug = re.sub(r"\.{2,}", "-", slug)  # no `..`
    slug = re.sub(r"-*\.-*", ".", slug)  # `3 .1` → `3.1`, never `-.-`
    slug = re.sub(r"-{2,}", "-", slug)
    slug = slug[:MAX_PART].strip("-.")
    return slug or fallback


def default_filename(result: RecommendResult, fmt: str, today: date | None = None) -> str:
    """A file name (no directory part) for a report in `fmt`; dated `today`, else the report's date, else now."""
    if fmt not in EXTENSIONS:
        raise ValueError(f"unknown report format {fmt!r}")
    if today is not None:
        day = today.isoformat()
    elif result.report is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}", result.report.date):
        day = result.report.date
    else:
        day = date.today().isoformat()
    work = slugify(c.workload(result), "consultation")
    model = slugify(result.profile.model)
    return f"gpuadvisor-{work}-{model}-{day}.{EXTENSIONS[fmt]}"
