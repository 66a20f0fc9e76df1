"""What a purchase costs when it is priced as it is bought: accelerators, the machines they go in, and the fabric.

A loose card needs a server or a workstation; an SXM/OAM module comes only on its board inside a server; a cluster
needs switches, optics and cables. `purchase_bill` adds up the machines of a plan (systems.toml), the cards they hold
(accelerators.toml), and, when the machines must work as one cluster, the fabric ports each machine's NICs take
(systems.toml `[[fabric]]`), with the power the whole draws. Every part of the sum is said in `words`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Price, System, SystemPrice, parse_as_of
from gpuadvisor.rules.planning.units import fabric_for, fabric_ports, frontend_fabric
from gpuadvisor.rules.pricing.fabric import FabricBill, cluster_bill, frontend_bill


@dataclass(frozen=True)
class PurchaseBill:
    """The price of `machines` machines holding `accelerators` accelerators, and what they draw."""

    capex_usd: float
    accelerators_usd: float
    host_usd: float
    fabric_usd: float
    power_w: float
    kind: str
    """The price kind of the dominant figure (the cards' or the whole system's): msrp, street, estimate ..."""
    as_of: str | None
    """The oldest date among the prices used; None when one of them is undated. A bill whose dominant figure is the
    buyer's own quote is dated by the quote (the other prices' dates are in `words`)."""
    sources: str
    words: str
    """'8 × $30,000 GPUs + $80,000 host + $20,800 InfiniBand NDR fabric'."""
    known_split: bool = True
    """False when a whole-system price has no published split between accelerators and the rest."""
    power_known: bool = True
    """False when a part of the machine's draw has no published figure and is not counted (said in `words`)."""

    @property
    def beyond_usd(self) -> float | None:
        """What the purchase costs beyond its accelerators (hosts, fabric); None when the split is not published."""
        return self.host_usd + self.fabric_usd if self.known_split else None


def _oldest(dates: list[str | None]) -> str | None:
    if any(d is None for d in dates):
        return None
    real = [d for d in dates if d is not None]
    return min(real, key=parse_as_of) if real else None


def purchase_bill(catalog: Catalog, system: System, acc: Accelerator, machines: int, accelerators: int, *,
                  joined: bool) -> PurchaseBill:
    """The bill of a plan on `machines` of `system` holding `accelerators` of `acc`; `joined` = the machines work
    as one job (training, or a replica spanning machines) and need a fabric between them."""
    word = "GPU" if acc.vendor in ("nvidia", "amd") else "accelerator"
    price = system.price
    card = acc.purchase_price_usd
    dates: list[str | None] = []
    sources: list[str] = []
    parts: list[str] = []
    known_split = True
    quoted_on: str | None = None  # the buyer's quote for the part (or the whole machine) dates the bill
    if price is not None and price.includes_accelerators:
        whole = machines * price.value
        if system.host_share is not None:
            host = machines * system.host_share.value
            sources += system.host_share.sources
        else:
            host, known_split = 0.0, False
        accel = whole - host
        kind = price.kind
        quoted_on = price.as_of if kind == "quote" else None
        dates.append(price.as_of)
        sources += price.sources
        parts.append(f"{machines} × ${price.value:,.0f} {system.name} with its {word}s{_quoted(price)}"
                     + (f" (host ${system.host_share.value:,.0f} of it)" if system.host_share is not None else
                        " (no split of the price published)"))
    else:
        if card is None:
            raise LookupError(f"{acc.id} has no purchase price: it cannot be bought in {system.id}")
        accel = accelerators * card.value
        host = machines * (price.value if price is not None else 0.0)
        kind = card.kind
        quoted_on = card.as_of if kind == "quote" else None
        dates.append(card.as_of)
        sources += card.sources
        parts.append(f"{accelerators:,} × ${card.value:,.0f} {word}s ({_kind_words(card)})")
        if price is not None:
            dates.append(price.as_of)
            sources += price.sources
            host_words = (_quoted(price) if price.kind == "quote" or quoted_on is None else
                          f" ({price.kind}, {price.as_of or 'undated'})")  # beside a quote, the host's own date
            parts.append(f"{machines} × ${price.value:,.0f} {system.name} host{'s' if machines > 1 else ''}"
                         f"{host_words}")
    fabric_usd = 0.0
    network = network_bill(catalog, system, machines, joined=joined)
    if network is not None:
        fabric_usd = network.usd
        f = network.fabric
        for paid in (f.switch_usd, f.link_usd, *((f.nic_usd,) if network.nics and f.nic_usd else ())):
            dates.append(paid.as_of)
            sources += paid.sources
        parts.append(network.words())
    if price is not None and price.includes:
        parts.append(f"the {system.kind} price includes {', '.join(price.includes)}")
    before = len(parts)
    power = _power_w(system, acc, machines, accelerators, parts)
    return PurchaseBill(power_known=len(parts) == before and power > 0,
                        capex_usd=accel + host + fabric_usd, accelerators_usd=accel, host_usd=host,
                        fabric_usd=fabric_usd, power_w=power, kind=kind,
                        as_of=quoted_on if quoted_on is not None else _oldest(dates),
                        sources=", ".join(dict.fromkeys(sources)), words=" + ".join(parts), known_split=known_split)


def _kind_words(price: Price | SystemPrice) -> str:
    """A price's kind as the bill says it: the buyer's quote names its date and vendor (its notes, written by
    knowledge.quotes), the others their kind."""
    if price.kind == "quote":
        return price.notes or "your quote"
    return price.kind


def _quoted(price: Price | SystemPrice) -> str:
    return f" ({_kind_words(price)})" if price.kind == "quote" else ""


def network_bill(catalog: Catalog, system: System, machines: int, *, joined: bool) -> FabricBill | None:
    """The network `machines` machines of `system` need: a cluster fabric when they work as one job (switches,
    links and any NICs their price leaves out, `rules.fabric`), else a front-end port each on the site network;
    None for one machine, or desk-side machines (they stand on the office network)."""
    if machines <= 1 or system.desk_side:
        return None
    nics = system.nics
    bought = nics.count if nics is not None and not nics.included else 0
    fabric = fabric_for(catalog, system) if joined else None
    if fabric is not None:
        return cluster_bill(fabric, machines, fabric_ports(system, fabric), nics_per_machine=bought)
    front = frontend_fabric(catalog)
    if front is None:
        return None
    return frontend_bill(front, machines, nics_per_machine=0 if nics is not None and nics.included else 1)


def _power_w(system: System, acc: Accelerator, machines: int, accelerators: int, parts: list[str]) -> float:
    """What the machines draw at load: the accelerators' TDP plus each host's own draw; a whole machine without
    a per-chip TDP draws its system rating (a Mac Studio's 480 W)."""
    if acc.tdp_w is None and system.host_power_w is None and system.system_power_w is not None:
        return machines * system.system_power_w.value
    tdp = acc.tdp_w.value if acc.tdp_w is not None else 0.0
    host_w = system.host_power_w.value if system.host_power_w is not None else 0.0
    if acc.tdp_w is None:
        parts.append("accelerator power not counted (no published TDP)")
    if system.host_power_w is None and system.kind != "appliance" and not system.existing:
        parts.append("host power not counted (none published)")
    return accelerators * tdp + machines * host_w
