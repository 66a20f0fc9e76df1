"""The fact vocabulary of a consultation: which kinds exist and which fields rule packs may test.

Facts are flat dicts with a `kind`. Inputs (answers and knowledge-base entries) are built here; derived kinds are
concluded by rules. Rule packs are linted against `FACT_FIELDS`, so a misspelt field in a company policy pack is an
error at load time, not a rule that silently never fires.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.knowledge.schema import Accelerator, Instance, Precision, Quote
from gpuadvisor.rules.pricing import PART_ORDER
from gpuadvisor.rules.units import Unit

# Fields every derived fact may carry for explanations.
_COMMON = ("kind", "ref", "text")

PD_FIELDS = (
    "pd_offer", "pd_reason", "pd_machines", "pd_prefill_machines", "pd_decode_machines",
    "pd_prefill_replicas", "pd_decode_replicas", "pd_decode_batch", "pd_ttft_s",
    "pd_tokens_per_s_per_user", "pd_kv_gb_per_request", "pd_transfer_ms", "pd_network",
    "pd_colocated_machines",
)
"""Disaggregated serving weighed per configuration (planning.Disaggregation), copied onto its options."""

FACT_FIELDS: dict[str, tuple[str, ...]] = {
    # inputs
    "answer": ("key", "value", "given"),
    "model": ("key", "name", "source", "layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "moe",
              "experts", "experts_per_token", "mla", "synthesized", "arch_json"),
    "precision": ("role", "key", "name", "bits", "compute", "needs_bf16", "needs_fp8", "needs_fp4", "needs_int8",
                  "library", "min_cc", "quantized", "given"),
    "accelerator": ("key", "name", "vendor", "market", "memory_gb", "bandwidth_gbs", "bf16_tflops", "fp8_tflops",
                    "fp4_tflops", "interconnect_kind", "interconnect_gbs", "ecc", "mig", "cc", "has_cc",
                    "flash_attention_2", "software_stack", "max_per_node", "purchasable", "price_usd", "tdp_w",
                    "bf16_support", "fp8_support", "fp4_support", "int8_support", "flagship",
                    "software_dropped", "software_horizon"),
    "instance": ("key", "provider", "provider_kind", "accelerator", "count", "on_demand_usd_per_hour",
                 "spot_usd_per_hour", "shape", "fabric"),
    "free_tier": ("key", "provider", "accelerator", "count", "session_hours", "monthly_quota_hours",
                  "quota_published", "guaranteed", "shape"),
    "owned": ("accelerator", "count", "acc_ref", "name", "shape"),
    "unit": ("key", "accelerator", "node", "scale_up_kind", "domain", "scale_out_kind", "joinable", "desk_side",
             "unit_kind", "name"),
    "system": ("key", "system", "accelerator", "shape", "unit_kind", "desk_side", "name"),
    "quote": ("key", "vendor", "accelerator", "system", "target", "target_name", "usd", "per", "quoted_on",
              "valid_until", "expired", "label"),
    # profile (derived from answers and the model)
    "workload": ("workload", "method", "stage", "params_b", "active_b", "batch", "context", "concurrency",
                 "framework", "where", "checkpointing", "sensitive_data", "models_per_gpu", "weights_precision",
                 "kv_precision", "moe", "utilization", "capex_usd", "hourly_usd", "monthly_usd", "current_util",
                 "engine", "datacenter_only", "ecc_required", "spot", "reservations", "allow_marketplace", "pue",
                 "power_usd_per_kwh",
                 "lifetime_years", "max_gpus", "requests_per_minute", "input_tokens", "output_tokens", "min_tps_user",
                 "ttft_max_s", "latency_p95_s", "deadline_days", "optimizer", "zero_stage", "gradient_checkpointing",
                 "lora_rank", "tokens_b", "tokens_default", "hours_per_month_given", "utilization_given",
                 "spot_given", "desk_side", "failover", "production_stated", "pc_slots", "site_usd_per_kw_month",
                 "daily_active_users", "sessions_per_user_per_day", "requests_per_session", "peak_to_average",
                 "load_from_users", "per_option_batch", "weights_given", "porting", "port_weeks_given",
                 "engineer_usd_per_week_given"),
    # a lifecycle ([[phase]] tables, rules/lifecycle.py): the phases, the chosen fleet, and their interplay
    "phase": ("index", "name", "workload", "model_from", "start_month", "months"),
    "fleet": ("choice", "total_cost_usd", "capex_usd", "budget_left_usd", "budget_given", "within_budget",
              "alternatives"),
    "purchase_use": ("phase", "name", "workload", "title", "count", "in_plan", "capex_usd", "months_after",
                     "busy_share_after", "utilization_after", "break_even_utilization", "idle_after",
                     "below_break_even", "instead", "plan_text"),
    "eval_check": ("phase", "name", "trained_phase", "title", "machine_memory_gb", "eval_need_gb", "fits_eval",
                   "precision"),
    "parameters": ("total", "active", "total_b", "active_b"),
    "weights": ("bytes", "gb", "precision", "bits", "gb_4bit"),
    "kv_cache": ("bytes_per_token", "gb_per_sequence", "gb_total", "sequences", "context", "tokens_per_sequence",
                 "per_option"),
    "demand": ("tokens_per_s", "requests_per_s", "concurrency", "burst", "target"),
    "usage": ("hours_per_month", "utilization", "sessions_per_month", "session_overhead_h", "per_run",
              "rented_hours_per_month"),
    "compute_need": ("flops", "tokens", "factor", "pflop_days"),
    "memory_need": ("mode", "total_gb", "weights_gb", "kv_cache_gb", "activations_gb", "gradients_gb",
                    "optimizer_gb", "overhead_gb", "ratio_to_weights"),
    "intensity": ("phase", "flop_per_byte", "bound", "batch", "per_option"),
    "speed_model": ("name",),
    # hardware configurations and the ways to acquire them
    "config": ("accelerator", "count", "nodes", "tensor_parallel", "expert_parallel", "pipeline_parallel", "replicas",
               "zero_stage",
               "batch_per_replica", "memory_gb_per_gpu", "memory_utilization", "fits_single_gpu", "bound",
               "tokens_per_s", "tokens_per_s_per_user", "ttft_s", "latency_s", "training_days", "meets_tpot",
               "meets_ttft", "meets_latency", "meets_deadline", "interconnect_kind", "market", "vendor", "ecc",
               "software_stack", "flash_attention_2", "precision_supported", "throttled", "mig", "memory_gb",
               "flagship", "accelerator_name", "vendor_allowed", "within_max_gpus", "training_gpu_hours",
               "weights_precision", "library", "library_ok", "library_why", "min_cc", "cc", "capacity_tokens_per_s",
               "headroom",
               "desk_side", "shape", "machines", "fill", "link", "sync_link", "scale_up_kind", "scale_out_kind",
               "unit_kind", "meets_failover", "replicas_for_load", "trains", "topology", "mig_fits", "mig_slice_gb",
               "mig_model_gb", "precision_fallback", *PD_FIELDS),
    "option": ("config", "accelerator", "accelerator_name", "purchase", "instance", "provider", "provider_kind",
               "pricing", "count", "nodes", "tensor_parallel", "market", "vendor", "ecc", "software_stack",
               "interconnect_kind", "usd_per_hour", "usd_per_run", "usd_per_million_tokens", "usd_per_month",
               "capex_usd", "buy_pays_off", "break_even_utilization", "power_share", "training_days",
               "tokens_per_s", "memory_utilization", "flagship", "over_capex", "over_hourly", "over_monthly",
               "price_known", "provider_allowed", "instance_id", "instances", "price_as_of", "price_source",
               "acquisition", "price_kind", "price_age_months", "capacity_tokens_per_s", "headroom", "usage_hours",
               "large_cluster", "gpu_hours", "stage", "provider_name", "instance_name", "within_free_limits",
               "free_limit", "guaranteed", "quota_published", "multi_session", "units_bought", "memory_gb",
               "spot_run_too_long", "spot_hours", "accelerators_paid", "machines", "unit_name", "unit_kind",
               "title", "capex_beyond_accelerators_usd", "tco_usd", "horizon_years", "desk_side", "link",
               "sync_link", "scale_out_kind", "replicas", "replicas_for_load", "meets_failover",
               "tokens_per_s_per_user", "ttft_s", "latency_s", "fabric_usd", "host_usd", "power_w", "topology",
               "existing_host", "pc_fits", "pc_slots", "site_usd", *PD_FIELDS, "pd_usd_per_month",
               "pd_capex_usd", "decision_usd", "horizon_months", "resale_usd", "resale_share",
               *(f"cost_{part}_usd" for part in PART_ORDER)),
    # conclusions of the generic actions
    "warning": ("rule", "heuristic", "category", "severity", "message", "target"),
    "veto": ("rule", "heuristic", "target", "reason"),
    "cost_part": ("rule", "heuristic", "target", "part", "usd", "reason"),
    "porting": ("stack", "stack_name", "weeks", "usd_per_week", "usd"),
    "ruled_out": ("target", "name", "reason", "rule", "shape"),
}
FACT_SCHEMAS: dict[str, tuple[str, ...]] = {k: _COMMON + v for k, v in FACT_FIELDS.items()}


def flagship(a: Accelerator) -> bool:
    """A data-centre part with at least ~700 dense BF16 TFLOPS (H100-class and up): the documents' flagship."""
    return a.market == "datacenter" and (a.dense_tflops("bf16") or a.dense_tflops("fp16") or 0) >= 700


def accelerator_fact(a: Accelerator) -> dict[str, Any]:
    """The scalar view of an accelerator that rules test (the full entry stays in the catalog)."""
    bf16 = a.dense_tflops("bf16") or a.dense_tflops("fp16") or 0.0
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


def instance_fact(i: Instance, shape: str) -> dict[str, Any]:
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


def unit_fact(shape: str, unit: Unit) -> dict[str, Any]:
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


def system_fact(unit: Unit, shape: str, system_id: str, accelerator_name: str) -> dict[str, Any]:
    """A machine one can buy with this accelerator in it (systems.toml × the card)."""
    return {
        "kind": "system", "ref": unit.id, "key": unit.id, "system": system_id, "accelerator": unit.accelerator,
        "shape": shape, "unit_kind": unit.kind, "desk_side": unit.desk_side, "name": unit.name,
        "text": f"{unit.name} holding {accelerator_name}: {unit.topology.describe()}",
    }


def quote_fact(q: Quote, target_name: str, *, expired: bool) -> dict[str, Any]:
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


def precision_fact(role: str, p: Precision, given: bool = True) -> dict[str, Any]:
    """A format of the consultation; `given` = the user chose it (a default is served per option in what the part
    runs, profile.served_weights)."""
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


def answer_fact(key: str, value: Any, given: bool) -> dict[str, Any]:
    shown = value if not isinstance(value, list) else ", ".join(map(str, value))
    return {"kind": "answer", "ref": f"answer:{key}", "key": key, "value": value, "given": given,
            "text": f"{key} = {shown}" + ("" if given else " (default)")}
