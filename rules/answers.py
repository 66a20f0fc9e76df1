"""The consultation's input: the user's answers, validated, with every default made visible.

An answers file is TOML (see README). Every field has a default so a partial file works, but the defaults that were
applied are listed in every output (`defaults_applied`): the advisor never decides silently.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.files import ANSWERS_MAX_BYTES, read_text_file

Workload = Literal["training", "finetune", "inference"]
Stage = Literal["learning", "prototyping", "production"]
ALL_PROVIDERS = ["aws", "gcp", "azure", "oracle", "lambda", "runpod", "nebius", "coreweave", "crusoe", "tensorwave",
                 "vultr", "vast"]
ALL_VENDORS = ["nvidia", "amd", "google", "aws", "intel", "apple", "other"]


class Section(BaseModel):
    """A table of the answers file: unknown keys are errors (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelAnswer(Section):
    """Which model: a knowledge-base name (matched loosely), a bare size in billions, or a local config.json."""

    name: str | None = Field(default=None, description="knowledge-base model, e.g. llama-3.1-70b")
    params_b: float | None = Field(default=None, gt=0, le=100_000, description="bare size in billions of parameters")
    config: str | None = Field(default=None, description="path to a Hugging Face config.json")

    @model_validator(mode="after")
    def _one_source(self) -> ModelAnswer:
        given = [k for k in ("name", "params_b", "config") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of model.name, model.params_b, model.config (got {', '.join(given)})")
        return self


class FinetuneAnswer(Section):
    method: Literal["full", "lora", "qlora"] = "lora"
    lora_rank: int = Field(default=16, ge=1, le=4096)


class TrainingAnswer(Section):
    tokens_b: float | None = Field(default=None, ge=1e-6, le=1_000_000, description="training tokens, billions")
    deadline_days: float = Field(default=30.0, ge=0.01, le=3650, description="days the run may take (≥ 15 min)")
    optimizer: Literal["adamw", "sgd", "adam8bit"] = "adamw"
    zero_stage: Literal["auto", 0, 1, 2, 3] = "auto"
    gradient_checkpointing: bool = True
    checkpointing: bool = Field(default=True,
                                description="the job saves checkpoints (needed to survive spot preemption)")


class InferenceAnswer(Section):
    requests_per_minute: float | None = Field(
        default=None, ge=0.001, le=10_000_000,
        description="average request rate; unset = no throughput target (each option's capacity is reported)")
    input_tokens: int = Field(default=500, ge=1, le=10_000_000)
    output_tokens: int = Field(default=200, ge=1, le=10_000_000)
    concurrent_requests: int | None = Field(default=None, ge=1, le=1_000_000)
    latency_p95_s: float | None = Field(default=None, gt=0, le=86_400)
    min_tokens_per_s_per_user: float | None = Field(default=None, gt=0, le=100_000)
    ttft_max_s: float | None = Field(default=None, gt=0, le=3600)
    models_per_gpu: int = Field(default=1, ge=1, le=64, description="distinct models of this size to host side by side "
                                                                  "on the same accelerators")
    failover: bool = Field(
        default=False, description="the service survives the loss of one machine at full load (N+1 on two machines at "
                                   "least); unset = yes for production serving, no otherwise")
    engine: Literal["auto", "llama.cpp", "ollama", "vllm", "sglang", "tensorrt-llm", "mlx"] = Field(
        default="auto", description="serving engine; auto = by deployment: MLX on Apple silicon, llama.cpp on "
                                    "desk-side (consumer, workstation) cards, vLLM on servers (per option)")


    @field_validator("engine", mode="before")
    @classmethod
    def _engine_name(cls, v: object) -> object:
        """'Ollama', 'TRT-LLM', 'mlx-lm' → the engine ids (rules.serving.ALIASES); unknown names fail as usual."""
        if not isinstance(v, str):
            return v
        from gpuadvisor.rules.serving import ALIASES, ENGINE_CHOICES

        key = v.strip().lower().replace(" ", "-").replace("_", "-")
        return key if key in ENGINE_CHOICES else ALIASES.get(key, key)


class PrecisionAnswer(Section):
    weights: str = Field(default="bf16", description="any format of precisions.toml: fp32 bf16 fp8 int4 awq nf4 ...")
    kv_cache: str = "fp16"
    context_tokens: int = Field(default=4096, ge=1, le=10_000_000)
    batch_size: int = Field(default=1, ge=1, le=1_000_000)


class BudgetAnswer(Section):
    capex_usd: float | None = Field(default=None, gt=0)
    hourly_usd: float | None = Field(default=None, gt=0)
    monthly_usd: float | None = Field(default=None, gt=0)


class DeploymentAnswer(Section):
    where: Literal["cloud", "on_prem", "either"] = "either"
    providers: list[str] = Field(default_factory=lambda: list(ALL_PROVIDERS))
    utilization: float | None = Field(default=None, ge=0.01, le=1,
                                      description="expected busy fraction (0.01-1), for rent vs buy; unset = from "
                                                  "hours_per_month, or by stage")
    hours_per_month: float | None = Field(default=None, ge=0.5, le=744,
                                          description="hours a month the hardware is in use (rented, or busy when "
                                                      "owned); unset = from utilization, or by stage")
    power_usd_per_kwh: float = Field(default=0.12, ge=0, le=10)
    pue: float = Field(default=1.3, ge=1, le=3, description="data-centre power usage effectiveness")
    lifetime_years: float = Field(default=3.0, ge=0.25, le=15, description="years the hardware is used")
    site_usd_per_kw_month: float | None = Field(
        default=None, ge=0, le=10_000, description="what a kW of server-room capacity costs a month (space, power and "
                                                   "cooling capacity; 0 for a room you already pay for); unset = the "
                                                   "colocation rate of the knowledge base")
    spot: bool = Field(default=True, description="consider spot/preemptible prices; unset = yes, except for "
                                                 "production serving (on-demand capacity, never reclaimed)")
    desk_side: bool = Field(default=False, description="the hardware stays beside a desk (not in a server room or "
                                                       "data centre): allows GeForce cards in production")
    allow_marketplace: bool = Field(default=True, description="consider GPU marketplaces (not for sensitive data)")
    sensitive_data: bool = False

    @field_validator("providers")
    @classmethod
    def _lower(cls, v: list[str]) -> list[str]:
        return [p.strip().lower() for p in v]


class FrameworkAnswer(Section):
    name: Literal["pytorch", "jax", "tensorflow", "other"] = "pytorch"


class ConstraintsAnswer(Section):
    datacenter_only: bool = False
    ecc_required: bool = False
    vendors: list[str] = Field(default_factory=lambda: list(ALL_VENDORS))
    max_gpus: int | None = Field(default=None, ge=1, le=1_000_000,
                                 description="most accelerators you would deploy; unset = as many as the job needs")

    @field_validator("vendors")
    @classmethod
    def _lower(cls, v: list[str]) -> list[str]:
        return [p.strip().lower() for p in v]


AUTO_GPU = "auto"
"""`current.gpu = "auto"`: detect the GPUs of this machine before the consultation (see rules/current_gpu.py)."""


class CurrentAnswer(Section):
    """The GPUs the user already has, if any (also used by the low-utilization warning W8)."""

    gpu: str | None = Field(default=None, description='knowledge-base accelerator you already have, or "auto" to '
                                                      "detect this machine's")
    gpu_count: int | None = Field(default=None, ge=1, le=256, description="how many of them")
    gpu_memory_gb: float | None = Field(default=None, gt=0, le=100_000,
                                        description="memory per GPU, GB (for a part the knowledge base does not "
                                                    "know, or one sold in several memory sizes)")
    gpu_name: str | None = Field(default=None, description="the name the machine reports (set by detection)")
    detection: str | None = Field(default=None, description="what detection found (set by current.gpu = \"auto\")")
    gpu_utilization: float | None = Field(default=None, ge=0, le=1, description="observed busy fraction, 0-1")
    pc_slots: int = Field(default=0, ge=0, le=8,
                          description="free double-width PCIe slots in a desktop you already have, for cards you buy "
                                      "(no new computer needed); unset = 2 while learning or prototyping, else 0")


class Answers(Section):
    """All answers of one consultation."""

    workload: Workload = "inference"
    stage: Stage = "production"
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
        return dict(_flatten(self.model_dump(mode="json")))

    def effective(self) -> dict[str, Any]:
        """Every leaf answer as the consultation applies it: given answers, else the default that depends on the
        other answers (`contextual_defaults`), else the field's default."""
        flat = self.flat()
        given = self.given_keys()
        implied = self.implied()
        return {k: (v if k in given or k not in implied else implied[k]) for k, v in flat.items()}

    def implied(self) -> dict[str, Any]:
        """The defaults the given answers imply for the keys not given (`contextual_defaults`)."""
        flat = self.flat()
        given = self.given_keys()
        return {k: v for k, v in contextual_defaults({k: flat[k] for k in given if k in flat}).items()
                if k not in given}

    def given_keys(self) -> set[str]:
        """Dotted keys of the answers the user gave."""
        return {k for k, _ in _flatten(self.given())}

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


QLORA_BASE_FORMAT = "nf4"
HOBBY_PC_SLOTS = 2
"""Learners and hobbyists buy cards for the desktop they have: an ATX board takes two double-width cards."""
INTERACTIVE_MIN_TOKENS_PER_S = 10.0
"""Production serving's default per-user streaming floor: a little faster than people read (about 4-5 words, ~6-7
tokens, a second), so the text never stalls on screen. Set inference.min_tokens_per_s_per_user for batch work."""


def contextual_defaults(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults that depend on other answers, by dotted key: QLoRA's frozen base is 4-bit NF4, not BF16; production
    serving is a service level — on-demand capacity (no spot), failover (N+1), and a per-user speed floor.

    `flat` holds the answers GIVEN so far as `section.key` → value (no field defaults). Resolution, the consultation
    and the questionnaire all use this, so the default a user is shown is the default the consultation applies.
    """
    out: dict[str, Any] = {}
    if flat.get("workload") == "finetune" and flat.get("finetune.method") == "qlora":
        out["precision.weights"] = QLORA_BASE_FORMAT
    if flat.get("stage") in ("learning", "prototyping"):
        out["current.pc_slots"] = HOBBY_PC_SLOTS
    # the service level of production follows a stated stage: unstated, the consultation sizes for always-on use
    # (730 h a month) but does not impose failover, a speed floor or on-demand capacity
    production_serving = flat.get("workload", "inference") == "inference" and flat.get("stage") == "production"
    if production_serving:
        out["deployment.spot"] = False
        out["inference.failover"] = True
        out["inference.min_tokens_per_s_per_user"] = INTERACTIVE_MIN_TOKENS_PER_S
    return out


def _flatten(d: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _flatten(v, key + ".")
        else:
            yield key, v


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


def describe_validation_error(exc: ValidationError, where: str = "answers") -> str:
    """One readable line per problem, naming the table and key (`precision.context_tokens: ...`)."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; see the README for the answers format)"
        lines.append(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}")
    return "\n".join(lines)


def parse_answers(data: dict[str, Any], where: str = "answers") -> Answers:
    """Validate a dict (from TOML, JSON or flags) into Answers, raising InputError that names table and key."""
    try:
        return Answers.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, where)) from None


def load_answers(path: Path) -> Answers:
    """Read an answers TOML file, or the `answers` object embedded in a saved JSON report."""
    text = read_text_file(path, what="answers file", max_bytes=ANSWERS_MAX_BYTES)
    if path.suffix.lower() == ".json":
        import json

        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("answers"), dict):
            raise InputError(f"{path}: a JSON answers source must be a gpuadvisor report with an 'answers' object")
        return parse_answers(doc["answers"], str(path))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    return parse_answers(data, str(path))
