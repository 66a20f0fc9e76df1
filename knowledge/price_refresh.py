"""Turn gpuhunt price catalogs into the overlay `gpuadvisor kb refresh` writes, and say what changed.

Each catalog row becomes an offer of a knowledge-base accelerator, named exactly (never guessed):

1. a shipped instance with the same provider, instance name and GPU count names the part (its sources say which
   A100 a `p4d.24xlarge` holds), provided the catalog's name and memory fit it;
2. else an instance name that is itself a name the GPU driver reports (RunPod lists its pods by
   `NVIDIA A100-SXM4-80GB`) names the part through `reported_names.toml`;
3. else the catalog's accelerator name and memory (`catalog_names`) must fit exactly one part. A name that fits
   several ("H100", 80 GB: SXM5 or PCIe) is refused as ambiguous; a name that fits none is listed as unmapped.

Per provider x instance type x GPU count x price kind only the cheapest offer is kept, with every region that offers
it at that price. An offer of a shipped instance (the same instance name and GPU count; for providers whose shipped
entries are per-GPU listings named by hand, `match = "accelerator"` in price_catalogs.toml, the one listing of the
same part and GPU count) keeps its id, so it keeps that entry's topology (fast domain,
cluster network) and the loader uses the refreshed price of that kind, the shipped prices of other kinds staying as
the fallback. A new instance gets the conservative default: one GPU per fast domain and no cluster network. A fabric
is never invented.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any, Literal

from gpuadvisor.knowledge.budget import read_toml
from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AdvisorError, KnowledgeError
from gpuadvisor.knowledge.files import KNOWLEDGE_MAX_BYTES
from gpuadvisor.knowledge.hardware_probe import NameTable, identify, load_name_table, part_memory_of
from gpuadvisor.knowledge.price_catalog import CatalogRow, ProviderCatalog
from gpuadvisor.knowledge.schema import Instance

PROVIDERS_FILE = Path(__file__).parent / "data" / "price_catalogs.toml"
OVERLAY_FORMAT = 1
SOURCE_PREFIX = "refresh-"
MAX_REGIONS_SHOWN = 3
Pricing = Literal["on-demand", "spot"]


# ----------------------------------------------------------------------------------------------------------------
# The provider table (data)
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogProvider:
    catalog: str
    id: str
    name: str
    kind: str
    terms: str
    match: Literal["instance", "accelerator"]
    """How a catalog offer finds the shipped instance it refreshes: "instance" = the same instance name and GPU
    count (clouds whose shipped entries are their instance types); "accelerator" = also the one shipped listing of
    the same part and GPU count (providers whose shipped entries are per-GPU listings named by hand)."""


@dataclass(frozen=True)
class CatalogSettings:
    url: str
    providers: dict[str, CatalogProvider]
    """By gpuhunt name."""


@cache
def catalog_settings(path: Path = PROVIDERS_FILE) -> CatalogSettings:
    """Read price_catalogs.toml; a malformed file raises KnowledgeError naming the file and the entry."""
    try:
        doc = read_toml(path, what="provider table", max_bytes=KNOWLEDGE_MAX_BYTES)
    except (AdvisorError, tomllib.TOMLDecodeError) as exc:
        raise KnowledgeError(f"{path}: cannot read: {exc}") from None
    url = doc.get("catalog", {}).get("url")
    if not isinstance(url, str) or not url:
        raise KnowledgeError(f"{path}: [catalog] url must be set")
    providers: dict[str, CatalogProvider] = {}
    for n, raw in enumerate(doc.get("provider", []), 1):
        keys = ("catalog", "id", "name", "kind", "terms", "match")
        if set(raw) != set(keys) or not all(isinstance(raw[k], str) and raw[k] for k in keys):
            raise KnowledgeError(f"{path}: [[provider]] #{n}: needs exactly {', '.join(keys)} (strings)")
        if raw["match"] not in ("instance", "accelerator"):
            raise KnowledgeError(f"{path}: [[provider]] #{n}: match must be \"instance\" or \"accelerator\"")
        providers[raw["catalog"]] = CatalogProvider(raw["catalog"], raw["id"], raw["name"], raw["kind"], raw["terms"],
                                                    raw["match"])
    return CatalogSettings(url, providers)


# ----------------------------------------------------------------------------------------------------------------
# Naming the accelerator of an offer
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Naming:
    accelerator: str | None
    how: str
    """How it was named, or why not."""
    ambiguous: bool = False


class OfferNamer:
    """Names catalog rows as knowledge-base parts (see the module docstring for the order)."""

    def __init__(self, shipped: Catalog, table: NameTable | None = None) -> None:
        names = table or load_name_table()
        self.driver = names
        self.catalog_names = names.for_catalogs()
        self.part_memory = part_memory_of(shipped.accelerators)
        self.shipped: dict[tuple[str, str, int], Instance] = {
            (i.provider, i.instance, i.accelerator_count): i for i in shipped.instances.values()}
        self.by_id = dict(shipped.instances)

    def shipped_instance(self, provider: str, row: CatalogRow) -> Instance | None:
        """The shipped instance of the same provider, instance name and GPU count (a TPU slice: `tpu_slice`)."""
        slice_id = tpu_slice(provider, row)
        if slice_id is not None:
            return self.by_id.get(slice_id)
        return self.shipped.get((provider, row.instance, row.gpu_count))

    def listing(self, provider: str, accelerator: str, count: int) -> Instance | None:
        """The one shipped instance of the provider with this part and GPU count (None when none, or several)."""
        found = [i for i in self.shipped.values()
                 if i.provider == provider and i.accelerator == accelerator and i.accelerator_count == count]
        return found[0] if len(found) == 1 else None

    def name(self, provider: str, row: CatalogRow) -> Naming:
        label = catalog_label(row)
        by_name, why = (identify(row.gpu_name, row.gpu_memory_gb, self.catalog_names, self.part_memory)
                        if row.gpu_name else (None, "the catalog gives no accelerator name"))
        fitting = self._fitting(row)
        shipped = self.shipped_instance(provider, row)
        if shipped is not None:
            if by_name in (None, shipped.accelerator) and (not fitting or shipped.accelerator in fitting):
                return Naming(shipped.accelerator, f"shipped instance {shipped.id}")
            return Naming(None, f"{label} does not fit the shipped instance {shipped.id} ({shipped.accelerator})")
        driver, _ = identify(row.instance, row.gpu_memory_gb, self.driver, self.part_memory)
        if driver is not None and (not fitting or driver in fitting):
            return Naming(driver, f"instance name {row.instance!r} as the driver reports it")
        if by_name is not None:
            return Naming(by_name, f"catalog name {label}")
        return Naming(None, why, ambiguous=len(fitting) > 1)

    def _fitting(self, row: CatalogRow) -> list[str]:
        """Parts whose catalog name is the row's and whose memory fits (several when the name is ambiguous)."""
        if not row.gpu_name:
            return []
        ratio = self.catalog_names.memory_ratio
        out = []
        for entry in self.catalog_names.candidates(row.gpu_name):
            found, _ = identify(row.gpu_name, row.gpu_memory_gb, NameTable((entry,), ratio), self.part_memory)
            if found is not None:
                out.append(found)
        return out


# ----------------------------------------------------------------------------------------------------------------
# Shapes: what one catalog row orders (issue 28)
# ----------------------------------------------------------------------------------------------------------------

_TPU_SLICE = re.compile(r"^(v5litepod|v5p|v6e)-(\d+)$")
TPU_FAMILIES = {"v5litepod": "v5e", "v5p": "v5p", "v6e": "v6e"}
"""gpuhunt's TPU version names and the knowledge base's (v5e is sold as 'v5litepod')."""


def tpu_slice(provider: str, row: CatalogRow) -> str | None:
    """The knowledge-base instance a Google Cloud TPU row orders: gpuhunt lists a slice as one 'GPU' named after it
    ('v6e-4', 'v5litepod-16', 'v5p-8') at the whole slice's price. The id keeps the name's number: chips for
    v5e/v6e, TensorCores for v5p ('v5p-8' = 4 chips), as Google names them. None for any other row."""
    if provider != "gcp":
        return None
    m = _TPU_SLICE.match(row.instance.strip().casefold())
    return f"gcp-tpu-{TPU_FAMILIES[m[1]]}-{int(m[2])}" if m else None


def shape_count(provider: str, row: CatalogRow, target: Instance | None) -> int:
    """Accelerators one order of the row holds: the catalog's GPU count, but a TPU slice's chips (gpuhunt counts a
    slice as one 'GPU', so its price per accelerator would be the whole slice's)."""
    if target is not None and tpu_slice(provider, row) is not None:
        return target.accelerator_count
    return row.gpu_count


class NamingCache:
    """The namer's answers once per distinct offer shape: a catalog lists the same instance, GPU name, memory and
    count in every region at both price kinds, and naming one is a few table look-ups (a million rows named one by
    one took minutes). The answer depends on nothing else in the row, so caching it changes no result."""

    def __init__(self, namer: OfferNamer) -> None:
        self.namer = namer
        self._names: dict[tuple[str, str, int, str | None, float | None], Naming] = {}
        self._targets: dict[tuple[str, str, str, int], Instance | None] = {}

    def name(self, provider: str, row: CatalogRow) -> Naming:
        key = (provider, row.instance, row.gpu_count, row.gpu_name, row.gpu_memory_gb)
        found = self._names.get(key)
        if found is None:
            found = self._names[key] = self.namer.name(provider, row)
        return found

    def target(self, provider: CatalogProvider, row: CatalogRow, accelerator: str) -> Instance | None:
        """The shipped instance an offer refreshes (see `plan_refresh`), once per instance, part and count."""
        key = (provider.id, row.instance, accelerator, row.gpu_count)
        if key not in self._targets:
            target = self.namer.shipped_instance(provider.id, row)
            if target is None and provider.match == "accelerator":
                target = self.namer.listing(provider.id, accelerator, row.gpu_count)
            self._targets[key] = target
        return self._targets[key]


def catalog_label(row: CatalogRow) -> str:
    """'H100 80 GB' (the name and memory a catalog gives)."""
    memory = f" {row.gpu_memory_gb:g} GB" if row.gpu_memory_gb else ""
    return f"{row.gpu_name or 'unnamed accelerator'}{memory}"


# ----------------------------------------------------------------------------------------------------------------
# Offers
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    """The cheapest price of one provider x instance type x GPU count x price kind."""

    id: str
    provider: CatalogProvider
    instance: str
    catalog_instance: str
    """The instance name in the catalog (a shipped per-GPU listing keeps its own name in `instance`)."""
    accelerator: str
    count: int
    pricing: Pricing
    usd_per_hour: float
    regions: tuple[str, ...]
    as_of: str
    source: str
    named_by: str
    shipped: Instance | None
    """The shipped instance this offer refreshes (same id: it keeps that entry's topology), None for a new one."""


@dataclass(frozen=True)
class Refused:
    """A catalog accelerator name that was not mapped: unknown, ambiguous, or not fitting a shipped instance."""

    provider: str
    label: str
    reason: str
    ambiguous: bool
    offers: int
    instances: tuple[str, ...]


@dataclass
class RefreshPlan:
    """What a refresh would write: the offers, the sources, what was refused, and the counts of the summary."""

    refreshed_on: date
    origin: str
    catalogs: list[ProviderCatalog]
    offers: list[Offer]
    refused: list[Refused]
    ignored_files: list[str] = field(default_factory=list)

    @property
    def rows_read(self) -> int:
        return sum(c.read for c in self.catalogs)

    @property
    def gpu_rows(self) -> int:
        return sum(len(c.rows) for c in self.catalogs)

    @property
    def rows_skipped(self) -> int:
        return sum(c.skipped for c in self.catalogs)

    @property
    def rows_mapped(self) -> int:
        return self.gpu_rows - sum(r.offers for r in self.refused)


def plan_refresh(catalogs: Sequence[ProviderCatalog], shipped: Catalog, *, refreshed_on: date, origin: str,
                 ignored_files: Sequence[str] = (), settings: CatalogSettings | None = None) -> RefreshPlan:
    """Map and reduce the catalogs to the offers a refresh writes (`shipped`: the shipped knowledge base only)."""
    settings = settings or catalog_settings()
    namer = NamingCache(OfferNamer(shipped))
    offers: list[Offer] = []
    refused: dict[tuple[str, str, str], list[CatalogRow]] = defaultdict(list)
    reasons: dict[tuple[str, str, str], Naming] = {}
    for cat in catalogs:
        provider = settings.providers[cat.provider]
        named: list[tuple[CatalogRow, str, str]] = []
        for row in cat.rows:
            naming = namer.name(provider.id, row)
            if naming.accelerator is None:
                key = (cat.provider, catalog_label(row), naming.how)
                refused[key].append(row)
                reasons[key] = naming
                continue
            named.append((row, naming.accelerator, naming.how))
        sized = _multi_size((row.instance, row.gpu_count) for row, _, _ in named)
        groups: dict[tuple[str, Pricing], list[tuple[CatalogRow, str, str]]] = defaultdict(list)
        targets: dict[str, tuple[Instance | None, str, int]] = {}
        for row, accelerator, how in named:
            target = namer.target(provider, row, accelerator)
            sized_name = row.instance in sized
            offer_id = target.id if target else _offer_id(provider.id, row.instance,
                                                           row.gpu_count if sized_name else None)
            name = target.instance if target else (f"{row.instance} ({row.gpu_count}× GPU)" if sized_name
                                                   else row.instance)
            targets[offer_id] = (target, name, shape_count(provider.id, row, target))
            groups[(offer_id, "spot" if row.spot else "on-demand")].append((row, accelerator, how))
        for (offer_id, pricing), rows in sorted(groups.items()):
            target, name, count = targets[offer_id]
            offers.append(_offer(provider, cat, offer_id, name, count, pricing, rows, target, refreshed_on))
    out = [Refused(p, label, why, reasons[(p, label, why)].ambiguous, len(rows),
                   tuple(sorted({r.instance for r in rows})))
           for (p, label, why), rows in sorted(refused.items())]
    return RefreshPlan(refreshed_on, origin, list(catalogs), offers, out, list(ignored_files))


def _multi_size(pairs: Iterable[tuple[str, int]]) -> set[str]:
    """Instance names listed with several GPU counts (RunPod's pods): their ids and names carry the count."""
    counts: dict[str, set[int]] = defaultdict(set)
    for instance, count in pairs:
        counts[instance].add(count)
    return {name for name, seen in counts.items() if len(seen) > 1}


def _offer(provider: CatalogProvider, cat: ProviderCatalog, offer_id: str, name: str, count: int, pricing: Pricing,
           rows: list[tuple[CatalogRow, str, str]], shipped: Instance | None, today: date) -> Offer:
    cheapest = min(r.usd_per_hour for r, _, _ in rows)
    best = [(r, acc, how) for r, acc, how in rows if math.isclose(r.usd_per_hour, cheapest, rel_tol=1e-9)]
    row, accelerator, how = best[0]
    as_of = cat.as_of or today
    stamp = f"catalog {cat.version}" if cat.version else (
        "catalog file date" if cat.as_of else "no date in the catalog: the day of the refresh")
    return Offer(id=offer_id, provider=provider, instance=name, catalog_instance=row.instance,
                 accelerator=accelerator, count=count, pricing=pricing, usd_per_hour=cheapest,
                 regions=tuple(sorted({r.location for r, _, _ in best})),
                 as_of=f"{as_of.isoformat()} (kb refresh: gpuhunt {cat.provider} {stamp})",
                 source=source_id(cat.provider), named_by=how, shipped=shipped)


_SLUG = re.compile(r"[^a-z0-9.\-_]+")


def _offer_id(provider: str, instance: str, count: int | None) -> str:
    slug = _SLUG.sub("-", instance.casefold()).strip("-._") or "offer"
    return f"{provider}-{slug}" + (f"-{count}x" if count is not None else "")


def source_id(catalog: str) -> str:
    return f"{SOURCE_PREFIX}gpuhunt-{catalog}"


# ----------------------------------------------------------------------------------------------------------------
# The overlay file
# ----------------------------------------------------------------------------------------------------------------


def overlay_document(plan: RefreshPlan, gpuhunt_version: str) -> dict[str, Any]:
    """The overlay as TOML-ready data: [refresh] metadata, one [[source]] per catalog, one [[instance]] per
    instance (its refreshed prices of each kind)."""
    settings = catalog_settings()
    sources = []
    for cat in plan.catalogs:
        p = settings.providers[cat.provider]
        when = cat.as_of.isoformat() if cat.as_of else "undated"
        sources.append({
            "id": source_id(cat.provider),
            "title": f"gpuhunt price catalog {cat.provider}.csv ({p.name}), version {cat.version or 'unknown'}, "
                     f"dated {when}; {len(cat.rows)} GPU offers, read by gpuadvisor kb refresh on "
                     f"{plan.refreshed_on.isoformat()}",
            "url": cat.origin.split(".zip:", 1)[0] + ".zip" if ".zip:" in cat.origin else cat.origin,
            "vendor_url": p.terms,
            "kind": "price catalog",
            "read_via": f"gpuhunt {gpuhunt_version} (dstack, MPL-2.0) catalog reader",
        })
    instances: dict[str, dict[str, Any]] = {}
    for o in plan.offers:
        entry = instances.get(o.id)
        if entry is None:
            entry = _instance_entry(o)
            instances[o.id] = entry
        entry["price"].append(_price_entry(o))
    meta = {
        "format": OVERLAY_FORMAT,
        "refreshed_on": plan.refreshed_on.isoformat(),
        "origin": plan.origin,
        "gpuhunt": gpuhunt_version,
        "catalogs": [{"provider": c.provider, "file": c.origin, "version": c.version or "",
                      "as_of": c.as_of.isoformat() if c.as_of else "", "rows": c.read, "gpu_offers": len(c.rows),
                      "skipped": c.skipped} for c in plan.catalogs],
        "unmapped": [{"provider": r.provider, "name": r.label, "reason": r.reason, "offers": r.offers}
                     for r in plan.refused],
    }
    return {"refresh": meta, "source": sources, "instance": list(instances.values())}


def _instance_entry(o: Offer) -> dict[str, Any]:
    region = ", ".join(o.regions[:MAX_REGIONS_SHOWN]) + (
        f" and {len(o.regions) - MAX_REGIONS_SHOWN} more" if len(o.regions) > MAX_REGIONS_SHOWN else "")
    if o.shipped is not None:  # the loader merges this into the shipped entry: prices (and the region) only
        return {"id": o.id, "region": region, "price": []}
    entry: dict[str, Any] = {
        "id": o.id, "provider": o.provider.id, "provider_name": o.provider.name, "provider_kind": o.provider.kind,
        "instance": o.instance, "region": region, "accelerator": o.accelerator, "accelerator_count": o.count,
    }
    entry.update({
        "fast_domain": 1, "cluster": False, "price": [],
        "notes": (f"topology: the conservative default, as no shipped instance of this name says more (one GPU per "
                  f"fast domain, no cluster network); accelerator named by {o.named_by}"),
    })
    return entry


def _price_entry(o: Offer) -> dict[str, Any]:
    regions = ", ".join(o.regions)
    return {
        "type": o.pricing,
        "usd_per_hour": round(o.usd_per_hour, 6),
        "usd_per_accelerator_hour": round(o.usd_per_hour / o.count, 6),
        "as_of": o.as_of,
        "sources": [o.source],
        "derived": False,
        "notes": f"cheapest {o.pricing} price of {o.catalog_instance!r} in the catalog, offered in "
                 f"{len(o.regions)} region{'s' if len(o.regions) != 1 else ''}: {regions}",
    }


def overlay_text(plan: RefreshPlan, gpuhunt_version: str) -> str:
    import tomli_w

    head = (f"# Written by `gpuadvisor kb refresh` on {plan.refreshed_on.isoformat()} from {plan.origin}.\n"
            "# Each refresh replaces this file whole: do not edit it. Your own prices go in the overlay directory\n"
            "# (`gpuadvisor kb path`), which wins over this file.\n\n")
    return head + tomli_w.dumps(overlay_document(plan, gpuhunt_version))


# ----------------------------------------------------------------------------------------------------------------
# What changed since the previous refresh
# ----------------------------------------------------------------------------------------------------------------

CHANGE_TOLERANCE = 0.005
"""A price that moved by less than half a percent counts as unchanged in the summary (catalogs round differently)."""
PriceKey = tuple[str, str]
"""(instance id, price kind)."""


@dataclass(frozen=True)
class Move:
    key: PriceKey
    name: str
    before: float
    after: float

    @property
    def ratio(self) -> float:
        return self.after / self.before - 1


@dataclass(frozen=True)
class Summary:
    new: list[PriceKey]
    changed: list[Move]
    """Biggest relative move first."""
    unchanged: int
    dropped: int
    """Prices the previous refresh had and this one does not (they fall back to the shipped ones)."""


def previous_prices(path: Path) -> dict[PriceKey, float]:
    """The prices the last refresh wrote ({} when there is none or it cannot be read: the summary then calls every
    price new, which is honest)."""
    try:
        doc = read_toml(path, what="refreshed prices", max_bytes=KNOWLEDGE_MAX_BYTES)
    except (AdvisorError, tomllib.TOMLDecodeError):
        return {}
    out: dict[PriceKey, float] = {}
    for inst in doc.get("instance", []):
        for p in inst.get("price", []) if isinstance(inst, dict) else []:
            if isinstance(p, dict) and isinstance(p.get("usd_per_hour"), int | float):
                out[(str(inst.get("id")), str(p.get("type")))] = float(p["usd_per_hour"])
    return out


def summarize(plan: RefreshPlan, before: Mapping[PriceKey, float],
              shipped: Mapping[PriceKey, float] | None = None) -> Summary:
    """New and changed prices against the previous refresh (or, for a first refresh, the shipped price of the
    same instance and kind: that is what the ranking used until now)."""
    reference = dict(shipped or {})
    reference.update(before)
    new: list[PriceKey] = []
    moves: list[Move] = []
    same = 0
    now: dict[PriceKey, float] = {}
    for o in plan.offers:
        key = (o.id, o.pricing)
        now[key] = round(o.usd_per_hour, 6)
        old = reference.get(key)
        if old is None:
            new.append(key)
        elif not math.isclose(old, now[key], rel_tol=CHANGE_TOLERANCE):
            moves.append(Move(key, f"{o.provider.name} {o.instance}", old, now[key]))
        else:
            same += 1
    moves.sort(key=lambda m: (-abs(m.ratio), m.key))
    dropped = sum(1 for key in before if key not in now)
    return Summary(new, moves, same, dropped)


def shipped_prices(shipped: Catalog) -> dict[PriceKey, float]:
    """The current on-demand and spot price of every shipped instance."""
    out: dict[PriceKey, float] = {}
    for inst in shipped.instances.values():
        for kind in ("on-demand", "spot"):
            p = inst.current_price(kind)
            if p is not None:
                out[(inst.id, kind)] = p.usd_per_hour
    return out


def providers_of(names: Iterable[str] | None, settings: CatalogSettings | None = None) -> list[str]:
    """gpuhunt provider names to read: all mapped ones, or those the user named (by gpuhunt or knowledge-base id)."""
    settings = settings or catalog_settings()
    if not names:
        return list(settings.providers)
    by_id = {p.id: p.catalog for p in settings.providers.values()}
    out = []
    for name in names:
        key = name.strip().lower()
        catalog = key if key in settings.providers else by_id.get(key)
        if catalog is None:
            known = ", ".join(sorted({*settings.providers, *by_id}))
            raise KnowledgeError(f"--providers: unknown provider {name!r} (known: {known})")
        out.append(catalog)
    return list(dict.fromkeys(out))


# ----------------------------------------------------------------------------------------------------------------
# Writing the overlay: one temporary file beside it, removed whatever ends the refresh
# ----------------------------------------------------------------------------------------------------------------

STALE_TEMP_S = 3600.0
"""A temporary file without a process id in its name (written before issue 31) is stale once this old: writing and
checking an overlay takes seconds."""
_TEMP_SUFFIX = ".tmp"


class RefreshTerminated(BaseException):
    """SIGTERM or SIGHUP arrived while the overlay was written or checked (a BaseException, like KeyboardInterrupt):
    the temporary file is removed, then the signal is delivered again so the process ends as the sender asked."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def temp_name(target: Path) -> str:
    """`.refreshed-prices.toml.<pid>.<random>.tmp`: the process id lets the next refresh tell a file a killed
    refresh left from one a running refresh is writing."""
    import os
    import secrets

    return f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{_TEMP_SUFFIX}"


def clean_stale_temp_files(directory: Path, name: str, *, now: float | None = None) -> list[Path]:
    """Remove the temporary files a killed refresh left beside `name` (SIGKILL runs no clean-up): those whose
    process is gone, and nameless older ones past STALE_TEMP_S. Returns what was removed; never raises."""
    import os
    import time

    removed: list[Path] = []
    prefix = f".{name}."
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(prefix) and e.name.endswith(_TEMP_SUFFIX)]
    except OSError:
        return removed
    clock = time.time() if now is None else now
    for entry in entries:
        middle = entry.name[len(prefix):-len(_TEMP_SUFFIX)].split(".")
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if len(middle) == 2 and middle[0].isdigit():
                if _alive(int(middle[0])):
                    continue
            elif clock - entry.stat(follow_symlinks=False).st_mtime < STALE_TEMP_S:
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _alive(pid: int) -> bool:
    import os

    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists (another user's): not ours to judge
        return True
    return True


def write_overlay(text: str, target: Path, check: Callable[[Path], object]) -> Path:
    """Write the overlay to a temporary file beside `target`, `check` it there (it must load with the knowledge
    base), then rename it over `target`: the previous overlay stays until the new one is known good. Whatever stops
    this (an error, Ctrl+C, SIGTERM or SIGHUP in the main thread) removes the temporary file; a check's message names
    `target`, not the temporary file that no longer exists."""
    import os

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / temp_name(target)
    with _signals_raise():
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                check(tmp)
            except KnowledgeError as exc:
                raise KnowledgeError(str(exc).replace(str(tmp), f"{target} (the new overlay, not written)")) \
                    from None
            os.replace(tmp, target)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp)
            raise
    return target


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise RefreshTerminated for the duration (main thread only; a worker thread's temporary
    file is found by `clean_stale_temp_files` at the next refresh), and are delivered again after the clean-up."""
    import os
    import signal
    import threading

    caught = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise RefreshTerminated(signum)

    previous = {sig: signal.signal(sig, handler) for sig in caught}
    try:
        yield
    except RefreshTerminated as exc:
        for sig, old in previous.items():
            signal.signal(sig, old)
        previous = {}
        os.kill(os.getpid(), exc.signum)  # the previous handler: by default, the process ends
        raise
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def zero_price_lines(plan: RefreshPlan) -> list[str]:
    """The summary's lines about rows dropped because their price rounds to $0 (a placeholder, not a price)."""
    lines = []
    for cat in plan.catalogs:
        if cat.zero_rows:
            shown = "; ".join(cat.priced_zero) + (f"; and {cat.zero_rows - len(cat.priced_zero):,} more"
                                                  if cat.zero_rows > len(cat.priced_zero) else "")
            lines.append(f"Dropped {cat.zero_rows:,} row{'s' if cat.zero_rows != 1 else ''} of {cat.origin} priced "
                         f"$0.000000/h once rounded to six decimals (not a price): {shown}")
    return lines
