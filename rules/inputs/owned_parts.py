"""The part a user owns, as they have it: a memory size the knowledge base does not list for that part.

Many parts are sold in several memory sizes under one name: the Tesla V100 SXM2 with 16 or 32 GB, Apple's M-series
Max and Ultra with 36 to 512 GB. The knowledge base keeps one entry per part (the V100 SXM2 at 32 GB, its datasheet
listing both), so `current.gpu = "nvidia-v100-sxm2"` with `current.gpu_memory_gb = 16` is the 16 GB card: sizing it
as the 32 GB one would put a 15.5 GB plan on a card that holds 16 GB less its headroom. The user's part is that entry
with their memory (every other figure kept: the V100 whitepaper lists the two variants with the same bandwidth and
rates), added to the consultation's catalog as a part nobody buys or rents (`topology.own_only`): only their own
hardware is planned on it.
"""

from __future__ import annotations

from dataclasses import replace

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Measure

OWN_SUFFIX = "-yours"
"""Ends the id of a user's own memory variant (`nvidia-v100-sxm2-16gb-yours`): `topology.own_only` reads it."""
SAME_MEMORY_GB = 0.5
"""A stated memory this close to the entry's is the entry itself (24 vs 24.0, or a tool reporting 23.99 GB)."""


def variant_id(acc: Accelerator, memory_gb: float) -> str:
    """The id of `acc` with `memory_gb` of memory, as the user owns it."""
    return f"{acc.id}-{memory_gb:g}gb{OWN_SUFFIX}".replace(".", "-")


def memory_variant(acc: Accelerator, memory_gb: float | None) -> Accelerator | None:
    """`acc` with the user's stated memory, or None when they stated none or the entry's own (nothing to change)."""
    if memory_gb is None or abs(acc.memory_gb.value - memory_gb) < SAME_MEMORY_GB:
        return None
    base = acc.name.split(" (")[0]
    memory = Measure(value=memory_gb, sources=list(acc.memory_gb.sources),
                     notes=f"your answer current.gpu_memory_gb = {memory_gb:g} (the knowledge base's {acc.id} has "
                           f"{acc.memory_gb.value:g} GB; every other figure is the entry's)")
    return acc.model_copy(update={"id": variant_id(acc, memory_gb), "name": f"{base} ({memory_gb:g} GB, yours)",
                                  "aliases": [], "memory_gb": memory, "purchase_price_usd": None})


def with_part(catalog: Catalog, acc: Accelerator) -> Catalog:
    """The catalog with one more accelerator (a user's own variant); the version is the catalog's own."""
    return replace(catalog, accelerators={**catalog.accelerators, acc.id: acc})
