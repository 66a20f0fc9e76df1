"""Reports of a real consultation (the shipped knowledge base and rule packs), not only of the hand-built sample."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report import default_filename, render, save_report
from gpuadvisor.tui.report.common import gb, usd
from gpuadvisor.tui.report.jsonfmt import parse_report
from tests.report import TODAY

consult_module = pytest.importorskip("gpuadvisor.rules.consult", reason="the consultation is not written yet")


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecommendResult]:
    from gpuadvisor.knowledge.loader import load_catalog
    from gpuadvisor.rules.inputs.answers import parse_answers

    mp = pytest.MonkeyPatch()
    mp.setenv("GPUADVISOR_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))  # no user rule packs or overlays
    try:
        answers = parse_answers({"workload": "inference", "model": {"name": "llama-3.1-70b"},
                                 "inference": {"concurrent_requests": 16},
                                 "precision": {"weights": "int8", "context_tokens": 8192}})
        out = consult_module.consult(answers, load_catalog(user_dir=None))
        assert isinstance(out, RecommendResult)
        yield out
    finally:
        mp.undo()


@pytest.mark.parametrize("fmt", ["md", "html", "text"])
def test_real_report_opens_with_the_headline_and_what_was_asked(result: RecommendResult, fmt: str) -> None:
    text = re.sub(r"\s+", " ", text_of(result, fmt))
    assert result.headline is not None
    headline = text.index(re.sub(r"\s+", " ", result.headline))
    asked = text.index("What you asked")
    assert headline < asked < text.index("Recommended options") < text.index("Findings")
    assert re.search(r"Model\W+Llama 3\.1 70B, INT8, context 8,192 tokens", text)
    assert re.search(r"Concurrency\W+16 requests in flight", text)
    assert "Total: what the decision costs over the horizon" in text


def text_of(result: RecommendResult, fmt: str) -> str:
    out = render(result, fmt, today=TODAY, full=True)
    if fmt == "html":
        return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", out)))
    if fmt == "md":
        return re.sub(r"\\(.)", r"\1", out)
    return re.sub(r"\n +", " ", out)


@pytest.mark.parametrize("fmt", ["md", "html", "text"])
def test_real_report_carries_the_consultation(result: RecommendResult, fmt: str) -> None:
    text = text_of(result, fmt)
    assert result.recommendations, "the sample question has workable options"
    top = result.recommendations[0]
    assert re.sub(r"\s+", " ", top.title) in re.sub(r"\s+", " ", text)
    assert gb(top.memory.total) in text
    assert top.cost.price_as_of is None or top.cost.price_as_of in text
    for money in (top.cost.usd_per_hour, top.cost.capex_usd, top.cost.usd_per_million_tokens):
        if money is not None:
            assert usd(money) in text
    for as_of in result.knowledge.price_dates.values():
        assert as_of in text
    assert result.knowledge.version in text
    shown = [w for w in result.warnings if w.shown]
    assert 0 < len(shown) <= 5 < len(result.warnings)  # a handful by default, every one on request
    for w in shown:
        assert w.id in text
    every = re.sub(r"\s+", " ", render(result, fmt, today=TODAY, all_findings=True, full=True))
    for w in result.warnings:
        assert w.id in every
    for o in result.ruled_out:
        assert re.sub(r"\s+", " ", o.reason) in re.sub(r"\s+", " ", text)
    for step in top.why:
        if step.source and step.source not in {"your answer", "default"}:
            assert re.sub(r"\s+", " ", step.source) in re.sub(r"\s+", " ", text)


def test_real_report_marks_the_defaults(result: RecommendResult) -> None:
    out = render(result, "md", today=TODAY, full=True)
    assert "| `precision.weights` | int8 | your answer |" in out
    assert "| `precision.kv_cache` | fp16 | *default* |" in out  # not given: the default format
    assert "| `deployment.pue` | 1.3 | *default* |" in out


def test_real_report_round_trips_through_json(result: RecommendResult, tmp_path: Path) -> None:
    name = default_filename(result, "json", TODAY)
    assert name == "gpuadvisor-inference-llama-3.1-70b-2026-11-20.json"
    path = save_report(render(result, "json", today=TODAY), tmp_path / name)
    back = parse_report(path.read_text(), str(path))
    assert render(back, "html") == render(result, "html", today=TODAY)


def test_a_purchase_shows_what_it_pays_beyond_its_accelerators_and_over_its_horizon() -> None:
    from gpuadvisor.rules.consultation.result import Cost
    from gpuadvisor.tui.report.common import purchase_items

    cost = Cost(capex_usd=638_000, capex_beyond_accelerators_usd=158_000, fabric_usd=68_000, power_kw=20.4,
                tco_usd=700_000, horizon_years=3)
    assert purchase_items(cost) == [("Beyond the accelerators", "$158,000 (hosts, fabric $68,000)"),
                                    ("Power at load", "20.4 kW"),
                                    ("Before resale", "$700,000 over 3 years (purchase, power and site; the Total "
                                                      "takes the resale off)")]
    assert purchase_items(Cost(usd_per_hour=2.0)) == []  # a rental has none
