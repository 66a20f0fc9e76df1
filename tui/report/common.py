"""What every report format shares: number formatting, the answers table, cost metrics and the report header.

Keeping these in one place means Markdown, HTML and plain text show the same figures formatted the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from gpuadvisor.knowledge.sanitize import one_line as _one_line
from gpuadvisor.rules.consultation.ranking import fmt_tokens
from gpuadvisor.rules.consultation.result import (
    SEVERITY_ORDER,
    PhasePlan,
    Recommendation,
    RecommendResult,
    ReportMeta,
    Warning,
)
from gpuadvisor.rules.inputs.answers import assumed_load, flatten_dotted
from gpuadvisor.rules.sizing.units import fixed as fixed  # re-exported: the one rounding every report uses
from gpuadvisor.rules.sizing.units import flops_text, usd_text
from gpuadvisor.tui.present import (  # the option rows every screen and report shows: one presenter
    COST_DETAIL_ONLY as COST_DETAIL_ONLY,
)
from gpuadvisor.tui.present import MEMORY_PARTS as MEMORY_PARTS
from gpuadvisor.tui.present import NA as NA
from gpuadvisor.tui.present import cost_items as cost_items
from gpuadvisor.tui.present import decision_line as decision_line
from gpuadvisor.tui.present import decision_rows as decision_rows
from gpuadvisor.tui.present import hardware as hardware
from gpuadvisor.tui.present import headline_cost as headline_cost
from gpuadvisor.tui.present import holds
from gpuadvisor.tui.present import layout as layout
from gpuadvisor.tui.present import memory_line as memory_line
from gpuadvisor.tui.present import memory_parts as memory_parts
from gpuadvisor.tui.present import pct as pct
from gpuadvisor.tui.present import purchase_items as purchase_items
from gpuadvisor.tui.present import signed_usd as signed_usd
from gpuadvisor.tui.present import speed as speed
from gpuadvisor.tui.present import speed_items as speed_items
from gpuadvisor.tui.present import split_short as split_short
from gpuadvisor.tui.present import split_text as split_text
from gpuadvisor.tui.present import where as where
from gpuadvisor.tui.version import generator as generator
from gpuadvisor.tui.widgets.format import horizon


# --- numbers ---------------------------------------------------------------------------------------------------------
def gb(value: float) -> str:
    """GB (10^9 bytes) with one decimal: `117.7 GB`."""
    return f"{fixed(value, 1)} GB"


def usd(value: float) -> str:
    """Dollars with the precision a reader needs: `$15,000`, `$3.59`, `$0.738`, `$0` (free) — the units module's, as
    every screen prints them."""
    return usd_text(value)




def rate(value: float, unit: str = "tokens/s") -> str:
    """Throughputs: thousands separated, one decimal below 100."""
    return f"{fixed(value, 0 if value >= 100 else 1)} {unit}"


def number(value: float | int | str) -> str:
    """An assumption value or any other plain figure, without trailing zeros."""
    if isinstance(value, bool) or isinstance(value, str):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}"


def params(count: int) -> str:
    """Parameter counts in billions: `70.55 B`."""
    return f"{count / 1e9:,.2f} B"


def value_text(value: Any) -> str:
    """An answer value as a reader sees it (lists joined, booleans as yes/no, null as 'not set')."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(value_text(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {value_text(v)}" for k, v in value.items()) or "none"
    if isinstance(value, float):
        return number(value)
    return str(value)


def one_line(text: str) -> str:
    """Collapse newlines and control characters so a user string cannot break a table row or a heading (the one
    sanitiser, `knowledge.sanitize`)."""
    return _one_line(text)


# --- answers ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnswerRow:
    key: str
    value: str
    default: bool


def default_names(result: RecommendResult) -> set[str]:
    """The dotted names in `defaults_applied` (entries may also be spelled `name = value`)."""
    return {entry.split("=", 1)[0].strip() for entry in result.defaults_applied}


def given_names(result: RecommendResult) -> set[str]:
    """The dotted names of the answers the user set (the `answers` object holds only those)."""
    return {key for key, _ in flatten_dotted(result.answers)}


def answer_rows(result: RecommendResult, *, every: bool = False) -> list[AnswerRow]:
    """The effective answers the consultation used, each marked as set by the user or filled in by a default.

    "Your answer" means the user set it (`answers`); a default is one listed in `defaults_applied`. An answer in
    neither (the inference section of a fine-tuning job) does not apply to the workload and is left out, unless
    `every` asks for the whole answers model (then it is marked a default: the user did not set it)."""
    given, defaults = given_names(result), default_names(result)
    return [AnswerRow(key, value_text(value), key not in given)
            for key, value in flatten_dotted(result.answers_effective) if every or key in given or key in defaults]


def defaults_line(result: RecommendResult) -> str:
    """The defaults the consultation applied, as one sentence-long list: `training.deadline_days = 30, …`."""
    return "; ".join(one_line(d) for d in result.defaults_applied if not d.endswith("= not set"))


# --- header ----------------------------------------------------------------------------------------------------------
WORKLOAD_LABEL = {"inference": "inference", "training": "training from scratch", "finetune": "fine-tuning"}


def workload(result: RecommendResult) -> str:
    if result.lifecycle is not None:
        return "lifecycle"
    value = result.answers_effective.get("workload", result.answers.get("workload", ""))
    return str(value)


def title_for(result: RecommendResult) -> str:
    if result.lifecycle is not None:
        steps = " → ".join(f"{p.name} ({WORKLOAD_LABEL.get(str(p.answers_effective.get('workload', '')), '')})"
                           for p in result.phases)
        models = ", ".join(dict.fromkeys(p.profile.model for p in result.phases))
        return one_line(f"GPU lifecycle plan: {steps}, {models}")
    label = WORKLOAD_LABEL.get(workload(result), workload(result))
    return one_line(f"GPU recommendation: {result.profile.model}, {label}")


# --- lifecycles ([[phase]] answers files) ----------------------------------------------------------------------------
CHOICE_VERB = {"rent": "rent", "buy": "buy", "reuse": "reuse", "own": "use your own", "free": "use (free)"}


def phase_when(p: PhasePlan) -> str:
    """`months 0.0–0.8 (23 days)`, `months 0.8–36.0 (35.2 months)`."""
    days = p.months * 365.25 / 12
    span = (f"{days:,.0f} days" if days >= 1 else f"{fixed(days * 24, 1)} hours") \
        if p.workload != "inference" and not (p.runs and p.runs > 1) else f"{fixed(p.months, 1)} months"
    runs = f", {number(round(p.runs, 2))} runs" if p.runs and p.runs > 1 else ""
    return f"months {fixed(p.start_month, 1)}–{fixed(p.start_month + p.months, 1)} ({span}{runs})"


def phase_spend(p: PhasePlan) -> float:
    """What the phase costs its owner: its work, and for a purchase the price and the holding to the horizon less
    its resale then (the lifecycle's total is the sum of these)."""
    return p.spend_usd


def timeline_rows(result: RecommendResult) -> list[list[str]]:
    """One row per phase of the chosen fleet: phase, when, what it runs on, how, cost."""
    life = result.lifecycle
    if life is None:
        return []
    rows = []
    for p in life.plan:
        label = WORKLOAD_LABEL.get(p.workload, p.workload)
        how = CHOICE_VERB.get(p.choice, p.choice) + (f" (bought in phase {p.reuses_phase})" if p.reuses_phase else "")
        cost = usd(phase_spend(p))
        if p.capex_usd:
            site = f", {usd(p.holding_usd)} site" if p.holding_usd else ""
            when = f" at month {fixed(p.sold_month, 1)}" if p.sold_month is not None else ""
            resale = f", −{usd(p.resale_usd)} resale{when}" if p.resale_usd else ""
            port = f", {usd(p.engineering_usd)} porting" if p.engineering_usd else ""
            cost += f" ({usd(p.capex_usd)} to buy{site}, {usd(p.cost_usd)} power{port}{resale})"
        elif p.engineering_usd:
            cost += f" ({usd(p.cost_usd)}, {usd(p.engineering_usd)} porting)"
        rows.append([f"{p.phase}. {p.name}", label, phase_when(p), how, p.title.removeprefix("Buy "), cost])
    return rows


TIMELINE_HEADER = ["Phase", "Workload", "When", "How", "On", "Cost"]
FLEET_HEADER = ["#", "Fleet", "Bought", "Total", "Budget left"]


def fleet_rows(result: RecommendResult, limit: int = 6) -> list[list[str]]:
    """The ways to equip the phases that were costed, best first (the chosen one is #1), and the best of each kind
    (one fleet, split, rent…) that ranks lower, so one fleet and a split can always be compared."""
    life = result.lifecycle
    if life is None:
        return []
    shown = list(enumerate(life.alternatives, start=1))[:limit]
    kinds = {f.choice for _, f in shown}
    for n, f in enumerate(life.alternatives, start=1):
        if f.choice not in kinds:
            kinds.add(f.choice)
            shown.append((n, f))
    rows = []
    for n, f in shown:
        left = NA if f.budget_left_usd is None else (usd(f.budget_left_usd) if f.budget_left_usd >= 0
                                                     else f"−{usd(-f.budget_left_usd)}")
        rows.append([str(n), f.description + ("" if f.within_budget else " (over budget)"), usd(f.capex_usd),
                     usd(f.total_cost_usd), left])
    return rows


def lifecycle_totals(result: RecommendResult) -> str:
    """`Total $65,969 over 36 months: $29,835 bought; budget $2,000,000, $1,934,031 left.`"""
    life = result.lifecycle
    if life is None:
        return ""
    text = f"Total {usd(life.total_cost_usd)} over {number(life.horizon_months)} months"
    if life.capex_usd:
        resale = life.cash_usd - life.total_cost_usd
        text += (f" ({usd(life.cash_usd)} paid out, {usd(life.capex_usd)} of it bought, less {usd(resale)} resale)"
                 if resale > 0.005 else f" ({usd(life.capex_usd)} of it bought)")
    else:
        text += " (nothing bought)"
    if life.budget_usd is not None and life.budget_left_usd is not None:
        left = life.budget_left_usd
        text += f"; budget {usd(life.budget_usd)}, " + (f"{usd(left)} left" if left >= 0 else f"{usd(-left)} over")
    return text + ("." if life.within_budget else " — over budget.")


FLEET_NOTE = ("Each phase offers its best-ranked rentals and purchases; a later phase can also run on what an earlier "
              "one bought. The cheapest way within the budget is chosen by its Total (what it pays out less the "
              "resale of what it bought at the horizon's end); the budget is checked against what it pays out.")


def with_meta(result: RecommendResult, today: date | None = None, title: str | None = None) -> RecommendResult:
    """The result with its `report` header filled in; a header already present (a re-rendered report) is kept."""
    if result.report is not None and title is None:
        return result
    meta = ReportMeta(title=title or title_for(result), date=(today or date.today()).isoformat(), generator=generator())
    return result.model_copy(update={"report": meta})


def meta_of(result: RecommendResult) -> ReportMeta:
    """The header to print (filled in on the fly for a result that was never given one)."""
    filled = with_meta(result)
    assert filled.report is not None
    return filled.report


def summary(result: RecommendResult) -> str:
    """The opening sentence: whether a plan was found and what the workload needs (plain text, not escaped)."""
    p = result.profile
    verdict = "A workable plan was found." if result.feasible else "No option meets every requirement."
    weights, per_gpu = weights_needed(result)
    needs = [f"{gb(weights)} of weights" + (" per GPU in the recommended plan" if per_gpu else "")]
    if p.training_memory_gb is not None:
        needs.append(f"{gb(p.training_memory_gb)} in total to train (before sharding)")
    top = result.recommendations[0] if result.recommendations else None
    if top is not None and top.memory.kv_cache > 0:  # the figure the option's detail shows, at its batch
        kv = gb(top.memory.kv_cache) if holds(top.memory, "kv_cache") else "under 0.1 GB"  # not "0.0 GB"
        needs.append(f"{kv} of KV cache per GPU in the recommended plan")
    elif p.kv_cache_gb > 0:
        needs.append(f"{gb(p.kv_cache_gb)} of KV cache")
    joined = ", ".join(needs[:-1]) + f" and {needs[-1]}" if len(needs) > 1 else needs[0]
    if p.required_tokens_per_s:
        joined += f" to serve {rate(p.required_tokens_per_s)}"
    elif p.required_tokens_per_s is not None:
        joined += " (no throughput target given: each option's capacity is shown)"
    if p.training_flops is not None:
        joined += f", and {flops_text(p.training_flops)} of compute"
    # the recommended plan's own regime (its batch, its MoE experts read) when there is one, else the profile's
    regime = top.bound if top is not None else p.bound
    bound = "memory bandwidth" if regime == "bandwidth" else "compute"
    where = " on the recommended plan" if top is not None else ""
    return f"{verdict} {p.model} needs {joined}; the job is bound by {bound}{where}."


def headline(result: RecommendResult) -> str:
    """The recommendation in one sentence (rules/consultation/ranking.py builds it), or what stands in the way of
    one."""
    if result.headline:
        return one_line(result.headline)
    fix = f" {result.to_make_feasible[0]}" if result.to_make_feasible else ""
    return one_line(f"No plan meets every requirement.{fix}")


def _given(result: RecommendResult, dotted: str) -> Any:
    d: Any = result.answers
    for part in dotted.split("."):
        if not isinstance(d, Mapping) or part not in d:
            return None
        d = d[part]
    return d


def _effective(result: RecommendResult, dotted: str) -> Any:
    d: Any = result.answers_effective
    for part in dotted.split("."):
        if not isinstance(d, Mapping):
            return None
        d = d.get(part)
    return d


LONG_CONTEXT = 4096
"""A context window above the default: its user expects long requests, so the assumed lengths are said (W5.lengths)."""


def requirements(result: RecommendResult) -> list[tuple[str, str]]:
    """What was asked, as (label, value): the workload, the model and format actually used, then every target the
    user gave (load, service level, training size and deadline, budget, where, hardware owned)."""
    eff = result.answers_effective
    p = result.profile
    work = workload(result)
    # an unstated stage is not shown as "production": the production service level applies only when stated
    stage = str(eff.get("stage", "")) if _given(result, "stage") is not None else \
        "stage not given (no production service level imposed)" if work == "inference" else ""
    out = [("Workload", ", ".join(filter(None, [WORKLOAD_LABEL.get(work, work), stage]))),
           ("Model", f"{p.model}, {str(_effective(result, 'precision.weights') or '').upper()}"
                     f", context {int(_effective(result, 'precision.context_tokens') or 0):,} tokens")]
    def g(key: str) -> Any:
        return _given(result, key)

    if work == "inference":
        if (g("precision.context_tokens") or 0) > LONG_CONTEXT and g("inference.input_tokens") is None \
                and g("inference.output_tokens") is None:  # the lengths the KV cache was sized for (W5.lengths)
            out.append(("Requests", f"{int(_effective(result, 'inference.input_tokens') or 0):,} in + "
                                    f"{int(_effective(result, 'inference.output_tokens') or 0):,} out tokens a "
                                    "request, assumed (none given): the KV cache is sized for them; one request at "
                                    "the full context is checked to fit"))
        rpm = g("inference.requests_per_minute")
        if rpm is not None:
            tokens = (f" of {int(_effective(result, 'inference.input_tokens') or 0):,} in + "
                      f"{int(_effective(result, 'inference.output_tokens') or 0):,} out tokens")
            out.append(("Load", f"{number(float(rpm))} requests a minute{tokens}"))
        if p.required_tokens_per_s:
            out.append(("Demand", rate(p.required_tokens_per_s) + " to generate"))
        if g("inference.concurrent_requests") is not None:
            out.append(("Concurrency", f"{g('inference.concurrent_requests'):,} requests in flight"))
        elif (assumed := assumed_load(result.answers)) is not None:
            out.append(("Load", f"{assumed:,} requests in flight, assumed (no load stated): give requests a minute, "
                                "daily users or requests in flight and the replicas and KV cache follow yours"))
        sla = []
        if g("inference.latency_p95_s") is not None:
            sla.append(f"p95 latency ≤ {number(float(g('inference.latency_p95_s')))} s")
        if g("inference.ttft_max_s") is not None:
            sla.append(f"first token ≤ {number(float(g('inference.ttft_max_s')))} s")
        if g("inference.min_tokens_per_s_per_user") is not None:
            sla.append(f"≥ {number(float(g('inference.min_tokens_per_s_per_user')))} tokens/s per user")
        if sla:
            out.append(("Service level", ", ".join(sla)))
    else:
        tokens = _effective(result, "training.tokens_b")
        if tokens is not None:
            shown = fmt_tokens(float(tokens))
            out.append(("Training", shown + ("" if g("training.tokens_b") is not None else " (default)")))
        out.append(("Deadline", f"{number(float(_effective(result, 'training.deadline_days') or 0))} days"
                    + ("" if g("training.deadline_days") is not None else " (default)")))
    budget = [f"{usd(float(v))} {label}" for key, label in (("capex_usd", "to buy"), ("hourly_usd", "an hour"),
                                                             ("monthly_usd", "a month"))
              if (v := g(f"budget.{key}")) is not None]
    if budget:
        out.append(("Budget", ", ".join(budget)))
    where_ = {"cloud": "rent in the cloud", "on_prem": "buy (on premises)", "either": "rent or buy"}
    out.append(("Where", where_.get(str(_effective(result, "deployment.where")), "rent or buy")
                + (f", {number(float(h))} h a month" if (h := g("deployment.hours_per_month")) is not None else "")))
    if g("constraints.max_gpus") is not None:
        out.append(("At most", f"{g('constraints.max_gpus'):,} GPUs"))
    if g("current.gpu") is not None:
        # the rules resolve the part (rules/effective.py): its name, or the id as typed when it is not known
        name = _effective(result, "current.gpu_name") or g("current.gpu")
        size = f"{number(float(g('current.gpu_memory_gb')))} GB" if g("current.gpu_memory_gb") else ""
        memory = f" ({size})" if size and size not in str(name) else ""  # a memory variant's name says it
        out.append(("You have", f"{g('current.gpu_count') or 1}× {name}{memory}"))
    elif g("current.gpu_name") is not None:
        memory = f", {number(float(g('current.gpu_memory_gb')))} GB" if g("current.gpu_memory_gb") else ""
        out.append(("You have", f"{g('current.gpu_count') or 1}× {g('current.gpu_name')} (not in the knowledge "
                                f"base{memory})"))
    return [(label, one_line(value)) for label, value in out]


COST_NOTE = ("Total: what the decision costs over the horizon (one run for training; the hardware's life for "
             "serving), the sum of its parts — rental, or hardware, network, power and site less resale, plus the "
             "engineering a port takes; options are ranked by it, cheapest first.")
"""What the Total column means, printed wherever the column is shown."""


# --- options ---------------------------------------------------------------------------------------------------------
def speed_header(result: RecommendResult) -> str:
    """The ranking table's speed column: capacity and headroom for serving, run time for training."""
    if workload(result) == "inference":
        return "Capacity (× demand)" if result.profile.required_tokens_per_s else "Capacity"
    return "Time"


def total_label(recs: Sequence[Recommendation]) -> str:
    """What the ranked figure is, for a chart's title: `Total over 36 months`, `Total for one run`."""
    return f"Total {horizon(recs[0].decision_cost.horizon)}" if recs else "Total"


@dataclass(frozen=True)
class PriceRow:
    name: str
    key: str
    as_of: str


def price_rows(result: RecommendResult) -> list[PriceRow]:
    """Every price the consultation used with the date it was read: the knowledge section's `price_dates`, named
    after the options that use them, plus any option price missing there (so no price goes undated)."""
    ranked = [*result.recommendations, *result.runners_up]
    names: dict[str, str] = {}
    dates = dict(result.knowledge.price_dates)
    for r in ranked:
        if r.purchase or r.instance is None:
            key, name, when = f"purchase:{r.accelerator.id}", f"{r.accelerator.name}, purchase", r.cost.price_as_of
        else:
            inst = r.instance
            key, name, when = inst.id, f"{inst.label} ({inst.pricing})", inst.as_of
        names.setdefault(key, name)
        if key not in dates:
            dates[key] = when or r.cost.price_as_of or "unknown"
    return sorted((PriceRow(one_line(names.get(k, k)), one_line(k), one_line(v)) for k, v in dates.items()),
                  key=lambda row: (row.name.lower(), row.key))


def findings(result: RecommendResult, all_findings: bool = False) -> list[tuple[int, Warning]]:
    """(index, finding) in the triaged order (rules/consultation/findings.py): the ones shown by default, or every one
    (also for a report saved before findings were triaged, where none is marked)."""
    every = all_findings or not any(w.shown for w in result.warnings)
    return [(i, w) for i, w in enumerate(result.warnings) if every or w.shown]


def severity_counts(warnings: Sequence[Warning]) -> str:
    """`1 risk, 2 advice, 3 notes` (only the severities present)."""
    counts = {sev: sum(w.severity == sev for w in warnings) for sev in SEVERITY_ORDER}
    plural = {"risk": "risks", "advice": "advice", "note": "notes"}
    return ", ".join(f"{n} {sev if n == 1 else plural[sev]}" for sev, n in counts.items() if n)


def findings_intro(result: RecommendResult, all_findings: bool, more: str) -> str:
    """`13 findings (5 risks, 6 advice, 2 notes); the 5 that matter most are shown, about the recommended option
    first: <more> lists every one.` — `more` names how to ask for the rest (a flag, a key)."""
    total = len(result.warnings)
    if not total:
        return "No findings."
    shown = len(findings(result, all_findings))
    head = f"{total} finding{'s' if total != 1 else ''} ({severity_counts(result.warnings)})"
    if shown == total:
        return f"{head}, about the recommended option first, then by severity."
    return (f"{head}; the {shown} that matter most are shown, about the recommended option first: {more} lists "
            f"every one.")


def concerns(w: Warning, titles: Mapping[str, str]) -> str:
    """The options a finding concerns, by title (`the whole plan` when none)."""
    return "; ".join(titles.get(o, o) for o in w.options) if w.options else "the whole plan"


def ordinal_rank(rank: int) -> str:
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


# --- what applies to the workload -------------------------------------------------------------------------------------
SERVING_ASSUMPTIONS = ("allreduce_latency_", "burst_headroom", "compute_efficiency", "dau_", "decode_bandwidth",
                       "disagg_", "kv_transfer", "prefill_chunk", "port_weeks_serve_", "step_overhead",
                       "owned_utilization_production")
"""Assumptions (assumptions.toml ids, by prefix) that only serving reads."""
TRAINING_ASSUMPTIONS = ("training_", "finetune_", "port_weeks_train_", "spot_uninterrupted")
"""Assumptions only training and fine-tuning read (`finetune_` only fine-tuning, `training_global_batch` only
pretraining)."""
PURCHASE_ASSUMPTIONS = ("resale_", "colocation_", "power_usd", "pue", "hardware_lifetime", "server_accounting",
                        "consumer_dense_throttle", "lead_time_weeks_")
"""Assumptions that cost hardware bought: read only when an option shown is a purchase (a lead time only when one
of its kind of system: lead_time_weeks_<unit kind>)."""
PORT_SUFFIX = {"amd": "rocm", "apple": "apple", "google": "tpu", "aws": "neuron", "intel": "gaudi"}
"""The `port_weeks_*_<stack>` an option of a vendor pays (NVIDIA's CUDA needs no port)."""
STAGE_ASSUMPTIONS = {"usage_hours_learning": "learning", "usage_hours_prototyping": "prototyping"}
MOE_ACTIVE_SHARE = 0.8
"""A model whose active parameters are under this share of its total is a mixture of experts (a dense model's
"active" count only leaves out its embeddings: 7.5 of 8.03 B for Llama 3.1 8B; Mixtral activates 12.9 of 46.7)."""


def is_moe(result: RecommendResult) -> bool:
    p = result.profile
    return 0 < p.parameters_active < MOE_ACTIVE_SHARE * p.parameters_total


def assumption_applies(assumption_id: str, result: RecommendResult) -> bool:
    """Whether the options shown read this assumption: no serving or mixture-of-experts figures for a QLoRA job, no
    training figures for serving, resale and power only when an option shown is bought, the port of a vendor only
    when one of its options shown pays a port (a learner's pays none: rule H10.port), the usage hours of the
    stated stage only."""
    work = workload(result)
    shown = [*result.recommendations, *result.runners_up]
    if assumption_id.startswith(SERVING_ASSUMPTIONS):
        if work != "inference":
            return False
    elif assumption_id.startswith(TRAINING_ASSUMPTIONS):
        if work == "inference" or (assumption_id.startswith("finetune_") and work != "finetune") \
                or (assumption_id.startswith("training_global_batch") and work != "training"):
            return False
    if assumption_id.startswith("moe_"):
        return is_moe(result)
    if assumption_id.startswith(PURCHASE_ASSUMPTIONS):
        bought = [r for r in shown if r.purchase]
        if not bought:
            return False
        if assumption_id.startswith("lead_time_weeks_"):
            return any(r.unit.kind == assumption_id.removeprefix("lead_time_weeks_") for r in bought)
        if assumption_id.startswith("resale_share_"):
            classes = {"apple" if r.accelerator.vendor == "apple" else r.accelerator.market for r in bought}
            return any(f"_{k}_" in assumption_id for k in classes)
        return True
    if assumption_id.startswith("port_weeks_") or assumption_id == "ml_engineer_loaded_usd_per_week":
        stacks = {PORT_SUFFIX[r.accelerator.vendor] for r in shown if r.accelerator.vendor in PORT_SUFFIX
                  and any(p.part == "engineering" for p in r.decision_cost.parts)}
        return any(assumption_id.endswith(f"_{s}") for s in stacks) if assumption_id.startswith("port_") \
            else bool(stacks)
    stage = STAGE_ASSUMPTIONS.get(assumption_id)
    return stage is None or result.answers_effective.get("stage") == stage


@dataclass(frozen=True)
class RuledOutGroup:
    rule: str
    heuristic: str | None
    names: list[str]
    reason: str
    """The first entry's reason, as an example of the group's."""


def ruled_out_groups(result: RecommendResult) -> list[RuledOutGroup]:
    """The ruled-out options grouped by the rule that ruled them out, largest group first (the short list a reader
    scans; the full list is behind --full or folded)."""
    groups: dict[str, RuledOutGroup] = {}
    for o in result.ruled_out:
        g = groups.get(o.rule)
        if g is None:
            groups[o.rule] = RuledOutGroup(o.rule, o.heuristic, [o.name], o.reason)
        elif o.name not in g.names:
            g.names.append(o.name)
    return sorted(groups.values(), key=lambda g: -len(g.names))


def names_text(names: Sequence[str], limit: int = 4) -> str:
    """`A, B, C, D and 12 more`."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def splits_model(rec: Recommendation) -> bool:
    """Whether the option's GPUs each hold a part of the weights (tensor, pipeline or expert parallel, ZeRO-3)."""
    return rec.tensor_parallel * rec.pipeline_parallel * rec.expert_parallel > 1 or rec.zero_stage >= 3


def weights_needed(result: RecommendResult) -> tuple[float, bool]:
    """(GB, per GPU) of the weights the summary and the profile print: the recommended plan's (what its memory
    breakdown shows, 16-bit embeddings of a 4-bit model included), per GPU when the plan splits the model; the
    profile's estimate only when there is no plan."""
    top = result.recommendations[0] if result.recommendations else None
    if top is None:
        return result.profile.weights_gb, False
    return top.memory.weights, splits_model(top)



# --- what a report holds ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sections:
    """Which parts of one consultation a report shows. A consultation's own report shows them all; a phase inside a
    lifecycle report is one of several, so by default it shows its ranking without the runners-up and the details of
    its first option only, and leaves the assumptions and the knowledge base to the lifecycle, which lists them once
    for every phase (issue 42: a lifecycle's Markdown within 400 lines). `--full` restores everything everywhere."""

    runners_up: bool = True
    details: int | None = None
    """How many options get a details section (None: every recommended option)."""
    shared: bool = True
    """The assumptions and the knowledge base (a lifecycle writes them once, for the whole)."""


def sections(full: bool, phase: bool) -> Sections:
    """The sections of a consultation's report (`phase`: as a part of a lifecycle report)."""
    return Sections() if full or not phase else Sections(runners_up=False, details=1, shared=False)


def assumptions_used(results: Sequence[RecommendResult]) -> list[Any]:
    """The assumptions any of these consultations reads (a lifecycle's phases: listed once for the whole)."""
    first = results[0].assumptions if results else []
    return [a for a in first if any(assumption_applies(a.id, r) for r in results)]


def count_of(n: int, one: str, many: str) -> str:
    """`1 runner-up`, `9 runners-up`."""
    return f"{n} {one if n == 1 else many}"
