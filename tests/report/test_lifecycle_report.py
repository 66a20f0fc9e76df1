"""Lifecycle reports: the timeline with each phase's cost, the fleet and its findings, then every phase in full."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.lifecycle.answers import parse_lifecycle
from gpuadvisor.tui.report import default_filename, render
from gpuadvisor.tui.report.jsonfmt import load_report
from tests.report import TODAY

ANSWERS = {
    "budget": {"capex_usd": 500_000}, "deployment": {"where": "cloud"},
    "phase": [{"name": "tune", "workload": "finetune", "model": {"name": "llama-3.1-8b"},
               "finetune": {"method": "lora"}, "training": {"tokens_b": 0.1}},
              {"name": "serve", "workload": "inference", "model": "phase:1", "months": 12,
               "inference": {"requests_per_minute": 60}}],
}


@cache
def result() -> RecommendResult:
    advisor = Advisor(load_catalog(user_dir=None), include_user_packs=False)
    return advisor.consult_lifecycle(parse_lifecycle(ANSWERS, "l.toml"))


def test_text_opens_with_the_timeline_and_costs_every_phase() -> None:
    r = result()
    out = render(r, "text", today=TODAY)
    life = r.lifecycle
    assert life is not None
    assert out.startswith("GPU lifecycle plan: tune (fine-tuning) → serve (inference), Llama 3.1 8B\n")
    head, _, rest = out.partition("Phase 1 (tune): GPU recommendation: Llama 3.1 8B, fine-tuning")
    assert rest and "Phase 2 (serve): GPU recommendation: Llama 3.1 8B, inference" in rest
    tune, serve = life.plan
    # the serving phase runs the 12 months it was given, from the end of the fine-tune
    assert serve.months == 12 and serve.start_month == pytest.approx(tune.months, abs=1e-3)
    for p in life.plan:
        assert f"{p.phase}. {p.name}" in head
        spend = p.cost_usd + p.capex_usd + p.holding_usd
        assert f"${spend:,.0f}" in head or f"${spend:,.2f}" in head
    # the whole is the sum of the phases; the budget is $500,000 (capex_usd; no monthly budget)
    total = sum(p.cost_usd + p.capex_usd + p.holding_usd for p in life.plan)
    assert life.total_cost_usd == pytest.approx(total, abs=0.05)
    assert f"budget $500,000, ${500_000 - life.total_cost_usd:,.0f} left" in head
    assert "Timeline" in head and "Fleet" in head and "How the phases interact" in head


def test_markdown_and_html_carry_the_timeline_chart_once_and_each_phase_its_charts() -> None:
    md = render(result(), "md", today=TODAY)
    assert md.startswith("# GPU lifecycle plan: tune (fine-tuning) → serve (inference), Llama 3.1 8B")
    assert "## Timeline" in md and "\n## Phase 1 (tune): GPU recommendation" in md  # phases one level down
    assert "\n### Recommended options" in md
    html = render(result(), "html", today=TODAY)
    assert html.count('id="timeline-chart-title"') == 1
    assert 'id="p1-cost-chart-title"' in html and 'id="p2-memory-chart-title"' in html
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids))  # no element id twice on one page
    assert "<script" not in html


def test_json_round_trips_and_names_the_file_as_a_lifecycle(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    saved.write_text(render(result(), "json", today=TODAY), encoding="utf-8")
    back = load_report(saved)
    assert back.lifecycle is not None and [p.name for p in back.phases] == ["tune", "serve"]
    assert render(back, "text") == render(result(), "text", today=TODAY)
    assert default_filename(back, "md") == "gpuadvisor-lifecycle-llama-3.1-8b-2026-11-20.md"
