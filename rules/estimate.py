"""`gpuadvisor estimate`: size one configuration (model × precision × GPU × parallelism) from the knowledge base.

This is the glue between the catalog and the pure sizing functions in `rules/sizing`: it resolves loose names,
applies defaults (and says so), refuses contradictions with an error naming the flag, and returns an
`EstimateResult` whose every figure is traceable to the assumptions listed with it. GB means 10^9 bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AdvisorError, InputError
from gpuadvisor.knowledge.schema import Accelerator, Architecture, Precision, served_format
from gpuadvisor.rules.answers import PrecisionAnswer, contextual_defaults
from gpuadvisor.rules.planning import training_shape
from gpuadvisor.rules.price_age import as_of_label
from gpuadvisor.rules.purchases import PurchaseBill, purchase_bill
from gpuadvisor.rules.sizing.cost import break_even_utilization, cloud_cost, serving_capacity, system_cost
from gpuadvisor.rules.sizing.factors import Factors, Note
from gpuadvisor.rules.sizing.kvcache import attention_kind, kv_bytes_per_sequence, kv_bytes_per_token
from gpuadvisor.rules.sizing.memory import (
    MemoryBreakdown,
    Parallelism,
    inference_memory,
    lora_parameters,
    split_weight_format,
    training_memory,
)
from gpuadvisor.rules.sizing.params import ParameterCount, count_parameters
from gpuadvisor.rules.sizing.serving_load import serving_rate
from gpuadvisor.rules.sizing.speed import (
    DecodeCurve,
    Device,
    EngineEfficiency,
    PrefillModel,
    TrainingTime,
    check_expert_parallel,
    decode_step,
    prefill,
    ridge_point,
    training_time,
)
from gpuadvisor.rules.sizing.units import GB
from gpuadvisor.rules.topology import Link, accelerator_topology, device_for, peak_tflops, training_compute
from gpuadvisor.rules.units import Unit, purchase_units

SCHEMA_VERSION = 1
DEFAULT_OUTPUT_TOKENS = 200
"""Generated tokens per request when --output-tokens is not given."""
T = TypeVar("T")
Workload = Literal["inference", "training", "finetune"]
Method = Literal["full", "lora", "qlora"]
OptimizerName = Literal["adamw", "sgd", "adam8bit"]

FASTER_WHEN_HIGHER = ("decode_bandwidth_efficiency", "compute_efficiency", "training_mfu", "training_comm_overlap",
                      "training_network_gbs")
SLOWER_WHEN_HIGHER = ("step_overhead_per_layer_us", "allreduce_latency_nvlink_us", "allreduce_latency_pcie_us",
                      "training_grad_bytes_per_param", "moe_gemm_half_ridge")


# ----------------------------------------------------------------------------------------------------------------
# Request
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EstimateRequest:
    """What to size. None means "use the default", and every default used is listed in the result."""

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
    zero: int | None = None
    tokens: float | None = None
    optimizer: OptimizerName | None = None
    checkpointing: bool | None = None
    lora_rank: int | None = None
    grad_precision: Literal["bf16", "fp32"] | None = None
    requests_per_minute: float | None = None
    output_tokens: int | None = None
    utilization: float | None = None
    engine: str | None = None
    """Serving engine (rules.serving.ENGINE_CHOICES: llama.cpp, ollama, vllm, sglang, tensorrt-llm, tensorrt-llm-engine,
    mlx); None or 'auto' = by deployment."""
    mfu: float | None = None
    """Training MFU override (0-1]; None = the scale-aware model (speed.scaled_mfu)."""


# ----------------------------------------------------------------------------------------------------------------
# Result (the JSON schema of `gpuadvisor estimate --json`)
# ----------------------------------------------------------------------------------------------------------------


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelOut(Out):
    name: str
    id: str | None = Field(default=None, description="knowledge-base model id, when the model came from there")
    source: Literal["knowledge-base", "config.json", "hugging-face", "synthesized"] = Field(
        description="where the architecture came from; 'hugging-face' = the config.json of a Hub model id (from the "
                    "Hub or its local cache); 'synthesized' = a Llama-3-like shape built for --params")
    description: str = Field(description="layers, hidden size, attention and MoE shape")
    attention: str = Field(description="MHA, GQA, MQA or MLA")


class ParametersOut(Out):
    total: int = Field(description="all parameters (every MoE expert): what must be resident in memory")
    active: int = Field(description="parameters one token multiplies through (MoE: routed + shared experts), as a "
                                    "model card counts them: the input-embedding lookup left out (a row read, not a "
                                    "matmul), the LM head included; what decode bytes and 6·N·D training FLOPs are "
                                    "computed from (gpt-oss-120b 5.13B)")
    active_per_token: int | None = Field(default=None, description="the same figure as `active` (kept for readers "
                                                                   "of earlier reports)")
    embedding: int = Field(description="token (and position) embedding and untied LM head")
    trainable: int | None = Field(default=None, description="trained parameters (LoRA/QLoRA: the adapters)")


class PrecisionOut(Out):
    weights: str = Field(description="precision id of the weights")
    weights_bits: float = Field(description="effective bits per weight including quantization scales")
    kv_cache: str | None = Field(default=None, description="precision id of the KV cache (inference)")
    compute: str = Field(description="tensor-core rate the matrix multiplies run at")


class SetupOut(Out):
    workload: Workload
    method: Method | None = Field(description="full, lora or qlora for training/fine-tuning; null for inference")
    context: int = Field(description="tokens per sequence: KV length at the last decode step / training sequence")
    batch: int = Field(description="concurrent sequences per replica (inference) / micro-batch per GPU (training)")
    input_tokens: int | None = Field(default=None, description="prompt tokens for time to first token")
    gpu: str | None = Field(default=None, description="accelerator id")
    gpu_name: str | None = None
    gpus: int
    tensor_parallel: int
    expert_parallel: int = Field(default=1, description="MoE inference: GPUs the routed experts are split over "
                                 "(each holds 1/expert_parallel of them; attention data-parallel in "
                                 "expert_parallel ÷ tensor_parallel groups); 1 = experts tensor-parallel")
    pipeline_parallel: int
    data_parallel: int = Field(description="model replicas (inference) / data-parallel ranks (training)")
    power_limit_w: int | None = Field(default=None, description="board power the GPUs are capped at (--power-limit, "
                                      "MLPerf MaxQ); null = their rated power")
    zero_stage: int
    optimizer: str | None = None
    gradient_checkpointing: bool | None = None
    flash_attention: bool
    lora_rank: int | None = None
    tokens: float | None = Field(default=None, description="training tokens")
    engine: str | None = Field(default=None, description="serving engine the inference speed is computed for "
                               "(engines.toml profile id in engine_profile)")
    engine_profile: str | None = Field(default=None, description="engines.toml profile used (engine@family); "
                                       "null = engine-blind assumptions")
    training_mfu: float | None = Field(default=None, description="model FLOPs utilisation used for training time")


class MemoryOut(Out):
    """Per-GPU memory in GB (10^9 bytes)."""

    weights: float
    kv_cache: float
    activations: float
    gradients: float
    optimizer_states: float
    runtime_overhead: float = Field(description="CUDA context, framework, library workspaces")
    total: float
    headroom_fraction: float = Field(description="share of the card kept free against fragmentation (W6)")
    required_capacity: float = Field(description="total ÷ (1 − headroom): the card size this needs")
    capacity: float | None = Field(default=None, description="the GPU's memory, GB")
    usable: float | None = Field(default=None, description="capacity × (1 − headroom)")


class Range(Out):
    low: float
    high: float


class ErrorBand(Out):
    """Multiplicative band around a figure: the truth is expected in [value × low, value × high]; derived from the
    calibration residuals: the serving engine's profile band in engines.toml (decode) and the low/high bands of
    assumptions.toml (prefill, training), which the calibration tests check against published measurements."""

    low: float
    high: float
    assumptions: list[str]


class CostOut(Out):
    instance: str = Field(description="instance id in the knowledge base")
    provider: str
    name: str
    pricing: Literal["on-demand", "spot"]
    gpus_per_instance: int
    instances: int = Field(description="instances needed for the GPUs of this estimate")
    usd_per_hour: float = Field(description="all instances together")
    usd_per_gpu_hour: float
    usd_per_run: float | None = Field(default=None, description="training/fine-tuning run, whole instances billed")
    usd_per_million_tokens: float | None = Field(
        default=None, description="inference: GPU-hour price × GPUs ÷ aggregate tokens per hour × 10^6")
    as_of: str = Field(description="date the price was read")
    price_sources: list[str]


class OwnedOut(Out):
    """Buying the GPUs in the machine they go in (systems.toml): amortization over the lifetime plus power while busy
    (space and staff excluded)."""

    price_usd_each: float | None = Field(default=None, description="one accelerator; null when only a whole-system "
                                                                   "price is published")
    price_as_of: str
    system: str = Field(description="the machine bought: 'HGX-class 8-GPU server', '4U 8-GPU PCIe server', ...")
    machines: int
    accelerators_paid: int = Field(description="accelerators bought (a machine is bought whole: at least --gpus)")
    capex_usd: float = Field(description="accelerators, host(s) and, over several machines, the cluster fabric")
    capex_beyond_accelerators_usd: float | None = Field(
        default=None, description="hosts and fabric; null when a whole-system price has no published split")
    power_kw: float
    utilization: float
    usd_per_busy_hour: float
    usd_per_million_tokens: float | None = None
    usd_per_run: float | None = None
    break_even_utilization: float | None = Field(
        default=None, description="utilization above which buying beats the cheapest on-demand rental (H15)")


class ServingOut(Out):
    """S10: replicas of this configuration needed for the traffic."""

    requests_per_minute: float
    output_tokens: int
    tokens_per_s_needed: float
    tokens_per_s_planned: float = Field(description="with burst headroom")
    tokens_per_s_per_replica: float
    replicas: int
    gpus: int


class AssumptionUsed(Out):
    id: str
    text: str
    value: float | None = None
    unit: str = ""
    low: float | None = None
    high: float | None = None
    source: str


class EstimateResult(Out):
    """`gpuadvisor estimate --json`. GB = 10^9 bytes; speeds in tokens per second; prices in USD with their date."""

    schema_version: int = SCHEMA_VERSION
    model: ModelOut
    setup: SetupOut
    precision: PrecisionOut
    parameters: ParametersOut
    kv_cache_bytes_per_token: float | None = Field(default=None, description="all layers, K and V, one token")
    kv_cache_gb: float | None = Field(default=None, description="KV cache of batch × context, all GPUs, GB")
    memory_gb: MemoryOut = Field(description="per GPU, GB (10^9 bytes)")
    fits: bool | None = Field(default=None, description="total ≤ capacity × (1 − headroom); null without --gpu")
    bound: Literal["bandwidth", "compute"] | None = Field(default=None, description="what limits a decode step")
    arithmetic_intensity: float | None = Field(default=None, description="decode step FLOP/byte")
    ridge_point: float | None = Field(default=None, description="GPU dense peak ÷ bandwidth, FLOP/byte")
    decode_tokens_per_s: float | None = Field(default=None, description="aggregate over the batch and all replicas")
    decode_tokens_per_s_per_sequence: float | None = None
    decode_tokens_per_s_range: Range | None = None
    throughput_tokens_per_s: float | None = Field(
        default=None, description="generated tokens/s of the whole configuration with every prompt processed "
        "(continuous batching with chunked prefill at the batch, input_tokens and output_tokens; all replicas): "
        "the capacity to size serving with; decode_tokens_per_s leaves the prompts out")
    throughput_output_tokens: int | None = Field(
        default=None, description="generated tokens per request throughput_tokens_per_s assumes (--output-tokens, "
        "default 200)")
    bandwidth_bound_tokens_per_s: float | None = Field(
        default=None, description="ceiling at 100% bandwidth, no overhead (all replicas)")
    tpot_s: float | None = Field(default=None, description="time per output token of one sequence")
    prefill_tokens_per_s: float | None = Field(default=None, description="one replica, prompts of the whole batch")
    ttft_s: float | None = Field(default=None, description="time to first token of one prompt of input_tokens")
    ttft_s_range: Range | None = None
    training_flops: float | None = None
    training_gpu_hours: float | None = None
    training_gpu_hours_range: Range | None = None
    training_days: float | None = Field(default=None, description="wall-clock days on the given GPUs")
    training_tokens_per_s: float | None = Field(default=None, description="all GPUs together")
    error_band: dict[str, ErrorBand] = Field(
        default_factory=dict, description="'decode', 'prefill', 'training': multiplicative bands of those figures")
    costs: list[CostOut] = Field(default_factory=list, description="per priced cloud instance of this accelerator")
    owned: OwnedOut | None = None
    serving: ServingOut | None = None
    warnings: list[str] = Field(default_factory=list)
    defaults_applied: list[str] = Field(default_factory=list, description="settings the user did not give")
    assumptions: list[AssumptionUsed]


# ----------------------------------------------------------------------------------------------------------------
# Helpers shared with the calibration tests
# ----------------------------------------------------------------------------------------------------------------


def is_gguf(precision: Precision) -> bool:
    """llama.cpp formats, whose bits per weight already average over every tensor (embeddings included)."""
    return "gguf" in (precision.library or "").lower() or precision.name.lower().startswith("gguf")


def embedding_bytes(precision: Precision) -> float | None:
    """Bytes per embedding/LM-head weight: quantizers other than GGUF keep those tables in 16-bit
    (bitsandbytes, AutoGPTQ, AutoAWQ, FP8/INT8 recipes); None = same as the weights."""
    if precision.bits_per_weight >= 16 or is_gguf(precision):
        return None
    return 2.0


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


def catalog_factors(catalog: Catalog) -> Factors:
    return Factors.from_values({k: a.value for k, a in catalog.assumptions.items()})


# ----------------------------------------------------------------------------------------------------------------
# Resolution and validation
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _Ctx:
    """Everything resolved for one estimate."""

    notes: list[Note] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)


def _lookup(flag: str, fn: Callable[[Catalog, str], T], catalog: Catalog, query: str) -> T:
    """A knowledge-base lookup whose errors (unknown, ambiguous) name the flag."""
    try:
        return fn(catalog, query)
    except AdvisorError as exc:
        raise InputError(f"{flag}: {exc}") from None


def _resolve_model(req: EstimateRequest, catalog: Catalog, ctx: _Ctx) -> tuple[Architecture, ModelOut, str | None]:
    """The architecture, how the output names it, and the precision its published checkpoint is stored in."""
    from gpuadvisor.rules.sizing.params import describe
    from gpuadvisor.rules.sizing.shape import describe_synthesis, synthesize_architecture

    given = [n for n, v in (("--model", req.model), ("--params", req.params), ("--model-config", req.model_config))
             if v is not None]
    if len(given) > 1:
        raise InputError(f"give only one of --model, --params, --model-config (got {', '.join(given)})")
    if not given:
        raise InputError("--model, --params or --model-config is required (e.g. --model llama-3.1-8b, --params 70B)")
    if req.model is not None:
        from gpuadvisor.knowledge.hf_hub import HubModel, describe_hub, find_model_or_hub, stored_format

        model = _lookup("--model", find_model_or_hub, catalog, req.model)
        if isinstance(model, HubModel):
            for text in [describe_hub(model), *model.notes]:
                ctx.notes.append(Note("method.config_json", text, source=describe_hub(model)))
            arch = model.config.architecture
            return arch, ModelOut(name=f"{model.spec} ({model.config.model_type})", source="hugging-face",
                                  description=describe(arch), attention=attention_kind(arch)), stored_format(model)
        arch = model.architecture
        out = ModelOut(name=model.name, id=model.id, source="knowledge-base", description=describe(arch),
                       attention=attention_kind(arch))
        return arch, out, model.published_weights
    if req.model_config is not None:
        from gpuadvisor.knowledge.hf_config import read_hf_config

        try:
            cfg = read_hf_config(req.model_config)
        except AdvisorError as exc:
            raise InputError(f"--model-config: {exc}") from None
        for text in cfg.notes:
            ctx.notes.append(Note("method.config_json", text, source=str(req.model_config)))
        arch = cfg.architecture
        return arch, ModelOut(name=f"{req.model_config} ({cfg.model_type})", source="config.json",
                              description=describe(arch), attention=attention_kind(arch)), None
    assert req.params is not None
    if not math.isfinite(req.params) or req.params <= 0:
        raise InputError(f"--params must be a positive size such as 7B or 70B (got {req.params:g})")
    try:
        arch = synthesize_architecture(req.params)
    except ValueError as exc:
        raise InputError(f"--params: {exc}") from None
    ctx.notes.append(Note("method.synthesized_shape", describe_synthesis(req.params, arch),
                          source="gpuadvisor shape.py (Llama 3 family proportions)"))
    ctx.warnings.append("Model shape synthesized from --params: KV cache and activations are estimates for a "
                        "Llama-3-like model of that size")
    return arch, ModelOut(name=f"{req.params / 1e9:.3g}B (synthesized)", source="synthesized",
                          description=describe(arch), attention=attention_kind(arch)), None


def _precision(catalog: Catalog, flag: str, query: str) -> Precision:
    from gpuadvisor.knowledge.lookup import find_precision

    return _lookup(flag, find_precision, catalog, query)


def _positive(name: str, value: float | None) -> None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise InputError(f"{name} must be greater than zero (got {value:g})")


def _check_engine(req: EstimateRequest) -> None:
    if req.engine is not None:
        from gpuadvisor.rules.serving import canonical_engine

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
                     "grad_precision": "--grad-precision"}
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


# ----------------------------------------------------------------------------------------------------------------
# The estimate
# ----------------------------------------------------------------------------------------------------------------


def estimate(req: EstimateRequest, catalog: Catalog) -> EstimateResult:
    """Size one configuration; raises InputError (naming the flag) for bad or contradictory input."""
    from gpuadvisor.knowledge.lookup import find_accelerator

    ctx = _Ctx()
    _check_numbers(req)
    _check_engine(req)
    method = _check_workload(req)
    arch, model_out, published = _resolve_model(req, catalog, ctx)
    params = count_parameters(arch)
    factors = catalog_factors(catalog)
    training = req.workload != "inference"

    # precisions
    # the consultation's policy (answers.contextual_defaults): QLoRA's NF4 base; serving the checkpoint as published
    given = {"workload": req.workload, "finetune.method": method}
    default_precision = contextual_defaults(given, served_format(arch, published)).get(
        "precision.weights", PrecisionAnswer.model_fields["weights"].default)
    weights_p = _precision(catalog, "--precision", req.precision or default_precision)
    if req.precision is None:
        ctx.defaults.append(f"precision = {weights_p.id}")
    _check_precision(weights_p, method, training)
    kv_p: Precision | None = None
    if not training:
        kv_default = PrecisionAnswer.model_fields["kv_cache"].default
        kv_p = _precision(catalog, "--kv-precision", req.kv_precision or kv_default)
        if req.kv_precision is None:
            ctx.defaults.append(f"kv_precision = {kv_p.id}")
        if "kv_cache" not in kv_p.uses:
            raise InputError(f"--kv-precision {req.kv_precision}: {kv_p.name} is not a KV-cache format "
                             "(use fp16, bf16, fp8 or int8)")

    # accelerator
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

    # shape of the run
    context = req.context or 4096
    batch = req.batch or 1
    if req.context is None:
        ctx.defaults.append(f"context = {context}")
    if req.batch is None:
        ctx.defaults.append(f"batch = {batch}")
    if req.input_tokens is not None and req.input_tokens > context:
        raise InputError(f"--input-tokens {req.input_tokens} exceeds the context of {context} tokens (give --context)")
    if arch.max_position_embeddings and context > arch.max_position_embeddings:
        ctx.warnings.append(f"--context {context:,} exceeds the model's maximum of {arch.max_position_embeddings:,} "
                            "tokens (max_position_embeddings)")
    par = _parallelism(req, arch, training, ctx)
    # FlashAttention-2 needs CUDA compute capability 8.0 (H9); non-CUDA stacks (TPU, Metal, Neuron) ship their own
    # fused attention, so only parts marked "no" (Volta, Turing, Pascal) materialize the score matrix.
    flash = acc is None or acc.flash_attention_2 != "no"
    checkpointing = True if req.checkpointing is None else req.checkpointing
    optimizer: OptimizerName = req.optimizer or "adamw"
    lora_rank = req.lora_rank or 16
    if training:
        if req.optimizer is None:
            ctx.defaults.append("optimizer = adamw")
        if req.checkpointing is None:
            ctx.defaults.append("gradient checkpointing = on")
        if method in ("lora", "qlora") and req.lora_rank is None:
            ctx.defaults.append("lora_rank = 16")

    # memory
    if training:
        assert method is not None
        mem = training_memory(
            arch, params, method=method, optimizer=optimizer,
            weight_bits=weights_p.bits_per_weight if method == "qlora" else (32.0 if weights_p.bits_per_weight >= 32
                                                                             else 16.0),
            grad_precision=req.grad_precision or "bf16", seq=context, micro_batch=batch, par=par,
            checkpointing=checkpointing, flash_attention=flash, lora_rank=lora_rank, factors=factors)
    else:
        assert kv_p is not None
        if acc is not None:  # the serving engine's own memory margin and footprint (engines.toml)
            from gpuadvisor.rules.serving import engine_memory

            overrides = engine_memory(catalog, acc, req.engine)
            if overrides:
                factors = replace(factors, **dict(overrides))
        rest_bytes, experts = split_weight_format(arch, weights_p)
        mem = inference_memory(arch, params, weight_bytes_per_param=rest_bytes,
                               kv_bytes_per_value=kv_p.bytes_per_weight, context=context, batch=batch, par=par,
                               embedding_bytes=embedding_bytes(weights_p), flash_attention=flash, factors=factors,
                               experts=experts)
    ctx.notes.extend(mem.notes)
    if not flash and acc is not None:
        ctx.warnings.append(f"H9: {acc.name} does not run FlashAttention-2 (compute capability < 8.0): "
                            "attention scores are materialized, which costs memory at long context")

    result = EstimateResult(
        model=model_out,
        setup=SetupOut(workload=req.workload, method=method, context=context, batch=batch,
                       input_tokens=None if training else (req.input_tokens or context),
                       gpu=acc.id if acc else None, gpu_name=acc.name if acc else None, gpus=par.gpus,
                       tensor_parallel=par.tp, expert_parallel=par.ep, pipeline_parallel=par.pp,
                       data_parallel=par.dp, zero_stage=par.zero, power_limit_w=req.power_limit_w,
                       optimizer=optimizer if training else None, gradient_checkpointing=checkpointing if training
                       else None, flash_attention=flash, lora_rank=lora_rank if method in ("lora", "qlora") else None,
                       tokens=req.tokens),
        precision=PrecisionOut(weights=weights_p.id, weights_bits=weights_p.bits_per_weight,
                               kv_cache=kv_p.id if kv_p else None, compute=weights_p.compute),
        parameters=ParametersOut(total=params.total, active=params.active, active_per_token=params.active_per_token,
                                 embedding=params.embedding + params.position_embedding + params.lm_head,
                                 trainable=_trainable(arch, params, method, lora_rank)),
        memory_gb=_memory_out(mem, acc),
        fits=mem.fits(acc.memory_gb.value * GB) if acc else None,
        assumptions=[],
    )
    if kv_p is not None:
        per_token = kv_bytes_per_token(arch, kv_p.bytes_per_weight)
        result.kv_cache_bytes_per_token = per_token
        result.kv_cache_gb = kv_bytes_per_sequence(arch, kv_p.bytes_per_weight, context) * batch * par.dp / GB
    if acc is not None and result.fits is False:
        ctx.warnings.append(f"H1: does not fit: needs {mem.total / GB:.1f} GB per GPU, {acc.name} has "
                            f"{acc.memory_gb.value:g} GB of which {mem.usable(acc.memory_gb.value * GB) / GB:.1f} GB "
                            f"usable with {mem.headroom_fraction:.0%} kept free (W6)")
    if arch.moe is not None:
        ctx.warnings.append(f"W13: mixture of experts: all {params.total / 1e9:.1f}B parameters must be resident; "
                            f"only {params.active / 1e9:.1f}B are active per token")

    if acc is not None:
        if training:
            _training_speed(result, req, catalog, acc, weights_p, arch, params, method, par, factors, ctx)
        else:
            assert kv_p is not None
            _inference_speed(result, req, catalog, acc, arch, params, weights_p, kv_p, par, context, batch, factors,
                             ctx)
        _costs(result, req, catalog, acc, par, factors, ctx)
    elif training and req.tokens is not None:
        flops = (6.0 if method == "full" else 4.0) * params.active * req.tokens
        result.training_flops = flops
    result.warnings = ctx.warnings
    result.defaults_applied = ctx.defaults
    result.assumptions = _assumptions(ctx.notes, catalog)
    return result


def _check_precision(p: Precision, method: Method | None, training: bool) -> None:
    if method == "qlora" and p.bits_per_weight > 4.5:
        raise InputError(f"--method qlora contradicts --precision {p.id}: QLoRA keeps the frozen base weights in "
                         "4-bit (use --precision nf4, or --method lora for a 16-bit base)")
    if method == "lora" and p.bits_per_weight < 8:
        raise InputError(f"--method lora with --precision {p.id}: LoRA on a 4-bit base is QLoRA "
                         "(use --method qlora)")
    if method == "full" and p.bits_per_weight < 16 and p.compute != "fp8":
        raise InputError(f"--precision {p.id} cannot be trained in full: weights must be bf16, fp16, fp8 (mixed "
                         "precision) or fp32 (use --method qlora for a 4-bit base)")
    if not training and "weights" not in p.uses:
        raise InputError(f"--precision {p.id}: {p.name} is not a weight storage format (try bf16, fp8, awq, nf4, "
                         "q4_k_m)")


def _parallelism(req: EstimateRequest, arch: Architecture, training: bool, ctx: _Ctx) -> Parallelism:
    pp = req.pp or 1
    if pp > arch.num_hidden_layers:
        raise InputError(f"--pp {pp} exceeds the model's {arch.num_hidden_layers} layers")
    if req.tp is not None:
        tp = req.tp
    elif not training and req.gpus is not None:
        tp = max(1, req.gpus // pp)
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
    shards = max(tp, ep) * pp
    gpus = req.gpus or shards
    if gpus % shards:
        raise InputError(f"--gpus {gpus} is not a multiple of --tp {tp} × --pp {pp}" if ep == 1 else
                         f"--gpus {gpus} is not a multiple of --ep {ep} × --pp {pp}")
    zero = req.zero or 0
    dp = gpus // shards
    if zero and dp == 1:
        ctx.warnings.append(f"--zero {zero} has no effect with one data-parallel rank (give --gpus > tp × pp)")
    return Parallelism(tp=tp, pp=pp, dp=dp, zero=zero, ep=ep)


def _trainable(arch: Architecture, params: ParameterCount, method: Method | None, rank: int) -> int | None:
    if method is None:
        return None
    return params.total if method == "full" else lora_parameters(arch, rank)


def _memory_out(mem: MemoryBreakdown, acc: Accelerator | None) -> MemoryOut:
    cap = acc.memory_gb.value if acc else None
    return MemoryOut(
        weights=mem.weights / GB, kv_cache=mem.kv_cache / GB, activations=mem.activations / GB,
        gradients=mem.gradients / GB, optimizer_states=mem.optimizer_states / GB,
        runtime_overhead=mem.runtime_overhead / GB, total=mem.total / GB, headroom_fraction=mem.headroom_fraction,
        required_capacity=mem.required_capacity / GB, capacity=cap,
        usable=None if cap is None else cap * (1 - mem.headroom_fraction))


def _band(value: float, low: float, high: float, names: Iterable[str]) -> ErrorBand:
    return ErrorBand(low=min(low, high) / value, high=max(low, high) / value, assumptions=list(names))


def _inference_speed(result: EstimateResult, req: EstimateRequest, catalog: Catalog, acc: Accelerator,
                     arch: Architecture, params: ParameterCount, weights_p: Precision, kv_p: Precision,
                     par: Parallelism, context: int, batch: int, factors: Factors, ctx: _Ctx) -> None:
    from gpuadvisor.rules.serving import efficiency_bounds, resolve_engine

    engine = resolve_engine(acc, req.engine)
    eff, eff_slow, eff_fast = efficiency_bounds(catalog, acc, engine)
    result.setup.engine = engine
    result.setup.engine_profile = eff.profile if eff else None
    if req.engine is None or req.engine == "auto":
        ctx.defaults.append(f"engine = {engine} (by deployment: {acc.name})")
    link = _group_link(acc, max(par.tp, par.ep))
    device = _device_checked(acc, weights_p.compute, ctx, eff, link)
    emb = embedding_bytes(weights_p)
    prompt = req.input_tokens or context
    w_bytes, experts = split_weight_format(arch, weights_p)

    def run(f: Factors, e: EngineEfficiency | None, decode_f: Factors) -> tuple[float, float, float]:
        d = device_for(acc, weights_p.compute, link, e)
        step = decode_step(arch, params, d, bytes_per_weight=w_bytes,
                           kv_bytes_per_value=kv_p.bytes_per_weight, context=context, batch=batch, tp=par.tp,
                           pp=par.pp, embedding_bytes=emb, factors=decode_f, experts=experts, ep=par.ep)
        ttft = prefill(arch, params, d, bytes_per_weight=w_bytes, prompt_tokens=prompt,
                       tp=par.tp, embedding_bytes=emb, factors=f, experts=experts, ep=par.ep).seconds
        return step.tokens_per_s * par.dp, ttft, step.step_seconds

    step = decode_step(arch, params, device, bytes_per_weight=w_bytes,
                       kv_bytes_per_value=kv_p.bytes_per_weight, context=context, batch=batch, tp=par.tp, pp=par.pp,
                       embedding_bytes=emb, factors=factors, experts=experts, ep=par.ep)
    pre_batch = prefill(arch, params, device, bytes_per_weight=w_bytes, prompt_tokens=prompt,
                        batch=batch, tp=par.tp, embedding_bytes=emb, factors=factors, experts=experts, ep=par.ep)
    ttft = prefill(arch, params, device, bytes_per_weight=w_bytes, prompt_tokens=prompt,
                   tp=par.tp, embedding_bytes=emb, factors=factors, experts=experts, ep=par.ep)
    ctx.notes.extend(step.notes)
    ctx.notes.extend(pre_batch.notes)
    slow, fast = factor_bounds(catalog, factors)
    # with an engine profile, its band (the calibration residuals of that engine and family) is the decode band
    lo = run(slow, eff_slow, factors if eff else slow)
    hi = run(fast, eff_fast, factors if eff else fast)
    decode_band = [f"engines.toml {eff.profile}"] if eff else ["decode_bandwidth_efficiency", "compute_efficiency",
                                                               "step_overhead_per_layer_us"]
    result.bound = step.bound
    result.arithmetic_intensity = step.arithmetic_intensity
    if device.peak_tflops:
        result.ridge_point = ridge_point(device.peak_tflops, device.bandwidth_gbs)
    result.decode_tokens_per_s = step.tokens_per_s * par.dp
    if device.peak_tflops is not None:  # without a peak the prompts' compute cannot be estimated
        out_tokens = req.output_tokens or DEFAULT_OUTPUT_TOKENS
        curve = DecodeCurve(arch, params, device, bytes_per_weight=w_bytes, kv_bytes_per_value=kv_p.bytes_per_weight,
                            context=context, tp=par.tp, pp=par.pp, embedding_bytes=emb, factors=factors,
                            experts=experts, ep=par.ep)
        flops = PrefillModel(arch, params, bytes_per_weight=w_bytes, prompt_tokens=prompt, factors=factors,
                             experts=experts).flops
        rate = serving_rate(curve, flops, batch=batch, input_tokens=prompt, output_tokens=out_tokens,
                            chunk_tokens=factors.prefill_chunk_tokens)
        result.throughput_tokens_per_s = rate.tokens_per_s * par.dp
        result.throughput_output_tokens = out_tokens
        ctx.notes.append(Note("method.serving_throughput", "Throughput with prompts: continuous batching with "
                              "chunked prefill; each iteration advances every sequence one token and prefills "
                              "batch × input ÷ output prompt tokens in the same pass over the weights",
                              source="rules/sizing/serving_load.py"))
    result.decode_tokens_per_s_per_sequence = step.tokens_per_s_per_sequence
    result.decode_tokens_per_s_range = Range(low=lo[0], high=hi[0])
    result.bandwidth_bound_tokens_per_s = step.bandwidth_bound_tokens_per_s * par.dp
    result.tpot_s = step.step_seconds
    result.error_band["decode"] = _band(result.decode_tokens_per_s, lo[0], hi[0], decode_band)
    if device.peak_tflops is not None:  # without a published peak, prefill time is unknown, not zero
        result.prefill_tokens_per_s = pre_batch.tokens_per_s
        result.ttft_s = ttft.seconds
        result.ttft_s_range = Range(low=min(lo[1], hi[1]), high=max(lo[1], hi[1]))
        result.error_band["prefill"] = _band(ttft.seconds, lo[1], hi[1], ["compute_efficiency"])
    if par.tp > 1 and device.link_kind != "nvlink":
        ctx.warnings.append(f"W3/H5: tensor parallel over {device.link_gbs_per_direction:g} GB/s PCIe: "
                            f"{step.comm_seconds * 1e3:.2f} ms of all-reduce per decode step "
                            f"({step.comm_seconds / step.step_seconds:.0%} of the step); NVLink parts avoid this")
    if par.tp > 1 and par.ep == 1 and result.fits is not None and par.dp == 1:
        single = replace(par, tp=1)
        if inference_memory(arch, params, weight_bytes_per_param=w_bytes,
                            kv_bytes_per_value=kv_p.bytes_per_weight, context=context, batch=batch, par=single,
                            embedding_bytes=emb, factors=factors, experts=experts).fits(acc.memory_gb.value * GB):
            ctx.warnings.append("H6: the model fits one GPU; one GPU per replica avoids tensor-parallel "
                                "communication (use --tp 1 and --gpus for replicas)")
    if step.bound == "compute":
        ctx.warnings.append(f"H4: decode at batch {batch} is compute-bound (intensity "
                            f"{step.arithmetic_intensity:.0f} FLOP/byte ≥ ridge {result.ridge_point or 0:.0f}): "
                            "TFLOPS matter")
    if req.requests_per_minute is not None:
        out_tokens = req.output_tokens or DEFAULT_OUTPUT_TOKENS
        plan = serving_capacity(req.requests_per_minute, out_tokens, step.tokens_per_s, factors=factors)
        ctx.notes.extend(plan.notes)
        result.serving = ServingOut(requests_per_minute=req.requests_per_minute, output_tokens=out_tokens,
                                    tokens_per_s_needed=plan.tokens_per_s_needed,
                                    tokens_per_s_planned=plan.tokens_per_s_planned,
                                    tokens_per_s_per_replica=step.tokens_per_s, replicas=plan.replicas,
                                    gpus=plan.replicas * par.model_shards)


def _group_link(acc: Accelerator, group: int) -> Link:
    """What a tensor-parallel group of `group` GPUs of this part talks over on its own board (topology.py)."""
    topo = accelerator_topology(acc)
    return topo.link(group) if group <= topo.node else Link("pcie", "pcie", topo.pcie_gbs_per_direction)


def _device_checked(acc: Accelerator, compute: str, ctx: _Ctx, efficiency: EngineEfficiency | None = None,
                    link: Link | None = None) -> Device:
    peak, used = peak_tflops(acc, compute)
    if peak is None:
        ctx.warnings.append(f"{acc.name} publishes no dense {compute} throughput: compute-bound figures "
                            "(prefill, large batches, training) cannot be estimated; decode uses bandwidth only")
    elif used != compute:
        ctx.warnings.append(f"H8: {acc.name} has no {compute.upper()} tensor-core rate; computed at "
                            f"{used.upper()} ({peak:g} TFLOPS dense)")
    return device_for(acc, compute, link, efficiency)


def _training_speed(result: EstimateResult, req: EstimateRequest, catalog: Catalog, acc: Accelerator,
                    weights_p: Precision, arch: Architecture, params: ParameterCount, method: Method | None,
                    par: Parallelism, factors: Factors, ctx: _Ctx) -> None:
    compute = training_compute(weights_p)
    device = _device_checked(acc, compute, ctx)
    if req.tokens is None or device.peak_tflops is None or method is None:
        if req.tokens is None:
            ctx.warnings.append("Give --tokens (e.g. 2T, 500M) for training time and cost")
        return
    shape = training_shape(arch, params, weights_p, method, result.setup.context, req.workload == "training", acc,
                           accelerator_topology(acc), par.gpus, par, factors)
    tokens, peak = req.tokens, device.peak_tflops

    def timed(f: Factors, with_notes: bool = False) -> TrainingTime:
        return training_time(params.active, tokens, gpus=par.gpus, peak_tflops=peak, method=method, factors=f,
                             with_notes=with_notes, shape=shape, mfu=req.mfu)

    tt = timed(factors, True)
    ctx.notes.extend(tt.notes)
    slow, fast = factor_bounds(catalog, factors)
    lo, hi = (timed(slow).gpu_hours, timed(fast).gpu_hours) if req.mfu is None else (tt.gpu_hours, tt.gpu_hours)
    result.setup.training_mfu = tt.mfu
    result.training_flops = tt.flops
    result.training_gpu_hours = tt.gpu_hours
    result.training_gpu_hours_range = Range(low=min(lo, hi), high=max(lo, hi))
    result.training_days = tt.days
    result.training_tokens_per_s = tt.tokens_per_s
    result.error_band["training"] = _band(tt.gpu_hours, lo, hi, ["training_mfu"] if req.mfu is None else ["--mfu"])


def _costs(result: EstimateResult, req: EstimateRequest, catalog: Catalog, acc: Accelerator, par: Parallelism,
           factors: Factors, ctx: _Ctx) -> None:
    gpu_hours = result.training_gpu_hours
    tokens_per_s = result.decode_tokens_per_s
    cheapest_rent: float | None = None
    for inst in sorted(catalog.instances.values(), key=lambda i: i.id):
        if inst.accelerator != acc.id:
            continue
        for kind in ("on-demand", "spot"):
            offer = inst.current_price(kind)
            if offer is None:
                continue
            c = cloud_cost(offer.usd_per_hour, inst.accelerator_count, par.gpus, gpu_hours=gpu_hours)
            per_m = None
            if tokens_per_s:
                per_m = c.usd_per_gpu_hour * par.gpus / (tokens_per_s * 3600.0) * 1e6
            result.costs.append(CostOut(
                instance=inst.id, provider=inst.provider_name, name=inst.instance, pricing=kind,  # type: ignore[arg-type]
                gpus_per_instance=inst.accelerator_count, instances=c.instances, usd_per_hour=c.usd_per_hour,
                usd_per_gpu_hour=c.usd_per_gpu_hour, usd_per_run=c.usd_per_run, usd_per_million_tokens=per_m,
                as_of=offer.as_of_text, price_sources=list(offer.sources)))
            if kind == "on-demand":
                cheapest_rent = c.usd_per_gpu_hour if cheapest_rent is None else min(cheapest_rent, c.usd_per_gpu_hour)
    if result.costs:
        ctx.notes.append(Note("method.cloud_cost", "Cloud cost: whole instances billed for a run (wall time × "
                              "instances × hourly price); $ per 1M tokens = GPU-hour price × GPUs ÷ tokens per hour "
                              "× 10^6 (the instance's other GPUs assumed to serve replicas)", source="S9 (002)"))
    bought = _cheapest_purchase(catalog, acc, par.gpus, joined=par.gpus > 1 and (par.dp > 1 or par.pp > 1))
    if bought is None:
        return
    unit, machines, paid, bill = bought
    utilization = req.utilization or 0.5
    if req.utilization is None:
        ctx.defaults.append("utilization = 0.5 (owned hardware)")
    owned = system_cost(bill.capex_usd, bill.power_w, utilization=utilization, tokens_per_s=tokens_per_s,
                        factors=factors)
    ctx.notes.extend(owned.notes)
    if paid > par.gpus:
        ctx.warnings.append(f"{unit.name} holds {paid} GPUs: the purchase prices all {paid}; plan the work on all of "
                            "them (gpuadvisor recommend does)")
    run = None
    if gpu_hours is not None:
        run = owned.usd_per_busy_hour * gpu_hours / par.gpus
    card = acc.purchase_price_usd
    result.owned = OwnedOut(
        price_usd_each=card.value if card is not None else None, price_as_of=as_of_label(bill.as_of),
        system=unit.name, machines=machines, accelerators_paid=paid, capex_usd=owned.capex_usd,
        capex_beyond_accelerators_usd=bill.beyond_usd,
        power_kw=bill.power_w / 1000.0, utilization=utilization,
        usd_per_busy_hour=owned.usd_per_busy_hour, usd_per_million_tokens=owned.usd_per_million_tokens,
        usd_per_run=run,
        break_even_utilization=None if cheapest_rent is None else break_even_utilization(
            bill.capex_usd / paid, bill.power_w / paid, cheapest_rent, factors=factors))
    if acc.market == "consumer" and par.gpus >= 4:
        ctx.notes.append(factors.note("consumer_dense_throttle", "Sustained-throughput loss of consumer cards in "
                                      "dense racks (W4)"))
        ctx.warnings.append(f"W4: {par.gpus} consumer cards in one chassis throttle: expect about "
                            f"{factors.consumer_dense_throttle:.0%} lower sustained throughput than these figures")


def _cheapest_purchase(catalog: Catalog, acc: Accelerator, gpus: int, *, joined: bool
                       ) -> tuple[Unit, int, int, PurchaseBill] | None:
    """The cheapest machine(s) of systems.toml holding at least `gpus` of the part: (unit, machines, accelerators
    bought, bill); None when the part cannot be bought with a price."""
    best: tuple[Unit, int, int, PurchaseBill] | None = None
    for unit in purchase_units(catalog, acc):
        system = catalog.systems[unit.id.split(":")[1]]
        if system.existing:
            continue
        fill = next((f for f in unit.fills if f >= gpus), None)
        machines, paid = (1, fill) if fill is not None else (math.ceil(gpus / unit.node),
                                                             math.ceil(gpus / unit.node) * unit.node)
        if machines > 1 and unit.single:
            continue
        try:
            bill = purchase_bill(catalog, system, acc, machines, paid, joined=joined and machines > 1)
        except LookupError:
            continue
        if best is None or bill.capex_usd < best[3].capex_usd:
            best = (unit, machines, paid, bill)
    return best


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
