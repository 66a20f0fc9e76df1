"""What would make an infeasible consultation feasible: the binding constraints, with their numbers.

Each vetoed option says which constraints ruled it out. An option ruled out by one kind of constraint only is one
change away from being feasible, so the change it needs is computed from its own figures (its monthly cost against
the budget, its per-user speed against the SLA, its GPU count against the maximum). Each change is then re-planned —
the whole consultation runs again with the change applied — and shown with the plan it leads to, cheapest plan
first: a change that does not make a plan feasible is not shown, and "allow 16 GPUs" comes before "wait 1,333 days"
when the first gives the cheaper plan that meets the goal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.inputs.answers import Answers, flatten_dotted
from gpuadvisor.rules.inputs.fact_kinds import Fact
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS


class BestPlan(NamedTuple):
    """The plan a consultation leads to: what ranks it (per run or a month), a line that says what it is, and the
    figures a relaxed answer can be tightened to (training days, hardware price, cost a month)."""

    cost: float
    text: str
    days: float | None = None
    capex: float | None = None
    monthly: float | None = None


TIGHTEN: dict[tuple[str, ...], tuple[str, str, str, str]] = {
    ("training.deadline_days",): ("training", "deadline_days", "days",
                                  "Extend training.deadline_days to {v:g} (now {now:g})"),
    ("budget.capex_usd",): ("budget", "capex_usd", "capex", "Raise budget.capex_usd to ${v:,.0f} (now ${now:,.0f})"),
    ("budget.monthly_usd",): ("budget", "monthly_usd", "monthly",
                              "Raise budget.monthly_usd to ${v:,.0f} (now ${now:,.0f})"),
}
"""Levers a found plan tightens: the plan re-planned under a relaxed answer may need less than the relaxation
(a deadline of 66 days freed a plan that takes 31), so the answer is set to the plan's own figure and checked."""


Replan = Callable[[Answers], BestPlan | None]
MAX_CHECKS = 8
TRIES_PER_LEVER = 2
"""Re-runs spent on checking suggestions (each is one consultation, ~50 ms)."""

BUDGET_RULES = frozenset({"B.capex", "B.hourly", "B.monthly"})
SLA_RULES = frozenset({"SLA.per-user", "SLA.ttft", "SLA.latency"})


@dataclass(frozen=True)
class Suggestion:
    """One change to the answers, the sentence that explains it, and what the option it frees costs."""

    text: str
    changes: Mapping[str, Any]
    cost: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    relax: float = 0.0
    """How far the change moves the answer (days added, dollars added, GPUs allowed beyond the maximum): the
    smallest relaxation of a lever is re-planned first."""

    @property
    def lever(self) -> tuple[str, ...]:
        """The answers the change touches (one suggestion per lever is shown)."""
        return tuple(sorted(f"{k}.{kk}" if isinstance(v, Mapping) else k for k, v in self.changes.items()
                            for kk in (v if isinstance(v, Mapping) else [k])))


def _name(opt: Fact) -> str:
    where = "" if opt.get("purchase") else f" on {opt.get('instance')} ({opt.get('pricing')})"
    verb = "buying " if opt.get("purchase") else ""
    return f"{verb}{opt.get('count')}× {opt.get('accelerator_name')}{where}"


def _money(x: float) -> str:
    return f"${x:,.0f}" if x >= 100 else f"${x:,.2f}"


def _budget(opt: Fact, rules: set[str], answers: Answers, usage: Fact) -> list[Suggestion]:
    out: list[Suggestion] = []
    month = float(opt.get("usd_per_month") or 0)
    if "B.monthly" in rules and answers.budget.monthly_usd is not None and month > 0:
        budget = answers.budget.monthly_usd
        hourly = float(opt.get("usd_per_hour") or 0)
        per_run = answers.workload != "inference"
        if not opt.get("purchase") and hourly > 0 and not per_run:
            overhead = float(usage.get("sessions_per_month", 1)) * float(usage.get("session_overhead_h", 0))
            hours = math.floor(budget / hourly - overhead)
            if hours >= 1:
                out.append(Suggestion(
                    f"The cheapest option, {_name(opt)}, costs {_money(month)} a month at "
                    f"{float(opt.get('usage_hours') or 0):,.0f} billed hours; {_money(budget)} buys about {hours:,} "
                    f"hours a month of it: set deployment.hours_per_month = {hours} (or fewer).",
                    {"deployment": {"hours_per_month": float(hours)}}, month, relax=-hours))
        out.append(Suggestion(
            f"Raise budget.monthly_usd to {_money(math.ceil(month))}: the cheapest option, {_name(opt)}, costs "
            f"{_money(month)} a month" + (" (its run spread over the months it takes)." if per_run else "."),
            {"budget": {"monthly_usd": float(math.ceil(month))}}, month, relax=month))
    if "B.capex" in rules and opt.get("capex_usd") is not None:
        capex = float(opt["capex_usd"])
        out.append(Suggestion(f"Raise budget.capex_usd to {_money(capex)}: {_name(opt)} costs {_money(capex)}.",
                              {"budget": {"capex_usd": float(math.ceil(capex))}}, month or capex / 36, relax=capex))
    if "B.hourly" in rules and opt.get("usd_per_hour") is not None:
        hourly = float(opt["usd_per_hour"])
        out.append(Suggestion(f"Raise budget.hourly_usd to {_money(hourly)}: {_name(opt)} costs "
                              f"{_money(hourly)} an hour.",
                              {"budget": {"hourly_usd": round(math.ceil(hourly * 100) / 100, 2)}}, month,
                              relax=hourly))
    return out


def _sla(cfg: Fact, rules: set[str], answers: Answers, cost: float) -> list[Suggestion]:
    changes: dict[str, Any] = {}
    parts = []
    if "SLA.per-user" in rules and cfg.get("tokens_per_s_per_user"):
        v = math.floor(float(cfg["tokens_per_s_per_user"]) * 10) / 10
        changes["min_tokens_per_s_per_user"] = v
        now = answers.effective().get("inference.min_tokens_per_s_per_user")
        parts.append(f"inference.min_tokens_per_s_per_user to {v:g}" + (f" (now {now:g})" if now is not None else ""))
    if "SLA.ttft" in rules and cfg.get("ttft_s"):
        v = math.ceil(float(cfg["ttft_s"]) * 100) / 100
        changes["ttft_max_s"] = v
        parts.append(f"inference.ttft_max_s to {v:g} s")
    if "SLA.latency" in rules and cfg.get("latency_s"):
        v = math.ceil(float(cfg["latency_s"]) * 10) / 10
        changes["latency_p95_s"] = v
        parts.append(f"inference.latency_p95_s to {v:g} s")
    if not parts:
        return []
    relax = -float(changes.get("min_tokens_per_s_per_user", 0)) + float(changes.get("ttft_max_s", 0)) + float(
        changes.get("latency_p95_s", 0))
    return [Suggestion(f"Relax {', '.join(parts)}: the fastest {cfg.get('accelerator_name')} configuration "
                       "reaches that.", {"inference": changes}, cost, relax=relax)]


def _deadline(cfg: Fact, answers: Answers, cost: float) -> list[Suggestion]:
    days = float(cfg.get("training_days") or 0)
    if days <= 0:
        return []
    # a plan must leave the schedule margin free (planning: deadline × (1 − margin)), so the deadline that lets
    # this one through is its days ÷ (1 − margin); the re-plan in `checked` confirms it (an overlay may change it)
    deadline = math.ceil(days / (1.0 - DEFAULT_FACTORS.training_schedule_margin) - 1e-9)
    out = [Suggestion(f"Extend training.deadline_days to {deadline} (now "
                      f"{answers.training.deadline_days:g}): {cfg.get('count')}× {cfg.get('accelerator_name')} need "
                      f"{days:,.1f} days and a {DEFAULT_FACTORS.training_schedule_margin:.0%} schedule margin.",
                      {"training": {"deadline_days": float(deadline)}}, cost, relax=days)]
    cap = answers.constraints.max_gpus
    if cap is not None:
        # sized to the deadline less its schedule margin, as the plan is; the step does not shrink in proportion
        # to the GPUs (the exchange and the bubble stay), so the re-plan in `checked` confirms or drops it
        target = answers.training.deadline_days * (1.0 - DEFAULT_FACTORS.training_schedule_margin)
        need = math.ceil(int(cfg.get("count", 1)) * days / target * 1.05)
        out.append(Suggestion(f"Allow about {need:,} GPUs (constraints.max_gpus, now {cap:,}): "
                              f"{cfg.get('accelerator_name')} finishes in time with that many.",
                              {"constraints": {"max_gpus": need}}, cost, relax=need))
    return out


def _lead_time(opt: Fact, answers: Answers, cost: float) -> list[Suggestion]:
    """A purchase that cannot arrive in time (rule D.lead-time): the deadline counted from delivery, or a deadline
    long enough for delivery and the run with its schedule margin."""
    ready = float(opt.get("ready_days") or 0)
    if ready <= 0:
        return []
    deadline = math.ceil(ready / (1.0 - DEFAULT_FACTORS.training_schedule_margin) - 1e-9)
    lead = float(opt.get("lead_time_days") or 0)
    return [
        Suggestion(f"Count the deadline from delivery (training.deadline_from = \"delivery\"): {_name(opt)} "
                   f"arrives about {lead:,.0f} days after the order, then its run takes "
                   f"{float(opt.get('training_days') or 0):,.1f} days.",
                   {"training": {"deadline_from": "delivery"}}, cost, relax=lead),
        Suggestion(f"Extend training.deadline_days to {deadline} (now {answers.training.deadline_days:g}): "
                   f"{_name(opt)} arrives about {lead:,.0f} days after the order and its run ends on day "
                   f"{ready:,.0f}, with a {DEFAULT_FACTORS.training_schedule_margin:.0%} schedule margin.",
                   {"training": {"deadline_days": float(deadline)}}, cost, relax=ready),
    ]


def candidates(options: Iterable[tuple[Fact, Fact, set[str]]], answers: Answers, usage: Fact, no_fit: bool,
               weights_bits: float) -> list[Suggestion]:
    """Every single change that would free some ruled-out option (option, its configuration, the rules that ruled
    it out), computed from that option's own figures."""
    options = list(options)
    out: list[Suggestion] = []
    for opt, cfg, rules in options:
        cost = float(opt.get("usd_per_month") or opt.get("usd_per_run") or 0)
        if rules <= BUDGET_RULES:
            out += _budget(opt, rules, answers, usage)
        elif rules <= SLA_RULES:
            out += _sla(cfg, rules, answers, cost)
        elif rules == {"D.deadline"}:
            out += _deadline(cfg, answers, cost)
        elif rules == {"D.lead-time"}:
            out += _lead_time(opt, answers, cost)
        elif rules == {"C.max-gpus"}:
            out.append(Suggestion(f"Allow {cfg.get('count')} GPUs (constraints.max_gpus, now "
                                  f"{answers.constraints.max_gpus}): {cfg.get('accelerator_name')} needs that many.",
                                  {"constraints": {"max_gpus": int(cfg.get("count", 1))}}, cost,
                                  relax=int(cfg.get("count", 1))))
        elif rules == {"C.vendor"}:
            out.append(Suggestion(f"Allow vendor {opt.get('vendor')} (constraints.vendors): {_name(opt)} would "
                                  "qualify.", {"constraints": {"vendors": sorted({*answers.constraints.vendors,
                                                                                   str(opt.get("vendor"))})}}, cost))
        elif rules == {"C.provider"}:
            out.append(Suggestion(f"Allow provider {opt.get('provider')} (deployment.providers): {_name(opt)} "
                                  "would qualify.",
                                  {"deployment": {"providers": sorted({*answers.deployment.providers,
                                                                       str(opt.get("provider"))})}}, cost))
        elif rules <= {"C.spot", "SLA.on-demand"}:
            out.append(Suggestion(f"Allow spot capacity (deployment.spot = true): {_name(opt)} would qualify.",
                                  {"deployment": {"spot": True}}, cost))
        elif rules == {"SLA.failover"}:
            out.append(Suggestion(f"Accept one machine without failover (inference.failover = false): {_name(opt)} "
                                  "would qualify.", {"inference": {"failover": False}}, cost))
        elif rules == {"DC.geforce-licence-onprem"}:
            out.append(Suggestion(f"Declare desk-side use (deployment.desk_side = true): {_name(opt)} would "
                                  "qualify under the GeForce licence.", {"deployment": {"desk_side": True}}, cost))
    memory_bound = no_fit or any("C.max-gpus" in rules for _, _, rules in options)
    if memory_bound and weights_bits >= 8:
        # a smaller format is a lever only where the weights may be stored in one: serving, or adapters on a
        # 4-bit base; full training keeps 16-bit weights (resolve.weights_problem)
        if answers.workload == "inference":
            out.append(Suggestion("Quantize the weights (precision.weights = \"int4\"): 4-bit weights need about a "
                                  "quarter of 16-bit memory.", {"precision": {"weights": "int4"}}, math.inf))
        elif answers.method == "lora":
            out.append(Suggestion("Fine-tune on a 4-bit base (finetune.method = \"qlora\"): the frozen weights "
                                  "take about a quarter of their 16-bit memory.", {"finetune": {"method": "qlora"}},
                                  math.inf))
    return out


def _merged(answers: Answers, changes: Mapping[str, Any]) -> Answers | None:
    """The answers with a suggestion's changes (tables of them) applied; None when they do not validate."""
    try:
        return answers.with_changes(dict(flatten_dotted(changes)))
    except InputError:
        return None


def checked(suggestions: list[Suggestion], answers: Answers, replan: Replan) -> list[str]:
    """The changes that make the consultation feasible, each with the plan it leads to, cheapest resulting plan
    first. Per lever (the answers a change touches), the smallest relaxation is re-planned first, and the next only
    when it does not work (at most `TRIES_PER_LEVER` a lever, `MAX_CHECKS` in all)."""
    by_lever: dict[tuple[str, ...], list[Suggestion]] = {}
    for s in suggestions:
        by_lever.setdefault(s.lever, []).append(s)
    found: list[tuple[float, str]] = []
    checks = 0
    for lever in sorted(by_lever, key=lambda k: min(s.cost for s in by_lever[k])):
        tried: set[str] = set()
        for s in sorted(by_lever[lever], key=lambda s: (s.relax, s.cost))[:TRIES_PER_LEVER]:
            key = repr(sorted((k, sorted(v.items()) if isinstance(v, Mapping) else v) for k, v in s.changes.items()))
            if key in tried or checks >= MAX_CHECKS:
                continue
            tried.add(key)
            changed = _merged(answers, s.changes)
            if changed is None:
                continue
            checks += 1
            try:
                plan = replan(changed)
            except InputError:  # a change the answers take but the consultation refuses is no way out
                continue
            if plan is not None:
                tight = _tightened(lever, plan, answers, replan) if checks < MAX_CHECKS else None
                if tight is not None:
                    checks += 1
                found.append(tight or (plan.cost, f"{s.text} Then: {plan.text}."))
                break
    return [text for _, text in sorted(found, key=lambda f: f[0])]


def _tightened(lever: tuple[str, ...], plan: BestPlan, answers: Answers, replan: Replan) -> tuple[float, str] | None:
    """The lever set to the found plan's own figure, when that is a smaller change and still gives a plan."""
    spec = TIGHTEN.get(lever)
    if spec is None:
        return None
    section, key, field_name, words = spec
    figure = getattr(plan, field_name)
    if figure is None:
        return None
    value = float(math.ceil(figure))
    current = getattr(getattr(answers, section), key)
    changed = _merged(answers, {section: {key: value}})
    if changed is None:
        return None
    again = replan(changed)
    if again is None:
        return None
    if not isinstance(current, float | int):
        return None
    return again.cost, f"{words.format(v=value, now=current)}. Then: {again.text}."
