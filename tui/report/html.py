"""The report as one self-contained HTML file: the Markdown report converted by markdown-it, plus inline SVG charts.

markdown-it runs with raw HTML off, so any markup that slipped into user text comes out as visible, escaped text; the
only elements not produced by markdown-it are the <details> wrappers and the charts, both written here with escaping.
A Content-Security-Policy forbids scripts and every network fetch, so the file behaves the same offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.container import container_plugin

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.report.css import CSS
from gpuadvisor.tui.report.lifecycle import lifecycle_markdown
from gpuadvisor.tui.report.markdown import to_markdown
from gpuadvisor.tui.report.svg import cost_chart, memory_chart, timeline_chart

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
SEVERITY_HEADING = re.compile(r"^(?:\d+\. )?(RISK|ADVICE|NOTE)\b")


def _render_details(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    if token.nesting == 1:
        summary = token.info.strip().removeprefix("details").strip() or "Details"
        return f"<details>\n<summary>{escape(c.one_line(summary))}</summary>\n"
    return "</details>\n"


def _render_chart(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    if token.nesting != 1:
        return ""
    svg, caption = env.get("charts", {}).get(token.info.strip().removeprefix("chart").strip(), ("", ""))
    if not svg:
        return ""
    return f'<figure class="chart">\n{svg}\n<figcaption>{escape(caption)}</figcaption>\n</figure>\n'



def _render_col(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """Consecutive `col` blocks share one grid row: open the grid before the first and close it after the last."""
    token = tokens[idx]
    if token.nesting == 1:
        first = idx == 0 or tokens[idx - 1].type != "container_col_close"
        return ('<div class="cols">\n' if first else "") + '<div class="col">\n'
    last = idx + 1 >= len(tokens) or tokens[idx + 1].type != "container_col_open"
    return "</div>\n" + ("</div>\n" if last else "")


def _severity_classes(state: StateCore) -> None:
    """Colour-code finding headings (`### RISK · W6`) by giving them a class."""
    tokens = state.tokens
    for i, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == "h3":
            match = SEVERITY_HEADING.match(tokens[i + 1].content)
            if match:
                token.attrSet("class", f"sev-{match.group(1).lower()}")


def converter() -> MarkdownIt:
    """CommonMark plus GitHub tables, raw HTML off (escaped), with the report's two containers."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    container_plugin(md, "details", render=_render_details)
    container_plugin(md, "chart", render=_render_chart)
    container_plugin(md, "col", render=_render_col)
    md.core.ruler.push("severity_classes", _severity_classes)
    return md


COST_BARS = 8
"""Bars the cost chart draws at most: the recommended options and the first runners-up (15 bars ran past a screen;
the tables above list every one)."""


def charts_of(result: RecommendResult, prefix: str = "") -> dict[str, tuple[str, str]]:
    """The charts one result's Markdown refers to, by placeholder name (`prefix` + memory | cost)."""
    ranked = [*result.recommendations, *result.runners_up]
    drawn = ranked[:COST_BARS]
    which = "each ranked option" if len(drawn) == len(ranked) else f"the first {len(drawn)} of {len(ranked)} " \
        "ranked options"
    return {
        f"{prefix}memory": (memory_chart(result.recommendations, f"{prefix}memory-chart"),
                            "Memory per GPU of each recommended option, in GB."),
        f"{prefix}cost": (cost_chart(drawn, f"{prefix}cost-chart"),
                          f"{c.total_label(ranked)} of {which}, in US dollars: the figure they are ranked by."
                          if ranked else ""),
    }


def to_html(result: RecommendResult, *, all_findings: bool = False) -> str:
    meta = c.meta_of(result)
    charts = charts_of(result)
    if result.lifecycle is not None:  # the timeline, then every phase's own charts
        charts = {"timeline": (timeline_chart(result.lifecycle), "The phases over the horizon, with what each "
                               "costs (a purchase is held, dashed, to the end of the horizon).")}
        for p in result.phases:
            charts.update(charts_of(p, f"p{p.phase}-"))
    markdown = (lifecycle_markdown(result, for_html=True, all_findings=all_findings) if result.lifecycle is not None
                else to_markdown(result, for_html=True, all_findings=all_findings))
    body = converter().render(markdown, {"charts": charts})
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(CSP)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="{escape(c.one_line(meta.generator))}">\n'
        f"<title>{escape(c.one_line(meta.title))}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )
