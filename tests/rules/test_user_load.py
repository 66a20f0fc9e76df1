"""Daily active users → the request rate a serving plan is sized for (rules/inputs/user_load.py), by hand."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.inputs.user_load import DEFAULTS, user_load, user_load_values


def test_shipped_assumptions_equal_the_defaults() -> None:
    assert user_load_values(load_catalog(user_dir=None)) == DEFAULTS


def test_fifty_thousand_users_by_hand() -> None:
    # 50,000 users × 2 sessions × 5 requests = 500,000 requests a day; ÷ 1,440 min = 347.22/min on average;
    # × peak-to-average 3 = 1,041.67 requests/min at the busiest hour
    load = user_load(50_000, {}, DEFAULTS)
    assert load.requests_per_day == 500_000
    assert load.average_per_minute == pytest.approx(347.222, abs=1e-3)
    assert load.requests_per_minute == pytest.approx(1041.667, abs=1e-3)
    assert not load.given
    # an answer overrides its assumption: peak 2 → 347.22 × 2 = 694.44/min
    assert user_load(50_000, {"peak_to_average": 2.0}, DEFAULTS).requests_per_minute == pytest.approx(694.444, 1e-5)


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


def test_consultation_sizes_for_the_derived_rate(advisor: Advisor) -> None:
    answers = parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"},
                             "inference": {"daily_active_users": 50_000, "requests_per_session": 4}})
    result = advisor.consult(answers, top=1)
    # 50,000 × 2 × 4 = 400,000 a day = 277.78/min × 3 = 833.33 req/min; × 200 output tokens ÷ 60 = 2,777.8
    # tokens/s; + 20% burst headroom = 3,333.3 tokens/s
    assert result.profile.required_tokens_per_s == pytest.approx(3333.33, abs=0.01)
    assert result.answers_effective["inference"]["requests_per_minute"] == pytest.approx(833.333, abs=1e-3)
    assert result.answers_effective["inference"]["sessions_per_user_per_day"] == 2.0
    defaults = "\n".join(result.defaults_applied)
    assert "inference.requests_per_minute = 833.3 (from 50,000 daily users × 2 sessions × 4 requests" in defaults
    assert "inference.peak_to_average = 3 (assumptions.toml dau_peak_to_average)" in defaults
    assert "inference.requests_per_session" not in defaults  # given
    assert "833 req/min (50,000 daily users at peak)" in (result.headline or "")
    demand = [s.text for s in result.profile_why if s.kind == "demand"]
    assert demand and demand[0].startswith("50,000 daily users × 2 sessions × 4 requests = 400,000 requests a day")


def test_rate_and_users_together_are_refused() -> None:
    with pytest.raises(InputError, match=r"f\.toml: inference\.daily_active_users and inference\.requests_per_min"):
        parse_answers({"inference": {"daily_active_users": 10, "requests_per_minute": 5}}, "f.toml")
    with pytest.raises(InputError, match=r"contradicts inference\.daily_active_users"):
        parse_answers({"workload": "training", "inference": {"daily_active_users": 10}}, "f.toml")
