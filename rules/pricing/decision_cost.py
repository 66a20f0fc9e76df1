"""The decision in dollars: what choosing an option costs its owner over the user's horizon, part by part.

Every option is ranked by one figure (issue 26): the sum of its cost parts over the horizon — one run for training
and fine-tuning, the hardware's life (`deployment.lifetime_years`) for serving and interactive use. The parts:

- **rental**: the hourly rate (on-demand, spot, or a 1- or 3-year commitment) × the hours billed;
- **hardware**, **network**: what a purchase pays for accelerators and hosts, and for the fabric that joins machines;
- **power**, **site**: electricity while busy (× PUE), and server-room capacity per kW for the time it is held;
- **resale**: what the purchase sells for at the horizon's end (rules/pricing/economics.py), a negative part;
- **engineering**: engineer-weeks to move the team's code to another software stack (rule H10.port).

What the service level or the user forbids is a constraint (a `rule_out` in the packs), never a cost; advice
explains and changes no figure. Each part says how it was computed, so the ranked figure reads as a sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuadvisor.rules.pricing.purchases import PurchaseBill
from gpuadvisor.rules.sizing.cost import PartName, power_usd_per_hour, usd_per_million_tokens
from gpuadvisor.rules.sizing.factors import Factors, Note
from gpuadvisor.rules.sizing.units import HOURS_PER_MONTH, HOURS_PER_YEAR


@dataclass(frozen=True)
class CostPart:
    """One part of a decision's cost, with the arithmetic that gives it."""

    part: PartName
    usd: float
    label: str
    rule: str = "S9"
    """The rule whose conclusion the part is: the pricing rules (S9) or a pack rule adding a cost (H10.port)."""


@dataclass(frozen=True)
class DecisionCost:
    """What an option costs its owner over the horizon: the ranked figure is `total`."""

    horizon: str
    """'one run' or 'over 36 months'."""
    months: float | None
    """The horizon in months for serving and interactive use (None: one run)."""
    parts: tuple[CostPart, ...]

    @property
    def total(self) -> float:
        return sum(p.usd for p in self.parts)

    def with_parts(self, extra: tuple[CostPart, ...]) -> DecisionCost:
        return DecisionCost(self.horizon, self.months, (*self.parts, *extra))

    def usd(self, part: PartName) -> float:
        return sum(p.usd for p in self.parts if p.part == part)


def serving_months(factors: Factors) -> float:
    """The horizon of a service or of interactive use: the hardware's life (deployment.lifetime_years)."""
    return factors.hardware_lifetime_years * 12.0


def horizon_words(months: float | None) -> str:
    return "one run" if months is None else f"over {months:,.0f} months"


def rental_serving(usd_per_hour: float, billed_hours_per_month: float, months: float, what: str) -> DecisionCost:
    """Renting for a service or interactive use: the rate × the hours billed a month × the horizon's months."""
    usd = usd_per_hour * billed_hours_per_month * months
    return DecisionCost(horizon_words(months), months, (CostPart(
        "rental", usd, f"{what}: ${usd_per_hour:,.2f}/h × {billed_hours_per_month:,.0f} h a month × {months:,.0f} "
                       f"months"),))


COMMITMENTS = {"reserved-1y": 12.0, "reserved-3y": 36.0}
"""Committed rental price kinds and their terms in months (1- and 3-year reservations, savings plans, CUDs)."""


def rental_commitment(usd_per_hour: float, term_months: float, months: float, what: str) -> DecisionCost:
    """A 1- or 3-year commitment: every hour of every term is paid, used or not, for as many terms as the horizon
    needs."""
    terms = max(1, -(-int(round(months)) // int(term_months)))
    paid_months = terms * term_months
    usd = usd_per_hour * HOURS_PER_MONTH * paid_months
    return DecisionCost(horizon_words(months), months, (CostPart(
        "rental", usd, f"{what}: ${usd_per_hour:,.2f}/h × {HOURS_PER_MONTH:g} h a month × {paid_months:,.0f} "
                       f"months committed ({terms} term{'s' if terms > 1 else ''} of {term_months:g}), paid "
                       "whether used or not"),))


SHORT_RESERVATION = "capacity-block"
"""The price kind of a short-term reserved cluster (days to 6 months, InstancePrice.term): booked in whole steps."""


def rental_reserved_run(usd_per_hour: float, booked_days: int, used_hours: float, what: str) -> DecisionCost:
    """A run on a short-term reserved cluster: every hour of the days booked is paid, used or not (AWS Capacity
    Blocks: whole days up to 14, then whole weeks up to 182 days, paid up front)."""
    usd = usd_per_hour * booked_days * 24.0
    return DecisionCost("one run", None, (CostPart(
        "rental", usd, f"{what}: ${usd_per_hour:,.2f}/h × {booked_days:,} days × 24 h reserved for a run of "
                       f"{used_hours:,.1f} h, paid whether used or not"),))


def rental_run(usd_per_hour: float, billed_hours: float, what: str) -> DecisionCost:
    """Renting for one training run: the rate × the hours billed (the run and its session's set-up)."""
    usd = usd_per_hour * billed_hours
    return DecisionCost("one run", None, (CostPart(
        "rental", usd, f"{what}: ${usd_per_hour:,.2f}/h × {billed_hours:,.1f} h billed"),))


@dataclass(frozen=True)
class Ownership:
    """A purchase held for a window of `window_hours` and busy `busy_hours` of it."""

    hardware_usd: float
    """Accelerators and the machines they go in."""
    network_usd: float
    """The cluster fabric (switch ports, NICs, optics, cables)."""
    power_w: float
    site_kw: float
    """Server-room capacity rented for the machines (0 for desk-side machines)."""
    accelerators_usd: float
    """The accelerators' share of hardware_usd (all of it for a whole-system price with no published split)."""
    resale_share: float
    """Share of the accelerators' price they sell for at the window's end (0: kept, not sold)."""
    host_resale_share: float = 0.0
    """Share of the hosts' and the network's price they sell for then (scrap: resale_share_host)."""


def owning(bill: PurchaseBill, *, site_kw: float, resale_share: float = 0.0,
           host_resale_share: float = 0.0) -> Ownership:
    """What a purchase bill holds for its owner: hardware (accelerators and hosts), network, power and site."""
    return Ownership(hardware_usd=bill.accelerators_usd + bill.host_usd, network_usd=bill.fabric_usd,
                     power_w=bill.power_w, site_kw=site_kw, accelerators_usd=bill.accelerators_usd,
                     resale_share=resale_share, host_resale_share=host_resale_share)


def ownership_cost(o: Ownership, *, window_hours: float, busy_hours: float, factors: Factors,
                   months: float | None, share: float = 1.0, resale_words: str = "") -> DecisionCost:
    """A purchase over a window: its price, its power while busy and its site while held, less its resale value.

    `share` < 1 charges a run the part of an owned fleet's cost its hours take when other work keeps the fleet busy
    (deployment.utilization given): price and resale over the hardware's life, spread over the busy hours."""
    kw = o.power_w / 1000.0
    power = power_usd_per_hour(o.power_w, 1, pue=factors.pue, usd_per_kwh=factors.power_usd_per_kwh) * busy_hours
    site = o.site_kw * factors.colocation_usd_per_kw_month * window_hours / HOURS_PER_MONTH * share
    rest = o.hardware_usd - o.accelerators_usd + o.network_usd
    resale = (o.accelerators_usd * o.resale_share + rest * o.host_resale_share) * share
    spread = f" × {share:.2%} (this run's share of the fleet's busy hours)" if share < 1.0 else ""
    parts = [CostPart("hardware", o.hardware_usd * share, f"accelerators and hosts ${o.hardware_usd:,.0f}{spread}")]
    if o.network_usd:
        parts.append(CostPart("network", o.network_usd * share, f"cluster network ${o.network_usd:,.0f}{spread}"))
    parts.append(CostPart("power", power, f"{kw:,.1f} kW × {factors.pue:g} PUE × ${factors.power_usd_per_kwh:g}/kWh "
                                          f"× {busy_hours:,.0f} busy hours" if kw else
                          "not counted: no published power rating for this machine (knowledge base)"))
    if site:
        parts.append(CostPart("site", site, f"{o.site_kw:,.1f} kW of server room × "
                                            f"${factors.colocation_usd_per_kw_month:,.0f} per kW a month × "
                                            f"{window_hours / HOURS_PER_MONTH * share:,.1f} months"))
    if resale:
        hosts = (f", hosts and network at {o.host_resale_share:.0%} of ${rest:,.0f} (scrap: no used market for "
                 "them)" if rest and o.host_resale_share else "")
        parts.append(CostPart("resale", -resale, f"accelerators resold for {o.resale_share:.0%} of "
                                                 f"${o.accelerators_usd:,.0f}{hosts}, net of selling costs"
                                                 f"{resale_words}{spread}"))
    return DecisionCost(horizon_words(months), months, tuple(parts))


def lifetime_hours(factors: Factors) -> float:
    return factors.hardware_lifetime_years * HOURS_PER_YEAR


@dataclass(frozen=True)
class PricedOption:
    """An option priced over its horizon: the decision cost by part, and the figures shown beside it ($/h, $/month,
    $/1M tokens), each derived from those parts so that no shown figure is priced beside the ranked one."""

    cost: DecisionCost
    busy_hours: float
    """Hours it works over the horizon: a run's hours, or the busy share of the hardware's life."""
    months: float
    """Months the cost is spread over for the monthly figure."""

    @property
    def usd_per_hour(self) -> float:
        """Per busy hour: what is paid whether busy or not is spread over the hours worked."""
        return self.cost.total / self.busy_hours if self.busy_hours > 0 else math.inf

    @property
    def usd_per_month(self) -> float:
        return self.cost.total / self.months

    def usd_per_million_tokens(self, tokens_per_s: float | None) -> float | None:
        """$ per 1M tokens made while busy at `tokens_per_s` (None when no throughput is known)."""
        return usd_per_million_tokens(self.usd_per_hour, tokens_per_s) if tokens_per_s else None


def priced(cost: DecisionCost, busy_hours: float) -> PricedOption:
    """A decision cost with its shown figures: a service's monthly figure is its horizon's cost over its months; a
    run's is its whole cost when it ends within a month, else spread over the months it takes."""
    return PricedOption(cost, busy_hours, cost.months or max(busy_hours / HOURS_PER_MONTH, 1.0))


def price_owned(o: Ownership, *, utilization: float, factors: Factors, resale_words: str = "") -> PricedOption:
    """A purchase held for the hardware's life (deployment.lifetime_years), busy `utilization` of every hour:
    its price, power while busy, site while held, less `o`'s resale (S9). The one ownership pricing: the ranked
    decision cost of a service, a purchase's lifetime cost shown beside any option, and estimate's owned figures."""
    if not 0 <= utilization <= 1:
        raise ValueError("utilization must be in [0, 1]")
    hours = lifetime_hours(factors)
    months = factors.hardware_lifetime_years * 12.0
    cost = ownership_cost(o, window_hours=hours, busy_hours=hours * utilization, factors=factors, months=months,
                          resale_words=resale_words)
    return PricedOption(cost, hours * utilization, months)


def ownership_notes(factors: Factors) -> tuple[Note, ...]:
    """The assumptions an owned figure rests on, for a report's list of them."""
    return (
        factors.note("hardware_lifetime_years", "Depreciation period of owned hardware"),
        factors.note("pue", "Data-centre power usage effectiveness"),
        factors.note("power_usd_per_kwh", "Electricity price"),
        Note("method.owned_cost", "Owned cost per busy hour = (price + server-room rent while held − resale at the "
             "part's age after its life) ÷ (lifetime hours × utilization) + power × PUE × $/kWh; the price is what "
             "is bought (the accelerators, their hosts and fabric), as a consultation prices a purchase; staff are "
             "not included", source="S9 (002)"),
    )

