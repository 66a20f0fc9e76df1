"""Cost arithmetic (S9, S10, H15): the documents' worked cases recomputed by hand."""

from __future__ import annotations

import pytest

from gpuadvisor.rules.pricing.decision_cost import (
    Ownership,
    price_owned,
    priced,
    rental_run,
    rental_serving,
)
from gpuadvisor.rules.pricing.price import Buy, Rent, Run, break_even_utilization, for_life, price
from gpuadvisor.rules.sizing.cost import serving_capacity, usd_per_million_tokens, whole_instances
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors


def test_002_q4_serving_capacity() -> None:
    # 002 Q4: 1000 requests/min × 200 tokens = 3,333 tokens/s; +20% burst = 4,000; at 400 tokens/s per
    # 2×A100 instance → 10 instances.
    plan = serving_capacity(1000, 200, 400)
    assert plan.tokens_per_s_needed == pytest.approx(3333.33, abs=0.01)
    assert plan.tokens_per_s_planned == pytest.approx(4000)
    assert plan.replicas == 10
    assert serving_capacity(1000, 200, 399).replicas == 11


def test_usd_per_million_tokens() -> None:
    # $3.67/h at 1,000 tokens/s: 3.6M tokens per hour → $1.019 per 1M tokens.
    assert usd_per_million_tokens(3.67, 1000) == pytest.approx(3.67 / 3.6)


def test_002_q6_cloud_cost_of_18396_gpu_hours() -> None:
    # 002 Q6: p4de.24xlarge $40.96/h for 8 GPUs = $5.12/GPU-h; 3 y × 365 × 24 × 0.7 = 18,396 GPU-hours → $94,187.
    wall = 18_396 / 8
    paid = price(Rent(40.96, "on-demand", "p4de.24xlarge"), Run(wall, wall), DEFAULT_FACTORS)
    assert paid is not None
    assert whole_instances(8, 8) == 1
    assert paid.cost.total == pytest.approx(18_396 * 5.12) == pytest.approx(94_187.52)


def test_runs_bill_whole_instances() -> None:
    # 10 GPUs on 8-GPU instances: 2 instances billed for the wall time (100 GPU-h ÷ 10 GPUs = 10 h) and its set-up.
    assert whole_instances(10, 8) == 2
    paid = price(Rent(2 * 80.0, "on-demand", "2 × 8-GPU"), Run(10.0, 10.25), DEFAULT_FACTORS)
    assert paid is not None
    assert paid.cost.total == pytest.approx(10.25 * 160) and paid.billed_hours == 10.25
    assert paid.option.usd_per_hour == pytest.approx(10.25 * 160 / 10)  # per hour of work: set-up included
    assert usd_per_million_tokens(160.0, 1000) == pytest.approx(160 / 3.6)


def _card(price: float, watts: float) -> Ownership:
    """One accelerator bought alone: no host, no network, no site, kept (no resale)."""
    return Ownership(hardware_usd=price, network_usd=0.0, power_w=watts, site_kw=0.0, accelerators_usd=price,
                     resale_share=0.0)


def test_owned_cost_rtx_4090() -> None:
    # 002's cost example: RTX 4090 $1,600, 450 W, 70 tokens/s, 70% utilization, 3 years, $0.12/kWh.
    # Amortization 1600 ÷ 26,280 h = $0.060883/h, ÷ 0.7 busy = $0.086976 per busy hour; power 0.45 kW × PUE 1.3
    # × $0.12 = $0.0702 → $0.157176 per busy hour → ÷ (70 × 3600) × 1e6 = $0.6237 per 1M tokens.
    # (002's own function charges power around the clock without PUE and gets $0.651.)
    o = price_owned(_card(1600, 450), utilization=0.7, factors=Factors(pue=1.3))
    assert o.busy_hours == pytest.approx(26_280 * 0.7)
    assert o.cost.usd("hardware") == 1600
    assert o.cost.usd("power") / o.busy_hours == pytest.approx(0.0702)
    assert o.usd_per_hour == pytest.approx(1600 / 26_280 / 0.7 + 0.0702)
    assert o.usd_per_million_tokens(70) == pytest.approx(0.6237, abs=1e-4)
    # a month of it: 1600 ÷ 36 + 0.0702 × 730 h × 0.7 = $44.44 + $35.87
    assert o.usd_per_month == pytest.approx(1600 / 36 + 0.0702 * 730 * 0.7)


def test_break_even_utilization_a100() -> None:
    # 002 Q6: A100 80GB $12,000 vs $5.12/GPU-h on demand. Power 0.4 kW × 1.3 × $0.12 = $0.0624/h;
    # u* = 12,000 ÷ (26,280 h × (5.12 − 0.0624)) = 0.0903. GPU-only: host servers, networking and staff (which
    # bring 002's rule of thumb to 30-40%) are not in this figure.
    u = break_even_utilization(Buy(_card(12_000, 400)), 5.12, DEFAULT_FACTORS)
    assert u is not None
    assert u == pytest.approx(12_000 / (26_280 * (5.12 - 0.0624)))
    assert u == pytest.approx(0.0903, abs=1e-4)
    # Owning and renting cost the same at u*, priced by the one ownership pricing.
    o = price_owned(_card(12_000, 400), utilization=u, factors=DEFAULT_FACTORS)
    assert o.usd_per_hour == pytest.approx(5.12)
    # eight of them bought together break even where one does
    assert break_even_utilization(Buy(_card(96_000, 3_200)), 8 * 5.12, DEFAULT_FACTORS) == pytest.approx(u)


def test_break_even_none_when_renting_is_cheaper_than_power_or_never_pays() -> None:
    assert break_even_utilization(Buy(_card(12_000, 400)), 0.05, DEFAULT_FACTORS) is None  # below power
    assert break_even_utilization(Buy(_card(1_000_000, 400)), 1.0, DEFAULT_FACTORS) is None  # > 100 %


def test_break_even_counts_site_and_resale_as_the_ranking_does() -> None:
    # An 8 × A100 server as a consultation buys it: $96,000 of cards + $40,000 host, 6.5 kW in a server room at
    # $184.06 per kW a month, sold after 3 years with the cards at 25 % and the host at 5 % (H15 against 002 Q6's
    # $5.12/GPU-h on demand, 8 GPUs = $40.96/h). Over 26,280 h (36 months):
    #   owning at u = 136,000 − (24,000 + 2,000) + 6.5 × 184.06 × 36 (= 43,070.04) + u × 6.5 × 1.3 × 0.12 × 26,280
    #               = 153,070.04 + u × 26,647.92;  renting = u × 40.96 × 26,280 = u × 1,076,428.80
    #   u* = 153,070.04 ÷ (1,076,428.80 − 26,647.92) = 153,070.04 ÷ 1,049,780.88 = 0.14581
    # (price alone, as before issue 40: 136,000 ÷ 1,049,780.88 = 0.12955)
    server = Ownership(hardware_usd=136_000, network_usd=0.0, power_w=6_500, site_kw=6.5, accelerators_usd=96_000,
                       resale_share=0.25, host_resale_share=0.05)
    u = break_even_utilization(Buy(server), 8 * 5.12, DEFAULT_FACTORS)
    assert u == pytest.approx(153_070.04 / 1_049_780.88)
    assert u == pytest.approx(0.14581, abs=1e-5)
    # at u* the ranked figure of owning equals renting the same hours, priced by price()
    owned = price(Buy(server), for_life(DEFAULT_FACTORS, u), DEFAULT_FACTORS)
    rented = price(Rent(8 * 5.12, "on-demand", "8 × A100"), for_life(DEFAULT_FACTORS, u, 730 * u), DEFAULT_FACTORS)
    assert owned is not None and rented is not None
    assert owned.cost.total == pytest.approx(rented.cost.total)
    assert owned.cost.total == pytest.approx(1_076_428.80 * u)


def test_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        serving_capacity(0, 200, 400)
    with pytest.raises(ValueError):
        price_owned(_card(1600, 450), utilization=1.5, factors=DEFAULT_FACTORS)
    with pytest.raises(ValueError):
        usd_per_million_tokens(1.0, 0)


def test_shown_figures_come_from_the_decision_cost() -> None:
    # a 3-hour run at $2/h is $6, all of it within one month; a 1,460-hour run (2 months of 730 h) is $2,920,
    # $1,460 a month; a service at $2/h for 730 h a month over 36 months is $52,560, $1,460 a month
    short = priced(rental_run(2.0, 3.0, "x"), 3.0)
    assert short.cost.total == 6.0 and short.usd_per_month == 6.0 and short.usd_per_hour == 2.0
    long = priced(rental_run(2.0, 1460.0, "x"), 1460.0)
    assert long.usd_per_month == pytest.approx(1460.0) and long.months == pytest.approx(2.0)
    service = priced(rental_serving(2.0, 730.0, 36.0, "x"), 730.0 * 36)
    assert service.cost.total == pytest.approx(52_560.0) and service.usd_per_month == pytest.approx(1460.0)
    assert service.usd_per_million_tokens(1000) == pytest.approx(2.0 / 3.6)  # $2/h ÷ 3.6M tokens an hour
