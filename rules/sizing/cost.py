"""Cost arithmetic (S9, S10): whole instances, $ per 1M tokens, serving replicas; what an option costs is priced by
rules/pricing/price.py.

Owned hardware (its price, power, site and resale, and the rent-vs-buy break-even, H15) is priced in one place:
rules/pricing/decision_cost.py (`price_owned`, `ownership_cost`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors, Note
from gpuadvisor.rules.sizing.units import SECONDS_PER_HOUR

PartName = Literal["rental", "hardware", "network", "power", "site", "resale", "engineering"]
COST_PARTS: tuple[PartName, ...] = ("rental", "hardware", "network", "power", "site", "resale", "engineering")
"""The parts a decision cost is summed from, in the order they are shown (rules/pricing/decision_cost.py): declared
once here, on the ground floor, for the pricing, the packs' `add_cost` (rules/engine/packs.py) and the published
result (rules/consultation/result.py)."""


def usd_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """Hourly price ÷ tokens per hour × 10^6 (S9)."""
    if tokens_per_s <= 0:
        raise ValueError("tokens_per_s must be positive")
    return usd_per_hour / (tokens_per_s * SECONDS_PER_HOUR) * 1e6


def whole_instances(gpus_needed: int, gpus_per_instance: int) -> int:
    """Instances rented for `gpus_needed` GPUs: billed whole (10 GPUs on 8-GPU instances are 2 instances); what they
    cost is priced by rules/pricing/price.py."""
    if gpus_per_instance < 1 or gpus_needed < 1:
        raise ValueError("GPUs per instance and GPUs needed must be positive")
    return math.ceil(gpus_needed / gpus_per_instance)


def power_usd_per_hour(tdp_w: float, count: int, *, pue: float, usd_per_kwh: float) -> float:
    """Electricity of `count` busy GPUs: TDP × count × PUE × $/kWh."""
    return tdp_w * count / 1000.0 * pue * usd_per_kwh


@dataclass(frozen=True)
class ServingPlan:
    """S10: tokens/s the traffic needs and replicas to provide it."""

    tokens_per_s_needed: float
    tokens_per_s_planned: float
    """With burst headroom."""
    replicas: int
    notes: tuple[Note, ...]


def serving_capacity(requests_per_minute: float, output_tokens: float, tokens_per_s_per_replica: float, *,
                     factors: Factors = DEFAULT_FACTORS) -> ServingPlan:
    """requests/min × output tokens ÷ 60 → tokens/s; × (1 + burst headroom) → replicas (002 Q4: 1000 req/min ×
    200 tokens = 3,333 tokens/s, 4,000 with 20% headroom)."""
    if requests_per_minute <= 0 or output_tokens <= 0 or tokens_per_s_per_replica <= 0:
        raise ValueError("requests, output tokens and per-replica throughput must be positive")
    needed = requests_per_minute * output_tokens / 60.0
    planned = needed * (1.0 + factors.burst_headroom)
    replicas = max(1, math.ceil(planned / tokens_per_s_per_replica - 1e-9))
    notes = (factors.note("burst_headroom", "Capacity planned above the average load (002 Q4)"),)
    return ServingPlan(tokens_per_s_needed=needed, tokens_per_s_planned=planned, replicas=replicas, notes=notes)
