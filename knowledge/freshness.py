"""How old the prices in use are: every purchase price and each instance's newest price of each type, with its age.

Why a module of its own: `gpuadvisor kb stale` lists them, and anything that shows a price (a report, the results
screen) can ask the same question without re-deriving which price is "in use". An undated price (`as_of` None: its
source gives no date) has no age and is reported apart, never treated as new or old.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import InstancePrice, age_months, parse_as_of


@dataclass(frozen=True)
class PriceAge:
    """One price in use with its age in whole months (None when undated)."""

    what: str
    """"purchase", or the instance price type ("on-demand", "spot", ...)."""
    entry: str
    """Accelerator or instance id."""
    price: str
    """As shown: "$1,599 msrp" or "$55.04/h"."""
    as_of: str | None
    months: int | None


def price_ages(catalog: Catalog, today: date) -> list[PriceAge]:
    """Every price the advisor can use, with its age on `today`."""
    return [PriceAge(what, entry, price, as_of, age_months(as_of, today))
            for what, entry, price, as_of in _prices_in_use(catalog)]


def _prices_in_use(catalog: Catalog) -> Iterator[tuple[str, str, str, str | None]]:
    for acc in catalog.accelerators.values():
        p = acc.purchase_price_usd
        if p is not None:
            yield "purchase", acc.id, f"${p.value:,.0f} {p.kind}", p.as_of
    for inst in catalog.instances.values():
        for kind in sorted({p.type for p in inst.price}):
            offer = newest_price(p for p in inst.price if p.type == kind)
            yield kind, inst.id, f"${offer.usd_per_hour:,.2f}/h", offer.as_of


def newest_price(prices: Iterable[InstancePrice]) -> InstancePrice:
    """The newest dated price among `prices` (non-empty); an undated one only when none of them is dated."""
    candidates = list(prices)
    dated = [(d, i) for i, p in enumerate(candidates) if (d := _date_of(p.as_of)) is not None]
    return candidates[max(dated)[1]] if dated else candidates[0]


def _date_of(as_of: str | None) -> date | None:
    return None if as_of is None else parse_as_of(as_of)
