"""One price: what an acquisition costs over a use of it, with the figures shown beside it (issue 40).

The consultation (rules/consultation/derivations.py for rentals and purchases, rules/owned/alternatives.py for the
hardware you own and free notebook tiers), `gpuadvisor estimate` (rules/estimate/consult.py) and the lifecycle
(rules/lifecycle/consult.py) all price through `price`, so one acquisition used one way costs the same wherever it
is shown. What is acquired:

- `Rent`: machines by the hour, on demand, on spot, on a 1- or 3-year commitment, or on a short reserved cluster;
- `Buy`: a purchase (accelerators, hosts, fabric) with its power, site and resale (`Ownership`);
- `Own`: hardware the user has already paid for: power only;
- `Free`: a free notebook tier: no dollars (its quotas are rules, not costs).

How it is used: `Run` (one training or fine-tuning run), `Service` (serving or interactive use over the hardware's
life, `deployment.lifetime_years`), or `Window` (a purchase held for a window and busy part of it: a run that keeps
or sells what it bought, a lifecycle's phase, a run's share of a fleet other work keeps busy).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.knowledge.schema import ReservationTerm
from gpuadvisor.rules.pricing.decision_cost import (
    COMMITMENTS,
    SHORT_RESERVATION,
    CostPart,
    DecisionCost,
    Ownership,
    PricedOption,
    horizon_words,
    ownership_cost,
    price_owned,
    priced,
    rental_commitment,
    rental_reserved_run,
    rental_run,
    rental_serving,
    serving_months,
)
from gpuadvisor.rules.sizing.cost import power_usd_per_hour
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.units import HOURS_PER_MONTH


@dataclass(frozen=True)
class Rent:
    """Machines rented by the hour: `usd_per_hour` for all of them together."""

    usd_per_hour: float
    kind: str
    """on-demand, spot, reserved-1y, reserved-3y (COMMITMENTS) or capacity-block (SHORT_RESERVATION)."""
    what: str
    """How the rental reads in its cost part ('2 × AWS p5.48xlarge on-demand')."""
    term: ReservationTerm | None = None
    """The booking steps of a short reserved cluster (capacity-block)."""


@dataclass(frozen=True)
class Buy:
    """A purchase with its power, site and resale shares (pricing.owning)."""

    ownership: Ownership
    resale_words: str = ""
    """How the resale was priced (the part's class and age), appended to the resale part."""


@dataclass(frozen=True)
class Own:
    """Hardware the user already has: already paid for, so it costs its power while busy."""

    power_w: float
    what: str
    """The power arithmetic as the part reads ('700 W × 1.2 PUE × $0.12/kWh = $0.101/h (…)')."""


@dataclass(frozen=True)
class Free:
    """A free notebook tier: no dollars; its session and quota limits are rules (A.free-sessions)."""


Acquisition = Rent | Buy | Own | Free


@dataclass(frozen=True)
class Run:
    """One training or fine-tuning run: `wall_hours` of work; a rental bills `billed_hours` (the run and its
    session's set-up, usage.rented_hours_per_run)."""

    wall_hours: float
    billed_hours: float


@dataclass(frozen=True)
class Service:
    """Serving or interactive use for `months` (the hardware's life): a rental bills `billed_hours_per_month`, an
    owned machine is busy `utilization` of every hour."""

    months: float
    billed_hours_per_month: float
    utilization: float


@dataclass(frozen=True)
class Window:
    """A purchase held `window_hours`, busy `busy_hours` of them; `share` < 1 charges the run its part of a fleet
    other work keeps busy; `months` None for one run."""

    window_hours: float
    busy_hours: float
    months: float | None
    share: float = 1.0


Use = Run | Service | Window


def for_life(factors: Factors, utilization: float, billed_hours_per_month: float = HOURS_PER_MONTH) -> Service:
    """A service over the hardware's life (deployment.lifetime_years), busy `utilization` of every hour."""
    return Service(serving_months(factors), billed_hours_per_month, utilization)


@dataclass(frozen=True)
class Priced:
    """A priced acquisition: the decision cost with its shown figures, and the hours billed (a run's, or a
    service's a month; a short reservation's booked hours)."""

    option: PricedOption
    billed_hours: float

    @property
    def cost(self) -> DecisionCost:
        return self.option.cost


def price(acquisition: Acquisition, use: Use, factors: Factors) -> Priced | None:
    """What `acquisition` costs over `use`, part by part (S9), or None when it cannot be had for that use (a run
    longer than one short reservation can be booked for)."""
    match acquisition, use:
        case Rent(), Run():
            return _rent_run(acquisition, use)
        case Rent(), Service():
            if acquisition.kind in COMMITMENTS:
                cost = rental_commitment(acquisition.usd_per_hour, COMMITMENTS[acquisition.kind], use.months,
                                         acquisition.what)
                return Priced(priced(cost, HOURS_PER_MONTH * use.months), HOURS_PER_MONTH)
            cost = rental_serving(acquisition.usd_per_hour, use.billed_hours_per_month, use.months, acquisition.what)
            return Priced(priced(cost, use.billed_hours_per_month * use.months), use.billed_hours_per_month)
        case Buy(), Service():
            return Priced(price_owned(acquisition.ownership, utilization=use.utilization, factors=factors,
                                      resale_words=acquisition.resale_words), HOURS_PER_MONTH)
        case Buy(), Window():
            cost = ownership_cost(acquisition.ownership, window_hours=use.window_hours, busy_hours=use.busy_hours,
                                  factors=factors, months=use.months, share=use.share,
                                  resale_words=acquisition.resale_words)
            return Priced(priced(cost, use.busy_hours or 1.0), use.window_hours)
        case Buy(), Run():
            return price(acquisition, Window(use.wall_hours, use.wall_hours, None), factors)
        case Own(), _:
            return _own(acquisition, use, factors)
        case Free(), Service():
            return Priced(priced(DecisionCost(horizon_words(use.months), use.months, ()), 1.0), 0.0)
        case Free(), _:
            return Priced(priced(DecisionCost("one run", None, ()), 1.0), 0.0)
        case _:
            raise TypeError(f"cannot price {type(acquisition).__name__} over {type(use).__name__}")


def _rent_run(rent: Rent, run: Run) -> Priced | None:
    if rent.kind == SHORT_RESERVATION:
        booked = rent.term.booked_days(run.billed_hours / 24.0) if rent.term is not None else None
        if booked is None:
            return None  # longer than one reservation can be booked for
        cost = rental_reserved_run(rent.usd_per_hour, booked, run.billed_hours, rent.what)
        return Priced(priced(cost, run.wall_hours), booked * 24.0)
    return Priced(priced(rental_run(rent.usd_per_hour, run.billed_hours, rent.what), run.wall_hours),
                  run.billed_hours)


def _own(own: Own, use: Use, factors: Factors) -> Priced:
    """Power while busy, at the consultation's PUE and electricity price: a run's hours, or the busy share of every
    hour of a service (as a purchase of the same card is costed: drawing its TDP all month would charge the card
    you own twice the power of the one you would buy)."""
    per_hour = power_usd_per_hour(own.power_w, 1, pue=factors.pue, usd_per_kwh=factors.power_usd_per_kwh)
    if isinstance(use, Service):
        busy = HOURS_PER_MONTH * use.utilization * use.months
        cost = DecisionCost(horizon_words(use.months), use.months,
                            (CostPart("power", per_hour * busy, f"{own.what} × {busy:,.0f} busy hours"),))
        return Priced(priced(cost, busy), use.billed_hours_per_month)
    hours = use.wall_hours if isinstance(use, Run) else use.busy_hours
    cost = DecisionCost("one run", None, (CostPart("power", per_hour * hours, f"{own.what} × {hours:,.1f} h"),))
    return Priced(priced(cost, hours), hours)


def break_even_utilization(buy: Buy, rent_usd_per_hour: float, factors: Factors) -> float | None:
    """Utilization above which owning `buy` over the hardware's life costs less than renting the same accelerators
    at `rent_usd_per_hour` (all of them together) for its busy hours (H15), from the parts `price` charges: owning
    at u costs C(0) + u × P, with C(0) = price − resale + site over the life (no busy hour) and P the power of every
    hour of it; renting costs u × R, R the rate over every hour; u* = C(0) ÷ (R − P). None when renting costs less
    than the power alone, or when u* > 1 (buying never pays off within the life)."""
    idle = price(buy, for_life(factors, 0.0), factors)
    busy = price(buy, for_life(factors, 1.0), factors)
    rent = price(Rent(rent_usd_per_hour, "on-demand", "break-even"), for_life(factors, 1.0), factors)
    assert idle is not None and busy is not None and rent is not None  # a service is always priced
    margin = rent.cost.total - busy.cost.usd("power")
    if margin <= 0:
        return None
    u = max(0.0, idle.cost.total / margin)
    return u if u <= 1.0 else None
