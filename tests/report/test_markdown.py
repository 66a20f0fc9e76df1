"""The Markdown report renders well on GitHub: GFM tables, headings, collapsible <details> chains."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from gpuadvisor.rules.consultation.result import WhyStep
from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.chains import lines_of
from gpuadvisor.tui.report.markdown import md, why_list
from tests.report import TODAY, sample


def github_like() -> MarkdownIt:
    """CommonMark + tables with raw HTML allowed, as GitHub renders (before its own sanitizer)."""
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def test_tables_parse_as_gfm_tables() -> None:
    out = render(sample(), "md", today=TODAY, full=True)
    html = github_like().render(out)
    # what you asked (1) + ranking + runners-up (2) + memory/speed/cost/what-it-costs per option (4 × 3 = 12)
    # + ruled out grouped and in full (2), profile (1), answers you set and every answer (2), assumptions, prices (2)
    assert html.count("<table>") == 22
    short = github_like().render(render(sample(), "md", today=TODAY))
    # by default one table of figures per option, the rule-outs grouped, the answers you set, no price table
    assert short.count("<table>") == 1 + 2 + 3 + 1 + 1 + 1 + 1
    assert "<th>Option</th>" in html
    assert '<td style="text-align:right">$94,345</td>' in html  # the ranked figure right-aligned


def test_headings_outline() -> None:
    out = render(sample(), "md", today=TODAY)
    h2 = re.findall(r"^## (.+)$", out, re.M)
    assert h2 == ["What you asked", "Recommended options", "Findings", "Option details", "Ruled out",
                  "Workload profile", "Your answers", "Assumptions and error bands", "Knowledge base and prices"]
    assert out.startswith("# GPU recommendation: Llama 3.1 70B, inference\n")


def test_chains_are_collapsible_details_blocks() -> None:
    out = render(sample(), "md", today=TODAY, full=True)
    result = sample()
    # one per recommendation, one per warning, one each for the rule-outs, every answer and every price
    expected = len(result.recommendations) + len(result.warnings) + 3
    assert "<details>" not in render(sample(), "md", today=TODAY)  # the short report has no chains
    assert out.count("<details>") == out.count("</details>") == expected
    # GitHub renders Markdown inside <details> only after a blank line that ends the HTML block
    # (the chains' lists: 3 options + 3 findings + 1 in the rule-outs' block, which opens with its table)
    assert len(re.findall(r"<summary>[^<\n]+</summary>\n\n- ", out)) == expected - 2
    assert "<summary>Why this option? (11 steps)</summary>" in out
    html = github_like().render(out)
    assert html.count("<details>") == expected and "<ul>" in html


def test_why_list_nests_by_depth_and_never_skips_a_level() -> None:
    steps = [WhyStep(depth=0, fact=1, kind="option", text="top"),
             WhyStep(depth=3, fact=2, kind="answer", text="deep", source="your answer"),
             WhyStep(depth=1, fact=3, kind="profile", text="mid", rule="r", rule_title="Rule", heuristic="S2")]
    assert why_list(lines_of(steps)) == ["- top", "  - deep — *source: your answer*", "  - mid — *Rule (S2)*"]
    html = github_like().render("\n".join(why_list(lines_of(steps))))
    assert html.count("<ul>") == 2  # depth 3 after depth 0 is clamped to 1: a nested list, not a code block
    assert "<pre>" not in html


@pytest.mark.parametrize(("text", "escaped"), [
    ("a|b", "a\\|b"),                       # would split a table cell
    ("*bold* _it_", "\\*bold\\* \\_it\\_"),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
    ("$3.59/h vs $1.36/h", "\\$3.59/h vs \\$1.36/h"),  # GitHub would typeset $...$ as maths
    ("1. not a list", "1\\. not a list"),
    ("- not a list", "\\- not a list"),
    ("70.5 GB", "70.5 GB"),                 # a number is not a list marker: left readable
    ("two\nlines", "two lines"),
    ("&lt;", "\\&lt;"),                     # an entity typed by the user stays literal
])
def test_md_escapes_what_markdown_would_interpret(text: str, escaped: str) -> None:
    assert md(text) == escaped


def test_escaped_text_renders_back_to_the_original() -> None:
    for text in ["a|b *c* _d_ [e](f) `g` <h> &amp; $1 ~i~ #j", "1) x", "+ y"]:
        rendered = MarkdownIt("commonmark", {"html": True}).renderInline(md(text))
        expected = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert rendered == expected, text
