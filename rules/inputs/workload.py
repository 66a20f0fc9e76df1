"""The workload: every answer the sizing reads, typed, built once per consultation and read by attribute below.

`profile.workload_profile` builds it from the validated answers (the consultation's callback from the answer facts,
recording each read as a premise; `gpuadvisor estimate` from `Answers.effective()`); every callback, search and
price below reads its attributes. The rules engine sees it as the `workload` fact (`Workload.fact`, the one place
it is flattened, at the engine's edge): the packs test those fields, and the fact's WHY chain goes back to the
answers it rests on. The Workload itself rides beside the fact (`Consultation.attachment`), never in it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.rules.sizing.memory import Optimizer

if TYPE_CHECKING:
    from gpuadvisor.rules.engine import RuleContext

WorkloadKind = Literal["training", "finetune", "inference"]
Method = Literal["full", "lora", "qlora", "none"]
Recompute = Literal["auto", "none", "selective", "full"]

LOAD_FIELDS = ("daily_active_users", "sessions_per_user_per_day", "requests_per_session", "peak_to_average",
               "load_from_users")
"""Fields set only when the request rate comes from daily users (absent from the fact otherwise)."""


@dataclass(frozen=True, slots=True)
class Workload:
    """The workload profile: answers under the names the rules test, with what follows from them (training tokens
    by default, a request rate from daily users, the owned hardware's busy share). Field order is the fact's."""

    workload: WorkloadKind
    method: Method
    stage: str
    params_b: float
    active_b: float
    batch: int
    context: int
    concurrency: int
    framework: str
    where: str
    checkpointing: bool
    sensitive_data: bool
    models_per_gpu: int
    formats: Formats
    """The weights' and the KV cache's formats, as resolution chose them (the fact holds their ids)."""
    engine: str
    moe: bool
    hours_per_month_given: float | None
    utilization_given: float | None
    capex_usd: float | None
    hourly_usd: float | None
    monthly_usd: float | None
    current_util: float | None
    datacenter_only: bool
    ecc_required: bool
    spot: bool
    allow_marketplace: bool
    reservations: bool
    porting: bool
    port_weeks_given: float | None
    engineer_usd_per_week_given: float | None
    spot_given: bool
    desk_side: bool
    pc_slots: int
    production_stated: bool
    stage_stated: bool
    context_given: bool
    lengths_given: bool
    load_given: bool
    """A load was stated (a request rate, daily users, concurrency or batch): else production assumes one."""
    failover: bool
    pue: float
    power_usd_per_kwh: float
    lifetime_years: float
    max_gpus: int | None
    site_usd_per_kw_month: float | None
    vendors: tuple[str, ...]
    providers: tuple[str, ...]
    requests_per_minute: float | None
    input_tokens: int
    output_tokens: int
    min_tps_user: float | None
    ttft_max_s: float | None
    latency_p95_s: float | None
    deadline_days: float
    deadline_from: str
    """auto | today | delivery as answered; the consultation sets today or delivery (derivations._deadline_from):
    whether a purchase's lead time counts against the deadline."""
    after_run: str
    """keep | sell: hardware bought for one run, once it ends (deployment.after_run)."""
    deadline_given: bool
    """The user stated training.deadline_days (a default deadline is a planning target, not a date to meet)."""
    deadline_from_given: bool
    optimizer: Optimizer
    zero_stage: int | str
    """0…3, or "auto" (the planner chooses)."""
    gradient_checkpointing: bool
    recompute: Recompute
    """Activation recomputation: "auto" (the plan takes the least that fits), "none", "selective" or "full";
    "none" whenever recomputation is not allowed (gradient_checkpointing false)."""
    global_batch: int | None
    """Sequences per optimizer step as answered (None: the practice default by model size, see training_plan)."""
    global_batch_tokens: float | None
    """Tokens per optimizer step as answered, instead of `global_batch`."""
    context_parallel: int | None
    """GPUs each sequence is split over as answered (None: the planner chooses)."""
    lora_rank: int
    tokens_b: float | None
    """Training tokens in billions (the answer, or the default below); None for serving."""
    tokens_default: str
    """Why `tokens_b` was chosen when not given ("" when given, or serving)."""
    daily_active_users: int | None = None
    sessions_per_user_per_day: float | None = None
    requests_per_session: float | None = None
    peak_to_average: float | None = None
    load_from_users: str = ""
    """The daily-users arithmetic that gave `requests_per_minute` ("" when the rate was given, or none)."""
    per_option_batch: bool = False
    """Serving at a request rate with neither concurrency nor batch given: each option's plan forms its own batch."""
    utilization: float = 0.0
    """The busy share of owned hardware (usage.usage_profile)."""
    deadline_from_why: str = ""
    """Why `deadline_from` is what it is (your answer, or what the answers allow)."""
    text: str = ""

    @property
    def weights_precision(self) -> str:
        return self.formats.weights.id

    @property
    def kv_precision(self) -> str:
        return self.formats.kv_cache.id

    @property
    def weights_given(self) -> bool:
        return self.formats.weights_given

    @property
    def inference(self) -> bool:
        return self.workload == "inference"

    @property
    def training(self) -> bool:
        """Training from scratch or fine-tuning: costed per run."""
        return self.workload != "inference"

    @property
    def zero(self) -> int | None:
        """The ZeRO stage asked for, None when the planner chooses."""
        return None if self.zero_stage == "auto" else int(self.zero_stage)

    @property
    def global_batch_sequences(self) -> int | None:
        """The global batch in whole sequences of the context (a batch given in tokens is rounded to them), None
        when not answered."""
        if self.global_batch is not None:
            return self.global_batch
        if self.global_batch_tokens is not None:
            return max(1, round(self.global_batch_tokens / self.context))
        return None

    @property
    def served_tokens_per_s(self) -> float | None:
        """The tokens/s the described traffic needs (S10), or None: training, or no request rate given."""
        if not self.inference or self.requests_per_minute is None:
            return None
        return self.requests_per_minute * self.output_tokens / 60.0

    def fact(self) -> dict[str, Any]:
        """The `workload` fact the packs test (rules/inputs/fact_kinds.py WorkloadFact): the engine's edge, the only
        place the workload becomes a string-keyed dict."""
        out: dict[str, Any] = {"kind": "workload", "ref": "workload"}
        for name in FACT_FIELDS:
            if name in LOAD_FIELDS and self.daily_active_users is None:
                continue
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


def workload_of(ctx: RuleContext, alias: str = "work") -> Workload:
    """The Workload beside the `workload` fact a rule matched as `alias` (or, when it matched none, the one read from
    the store, which becomes a premise as `ctx.read` makes it)."""
    fid = ctx.premise_ids.get(alias)
    if fid is None:
        fid = ctx.read("workload")[0][0]
    w = ctx.attachment(fid)
    if not isinstance(w, Workload):
        raise LookupError(f"rule {ctx.rule.id!r}: no Workload beside the workload fact {fid}")
    return w


def _fact_fields() -> tuple[str, ...]:
    """The fact's fields in their order: the Workload's, with the formats as the ids of the weights' (and whether
    the user chose it) and the KV cache's, where the fact has always held them."""
    out: list[str] = []
    for f in fields(Workload):
        if f.name == "formats":
            out += ["weights_precision", "weights_given"]
        elif f.name == "moe":
            out += ["kv_precision", "moe"]
        else:
            out.append(f.name)
    return tuple(out)


FACT_FIELDS = _fact_fields()
"""The `workload` fact's fields (rules/inputs/fact_kinds.py WorkloadFact declares them for the packs)."""
