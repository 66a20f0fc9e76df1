"""HOW: what a fact led to — the other direction of WHY.

For the answers the user gave and the facts of the workload profile, list the conclusions drawn directly from each
and how many followed from it in all, so "what did my context length change?" has an answer in the result itself.
"""

from __future__ import annotations

from collections import defaultdict

from gpuadvisor.rules.consultation.explain import describe
from gpuadvisor.rules.consultation.result import HowEntry
from gpuadvisor.rules.engine import Consultation

PROFILE_KINDS = ("workload", "parameters", "weights", "kv_cache", "demand", "compute_need", "memory_need",
                 "intensity")
MAX_LISTED = 8


def how_entries(cons: Consultation) -> list[HowEntry]:
    """One entry per given answer and per profile fact, in that order."""
    direct: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for fid, derivations in cons.derivations.items():
        for d in derivations:
            if d.rule_id is None:
                continue
            for premise in d.premises:
                direct[premise].append((fid, d.rule_id))
    roots = [fid for fid, fact in cons.peek_kind("answer") if fact.get("given")]
    roots += [fid for kind in PROFILE_KINDS for fid, _ in cons.peek_kind(kind)]
    out = []
    for fid in roots:
        children = list(dict.fromkeys(direct.get(fid, [])))
        fact = cons.peek(fid)
        out.append(HowEntry(
            fact=fid, kind=str(fact.get("kind", "")), text=describe(fact),
            led_to=[f"{describe(cons.peek(c))} [{rule}]" for c, rule in children[:MAX_LISTED]],
            direct=len({c for c, _ in children}), total=len(cons.how(fid)),
        ))
    return out
