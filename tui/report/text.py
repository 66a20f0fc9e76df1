"""The report as plain text for a terminal or an e-mail body: aligned columns, no markup, no colour."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from gpuadvisor.knowledge.sanitize import safe_text
from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult, Warning
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.report.chains import ChainBook, ChainLine, why_parts
from gpuadvisor.tui.words import finding_words

WIDTH = 100
"""Widest a prose line or heading gets: a file, a pipe or a wide terminal (a narrower terminal: its width)."""
MIN_PROSE = 40
"""Narrowest prose is wrapped at, however narrow the terminal: below it a sentence is more breaks than words."""

MIN_COLUMN = 12
"""Narrowest a wrapped text column gets: a GPU name or a price still reads on two or three lines."""


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = (),
          columns: int | None = None) -> list[str]:
    """Columns padded to their widest cell; `right` lists the columns to right-align (numbers). Given the
    terminal's `columns`, a wider table wraps its widest columns (a long option title, a cost's arithmetic) onto
    continuation lines; without (a file, a pipe) every row stays one line, for grep and diff."""
    cells = [[c.one_line(x) for x in header], *[[c.one_line(x) for x in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    if columns is not None:
        widths = _fit(widths, columns)

    def line(row: Sequence[str]) -> str:
        return "  ".join(cell.rjust(w) if i in right else cell.ljust(w)
                         for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()

    def lines(row: Sequence[str]) -> list[str]:
        """The row, its over-wide cells wrapped: continuation lines carry blanks in the other columns."""
        parts = [textwrap.wrap(cell, w, break_on_hyphens=False) or [""] if len(cell) > w else [cell]
                 for cell, w in zip(row, widths, strict=True)]
        height = max(len(p) for p in parts)
        return [line([p[k] if k < len(p) else "" for p in parts]) for k in range(height)]

    return [*lines(cells[0]), "  ".join("-" * w for w in widths), *[x for r in cells[1:] for x in lines(r)], ""]


def _fit(widths: list[int], width: int) -> list[int]:
    """Column widths within `width` (two spaces between columns): the widest column gives up a character at a time,
    down to MIN_COLUMN (short figures are never the widest, so they keep theirs)."""
    out = list(widths)
    while sum(out) + 2 * (len(out) - 1) > width:
        widest = max(range(len(out)), key=lambda i: out[i])
        if out[widest] <= MIN_COLUMN:
            break
        out[widest] -= 1
    return out


@dataclass(frozen=True)
class Page:
    """Where the text goes: given the terminal's `columns`, prose and headings wrap at its width (at most WIDTH) and
    tables fit it; without (a file, a pipe) prose wraps at WIDTH and every table row stays one line, for grep."""

    columns: int | None = None

    @property
    def width(self) -> int:
        return WIDTH if self.columns is None else max(MIN_PROSE, min(WIDTH, self.columns))

    def heading(self, text: str, underline: str = "=") -> list[str]:
        """A title over its rule, wrapped like the prose (an option's full title can be longer)."""
        lines = textwrap.wrap(c.one_line(text), self.width, break_on_hyphens=False) or [""]
        return [*lines, underline * max(len(line) for line in lines), ""]

    def wrap(self, text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(c.one_line(text), self.width, initial_indent=indent, subsequent_indent=indent + "  ",
                             break_on_hyphens=False, break_long_words=False) or [indent]

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
        return table(header, rows, right, self.columns)


def feasibility_lines(result: RecommendResult, page: Page) -> list[str]:
    """The "To make it feasible" section, when the consultation has suggestions."""
    if not result.to_make_feasible:
        return []
    lines = page.heading("To make it feasible", "-")
    for item in result.to_make_feasible:
        lines += page.wrap(f"- {item}")
    return [*lines, ""]


def why_lines(chain: Sequence[ChainLine], page: Page, indent: str = "    ") -> list[str]:
    lines: list[str] = []
    for line in chain:
        what, origin = why_parts(line)
        lines += page.wrap(f"- {what}" + (f" [{origin}]" if origin else ""), indent + "  " * line.depth)
    return lines


def _ranking(recs: Sequence[Recommendation], speed: str, page: Page) -> list[str]:
    rows = [[str(r.rank), r.title, f"{c.gb(r.memory.total)}/{c.fixed(r.memory.capacity, 0)} GB", c.speed(r),
             c.headline_cost(r.cost), c.usd(r.decision_cost.usd)] for r in recs]
    return page.table(["#", "Option", "Memory/GPU", speed, "Cost", "Total"], rows, right=(0, 3, 5))


def _option(r: Recommendation, chain: Sequence[ChainLine], why: bool, page: Page) -> list[str]:
    m = r.memory
    lines = page.heading(f"{r.rank}. {r.title}", "-")
    lines += page.wrap(f"{c.hardware(r)} · {c.layout(r)} · {c.where(r)} · {'fits' if r.fits else 'DOES NOT FIT'}")
    lines.append("")
    rows = [[label, c.gb(getattr(m, field))] for field, label in c.memory_parts(r)]
    rows += [["Total", c.gb(m.total)], ["Capacity", c.gb(m.capacity)],
             ["Headroom to keep free", c.gb(m.headroom_required)], ["Used", c.pct(m.utilization)]]
    lines += page.table(["Memory per GPU", ""], rows, right=(1,))
    lines += page.table(["Speed", ""], c.speed_items(r), right=(1,))
    lines += page.table(["Cost", ""], c.cost_items(r.cost), right=(1,))
    rows = [[part, dollars, how] for part, dollars, how in c.decision_rows(r)]
    lines += page.table([f"What it costs ({r.decision_cost.horizon})", "USD", "How"], rows, right=(1,))
    if why:
        lines += ["  Why:", *why_lines(chain, page), ""]
    return lines


def to_text(result: RecommendResult, *, why: bool = True, all_findings: bool = False, full: bool = False,
            columns: int | None = None, phase: bool = False) -> str:
    """The report as plain text. `why=False` leaves out the explanation chains (a terminal summary); each line then
    names its rule, and `--why` or the Markdown/HTML reports give the chains. `all_findings` lists every finding,
    not only the few shown by default; `full` lists every rule-out, answer, assumption and price (by default the
    rule-outs are grouped by rule, the answers are those you set, the assumptions those the workload reads). One
    workload: a lifecycle ([[phase]] answers) is `lifecycle.lifecycle_text`,
    which reports each phase with this (`phase`: the sections of a part, `common.sections`; `report.render`
    chooses)."""
    shows = c.sections(full, phase)
    page = Page(columns)
    meta = c.meta_of(result)
    book = ChainBook(result, all_findings)
    titles = {r.option: r.title for r in [*result.recommendations, *result.runners_up]}
    lines = page.heading(meta.title)
    lines += [f"{meta.date} · {meta.generator} · knowledge base {result.knowledge.version}", ""]
    lines += [*page.wrap(c.headline(result)), ""]
    lines += page.heading("What you asked", "-")
    lines += page.table(["", ""], c.requirements(result))[2:]
    verdict = c.summary(result)
    lines += page.wrap(verdict if result.feasible else f"NOT FEASIBLE. {verdict}")
    lines.append("")
    lines += feasibility_lines(result, page)

    lines += page.heading("Recommended options", "-")
    speed = c.speed_header(result)
    lines += (_ranking(result.recommendations, speed, page) if result.recommendations
              else ["No option was recommended.", ""])
    if result.runners_up and shows.runners_up:
        lines += ["Runners-up:", "", *_ranking(result.runners_up, speed, page)]
    if result.recommendations or result.runners_up:
        more = "" if shows.runners_up or not result.runners_up else \
            f" {c.count_of(len(result.runners_up), 'runner-up', 'runners-up')}: --full lists them."
        lines += [*page.wrap(c.COST_NOTE + more), ""]
        if result.contracts:
            lines += [*page.wrap(result.contracts), ""]

    lines += page.heading("Findings", "-")
    lines += [*page.wrap(c.findings_intro(result, all_findings, "--all-findings")), ""]
    for n, (i, w) in enumerate(c.findings(result, all_findings), start=1):
        lines += page.wrap(finding_line(n, w, result))
        if w.options:
            lines += page.wrap(f"Concerns: {c.concerns(w, titles)}", "   ")
        if all_findings:
            lines += [line for d in w.details for line in page.wrap(f"- {d}", "   ")]
        lines += ["  Why:", *why_lines(book.lines("warning", i), page), ""] if why else [""]

    profile = book.lines("profile", 0)
    if why and profile:
        lines += page.heading("How the workload's needs were derived", "-")
        lines += [*why_lines(profile, page, ""), ""]
    detailed = result.recommendations[:shows.details]
    for i, r in enumerate(detailed):
        lines += _option(r, book.lines("option", i), why, page)
    if len(detailed) < len(result.recommendations):
        lines += [*page.wrap("The other options' figures: --full."), ""]

    lines += page.heading("Ruled out", "-")
    if full:
        for i, o in enumerate(result.ruled_out):
            lines += page.wrap(f"- {o.name} ({o.family}): {o.reason} [{o.rule}"
                               f"{f', {o.heuristic}' if o.heuristic else ''}]")
            if why:
                lines += why_lines(book.lines("ruled_out", i), page)
    else:
        for g in c.ruled_out_groups(result):
            lines += page.wrap(f"- {g.rule}: {len(g.names)} option{'s' if len(g.names) != 1 else ''} "
                               f"({c.names_text(g.names)}), e.g. {g.reason}")
        if result.ruled_out:
            lines += ["", *page.wrap(f"{len(result.ruled_out)} options were ruled out: --full lists each with "
                                     "its reason.")]
    lines += ["" if result.ruled_out else "Nothing was ruled out.", ""]

    lines += page.heading("Your answers", "-")
    rows = c.answer_rows(result)
    if full:
        lines += page.table(["Answer", "Value", "Given by"],
                            [[a.key, a.value, "default" if a.default else "you"] for a in rows])
    else:
        lines += page.table(["Answer", "Value"], [[a.key, a.value] for a in rows if not a.default])
        if c.defaults_line(result):
            lines += [*page.wrap(f"Defaults used: {c.defaults_line(result)}."), ""]
    if shows.shared:
        lines += shared_lines(result, [result], why, full, page)
    return "\n".join(printable(line) for line in lines).rstrip() + "\n"


def shared_lines(result: RecommendResult, parts: Sequence[RecommendResult], why: bool, full: bool,
                 page: Page) -> list[str]:
    """The assumptions `parts` read (every one with `full`), the knowledge base and the footer: once a report."""
    lines = page.heading("Assumptions and error bands", "-")
    used = result.assumptions if full else c.assumptions_used(parts)
    for a in used:  # one wrapped line each: the titles are sentences, a table ran to 250 columns
        lines += page.wrap(f"- {a.title}: {f'{c.number(a.value)} {a.unit}'.strip()} [{a.source}]")
    lines.append("")
    lines += page.heading("Knowledge base and prices", "-")
    lines += [f"Knowledge base version {result.knowledge.version}", ""]
    if full:
        lines += page.table(["Price", "Id", "As of"], [[p.name, p.key, p.as_of] for p in c.price_rows(result)])
    if not why:
        lines += [*page.wrap("Explanations: add --why for the chain behind every line (--full for every rule-out too), "
                             "or save the report as html (folded) or md with --full."), ""]
    lines.append(f"{c.meta_of(result).generator} · {result.rules_fired} rules fired · schema version "
                 f"{result.schema_version}")
    return lines


def finding_line(n: int, w: Warning, result: RecommendResult) -> str:
    """`2. [ADVICE] H10: PyTorch: …`; a learner's without the id and the practitioner's asides (tui/words.py)."""
    words = finding_words(w, result)
    return f"{n}. [{w.severity.upper()}] " + (f"{words.label}: " if words.label else "") + words.message


def printable(line: str) -> str:
    """No control characters reach the terminal (a crafted report must not be able to send escape sequences)."""
    return safe_text(line)
