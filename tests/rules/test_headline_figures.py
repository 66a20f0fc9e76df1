"""The headline's figures at the edges a fuzzer found: a fine-tuning run of seconds, where an owned machine's share of
the run rounds to $0 and the cheapest paid plan leaves no ratio to state (CI stop 24 failed on a ZeroDivisionError)."""

from __future__ import annotations

import pytest

from gpuadvisor.rules.answers import Answers
from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.ranking import fmt_duration, fmt_tokens


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


def test_a_run_of_seconds_names_the_cheapest_instead_of_dividing_by_zero() -> None:
    answers = Answers.model_validate({"workload": "finetune", "stage": "learning", "model": {"name": "deepseek-v2"},
                                      "training": {"tokens_b": 6.103515625e-05}, "framework": {"name": "jax"}})
    result = consult(answers)
    paid = [r for r in result.recommendations if r.acquisition in ("rent", "buy")]
    cheapest = min(r.cost.usd_per_run for r in paid if r.cost.usd_per_run is not None)
    assert cheapest == 0.0  # an owned machine busy for 0.1 minutes: its share rounds away at four decimals
    top = result.recommendations[0].cost.usd_per_run
    assert top is not None and top > 1
    assert f"at ${top:,.0f} per run (the cheapest costs under $1 per run" in result.headline
    assert "61,035 tokens in 30 days" in result.headline
