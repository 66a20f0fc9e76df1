"""The workload profile: the answers as the sizing pipeline reads them, and the targets each search is held to.

One pure function per step, so that the rule callbacks (rules/consultation/derivations.py, which record which answers
each figure rests on) and `gpuadvisor estimate` (one accelerator and layout, no search) build the same profile from the
same answers: resolve (rules/inputs/resolve.py) → profile → targets → plan (rules/planning/search.py) → priced option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Architecture, Precision
from gpuadvisor.rules.inputs.answers import LOAD_KEYS
from gpuadvisor.rules.inputs.fact_kinds import ComputeNeedFact, DemandFact
from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.rules.inputs.formats import runs_on as runs_on  # re-exported: its callers name it here
from gpuadvisor.rules.inputs.usage import usage_profile
from gpuadvisor.rules.inputs.user_load import ANSWER_KEYS as USER_ANSWER_KEYS
from gpuadvisor.rules.inputs.user_load import user_load
from gpuadvisor.rules.inputs.workload import Workload
from gpuadvisor.rules.planning.search import InferenceSearch, ServingTargets, TrainingSearch, TrainingTargets
from gpuadvisor.rules.planning.serving import engine_efficiency, engine_memory, engine_splits
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.params import ParameterCount
from gpuadvisor.rules.sizing.speed import EngineEfficiency
from gpuadvisor.rules.sizing.units import count_text, flops_text

Fact = Mapping[str, Any]
Answer = Callable[[str], Any]
"""Reads one answer by its dotted key (the value the consultation applies); a rule callback records each read as a
premise of the profile."""

CHINCHILLA_TOKENS_PER_PARAM = 20.0
DEFAULT_FINETUNE_TOKENS_B = 0.1
FULL_TRAINING_FLOPS_PER_TOKEN = 6.0
"""FLOPs per parameter per token of full training: forward 2 + backward 4 (Kaplan et al. 2020; S8)."""
ADAPTER_FLOPS_PER_TOKEN = 4.0
"""LoRA/QLoRA: forward 2 + backward through activations 2, no weight gradients for the frozen base (S8)."""


def workload_profile(a: Answer, peek: Answer, given: Callable[[str], bool], *, model_name: str,
                     params: ParameterCount, moe: bool, formats: Formats,
                     usage_values: Mapping[str, float], user_load_values: Mapping[str, float]) -> Workload:
    """The workload: every answer the sizing reads, under the names the rules test, with what follows from them
    (training tokens by default, a request rate from daily users, the owned hardware's busy share).

    `a` reads an answer the profile rests on, `peek` one it only looks at, `given` says whether the user gave it."""
    workload = a("workload")
    for key in ("model.name", "model.params_b", "model.config"):  # how the model was named
        if peek(key) is not None:
            a(key)
    method = "none" if workload == "inference" else ("full" if workload == "training" else a("finetune.method"))
    batch = int(a("precision.batch_size"))
    concurrency = a("inference.concurrent_requests") if workload == "inference" else None
    tokens_b = a("training.tokens_b") if workload != "inference" else None
    tokens_default = ""
    if workload != "inference" and tokens_b is None:
        if workload == "training":
            tokens_b = CHINCHILLA_TOKENS_PER_PARAM * params.total / 1e9
            tokens_default = "20 tokens per parameter (Chinchilla-optimal)"
        else:
            tokens_b = DEFAULT_FINETUNE_TOKENS_B
            tokens_default = "0.1B tokens (a typical instruction-tuning set)"
    stage = a("stage")
    fields: dict[str, Any] = {
        "workload": workload, "method": method, "stage": stage,
        "params_b": round(params.total / 1e9, 4), "active_b": round(params.active / 1e9, 4),
        "batch": batch, "context": int(a("precision.context_tokens")),
        "concurrency": int(concurrency) if concurrency else batch,
        "framework": a("framework.name"), "where": a("deployment.where"),
        "checkpointing": bool(a("training.checkpointing")), "sensitive_data": bool(a("deployment.sensitive_data")),
        "models_per_gpu": int(a("inference.models_per_gpu")), "formats": formats,
        "context_given": given("precision.context_tokens"),
        "lengths_given": given("inference.input_tokens") or given("inference.output_tokens"),
        "load_given": any(given(key) for key in LOAD_KEYS),
        "engine": str(a("inference.engine")), "moe": moe,
        "hours_per_month_given": a("deployment.hours_per_month"),
        "utilization_given": a("deployment.utilization"),
        "capex_usd": a("budget.capex_usd"), "hourly_usd": a("budget.hourly_usd"),
        "monthly_usd": a("budget.monthly_usd"), "current_util": a("current.gpu_utilization"),
        "datacenter_only": bool(a("constraints.datacenter_only")),
        "ecc_required": bool(a("constraints.ecc_required")),
        "spot": bool(a("deployment.spot")), "allow_marketplace": bool(a("deployment.allow_marketplace")),
        "reservations": bool(a("deployment.reservations")),
        "porting": bool(a("framework.porting")), "port_weeks_given": a("framework.port_weeks"),
        "engineer_usd_per_week_given": a("framework.engineer_usd_per_week"),
        "spot_given": given("deployment.spot"), "desk_side": bool(a("deployment.desk_side")),
        "pc_slots": int(a("current.pc_slots")),
        "production_stated": given("stage") and a("stage") == "production",
        "stage_stated": given("stage"),
        "failover": bool(a("inference.failover")) if workload == "inference" else False,
        "pue": float(a("deployment.pue")), "power_usd_per_kwh": float(a("deployment.power_usd_per_kwh")),
        "lifetime_years": float(a("deployment.lifetime_years")), "max_gpus": a("constraints.max_gpus"),
        "site_usd_per_kw_month": a("deployment.site_usd_per_kw_month"),
        "vendors": tuple(a("constraints.vendors")), "providers": tuple(a("deployment.providers")),
        "requests_per_minute": a("inference.requests_per_minute"),
        "input_tokens": int(a("inference.input_tokens")), "output_tokens": int(a("inference.output_tokens")),
        "min_tps_user": a("inference.min_tokens_per_s_per_user"), "ttft_max_s": a("inference.ttft_max_s"),
        "latency_p95_s": a("inference.latency_p95_s"), "deadline_days": float(a("training.deadline_days")),
        "deadline_from": str(a("training.deadline_from")), "after_run": str(a("deployment.after_run")),
        "deadline_given": given("training.deadline_days"),
        "deadline_from_given": peek("training.deadline_from") in ("today", "delivery"),
        "optimizer": a("training.optimizer"), "zero_stage": a("training.zero_stage"),
        "gradient_checkpointing": bool(a("training.gradient_checkpointing")),
        "recompute": str(a("training.recompute")) if a("training.gradient_checkpointing") else "none",
        "global_batch": a("training.global_batch"), "global_batch_tokens": a("training.global_batch_tokens"),
        "context_parallel": a("training.context_parallel"),
        "lora_rank": int(a("finetune.lora_rank")),
        "tokens_b": tokens_b, "tokens_default": tokens_default,
    }
    if workload == "inference" and fields["requests_per_minute"] is None \
            and peek("inference.daily_active_users") is not None:
        load = user_load(int(a("inference.daily_active_users")),
                         {leaf: a(f"inference.{leaf}") for leaf in USER_ANSWER_KEYS}, user_load_values)
        fields.update(daily_active_users=load.daily_active_users,
                      requests_per_minute=round(load.requests_per_minute, 3),
                      sessions_per_user_per_day=load.sessions_per_user_per_day,
                      requests_per_session=load.requests_per_session, peak_to_average=load.peak_to_average,
                      load_from_users=load.text())
    # with a request rate and neither a concurrency nor a batch given, the decode batch is not an answer: each
    # option's plan forms its own at the rate (its layout's batch per replica), so no workload-level line may
    # describe the service as batch 1
    per_option = bool(workload == "inference" and fields["requests_per_minute"] is not None and concurrency is None
                      and not given("precision.batch_size"))
    w = Workload(**fields, per_option_batch=per_option,
                 utilization=usage_profile(str(workload), str(stage), fields["hours_per_month_given"],
                                           fields["utilization_given"], usage_values).utilization)
    what = {"inference": "Serving", "training": "Training from scratch", "finetune": f"Fine-tuning ({method})"}
    text = (f"{what[str(workload)]} {model_name} ({w.params_b:.2f}B parameters) in {formats.weights.name}, "
            + (f"context {w.context:,}, "
               + ("requests in flight as each option's batch holds them at the request rate"
                  if w.per_option_batch else
                  f"up to {w.concurrency:,} request{'s' if w.concurrency != 1 else ''} "
                  "in flight") if workload == "inference"
               else f"context {w.context:,}, micro-batch {batch}")
            + (f"; load: {w.load_from_users} (assumptions.toml dau_*)" if w.load_from_users else "")
            + f"; {w.stage}, {w.framework}, deployment {w.where}")
    return replace(w, text=text)


def demand_fact(work: Workload, burst: float) -> DemandFact:
    """S10: the tokens/s the traffic needs, or, with no request rate given, no throughput target at all: the
    fleet is sized for the requests in flight and each option reports its capacity (never an invented load)."""
    rpm, out = work.requests_per_minute, work.output_tokens
    concurrency = work.concurrency
    if rpm is None:
        return {"kind": "demand", "ref": "demand", "tokens_per_s": 0.0, "requests_per_s": 0.0,
                "concurrency": concurrency, "burst": burst, "target": False,
                "text": f"No throughput target given (inference.requests_per_minute): sized for "
                        f"{concurrency} request(s) in flight; each option's capacity is reported"}
    needed = rpm * out / 60.0
    return {"kind": "demand", "ref": "demand", "tokens_per_s": round(needed * (1 + burst), 3),
            "requests_per_s": round(rpm / 60.0, 4), "concurrency": concurrency, "burst": burst,
            "target": True,
            "text": (f"{work.load_from_users}; " if work.load_from_users else "")
                    + f"{rpm:,.0f} requests/min × {out} output tokens = {needed:,.0f} tokens/s; "
                    f"+{burst:.0%} burst headroom → plan {needed * (1 + burst):,.0f} tokens/s, "
                    f"{concurrency} requests in flight"}


def training_flops_per_token(method: str) -> float:
    """FLOPs per active parameter per token: 6 for full training, 4 for adapters (S8)."""
    return FULL_TRAINING_FLOPS_PER_TOKEN if method == "full" else ADAPTER_FLOPS_PER_TOKEN


def compute_need_fact(active_params: float, work: Workload) -> ComputeNeedFact:
    """S8: the run's compute, factor × active parameters × tokens."""
    tokens = float(work.tokens_b or 0.0) * 1e9
    factor = training_flops_per_token(work.method)
    flops = factor * active_params * tokens
    src = f" ({work.tokens_default}, default)" if work.tokens_default else ""
    return {"kind": "compute_need", "ref": "compute_need", "flops": flops, "tokens": tokens,
            "factor": factor, "pflop_days": round(flops / 1e15 / 86400, 3),
            "text": f"Compute = {factor:g} × {active_params:,.0f} active parameters × {count_text(tokens)} tokens"
                    f"{src} = {flops_text(flops)} ({pflop_days_text(flops)})"}


def pflop_days_text(flops: float) -> str:
    """`1,180 PFLOP/s-days`, `6.94 PFLOP/s-days`, `0.00694 PFLOP/s-days`: three significant figures, never a
    small run's `0.0`."""
    days = flops / 1e15 / 86400
    return f"{days:,.0f} PFLOP/s-days" if days >= 100 else f"{days:.3g} PFLOP/s-days"


def serving_targets(work: Workload, demand: Fact) -> ServingTargets:
    """What a serving plan must deliver, from the profile and the demand (S10)."""
    return ServingTargets(
        concurrency=int(demand["concurrency"]), tokens_per_s=float(demand["tokens_per_s"]),
        input_tokens=work.input_tokens, output_tokens=work.output_tokens,
        context=work.context, min_tokens_per_s_per_user=work.min_tps_user,
        ttft_max_s=work.ttft_max_s, latency_p95_s=work.latency_p95_s,
        max_gpus=work.max_gpus, failover=work.failover,
        requests_per_s=float(demand["requests_per_s"]) if demand.get("target") else None)


def training_targets(work: Workload, compute: Fact) -> TrainingTargets:
    """What a training plan must deliver, from the profile and the run's compute (S8): a global batch in tokens
    becomes whole sequences of the context."""
    return TrainingTargets(
        tokens=float(compute["tokens"]), flops_factor=work.method,  # type: ignore[arg-type]
        seq=work.context, micro_batch=work.batch, deadline_days=work.deadline_days,
        optimizer=work.optimizer, zero_stage=work.zero, lora_rank=work.lora_rank,
        max_gpus=work.max_gpus, pretraining=work.workload == "training", global_batch=work.global_batch_sequences,
        context_parallel=work.context_parallel, recompute=work.recompute)


def catalog_factors(catalog: Catalog) -> Factors:
    """The knowledge base's assumptions as sizing factors (an overlay can change them)."""
    return Factors.from_values({k: a.value for k, a in catalog.assumptions.items()})


def consultation_factors(base: Factors, work: Workload) -> Factors:
    """The catalog's factors with the consultation's power price, PUE, lifetime and site rate."""
    site = work.site_usd_per_kw_month
    return replace(base, pue=work.pue, power_usd_per_kwh=work.power_usd_per_kwh,
                   hardware_lifetime_years=work.lifetime_years,
                   colocation_usd_per_kw_month=float(site) if site is not None else base.colocation_usd_per_kw_month)




def inference_search(catalog: Catalog, work: Workload, arch: Architecture, params: ParameterCount,
                     targets: ServingTargets, factors: Factors,
                     efficiency: Callable[[Accelerator], EngineEfficiency | None] | None = None,
                     weights: Precision | None = None) -> InferenceSearch:
    """The serving search of a consultation (or of an estimate): its formats (`weights`: an option's own, see
    `Formats.served_on`), the engine's calibrated efficiency (or `efficiency`: an end of its band) and memory
    factors on each part, the models hosted side by side."""
    kv = work.formats.kv_cache
    engine = work.engine
    return InferenceSearch(arch, params, weights or work.formats.weights, kv, targets, factors,
                           efficiency or (lambda acc: engine_efficiency(catalog, acc, engine)),
                           lambda acc: engine_memory(catalog, acc, engine),
                           models=work.models_per_gpu or 1,
                           splits=lambda acc: engine_splits(catalog, acc, engine))


def training_search(catalog: Catalog, work: Workload, arch: Architecture, params: ParameterCount,
                    targets: TrainingTargets, factors: Factors) -> TrainingSearch:
    """The training search of a consultation (or of an estimate)."""
    return TrainingSearch(arch, params, work.formats.weights, targets, factors)


def deadline_start(work: Workload, catalog: Catalog) -> Workload:
    """The workload with when a stated training deadline starts, and why: as answered (training.deadline_from);
    else today when the answers could rent the run instead — cloud or either, and an instance of an allowed vendor
    at an allowed provider exists — so a purchase's delivery counts against it (rule D.lead-time); and from delivery
    when only buying is possible (on premises, or vendors nobody rents): then the deadline can only mean the run."""
    if work.deadline_from_given:
        starts, why = work.deadline_from, "your answer"
    elif work.where == "on_prem":
        starts, why = "delivery", "bought on premises: renting the run is excluded, so the deadline is the run's"
    elif any(i.provider in work.providers and i.accelerator in catalog.accelerators
             and catalog.accelerators[i.accelerator].vendor in work.vendors for i in catalog.instances.values()):
        starts, why = "today", "the run could be rented now: a purchase must arrive in time"
    else:
        starts, why = "delivery", "no allowed provider rents an allowed vendor's parts: the deadline is the run's"
    return replace(work, deadline_from=starts, deadline_from_why=why)
