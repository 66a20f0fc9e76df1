"""The report as GitHub-flavoured Markdown; also the source the HTML report is converted from.

Every piece of text that came from the user or the knowledge base goes through `md()`, which backslash-escapes what
Markdown or GitHub would otherwise interpret (raw HTML, links, emphasis, table pipes, `$` maths). Collapsible chains are
`<details>` blocks on GitHub; for HTML they are `::: details` containers that the HTML writer turns into real elements,
so that it can convert with raw HTML switched off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gpuadvisor.knowledge.sanitize import safe_text
from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult, Warning
from gpuadvisor.rules.sizing.units import flops_text
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.report.chains import ChainBook, ChainLine, sources, why_parts
from gpuadvisor.tui.words import FindingWords, finding_words

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|~&$!#])")
_LIST_MARKER = re.compile(r"^(?:[-+=]|\d{1,9}[.)])(?=\s|$)|^:")


def md(text: str) -> str:
    """Text made inert for Markdown: one line, punctuation that means something escaped with a backslash.

    A leading list marker (`- `, `1. `) or colon is escaped too, since the text may start a list item or paragraph.
    """
    escaped = _SPECIAL.sub(r"\\\1", c.one_line(text))
    match = _LIST_MARKER.match(escaped)
    if match is None:
        return escaped
    end = match.end()
    return escaped[: end - 1] + "\\" + escaped[end - 1 :]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """A GitHub table; cells are already escaped. `right` lists the columns to right-align (numbers)."""
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


class _Doc:
    """Accumulates lines; knows how the two targets (GitHub, HTML) spell collapsible blocks and charts."""

    def __init__(self, for_html: bool, chart_prefix: str = "") -> None:
        self.lines: list[str] = []
        self.for_html = for_html
        self.chart_prefix = chart_prefix

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def details(self, summary: str, body: Sequence[str]) -> None:
        """A collapsed block; `summary` is plain text written by this module (never user text)."""
        if self.for_html:
            self.add(f"::: details {summary}", "", *body, "", ":::", "")
        else:
            self.add("<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", "")

    def columns(self, blocks: Sequence[Sequence[str]]) -> None:
        """Blocks side by side in HTML (a grid); one after another in Markdown."""
        for block in blocks:
            if self.for_html:
                self.add("::: col", "", *block, "", ":::", "")
            else:
                self.add(*block)

    def chart(self, name: str) -> None:
        if self.for_html:
            self.add(f"::: chart {self.chart_prefix}{name}", ":::", "")

    def text(self) -> str:
        """The document; every line already escaped by `md()`, and control characters stripped once more from the
        whole (a Markdown file is often read with `cat`)."""
        return safe_text("\n".join(self.lines).rstrip() + "\n", keep_newlines=True)


def why_list(chain: Sequence[ChainLine]) -> list[str]:
    """A chain as a nested bullet list (depth = indentation), each step followed by its rule and source."""
    lines = []
    for line in chain:
        what, origin = why_parts(line)
        tail = f" — *{md(origin)}*" if origin else ""
        lines.append(f"{'  ' * line.depth}- {md(what)}{tail}")
    return lines


def _steps_label(chain: Sequence[ChainLine]) -> str:
    return f"{len(chain)} step{'s' if len(chain) != 1 else ''}"


def _ranking(doc: _Doc, recs: Sequence[Recommendation], speed: str) -> None:
    rows = [[str(r.rank), md(r.title), md(f"{c.fixed(r.memory.total, 1)} / {c.fixed(r.memory.capacity, 0)} GB"),
             md(c.pct(r.memory.utilization)), md(c.speed(r)), md(c.headline_cost(r.cost)),
             md(c.usd(r.decision_cost.usd))] for r in recs]
    doc.add(*_table(["#", "Option", "Memory per GPU", "Used", md(speed), "Cost", "Total"], rows,
                    right=(0, 2, 3, 4, 6)))


def finding(doc: _Doc, n: int, w: Warning, result: RecommendResult, heading: str = "###") -> FindingWords:
    """A finding's heading and message in its reader's words (tui/words.py); returns the words."""
    words = finding_words(w, result)
    label = f" · {md(words.label)}" if words.label else ""
    doc.add(f"{heading} {n}. {w.severity.upper()}{label}", "", md(words.message), "")
    return words


def why_body(words: FindingWords, chain: Sequence[ChainLine]) -> list[str]:
    """A finding's chain, opened by the rule's own words when the top showed a learner's."""
    return [*([f"*{md(words.whole)}*", ""] if not words.label else []), *why_list(chain)]


def _warning(doc: _Doc, n: int, w: Warning, result: RecommendResult, chain: Sequence[ChainLine],
             titles: dict[str, str], all_findings: bool, folded: bool) -> None:
    words = finding(doc, n, w, result)
    if w.options:
        doc.add(f"*Concerns: {md(c.concerns(w, titles))}*", "")
    if all_findings and w.details:
        doc.add(*[f"- {md(d)}" for d in w.details], "")
    if folded:
        doc.details(f"Why? ({_steps_label(chain)})", why_body(words, chain))


def _option(doc: _Doc, r: Recommendation, chain: Sequence[ChainLine], folded: bool) -> None:
    """One option: the full tables side by side when the report carries everything (`folded`: HTML or --full),
    else one table of the figures a reader compares."""
    doc.add(f"### {r.rank}. {md(r.title)}", "",
            f"{md(c.hardware(r))} · {md(c.layout(r))} · {md(c.where(r))} · "
            f"{'fits' if r.fits else '**does not fit**'} · **{md(c.usd(r.decision_cost.usd))}** "
            f"{md(r.decision_cost.horizon)}", "")
    if not folded:
        rows = [["Memory per GPU", md(c.memory_line(r))], *[[k, md(v)] for k, v in c.speed_items(r)],
                *[[k, md(v)] for k, v in c.cost_items(r.cost) if k not in c.COST_DETAIL_ONLY]]
        if len(r.decision_cost.parts) > 1:
            rows.append([f"Total ({md(r.decision_cost.horizon)})", md(c.decision_line(r))])
        doc.add(*_table(["Figure", "Value"], rows))
        if r.warnings:
            doc.add(f"Findings about this option: {md(', '.join(r.warnings))}", "")
        return
    m = r.memory
    rows = [[label, md(c.gb(getattr(m, field)))] for field, label in c.memory_parts(r)]
    rows += [["**Total**", f"**{md(c.gb(m.total))}**"], ["Capacity", md(c.gb(m.capacity))],
             ["Headroom to keep free", md(c.gb(m.headroom_required))], ["Used", md(c.pct(m.utilization))]]
    doc.columns([
        ["#### Memory per GPU", "", *_table(["Part", "GB"], rows, right=(1,))],
        ["#### Speed", "", *_table(["Measure", "Value"], [[k, md(v)] for k, v in c.speed_items(r)], right=(1,))],
        ["#### Cost", "", *_table(["Item", "Value"], [[k, md(v)] for k, v in c.cost_items(r.cost)], right=(1,))],
    ])
    rows = [[md(part) if part != "total" else "**total**", md(dollars) if part != "total" else f"**{md(dollars)}**",
             md(how)] for part, dollars, how in c.decision_rows(r)]
    doc.add(f"#### What it costs ({md(r.decision_cost.horizon)})", "", *_table(["Part", "USD", "How"], rows,
                                                                                 right=(1,)))
    if r.warnings:
        doc.add(f"Findings about this option: {md(', '.join(r.warnings))}", "")
    cited = sources(r.why)
    if cited:
        doc.add(f"Sources: {md('; '.join(cited))}", "")
    doc.details(f"Why this option? ({_steps_label(chain)})", why_list(chain))


def _ruled_out(doc: _Doc, result: RecommendResult, book: ChainBook, folded: bool) -> None:
    """The rule-outs grouped by rule (what a reader scans); the whole list with its chains folded or with --full."""
    doc.add("## Ruled out", "")
    if not result.ruled_out:
        doc.add("Nothing was ruled out.", "")
        return
    groups = c.ruled_out_groups(result)
    rows = [[md(f"{g.rule} ({g.heuristic})" if g.heuristic and g.heuristic != g.rule else g.rule),
             str(len(g.names)), md(c.names_text(g.names)), md(g.reason)] for g in groups]
    doc.add(*_table(["Rule", "Options", "Which", "For example"], rows, right=(1,)))
    if not folded:
        doc.add(f"*{len(result.ruled_out)} options were ruled out; `--full` lists each with its reason and why "
                "(the HTML report folds them).*", "")
        return
    rows = [[md(o.name), _code(o.family),
             md(o.reason), md(f"{o.rule} ({o.heuristic})" if o.heuristic else o.rule)] for o in result.ruled_out]
    body = _table(["Option", "Id", "Reason", "Rule"], rows)
    for i, o in enumerate(result.ruled_out):
        body += [f"**{md(o.name)}**", "", *why_list(book.lines("ruled_out", i)), ""]
    doc.details(f"Every option ruled out, and why ({len(result.ruled_out)})", body)


def _profile(doc: _Doc, result: RecommendResult, chain: Sequence[ChainLine], folded: bool) -> None:
    """What the workload needs: only the rows that apply to it (no KV cache for a training job)."""
    p = result.profile
    serving = c.workload(result) == "inference"
    weights, per_gpu = c.weights_needed(result)
    rows = [["Model", md(p.model)], ["Model source", md(p.model_source)],
            ["Parameters (total / active)" if c.is_moe(result) else "Parameters",
             md(f"{c.params(p.parameters_total)} / {c.params(p.parameters_active)}" if c.is_moe(result)
                else c.params(p.parameters_total))],
            ["Weights per GPU (recommended plan)" if per_gpu else "Weights", md(c.gb(weights))]]
    if serving:
        top = result.recommendations[0] if result.recommendations else None
        if top is not None and top.memory.kv_cache > 0:  # with a request rate each plan holds its own batch's
            rows.append(["KV cache per GPU (recommended plan)", md(c.gb(top.memory.kv_cache))])
        else:
            rows.append(["KV cache", md(c.gb(p.kv_cache_gb))])
        rows.append(["KV cache per token", md(f"{p.kv_cache_bytes_per_token:,.0f} bytes")])
    if p.training_memory_gb is not None:
        rows.append(["Training memory", md(c.gb(p.training_memory_gb))])
    if p.required_tokens_per_s is not None:
        rows.append(["Required throughput", md(c.rate(p.required_tokens_per_s))])
    if p.training_flops is not None:
        rows.append(["Training compute", md(flops_text(p.training_flops))])
    rows.append(["Bound by", "memory bandwidth" if p.bound == "bandwidth" else "compute"])
    doc.add("## Workload profile", "", *_table(["Item", "Value"], rows))
    if folded and chain:
        doc.details(f"How were these derived? ({_steps_label(chain)})", why_list(chain))


def _answers(doc: _Doc, result: RecommendResult, folded: bool) -> None:
    """What you set, the defaults in one line; with everything (`folded`) the whole table, marked, folded."""
    rows = c.answer_rows(result)
    doc.add("## Your answers", "")
    doc.add(*_table(["Answer", "Value"], [[_code(r.key), md(r.value)] for r in rows if not r.default]))
    defaults = c.defaults_line(result)
    if defaults:
        doc.add(f"Defaults used: {md(defaults)}.", "")
    if folded:
        doc.details(f"Every answer the consultation used ({len(rows)}, {sum(r.default for r in rows)} defaults)",
                    ["The JSON report embeds the answers: `gpuadvisor recommend --answers report.json` reruns this "
                     "consultation.", "",
                     *_table(["Answer", "Value", "Given by"],
                             [[_code(r.key), md(r.value), "*default*" if r.default else "your answer"]
                              for r in rows])])


def assumptions_section(doc: _Doc, result: RecommendResult, folded: bool, used: Sequence[Any]) -> None:
    """The assumptions `used` (those the workload reads); with everything (`folded`) the others, folded."""
    doc.add("## Assumptions and error bands", "", "The estimates rest on these figures; the error bands say how far "
            "the real numbers may fall from them.", "")
    rows = [[md(a.title), md(f"{c.number(a.value)} {a.unit}".strip()), md(a.source)] for a in used]
    doc.add(*_table(["Assumption", "Value", "Source"], rows, right=(1,)))
    others = [a for a in result.assumptions if a not in used]
    if others and folded:
        rows = [[md(a.title), md(f"{c.number(a.value)} {a.unit}".strip()), md(a.source)] for a in others]
        doc.details(f"Assumptions this workload does not use ({len(others)})",
                    _table(["Assumption", "Value", "Source"], rows, right=(1,)))


def knowledge_section(doc: _Doc, result: RecommendResult, folded: bool) -> None:
    k = result.knowledge
    doc.add("## Knowledge base and prices", "", f"Knowledge base version **{md(k.version)}**.", "")
    prices = c.price_rows(result)
    dated = sorted(p.as_of for p in prices if p.as_of[:1].isdigit())
    span = f" Prices were read between {md(dated[0])} and {md(dated[-1])}." if dated else ""
    doc.add(f"Every price is a reading on a date; check it before you order.{span}", "")
    if not folded:
        return
    body = [*[f"- {md(', '.join(f'{key}: {c.value_text(v)}' for key, v in f.items()))}" for f in k.files], ""] \
        if k.files else []
    body += _table(["Price", "Id", "As of"], [[md(p.name), _code(p.key), md(p.as_of)] for p in prices])
    doc.details(f"Knowledge files and every price used ({len(prices)})", body)


def _code(text: str) -> str:
    """An identifier as inline code when it is plain (letters, digits, `._:-`), else escaped text."""
    return f"`{text}`" if re.fullmatch(r"[\w.:/-]+", text) else md(text)


def to_markdown(result: RecommendResult, *, for_html: bool = False, all_findings: bool = False, full: bool = False,
                chart_prefix: str = "", phase: bool = False) -> str:
    """The whole report. By default what a manager reads in five minutes (headline, what was asked, the options,
    the findings that matter, each option's figures, the rule-outs grouped); `full` adds every chain, the whole
    ruled-out list, every answer and price. `for_html` always carries everything, folded into `<details>`
    (containers the HTML writer turns into elements), and adds chart placeholders (named with `chart_prefix`, so
    several reports can share one page); `all_findings` lists every finding, not only the few shown by default.
    One workload: a lifecycle ([[phase]] answers) is `lifecycle.lifecycle_markdown`, which reports each phase with
    this (`phase`: the sections of a part, `common.sections`; `report.render` chooses)."""
    folded = full or for_html
    shows = c.sections(folded, phase)
    meta = c.meta_of(result)
    doc = _Doc(for_html, chart_prefix)
    titles = {r.option: r.title for r in [*result.recommendations, *result.runners_up]}
    book = ChainBook(result, all_findings)
    doc.add(f"# {md(meta.title)}", "",
            f"*{md(meta.date)} · {md(meta.generator)} · knowledge base {md(result.knowledge.version)}*", "")

    doc.add(f"**{md(c.headline(result))}**", "")
    doc.add("## What you asked", "", *_table(["Requirement", "Value"], [[md(k), md(v)] for k, v in
                                                                       c.requirements(result)]))
    verdict = c.summary(result)
    doc.add(md(verdict) if result.feasible else f"**{md(verdict)}**", "")
    if result.to_make_feasible:
        doc.add("## To make it feasible", "", *[f"- {md(t)}" for t in result.to_make_feasible], "")

    doc.add("## Recommended options", "")
    speed = c.speed_header(result)
    if result.recommendations:
        _ranking(doc, result.recommendations, speed)
    else:
        doc.add("No option was recommended.", "")
    if result.runners_up and shows.runners_up:
        doc.add("### Runners-up", "")
        _ranking(doc, result.runners_up, speed)
    if result.recommendations or result.runners_up:
        more = "" if shows.runners_up or not result.runners_up else \
            f" {c.count_of(len(result.runners_up), 'runner-up', 'runners-up')}: `--full` lists them."
        doc.add(f"*{md(c.COST_NOTE + more)}*", "")
        if result.contracts:
            doc.add(md(result.contracts), "")
    doc.chart("cost")

    doc.add("## Findings", "", md(c.findings_intro(result, all_findings, "--all-findings")), "")
    for n, (i, w) in enumerate(c.findings(result, all_findings), start=1):
        _warning(doc, n, w, result, book.lines("warning", i), titles, all_findings, folded)

    doc.add("## Option details", "")
    doc.chart("memory")
    detailed = result.recommendations[:shows.details]
    for i, r in enumerate(detailed):
        _option(doc, r, book.lines("option", i), folded)
    if len(detailed) < len(result.recommendations):
        doc.add("*The other options' figures: `--full` (the HTML report folds them).*", "")

    _ruled_out(doc, result, book, folded)
    _profile(doc, result, book.lines("profile", 0), folded)
    _answers(doc, result, folded)
    if shows.shared:
        assumptions_section(doc, result, folded, c.assumptions_used([result]))
        knowledge_section(doc, result, folded)
        footer(doc, result, folded)
    return doc.text()


def footer(doc: _Doc, result: RecommendResult, folded: bool) -> None:
    more = "" if folded else " · `--full` adds every why-chain, rule-out, answer and price"
    doc.add("---", "", f"*{md(c.meta_of(result).generator)} · {result.rules_fired} rules fired · schema version "
            f"{result.schema_version}{more}*")
