"""Your own quotes: a vendor's dated price for a part or a machine, kept in the user overlay (`quotes.toml`).

A valid quote replaces the knowledge base's price of its part (`purchase_price_usd`, per accelerator) or its system
(`price`, per machine; whole with its accelerators when `includes_accelerators`) in every plan, as price kind
`quote` dated the day it was quoted, so reports say "your quote (2026-11-20)". A quote past `valid_until` is not
applied: the catalog lists it in `expired_quotes`, and the consultation says it was ignored (rule Q.expired).

The file is an ordinary overlay ([[quote]] tables, read by the loader like any other overlay file); `gpuadvisor kb
quote add|list|remove` writes it atomically (a temporary file renamed over it), so an interrupted write never
leaves half a file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.budget import read_toml
from gpuadvisor.knowledge.errors import AdvisorError, KnowledgeError
from gpuadvisor.knowledge.files import KNOWLEDGE_MAX_BYTES
from gpuadvisor.knowledge.schema import Accelerator, Price, Quote, Source, System, SystemPrice
from gpuadvisor.knowledge.statefile import write_atomic

QUOTES_FILE = "quotes.toml"
TODAY_ENV = "GPUADVISOR_TODAY"


def today() -> date:
    """The day quotes are judged on: `$GPUADVISOR_TODAY` (YYYY-MM-DD, for tests and recorded runs), else today."""
    fixed = os.environ.get(TODAY_ENV)
    if fixed:
        try:
            return date.fromisoformat(fixed)
        except ValueError:
            raise KnowledgeError(f"{TODAY_ENV}={fixed!r}: not a date YYYY-MM-DD") from None
    return date.today()


def quote_source_id(quote: Quote) -> str:
    return f"quote-{quote.id}"


def quote_source(quote: Quote) -> Source:
    what = quote.accelerator or quote.system
    return Source(id=quote_source_id(quote),
                  title=f"Your quote {quote.id} from {quote.vendor} for {what}: ${quote.usd:,.2f}, quoted "
                        f"{quote.quoted_on}, valid until {quote.valid_until}",
                  kind="quote", notes=quote.notes)


@dataclass(frozen=True)
class Applied:
    """The catalog's parts and systems with the valid quotes in, and what was left out."""

    accelerators: dict[str, Accelerator]
    systems: dict[str, System]
    sources: dict[str, Source]
    applied: list[Quote]
    expired: list[Quote]


def apply_quotes(accelerators: Mapping[str, Accelerator], systems: Mapping[str, System],
                 quotes: Mapping[str, Quote], on: date) -> Applied:
    """Replace the prices valid quotes cover (the newest quote of a part or system wins); expired ones are set
    aside. Unknown targets are refused by the loader's reference check before this runs."""
    accs, syss = dict(accelerators), dict(systems)
    sources: dict[str, Source] = {}
    expired = [q for q in quotes.values() if q.expired(on)]
    valid = sorted((q for q in quotes.values() if not q.expired(on)), key=lambda q: (q.quoted_on, q.id))
    applied: list[Quote] = []
    for q in valid:  # oldest first: a newer quote of the same target overwrites it
        source = quote_source(q)
        note = f"{q.label} from {q.vendor}, valid until {q.valid_until}"
        if q.accelerator is not None and q.accelerator in accs:
            price = Price(value=q.usd, kind="quote", as_of=q.quoted_on, sources=[source.id], approximate=False,
                          notes=note)
            accs[q.accelerator] = accs[q.accelerator].model_copy(update={"purchase_price_usd": price})
        elif q.system is not None and q.system in syss:
            system = syss[q.system]
            whole = q.includes_accelerators and system.accelerator is not None
            if not whole and system.accelerator is not None and accs[system.accelerator].purchase_price_usd is None:
                raise KnowledgeError(f"quote '{q.id}': includes_accelerators: {system.id} is priced whole with its "
                                     f"{system.accelerator} (the part has no price of its own), so a quote for it "
                                     "must be too: set includes_accelerators = true")
            old = system.price
            sprice = SystemPrice(value=q.usd, kind="quote", includes_accelerators=whole,
                                 includes=old.includes if whole and old is not None and old.includes_accelerators
                                 else [], as_of=q.quoted_on, sources=[source.id], approximate=False, notes=note)
            syss[q.system] = system.model_copy(update={"price": sprice,
                                                       "host_share": _host_share(system, q.usd) if whole else
                                                       system.host_share})
        else:
            continue
        sources[source.id] = source
        applied.append(q)
    return Applied(accs, syss, sources, applied, expired)


def _host_share(system: System, whole_usd: float) -> Price | None:
    """The part of a whole-machine quote that is not accelerators: the knowledge base's host share, or its
    host-only price, when below the quote (else unknown, and said so like any unsplit whole price)."""
    if system.host_share is not None:
        share = system.host_share
    elif system.price is not None and not system.price.includes_accelerators:
        p = system.price
        share = Price(value=p.value, kind=p.kind, as_of=p.as_of, sources=p.sources, approximate=p.approximate,
                      derived=True, low=p.low, high=p.high,
                      notes=f"the knowledge base's host-only price of {system.id}, taken as the host's part of a "
                            "whole-machine quote")
    else:
        return None
    return share if share.value < whole_usd else None


# ----------------------------------------------------------------------------------------------------------------
# The quotes file (the commands' side)
# ----------------------------------------------------------------------------------------------------------------


def read_quotes(path: Path) -> list[dict[str, Any]]:
    """The [[quote]] tables of a quotes file as written (an absent file has none)."""
    if not os.path.lexists(path):
        return []
    try:
        doc = read_toml(path, what="quotes file", max_bytes=KNOWLEDGE_MAX_BYTES)
    except AdvisorError as exc:
        raise KnowledgeError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise KnowledgeError(f"{path}: cannot read: {exc}") from None
    rows = doc.get("quote", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise KnowledgeError(f"{path}: [[quote]] must be tables")
    return rows


def write_quotes(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write the quotes file atomically (`statefile.write_atomic`); a caller changing it holds `statefile.locked`."""
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    head = ("# Your vendor quotes (`gpuadvisor kb quote add|list|remove` writes this file; edits by hand are read\n"
            "# too). A valid quote replaces the knowledge base's price of its part or system; an expired one is\n"
            "# ignored, and the consultation says so.\n\n")
    text = head + tomli_w.dumps({"quote": rows}) if rows else head
    write_atomic(path, text)
