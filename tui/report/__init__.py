"""Recommendation reports a person would forward: Markdown, HTML, JSON and plain text, saved atomically.

Used by `gpuadvisor recommend --format … --output …`, `gpuadvisor report` and the TUI's save dialog:

    text = render(result, "html")                       # fills in the report header (title, date, generator)
    path = save_report(text, default_filename(result, "html"), force=False)   # ReportExistsError → ask, retry

Only this package imports markdown-it (through `render`, lazily), so `--format json` pays for nothing else.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import date

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report.atomic import ReportExistsError, ReportSaveError, save_report
from gpuadvisor.tui.report.common import with_meta
from gpuadvisor.tui.report.naming import EXTENSIONS, default_filename, slugify

FORMATS: tuple[str, ...] = ("text", "md", "html", "json")
ALIASES = {"txt": "text", "markdown": "md", "htm": "html"}

__all__ = [
    "ALIASES",
    "EXTENSIONS",
    "FORMATS",
    "Contents",
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


@dataclass(frozen=True)
class Contents:
    """What a report holds, decided once for every command that prints or saves one (`recommend`, `report --from`,
    the TUI's save dialog): the same result with the same contents renders the same text wherever it is asked for.
    By default a report is what its reader reads (the Markdown of a consultation in ≤ 300 lines, of a lifecycle in
    ≤ 400, the JSON in ≤ 200 KB: tests/report/test_budgets.py); `why` adds the explanation chains to the text
    format, `all_findings` every finding, `full` everything (every chain, rule-out, answer and price)."""

    why: bool = False
    all_findings: bool = False
    full: bool = False

    @classmethod
    def add_flags(cls, parser: argparse.ArgumentParser) -> None:
        """The flags that choose a report's contents, the same on every command that writes one."""
        parser.add_argument("--why", action="store_true",
                            help="text format: the explanation chain of every line (Markdown and HTML: --full / "
                                 "folded; JSON holds them)")
        parser.add_argument("--all-findings", action="store_true",
                            help="list every finding, not only the few that matter most")
        parser.add_argument("--full", action="store_true",
                            help="everything: every why-chain, rule-out, answer, assumption and price (by default a "
                                 "report is what a reader reads in five minutes; HTML folds the rest)")

    @classmethod
    def of(cls, args: argparse.Namespace) -> Contents:
        return cls(why=bool(args.why), all_findings=bool(args.all_findings), full=bool(args.full))


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


def render(result: RecommendResult, fmt: str, *, today: date | None = None, why: bool = False,
           all_findings: bool = False, full: bool = False, columns: int | None = None,
           contents: Contents | None = None) -> str:
    """The report in `fmt` (text, md, html, json). A result without a report header gets one dated `today`.
    `contents` (or the three flags it stands for, see `Contents`) says what it holds: `why` adds the explanation
    chains to the text format; `full` gives every format everything (every chain, rule-out, answer and price: by
    default Markdown and text are what a reader reads in five minutes, the HTML folds the rest into `<details>` with
    each rule-out's chain to its veto and premises, the JSON holds it all within its budget); `all_findings` lists
    every finding instead of the few shown by default (JSON always holds them all). `columns`: the terminal's
    width, which text tables then fit (None: a file or a pipe, one line a row)."""
    if contents is not None:
        why, all_findings, full = contents.why, contents.all_findings, contents.full
    why = why or full  # everything includes the chains
    fmt = normalize_format(fmt)
    result = with_meta(result, today)
    if fmt == "json":
        from gpuadvisor.tui.report.jsonfmt import to_json

        return to_json(result, full=full)
    if fmt == "html":
        from gpuadvisor.tui.report.html import to_html
        from gpuadvisor.tui.report.jsonfmt import RULED_OUT_DEPTH, cut_ruled_out

        # its folded rule-outs keep the veto and its premises, as a JSON past its budget does, so the HTML of a
        # saved JSON (`report --from`) is the HTML `recommend` writes; `full` keeps every step
        return to_html(result if full else cut_ruled_out(result, RULED_OUT_DEPTH), all_findings=all_findings)
    if result.lifecycle is not None:  # the timeline, the fleets, then every phase's own report
        from gpuadvisor.tui.report.lifecycle import lifecycle_markdown, lifecycle_text

        return (lifecycle_markdown(result, all_findings=all_findings, full=full) if fmt == "md"
                else lifecycle_text(result, why=why, all_findings=all_findings, full=full, columns=columns))
    if fmt == "md":
        from gpuadvisor.tui.report.markdown import to_markdown

        return to_markdown(result, all_findings=all_findings, full=full)
    from gpuadvisor.tui.report.text import to_text

    return to_text(result, why=why, all_findings=all_findings, full=full, columns=columns)
