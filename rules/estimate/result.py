"""The output of `gpuadvisor estimate` (`--json`, and `gpuadvisor schema estimate`): one configuration sized.

GB means 10^9 bytes; speeds are tokens per second; prices are USD with the date they were read. Every figure is the
one the consultation's planner gives the same layout (rules/estimate/consult.py builds them from a `planning.Plan`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuadvisor.rules.sizing.units import GB

if TYPE_CHECKING:
    from gpuadvisor.knowledge.schema import Accelerator
    from gpuadvisor.rules.sizing.memory import MemoryBreakdown

SCHEMA_VERSION = 1
Workload = Literal["inference", "training", "finetune"]
Method = Literal["full", "lora", "qlora"]


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


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
    input_tokens: int | None = Field(default=None, description="prompt tokens per request (inference)")
    output_tokens: int | None = Field(default=None, description="generated tokens per request (inference)")
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
    engine_release: str | None = Field(default=None, description="the engine release(s) the profile was measured "
                                       "on: what every serving figure of this estimate assumes")
    engine_released: str | None = Field(default=None, description="the newest of those releases' dates, YYYY-MM")
    training_mfu: float | None = Field(default=None, description="model FLOPs utilisation used for training time")
    context_parallel: int = Field(default=1, description="training: GPUs each sequence is split over")
    virtual_stages: int = Field(default=1, description="training: interleaved pipeline stages per GPU")
    recompute: str | None = Field(default=None, description="training: activation recomputation (none, selective, "
                                  "full), the least that fits unless --recompute gives one")
    global_batch: int | None = Field(default=None, description="training: sequences per optimizer step")
    gradient_accumulation: int | None = Field(default=None, description="training: micro-batches per data-parallel "
                                              "rank per step")


class TrainingStepOut(Out):
    """One optimizer step on one GPU, part by part (seconds): what the training time is made of."""

    seconds: float
    compute: float = Field(description="the micro-batches' GEMMs, attention and elementwise work (recomputation "
                           "included)")
    exposed_communication: float = Field(description="collectives not hidden behind compute: tensor, context and "
                                         "pipeline parallel, and the data-parallel gradient exchange")
    exposed_tensor_parallel: float
    exposed_context_parallel: float
    exposed_pipeline: float
    exposed_data_parallel: float
    bubble: float = Field(description="pipeline fill and drain")
    optimizer: float
    tokens: float = Field(description="tokens the whole cluster trains on per step")
    scaling_efficiency: float = Field(description="compute ÷ step: 1 when nothing waits")
    what_if: dict[str, float] = Field(default_factory=dict, description="tokens/s of the same run changed one way, "
                                      "relative to this one: 'global batch ×2', 'network ×2'")


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
    capacity_as_sold: float | None = Field(default=None, description=(
        "the vendor's memory figure when capacity differs from it: NVIDIA's and AMD's GPU memory is sold in binary "
        "GB (80 GB = 80 GiB = 85.9 × 10^9 bytes), data-centre GDDR parts lose 1/16 to inline ECC"))
    full_context: float | None = Field(default=None, description=(
        "serving, when it decides the fit: one request at the full context alone (weights, its KV cache, "
        "activations, runtime), GB per GPU — an engine refuses to start when it cannot hold it (vLLM's "
        "max_model_len check)"))
    full_context_tokens: int | None = Field(default=None, description="the context full_context is sized at")

    @classmethod
    def of(cls, mem: MemoryBreakdown, acc: Accelerator | None) -> MemoryOut:
        """The plan's breakdown (bytes, rules/sizing/memory.py) in GB, on accelerator `acc` when one is named (its
        device bytes, and the figure it is sold as when that differs): the one breakdown shape, as estimate
        publishes it."""
        cap = acc.memory_bytes() / GB if acc is not None else None
        sold = acc.memory_gb.value if acc is not None and abs(acc.memory_bytes() / GB - acc.memory_gb.value) > 0.005 \
            else None
        return cls(
            weights=mem.weights / GB, kv_cache=mem.kv_cache / GB, activations=mem.activations / GB,
            gradients=mem.gradients / GB, optimizer_states=mem.optimizer_states / GB,
            runtime_overhead=mem.runtime_overhead / GB, total=mem.total / GB, headroom_fraction=mem.headroom_fraction,
            required_capacity=mem.required_capacity / GB, capacity=cap,
            usable=None if cap is None else cap * (1 - mem.headroom_fraction), capacity_as_sold=sold)


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
    """Buying the GPUs in the machine they go in (systems.toml), priced as a consultation prices a purchase
    (rules/pricing.price_owned): the price, server-room rent while held and power while busy over the hardware's life,
    less its resale at the part's age then (staff excluded)."""

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


class LatencyOut(Out):
    """Latency at the estimate's load as a benchmark measures it: median and p99 over a run, with the arrival
    pattern the figures assume (rules/sizing/serving_load.py)."""

    arrival: str = Field(description="the arrival pattern: 'closed loop, burst start' (a benchmark's N clients, "
                         "every one sending at once, then its next request as its last one ends: vLLM bench serve, "
                         "SGLang bench_serving with --max-concurrency N)")
    clients: int = Field(description="requests in flight per replica (the batch)")
    ttft_p50_s: float = Field(description="median time to first token")
    ttft_p99_s: float = Field(description="p99 time to first token: the slowest prompts of the run's first burst")
    tpot_p50_s: float = Field(description="median time per output token")
    tpot_p99_s: float = Field(description="p99 time per output token: the burst's first requests, whose decodes "
                              "carry the rest of the burst's prompts")
    engine_release: str | None = Field(default=None, description="the engine release the figures assume (the "
                                       "profile's)")


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


class FitOption(Out):
    """One change that makes a configuration that does not fit its GPUs fit (rules/estimate/fit_hints.py)."""

    flags: str = Field(description="the flags to add or change, e.g. '--zero 3' or '--gpus 2 --tp 2'")
    change: str = Field(description="what the change does")
    total_gb: float = Field(description="memory per GPU with the change, GB")
    usable_gb: float = Field(description="usable memory per GPU (capacity less the headroom kept free), GB")


class EstimateResult(Out):
    """`gpuadvisor estimate --json`. GB = 10^9 bytes; speeds in tokens per second; prices in USD with their date."""

    schema_version: int = SCHEMA_VERSION
    model: ModelOut
    setup: SetupOut
    precision: PrecisionOut
    parameters: ParametersOut
    kv_cache_bytes_per_token: float | None = Field(default=None, description="all layers, K and V, one token")
    kv_cache_tokens_per_sequence: int | None = Field(default=None, description=(
        "KV cache one request holds at its end: input_tokens + output_tokens, capped by the context"))
    kv_cache_gb: float | None = Field(default=None, description="KV cache of every sequence in flight (batch × "
                                      "replicas, each holding kv_cache_tokens_per_sequence), all GPUs, GB")
    memory_gb: MemoryOut = Field(description="per GPU, GB (10^9 bytes)")
    fits: bool | None = Field(default=None, description="total ≤ capacity × (1 − headroom); null without --gpu")
    fit_options: list[FitOption] = Field(default_factory=list, description=(
        "when it does not fit: the first changes that make it fit, least disruptive first, each sized by the same "
        "estimate"))
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
    capacity_tokens_per_s: float | None = Field(default=None, description=(
        "throughput with prompts at the largest batch that fits each replica: what a consultation reports as the "
        "option's capacity"))
    bandwidth_bound_tokens_per_s: float | None = Field(
        default=None, description="ceiling at 100% bandwidth, no overhead (all replicas)")
    tpot_s: float | None = Field(default=None, description=(
        "time per output token of one stream under the load (median; decode steps that also carry prompt "
        "chunks): 1 ÷ tokens_per_s_per_user"))
    tpot_idle_s: float | None = Field(default=None, description="time per output token of one stream alone on an "
                                      "idle replica (a batch-1 decode step), beside ttft_idle_s")
    tokens_per_s_per_user: float | None = Field(default=None, description="what one stream sees under the load")
    prefill_tokens_per_s: float | None = Field(default=None, description="one replica, prompts of the whole batch")
    ttft_s: float | None = Field(default=None, description=(
        "p95 time to first token under the load: batch × replicas clients in a closed loop (a new request as "
        "each finishes), prompts prefilled in chunks between decode steps; the figure a plan's first-token target "
        "is checked against"))
    ttft_idle_s: float | None = Field(default=None, description="time to first token of one prompt of "
                                      "input_tokens on an idle replica")
    ttft_s_range: Range | None = None
    latency: LatencyOut | None = Field(default=None, description=(
        "median and p99 time to first token and per output token at the batch, under a benchmark's closed loop with "
        "a burst start"))
    training_flops: float | None = None
    training_gpu_hours: float | None = None
    training_gpu_hours_range: Range | None = None
    training_days: float | None = Field(default=None, description="wall-clock days on the given GPUs")
    training_tokens_per_s: float | None = Field(default=None, description="all GPUs together")
    training_step: TrainingStepOut | None = None
    error_band: dict[str, ErrorBand] = Field(
        default_factory=dict, description="'decode', 'prefill', 'training': multiplicative bands of those figures")
    costs: list[CostOut] = Field(default_factory=list, description="per priced cloud instance of this accelerator")
    owned: OwnedOut | None = None
    serving: ServingOut | None = None
    warnings: list[str] = Field(default_factory=list)
    defaults_applied: list[str] = Field(default_factory=list, description="settings the user did not give")
    assumptions: list[AssumptionUsed]
