"""The loaded knowledge base: every entry by id, the source registry, and where each came from.

A `Catalog` is built by `gpuadvisor.knowledge.loader.load_catalog`; treat it as read-only. It records which entries a
user overlay added or changed, so reports can say "your price" rather than pass it off as shipped data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal, NamedTuple

from gpuadvisor.knowledge.schema import (
    Accelerator,
    Assumption,
    Document,
    Engine,
    EngineProfile,
    Fabric,
    FreeTier,
    Instance,
    Model,
    Precision,
    Quote,
    ServingRecipe,
    Source,
    System,
    UsedPrice,
    parse_as_of,
)

EntryKind = Literal["accelerator", "instance", "model", "precision", "assumption", "document", "source",
                    "free_tier", "engine", "engine_profile", "serving_recipe", "system", "fabric", "quote",
                    "used_price"]
OverlayStatus = Literal["overridden", "added"]


@dataclass(frozen=True)
class CatalogFile:
    """One TOML file that went into the catalog."""

    path: Path
    sha256: str
    """First 12 hex digits of the file's SHA-256."""
    counts: Mapping[str, int]
    """Entries per table kind ('accelerator': 45, 'source': 52, ...)."""
    overlay: bool


@dataclass(frozen=True)
class RefreshedCatalog:
    """One provider catalog a price refresh read."""

    provider: str
    version: str
    as_of: str
    """The catalog's own date ('' when it has none: its prices are then dated the day of the refresh)."""


def _list(value: Any) -> list[Any]:
    """A list from a hand-edited file, or none (`catalogs = 5` must not be iterated)."""
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class RefreshInfo:
    """When and from where the refreshed prices in use were fetched (`gpuadvisor kb refresh`)."""

    path: Path
    refreshed_on: date | None
    origin: str
    catalogs: tuple[RefreshedCatalog, ...] = ()

    @classmethod
    def from_meta(cls, path: Path, meta: Any) -> RefreshInfo:
        """From the file's [refresh] table; missing or odd fields leave the figures unknown, never invented."""
        meta = meta if isinstance(meta, Mapping) else {}
        try:
            when: date | None = date.fromisoformat(str(meta.get("refreshed_on")))
        except ValueError:
            when = None
        catalogs = tuple(RefreshedCatalog(str(c.get("provider", "?")), str(c.get("version", "")),
                                          str(c.get("as_of", "")))
                         for c in _list(meta.get("catalogs")) if isinstance(c, Mapping))
        return cls(path, when, str(meta.get("origin", "")), catalogs)

    def age_days(self, today: date) -> int | None:
        return None if self.refreshed_on is None else max((today - self.refreshed_on).days, 0)


class DateRange(NamedTuple):
    oldest: date
    newest: date


@dataclass(frozen=True)
class Catalog:
    """Accelerators, instances, models, precisions, assumptions, documents and sources, keyed by id."""

    accelerators: dict[str, Accelerator]
    instances: dict[str, Instance]
    models: dict[str, Model]
    precisions: dict[str, Precision]
    assumptions: dict[str, Assumption]
    documents: dict[str, Document]
    sources: dict[str, Source]
    files: list[CatalogFile]
    version: str
    """Package version plus a short hash of every file's hash: two runs with the same version saw the same data."""
    overridden: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per kind ('accelerator', ...): ids of shipped entries a user overlay changed."""
    added: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per kind: ids a user overlay added."""
    free_tiers: dict[str, FreeTier] = field(default_factory=dict)
    """Free notebook GPUs (Colab, Kaggle, SageMaker Studio Lab) by id: session and quota limits, no price."""
    engines: dict[str, Engine] = field(default_factory=dict)
    """Serving engines (engines.toml)."""
    engine_profiles: dict[str, EngineProfile] = field(default_factory=dict)
    """Per `engine@family`: calibrated decode efficiencies (engines.toml)."""
    serving_recipes: dict[str, ServingRecipe] = field(default_factory=dict)
    """Published serving recipes: an engine's split of one model on one part (engines.toml)."""
    systems: dict[str, System] = field(default_factory=dict)
    """Purchasable machines (systems.toml): servers, workstations, racks and appliances, with their host's price."""
    fabrics: dict[str, Fabric] = field(default_factory=dict)
    """Scale-out networks one buys for a cluster (systems.toml): cost per port."""
    refreshed: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per kind: ids whose prices came from (or that were added by) `gpuadvisor kb refresh`."""
    refresh: RefreshInfo | None = None
    """The refresh those prices came from; None when the shipped prices are all there is."""
    quotes: dict[str, Quote] = field(default_factory=dict)
    """The buyer's own quotes by id (the user overlay's quotes.toml): the valid ones are in the prices above."""
    expired_quotes: list[Quote] = field(default_factory=list)
    """Quotes past their `valid_until` on the day the catalog was loaded: not applied."""
    used_prices: dict[str, UsedPrice] = field(default_factory=dict)
    """The used-market series by part (assumptions.toml `[[used_price]]`): what the resale curves are held to."""

    def overlay_status(self, kind: EntryKind, entry_id: str) -> OverlayStatus | None:
        """'overridden' or 'added' when a user overlay touched this entry, else None."""
        if entry_id in self.overridden.get(kind, frozenset()):
            return "overridden"
        if entry_id in self.added.get(kind, frozenset()):
            return "added"
        return None

    @property
    def has_overlay(self) -> bool:
        return any(f.overlay for f in self.files)

    def price_dates(self) -> DateRange | None:
        """Oldest and newest `as_of` among the prices in use (newest per instance and type, purchase prices)."""
        dates: list[date] = []
        for inst in self.instances.values():
            for kind in {p.type for p in inst.price}:
                current = inst.current_price(kind)
                if current is not None and current.as_of_date is not None:
                    dates.append(current.as_of_date)
        for acc in self.accelerators.values():
            if acc.purchase_price_usd is not None and acc.purchase_price_usd.as_of is not None:
                dates.append(parse_as_of(acc.purchase_price_usd.as_of))
        return DateRange(min(dates), max(dates)) if dates else None
