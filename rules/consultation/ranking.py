"""The last stratum: apply vetoes, rank the surviving options by what they cost, and shape the published result.

Every option is ranked by one figure in dollars: what choosing it costs its owner over the user's horizon (one run
for training, the hardware's life for serving), the sum of its cost parts — the pricing rules' (rental, hardware,
network, power, site, resale; rules/pricing/decision_cost.py) and the packs' `add_cost` rules' (engineering effort to
port). Constraints rule options out before; advice explains and moves no figure. Ties are broken by what the option
delivers (a shorter run, more serving capacity). Every ranking is recorded in the trace (rule `RANK`) with the option
and its added cost parts as premises, and the result says, in dollars, why the first option beat the second.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consultation.explain import Explainer
from gpuadvisor.rules.consultation.findings import triage
from gpuadvisor.rules.consultation.how import how_entries
from gpuadvisor.rules.consultation.preference import LAST_RESORT, TIER_WORDS, Tier, tier
from gpuadvisor.rules.consultation.result import (
    AcceleratorRef,
    AssumptionOut,
    Cost,
    CostPartOut,
    DecisionCostOut,
    Disaggregated,
    InstanceRef,
    KnowledgeOut,
    MemoryBreakdown,
    ProfileOut,
    Recommendation,
    RecommendResult,
    RuledOut,
    UnitRef,
    Warning,
    severity_of,
)
from gpuadvisor.rules.engine import Consultation
from gpuadvisor.rules.engine.gcpause import paused_gc
from gpuadvisor.rules.inputs.answers import Answers, assumed_load
from gpuadvisor.rules.inputs.effective import effective_answers
from gpuadvisor.rules.inputs.resolve import Resolved
from gpuadvisor.rules.inputs.workload import Workload
from gpuadvisor.rules.planning.feasibility import Replan, candidates, checked
from gpuadvisor.rules.planning.planned import Planned
from gpuadvisor.rules.planning.units import UnitTable, unit_table
from gpuadvisor.rules.pricing.decision_cost import CostPart, DecisionCost
from gpuadvisor.rules.pricing.price_age import as_of_label
from gpuadvisor.rules.sizing.factors import changes_a_figure
from gpuadvisor.rules.sizing.units import billions_text, usd_text

RUNNERS_UP = 10
Fact = Mapping[str, Any]


def _targets(option: Fact) -> tuple[str, ...]:
    """Every ref a rule may have aimed at to concern this option."""
    refs = [str(option["ref"]), str(option["config"]), f"acc:{option['accelerator']}"]
    if option.get("instance_id"):
        refs.append(f"inst:{option['instance_id']}")
    return tuple(refs)


class _Index:
    """The finished fact store, indexed by what ranking needs."""

    def __init__(self, cons: Consultation, catalog: Catalog) -> None:
        self.cons = cons
        self.vetoes: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for fid, v in cons.of_kind("veto"):
            self.vetoes[str(v["target"])].append((fid, v))
        self.costs: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for fid, part in cons.of_kind("cost_part"):
            self.costs[str(part["target"])].append((fid, part))
        self.configs = {str(f["ref"]): (fid, f) for fid, f in cons.of_kind("config")}
        self.warnings = cons.of_kind("warning")
        self.warning_ids: dict[str, set[str]] = defaultdict(set)
        for _, w in self.warnings:
            if w.get("target"):
                self.warning_ids[str(w["target"])].add(str(w.get("heuristic") or w["rule"]))
        self.explainer = Explainer(cons, catalog)
        self.profile_why: list[Any] = []
        self.explained: frozenset[int] = frozenset()
        self.options = cons.of_kind("option")
        self._targets: dict[Any, tuple[str, ...]] = {}
        self.one = {kind: (cons.of_kind(kind) or [(0, {})])[0] for kind in
                    ("workload", "parameters", "weights", "kv_cache", "demand", "compute_need", "memory_need",
                     "intensity", "model")}
        attached = cons.attachment(self.one["workload"][0]) if self.one["workload"][0] else None
        self.work: Workload | None = attached if isinstance(attached, Workload) else None
        """The consultation's Workload (None when it stopped before the profile was derived)."""

    def targets(self, option: Fact) -> tuple[str, ...]:
        """`_targets(option)`, computed once per option."""
        ref = option["ref"]
        found = self._targets.get(ref)
        if found is None:
            found = self._targets[ref] = _targets(option)
        return found

    def vetoes_of(self, option: Fact) -> list[tuple[int, dict[str, Any]]]:
        return [v for t in self.targets(option) for v in self.vetoes.get(t, [])]

    def costs_of(self, option: Fact) -> list[tuple[int, dict[str, Any]]]:
        """The cost parts rules added to this option (to it, its configuration or its accelerator)."""
        return [c for t in self.targets(option) for c in self.costs.get(t, [])]

    def decision_cost(self, fid: int) -> DecisionCost | None:
        """The option's own cost over the horizon (its pricing rule's attachment); None when it has no price."""
        attached = self.cons.attachment(fid)
        cost = attached.get("cost") if isinstance(attached, Mapping) else None
        return cost if isinstance(cost, DecisionCost) else None


def build_result(cons: Consultation, answers: Answers, resolved: Resolved, catalog: Catalog, *,
                 top: int = 5, replan: Replan | None = None) -> RecommendResult:
    """The published result. `replan(answers)` re-runs a consultation; when given, every "to make it feasible"
    suggestion is re-planned with it, and shown only when it works, cheapest resulting plan first."""
    with paused_gc():  # thousands of short-lived explanation lines, no reference cycles (see gcpause)
        return _build_result(cons, answers, resolved, catalog, top, replan)


def _build_result(cons: Consultation, answers: Answers, resolved: Resolved, catalog: Catalog,
                  top: int, replan: Replan | None) -> RecommendResult:
    idx = _Index(cons, catalog)
    workload = idx.work.workload if idx.work is not None else answers.workload
    ranked: list[Ranked] = []
    last = {str(f["target"]): (fid, f) for fid, f in cons.of_kind("last_resort")}
    for fid, opt in idx.options:
        base = idx.decision_cost(fid)
        if idx.vetoes_of(opt) or base is None:
            continue
        added = idx.costs_of(opt)
        cost = base.with_parts(tuple(CostPart(str(c["part"]), float(c["usd"]), str(c["reason"]),  # type: ignore[arg-type]
                                              str(c["rule"])) for _, c in added))
        if not math.isfinite(cost.total):
            continue
        sums = (" ".join(f"{'−' if p.usd < 0 else '+'} {p.part} {usd_text(abs(p.usd))}" for p in cost.parts)
                .removeprefix("+ ") or "nothing to pay")
        split = last.get(str(opt["config"]))
        place = tier(str(opt.get("acquisition") or "rent"), split is not None)
        why = (f"; {split[1]['reason']}: " if place == LAST_RESORT and split else "; ") + TIER_WORDS[place]
        rank_fid = cons.add({"kind": "ranked", "ref": f"rank:{opt['ref']}", "option": opt["ref"],
                             "usd": round(cost.total, 2),
                             "text": f"Costs {usd_text(cost.total)} {cost.horizon}: {sums}"
                                     + (why if TIER_WORDS[place] else "")},
                            "RANK", [fid, *(cfid for cfid, _ in added), *([split[0]] if split else [])])
        ranked.append(Ranked(fid, opt, cost, rank_fid, place))
    ranked.sort(key=lambda r: _rank_key(r, workload))
    profile_ids = [idx.one[k][0] for k in ("memory_need", "demand", "compute_need", "intensity") if idx.one[k][0]]
    idx.profile_why = idx.explainer.chains(profile_ids)
    idx.explained = frozenset(s.fact for s in idx.profile_why)
    first = ranked[0].cost.total if ranked else 0.0
    # what the user owns is listed wherever it ranks (issue 29: nothing the user states vanishes)
    recs = [_recommendation(n + 1, r, idx, catalog, workload, first, last) for n, r in enumerate(ranked)
            if n < top + RUNNERS_UP or r.opt.get("acquisition") == "own"]
    shown = {r.option for r in recs}
    # warnings about particular options are listed for the recommended ones; the plan-wide ones always
    shown_targets = {t for r in ranked[:top] for t in idx.targets(r.opt)}
    # costs added by rules explain the order of every listed option, runners-up included (why an option sank)
    listed_targets = {t for r in ranked[: top + RUNNERS_UP] for t in idx.targets(r.opt)}
    warnings = triage(_warnings(idx, shown_targets, listed_targets, recs), recs)
    effective, defaults = effective_answers(answers, resolved, idx.work, (cons.of_kind("usage") or [(0, {})])[0][1])
    return RecommendResult(
        answers=answers.given(), answers_effective=effective, defaults_applied=defaults,
        ranking_reason=ranking_reason(recs[:2]), contracts=_contracts(idx, workload),
        profile=_profile(idx, resolved), profile_why=idx.profile_why, feasible=bool(recs),
        headline=_own_first(cons, idx, _headline(recs[:top], answers, workload, idx.work, resolved.baseline))
        if recs else None,
        recommendations=recs[:top], runners_up=recs[top:],
        warnings=warnings, ruled_out=_ruled_out(cons, idx, catalog, shown), how=how_entries(cons),
        to_make_feasible=[] if recs else _to_make_feasible(idx, answers, replan),
        assumptions=_assumptions(catalog), knowledge=_knowledge(catalog, recs), rules_fired=len(cons.fired),
    )


@dataclass(frozen=True)
class Ranked:
    """A surviving option, what it costs over the horizon (its parts and the rules' added parts), and the id of
    the `ranked` fact recording it."""

    fid: int
    opt: dict[str, Any]
    cost: DecisionCost
    rank_fid: int
    tier: Tier = 1


SPENDS = {"own": 0, "free": 1}
"""Within the same whole dollar, what asks for no new spending comes first: hardware you own, then a free tier."""


def _rank_key(r: Ranked, workload: str) -> tuple[int, float, int, float, float, str]:
    """The tier first (rules/consultation/preference.py: the hardware you have, sound plans, last resorts); then
    cheapest first,
    to the dollar (a decision is not made on cents); within the same dollar, what asks for no new spending (a free
    tier), then the cheapest to the cent; then what the option delivers: a shorter run, or more serving capacity."""
    opt = r.opt
    if workload != "inference":
        delivers = float(opt.get("training_days") or math.inf)
    else:
        delivers = -float(opt.get("capacity_tokens_per_s") or opt.get("tokens_per_s") or 0.0)
    acquisition = str(opt.get("acquisition") or "rent")
    return (r.tier, round(r.cost.total), SPENDS.get(acquisition, 2), round(r.cost.total, 2), delivers,
            str(opt["ref"]))


CONTRACTS = (("buy", "buying"), ("capacity-block", "a short reserved cluster"), ("on-demand", "on demand"),
             ("spot", "spot"))
"""The ways a training run can be paid for, compared in the ranking's reason (issue 39)."""


def _contracts(idx: _Index, workload: str) -> str | None:
    """A training run compares buying, a short reserved cluster and on-demand (and spot): the cheapest of each,
    with the rule that rules it out when one does ('buying $1,212,536 — ruled out by D.lead-time')."""
    if workload == "inference":
        return None
    best: dict[str, tuple[float, str, str]] = {}
    for fid, opt in idx.options:
        kind = "buy" if opt.get("purchase") else str(opt.get("pricing") or "")
        cost = idx.decision_cost(fid)
        if kind not in dict(CONTRACTS) or cost is None:
            continue
        total = cost.with_parts(tuple(CostPart(str(c["part"]), float(c["usd"]), "", str(c["rule"]))  # type: ignore[arg-type]
                                      for _, c in idx.costs_of(opt))).total
        rules = sorted({str(v["rule"]) for _, v in idx.vetoes_of(opt)})
        if not math.isfinite(total):
            continue
        key = (0 if not rules else 1, total)
        held = best.get(kind)
        if held is None or key < (0 if not held[2] else 1, held[0]):
            best[kind] = (total, str(opt.get("title") or ""), ", ".join(rules))
    if len(best) < 2:
        return None
    words = []
    for kind, name in CONTRACTS:
        if kind in best:
            total, title, out_by = best[kind]
            words.append(f"{name} {usd_text(total)} ({title}" + (f"; ruled out by {out_by}" if out_by else "") + ")")
    return "By contract, the cheapest run: " + "; ".join(words) + "."


def ranking_reason(recs: list[Recommendation]) -> str | None:
    """Why the first option beat the second, in dollars and by part: 'costs $12,400 less over 36 months than #2
    (hardware −$40,000, power +$3,000, …)'."""
    if len(recs) < 2:
        return None
    a, b = recs[0].decision_cost, recs[1].decision_cost
    gap = b.usd - a.usd
    by_part: dict[str, float] = {}
    for sign, cost in ((1.0, a), (-1.0, b)):
        for p in cost.parts:
            by_part[p.part] = by_part.get(p.part, 0.0) + sign * p.usd
    moved = sorted(((k, v) for k, v in by_part.items() if abs(v) >= 0.5), key=lambda kv: -abs(kv[1]))
    parts = ", ".join(f"{k} {'+' if v > 0 else '−'}{usd_text(abs(v))}" for k, v in moved[:4])
    first, second = recs[0], recs[1]
    money = (f"#2 costs {usd_text(abs(gap))} {'more' if gap >= 0 else 'less'} {a.horizon} ({usd_text(b.usd)} "
             f"against {usd_text(a.usd)})")
    if first.acquisition == "own" and second.acquisition != "own":
        return f"#1 is the hardware you have and it runs the job: every other option is weighed against it; {money}."
    if second.last_resort and not first.last_resort:
        return (f"#2 is a last resort ({second.last_resort}), weighed after every plan that keeps each replica "
                f"inside one fast domain; {money}.")
    if round(a.usd) == round(b.usd):
        return (f"#1 and #2 cost the same {a.horizon} ({usd_text(a.usd)}, to the dollar); #1 ranks first as what "
                "asks for no new spending (hardware you own, a free tier), or for what it delivers (a shorter run, "
                "more serving capacity).")
    return (f"#1 costs {usd_text(gap)} less {a.horizon} than #2 ({usd_text(a.usd)} against {usd_text(b.usd)})"
            + (f": {parts}" if parts else "") + ".")


def _recommendation(rank: int, r: Ranked, idx: _Index, catalog: Catalog, workload: str,
                    first: float, last: Mapping[str, tuple[int, Fact]]) -> Recommendation:
    opt, rank_fid = r.opt, r.rank_fid
    cfg_fid, cfg = idx.configs[str(opt["config"])]
    acc = catalog.accelerators[str(opt["accelerator"])]
    planned = idx.cons.attachment(cfg_fid)
    if not isinstance(planned, Planned):
        raise LookupError(f"configuration {cfg['ref']}: no plan beside it")
    instance = None
    acquisition = str(opt.get("acquisition") or ("buy" if opt["purchase"] else "rent"))
    if acquisition in ("rent", "free"):
        instance = InstanceRef(id=str(opt["instance_id"]), provider=str(opt.get("provider_name") or opt["provider"]),
                               name=str(opt.get("instance_name") or opt["instance"]), pricing=opt["pricing"],
                               as_of=opt.get("price_as_of"), count=int(opt["instances"]))
    title = str(opt["title"])
    if acquisition == "rent":
        title = f"{title} — {acc.name}, {opt['pricing']}"
    elif acquisition == "buy":
        title = f"{title} — {acc.name}"
    capacity = acc.memory_gb.value
    memory = MemoryBreakdown.of(planned.memory, acc)
    warn_ids = sorted({w for t in idx.targets(opt) for w in idx.warning_ids.get(t, ())})
    return Recommendation(
        rank=rank, option=str(opt["ref"]), title=title,
        accelerator=AcceleratorRef(id=acc.id, name=acc.name, memory_gb=capacity, vendor=acc.vendor, market=acc.market),
        count=int(opt["count"]), accelerators_paid=int(opt["accelerators_paid"]),
        unit=UnitRef(name=str(opt.get("unit_name") or opt["title"]), kind=str(opt.get("unit_kind") or "instance"),
                     machines=int(cfg["machines"]), per_machine=int(cfg["fill"]),
                     topology=str(cfg.get("topology") or "")),
        nodes=int(cfg["nodes"]), tensor_parallel=int(cfg["tensor_parallel"]),
        expert_parallel=int(cfg.get("expert_parallel") or 1),
        pipeline_parallel=int(cfg["pipeline_parallel"]), replicas=int(cfg["replicas"]), instance=instance,
        replicas_for_load=_i(cfg.get("replicas_for_load")) if workload == "inference" else None,
        weights_precision=str(cfg.get("weights_precision") or "") or None,
        batch_per_replica=_i(cfg.get("batch_per_replica")), zero_stage=int(cfg.get("zero_stage") or 0),
        # your own GPUs meet failover with a spare replica on them (their machines are not known)
        failover=bool(cfg["meets_failover"]) and (int(cfg["machines"]) > 1 or acquisition == "own"
                                                  and int(cfg["replicas"]) > int(cfg.get("replicas_for_load") or 0))
        if workload == "inference" else None,
        purchase=bool(opt["purchase"]), acquisition=acquisition, fits=True,
        last_resort=str(last[str(opt["config"])][1]["reason"]) if str(opt["config"]) in last else None,
        memory_gb_per_gpu=float(cfg["memory_gb_per_gpu"]), memory=memory,
        bound=cfg["bound"], tokens_per_s=cfg.get("tokens_per_s") if workload == "inference" else None,
        tokens_per_s_per_user=cfg.get("tokens_per_s_per_user"), ttft_s=cfg.get("ttft_s"),
        capacity_tokens_per_s=cfg.get("capacity_tokens_per_s") if workload == "inference" else None,
        headroom=cfg.get("headroom") if workload == "inference" else None,
        # the option's own days: a spot run's reclaims stretch the configuration's (derivations._spot_wall)
        training_days=opt.get("training_days", cfg.get("training_days")),
        training_gpu_hours=cfg.get("training_gpu_hours"),
        cost=Cost(usd_per_hour=opt.get("usd_per_hour"), usd_per_run=opt.get("usd_per_run"),
                  usd_per_million_tokens=opt.get("usd_per_million_tokens"), capex_usd=opt.get("capex_usd"),
                  usd_per_month=opt.get("usd_per_month"), price_as_of=opt.get("price_as_of"),
                  price_source=opt.get("price_source"), price_kind=opt.get("price_kind"),
                  price_age_months=opt.get("price_age_months"), usage_hours=opt.get("usage_hours"),
                  price_basis=opt.get("price_basis"), node_known=opt.get("node_known"),
                  break_even_utilization=opt.get("break_even_utilization"),
                  capex_beyond_accelerators_usd=opt.get("capex_beyond_accelerators_usd"),
                  fabric_usd=opt.get("fabric_usd"),
                  power_kw=round(float(opt["power_w"]) / 1000, 3) if opt.get("power_w") is not None else None,
                  tco_usd=opt.get("tco_usd"), horizon_years=opt.get("horizon_years")),
        decision_cost=DecisionCostOut(  # the total is the sum of the parts as shown, to the cent
            usd=round(sum(round(p.usd, 2) for p in r.cost.parts), 2), horizon=r.cost.horizon,
            horizon_months=r.cost.months,
            parts=[CostPartOut(part=p.part, usd=round(p.usd, 2), label=p.label, rule=p.rule) for p in r.cost.parts],
            more_than_first_usd=None if rank == 1 else round(r.cost.total - first, 2)),
        warnings=warn_ids, notes=list(planned.notes), disaggregated=_disaggregated(opt),
        why=idx.explainer.chain(rank_fid),
    )


def _disaggregated(opt: Fact) -> Disaggregated | None:
    """The prefill/decode split weighed for an option (its `pd_*` fields), None when it was not weighed."""
    if "pd_offer" not in opt:
        return None
    fields = ("prefill_machines", "decode_machines", "machines", "colocated_machines", "prefill_replicas",
              "decode_replicas", "decode_batch", "ttft_s", "tokens_per_s_per_user", "kv_gb_per_request", "network",
              "usd_per_month", "capex_usd")
    return Disaggregated(offered=bool(opt["pd_offer"]), reason=str(opt["pd_reason"]),
                         kv_transfer_ms=opt.get("pd_transfer_ms"), **{f: opt.get("pd_" + f) for f in fields})


def _own_first(cons: Consultation, idx: _Index, headline: str) -> str:
    """The headline, after what the user's own part unknown to the knowledge base does with the job (rule OWN.unknown):
    'Try your own RTX 4060 Laptop GPU (8 GB) first: ...' when it holds it by its memory (a note), 'Your own ... does
    not hold this job by its memory, so: ...' when it does not (a risk) — the user starts from what they have."""
    unknown = cons.of_kind("owned_unknown")
    verdicts = {str(w.get("severity")) for _, w in idx.warnings if w.get("rule") == "OWN.unknown"}
    if not unknown or not verdicts:
        return headline
    own = unknown[0][1]
    cards = f"{own['count']}× {own['name']} ({own['memory_gb']:g} GB)"
    rest = f"{headline[:1].lower()}{headline[1:]}"
    if "info" in verdicts:
        return (f"Try your own {cards} first: by its memory it holds this job (its speed is not in the knowledge "
                f"base). Otherwise, {rest}")
    return f"Your own {cards} does not hold this job by its memory (finding OWN.unknown), so: {rest}"


PRICING_WORDS = {"on-demand": "on demand", "spot": "on spot capacity",
                 "reserved-1y": "on a 1-year reservation", "reserved-3y": "on a 3-year reservation",
                 "capacity-block": "on a short-term reserved cluster"}
"""How a rental is paid for, in the headline's words: an adverbial phrase after the plan ("Rent … on demand"), so a
pricing term that is itself a compound adjective ("on-demand") is said as the phrase it comes from, never prefixed
with "on" a second time (issue 42: "on on-demand capacity")."""


def _headline(recs: list[Recommendation], answers: Answers, workload: str, work: Workload | None = None,
              baseline: str | None = None) -> str:
    """The recommendation in one sentence: what to do, on what capacity, and why — the cheapest plan that meets
    what was asked, at what it costs over the horizon."""
    top = recs[0]
    c = top.cost
    per_run = workload != "inference"
    metric = c.usd_per_run if per_run else c.usd_per_month
    figure = decision_words(top.decision_cost)
    verb = {"rent": "Rent", "buy": "Buy", "free": "Use", "own": "Use"}[top.acquisition]
    short = top.accelerator.name.split(" (")[0]
    if top.acquisition == "own":
        engine = answers.inference.engine if "engine" in answers.inference.model_fields_set else None
        what = (f"your own {top.count:,}× {short}" + (f" {baseline}" if baseline else "")
                + (f" with {engine}, as you serve today" if workload == "inference" and engine else ""))
    elif top.acquisition == "free":
        what = top.unit.name
    elif top.unit.machines == 1 and top.count == 1:  # 'TensorWave MI300X (per GPU)', 'desktop PC with 1 × RTX 4090'
        what = top.unit.name if short.split()[-1] in top.unit.name else f"{top.unit.name} with 1 × {short}"
    else:
        what = f"{top.unit.machines:,} × {top.unit.name} ({top.count:,} × {short})"
    capacity = {"rent": f" {PRICING_WORDS.get(top.instance.pricing, top.instance.pricing)}" if top.instance
                else ""}.get(top.acquisition, "")
    goal = _asked(answers, workload, top, work.requests_per_minute if work is not None else None,
                  work.tokens_b if work is not None else None)
    meets = goal.replace(" that meets", " and meets", 1).replace(" that serves", " and serves", 1)
    if top.acquisition == "free" or top.decision_cost.usd <= 0:
        return f"{verb} {what}: it costs nothing{meets}."
    if top.acquisition == "own":
        return f"{verb} {what}: already paid for, only its power, {figure}{meets}."
    split = _split_clause(top, metric, per_run)
    return f"{verb} {what}{capacity}: the cheapest plan{goal}, at {figure}{_price_words(top)}.{split}"


def _price_words(top: Recommendation) -> str:
    """' (list price of 2026-07-28)', ' (aggregator's figure of 2026-05-18; the node it comes in … is not in the
    source)': what the headline's price is and when it was read (issue 39: price confidence travels with the
    figure to the headline)."""
    c = top.cost
    if c.price_basis is None:
        return ""
    when = as_of_label(c.price_as_of)
    dated = f" of {when}" if when != "undated" else ", undated"
    basis = PRICE_BASIS_WORDS.get(c.price_basis, f"{c.price_basis} price")
    node = "; the node it comes in (GPUs per node, fabric) is not in the source" if c.node_known is False else ""
    return f" ({basis}{dated}{node})"


PRICE_BASIS_WORDS = {"list": "list price", "list, transcribed": "list price as transcribed",
                     "aggregator": "an aggregator's figure", "street": "street price", "used": "used price",
                     "estimate": "an estimate", "system share": "a system-share estimate", "your quote": "your quote"}
"""A price's basis (Cost.price_basis) as the headline says it."""


def decision_words(d: DecisionCostOut) -> str:
    """'$12,394 over 36 months ($344 a month)', '$481 per run', 'under $1 per run': the total, and over a horizon
    its monthly average (every part included, so it is the total ÷ the months, whatever the price list says)."""
    total = f"${d.usd:,.0f}" if d.usd >= 0.5 else "under $1"
    if d.horizon_months is None:
        return f"{total} per run"
    monthly = d.usd / d.horizon_months if d.horizon_months else 0.0
    month = f" (${monthly:,.0f} a month)" if monthly >= 0.5 else ""
    return f"{total} {d.horizon}{month}"


def _money(metric: float | None, per_run: bool) -> str:
    """'$2,300 a month'; a paid plan whose figure rounds to nothing is 'under $1', not 'free'."""
    if metric is None:
        return "free"
    return (f"${metric:,.0f}" if metric >= 0.5 else "under $1") + (" per run" if per_run else " a month")


def _split_clause(top: Recommendation, metric: float | None, per_run: bool) -> str:
    """' Served disaggregated, …' when PD.split offers the recommended option's unit in separate prefill and decode
    pools for less: the ranking prices the colocated plan, so the saving is stated where it is read first."""
    d = top.disaggregated
    if per_run or d is None or not d.offered or d.machines is None or d.colocated_machines is None:
        return ""
    cost = d.usd_per_month if d.usd_per_month is not None else d.capex_usd
    current = metric if d.usd_per_month is not None else top.cost.capex_usd
    money = (f" for ${cost:,.0f}" + (" a month" if d.usd_per_month is not None else "")
             if cost is not None and current is not None and cost < current else "")
    return (f" Served disaggregated, the same unit needs {d.machines:,} machines instead of {d.colocated_machines:,} "
            f"({d.prefill_machines:,} prefill + {d.decode_machines:,} decode){money}: see PD.split.")


def fmt_duration(days: float) -> str:
    """'0.3 days' would hide an eight-hour run: hours below two days, days above, minutes below an hour."""
    if days * 24 < 1:
        return f"{days * 1440:,.1f} minutes" if days * 1440 >= 0.1 else "under a minute"
    return f"{days * 24:,.1f} hours" if days < 2 else f"{days:,.1f} days"


def fmt_tokens(tokens_b: float) -> str:
    """A token count in billions as people write it: '1.5T tokens', '20B tokens', '61M tokens' (never '6.1e-05B';
    the units module prints every count)."""
    return f"{billions_text(tokens_b)} tokens"


def _asked(answers: Answers, workload: str, top: Recommendation, derived_rpm: float | None = None,
           derived_tokens: float | None = None) -> str:
    """' that meets 1,000 req/min at p95 ≤ 5 s with failover' — the targets the plan was held to (a rate derived
    from daily active users is named with them; the tokens a run was sized for when none were given, or the
    headline read "meets the run in 30 days")."""
    parts: list[str] = []
    eff = answers.effective()
    if workload == "inference":
        rpm = eff.get("inference.requests_per_minute") or derived_rpm
        users = answers.inference.daily_active_users
        if rpm:
            parts.append(f"{rpm:,.0f} req/min" + (f" ({users:,} daily users at peak)" if users else ""))
        if answers.inference.concurrent_requests:
            n = answers.inference.concurrent_requests
            parts.append(f"{n:,} user{'s' if n != 1 else ''} at once")
        elif (assumed := assumed_load(answers.given())) is not None:
            parts.append(f"{assumed:,} requests in flight (assumed: no load stated)")
        if eff.get("inference.latency_p95_s"):
            parts.append(f"p95 ≤ {eff['inference.latency_p95_s']:g} s")
        if eff.get("inference.ttft_max_s"):
            parts.append(f"first token ≤ {eff['inference.ttft_max_s']:g} s")
        if eff.get("inference.min_tokens_per_s_per_user"):
            parts.append(f"≥ {eff['inference.min_tokens_per_s_per_user']:g} tokens/s per user")
        tail = " with failover" if top.failover and eff.get("inference.failover") else ""
    else:
        tokens = eff.get("training.tokens_b") or derived_tokens
        days = eff.get("training.deadline_days")
        run = fmt_tokens(tokens) if tokens else "the run"
        if days and top.training_days is not None:
            took = fmt_duration(top.training_days)
            run += f" in {days:g} days (it takes {took})"
        parts.append(run)
        tail = ""
    within = (f" within ${answers.budget.capex_usd:,.0f}" if answers.budget.capex_usd and top.acquisition == "buy"
              else "")
    if not parts:
        return (tail and f" that serves your load{tail}") + within
    return " that meets " + ", ".join(parts) + tail + (f",{within}" if within else "")


def _warnings(idx: _Index, shown_targets: set[str], listed_targets: set[str],
              recs: list[Recommendation]) -> list[Warning]:
    facts = {str(o["ref"]): o for _, o in idx.options}
    by_option: dict[str, list[str]] = defaultdict(list)
    for r in recs:  # a configuration, an accelerator or an offer can concern several listed options
        for t in idx.targets(facts[r.option]):
            by_option[t].append(r.option)
    groups: dict[tuple[str, str], tuple[int, dict[str, Any], list[str]]] = {}
    for fid, w in idx.warnings:
        target = str(w.get("target") or "")
        if target and target not in shown_targets:
            continue
        key = (str(w["rule"]), str(w["message"]))
        if key not in groups:
            groups[key] = (fid, w, [])
        if target and target in by_option:
            groups[key][2].extend(by_option[target])
    # a last resort among the listed options is a risk on them: it is why they rank after the sound plans
    for fid, lr in idx.cons.of_kind("last_resort"):
        target = str(lr["target"])
        if target not in listed_targets:
            continue
        if any(facts[o].get("acquisition") == "own" for o in by_option.get(target, ())):
            continue  # what you have is weighed first whatever its links (W3 and H5 say what they cost)
        key = ("W3.last-resort", str(lr["text"]))
        if key not in groups:
            groups[key] = (fid, {"heuristic": "W3", "rule": "W3.last-resort", "category": "warning",
                                 "severity": "warning", "message": f"{lr['text']}."}, [])
        if target in by_option:
            groups[key][2].extend(by_option[target])
    # a cost a rule adds (porting) is also a finding on the options it concerns: it is part of their ranked figure
    for target in sorted(listed_targets):
        for fid, part in idx.costs.get(target, []):
            key = (str(part["rule"]), str(part["reason"]))
            if key not in groups:
                groups[key] = (fid, {"heuristic": part.get("heuristic"), "rule": part["rule"], "category": "advice",
                                     "severity": "info",
                                     "message": f"{part['reason']} (a cost of {usd_text(float(part['usd']))}, "
                                                f"part of the option's figure)"}, [])
            if target in by_option:
                groups[key][2].extend(by_option[target])
    return [Warning(id=str(w.get("heuristic") or w["rule"]), rule=str(w["rule"]), category=w["category"],
                    severity=severity_of(str(w["severity"]), str(w["category"])), message=str(w["message"]),
                    options=sorted(set(opts)), why=idx.explainer.chain(fid, idx.explained))
            for fid, w, opts in groups.values()]


def _ruled_out(cons: Consultation, idx: _Index, catalog: Catalog, shown: set[str]) -> list[RuledOut]:
    """Per accelerator with no surviving option, why: the constraint that rules out what fits, else why nothing
    fits (on the largest unit tried: a small instance's failure is not the part's), else that it cannot be had."""
    out: dict[str, RuledOut] = {}
    survivors_by_acc: set[str] = set()
    vetoed: dict[str, list[tuple[int, dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for _, opt in idx.options:
        vs = idx.vetoes_of(opt)
        if not vs:
            survivors_by_acc.add(str(opt["accelerator"]))
        for vfid, v in vs:
            vetoed[str(opt["ref"])].append((vfid, v, opt))
    acc_level: dict[str, tuple[int, dict[str, Any]]] = {}
    for entries in vetoed.values():
        for vfid, v, opt in entries:
            if str(v["target"]) in (str(opt["config"]), f"acc:{opt['accelerator']}"):
                acc_level.setdefault(str(opt["accelerator"]), (vfid, v))
    for acc_id, (vfid, v) in acc_level.items():
        if acc_id not in survivors_by_acc:
            out[acc_id] = RuledOut(family=acc_id, name=catalog.accelerators[acc_id].name, reason=str(v["reason"]),
                                   rule=str(v["rule"]), heuristic=v.get("heuristic") or None,
                                   why=idx.explainer.chain(vfid, idx.explained))
    for ref, entries in vetoed.items():
        acc_id = str(entries[0][2]["accelerator"])
        if acc_id in out:
            continue
        if acc_id in acc_level:
            # the part survives in another form, and some of its configurations were ruled out as a whole (those
            # stay unlisted: a smaller unit that does not fit); an option ruled out for itself — spot past the
            # deadline, over the hourly budget — is listed, or nothing would say why it is gone
            entries = [e for e in entries if str(e[1]["target"]) == ref]
            if not entries:
                continue
        vfid, v, opt = entries[0]
        family = ref.removeprefix("opt:")
        reasons = "; ".join(dict.fromkeys(str(e[1]["reason"]) for e in entries))
        out[family] = RuledOut(family=family, name=str(opt.get("title") or opt["text"]).split(":")[0],
                               reason=reasons, rule=str(v["rule"]), heuristic=v.get("heuristic") or None,
                               why=idx.explainer.chain(vfid, idx.explained))
    planned = {str(cfg["accelerator"]) for _, cfg in idx.configs.values()}
    no_fit: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for fid, f in cons.of_kind("ruled_out"):
        no_fit[str(f["target"]).removeprefix("acc:")].append((fid, f))
    table = unit_table(catalog)
    # what the user owns is always accounted for: recommended, or here with its reason (issue 29)
    owned_options = {str(o["ref"]) for _, o in idx.options if o.get("acquisition") == "own"}
    for fid, f in cons.of_kind("ruled_out"):
        shape = str(f.get("shape") or "")
        if shape.startswith("own:"):
            out[shape] = RuledOut(family=shape, name=f"your own {shape.rsplit(':', 1)[-1]}× {f['name']}",
                                  reason=str(f["reason"]), rule=str(f["rule"]),
                                  heuristic=_heuristic(cons, str(f["rule"])),
                                  why=idx.explainer.chain(fid, idx.explained))
    for ref in owned_options - shown:
        if vetoed.get(ref):
            vfid, v, opt = vetoed[ref][0]
            out[ref] = RuledOut(family=ref.removeprefix("opt:"), name=str(opt.get("title") or opt["text"]),
                                reason="; ".join(dict.fromkeys(str(e[1]["reason"]) for e in vetoed[ref])),
                                rule=str(v["rule"]), heuristic=v.get("heuristic") or None,
                                why=idx.explainer.chain(vfid, idx.explained))
    _own_unpriced(out, idx, owned_options)
    _with_remedies(out, cons, idx)
    for acc_id, facts in no_fit.items():
        if acc_id in out or acc_id in planned or acc_id in survivors_by_acc:
            continue
        fid, f = max(facts, key=lambda e: _shape_size(table, str(e[1].get("shape", ""))))
        out[acc_id] = RuledOut(family=acc_id, name=str(f["name"]), reason=str(f["reason"]), rule=str(f["rule"]),
                               heuristic=_heuristic(cons, str(f["rule"])), why=idx.explainer.chain(fid, idx.explained))
    offered = {str(o["accelerator"]) for _, o in idx.options}
    for cfid, cfg in idx.configs.values():
        acc_id = str(cfg["accelerator"])
        if acc_id not in out and acc_id not in survivors_by_acc and acc_id not in offered:
            out[acc_id] = RuledOut(family=acc_id, name=str(cfg["accelerator_name"]),
                                   reason="no way to acquire it: no priced cloud instance in the knowledge base, and "
                                          "purchase excluded or not possible (deployment.where, or a cloud-only part)",
                                   rule="ACQUIRE", heuristic=None, why=idx.explainer.chain(cfid, idx.explained))
    return [out[k] for k in sorted(out)]


def _own_unpriced(out: dict[str, RuledOut], idx: _Index, owned_options: set[str]) -> None:
    """Your own GPUs planned but never offered, because a constraint ruled the configuration out before it was
    priced (C.own-where: rentals only): listed with that constraint."""
    offered = {str(o["config"]) for _, o in idx.options if o.get("acquisition") == "own"}
    for ref, (_, cfg) in idx.configs.items():
        if not str(cfg.get("shape", "")).startswith("own:") or ref in offered:
            continue
        vetoes = idx.vetoes.get(ref, [])
        if vetoes:
            vfid, v = vetoes[0]
            out[str(cfg["shape"])] = RuledOut(
                family=str(cfg["shape"]), name=f"your own {cfg['count']}× {cfg['accelerator_name']}",
                reason="; ".join(dict.fromkeys(str(x["reason"]) for _, x in vetoes)), rule=str(v["rule"]),
                heuristic=v.get("heuristic") or None, why=idx.explainer.chain(vfid, idx.explained))


def _with_remedies(out: dict[str, RuledOut], cons: Consultation, idx: _Index) -> None:
    """Each ruled-out entry of your own GPUs with what would make them work (rule OWN.remedy), explained from the
    remedy fact, whose chain holds the facts that ruled them out."""
    remedies = {str(f["shape"]): (fid, f) for fid, f in cons.of_kind("remedy")}
    if not remedies:
        return
    shapes = {str(cfg.get("shape")) for _, cfg in idx.configs.values()}
    for key, entry in list(out.items()):
        shape = key if key.startswith("own:") else next(
            (s for s in shapes if s.startswith("own:") and key.endswith(":own")), "")
        if shape not in remedies:
            continue
        fid, fix = remedies[shape]
        out[key] = entry.model_copy(update={
            "reason": f"{entry.reason.rstrip('.')}. What would make them work: {fix['reason']}.",
            "why": idx.explainer.chain(fid, idx.explained)})


def _shape_size(table: UnitTable, shape: str) -> tuple[int, int]:
    """How much a unit shape can hold: (joinable, accelerators per machine); the user's own machine counts as is."""
    if shape.startswith("own:"):
        return 0, int(shape.rsplit(":", 1)[-1])
    unit = table.by_shape.get(shape)
    if unit is None:
        return 0, 0
    return int(unit.topology.joinable), unit.node


def _i(x: Any) -> int | None:
    return None if x is None else int(x)


def _heuristic(cons: Consultation, rule_id: str) -> str | None:
    rule = cons.rules.get(rule_id)
    return (rule.heuristic or None) if rule else None


def _to_make_feasible(idx: _Index, answers: Answers, replan: Replan | None) -> list[str]:
    """The binding constraints with their numbers, each re-planned when `replan` is given (cheapest plan first)."""
    ruled: list[tuple[Fact, Fact, set[str]]] = []
    for _, opt in idx.options:
        rules = {str(v["rule"]) for _, v in idx.vetoes_of(opt)}
        if rules:
            ruled.append((opt, idx.configs.get(str(opt["config"]), (0, {}))[1], rules))
    no_fit = bool(idx.cons.of_kind("ruled_out")) and not idx.configs
    weights = idx.one["weights"][1]
    usage = (idx.cons.of_kind("usage") or [(0, {})])[0][1]
    found = candidates(ruled, answers, usage, no_fit or not ruled, float(weights.get("bits", 16) or 16))
    if replan is not None:
        tips = checked(found, answers, replan)
    else:
        tips = [s.text for s in sorted(found, key=lambda s: s.cost)]
    if tips:
        return tips
    binding = sorted({r for _, _, rs in ruled for r in rs})
    if binding:
        return [f"No single change to your answers makes a plan feasible; the options were ruled out by "
                f"{', '.join(binding)} (see 'Ruled out' for each one's numbers)."]
    return ["No option could be costed: add prices for your hardware in a knowledge overlay "
            "(`gpuadvisor kb path`), or allow renting (deployment.where = \"either\")."]


def _profile(idx: _Index, resolved: Resolved) -> ProfileOut:
    p, w, kv = idx.one["parameters"][1], idx.one["weights"][1], idx.one["kv_cache"][1]
    need, demand, compute = idx.one["memory_need"][1], idx.one["demand"][1], idx.one["compute_need"][1]
    intensity = idx.one["intensity"][1]
    weights_gb = float(w.get("gb") or need.get("weights_gb") or 0.0)
    return ProfileOut(
        model=resolved.model.name, model_source=resolved.model.source,
        parameters_total=int(p.get("total", 0)), parameters_active=int(p.get("active", 0)),
        weights_gb=weights_gb, kv_cache_gb=float(kv.get("gb_total", 0.0)),
        kv_cache_bytes_per_token=float(kv.get("bytes_per_token", 0.0)),
        training_memory_gb=float(need["total_gb"]) if need and need.get("mode") != "inference" else None,
        required_tokens_per_s=float(demand["tokens_per_s"]) if demand else None,
        training_flops=float(compute["flops"]) if compute else None,
        bound=str(intensity.get("bound", "compute" if idx.work is None or idx.work.training else "bandwidth")),
    )


def _assumptions(catalog: Catalog) -> list[AssumptionOut]:
    """The assumptions a consultation reads: every one of the knowledge base that can change a figure (an
    engine-set default at 0 cannot: factors.changes_a_figure), so every screen and report lists the same ones."""
    out = []
    for a in sorted(catalog.assumptions.values(), key=lambda a: a.id):
        if not changes_a_figure(a.id, a.value):
            continue
        band = f" (range {a.low:g}–{a.high:g})" if a.low is not None and a.high is not None else ""
        out.append(AssumptionOut(id=a.id, title=a.title + band, value=a.value, unit=a.unit, low=a.low, high=a.high,
                                 source=", ".join(a.sources)))
    return out


def _knowledge(catalog: Catalog, recs: list[Recommendation]) -> KnowledgeOut:
    dates: dict[str, str] = {}
    for r in recs:
        if r.instance is not None:
            dates[r.instance.id] = r.instance.as_of or "undated"
        elif r.cost.price_as_of:
            dates[f"purchase:{r.accelerator.id}"] = r.cost.price_as_of
    files = [{"file": f.path.name, "sha256": f.sha256, "overlay": f.overlay, "entries": dict(f.counts)}
             for f in catalog.files]
    return KnowledgeOut(version=catalog.version, files=files, price_dates=dates)
