"""A lifecycle report ([[phase]] answers): the phases as a timeline with the cost of each, the fleet chosen for the
whole and the ways it was weighed against, the findings about how the phases interact, then every phase's own
report in full (each phase is a consultation of its own)."""

from __future__ import annotations

import re

from gpuadvisor.rules.consultation.result import PhaseResult, RecommendResult
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.report.chains import ChainBook, walk
from gpuadvisor.tui.report.markdown import (
    _Doc,
    _table,
    assumptions_section,
    finding,
    footer,
    knowledge_section,
    md,
    to_markdown,
    why_body,
    why_list,
)
from gpuadvisor.tui.report.text import Page, feasibility_lines, finding_line, shared_lines, to_text, why_lines

_HEADING = re.compile(r"^(#{1,5}) ")


def phase_title(p: PhaseResult) -> str:
    """`Phase 2 (serve): GPU recommendation: 13B-parameter model, inference`."""
    return c.one_line(f"Phase {p.phase} ({p.name}): {c.title_for(p)}")


def in_plan(result: RecommendResult, p: PhaseResult) -> str:
    """What the lifecycle's plan runs the phase on, before the phase's own one-workload ranking (which may differ:
    alone, a training phase charges a purchase only the run's share of its price)."""
    life = result.lifecycle
    plan = next((x for x in life.plan if x.phase == p.phase), None) if life else None
    if plan is None:
        return f"Phase {p.phase} ({p.name}): no plan for the whole was found; its own consultation follows."
    how = c.CHOICE_VERB.get(plan.choice, plan.choice)
    return (f"Phase {p.phase} ({p.name}) in the plan for the whole: {how} {plan.title.removeprefix('Buy ')}, "
            f"{c.phase_when(plan)}, {c.usd(c.phase_spend(plan))}. Its own consultation, as one workload, follows.")


def _phase_meta(result: RecommendResult, p: PhaseResult) -> RecommendResult:
    """A phase with the lifecycle report's date and generator, titled as a phase."""
    meta = c.meta_of(result)
    phase = c.with_meta(p, title=phase_title(p))
    assert phase.report is not None
    return phase.model_copy(update={"report": phase.report.model_copy(update={"date": meta.date,
                                                                               "generator": meta.generator})})


def lifecycle_markdown(result: RecommendResult, *, for_html: bool = False, all_findings: bool = False,
                       full: bool = False) -> str:
    """The lifecycle in Markdown; each phase's report follows with its headings one level down."""

    life = result.lifecycle
    assert life is not None
    meta = c.meta_of(result)
    doc = _Doc(for_html)
    book = ChainBook(result, all_findings)
    doc.add(f"# {md(meta.title)}", "",
            f"*{md(meta.date)} · {md(meta.generator)} · knowledge base {md(result.knowledge.version)}*", "")
    doc.add(f"**{md(c.headline(result))}**", "")
    doc.add("## Timeline", "")
    doc.add(*_table(c.TIMELINE_HEADER, [[md(x) for x in row] for row in c.timeline_rows(result)]))
    doc.add(md(c.lifecycle_totals(result)), "")
    doc.chart("timeline")
    doc.add("## Fleet", "", md(life.description), "")
    doc.add(*_table(c.FLEET_HEADER, [[md(x) for x in row] for row in c.fleet_rows(result)], right=(0, 2, 3, 4)))
    doc.add(f"*{md(c.FLEET_NOTE)}*", "")
    doc.add(*[f"- {md(n)}" for n in life.notes], "")
    if life.why and (full or for_html):
        doc.details("Why this fleet?", why_list(walk(life.why, "the fleet", {})))
    if result.to_make_feasible:
        doc.add("## To make it feasible", "", *[f"- {md(t)}" for t in result.to_make_feasible], "")
    doc.add("## How the phases interact", "")
    if not result.warnings:
        doc.add("No finding about the phases together; each phase's own findings are in its section.", "")
    for n, (i, w) in enumerate(c.findings(result, True), start=1):
        words = finding(doc, n, w, result)
        if full or for_html:
            doc.details(f"Why? ({w.id})", why_body(words, book.lines("warning", i)))
    if result.defaults_applied:
        doc.add("## Defaults applied to the whole", "", *[f"- {md(d)}" for d in result.defaults_applied], "")
    for p in result.phases:
        doc.add(f"*{md(in_plan(result, p))}*", "")
        text = to_markdown(_phase_meta(result, p), for_html=for_html, all_findings=all_findings, full=full,
                           chart_prefix=f"p{p.phase}-", phase=True)
        doc.add(*[_HEADING.sub(lambda m: "#" + m.group(1) + " ", line) for line in text.splitlines()], "")
    shows = c.sections(full or for_html, True)
    if not shows.shared:  # once for every phase
        assumptions_section(doc, result, full or for_html, c.assumptions_used(result.phases))
        knowledge_section(doc, result, full or for_html)
        footer(doc, result, full or for_html)
    return doc.text()


def lifecycle_text(result: RecommendResult, *, why: bool = True, all_findings: bool = False,
                   full: bool = False, columns: int | None = None) -> str:
    """The lifecycle as plain text; each phase's report follows in full."""

    life = result.lifecycle
    assert life is not None
    page = Page(columns)
    meta = c.meta_of(result)
    book = ChainBook(result, all_findings)
    lines = page.heading(meta.title)
    lines += [f"{meta.date} · {meta.generator} · knowledge base {result.knowledge.version}", ""]
    lines += [*page.wrap(c.headline(result)), ""]
    lines += page.heading("Timeline", "-")
    lines += page.table(c.TIMELINE_HEADER, c.timeline_rows(result))
    lines += [*page.wrap(c.lifecycle_totals(result)), ""]
    lines += page.heading("Fleet", "-")
    lines += page.table(c.FLEET_HEADER, c.fleet_rows(result), right=(0, 2, 3, 4))
    lines += [*page.wrap(c.FLEET_NOTE), ""]
    for note in life.notes:
        lines += page.wrap(f"- {note}")
    lines.append("")
    if why and life.why:
        lines += ["  Why this fleet:", *why_lines(walk(life.why, "the fleet", {}), page), ""]
    lines += feasibility_lines(result, page)
    lines += page.heading("How the phases interact", "-")
    if not result.warnings:
        lines += ["No finding about the phases together; each phase's own findings are in its section.", ""]
    for n, (i, w) in enumerate(c.findings(result, True), start=1):
        lines += page.wrap(finding_line(n, w, result))
        lines += ["  Why:", *why_lines(book.lines("warning", i), page), ""] if why else [""]
    if result.defaults_applied:
        lines += page.heading("Defaults applied to the whole", "-")
        lines += [line for d in result.defaults_applied for line in page.wrap(f"- {d}")]
        lines.append("")
    for p in result.phases:
        lines += [*page.wrap(in_plan(result, p)), "",
                  to_text(_phase_meta(result, p), why=why, all_findings=all_findings, full=full, columns=columns,
                          phase=True), ""]
    if not c.sections(full, True).shared:
        lines += shared_lines(result, result.phases, why, full, page)
    return "\n".join(lines).rstrip() + "\n"
