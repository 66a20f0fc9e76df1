"""Cost arithmetic (S9, S10, H15): cloud runs, owned hardware, rent-vs-buy break-even, serving replicas.

Owned hardware costs amortization (price ÷ lifetime hours) every hour whether busy or not, plus power while busy:
watts × PUE × $/kWh. A consultation prices what is bought — the accelerators, the machines they go in and the fabric
that joins them (rules/purchases.py); floor space and staff are not included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors, Note
from gpuadvisor.rules.sizing.units import HOURS_PER_MONTH, HOURS_PER_YEAR, SECONDS_PER_HOUR


def usd_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """Hourly price ÷ tokens per hour × 10^6 (S9)."""
    if tokens_per_s <= 0:
        raise ValueError("tokens_per_s must be positive")
    return usd_per_hour / (tokens_per_s * SECONDS_PER_HOUR) * 1e6


@dataclass(frozen=True)
class CloudCost:
    """Renting `instances` instances to run a job or serve at a rate."""

    instances: int
    usd_per_hour: float
    """For all instances together."""
    usd_per_gpu_hour: float
    usd_per_run: float | None
    usd_per_million_tokens: float | None
    notes: tuple[Note, ...] = ()


def cloud_cost(instance_usd_per_hour: float, gpus_per_instance: int, gpus_needed: int, *,
               gpu_hours: float | None = None, tokens_per_s: float | None = None) -> CloudCost:
    """Cost of renting enough instances for `gpus_needed` GPUs.

    A run is billed for whole instances: wall time (gpu_hours ÷ gpus_needed) × instances × hourly price.
    `tokens_per_s` is the aggregate throughput of those GPUs, for $ per 1M tokens.
    """
    if instance_usd_per_hour <= 0 or gpus_per_instance < 1 or gpus_needed < 1:
        raise ValueError("price, GPUs per instance and GPUs needed must be positive")
    instances = math.ceil(gpus_needed / gpus_per_instance)
    hourly = instances * instance_usd_per_hour
    run = None if gpu_hours is None else gpu_hours / gpus_needed * hourly
    per_m = None if not tokens_per_s else usd_per_million_tokens(hourly, tokens_per_s)
    notes = (Note("method.cloud_cost", f"{instances} instance(s) of {gpus_per_instance} GPU(s) billed whole; run "
                  "cost = wall time (GPU-hours ÷ GPUs) × hourly price of all instances; $ per 1M tokens = hourly "
                  "price ÷ tokens per hour × 10^6", source="S9 (002)"),)
    return CloudCost(instances=instances, usd_per_hour=hourly,
                     usd_per_gpu_hour=instance_usd_per_hour / gpus_per_instance, usd_per_run=run,
                     usd_per_million_tokens=per_m, notes=notes)


@dataclass(frozen=True)
class OwnedCost:
    """Owning `count` GPUs bought at `price_usd` each, used a fraction `utilization` of the time."""

    capex_usd: float
    amortization_usd_per_hour: float
    """Wall-clock hour, all GPUs: the price over the lifetime, plus the site (space, power and cooling capacity),
    both paid whether busy or not."""
    power_usd_per_busy_hour: float
    usd_per_busy_hour: float
    """Amortization and site spread over busy hours only, plus power."""
    usd_per_million_tokens: float | None
    notes: tuple[Note, ...]

    def usd_per_month(self, utilization: float) -> float:
        """A month of owning it: amortization and site every hour, power in the busy share of them."""
        return (self.amortization_usd_per_hour + self.power_usd_per_busy_hour * utilization) * HOURS_PER_MONTH


def power_usd_per_hour(tdp_w: float, count: int, *, pue: float, usd_per_kwh: float) -> float:
    """Electricity of `count` busy GPUs: TDP × count × PUE × $/kWh."""
    return tdp_w * count / 1000.0 * pue * usd_per_kwh


def owned_cost(price_usd: float, count: int, tdp_w: float, *, utilization: float,
               tokens_per_s: float | None = None, factors: Factors = DEFAULT_FACTORS) -> OwnedCost:
    """`count` accelerators bought at `price_usd` each drawing `tdp_w` each: see `system_cost`."""
    if count < 1:
        raise ValueError("price and count must be positive, TDP not negative and utilization in (0, 1]")
    return system_cost(price_usd * count, tdp_w * count, utilization=utilization, tokens_per_s=tokens_per_s,
                       factors=factors)


def system_cost(capex_usd: float, watts: float, *, utilization: float, tokens_per_s: float | None = None,
                factors: Factors = DEFAULT_FACTORS, site_kw: float = 0.0) -> OwnedCost:
    """Owned hardware costing `capex_usd` (accelerators, hosts, fabric) and drawing `watts` while busy:
    amortization over `hardware_lifetime_years`, plus the site rent of `site_kw` of capacity at
    `colocation_usd_per_kw_month` every hour (0 for a desk-side machine), plus power × PUE × $/kWh while busy
    (S9)."""
    if capex_usd <= 0 or watts < 0 or site_kw < 0 or not 0 < utilization <= 1:
        raise ValueError("price and count must be positive, TDP not negative and utilization in (0, 1]")
    lifetime_hours = factors.hardware_lifetime_years * HOURS_PER_YEAR
    amort = capex_usd / lifetime_hours + site_kw * factors.colocation_usd_per_kw_month * 12.0 / HOURS_PER_YEAR
    power = power_usd_per_hour(watts, 1, pue=factors.pue, usd_per_kwh=factors.power_usd_per_kwh)
    busy = amort / utilization + power
    notes = (
        factors.note("hardware_lifetime_years", "Depreciation period of owned hardware"),
        factors.note("pue", "Data-centre power usage effectiveness"),
        factors.note("power_usd_per_kwh", "Electricity price"),
        Note("method.owned_cost", "Owned cost per busy hour = price ÷ (lifetime hours × utilization) + power × PUE × "
             "$/kWh; the price is what is bought (accelerators, and in a consultation their hosts and fabric); "
             "space and staff are not included", source="S9 (002)"),
    )
    per_m = None if not tokens_per_s else usd_per_million_tokens(busy, tokens_per_s)
    return OwnedCost(capex_usd=capex_usd, amortization_usd_per_hour=amort, power_usd_per_busy_hour=power,
                     usd_per_busy_hour=busy, usd_per_million_tokens=per_m, notes=notes)


def break_even_utilization(price_usd: float, tdp_w: float, rent_usd_per_gpu_hour: float, *,
                           factors: Factors = DEFAULT_FACTORS) -> float | None:
    """Utilization above which owning one GPU is cheaper than renting it (H15).

    Owning costs price ÷ (lifetime hours × u) + power per busy hour; renting costs `rent` per busy hour; they are
    equal at u* = price ÷ (lifetime hours × (rent − power)). None when renting is cheaper than the power alone,
    or when u* > 1 (buying never pays off within the lifetime).
    """
    power = tdp_w / 1000.0 * factors.pue * factors.power_usd_per_kwh
    margin = rent_usd_per_gpu_hour - power
    if margin <= 0:
        return None
    u = price_usd / (factors.hardware_lifetime_years * HOURS_PER_YEAR * margin)
    return u if u <= 1.0 else None


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
