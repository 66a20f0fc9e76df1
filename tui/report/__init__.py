"""Recommendation reports a person would forward: Markdown, HTML, JSON and plain text, saved atomically.

Used by `gpuadvisor recommend --format … --output …`, `gpuadvisor report` and the TUI's save dialog:

    text = render(result, "html")                       # fills in the report header (title, date, generator)
    path = save_report(text, default_filename(result, "html"), force=False)   # ReportExistsError → ask, retry

Only this package imports markdown-it (through `render`, lazily), so `--format json` pays for nothing else.
"""

from __future__ import annotations

from datetime import date

from gpuadvisor.rules.result import RecommendResult
from gpuadvisor.tui.report.atomic import ReportExistsError, ReportSaveError, save_report
from gpuadvisor.tui.report.common import with_meta
from gpuadvisor.tui.report.naming import EXTENSIONS, default_filename, slugify

FORMATS: tuple[str, ...] = ("text", "md", "html", "json")
ALIASES = {"txt": "text", "markdown": "md", "htm": "html"}

__all__ = [
    "ALIASES",
    "EXTENSIONS",
    "FORMATS",
    "ReportExistsError",
    "ReportSaveError",
    "default_filename",
    "format_for_path",
    "normalize_format",
    "render",
    "save_report",
    "slugify",
    "with_meta",
]


def normalize_format(fmt: str) -> str:
    """`markdown` → `md`; raises ValueError naming the formats for anything unknown."""
    name = ALIASES.get(fmt.lower(), fmt.lower())
    if name not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return name


def format_for_path(path: str) -> str | None:
    """The format a file name's extension implies (`plan.html` → `html`), or None."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    try:
        return normalize_format(suffix) if suffix else None
    except ValueError:
        return None


def render(result: RecommendResult, fmt: str, *, today: date | None = None, why: bool = True,
           all_findings: bool = False, full: bool = False, columns: int | None = None) -> str:
    """The report in `fmt` (text, md, html, json). A result without a report header gets one dated `today`.
    `why=False` drops the explanation chains from the text format; `full` gives Markdown and text everything (every
    chain, rule-out, answer and price: by default they are what a reader reads in five minutes; the HTML folds the
    rest into `<details>` and the JSON holds it all); `all_findings` lists every finding instead of the few shown by
    default (JSON always holds them all). `columns`: the terminal's width, which text tables then fit (None: a file
    or a pipe, one line a row)."""
    fmt = normalize_format(fmt)
    result = with_meta(result, today)
    if fmt == "json":
        from gpuadvisor.tui.report.jsonfmt import to_json

        return to_json(result)
    if fmt == "html":
        from gpuadvisor.tui.report.html import to_html

        return to_html(result, all_findings=all_findings)
    if result.lifecycle is not None:  # the timeline, the fleets, then every phase's own report
        from gpuadvisor.tui.report.lifecycle import lifecycle_markdown, lifecycle_text

        return (lifecycle_markdown(result, all_findings=all_findings, full=full) if fmt == "md"
                else lifecycle_text(result, why=why, all_findings=all_findings, full=full, columns=columns))
    if fmt == "md":
        from gpuadvisor.tui.report.markdown import to_markdown

        return to_markdown(result, all_findings=all_findings, full=full)
    from gpuadvisor.tui.report.text import to_text

    return to_text(result, why=why, all_findings=all_findings, full=full, columns=columns)
