"""The HTML report is one self-contained file (no network), with inline CSS, print styles and inline SVG charts whose
bars are drawn to scale."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.svg import cost_chart, memory_chart, nice_axis
from tests.report import TODAY, sample

SVG = "{http://www.w3.org/2000/svg}"


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


@pytest.fixture(scope="module")
def html() -> str:
    out: str = render(sample(), "html", today=TODAY)
    return out


def test_self_contained_no_network(html: str) -> None:
    tags = tags_of(html)
    names = {t for t, _ in tags}
    assert "script" not in names and "link" not in names and "img" not in names and "iframe" not in names
    for _tag, attrs in tags:
        for name, value in attrs.items():
            assert name not in {"src", "href", "srcset", "action"}, (name, value)
            assert not name.startswith("on")
    assert "url(" not in html and "@import" not in html and "http://" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    csp = [a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0] or "")


def test_inline_css_with_print_styles(html: str) -> None:
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    assert style is not None
    assert "@media print" in style.group(1)
    assert "details::details-content" in style.group(1)  # printed reports show the collapsed chains


def test_document_structure(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    assert "<title>GPU recommendation: Llama 3.1 70B, inference</title>" in html
    assert '<meta charset="utf-8">' in html
    names = [t for t, _ in tags_of(html)]
    assert names.count("table") == 22  # the whole Markdown report's 22 (test_markdown)
    # 3 options + 3 findings + every rule-out + every answer + every price (the sample has no profile chain)
    assert names.count("details") == 9 and names.count("summary") == 9
    assert names.count("svg") == 2
    assert '<h3 class="sev-risk">2. RISK · W6</h3>' in html
    assert '<h3 class="sev-advice">3. ADVICE · H11</h3>' in html


def svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg.*?</svg>", html, re.S)]


def titled(svg: ET.Element, tag: str) -> dict[str, ET.Element]:
    """Elements of a kind keyed by the text of their <title> child."""
    out = {}
    for el in svg.iter(f"{SVG}{tag}"):
        title = el.find(f"{SVG}title")
        if title is not None and title.text:
            out[title.text] = el
    return out


def test_memory_chart_bars_to_scale() -> None:
    recs = sample().recommendations
    svg = ET.fromstring(memory_chart(recs))
    assert svg.get("role") == "img"
    rects = titled(svg, "rect")
    lines = titled(svg, "line")
    # every segment of the H200 option is drawn, labelled in GB
    weights = rects["Weights: 70.6 GB"]
    x0 = float(weights.get("x", "nan"))
    capacity_x = float(lines["capacity 141.0 GB"].get("x1", "nan"))
    # weights / capacity = 70.55 / 141 = 0.5004: the bar is drawn to the same scale as the capacity line
    assert float(weights.get("width", "nan")) / (capacity_x - x0) == pytest.approx(70.55 / 141, abs=0.003)
    # KV cache segment starts where weights end; 42.95 GB = 0.6088 of the weights' width
    kv = rects["KV cache: 43.0 GB"]
    assert float(kv.get("x", "nan")) == pytest.approx(x0 + float(weights.get("width", "nan")), abs=0.11)
    assert float(kv.get("width", "nan")) / float(weights.get("width", "nan")) == pytest.approx(42.95 / 70.55, abs=0.003)
    # no bar for zero parts (inference has no gradients or optimizer states)
    assert not any(t.startswith(("Gradients", "Optimizer")) for t in rects)
    # keep-free limit: 141 - 14.1 = 126.9 GB
    assert "keep-free limit 126.9 GB" in lines
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "W 70.6" in texts and "KV 43.0" in texts
    assert "117.7 / 141 GB (83.5%)" in texts and "117.7 / 192 GB (61.3%)" in texts
    assert "Weights (W)" in texts  # legend


def test_cost_chart_bars_to_scale() -> None:
    result = sample()
    ranked = [*result.recommendations, *result.runners_up]
    svg = ET.fromstring(cost_chart(ranked))
    title = svg.find(f"{SVG}title")
    # the chart shows the figure the options are ranked by: the decision's cost over the horizon (Total)
    assert title is not None and title.text == "Total over 36 months by option"
    bars = [el for el in svg.iter(f"{SVG}rect")]
    widths = [float(b.get("width", "nan")) for b in bars]
    # Totals $94,345.2 : $35,740.8 : $107,716.8 : $838,857.6
    assert widths[1] / widths[0] == pytest.approx(35740.8 / 94345.2, abs=0.002)
    assert widths[3] / widths[0] == pytest.approx(838857.6 / 94345.2, rel=1e-3)  # widths are rounded to 0.1 px
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "$94,345 (on-demand)" in texts and "$35,741 (spot)" in texts and "$107,717 (buy)" in texts
    # each bar's tooltip gives the total's parts
    tips = [t.text or "" for t in svg.iter(f"{SVG}title")][1:]
    assert tips[2].startswith(f"{ranked[2].title}: $107,717 = hardware ")


def test_a_training_chart_is_per_run() -> None:
    result = sample()
    run = [r.model_copy(update={"decision_cost": r.decision_cost.model_copy(update={"horizon": "one run"})})
           for r in result.recommendations]
    title = ET.fromstring(cost_chart(run)).find(f"{SVG}title")
    assert title is not None and title.text == "Total for one run by option"


def test_charts_absent_without_options() -> None:
    assert memory_chart([]) == "" and cost_chart([]) == ""
    result = sample().model_copy(update={"recommendations": [], "runners_up": [], "feasible": False})
    assert "<svg" not in render(result, "html", today=TODAY)


@pytest.mark.parametrize(("value", "axis"), [
    (192, (200, 4)), (141, (200, 4)), (80, (80, 4)), (81, (100, 5)), (3.694, (4, 4)), (0.9, (1, 5)), (26, (40, 4)),
    (14_880, (20_000, 4)), (0, (1, 5)),
])
def test_nice_axis(value: float, axis: tuple[float, int]) -> None:
    top, ticks = nice_axis(value)
    assert top == pytest.approx(axis[0]) and ticks == axis[1]
    assert (top / ticks) / 10 ** math.floor(math.log10(top / ticks)) in (1, 2, 5)  # tick labels stay round
