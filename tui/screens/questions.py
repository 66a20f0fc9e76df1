"""The questionnaire as data: steps, questions, skip logic and the "why this matters" line of each question.

One generic screen renders these specs (see `questionnaire.py`); adding a question means adding a `Question` here.
Each `why` line cites the seed document and the HEURISTICS.md id it comes from, so the user can look it up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

Kind = Literal["radio", "select", "int", "float", "bool", "model", "multi", "text"]
Raw = Mapping[str, object]
"""What the user entered, by dotted answers key: text for number fields, the value for choices and switches."""

TEXT_KINDS: frozenset[str] = frozenset({"int", "float", "model"})
"""Number and model entries kept as typed text (`text` questions are free text and kept as they are)."""


@dataclass(frozen=True)
class Choice:
    value: str | int
    label: str


def _always(raw: Raw) -> bool:
    return True


def workload_of(raw: Raw) -> str:
    """The chosen workload (the answers' default when none was chosen yet)."""
    value = raw.get("workload", "inference")
    return value if isinstance(value, str) else "inference"


def _inference(raw: Raw) -> bool:
    return workload_of(raw) == "inference"


def _trains(raw: Raw) -> bool:
    return workload_of(raw) != "inference"


def _finetune(raw: Raw) -> bool:
    return workload_of(raw) == "finetune"


def _adapter(raw: Raw) -> bool:
    return _finetune(raw) and raw.get("finetune.method", "lora") != "full"


def _where(raw: Raw) -> str:
    value = raw.get("deployment.where", "either")
    return value if isinstance(value, str) else "either"


def _may_rent(raw: Raw) -> bool:
    return _where(raw) != "on_prem"


def _may_buy(raw: Raw) -> bool:
    return _where(raw) != "cloud"


@dataclass(frozen=True)
class Question:
    """One answer to ask for. `key` is the dotted answers key (`model` stands for model.name|params_b|config)."""

    key: str
    label: str
    kind: Kind
    why: str | Mapping[str, str]
    """One line: why the answer matters, with its source (document, heuristic id); per workload when a mapping."""
    choices: tuple[Choice, ...] = ()
    unit: str = ""
    example: str = ""
    """Shown as the placeholder of an optional number field that has no default."""
    applies: Callable[[Raw], bool] = _always

    @property
    def input_id(self) -> str:
        return "q-" + self.key.replace(".", "-").replace("_", "-")

    def why_for(self, raw: Raw) -> str:
        if isinstance(self.why, str):
            return self.why
        return self.why.get(workload_of(raw), next(iter(self.why.values())))


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    short: str
    intro: str
    questions: tuple[Question, ...] = ()
    applies: Callable[[Raw], bool] = _always
    review: bool = False

    def visible(self, raw: Raw) -> list[Question]:
        """The questions of this step that apply to the answers so far (the skip logic)."""
        return [q for q in self.questions if q.applies(raw)]


WEIGHTS = (
    Choice("bf16", "BF16 (2 bytes/param)"),
    Choice("fp16", "FP16 (2 bytes/param)"),
    Choice("fp8", "FP8 (1 byte/param, Hopper/Ada+)"),
    Choice("int8", "INT8 (1 byte/param)"),
    Choice("int4", "INT4 (~0.5 byte/param)"),
    Choice("awq", "AWQ 4-bit"),
    Choice("gptq", "GPTQ 4-bit"),
    Choice("nf4", "NF4 (QLoRA, bitsandbytes)"),
    Choice("q4_k_m", "GGUF Q4_K_M (llama.cpp)"),
    Choice("fp4", "FP4 (Blackwell)"),
    Choice("mxfp4", "MXFP4 (4.25 bits; gpt-oss as published)"),
    Choice("nvfp4", "NVFP4 (4.5 bits, Blackwell)"),
    Choice("fp32", "FP32 (4 bytes/param)"),
)
KV_CACHE = (Choice("fp16", "FP16"), Choice("bf16", "BF16"), Choice("fp8", "FP8"), Choice("int8", "INT8"))
PROVIDERS = (
    Choice("aws", "AWS"), Choice("gcp", "Google Cloud"), Choice("azure", "Azure"), Choice("oracle", "Oracle Cloud"),
    Choice("lambda", "Lambda"), Choice("runpod", "RunPod"), Choice("nebius", "Nebius"),
    Choice("coreweave", "CoreWeave"), Choice("crusoe", "Crusoe"), Choice("tensorwave", "TensorWave"),
    Choice("vultr", "Vultr"),
    Choice("vast", "Vast.ai (marketplace)"),
)

STEPS: tuple[Step, ...] = (
    Step(
        "workload", "Workload", "Workload", "What will the hardware do?",
        (
            Question("workload", "Workload", "radio",
                     "Training is compute-bound and needs optimizer memory; serving is bandwidth-bound (002, S4/S6).",
                     (Choice("training", "Train a model from scratch"),
                      Choice("finetune", "Fine-tune an existing model"),
                      Choice("inference", "Serve a model (inference)"))),
            Question("stage", "Stage", "radio",
                     "Learning or prototyping rarely justifies buying GPUs: rent or use free notebooks (003/004, H13).",
                     (Choice("learning", "Learning"), Choice("prototyping", "Prototyping"),
                      Choice("production", "Production"))),
            Question("finetune.method", "Fine-tuning method", "radio",
                     "QLoRA keeps 4-bit base weights: a 7B model fits one 24 GB card (000/002, S5).",
                     (Choice("full", "Full fine-tuning"), Choice("lora", "LoRA adapters"),
                      Choice("qlora", "QLoRA (4-bit base)")), applies=_finetune),
            Question("finetune.lora_rank", "Adapter rank", "int",
                     "The rank sets the adapter's trainable parameters, a small share of memory (002, S5).",
                     applies=_adapter),
        ),
    ),
    Step(
        "model", "Model", "Model",
        "Which model? A knowledge-base name, a bare size in billions, or a path to config.json.",
        (
            Question("model", "Model", "model",
                     "Weights = parameters × bytes per parameter; every other estimate scales from it (002/003, S1).",
                     example="llama-3.1-70b, 70, or ./config.json"),
        ),
    ),
    Step(
        "precision", "Precision & context", "Precision",
        "How the numbers are stored, and how much text each request holds.",
        (
            Question("precision.weights", "Weights precision", "select",
                     "FP16 2 bytes, INT8 1, INT4 0.5 per parameter: quantization is the escape hatch (002/003, H7).",
                     WEIGHTS),
            Question("precision.kv_cache", "KV cache precision", "select",
                     "KV cache = 2 × layers × KV heads × head dim × bytes × context × batch (002, S3).",
                     KV_CACHE, applies=_inference),
            Question("precision.context_tokens", "Context length", "int",
                     {"inference": "KV cache grows with context × concurrency: plan for the maximum (002, W5).",
                      "training": "Activations grow with sequence length × batch (002, S4).",
                      "finetune": "Activations grow with sequence length × batch (002, S4)."},
                     unit="tokens"),
            Question("precision.batch_size", "Batch size", "int",
                     {"inference": "Batch-1 decode is bandwidth-bound; past ~32 sequences TFLOPS matter (002, S6/H4).",
                      "training": "Activations scale with the micro-batch; checkpointing trades compute (002, S4).",
                      "finetune": "Activations scale with the micro-batch; checkpointing trades compute (002, S4)."},
                     unit="sequences"),
        ),
    ),
    Step(
        "targets", "Targets", "Targets", "What the hardware must deliver.",
        (
            Question("inference.requests_per_minute", "Requests per minute", "float",
                     "Requests/min × tokens per request → tokens/s needed, plus burst headroom (002 Q4, S10).",
                     unit="req/min", example="e.g. 600 (empty: no throughput target; each option's capacity is "
                                             "shown)", applies=_inference),
            Question("inference.input_tokens", "Input tokens per request", "int",
                     "Long prompts raise prefill compute and the time to first token (002, S7).",
                     unit="tokens", applies=_inference),
            Question("inference.output_tokens", "Output tokens per request", "int",
                     "Output is generated token by token: it sets the bandwidth bill (002, S6).",
                     unit="tokens", applies=_inference),
            Question("inference.concurrent_requests", "Peak concurrent requests", "int",
                     "Peak concurrency × context sets the KV cache, not the average (002, W5).",
                     example="e.g. 16 (empty: derived from requests/min)", applies=_inference),
            Question("inference.latency_p95_s", "Latency SLA, p95", "float",
                     "The latency SLA caps how many requests can share one GPU (002 Q4, S10).",
                     unit="s", example="e.g. 10 (empty: no SLA)", applies=_inference),
            Question("inference.min_tokens_per_s_per_user", "Minimum tokens/s per user", "float",
                     "Per-user speed is bounded by bandwidth ÷ bytes read per token (002, S6).",
                     unit="tok/s", example="e.g. 20 (empty: no floor)", applies=_inference),
            Question("inference.engine", "Serving engine", "radio",
                     "Engines reach very different shares of the memory bandwidth: llama.cpp on an A100 about "
                     "half of vLLM's; automatic = MLX on Apple, llama.cpp on desk-side cards, vLLM on servers "
                     "(engines.toml, calibrated on published benchmarks).",
                     (Choice("auto", "Automatic (by hardware)"), Choice("llama.cpp", "llama.cpp / Ollama"),
                      Choice("vllm", "vLLM"), Choice("sglang", "SGLang"), Choice("tensorrt-llm", "TensorRT-LLM"),
                      Choice("mlx", "MLX (Apple)")), applies=_inference),
            Question("training.tokens_b", "Training tokens", "float",
                     "Training compute ≈ 6 × parameters × tokens (000, S8).",
                     unit="billion", example="e.g. 2 (billion tokens)", applies=_trains),
            Question("training.deadline_days", "Deadline", "float",
                     "Time = compute ÷ (GPUs × peak × utilization): the deadline sets the GPU count (000, S8).",
                     unit="days", applies=_trains),
            Question("training.optimizer", "Optimizer", "radio",
                     "Mixed-precision AdamW holds ~16–18 bytes per parameter before activations (000/002, S4, W2).",
                     (Choice("adamw", "AdamW"), Choice("adam8bit", "8-bit Adam"), Choice("sgd", "SGD")),
                     applies=_trains),
            Question("training.checkpointing", "The job saves checkpoints", "bool",
                     "Spot capacity saves 60–90% but needs checkpoints to survive preemption (000, H16/W11).",
                     applies=_trains),
        ),
    ),
    Step(
        "budget", "Budget", "Budget", "Leave empty what does not limit you.",
        (
            Question("budget.capex_usd", "Purchase budget", "float",
                     "About $2k buys one RTX 4090-class card; $1M+ an 8×H100 node (000, H14).",
                     unit="USD", example="e.g. 50000 (empty: no limit)", applies=_may_buy),
            Question("budget.hourly_usd", "Cloud budget per hour", "float",
                     "Specialist clouds undercut the big three; spot saves 60–90% (000, H16/H17).",
                     unit="USD/h", example="e.g. 40 (empty: no limit)", applies=_may_rent),
            Question("budget.monthly_usd", "Monthly budget", "float",
                     "Sustained serving over months: rent vs buy turns on utilization (002 Q6, H15).",
                     unit="USD/month", example="e.g. 50 (empty: no limit)"),
        ),
    ),
    Step(
        "deployment", "Deployment & framework", "Deploy", "Where it runs and what software it must support.",
        (
            Question("deployment.where", "Where", "radio",
                     "Above ~30–40% utilization over ~3 years buying wins; bursty work favours renting (002 Q6, H15).",
                     (Choice("cloud", "Rent in the cloud"), Choice("on_prem", "Buy (on premises)"),
                      Choice("either", "Either: compare both"))),
            Question("deployment.hours_per_month", "Hours a month in use", "float",
                     "Rentals bill the hours you use plus set-up per session; owned hardware costs the same idle or "
                     "busy (002 Q6, H15).", unit="h/month",
                     example="e.g. 20 (empty: 20 learning, 60 prototyping, 730 production)"),
            Question("deployment.utilization", "Expected utilization", "float",
                     "The busy fraction decides rent vs buy (002 Q6, H15).", unit="0–1",
                     example="e.g. 0.5 (empty: from hours a month, or 0.5 in production)", applies=_may_buy),
            Question("deployment.spot", "Use spot / preemptible prices", "bool",
                     "Spot capacity saves 60–90% but needs checkpointing (000, H16/W11).", applies=_may_rent),
            Question("deployment.sensitive_data", "The data is sensitive", "bool",
                     "GPU marketplaces only suit work that is not security-sensitive (000, H17).", applies=_may_rent),
            Question("deployment.providers", "Cloud providers", "multi",
                     "Specialist clouds (Lambda, RunPod, …) are cheaper than the big three (000, H17).",
                     PROVIDERS, applies=_may_rent),
            Question("deployment.power_usd_per_kwh", "Electricity price", "float",
                     "On-prem power costs are of the order of the hardware over its life (000, H20).",
                     unit="USD/kWh", applies=_may_buy),
            Question("framework.name", "Framework", "radio",
                     "PyTorch → NVIDIA first; JAX/TensorFlow at scale → TPUs; ROCm costs engineering time "
                     "(000/004, H10).",
                     (Choice("pytorch", "PyTorch"), Choice("jax", "JAX"), Choice("tensorflow", "TensorFlow"),
                      Choice("other", "Other"))),
            Question("constraints.max_gpus", "At most this many GPUs", "int",
                     "Multi-node jobs need InfiniBand-class networking between nodes (000, H21).", unit="GPUs",
                     example="e.g. 64 (empty: as many as the job needs)"),
            Question("current.gpu", "GPUs you already have", "text",
                     "Hardware you own is the option to beat before buying or renting more; left empty, the GPUs "
                     "detected on this machine are used.",
                     example="e.g. nvidia-rtx-4090 (empty: none)"),
            Question("current.gpu_count", "How many of them", "int",
                     "A model that fits across the cards you have needs no new hardware at all.",
                     unit="GPUs", example="e.g. 2 (empty: 1)"),
        ),
    ),
    Step("review", "Review", "Review", "Check the answers, then get the results.", review=True),
)

QUESTIONS: dict[str, Question] = {q.key: q for step in STEPS for q in step.questions}


def applicable_steps(raw: Raw) -> list[Step]:
    """Steps that have at least one applicable question (and the review)."""
    return [s for s in STEPS if s.review or (s.applies(raw) and s.visible(raw))]
