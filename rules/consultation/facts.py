"""The fact vocabulary of a consultation: which kinds exist and which fields rule packs may test.

Facts are flat dicts with a `kind`. Inputs (answers and knowledge-base entries) are built here; derived kinds are
concluded by rules. Rule packs are linted against `FACT_FIELDS`, so a misspelt field in a company policy pack is an
error at load time, not a rule that silently never fires.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.knowledge.schema import Accelerator, Instance, Precision, Quote
from gpuadvisor.rules.engine.actions import CONCLUSION_FIELDS
from gpuadvisor.rules.inputs.fact_kinds import (
    FACT_KINDS,
    AcceleratorFact,
    AnswerFact,
    InstanceFact,
    PrecisionFact,
    QuoteFact,
    SystemFact,
    UnitFact,
    field_names,
)
from gpuadvisor.rules.planning.units import Unit
from gpuadvisor.rules.sizing.peak import half_precision_tflops

# Fields every derived fact may carry for explanations.
_COMMON = ("kind", "ref", "text")


FACT_FIELDS: dict[str, tuple[str, ...]] = {
    **{kind: field_names(declared) for kind, declared in FACT_KINDS.items()},
    **{kind: tuple(sorted(fields - set(_COMMON))) for kind, fields in CONCLUSION_FIELDS.items()},
}
"""The fields rule packs may test, by kind: generated from the typed declarations (rules/inputs/fact_kinds.py) and the
engine's conclusions, never kept by hand."""
FACT_SCHEMAS: dict[str, tuple[str, ...]] = {k: _COMMON + v for k, v in FACT_FIELDS.items()}


def flagship(a: Accelerator) -> bool:
    """A data-centre part with at least ~700 dense BF16 TFLOPS (H100-class and up): the documents' flagship."""
    return a.market == "datacenter" and half_precision_tflops(a) >= 700


def accelerator_fact(a: Accelerator) -> AcceleratorFact:
    """The scalar view of an accelerator that rules test (the full entry stays in the catalog)."""
    bf16 = half_precision_tflops(a)
    return {
        "kind": "accelerator", "ref": f"acc:{a.id}", "key": a.id, "name": a.name, "vendor": a.vendor,
        "market": a.market, "memory_gb": a.memory_gb.value, "bandwidth_gbs": a.memory_bandwidth_gbs.value,
        "bf16_tflops": bf16, "fp8_tflops": a.dense_tflops("fp8") or 0.0, "fp4_tflops": a.dense_tflops("fp4") or 0.0,
        "interconnect_kind": a.interconnect_kind,
        "interconnect_gbs": a.interconnect_gbs.value if a.interconnect_gbs else 0.0,
        "ecc": a.ecc, "mig": int(a.mig_max_instances.value) if a.mig_max_instances else 0,
        "cc": a.cc if a.cc is not None else 0.0, "has_cc": a.cc is not None,
        "flash_attention_2": a.flash_attention_2, "software_stack": a.software_stack,
        "max_per_node": a.max_per_node, "purchasable": a.purchasable,
        "price_usd": a.purchase_price_usd.value if a.purchase_price_usd else 0.0,
        "tdp_w": a.tdp_w.value if a.tdp_w else 0.0,
        "bf16_support": a.bf16_support, "fp8_support": a.fp8_support, "fp4_support": a.fp4_support,
        "int8_support": a.int8_support,
        "flagship": flagship(a),
        "software_dropped": a.software_support is not None and a.software_support.dropped,
        "software_horizon": (f"{a.software_support.stack}: {a.software_support.horizon()}"
                             if a.software_support is not None else ""),
        "text": f"{a.name}: {a.memory_gb.value:g} GB {a.memory_type}, {a.memory_bandwidth_gbs.value:g} GB/s, "
                f"{dense_peaks_text(a)}, {a.interconnect if a.interconnect != 'none' else 'no link between GPUs'}",
    }


def dense_peaks_text(a: Accelerator) -> str:
    """The dense tensor peaks of the precisions the part has, as its datasheet names them: `989 dense BF16, 1,979
    FP8 TFLOPS`; a part without BF16 (the T4, the V100) shows FP16 (`65 dense FP16 TFLOPS`), never a BF16 figure."""
    peaks = [(name, a.dense_tflops(key)) for name, key, has in (
        ("BF16", "bf16", a.bf16_support), ("FP16", "fp16", not a.bf16_support), ("FP8", "fp8", a.fp8_support),
        ("FP4", "fp4", a.fp4_support))
        if has]
    shown = [f"{value:,g} {name}" for name, value in peaks if value]
    if not shown:
        return "no published dense tensor peak"
    return f"{shown[0].replace(' ', ' dense ', 1)}{''.join(', ' + x for x in shown[1:])} TFLOPS"


def instance_fact(i: Instance, shape: str) -> InstanceFact:
    od, spot = i.current_price("on-demand"), i.current_price("spot")
    parts = [f"{i.provider_name} {i.instance}: {i.accelerator_count}× {i.accelerator}"]
    if od:
        parts.append(f"${od.usd_per_hour:,.2f}/h on-demand (as of {od.as_of_text})")
    if spot:
        parts.append(f"${spot.usd_per_hour:,.2f}/h spot (as of {spot.as_of_text})")
    return {
        "kind": "instance", "ref": f"inst:{i.id}", "key": i.id, "provider": i.provider,
        "provider_kind": i.provider_kind, "accelerator": i.accelerator, "count": i.accelerator_count,
        "on_demand_usd_per_hour": od.usd_per_hour if od else 0.0,
        "spot_usd_per_hour": spot.usd_per_hour if spot else 0.0, "shape": shape, "fabric": i.fabric or "",
        "text": ", ".join(parts),
    }


def unit_fact(shape: str, unit: Unit) -> UnitFact:
    """A unit shape the configuration search plans once (every offer of that shape is priced on its plan)."""
    t = unit.topology
    return {
        "kind": "unit", "ref": f"unit:{shape}", "key": shape, "accelerator": unit.accelerator, "node": t.node,
        "scale_up_kind": t.scale_up.kind, "domain": t.scale_up.domain,
        "scale_out_kind": t.scale_out.kind if t.scale_out is not None else "none", "joinable": t.joinable,
        "desk_side": unit.desk_side, "unit_kind": unit.kind, "name": unit.name,
        # every unit of this shape (an instance type, a server …) is planned alike: the text names the shape only
        "text": f"Machine topology: {t.describe()}",
    }


def system_fact(unit: Unit, shape: str, system_id: str, accelerator_name: str) -> SystemFact:
    """A machine one can buy with this accelerator in it (systems.toml × the card)."""
    return {
        "kind": "system", "ref": unit.id, "key": unit.id, "system": system_id, "accelerator": unit.accelerator,
        "shape": shape, "unit_kind": unit.kind, "desk_side": unit.desk_side, "name": unit.name,
        "text": f"{unit.name} holding {accelerator_name}: {unit.topology.describe()}",
    }


def quote_fact(q: Quote, target_name: str, *, expired: bool) -> QuoteFact:
    """One of the buyer's own quotes (the user overlay's quotes.toml): applied to the prices while valid, ignored
    once expired (rule Q.expired says so)."""
    target = q.accelerator or q.system or ""
    per = "accelerator" if q.accelerator else ("machine with its accelerators" if q.includes_accelerators
                                               else "machine")
    state = f"expired on {q.valid_until}: ignored" if expired else f"valid until {q.valid_until}: applied"
    return {
        "kind": "quote", "ref": f"quote:{q.id}", "key": q.id, "vendor": q.vendor, "accelerator": q.accelerator or "",
        "system": q.system or "", "target": target, "target_name": target_name, "usd": q.usd, "per": per,
        "quoted_on": q.quoted_on, "valid_until": q.valid_until, "expired": expired, "label": q.label,
        "text": f"Your quote {q.id}: {q.vendor}, {target_name}, ${q.usd:,.2f} per {per}, quoted {q.quoted_on}, "
                f"{state}",
    }


def precision_fact(role: str, p: Precision, given: bool = True) -> PrecisionFact:
    """A format of the consultation; `given` = the user chose it (a default is served per option in what the part
    runs, Formats.served_on)."""
    return {
        "kind": "precision", "ref": f"prec:{role}:{p.id}", "role": role, "key": p.id, "name": p.name,
        "given": given,
        "bits": p.bits_per_weight, "compute": p.compute,
        "needs_bf16": "bf16_support" in p.requires, "needs_fp8": "fp8_support" in p.requires,
        "needs_fp4": "fp4_support" in p.requires, "needs_int8": "int8_support" in p.requires,
        "library": p.library or "", "min_cc": p.min_compute_capability or 0.0,
        "quantized": p.bits_per_weight < 8.5 and p.id not in {"fp8", "int8"},
        "text": f"{role} format {p.name}: {p.bits_per_weight:g} bits per value incl. scales, computes in "
                f"{p.compute.upper()}",
    }


def answer_fact(key: str, value: Any, given: bool) -> AnswerFact:
    shown = value if not isinstance(value, list) else ", ".join(map(str, value))
    return {"kind": "answer", "ref": f"answer:{key}", "key": key, "value": value, "given": given,
            "text": f"{key} = {shown}" + ("" if given else " (default)")}
