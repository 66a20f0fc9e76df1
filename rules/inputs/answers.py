"""The consultation's input: the user's answers, validated, with every default made visible.

An answers file is TOML (see README). Every field has a default so a partial file works, but the defaults that were
applied are listed in every output (`defaults_applied`): the advisor never decides silently.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuadvisor.knowledge.bounds import bound
from gpuadvisor.knowledge.budget import loads_toml
from gpuadvisor.knowledge.engine_names import EngineChoice, normal_engine_key
from gpuadvisor.knowledge.errors import MAX_PROBLEMS, InputError
from gpuadvisor.knowledge.files import ANSWERS_MAX_BYTES, read_text_file
from gpuadvisor.knowledge.locate import find_line, split_syntax_error
from gpuadvisor.knowledge.nesting import loads_json
from gpuadvisor.knowledge.sanitize import shorten

Workload = Literal["training", "finetune", "inference"]
Stage = Literal["learning", "prototyping", "production"]
ALL_PROVIDERS = ["aws", "gcp", "azure", "oracle", "lambda", "runpod", "nebius", "coreweave", "crusoe", "tensorwave",
                 "vultr", "vast"]
ALL_VENDORS = ["nvidia", "amd", "google", "aws", "intel", "apple", "other"]
WEIGHT_FORMATS = {
    "bf16": "BF16 (2 bytes/param)", "fp16": "FP16 (2 bytes/param)", "fp8": "FP8 (1 byte/param, Hopper/Ada+)",
    "int8": "INT8 (1 byte/param)", "int4": "INT4 (~0.5 byte/param)", "awq": "AWQ 4-bit", "gptq": "GPTQ 4-bit",
    "nf4": "NF4 (QLoRA, bitsandbytes)", "q4_k_m": "GGUF Q4_K_M (llama.cpp)", "fp4": "FP4 (Blackwell)",
    "mxfp4": "MXFP4 (4.25 bits; gpt-oss as published)", "nvfp4": "NVFP4 (4.5 bits, Blackwell)",
    "fp32": "FP32 (4 bytes/param)",
}
"""The weight formats the questionnaire offers (any format of precisions.toml is accepted)."""


def ask(description: str, *, flag: str | None, question: str | None = None, hint: str | Mapping[str, str] = "",
        unit: str = "", example: str = "", choices: Mapping[str, str] | None = None, widget: str | None = None,
        count: bool = False) -> dict[str, Any]:
    """A field's words for every front end, kept with the field (the vocabulary is declared once, here).

    `description` is the schema's and the CLI help's text; `flag` the `gpuadvisor recommend --FLAG` that sets it
    (None: answers file only); `question` the TUI's label (None: not asked), `hint` its "why this matters" line
    (per workload when a mapping; `{buy:ID*N}` is the knowledge base's price of N × accelerator ID), `unit` and
    `example` (the placeholder of an optional number); `choices` the labels of the values offered; `widget` a
    control other than the one the type implies; `count` a flag that reads 70B-style counts (in billions).
    Spread into `Field(...)`: the metadata also lands in the JSON Schema of the answers (`json_schema_extra`).
    """
    extra: dict[str, Any] = {"flag": flag}
    if question is not None:
        extra.update(question=question, hint=dict(hint) if isinstance(hint, Mapping) else hint)
    for key, value in (("unit", unit), ("example", example), ("widget", widget)):
        if value:
            extra[key] = value
    if choices:
        extra["choices"] = dict(choices)
    if count:
        extra["count"] = True
    return {"description": description, "json_schema_extra": extra}


class Section(BaseModel):
    """A table of the answers file: unknown keys are errors (a typo must not be silently ignored), numbers are finite
    and a boolean is never read as a number (`requests_per_minute = true` is not 1)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_as_numbers(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, value in data.items():
                info = cls.model_fields.get(name) if isinstance(name, str) else None
                if isinstance(value, bool) and info is not None and not _takes_bool(info.annotation):
                    raise ValueError(f"{name}: must be {_kind_of(info.annotation)}, not {str(value).lower()}")
        return data


def _takes_bool(annotation: Any) -> bool:
    return annotation is bool or any(_takes_bool(a) for a in get_args(annotation))


def _kind_of(annotation: Any) -> str:
    return "a number" if {annotation, *get_args(annotation)} & {int, float} else "one of the allowed values"


class ModelAnswer(Section):
    """Which model: a knowledge-base name (matched loosely), a bare size in billions, or a local config.json."""

    name: str | None = Field(default=None, **ask(
        "knowledge-base model (matched loosely), e.g. llama-3.1-70b", flag="model", question="Model",
        hint="Weights = parameters × bytes per parameter; every other estimate scales from it (002/003, S1).",
        example="llama-3.1-70b, 70, or ./config.json", widget="model"))
    params_b: float | None = Field(default=None, gt=0, le=100_000, **ask(
        "bare model size in billions of parameters, e.g. 70B or 7e9", flag="params", count=True))
    config: str | None = Field(default=None, **ask("path to a Hugging Face config.json", flag="model_config"))

    @model_validator(mode="after")
    def _one_source(self) -> ModelAnswer:
        given = [k for k in ("name", "params_b", "config") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of model.name, model.params_b, model.config (got {', '.join(given)})")
        return self


class FinetuneAnswer(Section):
    method: Literal["full", "lora", "qlora"] = Field(default="lora", **ask(
        "fine-tuning method: full | lora | qlora", flag="method", question="Fine-tuning method",
        hint="QLoRA keeps 4-bit base weights: a 7B model fits one 24 GB card (000/002, S5).",
        choices={"full": "Full fine-tuning", "lora": "LoRA adapters", "qlora": "QLoRA (4-bit base)"}))
    lora_rank: int = Field(default=16, **bound("lora_rank").field(), **ask(
        "adapter rank (LoRA, QLoRA)", flag="lora_rank", question="Adapter rank",
        hint="The rank sets the adapter's trainable parameters, a small share of memory (002, S5)."))


class TrainingAnswer(Section):
    tokens_b: float | None = Field(default=None, **bound("training_tokens").scaled(1e-9).field(), **ask(
        "training tokens, billions, e.g. 2T or 500B (default: 20 per parameter for training, 0.1B for "
        "fine-tuning)", flag="tokens", question="Training tokens",
        hint="Training compute ≈ 6 × parameters × tokens, 4 × for LoRA/QLoRA (000, S8).", unit="billion",
        example="e.g. 2 or 500M (empty: 20 per parameter from scratch, 0.1 fine-tuning)", count=True))
    deadline_days: float = Field(default=30.0, ge=0.01, le=3650, **ask(
        "days the run may take (≥ 15 min)", flag="deadline_days", question="Deadline",
        hint="Time = compute ÷ (GPUs × peak × utilization): the deadline sets the GPU count (000, S8).",
        unit="days"))
    deadline_from: Literal["auto", "today", "delivery"] = Field(default="auto", **ask(
        "when a stated deadline starts: today (bought hardware must first be delivered and installed, its lead "
        "time counted) or delivery (the clock starts when the hardware runs); auto = today where the run could be "
        "rented instead, delivery where only buying is possible (on premises)", flag="deadline_from",
        question="The deadline counts from",
        hint="GPU servers have shipped 8-20 weeks after the order (Dell, HPE, 2024): counted from today, a purchase "
             "that cannot arrive in time is ruled out (002 Q6, H15).",
        choices={"auto": "Automatic (today if the run could be rented)", "today": "Today (delivery counts)",
                 "delivery": "Delivery of the hardware"}))
    optimizer: Literal["adamw", "sgd", "adam8bit"] = Field(default="adamw", **ask(
        "optimizer: adamw | sgd | adam8bit", flag="optimizer", question="Optimizer",
        hint="Mixed-precision AdamW holds ~16–18 bytes per parameter before activations (000/002, S4, W2).",
        choices={"adamw": "AdamW", "adam8bit": "8-bit Adam", "sgd": "SGD"}))
    zero_stage: Literal["auto", 0, 1, 2, 3] = Field(default="auto", **ask(
        "ZeRO stage: auto | 0 | 1 | 2 | 3", flag="zero_stage"))
    gradient_checkpointing: bool = Field(default=True, **ask(
        "allow recomputing activations in the backward pass (false: never recompute, whatever memory it costs)",
        flag="gradient_checkpointing"))
    recompute: Literal["auto", "none", "selective", "full"] = Field(default="auto", **ask(
        "activation recomputation: auto (the least that fits, as the engines' recipes choose) | none | selective "
        "(norms and the MLP's activation) | full (each layer's forward again, a third more compute)",
        flag="recompute", choices={"auto": "The least that fits", "none": "None", "selective": "Selective",
                                   "full": "Full"}))
    global_batch: int | None = Field(default=None, **bound("global_batch").field(), **ask(
        "sequences per optimizer step (the global batch); unset = 4M tokens below 30B parameters growing to 16M at "
        "405B from scratch (Llama 2, Llama 3), 64 sequences fine-tuning", flag="global_batch",
        question="Global batch (sequences per step)",
        hint="The batch sets how far the run spreads: past one or two sequences per GPU the gradient exchange and "
             "the pipeline bubble are no longer hidden, and more GPUs stop helping.", unit="sequences",
        example="e.g. 1024 (empty: 4M-16M tokens from scratch, 64 fine-tuning)"))
    global_batch_tokens: float | None = Field(default=None, **bound("global_batch_tokens").field(), **ask(
        "tokens per optimizer step (the global batch in tokens, e.g. 4M), instead of global_batch",
        flag="global_batch_tokens", unit="tokens"))
    context_parallel: int | None = Field(default=None, **bound("parallel_degree").field(), **ask(
        "GPUs each sequence is split over (context parallelism, ring attention); unset = the planner chooses",
        flag="context_parallel"))
    checkpointing: bool = Field(default=True, **ask(
        "the job saves checkpoints (needed to survive spot preemption)", flag="checkpointing",
        question="The job saves checkpoints",
        hint="Spot capacity saves 60–90% but needs checkpoints to survive preemption (000, H16/W11)."))

    @model_validator(mode="after")
    def _one_batch(self) -> TrainingAnswer:
        if self.global_batch is not None and self.global_batch_tokens is not None:
            raise ValueError("give only one of training.global_batch (sequences) and training.global_batch_tokens")
        return self


class InferenceAnswer(Section):
    requests_per_minute: float | None = Field(default=None, **bound("requests_per_minute").field(), **ask(
        "average request rate, requests per minute; unset = no throughput target (each option's capacity is "
        "reported)", flag="rpm", question="Requests per minute",
        hint="Requests/min × tokens per request → tokens/s needed, plus burst headroom (002 Q4, S10).",
        unit="req/min", example="e.g. 600 (empty: no throughput target; each option's capacity is shown)"))
    daily_active_users: int | None = Field(default=None, ge=1, le=10_000_000_000, **ask(
        "daily active users; the request rate is derived from them (sessions per user, requests per session, "
        "peak-to-average: knowledge/data/assumptions.toml, or the keys below); give this or requests_per_minute",
        flag="dau", question="Or: daily active users",
        hint="Instead of requests per minute: users × 2 sessions × 5 requests a day ÷ 1,440 × 3 at the busiest "
             "hour (assumptions.toml, settable; 002 W5: plan for the peak).", unit="users",
        example="e.g. 50000 (empty: use requests per minute)"))
    sessions_per_user_per_day: float | None = Field(default=None, gt=0, le=1000, **ask(
        "sessions each daily user opens a day (with daily_active_users; unset = assumptions.toml "
        "dau_sessions_per_user_per_day)", flag="sessions_per_user"))
    requests_per_session: float | None = Field(default=None, gt=0, le=10_000, **ask(
        "requests (turns) per session (with daily_active_users; unset = assumptions.toml dau_requests_per_session)",
        flag="requests_per_session"))
    peak_to_average: float | None = Field(default=None, ge=1, le=100, **ask(
        "busiest-hour request rate ÷ the day's average (with daily_active_users; unset = assumptions.toml "
        "dau_peak_to_average)", flag="peak_to_average"))
    input_tokens: int = Field(default=500, **bound("request_tokens").field(), **ask(
        "prompt tokens per request", flag="input_tokens", question="Input tokens per request",
        hint="Long prompts raise prefill compute and the time to first token (002, S7).", unit="tokens"))
    output_tokens: int = Field(default=200, **bound("request_tokens").field(), **ask(
        "generated tokens per request", flag="output_tokens", question="Output tokens per request",
        hint="Output is generated token by token: it sets the bandwidth bill (002, S6).", unit="tokens"))
    concurrent_requests: int | None = Field(default=None, **bound("batch").field(), **ask(
        "requests in flight at peak (default: the batch size)", flag="concurrency",
        question="Peak concurrent requests",
        hint="Peak concurrency × context sets the KV cache, not the average (002, W5).",
        example="e.g. 16 (empty: the batch size)"))
    latency_p95_s: float | None = Field(default=None, gt=0, le=86_400, **ask(
        "p95 request latency target, seconds", flag="latency", question="Latency SLA, p95",
        hint="The latency SLA caps how many requests can share one GPU (002 Q4, S10).", unit="s",
        example="e.g. 10 (empty: no SLA)"))
    min_tokens_per_s_per_user: float | None = Field(default=None, gt=0, le=100_000, **ask(
        "minimum tokens/s each user sees", flag="min_user_tps", question="Minimum tokens/s per user",
        hint="Per-user speed is bounded by bandwidth ÷ bytes read per token (002, S6).", unit="tok/s",
        example="e.g. 20 (empty: no floor)"))
    ttft_max_s: float | None = Field(default=None, gt=0, le=3600, **ask(
        "maximum time to first token, seconds", flag="ttft"))
    models_per_gpu: int = Field(default=1, ge=1, le=64, **ask(
        "distinct models of this size hosted side by side on the same accelerators (each with its own weights)",
        flag="models_per_gpu", question="Models hosted side by side",
        hint="Several small models can share one large GPU through MIG slices (000, H12); each needs its own "
             "weights in memory.", unit="models"))
    failover: bool = Field(default=False, **ask(
        "the service survives the loss of one machine at full load (N+1 on two machines at least); unset = yes for "
        "production serving (stage = production), no otherwise", flag="failover", question="Survive a machine loss",
        hint="A production endpoint keeps serving when a machine fails: N+1 replicas on two machines at least "
             "(002 Q4, S10)."))
    engine: EngineChoice = Field(
        default="auto", **ask(
            "serving engine: auto | llama.cpp | ollama | vllm | sglang | tensorrt-llm (PyTorch backend, "
            "trtllm-serve) | tensorrt-llm-engine (TensorRT engines on the C++ executor) | mlx; auto = by "
            "deployment: MLX on Apple silicon, llama.cpp on desk-side (consumer, workstation) cards, vLLM on "
            "servers (per option)", flag="engine", question="Serving engine",
            hint="Engines reach very different shares of the memory bandwidth: llama.cpp on an A100 about half of "
                 "vLLM's; automatic = MLX on Apple, llama.cpp on desk-side cards, vLLM on servers (engines.toml, "
                 "calibrated on published benchmarks).",
            choices={"auto": "Automatic (by hardware)", "llama.cpp": "llama.cpp / Ollama", "vllm": "vLLM",
                     "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM (trtllm-serve)",
                     "tensorrt-llm-engine": "TensorRT-LLM, built engines (C++ executor)", "mlx": "MLX (Apple)"}))

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_name(cls, v: object) -> object:
        """'Ollama', 'TRT-LLM', 'mlx-lm' → the engine ids (knowledge.engine_names); unknown names fail as usual."""
        return normal_engine_key(v) if isinstance(v, str) else v


class PrecisionAnswer(Section):
    weights: str = Field(default="bf16", **ask(
        "weight format, any of precisions.toml: fp32 bf16 fp8 int4 awq nf4 q4_k_m mxfp4 ...", flag="precision",
        question="Weights precision",
        hint="FP16 2 bytes, INT8 1, INT4 0.5 per parameter: quantization is the escape hatch (002/003, H7).",
        choices=WEIGHT_FORMATS, widget="select"))
    kv_cache: str = Field(default="fp16", **ask(
        "KV-cache format: fp16, bf16, fp8, int8", flag="kv_precision", question="KV cache precision",
        hint="KV cache = 2 × layers × KV heads × head dim × bytes × context × batch (002, S3).",
        choices={"fp16": "FP16", "bf16": "BF16", "fp8": "FP8", "int8": "INT8"}, widget="select"))
    context_tokens: int = Field(default=4096, **bound("context_tokens").field(), **ask(
        "context length in tokens", flag="context", question="Context length",
        hint={"inference": "KV cache grows with context × concurrency: plan for the maximum (002, W5).",
              "training": "Activations grow with sequence length × batch (002, S4).",
              "finetune": "Activations grow with sequence length × batch (002, S4)."}, unit="tokens"))
    batch_size: int = Field(default=1, **bound("batch").field(), **ask(
        "batch size (sequences per step)", flag="batch", question="Batch size",
        hint={"inference": "Batch-1 decode is bandwidth-bound; past ~32 sequences TFLOPS matter (002, S6/H4).",
              "training": "Activations scale with the micro-batch; checkpointing trades compute (002, S4).",
              "finetune": "Activations scale with the micro-batch; checkpointing trades compute (002, S4)."},
        unit="sequences"))


MAX_BUDGET_USD = bound("budget_usd").high
"""A budget above a trillion dollars is a typo (or 1e308), not a constraint: refused rather than printed."""


class BudgetAnswer(Section):
    capex_usd: float | None = Field(default=None, **bound("budget_usd").field(), **ask(
        "hardware (purchase) budget, USD", flag="capex", question="Purchase budget",
        hint="In the knowledge base one RTX 4090 costs {buy:nvidia-rtx-4090}, an L40S {buy:nvidia-l40s}, the "
             "eight GPUs of an H100 server {buy:nvidia-h100-sxm5*8} before the server itself (000, H14).",
        unit="USD", example="e.g. 50000 (empty: no limit)"))
    hourly_usd: float | None = Field(default=None, **bound("budget_usd").field(), **ask(
        "cloud budget per hour, USD", flag="hourly", question="Cloud budget per hour",
        hint="Specialist clouds undercut the big three; spot saves 60–90% (000, H16/H17).", unit="USD/h",
        example="e.g. 40 (empty: no limit)"))
    monthly_usd: float | None = Field(default=None, **bound("budget_usd").field(), **ask(
        "budget per month, USD", flag="monthly", question="Monthly budget",
        hint="Sustained serving over months: rent vs buy turns on utilization (002 Q6, H15).", unit="USD/month",
        example="e.g. 50 (empty: no limit)"))


class DeploymentAnswer(Section):
    where: Literal["cloud", "on_prem", "either"] = Field(default="either", **ask(
        "cloud | on_prem | either", flag="where", question="Where",
        hint="Above ~30–40% utilization over ~3 years buying wins; bursty work favours renting (002 Q6, H15).",
        choices={"cloud": "Rent in the cloud", "on_prem": "Buy (on premises)", "either": "Either: compare both"}))
    providers: list[str] = Field(default_factory=lambda: list(ALL_PROVIDERS), **ask(
        "cloud providers to consider, comma-separated: " + ",".join(ALL_PROVIDERS), flag="providers",
        question="Cloud providers",
        hint="Specialist clouds (Lambda, RunPod, …) are cheaper than the big three (000, H17).",
        choices={"aws": "AWS", "gcp": "Google Cloud", "azure": "Azure", "oracle": "Oracle Cloud",
                 "lambda": "Lambda", "runpod": "RunPod", "nebius": "Nebius", "coreweave": "CoreWeave",
                 "crusoe": "Crusoe", "tensorwave": "TensorWave", "vultr": "Vultr", "vast": "Vast.ai (marketplace)"}))
    utilization: float | None = Field(default=None, **bound("utilization").field(), **ask(
        "expected busy fraction (0.01-1), for rent vs buy; unset = from hours_per_month, or by stage",
        flag="utilization", question="Expected utilization",
        hint="The busy fraction decides rent vs buy (002 Q6, H15).",
        unit="0–1", example="e.g. 0.5 (empty: from hours a month, or 0.5 in production)"))
    hours_per_month: float | None = Field(default=None, ge=0.5, le=744, **ask(
        "hours a month the hardware is in use (rented, or busy when owned); unset = from utilization, or by stage",
        flag="hours", question="Hours a month in use",
        hint="Rentals bill the hours you use plus set-up per session; owned hardware costs the same idle or busy "
             "(002 Q6, H15).", unit="h/month", example="e.g. 20 (empty: 20 learning, 60 prototyping, 730 production)"))
    power_usd_per_kwh: float = Field(default=0.12, ge=0, le=10, **ask(
        "electricity price, USD per kWh", flag="power_price", question="Electricity price",
        hint="On-prem power costs are of the order of the hardware over its life (000, H20).", unit="USD/kWh"))
    pue: float = Field(default=1.3, ge=1, le=3, **ask("data-centre power usage effectiveness", flag="pue"))
    lifetime_years: float = Field(default=3.0, ge=0.25, le=15, **ask(
        "the decision's horizon: years the hardware (bought, reserved or rented) serves; a purchase is resold at its "
        "end", flag="lifetime_years", question="Horizon (years the decision covers)",
        hint="Options are ranked by what they cost over it: rent, or price + power + site − resale (seed 002 "
             "amortizes over 3 years)."))
    after_run: Literal["keep", "sell"] = Field(default="keep", **ask(
        "hardware bought for one training or fine-tuning run, once it ends: keep (the run costs its price; what it "
        "would resell for is shown beside) or sell (its used price at its age then, less selling costs, is taken "
        "off)", flag="after_run", question="Hardware bought for a run, when it ends",
        hint="A used part fetches a share of its price new that falls with its age from launch; hosts and network "
             "fetch scrap (002 Q6, H15).",
        choices={"keep": "Keep it", "sell": "Sell it"}))
    site_usd_per_kw_month: float | None = Field(default=None, ge=0, le=10_000, **ask(
        "what a kW of server-room capacity costs a month (space, power and cooling capacity; 0 for a room you "
        "already pay for); unset = the colocation rate of the knowledge base", flag="site_price",
        unit="USD/kW-month"))
    reservations: bool = Field(default=True, **ask(
        "consider reserved capacity, paid for its whole term: 1- and 3-year rates for serving, short-term reserved "
        "clusters (days to 6 months) for a training run; false when you will not commit", flag="reservations",
        question="Consider reservations",
        hint="A reservation costs 30-60% less than on-demand for steady serving, a short reserved cluster less than "
             "on-demand for a planned run; the whole term is paid even if the work stops."))
    spot: bool = Field(default=True, **ask(
        "consider spot/preemptible prices; unset = yes, except for production serving (on-demand capacity, never "
        "reclaimed)", flag="spot", question="Use spot / preemptible prices",
        hint="Spot capacity saves 60–90% but needs checkpointing (000, H16/W11); a production endpoint runs on "
             "capacity that is not reclaimed."))
    desk_side: bool = Field(default=False, **ask(
        "the hardware stays beside a desk, not in a server room or data centre (allows GeForce cards in "
        "production)", flag="desk_side"))
    allow_marketplace: bool = Field(default=True, **ask(
        "consider GPU marketplaces (not for sensitive data)", flag="marketplace"))
    sensitive_data: bool = Field(default=False, **ask(
        "the data is sensitive (no GPU marketplaces)", flag="sensitive_data", question="The data is sensitive",
        hint="GPU marketplaces only suit work that is not security-sensitive (000, H17)."))

    @field_validator("providers")
    @classmethod
    def _lower(cls, v: list[str]) -> list[str]:
        return [p.strip().lower() for p in v]


class FrameworkAnswer(Section):
    name: Literal["pytorch", "jax", "tensorflow", "other"] = Field(default="pytorch", **ask(
        "pytorch | jax | tensorflow | other", flag="framework", question="Framework",
        hint="PyTorch → NVIDIA first; JAX/TensorFlow at scale → TPUs; ROCm costs engineering time (000/004, H10).",
        choices={"pytorch": "PyTorch", "jax": "JAX", "tensorflow": "TensorFlow", "other": "Other"}))
    porting: bool = Field(default=True, **ask(
        "consider accelerators on a software stack the team does not run yet, their port priced in engineer-weeks; "
        "false: porting is out (they are ruled out)", flag="porting", question="Consider porting to another stack",
        hint="ROCm, TPU/XLA, Neuron, Gaudi and Metal cost engineer-weeks of porting, added to those options' total "
             "(000/004, H10)."))
    port_weeks: float | None = Field(default=None, ge=0, le=520, **ask(
        "engineer-weeks a port to another stack takes; unset = per stack and workload from the knowledge base "
        "(port_weeks_*)", flag="port_weeks", unit="weeks"))
    engineer_usd_per_week: float | None = Field(default=None, ge=0, le=100_000, **ask(
        "loaded cost of one ML engineer-week; unset = the knowledge base's (ml_engineer_loaded_usd_per_week)",
        flag="engineer_week", unit="USD/week"))


class ConstraintsAnswer(Section):
    datacenter_only: bool = Field(default=False, **ask("only data-centre parts", flag="datacenter_only"))
    ecc_required: bool = Field(default=False, **ask("only parts with ECC memory", flag="ecc_required"))
    vendors: list[str] = Field(default_factory=lambda: list(ALL_VENDORS), **ask(
        "accelerator vendors to consider, comma-separated: " + ",".join(ALL_VENDORS) + " (other: CPUs and "
        "unbranded parts)", flag="vendors", question="Vendors",
        hint="PyTorch runs first on NVIDIA; AMD, TPU, Trainium and Gaudi options cost porting time (000/004, H10).",
        choices={"nvidia": "NVIDIA", "amd": "AMD", "google": "Google (TPU)", "aws": "AWS (Trainium, Inferentia)",
                 "intel": "Intel (Gaudi)", "apple": "Apple silicon", "other": "Other (CPUs)"}))
    max_gpus: int | None = Field(default=None, **bound("gpus").field(), **ask(
        "most accelerators you would deploy; unset = as many as the job needs", flag="max_gpus",
        question="At most this many GPUs",
        hint="Multi-node jobs need InfiniBand-class networking between nodes (000, H21).", unit="GPUs",
        example="e.g. 64 (empty: as many as the job needs)"))

    @field_validator("vendors")
    @classmethod
    def _lower(cls, v: list[str]) -> list[str]:
        return [p.strip().lower() for p in v]


USER_LOAD_KEYS = ("sessions_per_user_per_day", "requests_per_session", "peak_to_average")
"""The assumptions that turn inference.daily_active_users into a request rate (settable per consultation)."""

AUTO_GPU = "auto"
"""`current.gpu = "auto"`: detect the GPUs of this machine before the consultation (see rules/inputs/current_gpu.py)."""


class CurrentAnswer(Section):
    """The GPUs the user already has, if any (also used by the low-utilization warning W8)."""

    gpu: str | None = Field(default=None, **ask(
        "the GPU you already have: a knowledge-base name, cpu (a laptop) or desktop cpu, or auto to detect this "
        "machine's", flag="current_gpu", question="GPUs you already have",
        hint="Hardware you own is the option to beat before buying or renting more: a GPU of the knowledge base, "
             "cpu (a laptop) or desktop cpu; left empty, the GPUs detected on this machine are used.",
        example="e.g. nvidia-rtx-4090, cpu (empty: none)", widget="text"))
    gpu_count: int | None = Field(default=None, ge=1, le=256, **ask(
        "how many of the GPU you already have", flag="current_gpu_count", question="How many of them",
        hint="A model that fits across the cards you have needs no new hardware at all.", unit="GPUs",
        example="e.g. 2 (empty: 1)"))
    gpu_memory_gb: float | None = Field(default=None, **bound("memory_gb").field(), **ask(
        "memory per GPU you have, GB (for a part the knowledge base does not know, or one sold in several memory "
        "sizes)", flag="current_gpu_memory"))
    gpu_name: str | None = Field(default=None, **ask("the name the machine reports (set by detection)", flag=None))
    detection: str | None = Field(default=None, **ask(
        'what detection found (set by current.gpu = "auto")', flag=None))
    gpu_utilization: float | None = Field(default=None, ge=0, le=1, **ask(
        "observed busy fraction of the GPU you have, 0-1", flag="current_utilization"))
    pc_slots: int = Field(default=0, ge=0, le=8, **ask(
        "free double-width PCIe slots in a desktop you already have, for cards you buy (no new computer needed); "
        "unset = 2 while learning or prototyping, else 0", flag="pc_slots", question="Free desktop PCIe slots",
        hint="A card for a PC you have costs only the card; more cards need a workstation or a server.",
        unit="slots", example="e.g. 1 (empty: 2 while learning or prototyping, else 0)"))


class Answers(Section):
    """All answers of one consultation."""

    workload: Workload = Field(default="inference", **ask(
        "training (from scratch) | finetune | inference", flag="workload", question="Workload",
        hint="Training is compute-bound and needs optimizer memory; serving is bandwidth-bound (002, S4/S6).",
        choices={"training": "Train a model from scratch", "finetune": "Fine-tune an existing model",
                 "inference": "Serve a model (inference)"}))
    stage: Stage = Field(default="production", **ask(
        "learning | prototyping | production", flag="stage", question="Stage",
        hint="Learning or prototyping rarely justifies buying GPUs: rent or use free notebooks (003/004, H13).",
        choices={"learning": "Learning", "prototyping": "Prototyping", "production": "Production"}))
    model: ModelAnswer = Field(default_factory=ModelAnswer)
    finetune: FinetuneAnswer = Field(default_factory=FinetuneAnswer)
    training: TrainingAnswer = Field(default_factory=TrainingAnswer)
    inference: InferenceAnswer = Field(default_factory=InferenceAnswer)
    precision: PrecisionAnswer = Field(default_factory=PrecisionAnswer)
    budget: BudgetAnswer = Field(default_factory=BudgetAnswer)
    deployment: DeploymentAnswer = Field(default_factory=DeploymentAnswer)
    framework: FrameworkAnswer = Field(default_factory=FrameworkAnswer)
    constraints: ConstraintsAnswer = Field(default_factory=ConstraintsAnswer)
    current: CurrentAnswer = Field(default_factory=CurrentAnswer)

    @model_validator(mode="after")
    def _consistent(self) -> Answers:
        given = self.model_fields_set
        if self.workload == "inference" and "training" in given and "tokens_b" in self.training.model_fields_set:
            raise ValueError("workload = \"inference\" contradicts training.tokens_b: training tokens only apply to "
                             "training or fine-tuning (remove [training] or change workload)")
        inf = self.inference
        if inf.daily_active_users is not None and inf.requests_per_minute is not None:
            raise ValueError("inference.daily_active_users and inference.requests_per_minute: give one (the request "
                             "rate is derived from the daily users)")
        if self.workload != "inference" and inf.daily_active_users is not None:
            raise ValueError(f"workload = \"{self.workload}\" contradicts inference.daily_active_users: users are "
                             "served by an inference workload (in a lifecycle file, a later [[phase]])")
        qlora = self.workload == "finetune" and self.finetune.method == "qlora"
        if qlora and "weights" in self.precision.model_fields_set:
            if self.precision.weights.lower() in {"fp32", "float32", "tf32"}:
                raise ValueError("finetune.method = \"qlora\" contradicts precision.weights = "
                                 f"\"{self.precision.weights}\": QLoRA keeps the base weights in 4-bit (nf4)")
        if self.workload == "training" and "finetune" in given and "method" in self.finetune.model_fields_set:
            if self.finetune.method != "full":
                raise ValueError(f"workload = \"training\" (from scratch) contradicts finetune.method = "
                                 f"\"{self.finetune.method}\": adapters only apply to fine-tuning")
        return self

    # --- derived views -------------------------------------------------------------------------------------------
    @property
    def method(self) -> Literal["full", "lora", "qlora", "none"]:
        """Training method: inference → none; training from scratch → full; fine-tuning → the chosen method."""
        if self.workload == "inference":
            return "none"
        return "full" if self.workload == "training" else self.finetune.method

    def flat(self) -> dict[str, Any]:
        """Every leaf answer as `section.key` → value (lists kept), in a stable order."""
        return dict(flatten_dotted(self.model_dump(mode="json")))

    def effective(self) -> dict[str, Any]:
        """Every leaf answer as the consultation applies it: given answers, else the default that depends on the
        other answers (`contextual_defaults`), else the field's default."""
        flat = self.flat()
        given = self.given_keys()
        implied = _implied(flat, given)
        return {k: (v if k in given or k not in implied else implied[k]) for k, v in flat.items()}

    def implied(self) -> dict[str, Any]:
        """The defaults the given answers imply for the keys not given (`contextual_defaults`)."""
        return _implied(self.flat(), self.given_keys())

    def with_changes(self, changes: Mapping[str, Any], where: str = "answers") -> Answers:
        """These answers with some changed, by dotted key (`current.gpu`; None: no longer given), validated as an
        answers file is (InputError names the field). Detection, a lifecycle's reuse of a purchase, the feasibility
        re-plans and the what-if change answers this way, never by rebuilding them by hand."""
        data = self.given()
        for dotted, value in changes.items():
            put_dotted(data, dotted, value)
        return parse_answers(data, where)

    def given_keys(self) -> set[str]:
        """Dotted keys of the answers the user gave."""
        return {k for k, _ in flatten_dotted(self.given())}

    def given(self) -> dict[str, Any]:
        """Only what the user gave (no defaults): what saved answers files and reports embed."""
        return self.model_dump(mode="json", exclude_unset=True, exclude_none=True)

    def to_toml(self) -> str:
        """The given answers as an answers file that `gpuadvisor --answers FILE` reopens."""
        import tomli_w

        header = "# gpuadvisor answers file: reopen with `gpuadvisor --answers FILE` (format: see README)\n"
        return header + tomli_w.dumps(self.given())

    def defaults_applied(self) -> list[str]:
        """Dotted names of the answers the user did not give (so a default was used), in a stable order."""
        return sorted(_unset(self, ""))


@dataclass(frozen=True)
class AnswerField:
    """One leaf of the answers, with the words every front end uses for it (see `ask`)."""

    key: str
    """Dotted `section.key`, as in the answers file and the JSON."""
    kind: str
    """What the value is: choice, bool, int, float, str or list (of strings)."""
    values: tuple[Any, ...]
    """The allowed values of a choice (from its Literal type), else empty."""
    default: Any
    description: str
    flag: str | None
    question: str | None
    hint: str | Mapping[str, str]
    unit: str
    example: str
    choices: Mapping[str, str]
    widget: str | None
    count: bool
    optional: bool
    """None is allowed (the answer may stay unset)."""

    @property
    def option(self) -> str | None:
        """The command-line option, `--rpm`."""
        return f"--{self.flag.replace('_', '-')}" if self.flag else None


def _kind(annotation: Any) -> tuple[str, tuple[Any, ...], bool]:
    args = get_args(annotation)
    optional = type(None) in args
    if optional:
        annotation = next(a for a in args if a is not type(None))
    if get_origin(annotation) is Literal:
        return "choice", get_args(annotation), optional
    if get_origin(annotation) is list:
        return "list", (), optional
    return {bool: "bool", int: "int", float: "float"}.get(annotation, "str"), (), optional


def answer_fields() -> list[AnswerField]:
    """Every leaf answer with its metadata, in the answers file's order: the one vocabulary of answers."""
    out = []
    for section, info in Answers.model_fields.items():
        model = info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            leaves = [(f"{section}.{name}", leaf) for name, leaf in model.model_fields.items()]
        else:
            leaves = [(section, info)]
        for key, leaf in leaves:
            extra = leaf.json_schema_extra if isinstance(leaf.json_schema_extra, dict) else {}
            kind, values, optional = _kind(leaf.annotation)
            default = leaf.get_default(call_default_factory=True)
            out.append(AnswerField(
                key=key, kind=kind, values=values, default=default, description=leaf.description or "",
                flag=extra.get("flag"), question=extra.get("question"), hint=extra.get("hint", ""),  # type: ignore[arg-type]
                unit=str(extra.get("unit", "")), example=str(extra.get("example", "")),
                choices=dict(extra.get("choices", {})), widget=extra.get("widget"),  # type: ignore[arg-type]
                count=bool(extra.get("count")), optional=optional))
    return out


QLORA_BASE_FORMAT = "nf4"
PRODUCTION_SERVING_FORMAT = "fp8"
"""Production serving's weights where the parts run FP8 (Hopper, Ada, Blackwell, MI300, Gaudi): NVIDIA NIM's H100
profiles of Llama 3.3 70B are FP8; a part without FP8 serves the same model in BF16
(rules/consultation/derivations.py)."""
LOCAL_SERVING_FORMAT = "q4_k_m"
"""A learner's or a hobbyist's local model: the 4-bit GGUF K-quant Ollama, LM Studio and llama.cpp serve by
default (Ollama's library tags default to q4_K_M)."""
HOBBY_PC_SLOTS = 2
"""Learners and hobbyists buy cards for the desktop they have: an ATX board takes two double-width cards."""
PRODUCTION_CONCURRENCY = 32
"""Requests in flight a stated production service is sized for when no load is given (no request rate, daily users,
concurrency or batch): seed 002's own sizing of a production 70B service ("serving 32 concurrent requests with
4096-token context", W5: plan for the peak, not the average). A service is never sized for one request in flight;
stating the load replaces this figure, and the report says it was assumed."""
LOAD_KEYS = ("inference.requests_per_minute", "inference.daily_active_users", "inference.concurrent_requests",
             "precision.batch_size")
"""Answers that state a serving load: with none of them, production assumes `PRODUCTION_CONCURRENCY`."""
INTERACTIVE_MIN_TOKENS_PER_S = 10.0
"""Production serving's default per-user streaming floor: a little faster than people read (about 4-5 words, ~6-7
tokens, a second), so the text never stalls on screen. Set inference.min_tokens_per_s_per_user for batch work."""


IMPLIED_WHY = {
    "precision.weights": "the format such deployments run by default",
    "current.pc_slots": "learning or prototyping: cards go in the desktop you have",
    "deployment.spot": "production serving runs on capacity that is not reclaimed",
    "inference.failover": "production serving survives a machine loss (N+1)",
    "inference.min_tokens_per_s_per_user": "production serving: a stream a little faster than people read",
    "inference.concurrent_requests": "assumed: production with no stated load, seed 002's sizing example",
    "inference.input_tokens": "the default request's prompt, within the stated context",
    "inference.output_tokens": "the default request's output, within the stated context",
}
"""Why `contextual_defaults` sets each key (shown with the default in every report)."""


def contextual_defaults(flat: Mapping[str, Any], native_weights: str | None = None) -> dict[str, Any]:
    """Defaults that depend on other answers, by dotted key: QLoRA's frozen base is 4-bit NF4, not BF16; a model
    served as published in a format of its own (`native_weights`: gpt-oss's MXFP4 experts) is sized in it; a
    stated production service is planned in FP8 (each option on a part without FP8 in BF16), a learner's or a
    hobbyist's local model in the 4-bit GGUF K-quant local engines run; a learner's or hobbyist's cards go in the
    desktop they have; production serving is a service level — on-demand capacity (no spot), failover (N+1) and a
    per-user speed floor — and, with no load stated, `PRODUCTION_CONCURRENCY` requests in flight.

    `flat` holds the answers GIVEN so far as `section.key` → value (no field defaults). Resolution, the consultation
    and the questionnaire all use this, so the default a user is shown is the default the consultation applies.
    """
    out: dict[str, Any] = {}
    serving = flat.get("workload", "inference") == "inference"
    if flat.get("workload") == "finetune" and flat.get("finetune.method") == "qlora":
        out["precision.weights"] = QLORA_BASE_FORMAT
    elif native_weights and serving:
        out["precision.weights"] = native_weights
    elif serving and flat.get("stage") == "production":
        out["precision.weights"] = PRODUCTION_SERVING_FORMAT
    elif serving and (flat.get("stage") == "learning"
                      or (flat.get("stage") == "prototyping" and flat.get("deployment.where") == "on_prem")):
        out["precision.weights"] = LOCAL_SERVING_FORMAT
    if flat.get("stage") in ("learning", "prototyping"):
        out["current.pc_slots"] = HOBBY_PC_SLOTS
    # the service level of production follows a stated stage: unstated, the consultation sizes for always-on use
    # (730 h a month) but does not impose failover, a speed floor or on-demand capacity
    production_serving = flat.get("workload", "inference") == "inference" and flat.get("stage") == "production"
    if production_serving:
        out["deployment.spot"] = False
        out["inference.failover"] = True
        out["inference.min_tokens_per_s_per_user"] = INTERACTIVE_MIN_TOKENS_PER_S
        if not any(key in flat for key in LOAD_KEYS):  # never sized for one request in flight
            out["inference.concurrent_requests"] = PRODUCTION_CONCURRENCY
    context = _count(flat.get("precision.context_tokens"))
    if serving and context is not None:
        out.update(request_within_context(context, _count(flat.get("inference.input_tokens")),
                                          _count(flat.get("inference.output_tokens"))))
    return out


def _count(value: Any) -> int | None:
    """A token count as given: an int, or the text a form holds while it is typed ("2,048"); None when it is not one
    yet (the form says why)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 1 else None
    if isinstance(value, str):
        text = value.replace(",", "").replace("_", "").strip()
        return int(text) if text.isdigit() and int(text) >= 1 else None
    return None


def request_within_context(context: int, prompt: int | None, output: int | None) -> dict[str, int]:
    """The request's token counts the user did not give, when their defaults would not fit the stated context (a
    default never contradicts what was typed): a context shorter than the default request (500 + 200 tokens) holds
    the default request's share of prompt and output (llama-bench's `tg128` is `--context 128`); with one of the two
    given, the other takes what the context leaves (at least 1 token, never more than its default)."""
    fields = InferenceAnswer.model_fields
    p_default = int(fields["input_tokens"].default)
    o_default = int(fields["output_tokens"].default)
    out: dict[str, int] = {}
    if prompt is None and output is None:
        if p_default + o_default > context:
            out["inference.input_tokens"] = p = max(1, round(context * p_default / (p_default + o_default)))
            out["inference.output_tokens"] = max(1, context - p)
    elif prompt is None and output is not None and p_default + output > context:
        out["inference.input_tokens"] = max(1, context - output)
    elif output is None and prompt is not None and prompt + o_default > context:
        out["inference.output_tokens"] = max(1, context - prompt)
    return out


def assumed_load(given: Mapping[str, Any]) -> int | None:
    """The requests in flight a production service was sized for because no load was stated (None when a load was
    given, or the service is not a stated production one); `given` is the answers as given (nested tables)."""
    value = contextual_defaults(dict(flatten_dotted(given))).get("inference.concurrent_requests")
    return int(value) if value is not None else None


def _implied(flat: Mapping[str, Any], given: set[str]) -> dict[str, Any]:
    return {k: v for k, v in contextual_defaults({k: flat[k] for k in given if k in flat}).items() if k not in given}


def flatten_dotted(d: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Nested tables as dotted keys: {"inference": {"engine": "vllm"}} → ("inference.engine", "vllm"). The one
    flatten of answers (reports, the questionnaire's state and the what-if read answers through it)."""
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            yield from flatten_dotted(v, key + ".")
        else:
            yield key, v


def put_dotted(d: dict[str, Any], dotted: str, value: Any) -> None:
    """Set `section.key` in nested tables (None removes it, and a table the removal leaves empty: an empty
    [budget] is not an answer)."""
    *parents, leaf = dotted.split(".")
    tables = [d]
    for p in parents:
        nxt = tables[-1].get(p)
        if not isinstance(nxt, dict):
            if value is None:
                return
            nxt = tables[-1][p] = {}
        tables.append(nxt)
    if value is not None:
        tables[-1][leaf] = value
        return
    tables[-1].pop(leaf, None)
    for parent, name, table in zip(reversed(tables[:-1]), reversed(parents), reversed(tables[1:]), strict=True):
        if table:
            break
        del parent[name]


def _unset(m: BaseModel, prefix: str) -> Iterator[str]:
    for name in type(m).model_fields:
        value = getattr(m, name)
        if isinstance(value, BaseModel):
            if name in m.model_fields_set:
                yield from _unset(value, f"{prefix}{name}.")
            else:
                yield from (f"{prefix}{name}.{k}" for k in _leaf_names(value))
        elif name not in m.model_fields_set:
            yield f"{prefix}{name}"


def _leaf_names(m: BaseModel) -> Iterator[str]:
    for name in type(m).model_fields:
        value = getattr(m, name)
        if isinstance(value, BaseModel):
            yield from (f"{name}.{k}" for k in _leaf_names(value))
        else:
            yield name


def describe_validation_error(exc: ValidationError, where: str = "answers", text: str | None = None) -> str:
    """One readable line per problem, naming the table and key (`precision.context_tokens: ...`) and, given the
    TOML `text`, the line; the first few problems and a count of the rest (10,000 bad elements are not listed)."""
    lines = []
    errors = exc.errors()
    for err in errors[:MAX_PROBLEMS]:
        parts = [str(p) for p in err["loc"]]
        loc = shorten(".".join(parts))
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; see the README for the answers format)"
        line = find_line(text, None, 0, parts) if text is not None and parts else None
        here = f"{where}:{line}" if line else where
        lines.append(f"{here}: {loc}: {msg}" if loc else f"{here}: {msg}")
    if len(errors) > MAX_PROBLEMS:
        lines.append(f"{where}: ... and {len(errors) - MAX_PROBLEMS:,} more problems")
    return "\n".join(lines)


def parse_answers(data: dict[str, Any], where: str = "answers", text: str | None = None) -> Answers:
    """Validate a dict (from TOML, JSON or flags) into Answers, raising InputError that names table and key (and
    the line, given the TOML `text` it was read from)."""
    try:
        return Answers.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, where, text)) from None


def load_answers(path: Path) -> Answers:
    """Read an answers TOML file, or the `answers` object embedded in a saved JSON report."""
    data, text = read_answers_source(path)
    if "phase" in data:
        raise InputError(f"{path}: phase: this file lists several workloads ([[phase]] tables); open it with "
                         "`gpuadvisor recommend --answers FILE` or the TUI, which plan lifecycles")
    return parse_answers(data, str(path), text)


def read_answers_data(path: Path) -> dict[str, Any]:
    """The raw answers of a TOML file, or of the `answers` object embedded in a saved JSON report (unvalidated)."""
    return read_answers_source(path)[0]


def read_answers_source(path: Path) -> tuple[dict[str, Any], str | None]:
    """`read_answers_data` and the TOML text it was read from (None for a JSON report), so that errors can name
    the line."""
    text = read_text_file(path, what="answers file", max_bytes=ANSWERS_MAX_BYTES)
    if path.suffix.lower() == ".json":
        import json

        try:
            doc = loads_json(text, str(path), finite=True)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("answers"), dict):
            raise InputError(f"{path}: a JSON answers source must be a gpuadvisor report with an 'answers' object")
        answers: dict[str, Any] = doc["answers"]
        return answers, None
    try:
        data = loads_toml(text, str(path))
    except tomllib.TOMLDecodeError as exc:
        message, line = split_syntax_error(str(exc))
        raise InputError(f"{path}:{line}: not valid TOML: {message}" if line else f"{path}: not valid TOML: {message}"
                         ) from None
    return data, text
