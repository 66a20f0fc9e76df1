"""`gpuadvisor estimate`: the consultation's pipeline fixed to one accelerator and one layout.

An estimate is not a second sizing model. Its flags become answers (validated where they are read, so an error names
the flag), the answers are resolved as a consultation resolves them (rules/inputs/resolve.py: the model, the weight
format
a workload defaults to), profiled as a consultation profiles them (rules/planning/profile.py), and the layout given is
evaluated by the planner that searches layouts for `recommend` (`InferenceSearch.evaluate`,
`TrainingSearch.evaluate`). Its findings are the rule packs' verdicts on that configuration (`Advisor.judge`), not
Python copies of them. So `estimate` and `recommend` print the same memory and speed for the same setup
(tests/rules/test_one_pipeline.py holds them to it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.engine_names import canonical_engine
from gpuadvisor.knowledge.errors import AdvisorError, InputError
from gpuadvisor.knowledge.lookup import natural_key
from gpuadvisor.knowledge.schema import Accelerator, Architecture, ModelSplit, Precision
from gpuadvisor.rules.estimate.result import (
    SCHEMA_VERSION,
    AssumptionUsed,
    CostOut,
    ErrorBand,
    EstimateResult,
    LatencyOut,
    MemoryOut,
    Method,
    ModelOut,
    OwnedOut,
    ParametersOut,
    PrecisionOut,
    Range,
    ServingOut,
    SetupOut,
    TrainingStepOut,
    Workload,
)
from gpuadvisor.rules.inputs.answers import IMPLIED_WHY, Answers, parse_answers
from gpuadvisor.rules.inputs.resolve import Resolved, resolve, weights_problem
from gpuadvisor.rules.inputs.usage import Usage, spot_hours, usage_profile, usage_values
from gpuadvisor.rules.inputs.user_load import user_load_values
from gpuadvisor.rules.inputs.workload import Workload as Profile
from gpuadvisor.rules.planning.profile import (
    catalog_factors,
    compute_need_fact,
    consultation_factors,
    deadline_start,
    demand_fact,
    inference_search,
    serving_targets,
    training_search,
    training_targets,
    workload_profile,
)
from gpuadvisor.rules.planning.search import Plan, TrainingSearch, replica_link, spot_wall_hours
from gpuadvisor.rules.planning.serving import engine_splits, resolve_engine
from gpuadvisor.rules.planning.topology import device_for
from gpuadvisor.rules.planning.units import Unit, bare_unit, own_unit, purchase_units
from gpuadvisor.rules.pricing.decision_cost import ownership_notes, owning
from gpuadvisor.rules.pricing.economics import accelerator_age, economics
from gpuadvisor.rules.pricing.price import Buy, Rent, Run, break_even_utilization, for_life, price
from gpuadvisor.rules.pricing.price_age import as_of_label, today
from gpuadvisor.rules.pricing.purchases import PurchaseBill, purchase_bill
from gpuadvisor.rules.sizing.cost import serving_capacity, usd_per_million_tokens, whole_instances
from gpuadvisor.rules.sizing.factors import Factors, Note
from gpuadvisor.rules.sizing.kvcache import attention_kind, kv_bytes_per_sequence, kv_bytes_per_token
from gpuadvisor.rules.sizing.memory import (
    Parallelism,
    embedding_bytes,
    fused_attention,
    lora_parameters,
)
from gpuadvisor.rules.sizing.params import ParameterCount, count_parameters, describe
from gpuadvisor.rules.sizing.serving_load import latency_at_concurrency
from gpuadvisor.rules.sizing.speed import PrefillModel, check_expert_parallel, ridge_point
from gpuadvisor.rules.sizing.training import TrainingStep, default_virtual_stages
from gpuadvisor.rules.sizing.units import GB

__all__ = ["SCHEMA_VERSION", "EstimateRequest", "EstimateResult", "catalog_factors", "embedding_bytes", "estimate",
           "factor_bounds"]

T = TypeVar("T")
OptimizerName = Literal["adamw", "sgd", "adam8bit"]

FASTER_WHEN_HIGHER = ("decode_bandwidth_efficiency", "compute_efficiency", "training_mfu", "training_comm_overlap",
                      "training_network_gbs", "training_stack_efficiency", "training_xla_stack_efficiency",
                      "training_rocm_stack_efficiency", "training_synapseai_stack_efficiency",
                      "training_matmul_share_default")
SLOWER_WHEN_HIGHER = ("step_overhead_per_layer_us", "allreduce_latency_nvlink_us", "allreduce_latency_pcie_us",
                      "training_grad_bytes_per_param", "moe_gemm_half_ridge", "training_attention_cost",
                      "training_elementwise_bytes")
FLAGS = {
    "model.name": "--model", "model.params_b": "--params", "model.config": "--model-config",
    "workload": "--workload", "finetune.method": "--method", "finetune.lora_rank": "--lora-rank",
    "precision.weights": "--precision", "precision.kv_cache": "--kv-precision",
    "precision.context_tokens": "--context", "precision.batch_size": "--batch",
    "inference.input_tokens": "--input-tokens", "inference.output_tokens": "--output-tokens",
    "inference.requests_per_minute": "--requests-per-min", "inference.concurrent_requests": "--batch",
    "inference.engine": "--engine", "training.tokens_b": "--tokens", "training.optimizer": "--optimizer",
    "training.zero_stage": "--zero", "training.gradient_checkpointing": "--no-checkpointing",
    "training.global_batch": "--global-batch", "training.global_batch_tokens": "--global-batch-tokens",
    "training.context_parallel": "--cp", "training.recompute": "--recompute",
    "deployment.utilization": "--utilization",
}
"""The flag that sets each answer an estimate gives (an invalid answer is reported by its flag)."""


@dataclass(frozen=True)
class EstimateRequest:
    """What to size. None means "use the default" — the consultation's default — and every default used is listed
    in the result."""

    model: str | None = None
    params: float | None = None
    model_config: Path | None = None
    workload: Workload = "inference"
    method: Method | None = None
    precision: str | None = None
    kv_precision: str | None = None
    context: int | None = None
    batch: int | None = None
    input_tokens: int | None = None
    gpu: str | None = None
    gpus: int | None = None
    tp: int | None = None
    ep: int | None = None
    """Expert-parallel degree (MoE inference): the routed experts split over ep GPUs, ep a multiple of tp."""
    power_limit_w: int | None = None
    """Run the GPUs capped at this board power (MLPerf MaxQ): only limits with a published result are accepted."""
    pp: int | None = None
    cp: int | None = None
    """Context-parallel degree (training): each sequence split over cp GPUs."""
    zero: int | None = None
    global_batch: int | None = None
    """Sequences per optimizer step (training); None = the practice default of the model's size."""
    global_batch_tokens: float | None = None
    """Tokens per optimizer step (training), instead of `global_batch`."""
    recompute: Literal["auto", "none", "selective", "full"] | None = None
    tokens: float | None = None
    optimizer: OptimizerName | None = None
    checkpointing: bool | None = None
    lora_rank: int | None = None
    grad_precision: Literal["bf16", "fp32"] | None = None
    requests_per_minute: float | None = None
    output_tokens: int | None = None
    utilization: float | None = None
    engine: str | None = None
    """Serving engine (knowledge.engine_names.ENGINE_CHOICES: llama.cpp, ollama, vllm, sglang, tensorrt-llm,
    tensorrt-llm-engine, mlx); None or 'auto' = by deployment."""
    mfu: float | None = None
    """Training MFU override (0-1]; None = the step model (rules/sizing/training.py)."""


# ----------------------------------------------------------------------------------------------------------------
# Helpers shared with the calibration tests
# ----------------------------------------------------------------------------------------------------------------


def factor_bounds(catalog: Catalog, factors: Factors) -> tuple[Factors, Factors]:
    """(pessimistic, optimistic) factors from the low/high bands of the catalog's assumptions."""
    slow: dict[str, float] = {}
    fast: dict[str, float] = {}
    for name in (*FASTER_WHEN_HIGHER, *SLOWER_WHEN_HIGHER):
        a = catalog.assumptions.get(name)
        value = float(getattr(factors, name))
        low = a.low if a is not None and a.low is not None else value
        high = a.high if a is not None and a.high is not None else value
        slow[name], fast[name] = (low, high) if name in FASTER_WHEN_HIGHER else (high, low)
    return replace(factors, **slow), replace(factors, **fast)


# ----------------------------------------------------------------------------------------------------------------
# Flags → answers
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _Ctx:
    """What an estimate collects on its way: notes for the assumptions, findings, defaults used."""

    notes: list[Note] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)


def _lookup(flag: str, fn: Callable[[Catalog, str], T], catalog: Catalog, query: str) -> T:
    """A knowledge-base lookup whose errors (unknown, ambiguous) name the flag."""
    try:
        return fn(catalog, query)
    except AdvisorError as exc:
        raise InputError(f"{flag}: {exc}") from None


def _precision(catalog: Catalog, flag: str, query: str) -> Precision:
    from gpuadvisor.knowledge.lookup import find_precision

    return _lookup(flag, find_precision, catalog, query)


def _positive(name: str, value: float | None) -> None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise InputError(f"{name} must be greater than zero (got {value:g})")


def _check_engine(req: EstimateRequest) -> None:
    if req.engine is not None:
        from gpuadvisor.knowledge.engine_names import canonical_engine

        try:
            canonical_engine(req.engine)
        except InputError as exc:
            raise InputError(f"--engine: {exc}") from None
    if req.mfu is not None and not 0 < req.mfu <= 1:
        raise InputError(f"--mfu must be a fraction in (0, 1] (got {req.mfu:g})")


def _check_numbers(req: EstimateRequest) -> None:
    for name, value in (("--context", req.context), ("--batch", req.batch), ("--input-tokens", req.input_tokens),
                        ("--gpus", req.gpus), ("--tp", req.tp), ("--ep", req.ep), ("--pp", req.pp),
                        ("--tokens", req.tokens),
                        ("--lora-rank", req.lora_rank), ("--requests-per-min", req.requests_per_minute),
                        ("--output-tokens", req.output_tokens), ("--utilization", req.utilization)):
        _positive(name, value)
    if req.zero is not None and req.zero not in (0, 1, 2, 3):
        raise InputError(f"--zero must be 0, 1, 2 or 3 (got {req.zero})")
    if req.utilization is not None and req.utilization > 1:
        raise InputError(f"--utilization is a fraction between 0 and 1 (got {req.utilization:g})")
    if req.input_tokens is not None and req.context is not None and req.input_tokens > req.context:
        raise InputError(f"--input-tokens {req.input_tokens} exceeds --context {req.context} (the context holds the "
                         "prompt and the generated tokens)")


def _check_workload(req: EstimateRequest) -> Method | None:
    """The training method, refusing flags that contradict the workload."""
    inference_only = {"kv_precision": "--kv-precision", "requests_per_minute": "--requests-per-min",
                      "input_tokens": "--input-tokens"}
    training_only = {"method": "--method", "optimizer": "--optimizer", "zero": "--zero", "tokens": "--tokens",
                     "checkpointing": "--no-checkpointing", "lora_rank": "--lora-rank",
                     "grad_precision": "--grad-precision", "cp": "--cp", "global_batch": "--global-batch",
                     "global_batch_tokens": "--global-batch-tokens", "recompute": "--recompute"}
    if req.workload == "inference":
        bad = [flag for name, flag in training_only.items() if getattr(req, name) is not None]
        if bad:
            raise InputError(f"{', '.join(bad)} only apply to --workload training or finetune "
                             "(this is --workload inference)")
        return None
    bad = [flag for name, flag in inference_only.items() if getattr(req, name) is not None]
    if bad:
        raise InputError(f"{', '.join(bad)} only apply to --workload inference (this is --workload {req.workload})")
    if req.workload == "training":
        if req.method not in (None, "full"):
            raise InputError(f"--method {req.method} contradicts --workload training (from scratch trains every "
                             "weight); adapters apply to --workload finetune")
        return "full"
    return req.method or "lora"


def _check_precision(p: Precision, method: Method | None, training: bool) -> None:
    problem = weights_problem(p, method if training else None)
    if problem is not None:
        said = f"--method {method} with " if training and method else ""
        raise InputError(f"{said}--precision {p.id}: {problem}")


def _model_answer(req: EstimateRequest) -> dict[str, Any]:
    given = [n for n, v in (("--model", req.model), ("--params", req.params), ("--model-config", req.model_config))
             if v is not None]
    if len(given) > 1:
        raise InputError(f"give only one of --model, --params, --model-config (got {', '.join(given)})")
    if not given:
        raise InputError("--model, --params or --model-config is required (e.g. --model llama-3.1-8b, --params 70B)")
    if req.model is not None:
        return {"name": req.model}
    if req.model_config is not None:
        return {"config": str(req.model_config)}
    assert req.params is not None
    if not math.isfinite(req.params) or req.params <= 0:
        raise InputError(f"--params must be a positive size such as 7B or 70B (got {req.params:g})")
    return {"params_b": req.params / 1e9}


def _answers(req: EstimateRequest, method: Method | None, weights: Precision | None, kv: Precision | None,
             replicas: int) -> Answers:
    """The answers an estimate stands for: what the flags say, nothing else (every other answer takes the default a
    consultation would take)."""
    data: dict[str, Any] = {"workload": req.workload, "model": _model_answer(req)}
    precision: dict[str, Any] = {}
    if weights is not None:
        precision["weights"] = weights.id
    if kv is not None:
        precision["kv_cache"] = kv.id
    if req.context is not None:
        precision["context_tokens"] = req.context
    if req.batch is not None:
        precision["batch_size"] = req.batch
    if precision:
        data["precision"] = precision
    if req.workload == "inference":
        inference: dict[str, Any] = {"concurrent_requests": (req.batch or 1) * replicas}
        for key, value in (("input_tokens", req.input_tokens), ("output_tokens", req.output_tokens),
                           ("requests_per_minute", req.requests_per_minute), ("engine", req.engine)):
            if value is not None:
                inference[key] = value
        data["inference"] = inference
    else:
        training: dict[str, Any] = {}
        for key, value in (("tokens_b", None if req.tokens is None else req.tokens / 1e9),
                           ("optimizer", req.optimizer), ("zero_stage", req.zero),
                           ("gradient_checkpointing", req.checkpointing), ("global_batch", req.global_batch),
                           ("global_batch_tokens", req.global_batch_tokens), ("context_parallel", req.cp),
                           ("recompute", req.recompute)):
            if value is not None:
                training[key] = value
        if training:
            data["training"] = training
        if req.workload == "finetune":
            data["finetune"] = {"method": method, **({"lora_rank": req.lora_rank} if req.lora_rank else {})}
    if req.utilization is not None:
        data["deployment"] = {"utilization": req.utilization}
    try:
        return parse_answers(data, "estimate")
    except InputError as exc:
        raise InputError(_flag_words(str(exc))) from None


def _flag_words(message: str) -> str:
    """'estimate: training.tokens_b: ...' → '--tokens: ...' (the answers an estimate builds come from its flags)."""
    head, _, rest = message.partition(": ")
    key, _, reason = rest.partition(": ")
    return f"{FLAGS[key]}: {reason}" if head == "estimate" and key in FLAGS else message


def _resolved(answers: Answers, catalog: Catalog, model_flag: str) -> Resolved:
    """`resolve`, its errors naming the flag: an answer's key becomes its flag, and a model file that cannot be
    read is reported against the model flag."""
    try:
        return resolve(answers, catalog)
    except InputError as exc:
        text = str(exc)
        key = text.split(":", 1)[0].split(" = ", 1)[0]
        if key in FLAGS:
            raise InputError(f"{FLAGS[key]}: {text.removeprefix(key).lstrip(':= ')}") from None
        raise InputError(f"{model_flag}: {text}") from None


# ----------------------------------------------------------------------------------------------------------------
# The estimate
# ----------------------------------------------------------------------------------------------------------------


def estimate(req: EstimateRequest, catalog: Catalog) -> EstimateResult:
    """Size one configuration; raises InputError (naming the flag) for bad or contradictory input. The changes that
    would make a configuration that does not fit its GPUs fit are rules/estimate/fit_hints.py's
    `estimate_with_fit_options` (each one estimate more: it calls this, so this module does not call it back)."""
    from gpuadvisor.knowledge.lookup import find_accelerator

    ctx = _Ctx()
    _check_numbers(req)
    _check_engine(req)
    method = _check_workload(req)
    training = req.workload != "inference"
    weights_given = _precision(catalog, "--precision", req.precision) if req.precision else None
    if weights_given is not None:
        _check_precision(weights_given, method, training)
    kv_given = _precision(catalog, "--kv-precision", req.kv_precision) if req.kv_precision else None
    if kv_given is not None and "kv_cache" not in kv_given.uses:
        raise InputError(f"--kv-precision {req.kv_precision}: {kv_given.name} is not a KV-cache format "
                         "(use fp16, bf16, fp8 or int8)")
    acc: Accelerator | None = None
    if req.gpu is not None:
        acc = _lookup("--gpu", find_accelerator, catalog, req.gpu)
    if req.power_limit_w is not None:
        if acc is None:
            raise InputError("--power-limit needs --gpu: a limit is published for one part")
        try:
            acc = acc.at_power_limit(req.power_limit_w)
        except ValueError as err:
            raise InputError(f"--power-limit {req.power_limit_w}: {err}") from None
        cap = acc.sustained_compute_ratio
        assert cap is not None
        ctx.warnings.append(f"GPUs capped at {req.power_limit_w} W: tensor math at {cap.value:.0%} of the datasheet "
                            f"rate, as published at that limit ({', '.join(cap.sources)})")

    # a first resolution for the model's shape, then the answers with the replica count the layout gives
    answers = _answers(req, method, weights_given, kv_given, 1)
    model_flag = "--model" if req.model is not None else "--params" if req.params is not None else "--model-config"
    resolved = _resolved(answers, catalog, model_flag)
    arch = resolved.model.architecture
    engine = resolve_engine(acc, req.engine) if acc is not None else canonical_engine(req.engine or "auto")
    par = _parallelism(req, arch, training, ctx, engine_splits(catalog, acc, req.engine) if acc is not None
                       else _named_splits(catalog, engine), engine)
    if par.dp > 1 and not training:
        answers = _answers(req, method, weights_given, kv_given, par.dp)
        resolved = _resolved(answers, catalog, model_flag)
    params = count_parameters(arch)
    weights_p, kv_p = resolved.weights, resolved.kv_cache
    if weights_given is None:
        _check_precision(weights_p, method, training)
    work = _profile(answers, resolved, catalog, params)
    factors = consultation_factors(catalog_factors(catalog), work)
    context = work.context
    batch = work.batch
    if arch.max_position_embeddings and context > arch.max_position_embeddings:
        ctx.warnings.append(f"--context {context:,} exceeds the model's maximum of {arch.max_position_embeddings:,} "
                            "tokens (max_position_embeddings)")
    if not training and work.input_tokens > context:
        raise InputError(f"--input-tokens {work.input_tokens} exceeds the context of {context} tokens (give "
                         "--context)")
    _defaults(ctx, answers, resolved, req, training, method, work.utilization)
    _model_notes(ctx, resolved, arch)
    unit = _unit(acc, par.gpus) if acc is not None else None
    if acc is not None and unit is not None:
        _check_joined(acc, unit, par, training)
    flash = acc is None or fused_attention(acc)

    result = EstimateResult(
        model=_model_out(resolved, arch),
        setup=SetupOut(workload=req.workload, method=method, context=context, batch=batch,
                       input_tokens=None if training else work.input_tokens,
                       output_tokens=None if training else work.output_tokens,
                       gpu=acc.id if acc else None, gpu_name=acc.name if acc else None, gpus=par.gpus,
                       tensor_parallel=par.tp, expert_parallel=par.ep, pipeline_parallel=par.pp,
                       data_parallel=par.dp, zero_stage=par.zero, power_limit_w=req.power_limit_w,
                       optimizer=work.optimizer if training else None,
                       gradient_checkpointing=work.gradient_checkpointing if training else None,
                       flash_attention=flash,
                       lora_rank=work.lora_rank if method in ("lora", "qlora") else None,
                       tokens=float(work.tokens_b or 0.0) * 1e9 if training and req.tokens is not None else None),
        precision=PrecisionOut(weights=weights_p.id, weights_bits=weights_p.bits_per_weight,
                               kv_cache=None if training else kv_p.id,
                               compute=resolved.formats.compute),
        parameters=ParametersOut(total=params.total, active=params.active, active_per_token=params.active_per_token,
                                 embedding=params.embedding + params.position_embedding + params.lm_head,
                                 trainable=_trainable(arch, params, method, work.lora_rank)),
        memory_gb=MemoryOut(weights=0, kv_cache=0, activations=0, gradients=0, optimizer_states=0,
                            runtime_overhead=0, total=0, headroom_fraction=0, required_capacity=0),
        assumptions=[],
    )
    if training:
        plan = _training(result, req, catalog, acc, unit, work, arch, params, par, factors, ctx)
    else:
        plan = _inference(result, req, catalog, acc, unit, work, arch, params, par, factors, ctx)
    if acc is not None and unit is not None:
        usage = usage_profile(work.workload, work.stage, work.hours_per_month_given, work.utilization_given,
                              usage_values(catalog))
        _costs(result, catalog, acc, par, factors, usage, ctx)
    if acc is not None and unit is not None and plan is not None:
        _judge(catalog, answers, resolved, acc, unit, plan, work, ctx)
    result.warnings = list(dict.fromkeys(ctx.warnings))
    result.defaults_applied = ctx.defaults
    result.assumptions = _assumptions(ctx.notes, catalog)
    return result


def _profile(answers: Answers, resolved: Resolved, catalog: Catalog, params: ParameterCount) -> Profile:
    """The consultation's Workload for these answers (rules/planning/profile.py)."""
    effective = answers.effective()
    given = answers.given_keys()
    return deadline_start(workload_profile(effective.__getitem__, effective.__getitem__, given.__contains__,
                                           model_name=resolved.model.name, params=params,
                                           moe=resolved.model.architecture.moe is not None, formats=resolved.formats,
                                           usage_values=usage_values(catalog),
                                           user_load_values=user_load_values(catalog)), catalog)


def _unit(acc: Accelerator, gpus: int) -> Unit:
    """What the GPUs of an estimate stand in: one machine of them when one machine holds them (as your own
    hardware is planned in a consultation), else machines of the part joined by a network."""
    return own_unit(acc, gpus) if gpus <= acc.max_per_node else bare_unit(acc)


def _defaults(ctx: _Ctx, answers: Answers, resolved: Resolved, req: EstimateRequest, training: bool,
              method: Method | None, utilization: float) -> None:
    """The defaults that shaped this estimate, as `key = value` lines."""
    eff = answers.effective()
    if req.precision is None:
        ctx.defaults.append(f"precision = {resolved.weights.id}")
    if not training and req.kv_precision is None:
        ctx.defaults.append(f"kv_precision = {resolved.kv_cache.id}")
    if req.context is None:
        ctx.defaults.append(f"context = {eff['precision.context_tokens']}")
    if req.batch is None:
        ctx.defaults.append(f"batch = {eff['precision.batch_size']}")
    if training:
        if req.optimizer is None:
            ctx.defaults.append(f"optimizer = {eff['training.optimizer']}")
        if req.checkpointing is None:
            ctx.defaults.append("gradient checkpointing = " + ("on" if eff["training.gradient_checkpointing"]
                                                                else "off"))
        if method in ("lora", "qlora") and req.lora_rank is None:
            ctx.defaults.append(f"lora_rank = {eff['finetune.lora_rank']}")
    else:
        implied = answers.implied()
        for flag, key in ((req.input_tokens, "inference.input_tokens"), (req.output_tokens, "inference.output_tokens")):
            if flag is None:
                why = f" ({IMPLIED_WHY[key]})" if key in implied else ""
                ctx.defaults.append(f"{key.removeprefix('inference.')} = {eff[key]}{why}")
    if req.utilization is None:  # the usage profile's figure, the one the owned-hardware cost was computed with
        ctx.defaults.append(f"utilization = {utilization:.2g} (owned hardware, the usage profile's busy share)")


def _batch_default(search: TrainingSearch) -> str:
    """The global batch a run takes when none is given, said as the assumption it is: a pretraining run of this
    size's practice (`sizing.training.global_batch_tokens`), or a fine-tune's."""
    t, batch = search.t, search.global_batch
    if not t.pretraining:
        return f"global batch = {batch:,} sequences (a fine-tune's, finetune_global_batch_sequences; --global-batch)"
    return (f"global batch = {batch:,} sequences of {t.seq:,} tokens = {batch * t.seq / 2**20:.1f}M tokens (assumed: "
            f"the practice default at {float(search.params.active) / 1e9:,.0f}B parameters, 4M tokens up to 30B "
            "(Llama 2 7B-70B) growing to 16M at 405B (Llama 3); --global-batch or --global-batch-tokens to set)")


def _model_out(resolved: Resolved, arch: Architecture) -> ModelOut:
    m = resolved.model
    source: Literal["knowledge-base", "config.json", "hugging-face", "synthesized"] = (
        "synthesized" if m.synthesized else "config.json" if m.id.startswith("config:")
        else "hugging-face" if m.id.startswith("hf:") else "knowledge-base")
    return ModelOut(name=m.name, id=m.id if source == "knowledge-base" else None, source=source,
                    description=describe(arch), attention=attention_kind(arch))


def _model_notes(ctx: _Ctx, resolved: Resolved, arch: Architecture) -> None:
    m = resolved.model
    for text in m.read_notes:
        ctx.notes.append(Note("method.config_json", text, source=m.source))
    if m.synthesized:
        from gpuadvisor.rules.sizing.shape import describe_synthesis

        total = count_parameters(arch).total
        ctx.notes.append(Note("method.synthesized_shape", describe_synthesis(float(total), arch),
                              source="gpuadvisor shape.py (Llama 3 family proportions)"))
        ctx.warnings.append("Model shape synthesized from --params: KV cache and activations are estimates for a "
                            "Llama-3-like model of that size")


def _parallelism(req: EstimateRequest, arch: Architecture, training: bool, ctx: _Ctx,
                 splits: tuple[ModelSplit, ...] = ("tensor", "pipeline"), engine: str = "") -> Parallelism:
    """The layout: what was typed, else the model split over --gpus the way the serving engine splits it (tensor
    parallel, or by layers for llama.cpp)."""
    layers_only = not training and "tensor" not in splits
    if layers_only and (req.tp or 1) > 1:
        raise InputError(f"--tp {req.tp}: {engine} splits a model over GPUs by layers (its default layer split; "
                         f"give --pp {req.tp}); its row split is not modelled")
    if layers_only and req.pp is None and req.tp is None and req.ep is None and (req.gpus or 1) > 1:
        pp = req.gpus or 1
        ctx.defaults.append(f"pp = {pp} ({engine} splits the model over --gpus by layers)")
    else:
        pp = req.pp or 1
    if pp > arch.num_hidden_layers:
        raise InputError(f"--pp {pp} exceeds the model's {arch.num_hidden_layers} layers")
    if req.tp is not None:
        tp = req.tp
    elif not training and req.gpus is not None:
        tp = max(1, req.gpus // pp)
        if tp > 1 or not layers_only:
            ctx.defaults.append(f"tp = {tp} (inference splits the model over --gpus)")
    else:
        tp = 1
    if arch.num_attention_heads % tp:
        raise InputError(f"--tp {tp} must divide the model's {arch.num_attention_heads} attention heads")
    ep = req.ep or 1
    if ep > 1:
        if training:
            raise InputError("--ep is for MoE inference (expert-parallel serving); training splits with --tp/--pp")
        try:
            check_expert_parallel(arch, tp, ep)
        except ValueError as exc:
            raise InputError(f"--ep: {exc}") from None
    cp = req.cp or 1
    if cp > 1 and not training:
        raise InputError("--cp is for training (context parallelism splits a training sequence); serving splits "
                         "with --tp/--pp/--ep")
    shards = max(tp, ep) * pp * cp
    gpus = req.gpus or shards
    if gpus % shards:
        raise InputError((f"--gpus {gpus} is not a multiple of --tp {tp} × --pp {pp}" + (f" × --cp {cp}" if cp > 1
                                                                                          else "")) if ep == 1 else
                         f"--gpus {gpus} is not a multiple of --ep {ep} × --pp {pp}")
    dp = gpus // shards
    zero = req.zero
    if zero is None:
        full = req.workload == "training" or req.method == "full"
        zero = 1 if training and full and dp * cp > 1 else 0
        if zero:
            ctx.defaults.append("zero = 1 (the distributed optimizer, the training recipes' default)")
    if zero and dp * cp == 1:
        ctx.warnings.append(f"--zero {zero} has no effect with one data-parallel rank (give --gpus > tp × pp)")
        zero = 0
    vp = default_virtual_stages(arch.num_hidden_layers, pp) if training else 1
    return Parallelism(tp=tp, pp=pp, dp=dp, zero=zero, ep=ep, cp=cp, vp=vp)


def _check_joined(acc: Accelerator, unit: Unit, par: Parallelism, training: bool) -> None:
    """Refuse, in one line naming the missing fact, a layout whose GPUs no link in the knowledge base joins (more
    desk-side machines than their cable pairs, a model split over machines with no network)."""
    group = par.gpus if training else par.model_shards
    try:
        unit.topology.link(group)
    except ValueError:
        topo = unit.topology
        most = max(topo.node, topo.scale_up.domain)
        raise InputError(
            f"--gpus {par.gpus}: {acc.name} machines hold {topo.node} GPU(s) each and the knowledge base has no "
            f"network joining {-(-group // topo.node)} of them (a desk-side part"
            + (f"; {most} pair over their own link" if topo.scale_up.domain > topo.node else "")
            + f"): at most {most} GPU(s)" + ("" if training else " per replica")) from None


def _named_splits(catalog: Catalog, engine: str) -> tuple[ModelSplit, ...]:
    """The model split of an engine named without a GPU (`--engine llama.cpp` sizing memory alone)."""
    found = catalog.engines.get(engine)
    return ("tensor", "pipeline") if found is None else tuple(found.model_split)


def _trainable(arch: Architecture, params: ParameterCount, method: Method | None, rank: int) -> int | None:
    if method is None:
        return None
    return params.total if method == "full" else lora_parameters(arch, rank)


def _band(value: float, low: float, high: float, names: Iterable[str]) -> ErrorBand:
    return ErrorBand(low=min(low, high) / value, high=max(low, high) / value, assumptions=list(names))


def _fit_warning(ctx: _Ctx, result: EstimateResult, acc: Accelerator, plan: Plan, what: str) -> None:
    """H1, the planner's verdict: the layout as given does not fit the part."""
    m = plan.memory
    ctx.warnings.append(f"H1: does not fit: needs {m.total / GB:.1f} GB per GPU{what}, {acc.name} has "
                        f"{acc.memory_bytes() / GB:.1f} GB of which {m.usable(acc.memory_bytes()) / GB:.1f} GB "
                        f"usable with {m.headroom_fraction:.0%} kept free (W6)")


# --- inference ---------------------------------------------------------------------------------------------------


def _inference(result: EstimateResult, req: EstimateRequest, catalog: Catalog, acc: Accelerator | None,
               unit: Unit | None, work: Profile, arch: Architecture, params: ParameterCount,
               par: Parallelism, factors: Factors, ctx: _Ctx) -> Plan | None:
    from gpuadvisor.rules.planning.serving import efficiency_bounds

    # the load an estimate is judged under is the closed loop of its batch × replicas clients; a request rate
    # only sizes the replicas it would need (`serving` below), never the latency of the layout given
    targets = replace(serving_targets(work, demand_fact(work, factors.burst_headroom)), requests_per_s=None)
    search = inference_search(catalog, work, arch, params, targets, factors)
    kv_p = work.formats.kv_cache
    batch, prompt, out_tokens = work.batch, work.input_tokens, work.output_tokens
    tokens = targets.kv_tokens
    result.kv_cache_bytes_per_token = kv_bytes_per_token(arch, kv_p.bytes_per_weight)
    result.kv_cache_tokens_per_sequence = tokens
    result.kv_cache_gb = kv_bytes_per_sequence(arch, kv_p.bytes_per_weight, tokens) * batch * par.dp / GB
    if acc is None or unit is None:  # memory only: the split's memory curve, as the search builds it
        mem = search.memory(par.tp, par.pp, True, (), par.ep).breakdown(batch)
        ctx.notes.extend(mem.notes)
        result.memory_gb = MemoryOut.of(mem, None)
        if arch.moe is not None:
            ctx.warnings.append(f"W13: mixture of experts: all {params.total / 1e9:.1f}B parameters must be resident; "
                                f"only {params.active / 1e9:.1f}B are active per token")
        return None
    engine = resolve_engine(acc, req.engine)
    eff, eff_slow, eff_fast = efficiency_bounds(catalog, acc, engine)
    result.setup.engine = engine
    result.setup.engine_profile = eff.profile if eff else None
    profile = catalog.engine_profiles.get(eff.profile) if eff and eff.profile else None
    result.setup.engine_release = profile.release if profile else None
    result.setup.engine_released = profile.released if profile else None
    if req.engine is None or req.engine == "auto":
        ctx.defaults.append(f"engine = {engine} (by deployment: {acc.name})")
    plan = search.evaluate(acc, unit, par.tp, par.pp, par.ep, batch=batch, replicas=par.dp)
    ctx.notes.extend(plan.notes)
    result.memory_gb = MemoryOut.of(plan.memory, acc)
    result.fits = plan.fits
    if not plan.fits:
        full = search.memory(par.tp, par.pp, result.setup.flash_attention, search.memory_factors(acc), par.ep,
                             kv_tokens=targets.context)
        alone = full.total(1)
        if not full.fits(1, acc.memory_bytes()):  # the line of the memory table that decides the fit
            result.memory_gb.full_context = alone / GB
            result.memory_gb.full_context_tokens = targets.context
        _fit_warning(ctx, result, acc, plan, f" at batch {batch}" + (
            f" (one request at the full {targets.context:,}-token context alone needs {alone / GB:.1f} GB)"
            if not full.fits(1, acc.memory_bytes()) else ""))
    link = replica_link(unit.topology, max(par.tp, par.ep), par.pp)
    device = device_for(acc, search.weights.compute, link, eff)
    speed, seconds = search.curve(device, par.tp, par.pp, par.ep)
    step = speed.step(batch)
    throttle = 1.0 - factors.consumer_dense_throttle if plan.throttled else 1.0  # W4, as the plan applies it
    ctx.notes.extend(step.notes)
    result.bound = step.bound
    result.arithmetic_intensity = step.arithmetic_intensity
    if device.peak_tflops:
        result.ridge_point = ridge_point(device.peak_tflops, device.bandwidth_gbs)
    result.decode_tokens_per_s = step.tokens_per_s * par.dp * throttle
    result.decode_tokens_per_s_per_sequence = step.tokens_per_s_per_sequence * throttle
    result.bandwidth_bound_tokens_per_s = step.bandwidth_bound_tokens_per_s * par.dp
    result.tpot_idle_s = speed.step(1).step_seconds / throttle  # one stream alone, as ttft_idle_s is one prompt
    result.tokens_per_s_per_user = plan.tokens_per_s_per_user
    result.tpot_s = 1.0 / plan.tokens_per_s_per_user if plan.tokens_per_s_per_user else None
    if device.peak_tflops is None:
        # no figure from a missing rate: without a compute rate the prompts' time is unknown, not zero, so the
        # throughput with prompts, the capacity and the price per token are not given (decode alone is)
        ctx.warnings.append(f"{acc.name} publishes no dense {search.weights.compute} throughput: compute-bound "
                            "figures (prefill, time to first token, throughput with prompts, capacity and price per "
                            "token) cannot be estimated; decode uses bandwidth only")
    else:
        result.throughput_tokens_per_s = plan.tokens_per_s
    result.capacity_tokens_per_s = plan.capacity_tokens_per_s
    result.throughput_output_tokens = out_tokens
    if device.peak_tflops is not None:  # without a published peak the prompts' compute is unknown, not zero
        result.ttft_s = plan.ttft_s
        attn, experts = (1, par.ep) if par.ep > 1 else (par.tp, 1)
        fmt = search.weight_format
        single = PrefillModel(arch, params, bytes_per_weight=fmt.bytes_per_weight, prompt_tokens=prompt,
                              embedding_bytes=fmt.embedding_bytes, factors=factors, experts=fmt.experts)
        whole = PrefillModel(arch, params, bytes_per_weight=fmt.bytes_per_weight, prompt_tokens=prompt, batch=batch,
                             embedding_bytes=fmt.embedding_bytes, factors=factors, experts=fmt.experts)
        idle = single.prefill(device, attn, ep=experts)
        ctx.notes.extend(idle.notes)
        result.ttft_idle_s = idle.seconds
        result.latency = _benchmark_latency(speed, single.flops, batch, min(prompt, targets.context), out_tokens,
                                            factors, throttle, eff.release if eff else None)
        result.prefill_tokens_per_s = whole.prefill(device, attn, with_notes=False, ep=experts).tokens_per_s
        ctx.notes.append(Note("method.serving_throughput", "Throughput with prompts: continuous batching with "
                              "chunked prefill; each iteration advances every sequence one token, and prompts arrive "
                              "whole (batch × input ÷ output prompt tokens an iteration on average, in chunks of at "
                              "most the engine's prefill budget), so an iteration carrying a chunk is compute-bound "
                              "and the rest decode alone; first token and time per token under the load of batch × "
                              "replicas clients in a closed loop",
                              source="rules/sizing/serving_load.py"))
    # the band: the same layout evaluated at the pessimistic and optimistic ends of the calibrated assumptions and
    # of the engine's profile
    slow_f, fast_f = factor_bounds(catalog, factors)
    low = _evaluate_at(catalog, work, arch, params, targets, slow_f, eff_slow, acc, unit, par, batch)
    high = _evaluate_at(catalog, work, arch, params, targets, fast_f, eff_fast, acc, unit, par, batch)
    names = [f"engines.toml {eff.profile}"] if eff else ["decode_bandwidth_efficiency", "compute_efficiency",
                                                        "step_overhead_per_layer_us"]
    if result.decode_tokens_per_s and low.tokens_per_s and high.tokens_per_s and plan.tokens_per_s:
        lo_d = result.decode_tokens_per_s * low.tokens_per_s / plan.tokens_per_s
        hi_d = result.decode_tokens_per_s * high.tokens_per_s / plan.tokens_per_s
        result.decode_tokens_per_s_range = Range(low=min(lo_d, hi_d), high=max(lo_d, hi_d))
        result.error_band["decode"] = _band(plan.tokens_per_s, low.tokens_per_s, high.tokens_per_s, names)
    if result.ttft_idle_s is not None and all(x and math.isfinite(x) for x in (plan.ttft_s, low.ttft_s,
                                                                              high.ttft_s)):
        assert plan.ttft_s is not None and low.ttft_s is not None and high.ttft_s is not None
        result.ttft_s_range = Range(low=min(low.ttft_s, high.ttft_s), high=max(low.ttft_s, high.ttft_s))
        result.error_band["prefill"] = _band(plan.ttft_s, low.ttft_s, high.ttft_s, ["compute_efficiency"])
    if req.requests_per_minute is not None and plan.tokens_per_s:
        sized = serving_capacity(req.requests_per_minute, out_tokens, plan.tokens_per_s / par.dp, factors=factors)
        ctx.notes.extend(sized.notes)
        result.serving = ServingOut(requests_per_minute=req.requests_per_minute, output_tokens=out_tokens,
                                    tokens_per_s_needed=sized.tokens_per_s_needed,
                                    tokens_per_s_planned=sized.tokens_per_s_planned,
                                    tokens_per_s_per_replica=plan.tokens_per_s / par.dp, replicas=sized.replicas,
                                    gpus=sized.replicas * par.model_shards)
    return plan


def _benchmark_latency(speed: Any, prompt_flops: float, batch: int, prompt: int, out_tokens: int, factors: Factors,
                       throttle: float, release: str | None) -> LatencyOut:
    """The layout's median and p99 latencies at its batch as a serving benchmark measures them: `batch` clients in a
    closed loop started as one burst (serving_load.ARRIVAL_BURST), each replica as many."""
    load = latency_at_concurrency(speed, prompt_flops, concurrency=batch, slots=batch, input_tokens=max(1, prompt),
                                  output_tokens=out_tokens, chunk_tokens=factors.prefill_chunk_tokens,
                                  clients_in_step=True)
    return LatencyOut(arrival=load.arrival, clients=batch, ttft_p50_s=load.ttft_p50_s / throttle,
                      ttft_p99_s=load.ttft_p99_s / throttle, tpot_p50_s=load.tpot_p50_s / throttle,
                      tpot_p99_s=load.tpot_p99_s / throttle, engine_release=release)


def _evaluate_at(catalog: Catalog, work: Profile, arch: Architecture, params: ParameterCount,
                 targets: Any, factors: Factors, efficiency: Any, acc: Accelerator, unit: Unit, par: Parallelism,
                 batch: int) -> Plan:
    """The same layout planned with other factors and engine efficiency (an end of the error band)."""
    search = inference_search(catalog, work, arch, params, targets, factors, efficiency=lambda _acc: efficiency)
    return search.evaluate(acc, unit, par.tp, par.pp, par.ep, batch=batch, replicas=par.dp)


# --- training ----------------------------------------------------------------------------------------------------


def _training(result: EstimateResult, req: EstimateRequest, catalog: Catalog, acc: Accelerator | None,
              unit: Unit | None, work: Profile, arch: Architecture, params: ParameterCount,
              par: Parallelism, factors: Factors, ctx: _Ctx) -> Plan | None:
    compute = compute_need_fact(float(params.active), work)
    targets = replace(training_targets(work, compute), grad_precision=req.grad_precision or "bf16")
    search = training_search(catalog, work, arch, params, targets, factors)
    if req.tokens is not None:
        result.training_flops = float(compute["flops"])
    if acc is None or unit is None:
        mem = search.memory(par, True, with_notes=True)
        ctx.notes.extend(mem.notes)
        result.memory_gb = MemoryOut.of(mem, None)
        return None
    plan, tt = search.evaluate(acc, unit, par, mfu=req.mfu)
    ctx.notes.extend(plan.notes)
    result.memory_gb = MemoryOut.of(plan.memory, acc)
    result.fits = plan.fits
    if not plan.fits:
        _fit_warning(ctx, result, acc, plan, "")
    if tt is None:
        ctx.warnings.append(f"{acc.name} publishes no dense training throughput: training time cannot be estimated")
        return plan
    if req.tokens is None:
        ctx.warnings.append("Give --tokens (e.g. 2T, 500M) for training time and cost")
        return plan
    slow_f, fast_f = factor_bounds(catalog, factors)
    lo = hi = plan
    if req.mfu is None:
        lo = training_search(catalog, work, arch, params, targets, slow_f).evaluate(acc, unit, par)[0]
        hi = training_search(catalog, work, arch, params, targets, fast_f).evaluate(acc, unit, par)[0]
    if par.dp * work.batch > search.global_batch:
        ctx.warnings.append(f"The global batch of {search.global_batch:,} sequences gives the {par.dp:,} data-parallel "
                            f"ranks less than a micro-batch of {work.batch} each: every step trains on "
                            f"{par.dp * work.batch:,} sequences. To keep the batch, split the model further "
                            "(--tp, --cp, --pp) or give a larger --global-batch.")
    result.setup.training_mfu = tt.mfu
    result.setup.recompute = plan.recompute
    result.setup.context_parallel = par.cp
    result.setup.virtual_stages = par.vp
    result.setup.global_batch = search.global_batch
    if req.global_batch is None and req.global_batch_tokens is None:
        ctx.defaults.append(_batch_default(search))
    if tt.step is not None:
        result.setup.gradient_accumulation = tt.step.micro_batches
        result.training_step = _step_out(tt.step, _what_if(search, acc, unit, par, tt.step))
    result.training_flops = tt.flops
    result.training_gpu_hours = plan.training_gpu_hours
    gpu_hours = plan.training_gpu_hours or 0.0
    lo_h, hi_h = lo.training_gpu_hours or gpu_hours, hi.training_gpu_hours or gpu_hours
    result.training_gpu_hours_range = Range(low=min(lo_h, hi_h), high=max(lo_h, hi_h))
    result.training_days = plan.training_days
    result.training_tokens_per_s = plan.tokens_per_s
    if gpu_hours:
        result.error_band["training"] = _band(gpu_hours, lo_h, hi_h,
                                              ["training_stack_efficiency", "training_attention_cost",
                                               "training_comm_overlap"] if req.mfu is None else ["--mfu"])
    ctx.notes.extend(tt.notes)
    return plan


def _step_out(step: TrainingStep, what_if: dict[str, float]) -> TrainingStepOut:
    return TrainingStepOut(seconds=step.seconds, compute=step.compute, exposed_communication=step.exposed,
                           exposed_tensor_parallel=step.exposed_tp, exposed_context_parallel=step.exposed_cp,
                           exposed_pipeline=step.exposed_pp, exposed_data_parallel=step.exposed_dp,
                           bubble=step.bubble, optimizer=step.optimizer, tokens=step.tokens,
                           scaling_efficiency=step.scaling_efficiency, what_if=what_if)


def _what_if(search: TrainingSearch, acc: Accelerator, unit: Unit, par: Parallelism, step: TrainingStep
             ) -> dict[str, float]:
    """The same layout's tokens/s with twice the global batch and with twice the network, relative to this step:
    what a larger batch (more micro-batches to hide the exchange and amortise the bubble) or a faster fabric buys."""
    out: dict[str, float] = {}
    bigger = TrainingSearch(search.arch, search.params, search.weights,
                            replace(search.t, global_batch=2 * search.global_batch), search.factors)
    tt = bigger.evaluate(acc, unit, par)[1]
    if tt is not None and tt.step is not None:
        out["global batch ×2"] = tt.step.tokens_per_s / step.tokens_per_s
    topo = unit.topology
    if topo.scale_out is not None and par.gpus > topo.node:
        net = topo.network_gbs() or search.factors.training_network_gbs
        faster = replace(unit, topology=replace(topo, scale_out=replace(topo.scale_out, gbs_per_node=2 * net)))
        tt = search.evaluate(acc, faster, par)[1]
        if tt is not None and tt.step is not None:
            out["network ×2"] = tt.step.tokens_per_s / step.tokens_per_s
    return out


# --- the rule packs' verdicts ------------------------------------------------------------------------------------


def _judge(catalog: Catalog, answers: Answers, resolved: Resolved, acc: Accelerator, unit: Unit, plan: Plan,
           work: Profile, ctx: _Ctx) -> None:
    """The packs' findings on the configuration: those about it or its accelerator, and the plan-wide warnings."""
    from gpuadvisor.rules.consult import get_advisor
    from gpuadvisor.rules.consultation.derivations import config_fact

    need = float(demand_fact(work, catalog_factors(catalog).burst_headroom)["tokens_per_s"]) \
        if work.inference else 0.0
    shape = f"estimate:{acc.id}:{plan.count}"
    config = config_fact(catalog, acc, unit, shape, plan, work, models=work.models_per_gpu or 1,
                         need_tps=need)
    if work.training and "training.deadline_days" not in answers.given_keys():
        config["meets_deadline"] = True  # an estimate states no deadline: it reports the days the run takes
    cons = get_advisor(catalog).judge(answers, resolved, acc, config, "estimate: the layout given")
    ours = {str(config["ref"]), f"acc:{acc.id}"}
    for _, v in cons.of_kind("veto"):
        if str(v["target"]) in ours:
            ctx.warnings.append(f"{v.get('heuristic') or v['rule']}: {v['reason']} (a consultation rules this "
                                "configuration out)")
    for _, part in cons.of_kind("cost_part"):
        if str(part["target"]) in ours:
            ctx.warnings.append(f"{part.get('heuristic') or part['rule']}: {part['reason']} (a cost of "
                                f"${float(part['usd']):,.0f} a consultation adds to this option)")
    for _, w in cons.of_kind("warning"):
        about_us = str(w.get("target") or "") in ours
        plan_wide = not w.get("target") and w.get("category") == "warning" and w.get("severity") != "info"
        if about_us or plan_wide:
            ctx.warnings.append(f"{w.get('heuristic') or w['rule']}: {w['message']}")


# --- cost --------------------------------------------------------------------------------------------------------


def _costs(result: EstimateResult, catalog: Catalog, acc: Accelerator, par: Parallelism, factors: Factors,
           usage: Usage, ctx: _Ctx) -> None:
    """Rentals and the cheapest purchase of the layout, priced as a consultation prices them: a run is billed its
    wall time plus one session's set-up (usage.rented_hours_per_run, pricing.price), owned hardware at the
    usage profile's busy share."""
    utilization = usage.utilization
    gpu_hours = result.training_gpu_hours
    tokens_per_s = result.throughput_tokens_per_s
    cheapest_rent: float | None = None
    reclaim_hours = spot_hours(catalog)
    for inst in sorted(catalog.instances.values(), key=lambda i: i.id):
        if inst.accelerator != acc.id:
            continue
        for kind in ("on-demand", "spot"):
            offer = inst.current_price(kind)
            if offer is None:
                continue
            instances = whole_instances(par.gpus, inst.accelerator_count)
            hourly, per_gpu = instances * offer.usd_per_hour, offer.usd_per_hour / inst.accelerator_count
            run = None
            if gpu_hours is not None:
                wall = gpu_hours / par.gpus
                if kind == "spot":  # the reclaims stretch the run, as a consultation's spot rental (derivations)
                    wall = spot_wall_hours(wall, instances, reclaim_hours, factors)
                if math.isfinite(wall):
                    rented = price(Rent(hourly, kind, inst.id), Run(wall, usage.rented_hours_per_run(wall)), factors)
                    run = rented.cost.total if rented is not None else None
            per_m = None
            if tokens_per_s:
                per_m = usd_per_million_tokens(per_gpu * par.gpus, tokens_per_s)
            result.costs.append(CostOut(
                instance=inst.id, provider=inst.provider_name, name=inst.instance, pricing=kind,  # type: ignore[arg-type]
                gpus_per_instance=inst.accelerator_count, instances=instances, usd_per_hour=hourly,
                usd_per_gpu_hour=per_gpu, usd_per_run=run, usd_per_million_tokens=per_m,
                as_of=offer.as_of_text, price_sources=list(offer.sources)))
            if kind == "on-demand":
                cheapest_rent = per_gpu if cheapest_rent is None else min(cheapest_rent, per_gpu)
    # cheapest first: the offer a reader is looking for heads the table (then provider, and sizes read as numbers)
    result.costs.sort(key=lambda c: (round(c.usd_per_gpu_hour, 3), c.provider, natural_key(c.name), c.pricing))
    if result.costs:
        ctx.notes.append(Note("method.cloud_cost", "Cloud cost: whole instances billed for a run ((wall time + "
                              f"{usage.session_overhead_hours:g} h of set-up) × instances × hourly price, as a "
                              "consultation bills it); $ per 1M tokens = GPU-hour price × GPUs ÷ tokens per hour "
                              "× 10^6 (the instance's other GPUs assumed to serve replicas)", source="S9 (002)"))
    group = par.gpus if result.setup.workload != "inference" else par.model_shards
    bought = _cheapest_purchase(catalog, acc, par.gpus, group=group,
                                joined=par.gpus > 1 and (par.dp > 1 or par.pp > 1))
    if bought is None:
        return
    unit, machines, paid, bill = bought
    # held for the hardware's life as a consultation holds a purchase (derivations.price_purchase): site rent for a
    # server, the resale at the part's age after deployment.lifetime_years
    desk_side = catalog.systems[unit.id.split(":")[1]].desk_side
    cards, rest = economics(catalog).resale_shares(accelerator_age(acc, today(), bill.kind),
                                                   factors.hardware_lifetime_years)
    ownership = owning(bill, site_kw=0.0 if desk_side else bill.power_w / 1000.0, resale_share=cards,
                       host_resale_share=rest)
    held = price(Buy(ownership), for_life(factors, utilization), factors)
    assert held is not None  # a purchase is always priced
    owned = held.option
    ctx.notes.extend(ownership_notes(factors))
    if paid > par.gpus:
        ctx.warnings.append(f"{unit.name} holds {paid} GPUs: the purchase prices all {paid}; plan the work on all of "
                            "them (gpuadvisor recommend does)")
    run = None
    if gpu_hours is not None:
        run = owned.usd_per_hour * gpu_hours / par.gpus
    card = acc.purchase_price_usd
    result.owned = OwnedOut(
        price_usd_each=card.value if card is not None else None, price_as_of=as_of_label(bill.as_of),
        system=unit.name, machines=machines, accelerators_paid=paid, capex_usd=bill.capex_usd,
        capex_beyond_accelerators_usd=bill.beyond_usd,
        power_kw=bill.power_w / 1000.0, utilization=utilization,
        usd_per_busy_hour=owned.usd_per_hour, usd_per_million_tokens=owned.usd_per_million_tokens(tokens_per_s),
        usd_per_run=run,
        break_even_utilization=None if cheapest_rent is None else break_even_utilization(
            Buy(ownership), cheapest_rent * paid, factors))


def _cheapest_purchase(catalog: Catalog, acc: Accelerator, gpus: int, *, group: int, joined: bool
                       ) -> tuple[Unit, int, int, PurchaseBill] | None:
    """The cheapest machine(s) of systems.toml holding at least `gpus` of the part with each `group` of them (one
    model's shards, or a training job) on a link that joins them: (unit, machines, accelerators bought, bill); None
    when the part cannot be bought with a price. Two cards one model is split over sit in one machine that takes
    two (a workstation), not in two desktop PCs no network joins, as a consultation plans them (Unit.counts)."""
    best: tuple[Unit, int, int, PurchaseBill] | None = None
    for unit in purchase_units(catalog, acc):
        system = catalog.systems[unit.id.split(":")[1]]
        if system.existing:
            continue
        fill = next((f for f in unit.fills if f >= gpus), None)
        machines, paid = (1, fill) if fill is not None else (math.ceil(gpus / unit.node),
                                                             math.ceil(gpus / unit.node) * unit.node)
        if machines > 1 and (unit.single or not _links(unit, group)):
            continue
        try:
            bill = purchase_bill(catalog, system, acc, machines, paid, joined=joined and machines > 1)
        except LookupError:
            continue
        if best is None or bill.capex_usd < best[3].capex_usd:
            best = (unit, machines, paid, bill)
    return best


def _links(unit: Unit, group: int) -> bool:
    """Whether a link of the unit's topology joins `group` of its accelerators (no cluster network between
    desk-side machines: a group wider than one of them is not joined)."""
    try:
        unit.topology.link(group)
    except ValueError:
        return False
    return True


def _assumptions(notes: Iterable[Note], catalog: Catalog) -> list[AssumptionUsed]:
    """Unique notes, with the catalog's title, unit, band and source titles for assumptions.toml ids."""
    out: dict[str, AssumptionUsed] = {}
    for note in notes:
        a = catalog.assumptions.get(note.id)
        if a is not None:
            sources = "; ".join(catalog.sources[s].title if s in catalog.sources else s for s in a.sources)
            item = AssumptionUsed(id=a.id, text=a.title, value=a.value, unit=a.unit, low=a.low, high=a.high,
                                  source=sources)
        else:
            item = AssumptionUsed(id=note.id, text=note.text, value=note.value, source=note.source or "gpuadvisor")
        key = note.id if a is not None else f"{note.id}:{note.text}"
        out.setdefault(key, item)
    return list(out.values())
