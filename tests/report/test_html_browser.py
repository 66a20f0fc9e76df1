"""The HTML report as a browser shows it (headless Chromium): it opens with the headline and what was asked, and
the charts write every option's whole name inside the picture, however long the name."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.html import COST_BARS
from tests.browser import NO_BROWSER, browser, open_page
from tests.report import TODAY, sample

LONG = "NVIDIA GB300 (per Blackwell Ultra GPU in GB300 NVL72) — TensorWave MI300X cluster, 8 GPUs per node (spot)"

pytestmark = pytest.mark.skipif(browser() is None, reason=NO_BROWSER)

MEASURE = """
(() => {
  const out = {h1: document.querySelector("h1").innerText,
               firstParagraph: document.querySelector("h1 ~ p strong").innerText,
               h2: [...document.querySelectorAll("h2")].map((h) => h.innerText), labels: []};
  for (const svg of document.querySelectorAll("svg.chart")) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("g.row > text:first-of-type")) {
      const r = t.getBoundingClientRect();
      out.labels.push({text: t.textContent, left: r.left - box.left, right: r.right - box.left,
                       width: box.width, length: t.getComputedTextLength()});
    }
  }
  return out;
})()
"""


def long_named() -> RecommendResult:
    """The sample report with option names as long as the knowledge base's longest and longer."""
    result = sample()
    recs = [r.model_copy(update={"title": f"{r.count}× {LONG} #{r.rank}"}) for r in result.recommendations]
    return result.model_copy(update={"recommendations": recs})


def test_the_report_in_a_browser(tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(render(long_named(), "html", today=TODAY), encoding="utf-8")
    found, shot = asyncio.run(_measure(path, tmp_path))
    result = long_named()
    assert found["h1"] == "GPU recommendation: Llama 3.1 70B, inference"
    assert found["firstParagraph"] == result.headline
    assert found["h2"][:3] == ["What you asked", "Recommended options", "Findings"]
    labels = found["labels"]
    # the cost chart (every ranked option, up to COST_BARS) and the memory chart (the recommended ones): whole names,
    # inside the picture
    ranked = len(result.recommendations) + len(result.runners_up)
    assert ranked <= COST_BARS
    assert len(labels) == ranked + len(result.recommendations)
    titles = {f"{r.rank}. {r.title}" for r in [*result.recommendations, *result.runners_up]}
    for label in labels:
        assert label["text"] in titles
        assert 0 <= label["left"] and label["right"] <= label["width"] + 0.5, label
    assert shot.stat().st_size > 10_000


FIGURE_LINES = """
(() => {
  const cells = [];
  for (const td of document.querySelectorAll("td[style*='text-align:right']")) {
    const range = document.createRange();
    range.selectNodeContents(td);
    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    cells.push({text: td.innerText, lines: tops.size});
  }
  const charts = [...document.querySelectorAll("svg.chart")].map((svg) => ({
      id: svg.id || svg.getAttribute("aria-labelledby"), bars: svg.querySelectorAll("g.row").length,
      height: svg.getBoundingClientRect().height}));
  return {cells, charts};
})()
"""


def long_ranking() -> RecommendResult:
    """The sample with fifteen ranked options (the student's QLoRA job ranks 5 and 10 runners-up, issue 42), each
    option's run time a figure such as "21.1 h"."""
    result = sample()
    base = [*result.recommendations, *result.runners_up]
    runners = [base[i % len(base)].model_copy(update={"rank": i + 1, "title": f"{base[i % len(base)].title} #{i + 1}"})
               for i in range(len(result.recommendations), 15)]
    return result.model_copy(update={"runners_up": runners})


def test_a_long_ranking_keeps_its_figures_on_one_line_and_its_chart_short(tmp_path: Path) -> None:
    """Issue 42: in a narrow window the ranking's figures wrapped mid-figure ("21.1 / h") and a 15-bar cost chart
    ran long. Each right-aligned figure is one line, and the chart draws COST_BARS bars, its caption saying so."""
    path = tmp_path / "report.html"
    html = render(long_ranking(), "html", today=TODAY)
    path.write_text(html, encoding="utf-8")
    found, _ = asyncio.run(_measure(path, tmp_path, FIGURE_LINES, width=640))
    wrapped = [c for c in found["cells"] if c["lines"] != 1]
    assert not wrapped, wrapped
    assert len(found["cells"]) > 4 * 15  # the ranking tables' figures are among them
    cost = [c for c in found["charts"] if c["bars"] == COST_BARS]
    assert len(cost) == 1
    assert f"the first {COST_BARS} of 15 ranked options" in html


async def _measure(path: Path, tmp_path: Path, script: str = MEASURE,
                   width: int = 1000) -> tuple[dict[str, Any], Path]:
    executable = browser()
    assert executable is not None
    profile = tmp_path / "chromium"
    profile.mkdir()
    async with open_page(executable, profile, width=width, height=1400) as page:
        await page.call("Page.navigate", url=path.as_uri())
        await page.wait_for("document.readyState === 'complete'")
        found = await page.evaluate(script)
        shot = await page.screenshot(tmp_path / "report.png")
    return dict(found), shot
