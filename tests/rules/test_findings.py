"""Findings triage (rules/consultation/findings.py) and the effective answers (rules/inputs/effective.py), on real
consultations and on hand-made findings."""

from __future__ import annotations

from collections import Counter

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.findings import PRICE_FINDING, SHOWN_BY_DEFAULT, triage
from gpuadvisor.rules.consultation.result import RecommendResult, Warning, WhyStep, severity_of
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.report.common import summary
from tests.report import sample


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


ON_PREM_QLORA = {"workload": "finetune", "finetune": {"method": "qlora"}, "model": {"name": "llama-3.1-70b"},
                 "deployment": {"where": "on_prem"}}
"""The consultation issue 19 describes: 25 warnings and 27 info lines before triage, the same rule once per option."""


@pytest.fixture(scope="module")
def many(advisor: Advisor) -> RecommendResult:
    return advisor.consult(parse_answers(ON_PREM_QLORA))


def test_one_finding_per_rule_listing_every_option(many: RecommendResult) -> None:
    rules = Counter(w.rule for w in many.warnings if w.id != PRICE_FINDING)
    assert rules and max(rules.values()) == 1
    pcie = next(w for w in many.warnings if w.id == "H2")  # the PCIe penalty of every multi-card PCIe option
    assert len(pcie.options) >= 2 and len(pcie.details) == len(pcie.options) - 1
    ranks = {r.option: r.rank for r in [*many.recommendations, *many.runners_up]}
    assert [ranks[o] for o in pcie.options] == sorted(ranks[o] for o in pcie.options)  # best-ranked first


def test_price_notes_are_one_line_about_the_ranked_prices(many: RecommendResult) -> None:
    assert not [w for w in many.warnings if w.id in ("P.stale-price", "P.undated-price")]
    price = [w for w in many.warnings if w.id == PRICE_FINDING]
    assert len(price) == 1 and price[0].severity == "note"
    # the first ranked option with a dated price: old (the RTX PRO 6000 Workstation's 2025-03 list price here; the
    # first, four RTX 3090s with FSDP-QLoRA since issue 29, is priced at an undated used price) and in the note
    top = next(r for r in many.recommendations if r.cost.price_age_months is not None)
    assert top.cost.price_age_months > 12 and top.option in price[0].options
    assert f"{top.accelerator.name} {top.cost.price_kind} price ({top.cost.price_as_of}" in price[0].message


def test_a_handful_shown_the_recommended_option_first(many: RecommendResult) -> None:
    shown = [w for w in many.warnings if w.shown]
    assert len(many.warnings) > SHOWN_BY_DEFAULT >= len(shown) > 0
    assert {w.severity for w in many.warnings} <= {"risk", "advice", "note"}
    top = many.recommendations[0].option
    about_top = [not w.options or w.options[0] == top for w in many.warnings]
    assert about_top == sorted(about_top, reverse=True)  # every finding about option 1 (or the plan) comes first
    assert many.warnings[0].options[:1] in ([], [top])


def _w(rule: str, severity: str, options: list[str], message: str) -> Warning:
    why = [WhyStep(depth=0, fact=1, kind="warning", text=message)]
    return Warning(id=rule.split(".")[0], rule=rule, category="advice", severity=severity, message=message,
                   options=options, why=why)


def test_triage_by_hand() -> None:
    recs = [*sample().recommendations, *sample().runners_up]
    first, second, third = (r.option for r in recs[:3])
    found = triage([
        _w("H2.nvlink", "risk", [third], "third over PCIe"),
        _w("H2.nvlink", "risk", [second], "second over PCIe"),
        _w("W9", "note", [second], "containers"),
        _w("W6", "advice", [first], "first is nearly full"),
        _w("P.undated-price", "note", [third], "undated"),
        _w("P.stale-price", "risk", [first], "old"),
        _w("W5", "risk", [], "plan-wide KV cache"),
    ], recs)
    assert [w.message.split(":")[0] for w in found] == [
        "plan-wide KV cache", "first is nearly full", "The ranking rests on 2 prices that may have moved",
        "second over PCIe", "containers"]
    pcie = found[3]
    assert pcie.options == [second, third] and pcie.details == ["third over PCIe"]
    assert [w.shown for w in found] == [True, True, True, True, False]  # a note about another option waits


def test_legacy_severities_read_in_the_one_vocabulary() -> None:
    assert [severity_of(s, c) for s, c in (("critical", "warning"), ("warning", "advice"), ("info", "advice"),
                                           ("info", "warning"))] == ["risk", "risk", "advice", "note"]


def test_effective_answers_hold_what_was_computed(advisor: Advisor) -> None:
    qlora = advisor.consult(parse_answers(ON_PREM_QLORA))
    assert qlora.answers_effective["precision"]["weights"] == "nf4"
    weights = [d for d in qlora.defaults_applied if d.startswith("precision.weights")]
    assert weights == ["precision.weights = nf4 (QLoRA default: 4-bit NormalFloat base)"]
    tokens = [d for d in qlora.defaults_applied if d.startswith("training.tokens_b")]
    assert tokens == ["training.tokens_b = 0.1 (0.1B tokens, a typical instruction-tuning set)"]
    assert qlora.answers_effective["training"]["tokens_b"] == 0.1
    assert not [d for d in qlora.defaults_applied if d.startswith("inference.")]  # fine-tuning never reads them

    oss = advisor.consult(parse_answers({"workload": "inference", "model": {"name": "gpt-oss-120b"}}))
    assert oss.answers_effective["precision"]["weights"] == "mxfp4"
    assert [d for d in oss.defaults_applied if d.startswith("precision.weights")] == [
        "precision.weights = mxfp4 (gpt-oss-120b is published with its experts in mxfp4)"]


def test_summary_kv_cache_is_the_recommended_options(advisor: Advisor) -> None:
    result = advisor.consult(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-70b"},
                                            "inference": {"requests_per_minute": 1000, "latency_p95_s": 5.0}}))
    top = result.recommendations[0]
    assert top.memory.kv_cache > 1.0 > 0.0 < result.profile.kv_cache_gb != top.memory.kv_cache
    assert f"{top.memory.kv_cache:,.1f} GB of KV cache per GPU in the recommended plan" in summary(result)
