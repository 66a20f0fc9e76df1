"""The headline's figures at the edges a fuzzer found: a fine-tuning run of seconds, where an owned machine's share of
the run rounds to $0 and the cheapest paid plan leaves no ratio to state (CI stop 24 failed on a ZeroDivisionError)."""

from __future__ import annotations

import re

import pytest

from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.consultation.ranking import fmt_duration, fmt_tokens
from gpuadvisor.rules.inputs.answers import Answers


@pytest.mark.parametrize(("tokens_b", "text"), [
    (2000, "2T tokens"), (1.5, "1.5B tokens"), (20, "20B tokens"), (0.25, "250M tokens"),
    (6.103515625e-05, "61,035 tokens"),
])
def test_token_counts_read_as_people_write_them(tokens_b: float, text: str) -> None:
    assert fmt_tokens(tokens_b) == text


@pytest.mark.parametrize(("days", "text"), [
    (3.0, "3.0 days"), (0.5, "12.0 hours"), (1 / 48, "30.0 minutes"), (1e-6, "under a minute"),
])
def test_durations_pick_the_unit_that_shows_them(days: float, text: str) -> None:
    assert fmt_duration(days) == text


def test_a_run_of_seconds_is_priced_and_named_without_dividing_by_zero() -> None:
    # the CI fuzz case of stop 24: a fine-tune of 61,035 tokens, a run of seconds
    answers = Answers.model_validate({"workload": "finetune", "stage": "learning", "model": {"name": "deepseek-v2"},
                                      "training": {"tokens_b": 6.103515625e-05}, "framework": {"name": "jax"}})
    result = consult(answers)
    top = result.recommendations[0]
    assert top.decision_cost.usd == min(r.decision_cost.usd for r in result.recommendations)
    # the figure, then what the price is and when it was read (issue 39: its basis and date travel with it)
    assert result.headline is not None and f"at ${top.decision_cost.usd:,.0f} per run (" in result.headline
    # a run of under one step: 0.1 minutes before the step model, under a minute on the 48 TPU v5e chips now
    assert "61,035 tokens in 30 days" in result.headline and "(it takes under a minute)" in result.headline


def test_a_figure_that_rounds_to_nothing_is_under_a_dollar_not_free() -> None:
    from gpuadvisor.rules.consultation.ranking import decision_words
    from gpuadvisor.rules.consultation.result import CostPartOut, DecisionCostOut

    tiny = DecisionCostOut(usd=0.42, horizon="one run", parts=[CostPartOut(part="power", usd=0.42, label="x",
                                                                           rule="S9")])
    assert decision_words(tiny) == "under $1 per run"
    month = DecisionCostOut(usd=12_394.0, horizon="over 36 months", horizon_months=36.0, parts=[])
    # the monthly figure is the total's average, every part included: 12,394 / 36 = 344.28
    assert decision_words(month) == "$12,394 over 36 months ($344 a month)"

def test_a_run_sized_by_default_names_its_tokens() -> None:
    # issue 42's student (QLoRA of an 8B, no tokens given) read "it costs nothing and meets the run in 30 days": the
    # headline names the 0.1B tokens a fine-tune is sized for by default (rules/inputs/workload.py), as "Asked" does
    answers = Answers.model_validate({"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                                      "finetune": {"method": "qlora"}, "budget": {"monthly_usd": 20},
                                      "current": {"gpu": "laptop"}})
    result = consult(answers)
    assert result.headline is not None and "the run in" not in result.headline
    assert "meets 100M tokens in 30 days (it takes " in result.headline


def test_every_pricing_term_is_said_once_in_the_headline() -> None:
    # issue 42: "Rent … on on-demand capacity": the term's compound adjective after the preposition "on". No pricing
    # phrase repeats a word, whole or inside a hyphenated compound
    from gpuadvisor.rules.consultation.ranking import PRICING_WORDS

    for term, words in PRICING_WORDS.items():
        parts = [w.lower() for w in re.split(r"[\s-]+", words)]
        assert all(a != b for a, b in zip(parts, parts[1:], strict=False)), (term, words)
    answers = Answers.model_validate({"workload": "inference", "stage": "production",
                                      "model": {"name": "llama-3.1-8b"}, "inference": {"requests_per_minute": 1000},
                                      "deployment": {"where": "cloud", "reservations": False}})
    headline = consult(answers).headline
    assert headline is not None
    head = "Rent 3 × RunPod L40S (per GPU) (3 × NVIDIA L40S) on demand: the cheapest plan "
    assert headline.startswith(head), headline
