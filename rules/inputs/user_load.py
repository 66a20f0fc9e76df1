"""Daily active users → a request rate to plan for: every assumption stated, and settable per consultation.

A product owner knows "50,000 daily active users", not requests per minute. The conversion is the usual one:
requests a day = users × sessions per user a day × requests per session; the planned rate is that day's average per
minute times the peak-to-average ratio of the busiest hour (seed 002, W5: plan for the peak, not the average). The
tokens per request are the consultation's `inference.input_tokens` and `inference.output_tokens`. The three factors
default to `knowledge/data/assumptions.toml` (`dau_*`, each with its range and notes); an answer overrides each one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog

MINUTES_PER_DAY = 1440.0
DEFAULTS: dict[str, float] = {
    "dau_sessions_per_user_per_day": 2.0,
    "dau_requests_per_session": 5.0,
    "dau_peak_to_average": 3.0,
}
"""The shipped values of assumptions.toml (used when a catalog lacks them; a test keeps the two equal)."""
ANSWER_KEYS: dict[str, str] = {
    "sessions_per_user_per_day": "dau_sessions_per_user_per_day",
    "requests_per_session": "dau_requests_per_session",
    "peak_to_average": "dau_peak_to_average",
}
"""Answer leaf (`inference.<leaf>`) → the assumption id it overrides."""


@dataclass(frozen=True)
class UserLoad:
    """The request rate daily users stand for, with the factors used and which of them the user gave."""

    daily_active_users: int
    sessions_per_user_per_day: float
    requests_per_session: float
    peak_to_average: float
    given: frozenset[str]
    """Answer leaves the user set (the others came from assumptions.toml)."""

    @property
    def requests_per_day(self) -> float:
        return self.daily_active_users * self.sessions_per_user_per_day * self.requests_per_session

    @property
    def average_per_minute(self) -> float:
        return self.requests_per_day / MINUTES_PER_DAY

    @property
    def requests_per_minute(self) -> float:
        """The rate to plan for: the busiest hour's."""
        return self.average_per_minute * self.peak_to_average

    def text(self) -> str:
        """`50,000 daily users × 2 sessions × 5 requests = 500,000 requests a day (347/min on average) × peak 3 =
        1,042 req/min`."""
        return (f"{self.daily_active_users:,} daily users × {self.sessions_per_user_per_day:g} sessions × "
                f"{self.requests_per_session:g} requests = {self.requests_per_day:,.0f} requests a day "
                f"({self.average_per_minute:,.0f}/min on average) × peak-to-average {self.peak_to_average:g} = "
                f"{self.requests_per_minute:,.0f} requests/min at the busiest hour")


def user_load_values(catalog: Catalog | None) -> dict[str, float]:
    """The `dau_*` assumptions of a catalog (an overlay can change them), else the shipped defaults."""
    if catalog is None:
        return dict(DEFAULTS)
    return {k: catalog.assumptions[k].value if k in catalog.assumptions else d for k, d in DEFAULTS.items()}


def user_load(daily_active_users: int, answers: Mapping[str, Any], values: Mapping[str, float]) -> UserLoad:
    """The load of `daily_active_users`; `answers` maps answer leaves (`peak_to_average`…) to a value or None."""
    picked: dict[str, float] = {leaf: float(answers[leaf]) if answers.get(leaf) is not None else values[asm]
                                for leaf, asm in ANSWER_KEYS.items()}
    return UserLoad(int(daily_active_users), picked["sessions_per_user_per_day"],
                    picked["requests_per_session"], picked["peak_to_average"],
                    frozenset(k for k in ANSWER_KEYS if answers.get(k) is not None))
