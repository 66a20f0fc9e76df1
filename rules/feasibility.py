"""What would make an infeasible consultation feasible: the binding constraints, with their numbers.

Each vetoed option says which constraints ruled it out. An option ruled out by one kind of constraint only is one
change away from being feasible, so the change it needs is computed from its own figures (its monthly cost against
the budget, its per-user speed against the SLA, its GPU count against the maximum). Suggestions are ordered
cheapest first and each is re-checked by running the consultation again with the change applied: a suggestion that
does not make the plan feasible is not shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.answers import Answers, parse_answers

Fact = Mapping[str, Any]
MAX_CHECKS = 8
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
                    {"deployment": {"hours_per_month": float(hours)}}, month))
        out.append(Suggestion(
            f"Raise budget.monthly_usd to {_money(math.ceil(month))}: the cheapest option, {_name(opt)}, costs "
            f"{_money(month)} a month" + (" (its run spread over the months it takes)." if per_run else "."),
            {"budget": {"monthly_usd": float(math.ceil(month))}}, month))
    if "B.capex" in rules and opt.get("capex_usd") is not None:
        capex = float(opt["capex_usd"])
        out.append(Suggestion(f"Raise budget.capex_usd to {_money(capex)}: {_name(opt)} costs {_money(capex)}.",
                              {"budget": {"capex_usd": float(math.ceil(capex))}}, month or capex / 36))
    if "B.hourly" in rules and opt.get("usd_per_hour") is not None:
        hourly = float(opt["usd_per_hour"])
        out.append(Suggestion(f"Raise budget.hourly_usd to {_money(hourly)}: {_name(opt)} costs "
                              f"{_money(hourly)} an hour.",
                              {"budget": {"hourly_usd": round(math.ceil(hourly * 100) / 100, 2)}}, month))
    return out


def _sla(cfg: Fact, rules: set[str], answers: Answers, cost: float) -> list[Suggestion]:
    changes: dict[str, Any] = {}
    parts = []
    if "SLA.per-user" in rules and cfg.get("tokens_per_s_per_user"):
        v = math.floor(float(cfg["tokens_per_s_per_user"]) * 10) / 10
        changes["min_tokens_per_s_per_user"] = v
        parts.append(f"inference.min_tokens_per_s_per_user to {v:g} (now "
                     f"{answers.inference.min_tokens_per_s_per_user:g})")
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
    return [Suggestion(f"Relax {', '.join(parts)}: the fastest {cfg.get('accelerator_name')} configuration "
                       "reaches that.", {"inference": changes}, cost)]


def _deadline(cfg: Fact, answers: Answers, cost: float) -> list[Suggestion]:
    days = float(cfg.get("training_days") or 0)
    if days <= 0:
        return []
    out = [Suggestion(f"Extend training.deadline_days to {math.ceil(days)}: {cfg.get('count')}× "
                      f"{cfg.get('accelerator_name')} need {days:,.1f} days.",
                      {"training": {"deadline_days": float(math.ceil(days))}}, cost)]
    cap = answers.constraints.max_gpus
    if cap is not None:
        need = math.ceil(int(cfg.get("count", 1)) * days / answers.training.deadline_days)
        out.append(Suggestion(f"Allow about {need:,} GPUs (constraints.max_gpus, now {cap:,}): "
                              f"{cfg.get('accelerator_name')} finishes in time with that many.",
                              {"constraints": {"max_gpus": need}}, cost))
    return out


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
        elif rules == {"C.max-gpus"}:
            out.append(Suggestion(f"Allow {cfg.get('count')} GPUs (constraints.max_gpus, now "
                                  f"{answers.constraints.max_gpus}): {cfg.get('accelerator_name')} needs that many.",
                                  {"constraints": {"max_gpus": int(cfg.get("count", 1))}}, cost))
        elif rules == {"C.vendor"}:
            out.append(Suggestion(f"Allow vendor {opt.get('vendor')} (constraints.vendors): {_name(opt)} would "
                                  "qualify.", {"constraints": {"vendors": sorted({*answers.constraints.vendors,
                                                                                   str(opt.get("vendor"))})}}, cost))
        elif rules == {"C.provider"}:
            out.append(Suggestion(f"Allow provider {opt.get('provider')} (deployment.providers): {_name(opt)} "
                                  "would qualify.",
                                  {"deployment": {"providers": sorted({*answers.deployment.providers,
                                                                       str(opt.get("provider"))})}}, cost))
        elif rules == {"C.spot"}:
            out.append(Suggestion(f"Allow spot capacity (deployment.spot = true): {_name(opt)} would qualify.",
                                  {"deployment": {"spot": True}}, cost))
    memory_bound = no_fit or any("C.max-gpus" in rules for _, _, rules in options)
    if memory_bound and weights_bits >= 8:
        out.append(Suggestion("Quantize the weights (precision.weights = \"int4\"): 4-bit weights need about a "
                              "quarter of 16-bit memory.", {"precision": {"weights": "int4"}}, math.inf))
    return out


def _merged(answers: Answers, changes: Mapping[str, Any]) -> Answers | None:
    data = answers.given()
    for section, values in changes.items():
        if isinstance(values, Mapping):
            data[section] = {**data.get(section, {}), **values}
        else:
            data[section] = values
    try:
        return parse_answers(data)
    except InputError:
        return None


def checked(suggestions: list[Suggestion], answers: Answers, feasible: Callable[[Answers], bool]) -> list[str]:
    """The suggestions that make the consultation feasible when applied, cheapest first, each change once."""
    out: list[str] = []
    seen: set[str] = set()
    checks = 0
    for s in sorted(suggestions, key=lambda s: s.cost):
        key = repr(sorted((k, sorted(v) if isinstance(v, Mapping) else v) for k, v in s.changes.items()))
        # one suggestion per lever (the answer it changes): the cheapest option's numbers
        if key in seen or checks >= MAX_CHECKS:
            continue
        seen.add(key)
        changed = _merged(answers, s.changes)
        if changed is None:
            continue
        checks += 1
        if feasible(changed):
            out.append(s.text)
    return out
