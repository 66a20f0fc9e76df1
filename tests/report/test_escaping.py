"""User-provided text cannot inject markup: a hostile model name (or answer, message, title) ends up as visible text
in HTML, inert in Markdown (even where raw HTML is allowed), without control characters in plain text, and
slugified in the default file name."""

from __future__ import annotations

import json
from datetime import date
from html.parser import HTMLParser
from typing import Any

import pytest
from markdown_it import MarkdownIt

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report import default_filename, render
from gpuadvisor.tui.report.jsonfmt import parse_report
from tests.report import TODAY, sample

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
EVIL = f"{SCRIPT} {IMG} ]]> --> & </svg><svg onload=alert(2)>"


def hostile() -> RecommendResult:
    """The sample with the attack string wherever user or knowledge-base text is printed."""
    doc: dict[str, Any] = json.loads(sample().model_dump_json())
    doc["profile"]["model"] = EVIL
    doc["answers"]["model"]["name"] = EVIL
    doc["answers_effective"]["model"]["name"] = EVIL
    doc["answers_effective"][EVIL] = EVIL  # a key too (an old or hand-edited report)
    doc["recommendations"][0]["title"] = f"1× {EVIL}"
    doc["recommendations"][0]["why"][0]["text"] = EVIL
    doc["recommendations"][0]["why"][0]["source"] = EVIL
    doc["recommendations"][0]["decision_cost"]["parts"][0]["label"] = EVIL
    doc["recommendations"][0]["cost"]["price_source"] = EVIL
    doc["warnings"][0]["message"] = EVIL
    doc["ruled_out"][0]["reason"] = EVIL
    doc["ruled_out"][0]["family"] = EVIL
    doc["assumptions"][0]["source"] = EVIL
    doc["knowledge"]["price_dates"][EVIL] = "2026-01-01"
    doc["knowledge"]["version"] = EVIL
    return RecommendResult.model_validate(doc)


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [name for name, _ in attrs]


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def test_html_escapes_a_hostile_model_name() -> None:
    html = render(hostile(), "html", today=TODAY)
    found = elements(html)
    assert "script" not in found.tags and "img" not in found.tags
    assert found.tags.count("svg") == 2  # the two charts, not the injected one
    assert not [a for a in found.attrs if a.startswith("on")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text, where it was
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    # the title and the SVG labels are escaped too
    assert "<title>GPU recommendation: &lt;script&gt;" in html
    assert '<g class="row"><title>1× &lt;script&gt;alert(1)&lt;/script&gt; &quot;&gt;&lt;img' in html


def test_markdown_is_inert_even_where_raw_html_is_allowed() -> None:
    out = render(hostile(), "md", today=TODAY)
    assert "\\<script\\>alert(1)\\</script\\>" in out
    # GitHub (and markdown-it with html=True) pass raw HTML through: the escapes must keep it text
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(out)
    found = elements(html)
    assert "script" not in found.tags and "img" not in found.tags and "svg" not in found.tags
    assert not [a for a in found.attrs if a.startswith("on")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_markdown_tables_survive_pipes_and_newlines() -> None:
    result = sample()
    doc: dict[str, Any] = json.loads(result.model_dump_json())
    doc["ruled_out"][0]["reason"] = "a | b\n| c | d |"
    out = render(RecommendResult.model_validate(doc), "md", today=TODAY, full=True)
    row = next(line for line in out.splitlines() if line.startswith("| NVIDIA GeForce RTX 4090"))
    assert row.count(" | ") == 3  # still four cells
    assert "a \\| b \\| c \\| d \\|" in row


def test_text_strips_terminal_control_sequences() -> None:
    doc: dict[str, Any] = json.loads(sample().model_dump_json())
    doc["profile"]["model"] = "evil\x1b[2J\x1b]0;pwned\x07model"
    doc["report"] = {"title": "t\x1b[31m", "date": "2026-11-20\r", "generator": "g\x00"}
    out = render(RecommendResult.model_validate(doc), "text")
    assert not any(ord(ch) < 32 and ch != "\n" for ch in out)
    assert "\x7f" not in out


def test_default_filename_of_hostile_model_is_safe() -> None:
    name = default_filename(hostile(), "html", date(2026, 11, 20))
    assert name.startswith("gpuadvisor-inference-script-alert-1-script-img-src-x-onerror-alert-1")
    assert name.endswith("-2026-11-20.html")
    assert "/" not in name and "\\" not in name and ".." not in name and " " not in name
    assert all(ch.isalnum() or ch in "-." for ch in name)


@pytest.mark.parametrize("fmt", ["md", "html", "text", "json"])
def test_json_keeps_the_text_exactly_and_every_format_renders(fmt: str) -> None:
    out = render(hostile(), fmt, today=TODAY)
    if fmt == "json":
        assert parse_report(out, "report.json").profile.model == EVIL
    assert out
