"""`gpuadvisor kb`: show where the knowledge base lives, list its entries, validate it and your overlays.

    gpuadvisor kb path
    gpuadvisor kb list accelerators|instances|models|precisions|assumptions [--json]
    gpuadvisor kb stale [--months 12] [--today YYYY-MM-DD]
    gpuadvisor kb validate [FILE ...]
    gpuadvisor kb refresh [--from PATH] [--providers LIST] [--timeout SECONDS]   (see kb_refresh.py)
    gpuadvisor kb quote add|list|remove ...   (your own vendor quotes; see kb_quote.py)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuadvisor.knowledge.files import list_files
from gpuadvisor.knowledge.paths import CONFIG_ENV, data_dir, overlay_dir, refreshed_prices_path
from gpuadvisor.tui.commands import kb_quote, kb_refresh
from gpuadvisor.tui.commands.text_table import text_table as _table

if TYPE_CHECKING:  # the catalog and its pydantic schema load only when a kb command runs, not at every start
    from gpuadvisor.knowledge.catalog import Catalog, EntryKind
    from gpuadvisor.knowledge.schema import (
        Accelerator,
        Assumption,
        EngineProfile,
        Fabric,
        FreeTier,
        Instance,
        InstancePrice,
        Model,
        Precision,
        Price,
        System,
    )

LIST_KINDS: dict[str, EntryKind] = {
    "accelerators": "accelerator",
    "instances": "instance",
    "models": "model",
    "precisions": "precision",
    "assumptions": "assumption",
    "engines": "engine_profile",
    "free-tiers": "free_tier",
    "systems": "system",
    "fabrics": "fabric",
}
_MARK = {"overridden": "*", "added": "+", None: ""}


def register(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(command="kb", kb_parser=parser, kb_action=None)
    sub = parser.add_subparsers(dest="kb_action", metavar="ACTION")
    sub.add_parser("path", help="print the shipped data directory and your overlay directory")
    lister = sub.add_parser("list", help="list the entries of one kind as a table (or JSON)")
    lister.add_argument("kind", choices=sorted(LIST_KINDS), help="what to list")
    lister.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stale = sub.add_parser("stale", help="list the prices older than N months, and the undated ones")
    stale.add_argument("--months", type=_positive_int, default=12, metavar="N",
                       help="age in whole months from which a price counts as stale (default 12)")
    stale.add_argument("--today", type=_iso_date, default=None, metavar="YYYY-MM-DD",
                       help="the date to measure age from (default: today)")
    validator = sub.add_parser("validate", help="check the shipped files and overlays; every error as file:line")
    validator.add_argument("files", nargs="*", type=Path, metavar="FILE",
                           help="overlay files to check (default: the *.toml files in your overlay directory)")
    kb_refresh.register(sub)
    kb_quote.register(sub)


def run(args: argparse.Namespace) -> int:
    if args.kb_action == "path":
        return _path()
    if args.kb_action == "list":
        return _list(args.kind, as_json=args.json)
    if args.kb_action == "stale":
        return _stale(args.months, args.today or date.today())
    if args.kb_action == "validate":
        return _validate(args.files)
    if args.kb_action == "refresh":
        return kb_refresh.run(args)
    if args.kb_action == "quote":
        return kb_quote.run(args)
    args.kb_parser.print_help(sys.stderr)
    return 2


# ----------------------------------------------------------------------------------------------------------------
# kb path / kb validate
# ----------------------------------------------------------------------------------------------------------------


def _path() -> int:
    udir = overlay_dir()
    print(f"shipped: {data_dir()}")
    if os.path.isdir(udir):
        files = list_files(udir, ".toml", what="overlay")
        print(f"overlay: {udir} (exists, {len(files)} .toml file{'s' if len(files) != 1 else ''})")
        for f in files:
            print(f"  {f.name}")
    else:
        print(f"overlay: {udir} (does not exist; create it and add *.toml files to override or extend entries)")
    refreshed = refreshed_prices_path()
    state = "exists" if os.path.isfile(refreshed) else "none yet: `gpuadvisor kb refresh` writes it"
    print(f"refreshed prices: {refreshed} ({state})")
    if os.environ.get(CONFIG_ENV):
        print(f"({CONFIG_ENV} is set and selects the config directory)")
    return 0


MAX_LISTED = 50
"""`kb validate` lists every error up to this many, then counts the rest (a file can hold 10,000 bad values)."""


def _validate(files: Sequence[Path]) -> int:
    from gpuadvisor.knowledge.loader import validate_knowledge

    report = validate_knowledge(extra_files=files, user_dir=None) if files else validate_knowledge()
    if report.catalog is None:
        for message in report.errors[:MAX_LISTED]:
            print(message)
        n = len(report.errors)
        if n > MAX_LISTED:
            print(f"... and {n - MAX_LISTED:,} more (fix these first)")
        print(f"gpuadvisor kb validate: {n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return 2
    c = report.catalog
    counts = [(len(c.accelerators), "accelerators"), (len(c.instances), "instances"), (len(c.systems), "systems"),
              (len(c.fabrics), "fabrics"), (len(c.models), "models"),
              (len(c.precisions), "precisions"), (len(c.assumptions), "assumptions"),
              (len(c.engine_profiles), "engine profiles"),
              (len(c.documents), "documents"), (len(c.sources), "sources")]
    print("ok: " + ", ".join(f"{n} {what}" for n, what in counts) + f" (knowledge base {c.version})")
    for f in c.files:
        if f.overlay:
            print(f"overlay: {f.path} ({', '.join(f'{n} {k}' for k, n in f.counts.items())})")
    return 0


# ----------------------------------------------------------------------------------------------------------------
# kb stale
# ----------------------------------------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of months") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1 month")
    return value


def _iso_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def _stale(months: int, today: date) -> int:
    from gpuadvisor.knowledge.freshness import price_ages
    from gpuadvisor.knowledge.loader import load_catalog

    catalog = load_catalog()
    ages = price_ages(catalog, today)
    old = sorted((a for a in ages if a.months is not None and a.months >= months),
                 key=lambda a: (-(a.months or 0), a.entry, a.what))
    undated = sorted((a for a in ages if a.months is None), key=lambda a: (a.entry, a.what))
    headers = ["price of", "id", "price", "as of", "age"]
    print(f"Prices {months} months old or older on {today:%Y-%m-%d}:")
    if old:
        print(_table(headers, [[a.what, a.entry, a.price, _as_of(a.as_of), f"{a.months} months"] for a in old]))
    else:
        print("none")
    print("\nUndated prices (their source gives no date; check them before relying on them):")
    if undated:
        print(_table(headers[:3], [[a.what, a.entry, a.price] for a in undated]))
    else:
        print("none")
    print(f"\n{len(old)} of {len(ages)} prices are {months} months old or older; {len(undated)} undated.")
    print(_refresh_hint(catalog, today))
    return 0


def _refresh_hint(catalog: Catalog, today: date) -> str:
    """When rental prices were last refreshed, and how to refresh them (purchase prices: an overlay)."""
    info = catalog.refresh
    if info is None or info.refreshed_on is None:
        done = "Rental prices have never been refreshed."
    else:
        days = info.age_days(today) or 0
        done = (f"Rental prices were last refreshed on {info.refreshed_on:%Y-%m-%d} "
                f"({days} day{'s' if days != 1 else ''} ago).")
    return (f"{done} Run `gpuadvisor kb refresh` for current on-demand and spot prices (gpuhunt's public catalogs; "
            "`--from PATH` reads a saved copy offline); put quoted purchase prices in an overlay (see "
            "`gpuadvisor kb path`).")


# ----------------------------------------------------------------------------------------------------------------
# kb list
# ----------------------------------------------------------------------------------------------------------------


def _list(kind_arg: str, *, as_json: bool) -> int:
    from gpuadvisor.knowledge.loader import load_catalog

    catalog = load_catalog()
    kind = LIST_KINDS[kind_arg]
    tables: dict[str, dict[str, Any]] = {
        "accelerator": catalog.accelerators, "instance": catalog.instances, "model": catalog.models,
        "precision": catalog.precisions, "assumption": catalog.assumptions,
        "engine_profile": catalog.engine_profiles, "free_tier": catalog.free_tiers, "system": catalog.systems,
        "fabric": catalog.fabrics,
    }
    entries = tables[kind]
    if as_json:
        payload = {
            "kind": kind_arg,
            "knowledge_base": catalog.version,
            "overlay": {"overridden": sorted(catalog.overridden.get(kind, ())),
                        "added": sorted(catalog.added.get(kind, ()))},
            "entries": [e.model_dump(mode="json", exclude_none=True) for e in entries.values()],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    headers, row = _COLUMNS[kind]
    marks = {catalog.overlay_status(kind, key) for key in entries} - {None}
    rows = [row(entry) for entry in entries.values()]
    if marks:  # a first column marks what your overlay changed or added
        rows = [[_MARK[catalog.overlay_status(kind, key)], *r] for key, r in zip(entries, rows, strict=True)]
        headers = ["", *headers]
    print(_table(headers, rows))
    if marks:
        print("\n" + "  ".join(f"{_MARK[m]} {m} by your overlay" for m in sorted(marks, key=str)))
    print(f"\n{len(rows)} {kind_arg}; knowledge base {catalog.version}{_price_note(catalog, kind)}")
    return 0


def _price_note(catalog: Catalog, kind: str) -> str:
    dates = catalog.price_dates()
    if kind not in ("accelerator", "instance") or dates is None:
        return ""
    undated = sum(1 for a in catalog.accelerators.values()
                  if kind == "accelerator" and a.purchase_price_usd is not None and a.purchase_price_usd.as_of is None)
    extra = f" ({undated} undated)" if undated else ""
    return f"; prices as of {dates.oldest:%Y-%m} to {dates.newest:%Y-%m-%d}{extra}, always check before buying"


def _as_of(text: str | None) -> str:
    """The date part of an as_of ('2026-07-28', '2024-12 (rates valid until ...)' -> '2024-12'); 'undated' for None."""
    if text is None:
        return "undated"
    m = re.match(r"\d{4}-\d{2}(?:-\d{2})?", text)
    return m[0] if m else text


def _num(value: float | None, digits: int = 0) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _accelerator_row(a: Accelerator) -> list[str]:
    price = ""
    if a.purchase_price_usd is not None:
        p = a.purchase_price_usd
        price = _purchase_price_cell(p)
    return [a.id, _clip(a.name), a.market, _num(a.memory_gb.value), _num(a.memory_bandwidth_gbs.value),
            _num(a.dense_tflops("bf16"), 1), _num(a.dense_tflops("fp8"), 1), price]


def _purchase_price_cell(p: Price) -> str:
    """'~$30,000 street, undated' or '$1,599 msrp, 2022-10': the kind and date travel with every price."""
    return f"{'~' if p.approximate else ''}${p.value:,.0f} {p.kind}, {_as_of(p.as_of)}"


def _price_cell(p: InstancePrice | None) -> str:
    if p is None:
        return ""
    tier = f", {p.tier}" if p.tier else ""
    return f"{p.usd_per_hour:,.2f} ({_as_of(p.as_of_text)}{tier})"


def _instance_row(i: Instance) -> list[str]:
    on_demand = i.current_price("on-demand") or i.current_price("on-demand-equivalent")
    equiv = " eq." if on_demand is not None and on_demand.type == "on-demand-equivalent" else ""
    return [i.id, i.provider_name, i.accelerator, str(i.accelerator_count), _shape_cell(i),
            _price_cell(on_demand) + equiv, _price_cell(i.current_price("spot")),
            _rate_cell(i.current_price("reserved-1y")), _rate_cell(i.current_price("reserved-3y")),
            _clip(", ".join(dict.fromkeys(s for p in i.price for s in p.sources)), 36)]


def _shape_cell(i: Instance) -> str:
    """What one order holds and how it joins others: '4 ICI', '8 NVLink, EFA', '1'."""
    domain = i.fast_domain if i.fast_domain is not None else 1
    inside = f"{domain} fast" if domain > 1 else "PCIe" if i.accelerator_count > 1 else "1"
    out = f", {i.fabric}" if i.cluster and i.fabric else ", cluster" if i.cluster else ""
    return inside + out


def _rate_cell(p: InstancePrice | None) -> str:
    return "" if p is None else f"{p.usd_per_hour:,.2f}"


def _free_tier_row(t: FreeTier) -> list[str]:
    def hours(h: float | None) -> str:
        return f"{h:g}" if h is not None else "—"

    return [t.id, t.name, f"{t.accelerator_count}× {t.accelerator}", hours(t.session_hours), hours(t.weekly_hours),
            hours(t.daily_hours), "yes" if t.guaranteed else "no", t.as_of or "undated"]


def _model_row(m: Model) -> list[str]:
    arch = m.architecture
    params = ""
    if m.official_parameters is not None:
        params = f"{m.official_parameters.total / 1e9:,.2f}B"
        if m.official_parameters.active:
            params += f" ({m.official_parameters.active / 1e9:,.1f}B active)"
    return [m.id, _clip(m.name, 32), m.family, params, str(arch.num_hidden_layers), str(arch.hidden_size),
            f"{arch.num_attention_heads}/{arch.kv_heads}", m.hf_repo or ""]


def _precision_row(p: Precision) -> list[str]:
    return [p.id, _clip(p.name, 36), f"{p.bits_per_weight:g}", p.compute, ",".join(p.uses),
            ",".join(r.removesuffix("_support") for r in p.requires)]


def _assumption_row(a: Assumption) -> list[str]:
    band = f"{a.low:g}-{a.high:g}" if a.low is not None and a.high is not None else ""
    return [a.id, f"{a.value:g}", a.unit, band, _clip(a.title, 50)]


def _engine_row(e: EngineProfile) -> list[str]:
    def band(b: Any, digits: str = ".2f") -> str:
        return f"{b.value:{digits}} ({b.low:{digits}}-{b.high:{digits}})"

    def per_sequence() -> str:
        # the host's µs per sequence, plus the decode attention's µs per sequence per layer where fitted
        host = band(e.overhead_per_sequence_us, ".1f") if e.overhead_per_sequence_us else ""
        layer = e.overhead_per_sequence_layer_us
        return host + (f" + {band(layer)}×layers" if layer else "")

    return [e.id, band(e.bandwidth_efficiency), band(e.kv_efficiency), band(e.overhead_per_layer_us, ".0f"),
            per_sequence(), str(e.rows)]


def _system_row(s: System) -> list[str]:
    holds = s.accelerator or ", ".join(s.takes)
    if s.price is None:
        price = "nothing bought (yours)" if s.existing else "the accelerator's price"
    else:
        what = "whole" if s.price.includes_accelerators else "host"
        price = f"{'~' if s.price.approximate else ''}${s.price.value:,.0f} {what} ({s.price.kind}, " \
                f"{_as_of(s.price.as_of or 'undated')})"
    power = f"{s.host_power_w.value / 1000:,.1f}" if s.host_power_w is not None else ""
    nics = f"{s.nics.count}×{s.nics.gbps_each:g}G {s.nics.kind}" if s.nics is not None else ""
    return [s.id, _clip(s.name, 40), s.kind, _clip(holds, 26), str(s.slots), price, power, nics]


def _fabric_row(f: Fabric) -> list[str]:
    switch = f"{f.switch_ports}-port ${f.switch_usd.value:,.0f} ({f.switch_usd.kind}, {_as_of(f.switch_usd.as_of)})"
    nic = f"${f.nic_usd.value:,.0f}" if f.nic_usd is not None else ""
    return [f.id, _clip(f.name, 40), f.kind, f"{f.gbps_per_port:g}", switch, f"${f.link_usd.value:,.0f}", nic]


_COLUMNS: dict[str, tuple[list[str], Callable[[Any], list[str]]]] = {
    "accelerator": (["id", "name", "market", "GB", "GB/s", "BF16 TFLOPS", "FP8 TFLOPS", "price (kind, as of)"],
                    _accelerator_row),
    "instance": (["id", "provider", "accelerator", "n", "topology", "on-demand $/h (as of)", "spot $/h (as of)",
                  "1y $/h", "3y $/h", "sources"], _instance_row),
    "model": (["id", "name", "family", "parameters", "layers", "hidden", "heads/kv", "hf repo"], _model_row),
    "precision": (["id", "name", "bits/weight", "compute", "uses", "requires"], _precision_row),
    "assumption": (["id", "value", "unit", "range", "title"], _assumption_row),
    "engine_profile": (["id (engine@family)", "weights bw eff.", "KV bw eff.", "µs/layer", "µs/sequence", "rows"],
                       _engine_row),
    "free_tier": (["id", "name", "GPUs", "h/session", "h/week", "h/day", "guaranteed", "as of"], _free_tier_row),
    "system": (["id", "name", "kind", "holds", "slots", "price", "host kW", "NICs"], _system_row),
    "fabric": (["id", "name", "kind", "Gb/s per port", "switch (kind, as of)", "$ per link", "$ per NIC"],
               _fabric_row),
}
