"""The fact vocabulary, declared once and typed: one TypedDict per fact kind.

Why TypedDicts: facts are the flat dicts the engine stores (rules/engine), so the declaration that types them is a
TypedDict; mypy checks every builder annotated with one (a misspelt or mistyped field is a type error), and the
rule packs' linter reads its field names from the same declaration (`facts.FACT_FIELDS`), so a field a builder
emits is a field a pack may test and nothing else. Fields marked NotRequired are present on some facts of a kind
only (a rental option has no `capex_usd`). The conclusions of the generic actions (warning, veto, cost_part) are
the engine's own and declared there (`engine.actions.CONCLUSION_FIELDS`). tests/rules/test_fact_kinds.py checks
every fact of the golden and expert consultations against these declarations, types included. (No
`from __future__ import annotations` here: TypedDict sees NotRequired only in evaluated annotations.)
"""

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from gpuadvisor.rules.engine.values import Scalar

Fact = Mapping[str, Any]
"""A fact as a rule callback receives it (read-only: the engine may hand over the stored fact)."""


class _Fact(TypedDict):
    """What every fact may carry: its kind, the reference rules join on, and a line for explanations."""

    kind: str
    ref: NotRequired[str]
    text: NotRequired[str]


class AnswerFact(_Fact):
    """One answer of the questionnaire; `given`: the user set it (not a default)."""

    key: str
    value: Scalar | list[Any] | None
    given: bool


class ModelFact(_Fact):
    """The model's architecture as rules test it (the full `Architecture` travels as `arch_json`)."""

    key: str
    name: str
    source: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    moe: bool
    experts: int
    experts_per_token: int
    mla: bool
    synthesized: bool
    arch_json: str


class PrecisionFact(_Fact):
    """A number format in a role (weights, KV cache, activations) and what its kernels need."""

    role: str
    key: str
    name: str
    bits: float
    compute: str
    needs_bf16: bool
    needs_fp8: bool
    needs_fp4: bool
    needs_int8: bool
    library: str
    min_cc: float
    quantized: bool
    given: bool


class AcceleratorFact(_Fact):
    """An accelerator's scalar view (knowledge.schema.Accelerator; the full entry stays in the catalog)."""

    key: str
    name: str
    vendor: str
    market: str
    memory_gb: float
    bandwidth_gbs: float
    bf16_tflops: float
    fp8_tflops: float
    fp4_tflops: float
    interconnect_kind: str
    interconnect_gbs: float
    ecc: bool
    mig: int
    cc: float
    has_cc: bool
    flash_attention_2: str
    software_stack: str
    max_per_node: int
    purchasable: bool
    price_usd: float
    tdp_w: float
    bf16_support: bool
    fp8_support: bool
    fp4_support: bool
    int8_support: bool
    flagship: bool
    software_dropped: bool
    software_horizon: str


class InstanceFact(_Fact):
    """A cloud instance type: its provider, accelerators and on-demand/spot prices."""

    key: str
    provider: str
    provider_kind: str
    accelerator: str
    count: int
    on_demand_usd_per_hour: float
    spot_usd_per_hour: float
    shape: str
    fabric: str


class FreeTierFact(_Fact):
    """A free notebook tier (Colab, Kaggle, SageMaker Studio Lab) and its limits."""

    key: str
    provider: str
    accelerator: str
    count: int
    session_hours: float
    monthly_quota_hours: float
    quota_published: bool
    guaranteed: bool
    shape: str
    idle_minutes: float
    """0 when unreported."""


class OwnedFact(_Fact):
    """The user's own GPUs (`current.gpu`, `current.gpu_count`)."""

    accelerator: str
    count: int
    acc_ref: str
    name: str
    shape: str


class OwnedUnknownFact(_Fact):
    """The user's own GPUs known only by name and memory (rules/owned/unknown.py)."""

    name: str
    memory_gb: float
    count: int


class UnitFact(_Fact):
    """A deployable unit (rules.units.Unit): a node shape and its fabric."""

    key: str
    accelerator: str
    node: int
    scale_up_kind: str
    domain: int
    scale_out_kind: str
    joinable: bool
    desk_side: bool
    unit_kind: str
    name: str


class SystemFact(_Fact):
    """A machine sold with or for an accelerator (server, workstation, rack, appliance)."""

    key: str
    system: str
    accelerator: str
    shape: str
    unit_kind: str
    desk_side: bool
    name: str


class QuoteFact(_Fact):
    """The buyer's own vendor quote (`gpuadvisor kb quote add`)."""

    key: str
    vendor: str
    accelerator: str
    system: str
    target: str
    target_name: str
    usd: float
    per: str
    quoted_on: str
    valid_until: str
    expired: bool
    label: str


class WorkloadFact(_Fact):
    """The workload profile: the answers the hardware question turns on, with defaults resolved."""

    workload: str
    method: str
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
    weights_precision: str
    kv_precision: str
    moe: bool
    utilization: float
    capex_usd: float | None
    hourly_usd: float | None
    monthly_usd: float | None
    current_util: float | None
    engine: str
    datacenter_only: bool
    ecc_required: bool
    spot: bool
    reservations: bool
    allow_marketplace: bool
    pue: float
    power_usd_per_kwh: float
    lifetime_years: float
    max_gpus: int | None
    requests_per_minute: float | None
    input_tokens: int
    output_tokens: int
    min_tps_user: float | None
    ttft_max_s: float | None
    latency_p95_s: float | None
    deadline_days: float
    deadline_from: str
    """today | delivery: whether a purchase's lead time counts against the deadline (training.deadline_from, or
    by what the answers allow: derivations._deadline_from)."""
    deadline_from_why: NotRequired[str]
    after_run: str
    """keep | sell: hardware bought for one run, once it ends (deployment.after_run)."""
    deadline_given: bool
    deadline_from_given: bool
    """The user stated training.deadline_days (a default deadline is a planning target, not a date to meet)."""
    optimizer: str
    zero_stage: str
    gradient_checkpointing: bool
    recompute: str
    global_batch: int | None
    global_batch_tokens: float | None
    context_parallel: int | None
    lora_rank: int
    tokens_b: float | None
    tokens_default: str
    hours_per_month_given: float | None
    utilization_given: float | None
    spot_given: bool
    desk_side: bool
    failover: bool
    production_stated: bool
    stage_stated: bool
    pc_slots: int
    site_usd_per_kw_month: float | None
    daily_active_users: NotRequired[int]
    sessions_per_user_per_day: NotRequired[float]
    requests_per_session: NotRequired[float]
    peak_to_average: NotRequired[float]
    load_from_users: NotRequired[str]
    per_option_batch: bool
    weights_given: bool
    context_given: bool
    lengths_given: bool
    load_given: bool
    porting: bool
    port_weeks_given: float | None
    engineer_usd_per_week_given: float | None
    providers: list[str]
    vendors: list[str]


class PhaseFact(_Fact):
    """One phase of a lifecycle ([[phase]] tables)."""

    index: int
    name: str
    workload: str
    model_from: int
    start_month: float
    months: float


class FleetFact(_Fact):
    """The fleet a lifecycle's planner chose and its cash cost."""

    choice: str
    total_cost_usd: float
    capex_usd: float
    budget_left_usd: float
    budget_given: bool
    within_budget: bool
    alternatives: int


class PurchaseUseFact(_Fact):
    """How a phase's purchase is used in the phases after it."""

    phase: int
    name: str
    workload: str
    title: str
    count: int
    in_plan: bool
    capex_usd: float
    months_after: float
    busy_share_after: float
    utilization_after: float
    break_even_utilization: float
    idle_after: bool
    below_break_even: bool
    sold: bool
    """In the chosen fleet and sold when its run ends (PhasePlan.sold_month)."""
    unused_after: bool
    """No later phase runs on it after its run (kept idle, or sold)."""
    fate: str
    instead: str
    plan_text: str


class EvalCheckFact(_Fact):
    """Whether the machines of a serving phase can evaluate the model a training phase produced."""

    phase: int
    name: str
    trained_phase: int
    title: str
    machine_memory_gb: float
    eval_need_gb: float
    fits_eval: bool
    precision: str


class ParametersFact(_Fact):
    """Parameter counts from the architecture (total and active per token)."""

    total: int
    active: int
    total_b: float
    active_b: float


class WeightsFact(_Fact):
    """The weights' size in the chosen format."""

    bytes: int
    gb: float
    precision: str
    bits: float
    gb_4bit: float


class KvCacheFact(_Fact):
    """The KV cache per token, per sequence and in total."""

    bytes_per_token: float
    gb_per_sequence: float
    gb_total: float
    sequences: int
    context: int
    tokens_per_sequence: int
    per_option: bool


class DemandFact(_Fact):
    """The serving demand: tokens/s and requests/s the service must sustain."""

    tokens_per_s: float
    requests_per_s: float
    concurrency: int
    burst: float
    target: bool


class UsageFact(_Fact):
    """Hours of use a month and the utilization that follows."""

    hours_per_month: float
    utilization: float
    sessions_per_month: float
    session_overhead_h: float
    per_run: bool
    rented_hours_per_month: float


class ComputeNeedFact(_Fact):
    """Training compute: FLOPs, tokens and the FLOPs-per-token factor."""

    flops: float
    tokens: float
    factor: float
    pflop_days: float


class MemoryNeedFact(_Fact):
    """Memory the workload needs, by line item."""

    mode: str
    total_gb: float
    weights_gb: float
    kv_cache_gb: float
    activations_gb: float
    gradients_gb: float
    optimizer_gb: float
    overhead_gb: float
    ratio_to_weights: float


class IntensityFact(_Fact):
    """Arithmetic intensity of a phase (FLOP per byte) and whether it is bandwidth- or compute-bound."""

    phase: str
    flop_per_byte: float
    bound: str
    batch: int
    per_option: bool


class SpeedModelFact(_Fact):
    """Which speed model sized the options."""

    name: str


class LibrarySupport(TypedDict):
    """Whether the served weight format's kernels run on the part (H9), and why not."""

    weights_precision: str
    library: str
    library_ok: bool
    library_why: str
    min_cc: float
    cc: float


class MigSlices(TypedDict):
    """Whether one model fits a MIG slice of the part (H12)."""

    mig_fits: bool
    mig_slice_gb: float | None
    mig_model_gb: NotRequired[float]


class SplitFields(TypedDict):
    """The disaggregated (prefill/decode) layout weighed for a configuration: nothing when it was not weighed,
    only the reason when it is not possible."""

    pd_offer: NotRequired[bool]
    pd_reason: NotRequired[str]
    pd_machines: NotRequired[int]
    pd_prefill_machines: NotRequired[int]
    pd_decode_machines: NotRequired[int]
    pd_prefill_replicas: NotRequired[int]
    pd_decode_replicas: NotRequired[int]
    pd_decode_batch: NotRequired[int]
    pd_ttft_s: NotRequired[float | None]
    pd_tokens_per_s_per_user: NotRequired[float | None]
    pd_kv_gb_per_request: NotRequired[float | None]
    pd_transfer_ms: NotRequired[float | None]
    pd_network: NotRequired[str]
    pd_colocated_machines: NotRequired[int]


class ConfigFact(_Fact, LibrarySupport, MigSlices, SplitFields):
    """A hardware configuration the search planned: one flattening of `planning.Plan` with its verdicts."""

    accelerator: str
    count: int
    nodes: int
    tensor_parallel: int
    expert_parallel: int
    pipeline_parallel: int
    replicas: int
    zero_stage: int
    batch_per_replica: int
    memory_gb_per_gpu: float
    memory_utilization: float
    fits_single_gpu: bool
    bound: str
    tokens_per_s: float | None
    tokens_per_s_per_user: float | None
    ttft_s: float | None
    latency_s: float | None
    training_days: float | None
    meets_tpot: bool
    meets_ttft: bool
    meets_latency: bool
    meets_deadline: bool
    interconnect_kind: str
    market: str
    vendor: str
    ecc: bool
    software_stack: str
    format_native: bool
    """The weights format runs on the part's own tensor cores (or needs none): economics.format_native."""
    flash_attention_2: str
    fused_attention: bool
    throttled: bool
    mig: int
    memory_gb: float
    flagship: bool
    accelerator_name: str
    vendor_allowed: bool
    within_max_gpus: bool
    training_gpu_hours: float | None
    capacity_tokens_per_s: float | None
    headroom: float | None
    desk_side: bool
    shape: str
    machines: int
    fill: int
    link: str
    sync_link: str
    scale_up_kind: str
    scale_out_kind: str
    unit_kind: str
    meets_failover: bool
    replicas_for_load: int
    trains: bool
    topology: str
    precision_fallback: str
    slow_split: str
    """'' or what makes the replica's split a last resort ('tensor parallel 4 over PCIe'; rules/planning/splits.py)."""
    below_recipe: str
    """'' or the published recipe's split this plan's replica falls below, with the KV-cache room of each
    (rules/planning/recipes.py, rule W3.recipe)."""


class OptionFact(_Fact, SplitFields):
    """A priced way to acquire a configuration (rent, reserve, buy, own, free) with its decision cost."""

    config: str
    accelerator: str
    accelerator_name: str
    purchase: bool
    instance: str
    provider: str
    provider_kind: str
    pricing: str
    count: int
    nodes: int
    tensor_parallel: int
    market: str
    vendor: str
    ecc: bool
    software_stack: str
    interconnect_kind: str
    usd_per_hour: float
    usd_per_run: NotRequired[float]
    usd_per_million_tokens: NotRequired[float]
    usd_per_month: float
    capex_usd: NotRequired[float]
    buy_pays_off: NotRequired[bool]
    break_even_utilization: NotRequired[float]
    power_share: NotRequired[float]
    training_days: NotRequired[float]
    tokens_per_s: float
    memory_utilization: float
    flagship: bool
    over_capex: bool
    over_hourly: bool
    over_monthly: bool
    price_known: bool
    provider_allowed: bool
    instance_id: NotRequired[str]
    instances: int
    price_as_of: NotRequired[str]
    price_source: NotRequired[str]
    acquisition: str
    price_kind: str
    price_age_months: NotRequired[int]
    capacity_tokens_per_s: NotRequired[float]
    headroom: NotRequired[float]
    usage_hours: NotRequired[float]
    reserved_days: NotRequired[int]
    price_basis: NotRequired[str]
    """list | list, transcribed | aggregator | street | used | estimate | system share | your quote."""
    node_known: NotRequired[bool]
    """rental: False when the source prices one GPU and says nothing of its node (Instance.node_known)."""
    """capacity-block: the days a short-term reserved cluster is booked and paid for."""
    large_cluster: bool
    gpu_hours: NotRequired[float]
    stage: str
    provider_name: NotRequired[str]
    instance_name: NotRequired[str]
    within_free_limits: NotRequired[bool]
    free_limit: NotRequired[str]
    guaranteed: NotRequired[bool]
    quota_published: NotRequired[bool]
    multi_session: NotRequired[bool]
    units_bought: NotRequired[int]
    memory_gb: float
    spot_run_too_long: NotRequired[bool]
    spot_misses_deadline: NotRequired[bool]
    spot_hours: NotRequired[float]
    accelerators_paid: int
    machines: int
    unit_name: str
    unit_kind: str
    title: str
    capex_beyond_accelerators_usd: NotRequired[float]
    tco_usd: NotRequired[float]
    horizon_years: NotRequired[float]
    desk_side: bool
    link: str
    sync_link: str
    scale_out_kind: str
    replicas: int
    replicas_for_load: int
    meets_failover: bool
    tokens_per_s_per_user: NotRequired[float]
    ttft_s: NotRequired[float]
    latency_s: NotRequired[float]
    fabric_usd: NotRequired[float]
    host_usd: NotRequired[float]
    power_w: NotRequired[float]
    power_known: NotRequired[bool]
    """purchase: every part of the machine's draw has a figure (False: some of it is not counted, rule P.power)."""
    topology: str
    existing_host: NotRequired[bool]
    pc_fits: NotRequired[bool]
    pc_slots: NotRequired[int]
    site_usd: NotRequired[float]
    pd_usd_per_month: NotRequired[float]
    pd_capex_usd: NotRequired[float]
    decision_usd: float
    horizon_months: NotRequired[float]
    resale_usd: NotRequired[float]
    resale_share: NotRequired[float]
    age_years: NotRequired[float]
    """purchase: years from the part's launch to today (rules/pricing/economics.py PartAge)."""
    after_run: NotRequired[str]
    """purchase for one run: keep | sell (deployment.after_run)."""
    resale_at_end_usd: NotRequired[float]
    """purchase for one run: what it would sell for when the run ends, net of selling costs."""
    resale_at_end_share: NotRequired[float]
    sold_age_years: NotRequired[float]
    kept_usd: NotRequired[float]
    sold_usd: NotRequired[float]
    lead_time_days: NotRequired[float]
    """purchase: days from the order to the machines running (lead_time_weeks_<kind>)."""
    lead_time_id: NotRequired[str]
    ready_days: NotRequired[float]
    """purchase for a run: lead time plus the run, days from today."""
    arrives_too_late: NotRequired[bool]
    """the run on it cannot end inside the deadline counted from today (rule D.lead-time)."""
    lead_time_binds: NotRequired[bool]
    """a stated deadline counts from today, so the purchase's lead time counts against it."""
    cost_rental_usd: NotRequired[float]
    cost_hardware_usd: NotRequired[float]
    cost_network_usd: NotRequired[float]
    cost_power_usd: NotRequired[float]
    cost_site_usd: NotRequired[float]
    cost_resale_usd: NotRequired[float]
    cost_engineering_usd: NotRequired[float]


class PortingFact(_Fact):
    """The engineering weeks a software stack costs to port to (H10)."""

    stack: str
    stack_name: str
    weeks: float
    usd_per_week: float
    usd: float
    weeks_format: float
    """The high end of the estimate: serving or training in a format the part has no tensor cores for."""
    usd_format: float
    words: str
    """The port in a finding's words: weeks × rate = dollars, without the assumptions' ids (those are in `text`)."""
    words_format: str
    """The same at the high end of the estimate."""


class RuledOutFact(_Fact):
    """An accelerator, instance or option ruled out, with the rule and reason."""

    target: str
    name: str
    reason: str
    rule: str
    shape: str


class RemedyFact(_Fact):
    """What would make the user's own GPUs work when they are ruled out (rule OWN.remedy, rules/owned/levers.py): the
    levers, each checked by planning on them; `target` is the owned fact's ref, `shape` their unit shape."""

    target: str
    shape: str
    rule: str
    reason: str


class LastResortFact(_Fact):
    """A configuration weighed only after every plan without its flaw (rule W3.last-resort): `target` is the
    config's ref, `reason` what makes it a last resort."""

    target: str
    reason: str


class RankedFact(_Fact):
    """An option's place in the ranking: its decision cost in dollars."""

    option: str
    usd: float


FACT_KINDS: dict[str, type[_Fact]] = {
    "answer": AnswerFact,
    "model": ModelFact,
    "precision": PrecisionFact,
    "accelerator": AcceleratorFact,
    "instance": InstanceFact,
    "free_tier": FreeTierFact,
    "owned": OwnedFact,
    "unit": UnitFact,
    "system": SystemFact,
    "quote": QuoteFact,
    "workload": WorkloadFact,
    "phase": PhaseFact,
    "fleet": FleetFact,
    "purchase_use": PurchaseUseFact,
    "eval_check": EvalCheckFact,
    "parameters": ParametersFact,
    "weights": WeightsFact,
    "kv_cache": KvCacheFact,
    "demand": DemandFact,
    "usage": UsageFact,
    "compute_need": ComputeNeedFact,
    "memory_need": MemoryNeedFact,
    "intensity": IntensityFact,
    "speed_model": SpeedModelFact,
    "config": ConfigFact,
    "option": OptionFact,
    "porting": PortingFact,
    "ruled_out": RuledOutFact,
    "remedy": RemedyFact,
    "ranked": RankedFact,
    "last_resort": LastResortFact,
    "owned_unknown": OwnedUnknownFact,
}
"""Every fact kind a rule may test, by the name facts carry in `kind`."""


def field_names(kind: type[_Fact]) -> tuple[str, ...]:
    """The fields of a kind beyond the common ones, in declaration order."""
    return tuple(name for name in kind.__annotations__ if name not in _Fact.__annotations__)
