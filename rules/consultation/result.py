"""The published shape of a consultation's outcome (`gpuadvisor recommend --json`, reports, the TUI).

GB means 10^9 bytes everywhere. Prices always travel with the date they were read (`as_of`). Every recommendation,
warning and rule-out carries `why`: the explanation chain back to the answers, knowledge-base entries and documents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuadvisor.rules.sizing.cost import PartName
from gpuadvisor.rules.sizing.units import GB

if TYPE_CHECKING:
    from gpuadvisor.knowledge.schema import Accelerator
    from gpuadvisor.rules.sizing.memory import MemoryBreakdown as SizedMemory

SCHEMA_VERSION = 3
"""3: the JSON report writes its why chains once (tui/report/whyjson.py); 2: options ranked by decision_cost."""
Severity = Literal["risk", "advice", "note"]
"""One vocabulary everywhere (screens, reports, JSON): a risk to the plan, advice on what to do, a note to read."""
SEVERITY_ORDER: dict[str, int] = {"risk": 0, "advice": 1, "note": 2}


def severity_of(level: str, category: str) -> str:
    """A rule pack's severity (info | warning | critical) and category (warning | advice) in the published
    vocabulary: warning or worse is a risk; an info-level advice is advice; an info-level warning is a note."""
    if level in SEVERITY_ORDER:
        return level
    if level in ("critical", "warning"):
        return "risk"
    return "advice" if category == "advice" else "note"


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class WhyStep(Out):
    """One line of an explanation chain, flattened depth-first (depth 0 = the fact being explained)."""

    depth: int = Field(ge=0)
    fact: int = Field(description="fact id inside this consultation")
    kind: str = Field(description="fact kind: answer, accelerator, model, option, warning, ...")
    text: str = Field(description="what the fact says, in words")
    rule: str | None = Field(default=None, description="rule that derived it; null for answers and knowledge entries")
    rule_title: str | None = None
    heuristic: str | None = Field(default=None, description="HEURISTICS.md id (S1-S12, H1-H21, W1-W13) of the rule")
    rule_kind: Literal["constraint", "advice", "derivation", "ranking"] | None = Field(
        default=None, description="constraint: rules an option out (impossible, or excluded by your answers); advice: "
                                  "warns or explains (the documents' heuristics); derivation: computes a figure")
    source: str | None = Field(default=None, description="document and section, datasheet, or 'your answer'")
    repeated: bool = Field(default=False, description="already explained above in this chain, or in profile_why")


class HowEntry(Out):
    """What one fact led to (HOW): the conclusions drawn directly from it, and how many followed in all."""

    fact: int
    kind: str
    text: str
    led_to: list[str] = Field(description="the first conclusions drawn directly from this fact, with their rules")
    direct: int = Field(description="conclusions drawn directly from it")
    total: int = Field(description="conclusions that depend on it, directly or through others")


class AcceleratorRef(Out):
    id: str
    name: str
    memory_gb: float
    vendor: str
    market: str


class InstanceRef(Out):
    id: str
    provider: str
    name: str
    pricing: Literal["on-demand", "spot", "reserved-1y", "reserved-3y", "capacity-block", "free"] = Field(
        description="on-demand, spot, a 1- or 3-year reservation (paid for its whole term), a short-term reserved "
                    "cluster for a run (capacity-block: whole days or weeks booked, paid whether used or not), or "
                    "free")
    as_of: str | None = Field(default=None, description="date the price was read; null = the source gives none")
    count: int = Field(description="instances of this type needed")

    @property
    def label(self) -> str:
        """`AWS p5.48xlarge`, `Kaggle Notebooks, GPU P100`: the provider, unless the offer's name starts with it."""
        if self.name.lower().startswith(self.provider.lower()):
            return self.name
        return f"{self.provider} {self.name}"


class UnitRef(Out):
    """The deployable unit of an option: what one rents or buys."""

    name: str = Field(description="instance type or system, e.g. 'AWS p5.48xlarge', 'HGX H100 8-GPU server'")
    kind: str = Field(description="instance, server, workstation, desktop, rack, appliance, notebook or own")
    machines: int = Field(description="how many of them")
    per_machine: int = Field(description="accelerators in each")
    topology: str = Field(description="scale-up domain and scale-out network, in words")


class Cost(Out):
    usd_per_hour: float | None = Field(default=None, description="all machines of the option together")
    usd_per_run: float | None = None
    usd_per_million_tokens: float | None = Field(default=None, description="serving: cost per million generated "
                                                                           "tokens at the stated load")
    capex_usd: float | None = Field(default=None, description="purchase only: the whole bill (accelerators, hosts, "
                                                              "fabric)")
    usd_per_month: float | None = Field(default=None, description="a month at the stated hours (purchases: "
                                                                  "amortization, power and site)")
    price_as_of: str | None = Field(default=None, description="date of the price used")
    price_source: str | None = Field(default=None, description="source ids of the prices used (knowledge base)")
    price_kind: str | None = Field(default=None, description="on-demand, spot, reserved-1y, reserved-3y, msrp, "
                                                              "street, used, system-share, estimate, quote (the "
                                                              "buyer's own), free, owned")
    price_age_months: int | None = Field(default=None, description="months since price_as_of; null when undated")
    price_basis: str | None = Field(default=None, description="what the price is: list (the provider's own price "
                                                              "list), list, transcribed (a dataset of list prices), "
                                                              "aggregator (a third party's figure), street, used, "
                                                              "estimate, system share, your quote")
    node_known: bool | None = Field(default=None, description="rental: false when the source prices one GPU and "
                                                              "says nothing of the node it comes in")
    usage_hours: float | None = Field(default=None, description="hours billed: a month (serving, interactive) or "
                                                                "one run (training), set-up included")
    break_even_utilization: float | None = Field(
        default=None, description="purchase only: utilization above which buying beats the cheapest rental")
    capex_beyond_accelerators_usd: float | None = Field(
        default=None, description="purchase only: what is bought besides the accelerators — the machines' hosts "
                                  "(CPUs, memory, storage, chassis, NICs) and the cluster fabric")
    fabric_usd: float | None = Field(default=None, description="purchase only: switch ports, optics and cables "
                                                               "joining the machines (0 when they work apart)")
    power_kw: float | None = Field(default=None, description="purchase only: what the machines draw at load")
    tco_usd: float | None = Field(default=None, description="purchase only: price plus power and site over "
                                                            "the horizon")
    horizon_years: float | None = Field(default=None, description="purchase only: years the purchase is costed over "
                                                                  "(deployment.lifetime_years)")


class MemoryBreakdown(Out):
    """Per-GPU memory in GB (10^9 bytes)."""

    weights: float
    kv_cache: float
    activations: float
    gradients: float
    optimizer_states: float
    runtime_overhead: float
    total: float
    capacity: float
    headroom_required: float = Field(description="GB kept free against allocator fragmentation (W6)")
    utilization: float = Field(description="total / capacity")

    @classmethod
    def of(cls, mem: SizedMemory, acc: Accelerator) -> MemoryBreakdown:
        """The plan's breakdown (bytes, rules/sizing/memory.py) in GB on accelerator `acc`, measured against the
        bytes its driver gives software (`Accelerator.memory_bytes`): the one conversion of the one breakdown shape."""
        capacity_gb = round(acc.memory_bytes() / GB, 3)
        gb = {k: round(getattr(mem, k) / GB, 4) for k in ("weights", "kv_cache", "activations", "gradients",
                                                           "optimizer_states", "runtime_overhead", "total")}
        return cls(**gb, capacity=capacity_gb, headroom_required=round(capacity_gb * mem.headroom_fraction, 3),
                   utilization=round(gb["total"] / capacity_gb, 4))


class CostPartOut(Out):
    """One part of what an option costs its owner over the horizon (rules/pricing/decision_cost.py)."""

    part: PartName
    usd: float = Field(description="dollars over the horizon (resale: negative, what the purchase sells for)")
    label: str = Field(description="how the figure was computed")
    rule: str = Field(description="the rule that concluded it: S9 (pricing) or a pack rule such as H10.port")


class DecisionCostOut(Out):
    """The one figure options are ranked by: what choosing the option costs its owner over the user's horizon."""

    usd: float = Field(description="the sum of the parts: the ranked figure")
    horizon: str = Field(description="'one run' (training, fine-tuning) or 'over N months' (serving and interactive "
                                     "use: deployment.lifetime_years)")
    horizon_months: float | None = None
    parts: list[CostPartOut]
    more_than_first_usd: float | None = Field(default=None, description="dollars above the first-ranked option "
                                                                         "(null for the first)")


class Disaggregated(Out):
    """Separate prefill and decode pools of the same unit, weighed against the option's colocated plan (rules
    PD.split and PD.considered; rules/sizing/disagg.py)."""

    offered: bool = Field(description="fewer machines than colocated by at least disagg_min_saving (or it meets a "
                                      "service level the colocated plan misses); false: only considered")
    reason: str = Field(description="why it is offered or not, with the figures")
    prefill_machines: int | None = None
    decode_machines: int | None = None
    machines: int | None = Field(default=None, description="both pools, failover spares included")
    colocated_machines: int | None = None
    prefill_replicas: int | None = None
    decode_replicas: int | None = None
    decode_batch: int | None = Field(default=None, description="sequences per decode-only replica")
    ttft_s: float | None = Field(default=None, description="p95 time to first token: prefill queue, pass and KV "
                                                           "transfer")
    tokens_per_s_per_user: float | None = None
    kv_gb_per_request: float | None = Field(default=None, description="KV cache moved per request (GB)")
    kv_transfer_ms: float | None = Field(default=None, description="its transfer over the unit's network")
    network: str | None = Field(default=None, description="the RDMA-class fabric it crosses (infiniband, efa, roce)")
    usd_per_month: float | None = Field(default=None, description="the pools at this option's price")
    capex_usd: float | None = Field(default=None, description="purchase: the pools' bill")


class Recommendation(Out):
    rank: int
    option: str = Field(description="stable option id")
    title: str = Field(description="the unit and what it holds, as the text output names it")
    accelerator: AcceleratorRef
    count: int = Field(description="accelerators in total, all used by the plan")
    accelerators_paid: int = Field(description="accelerators rented or bought: equal to count (every option is "
                                               "used in full)")
    unit: UnitRef = Field(description="what is rented or bought: the instance type or system, and how many")
    nodes: int = Field(description="machines (instances, servers, racks)")
    tensor_parallel: int = Field(description="accelerators per replica and pipeline stage (with expert_parallel > 1 "
                                             "they split the experts instead of every matrix)")
    expert_parallel: int = Field(default=1, description="serving a mixture-of-experts model: > 1 when the routed "
                                                        "experts are split over this many accelerators with attention "
                                                        "data-parallel (one group each), 1 when every matrix is "
                                                        "tensor-parallel")
    pipeline_parallel: int
    replicas: int = Field(description="serving: model replicas (training: data-parallel groups)")
    replicas_for_load: int | None = Field(default=None, description="serving: replicas the load needs; the rest are "
                                                                    "failover spares or fill the machines")
    batch_per_replica: int | None = Field(default=None, description="serving: sequences each replica decodes "
                                          "together at the planned load (training: the micro-batch per GPU); "
                                          "`gpuadvisor estimate --batch` of the same layout gives the same figures")
    zero_stage: int = Field(default=0, description="training: the ZeRO stage over the data-parallel GPUs (3 = FSDP)")
    weights_precision: str | None = Field(default=None, description="the format the option serves or trains the "
                                          "weights in: the consultation's, or, for a default its part cannot run, "
                                          "BF16 (FP16 on parts without BF16)")
    failover: bool | None = Field(default=None, description="serving: survives the loss of one machine at full load")
    last_resort: str | None = Field(default=None, description="what makes the plan a last resort, ranked after every "
                                    "plan without it: 'tensor parallel 4 over PCIe' (rule W3.last-resort)")
    instance: InstanceRef | None
    purchase: bool
    acquisition: Literal["rent", "buy", "free", "own"] = Field(
        default="rent", description="rent by the hour, buy, a free notebook tier, or hardware you already own")
    fits: bool
    memory_gb_per_gpu: float
    memory: MemoryBreakdown
    bound: Literal["bandwidth", "compute"]
    tokens_per_s: float | None = Field(default=None, description="aggregate tokens/s (inference)")
    tokens_per_s_per_user: float | None = Field(default=None, description="serving: one stream's speed at the "
                                                                          "planned load")
    capacity_tokens_per_s: float | None = Field(default=None, description="most tokens/s the option serves")
    headroom: float | None = Field(default=None, description="capacity ÷ the tokens/s needed (when a load is given)")
    ttft_s: float | None = Field(default=None, description="serving: time to first token at the planned "
                                                           "load (queueing included)")
    training_days: float | None = Field(default=None, description="training: wall-clock days of the run")
    training_gpu_hours: float | None = Field(default=None, description="training: accelerator-hours of the run")
    cost: Cost
    decision_cost: DecisionCostOut = Field(description="what the decision costs its owner over the horizon, part "
                                                       "by part: options are ranked by its usd, cheapest first")
    warnings: list[str] = Field(default_factory=list, description="ids of warnings that concern this option")
    notes: list[str] = Field(default_factory=list, description="assumptions and methods behind the figures")
    disaggregated: Disaggregated | None = Field(
        default=None, description="serving with a request rate: separate prefill and decode pools weighed")
    why: list[WhyStep]


class Warning(Out):
    id: str = Field(description="HEURISTICS id such as W5 or H13, or a user rule's id")
    rule: str
    category: Literal["warning", "advice"]
    severity: Severity = Field(description="risk (something may go wrong with the plan), advice (what to do), note")
    message: str = Field(description="what the rule says about the best-ranked option it concerns (or the plan)")
    options: list[str] = Field(default_factory=list, description="options it concerns, best-ranked first; empty = "
                                                                  "the whole plan")
    details: list[str] = Field(default_factory=list, description="the rule's own message for each other option "
                                                                 "it concerns (one finding per rule)")
    shown: bool = Field(default=False, description="among the few findings screens and reports show by default "
                                                   "(the rest on request: --all-findings)")
    why: list[WhyStep]

    @model_validator(mode="before")
    @classmethod
    def _legacy_severity(cls, data: Any) -> Any:
        """Reports saved before the one vocabulary (info | warning | critical) still load."""
        if isinstance(data, dict) and data.get("severity") in ("info", "warning", "critical"):
            data = {**data, "severity": severity_of(str(data["severity"]), str(data.get("category", "")))}
        return data


class RuledOut(Out):
    family: str = Field(description="accelerator id, instance id or option id")
    name: str
    reason: str
    rule: str
    heuristic: str | None = None
    why: list[WhyStep]


class AssumptionOut(Out):
    id: str
    title: str
    value: float | str
    unit: str = ""
    low: float | None = Field(default=None, description="low end of the range the sources support (error band)")
    high: float | None = Field(default=None, description="high end of that range")
    source: str


class ProfileOut(Out):
    """What the workload needs, before any hardware is chosen."""

    model: str
    model_source: str
    parameters_total: int
    parameters_active: int
    weights_gb: float
    kv_cache_gb: float
    kv_cache_bytes_per_token: float
    training_memory_gb: float | None = None
    required_tokens_per_s: float | None = None
    training_flops: float | None = Field(default=None, description="total training compute, FLOPs")
    bound: Literal["bandwidth", "compute"]


class KnowledgeOut(Out):
    version: str
    files: list[dict[str, Any]]
    price_dates: dict[str, str] = Field(description="instance id -> as_of of each price used")


class ReportMeta(Out):
    """Present in saved reports: what produced the file and when (the consultation itself carries no clock)."""

    title: str
    date: str = Field(description="ISO date the report was written")
    generator: str = Field(description="gpuadvisor and its version")


class RecommendResult(Out):
    schema_version: int = SCHEMA_VERSION
    report: ReportMeta | None = None
    answers: dict[str, Any] = Field(description="the answers as given (rerun with `recommend --answers report.json`)")
    answers_effective: dict[str, Any] = Field(description="every answer including defaults")
    defaults_applied: list[str] = Field(description="answers the user did not give, as `table.key = value`")
    ranking_reason: str | None = Field(default=None, description="why the first option beat the second, in dollars "
                                                                 "and by part")
    contracts: str | None = Field(default=None, description="training and fine-tuning: the cheapest run by contract "
                                                             "— buying, a short reserved cluster, on demand, spot — "
                                                             "with the rule that rules each out when one does")
    profile: ProfileOut
    profile_why: list[WhyStep] = Field(
        default_factory=list, description="how the workload's needs were derived from the answers; other chains "
                                          "mark these facts `repeated` instead of explaining them again")
    feasible: bool
    headline: str | None = Field(
        default=None, description="the recommendation in one sentence with its main reason (null when nothing is "
                                  "feasible: to_make_feasible says what would change that)")
    recommendations: list[Recommendation]
    runners_up: list[Recommendation]
    warnings: list[Warning]
    ruled_out: list[RuledOut]
    how: list[HowEntry] = Field(default_factory=list, description="for your answers and the profile: what each led to")
    to_make_feasible: list[str] = Field(default_factory=list, description="what would make a plan feasible")
    assumptions: list[AssumptionOut]
    knowledge: KnowledgeOut
    rules_fired: int
    phases: list[PhaseResult] = Field(
        default_factory=list, description="lifecycle files ([[phase]] tables) only: one entry per phase, in order — "
                                          "that phase's whole consultation (its own recommendations, warnings, "
                                          "why) with its place on the timeline; empty for one workload")
    lifecycle: LifecycleOut | None = Field(
        default=None, description="lifecycle files only: the fleet chosen for the whole (one fleet reused across "
                                  "phases, or a split), its total cost over the horizon and the budget left; the "
                                  "top-level recommendations are then empty, `warnings` holds the findings about "
                                  "how the phases interact, and `feasible` is true when a fleet within the budget "
                                  "equips every phase")


class PhasePlan(Out):
    """What one phase runs on under a fleet choice, and what that costs over the phase."""

    phase: int = Field(description="1-based phase number")
    name: str
    workload: Literal["training", "finetune", "inference"]
    choice: Literal["rent", "buy", "reuse", "own", "free"] = Field(
        description="rent by the hour; buy (the price is paid when the phase starts and the hardware is kept to the "
                    "end of the horizon); reuse hardware an earlier phase bought; hardware you own; a free tier")
    option: str | None = Field(default=None, description="the option id in the phase's consultation")
    title: str
    accelerator: str = Field(description="accelerator id")
    count: int = Field(description="accelerators the phase uses")
    start_month: float
    months: float = Field(description="how long the phase runs (a training run: its days ÷ 30.44)")
    runs: float | None = Field(default=None, description="training/fine-tuning runs in the phase")
    cost_usd: float = Field(description="what the phase costs in cash: rent for its hours, or power for its work "
                                        "on hardware bought (the purchase itself is in capex_usd)")
    capex_usd: float = Field(default=0.0, description="purchase price paid at the phase's start (buy only)")
    holding_usd: float = Field(default=0.0, description="buy only: site rent and idle power of the purchase from "
                                                        "this phase's start to the end of the horizon")
    resale_usd: float = Field(default=0.0, description="buy only: what the purchase sells for at the horizon's end "
                                                       "(or its phase's, `sold_month`): accelerators at the used "
                                                       "price of their age from launch then, hosts and network at "
                                                       "scrap, less selling costs; taken off the fleet's total")
    engineering_usd: float = Field(default=0.0, description="the port the option needs (rule H10.port), paid once "
                                                            "in the phase, as its own consultation prices it")
    sold_month: float | None = Field(default=None, description="buy only: the month the purchase is sold, when it "
                                                               "is sold as its phase ends (null: held to the end "
                                                               "of the horizon)")
    reuses_phase: int | None = Field(default=None, description="reuse only: the phase that bought the hardware")
    note: str = ""

    @property
    def cash_usd(self) -> float:
        """What the phase pays out: its work, the port, and for a purchase its price and site rent."""
        return self.cost_usd + self.capex_usd + self.holding_usd + self.engineering_usd

    @property
    def spend_usd(self) -> float:
        """What the phase costs its owner: its cash less the resale of what it bought (fleets are chosen by it)."""
        return self.cash_usd - self.resale_usd


class FleetPlan(Out):
    """One way to equip the whole lifecycle, costed in cash over the horizon."""

    choice: str = Field(description="one-fleet (a purchase reused by later phases), split (some bought, some rented, "
                                    "or two purchases), rent (everything rented) or own")
    description: str
    phases: list[PhasePlan]
    capex_usd: float
    total_cost_usd: float = Field(description="what the fleet costs its owner over the horizon: purchases + site "
                                              "rent and power of what is owned + rentals − the purchases' resale at "
                                              "the horizon's end; fleets are chosen by it")
    cash_usd: float = Field(default=0.0, description="what is paid out over the horizon (total_cost_usd before "
                                                     "resale): the budget is checked against it")
    budget_left_usd: float | None = Field(default=None, description="the budget less cash_usd (null: no budget "
                                                                    "given)")
    within_budget: bool
    advice_points: float = Field(default=0.0, description="always 0: advice is not part of the fleet's choice (it "
                                                          "stays in the phases' findings); kept for the format")
    score: float = Field(default=0.0, description="the cheapest fleet's total as a percentage of this one's (100 = "
                                                  "the cheapest, 50 = twice its cost), for reading only: fleets within "
                                                  "the budget are chosen by total_cost_usd")


class LifecycleOut(Out):
    """The plan for the whole lifecycle."""

    fleet_choice: str = Field(description="one-fleet | split | rent | own: the chosen FleetPlan's choice")
    description: str
    horizon_months: float
    total_cost_usd: float = Field(description="what the chosen fleet costs its owner over the horizon, resale taken "
                                              "off (the figure fleets are chosen by)")
    cash_usd: float = Field(default=0.0, description="what it pays out over the horizon, before resale: what the "
                                                     "budget is checked against")
    capex_usd: float
    budget_usd: float | None = Field(default=None, description="budget.capex_usd + budget.monthly_usd × horizon "
                                                               "months (null when neither is given)")
    budget_left_usd: float | None = Field(default=None, description="the budget less cash_usd")
    within_budget: bool
    plan: list[PhasePlan] = Field(description="the chosen fleet, phase by phase (the timeline)")
    alternatives: list[FleetPlan] = Field(description="every fleet considered, cheapest first (the chosen one too)")
    notes: list[str] = Field(default_factory=list, description="how the figures were costed")
    why: list[WhyStep] = Field(default_factory=list, description="why this fleet: the chain to the phases' plans")


class PhaseResult(RecommendResult):
    """One phase of a lifecycle: its own consultation, with its place on the timeline."""

    phase: int = Field(description="1-based phase number")
    name: str
    model_from: int | None = Field(default=None, description="the phase whose trained model this one uses")
    start_month: float = 0.0
    months: float = 0.0
    cost_usd: float | None = Field(default=None, description="the phase's cost under the chosen fleet (its "
                                                              "purchase price included when it buys)")
