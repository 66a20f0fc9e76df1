"""One price (issue 40): every acquisition over every use priced by rules/pricing/price.py, checked by hand, and no
other module of rules/ prices an option by the component functions behind it."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor.knowledge.schema import ReservationTerm
from gpuadvisor.rules.pricing.decision_cost import Ownership
from gpuadvisor.rules.pricing.price import Buy, Free, Own, Rent, Run, Service, Window, for_life, price
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS

F = replace(DEFAULT_FACTORS, pue=1.5, power_usd_per_kwh=0.10, hardware_lifetime_years=3.0,
            colocation_usd_per_kw_month=100.0)
ROOT = Path(__file__).resolve().parents[2]


def test_rent_on_demand_for_a_run_bills_its_hours() -> None:
    paid = price(Rent(98.32, "on-demand", "1 × p5.48xlarge on-demand"), Run(100.0, 100.5), F)
    assert paid is not None
    assert paid.cost.total == pytest.approx(98.32 * 100.5)  # set-up billed too
    assert paid.billed_hours == 100.5
    assert paid.option.usd_per_month == pytest.approx(98.32 * 100.5)  # a run within a month spends it all there


def test_a_short_reservation_books_whole_days_and_refuses_what_it_cannot_book() -> None:
    # AWS Capacity Blocks: by the day up to 14 days, then whole weeks up to 182 days
    term = ReservationTerm(min_days=1, max_days=182, step_days=7, daily_until_days=14, sources=["aws"])
    paid = price(Rent(31.46, "capacity-block", "1 × p5 capacity block", term), Run(49.0, 50.0), F)
    assert paid is not None
    assert paid.billed_hours == 3 * 24  # 50 h → 3 whole days
    assert paid.cost.total == pytest.approx(31.46 * 72)
    weeks = price(Rent(31.46, "capacity-block", "20 days", term), Run(20 * 24.0, 20 * 24.0), F)
    assert weeks is not None and weeks.billed_hours == 21 * 24  # past 14 days: whole weeks
    assert price(Rent(31.46, "capacity-block", "too long", term), Run(183 * 24.0, 183 * 24.0), F) is None


def test_a_commitment_pays_every_month_of_every_term_it_starts() -> None:
    # 24 months of service on a 3-year reservation: 36 months paid, whatever the hours used
    paid = price(Rent(2.0, "reserved-3y", "1 × reserved"), Service(24.0, 100.0, 0.2), F)
    assert paid is not None
    assert paid.cost.total == pytest.approx(2.0 * 730 * 36)
    on_demand = price(Rent(2.0, "on-demand", "1 × on demand"), Service(24.0, 100.0, 0.2), F)
    assert on_demand is not None and on_demand.cost.total == pytest.approx(2.0 * 100 * 24)


def _server(price_usd: float = 100_000.0, watts: float = 5_000.0) -> Ownership:
    return Ownership(hardware_usd=price_usd, network_usd=0.0, power_w=watts, site_kw=watts / 1000,
                     accelerators_usd=0.8 * price_usd, resale_share=0.3, host_resale_share=0.05)


def test_a_purchase_over_the_hardwares_life() -> None:
    paid = price(Buy(_server()), for_life(F, 0.5), F)
    assert paid is not None
    hours = 3 * 8760
    power = 5.0 * 1.5 * 0.10 * hours * 0.5
    site = 5.0 * 100.0 * hours / 730
    resale = 80_000 * 0.3 + 20_000 * 0.05
    assert paid.cost.usd("power") == pytest.approx(power)
    assert paid.cost.usd("site") == pytest.approx(site)
    assert paid.cost.total == pytest.approx(100_000 + power + site - resale)
    assert paid.option.usd_per_hour == pytest.approx(paid.cost.total / (hours * 0.5))


def test_a_purchase_held_for_a_window_and_a_run_share() -> None:
    held = price(Buy(_server()), Window(1000.0, 400.0, None, share=0.25), F)
    assert held is not None
    assert held.cost.usd("hardware") == pytest.approx(25_000)
    assert held.cost.usd("power") == pytest.approx(5.0 * 1.5 * 0.10 * 400)
    assert held.cost.usd("resale") == pytest.approx(-(80_000 * 0.3 + 20_000 * 0.05) * 0.25)
    run = price(Buy(_server()), Run(400.0, 410.0), F)  # bought for one run: held exactly as long as it runs
    window = price(Buy(_server()), Window(400.0, 400.0, None), F)
    assert run is not None and window is not None and run.cost == window.cost


def test_hardware_you_own_costs_its_power_while_busy() -> None:
    own = Own(700.0, "700 W")
    run = price(own, Run(10.0, 10.0), F)
    assert run is not None and run.cost.total == pytest.approx(0.7 * 1.5 * 0.10 * 10)
    service = price(own, for_life(F, 0.25, 200.0), F)
    assert service is not None
    assert service.cost.total == pytest.approx(0.7 * 1.5 * 0.10 * 730 * 0.25 * 36)  # busy hours, not every hour
    assert service.option.usd_per_month == pytest.approx(0.7 * 1.5 * 0.10 * 730 * 0.25)


def test_a_free_tier_costs_nothing() -> None:
    for use in (Run(5.0, 5.0), for_life(F, 0.1, 20.0)):
        paid = price(Free(), use, F)
        assert paid is not None and paid.cost.total == 0.0 and paid.cost.parts == ()


PRICING_PARTS = {"rental_serving", "rental_commitment", "rental_reserved_run", "rental_run", "ownership_cost",
                 "price_owned"}


def test_only_price_prices_an_option() -> None:
    """The consultation, estimate and the lifecycle go through price(): none calls the parts behind it."""
    callers = []
    for path in sorted((ROOT / "rules").rglob("*.py")):
        if path.relative_to(ROOT).as_posix() in {"rules/pricing/price.py", "rules/pricing/decision_cost.py"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PRICING_PARTS:
                callers.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.id}")
    assert not callers, callers
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "price"
               for n in ast.walk(ast.parse((ROOT / "rules/lifecycle/consult.py").read_text(encoding="utf-8"))))
