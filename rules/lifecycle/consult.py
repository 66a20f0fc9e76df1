"""A lifecycle consultation: a plan per phase, and a fleet for the whole (issue 21).

Each phase is consulted exactly as a one-workload answers file would be (`Advisor.consult`), so every heuristic that
concerns a phase fires on that phase. The whole is then equipped in cash over the horizon, in the ways the phases'
own plans allow — each phase rents (one of its best-ranked rentals), buys (one of its best-ranked purchases), or
reuses what an earlier phase bought (that phase consulted again with the purchase as the user's own hardware: the
"own" option must fit and meet its targets) — and the cheapest way within the budget is chosen: one fleet reused
across phases, a split (buy for training and rent for serving, or the reverse), or renting throughout. The choice is
what the fleet costs its owner alone (issue 26: a decision is ranked by what it costs its owner, resale taken off);
the budget is checked against the cash paid out; the phases' advice stays in their findings. The cheapest ways are
found by dynamic programming over the phases (rules/lifecycle/fleet_search.py), not by costing every combination, and a
lifecycle has at most MAX_PHASES phases (rules/lifecycle/answers.py).

Costs over the horizon (`horizon_months`, default the hardware's life): a rental is billed for its runs or its
months; a purchase is paid when its phase starts and held to the end of the horizon, paying site rent (per kW, none
for desk-side machines) all that time and power while busy, and is resold then (`economics.resale_usd`, the same
shares the one-workload ranking uses). What the phases'
interplay means (a cluster idle after its run, serving hardware too small to evaluate the trained model, a
purchase below the rent-vs-buy threshold once training is over) is decided by the lifecycle rules of the packs
(rules/packs/50-lifecycle.toml) over facts built here, so it is explained like any other finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consultation.explain import Explainer
from gpuadvisor.rules.consultation.result import (
    FleetPlan,
    LifecycleOut,
    PhasePlan,
    PhaseResult,
    Recommendation,
    RecommendResult,
    Warning,
    WhyStep,
    severity_of,
)
from gpuadvisor.rules.engine import Consultation, InputFact
from gpuadvisor.rules.inputs.answers import Answers
from gpuadvisor.rules.lifecycle.answers import DAYS_PER_MONTH, LifecycleAnswers, Phase
from gpuadvisor.rules.lifecycle.fleet_search import Held, Pick, SearchResult, Step, Use, fits, search
from gpuadvisor.rules.pricing.decision_cost import COMMITMENTS, Ownership
from gpuadvisor.rules.pricing.economics import Economics, PartAge, accelerator_age, economics, resale_usd
from gpuadvisor.rules.pricing.price import Buy, Rent, Service, Window, price
from gpuadvisor.rules.pricing.price_age import today
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors
from gpuadvisor.rules.sizing.units import HOURS_PER_MONTH

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.derivations import Derivations
    from gpuadvisor.rules.engine import RuleEngine
    from gpuadvisor.rules.inputs.resolve import Resolved


class Advisor(Protocol):
    """What a lifecycle needs of the advisor that consults its phases (rules/consult.py's Advisor is one): named
    here, not imported, so that consult.py may call the lifecycle without a circle of imports."""

    catalog: Catalog
    derivations: Derivations
    engine: RuleEngine

    def run(self, answers: Answers) -> tuple[Consultation, Resolved]: ...

    def consult(self, answers: Answers, *, top: int = 5) -> RecommendResult: ...

MAX_REUSE_PHASES = 6
"""Up to this many phases a later phase may run on an earlier one's purchase: each (phase, earlier purchase) pair is
one more consultation (15 for six phases), and it keeps the fleet search's states few
(rules/lifecycle/fleet_search.py)."""
ALTERNATIVES_LISTED = 10
"""The cheapest fleets listed as alternatives (beside the cheapest of each kind: one fleet, split, rent, own)."""
IDLE_SHARE = 0.05
"""A purchase whose accelerators later phases keep busy less than this share of the time after its run is idle."""
DESK_SIDE_KINDS = frozenset({"desktop", "workstation"})
"""Units that stand beside a desk: no server-room rent (systems.toml desk_side)."""
FAILOVER_RULE = "SLA.failover"
CANDIDATES_PER_KIND = 3
"""Each phase offers its three best-ranked rentals and three best-ranked purchases to the fleet's choice."""
H15_BREAK_EVEN = 0.35
"""Break-even utilization when a purchase has no priced rental to compare with: the middle of H15's 30-40%."""


@dataclass(frozen=True)
class Candidate:
    """A way one phase can run: rent (or free, or own), buy, or reuse an earlier phase's purchase."""

    choice: str
    title: str
    option: str | None
    accelerator: str
    count: int
    machines: int
    per_machine: int
    memory_gb: float
    usd_per_run: float | None
    usd_per_month: float | None
    training_days: float | None
    capex_usd: float = 0.0
    power_kw: float = 0.0
    break_even: float | None = None
    utilization: float = 1.0
    """Busy share while the phase runs (serving: deployment.utilization as the phase used it)."""
    desk_side: bool = False
    note: str = ""
    usd_per_hour: float | None = None
    pricing: str = ""
    """rent only: the rental's price kind; a reservation (pricing.COMMITMENTS) pays every month of every term it
    starts, however short the phase (the lifecycle's horizon can end inside a term)."""
    engineering_usd: float = 0.0
    """The port the option needs (rule H10.port, its consultation's decision cost): paid once in the phase."""
    resale: Callable[[float, float], float] | None = field(default=None, compare=False, repr=False)
    """buy only: what the purchase sells for when bought at `start` years and sold `held` years later, at the
    part's age then (`economics.resale_usd`, the function the consultation prices resale by)."""


@dataclass
class _Slot:
    phase: Phase
    result: RecommendResult
    rents: list[Candidate]
    buys: list[Candidate]
    reuse: dict[tuple[int, int], Candidate] = field(default_factory=dict)
    """(earlier phase, its k-th purchase) → how this phase runs on that purchase (when it can)."""

    @property
    def rent(self) -> Candidate | None:
        return self.rents[0] if self.rents else None

    @property
    def buy(self) -> Candidate | None:
        return self.buys[0] if self.buys else None
    """Earlier phase index → how this phase runs on what that phase buys (when it can)."""


def _resale_at(econ: Economics, age: PartAge, accelerators_usd: float, rest_usd: float, start_years: float,
               held_years: float) -> float:
    """What a purchase bought `start_years` into the lifecycle sells for `held_years` later."""
    return resale_usd(econ, age.older(start_years), accelerators_usd, rest_usd, held_years)


def _candidate(r: Recommendation, result: RecommendResult, econ: Economics | None = None,
               catalog: Catalog | None = None) -> Candidate:
    """A phase's option as the fleet search prices it: by its consultation's own decision cost — the rental (or
    the purchase's price, power and site), the port (engineering) and the resale at the part's age."""
    util = float((result.answers_effective.get("deployment") or {}).get("utilization") or 1.0)
    resale = None
    if econ is not None and catalog is not None and r.acquisition == "buy" and r.cost.capex_usd:
        capex = float(r.cost.capex_usd)
        rest = float(r.cost.capex_beyond_accelerators_usd or 0.0)  # null: a whole-system price, all accelerators
        age = accelerator_age(catalog.accelerators[r.accelerator.id], today(), r.cost.price_kind)
        resale = partial(_resale_at, econ, age, capex - rest, rest)
    engineering = sum(p.usd for p in r.decision_cost.parts if p.part == "engineering")
    monthly = r.cost.usd_per_month
    months = r.decision_cost.horizon_months
    if r.acquisition == "rent" and months:
        # the rental's own part spread over its horizon, not the monthly figure rounded to the cent for show (36
        # months of a rounded $636.60 put a phase 12 cents off its standalone consultation)
        monthly = sum(p.usd for p in r.decision_cost.parts if p.part == "rental") / months
    return Candidate(
        choice=r.acquisition, title=r.title, option=r.option, accelerator=r.accelerator.id, count=r.count,
        machines=r.unit.machines, per_machine=r.unit.per_machine, memory_gb=r.accelerator.memory_gb,
        usd_per_run=r.cost.usd_per_run, usd_per_month=monthly, training_days=r.training_days,
        capex_usd=float(r.cost.capex_usd or 0.0), power_kw=float(r.cost.power_kw or 0.0),
        break_even=r.cost.break_even_utilization, utilization=util,
        desk_side=r.unit.kind in DESK_SIDE_KINDS, resale=resale, usd_per_hour=r.cost.usd_per_hour,
        pricing=r.instance.pricing if r.instance is not None else "",
        engineering_usd=round(engineering, 2))


def _pick(result: RecommendResult, acquisitions: Sequence[str], n: int = CANDIDATES_PER_KIND,
          econ: Economics | None = None, catalog: Catalog | None = None) -> list[Candidate]:
    """The phase's `n` best-ranked options of these acquisitions (rank order: the decision cost)."""
    found = [_candidate(r, result, econ, catalog) for r in [*result.recommendations, *result.runners_up]
             if r.acquisition in acquisitions]
    return found[:n]


MAX_OWNED = 256
"""The most accelerators an answers file can say it owns (current.gpu_count): a later phase on a larger purchase
is planned on this many of them."""


def reuse_answers(answers: Answers, bought: Candidate) -> Answers:
    """The phase's answers with an earlier purchase as the hardware the user owns (at most MAX_OWNED of it)."""
    dropped = {k: None for k in answers.given_keys() if k.startswith("current.") and k != "current.pc_slots"}
    return answers.with_changes({**dropped, "current.gpu": bought.accelerator,
                                 "current.gpu_count": min(bought.count, MAX_OWNED)}, "lifecycle")


def reuse_candidate(advisor: Advisor, answers: Answers, bought: Candidate) -> Candidate | None:
    """How a phase runs on what an earlier phase bought: the cheapest "own" option of its consultation with the
    purchase as the user's hardware that no constraint rules out. The own unit is one machine, so a failover veto
    is lifted when the purchase has two machines or more (the replicas then sit on two of them: N+1)."""
    cons, _ = advisor.run(reuse_answers(answers, bought))
    vetoes: dict[str, set[str]] = {}
    for _, v in cons.of_kind("veto"):
        vetoes.setdefault(str(v["target"]), set()).add(str(v["rule"]))
    configs = {str(f["ref"]): f for _, f in cons.of_kind("config")}
    per_run = answers.workload != "inference"
    best: tuple[float, Mapping[str, Any], Mapping[str, Any]] | None = None
    for _, opt in cons.of_kind("option"):
        if opt.get("acquisition") != "own":
            continue
        rules: set[str] = set()
        for target in (str(opt["ref"]), str(opt["config"]), f"acc:{opt['accelerator']}"):
            rules |= vetoes.get(target, set())
        if bought.machines >= 2:
            rules.discard(FAILOVER_RULE)
        metric = opt.get("usd_per_run" if per_run else "usd_per_month")
        if rules or metric is None:
            continue
        if best is None or float(metric) < best[0]:
            best = (float(metric), opt, configs.get(str(opt["config"]), {}))
    if best is None:
        return None
    _, own, cfg = best
    count = int(own["count"])
    scale = 1.0
    lifted = ""
    if bought.machines >= 2 and any(FAILOVER_RULE in vetoes.get(t, set()) for t in (str(own["ref"]),
                                                                                   str(own["config"]))):
        replicas = max(int(cfg.get("replicas") or 1), 1)
        if replicas < int(cfg.get("replicas_for_load") or 1) + 1:  # N+1: one more replica, on a second machine
            scale = (replicas + 1) / replicas
            count = count + count // replicas
        lifted = " (its replicas on two of the purchase's machines: N+1)"
    if count > min(bought.count, MAX_OWNED):
        return None
    usage = (cons.of_kind("usage") or [(0, {})])[0][1]
    run_usd, month_usd = own.get("usd_per_run"), own.get("usd_per_month")
    return Candidate(
        choice="reuse", title=f"{count} of the {bought.count} × {bought.title.split(' — ')[-1]} bought{lifted}",
        option=str(own["ref"]), accelerator=bought.accelerator, count=count, machines=bought.machines,
        per_machine=bought.per_machine, memory_gb=bought.memory_gb,
        usd_per_run=None if run_usd is None else float(run_usd) * scale,
        usd_per_month=None if month_usd is None else float(month_usd) * scale,
        training_days=cfg.get("training_days"),
        utilization=float(usage.get("utilization") or 1.0), note=lifted.strip(" ()"))


# --- timeline and costs --------------------------------------------------------------------------------------------

def _span(phase: Phase, cand: Candidate, start: float, horizon: float) -> tuple[float, float | None]:
    """(months, runs) of a phase on a candidate."""
    s = phase.settings
    if phase.answers.workload == "inference":
        return (float(s.months) if s.months is not None else max(0.0, horizon - start)), None
    if s.runs_per_month is not None:
        months = float(s.months) if s.months is not None else max(0.0, horizon - start)
        return months, float(s.runs_per_month) * months
    days = float(cand.training_days or 0.0)
    return (float(s.months) if s.months is not None else days / DAYS_PER_MONTH), 1.0


def _factors(answers: Answers, colocation: float) -> Factors:
    """The phase's power price, PUE and site rate (deployment.*; the catalog's colocation rate when none is set)."""
    d = answers.deployment
    rate = d.site_usd_per_kw_month
    return replace(DEFAULT_FACTORS, pue=d.pue, power_usd_per_kwh=d.power_usd_per_kwh,
                   colocation_usd_per_kw_month=float(rate) if rate is not None else colocation)


@dataclass(frozen=True)
class PurchaseCost:
    """What one purchase costs its owner over the horizon: its price when its phase starts, the power of its own
    run, site rent from then to the end of the horizon (none for a desk-side machine), less what it sells for then."""

    capex: float
    power: float
    holding: float
    held_months: float
    busy_hours: float
    resale: float = 0.0

    @property
    def cash(self) -> float:
        return self.capex + self.power + self.holding

    @property
    def total(self) -> float:
        return self.cash - self.resale


def _purchase_cost(cand: Candidate, answers: Answers, start: float, busy_hours: float, held: float,
                   colocation: float) -> PurchaseCost:
    """A purchase in a lifecycle, priced as a consultation prices one (pricing.price, a Window): bought at month
    `start`, held `held` months (to the end of the horizon, or to the end of its phase when it is sold then), busy
    `busy_hours` of them, resold at the part's age then."""
    owned = Ownership(hardware_usd=cand.capex_usd, network_usd=0.0, power_w=cand.power_kw * 1000.0,
                      site_kw=0.0 if cand.desk_side else cand.power_kw, accelerators_usd=cand.capex_usd,
                      resale_share=0.0)
    paid = price(Buy(owned), Window(held * HOURS_PER_MONTH, busy_hours, held), _factors(answers, colocation))
    assert paid is not None  # a purchase is always priced
    cost = paid.cost
    return PurchaseCost(capex=cost.usd("hardware"), power=cost.usd("power"), holding=cost.usd("site"),
                        held_months=held, busy_hours=busy_hours,
                        resale=cand.resale(start / 12.0, held / 12.0) if cand.resale else 0.0)


@dataclass(frozen=True)
class _Costed:
    plans: tuple[PhasePlan, ...]
    capex: float
    total: float
    """Cash less resale: what the fleet is chosen by."""
    cash: float
    """Paid out over the horizon: what the budget is checked against."""


BUYS = ("buy", "sell")
"""Picks that buy: "buy" holds the purchase to the end of the horizon (later phases may reuse it), "sell" sells it
when its own phase ends (what an owner does with hardware no later phase needs)."""


def _chosen(slot: _Slot, pick: Pick) -> Candidate | None:
    """The candidate a pick names."""
    choice, k, owner = pick
    if choice == "reuse":
        return slot.reuse.get((owner, k))
    pool = slot.buys if choice in BUYS else slot.rents
    return pool[k] if k < len(pool) else None


def _phase_plan(slot: _Slot, pick: Pick, end_prev: float, horizon: float, colocation: float) -> PhasePlan | None:
    """One phase on one option, started when it says or when the previous phase ended (`end_prev`): its timeline
    and cash; None when the option has no price for the phase's kind of use. Priced as the phase's own
    consultation prices the option (its decision cost: the port once, a purchase's resale at its age)."""
    choice, _, owner = pick
    ph = slot.phase
    cand = _chosen(slot, pick)
    if cand is None:
        return None
    start = float(ph.settings.start_month) if ph.settings.start_month is not None else end_prev
    months, runs = _span(ph, cand, start, horizon)
    per_run = ph.answers.workload != "inference"
    holding = capex = resale = 0.0
    sold: float | None = None
    if choice in BUYS:
        busy_h = (float(cand.training_days or 0.0) * 24.0 * float(runs or 1.0) if per_run
                  else months * HOURS_PER_MONTH * cand.utilization)
        if choice == "sell":  # held for its phase: a run's hours, or the phase's months
            held = busy_h / HOURS_PER_MONTH if per_run and ph.settings.months is None else months
            sold = start + held
            if sold >= horizon - 1e-9:
                return None  # sold when the horizon ends: that is "buy"
        else:
            held = max(0.0, horizon - start)
        bought = _purchase_cost(cand, ph.answers, start, busy_h, held, colocation)
        cost, holding, capex, resale = bought.power, bought.holding, bought.capex, bought.resale
        note = (f"${cand.capex_usd:,.0f} at month {start:g}; {cand.power_kw:,.1f} kW busy {busy_h:,.0f} h; held "
                f"{bought.held_months:,.1f} months, then "
                + ("sold when the phase ends" if choice == "sell" else "sold when the horizon ends")
                + f" for ${resale:,.0f}")
    else:
        metric = cand.usd_per_run if per_run else cand.usd_per_month
        if metric is None:
            return None
        if cand.pricing in COMMITMENTS and cand.usd_per_hour is not None and not per_run:
            # the phase's own consultation spread its terms over its horizon; the lifecycle pays the terms its
            # months start (a 3-year reservation for a 24-month phase is 36 months paid)
            paid = price(Rent(cand.usd_per_hour, cand.pricing, cand.title), Service(months, HOURS_PER_MONTH, 1.0),
                         _factors(ph.answers, 0.0))
            assert paid is not None  # a service is always priced
            cost = paid.cost.total
        else:
            cost = float(metric) * (float(runs or 1.0) if per_run else months)
        note = cand.note
    return PhasePlan(
        phase=ph.index, name=ph.name, workload=ph.answers.workload,
        choice="reuse" if choice == "reuse" else cand.choice,  # type: ignore[arg-type]
        option=cand.option, title=cand.title, accelerator=cand.accelerator, count=cand.count,
        start_month=round(start, 3), months=round(months, 3), runs=None if runs is None else round(runs, 3),
        cost_usd=round(cost, 2), capex_usd=round(capex, 2), holding_usd=round(holding, 2),
        resale_usd=round(resale, 2), engineering_usd=round(cand.engineering_usd, 2),
        sold_month=None if sold is None else round(sold, 3),
        reuses_phase=owner if choice == "reuse" else None, note=note)


def _cash(plan: PhasePlan) -> float:
    """What the phase pays out over the horizon: what the budget is checked against."""
    return plan.cash_usd


def _spend(plan: PhasePlan) -> float:
    """What the phase costs its owner: its cash less the resale of what it bought (the figure fleets are chosen by)."""
    return plan.spend_usd


def cost_fleet(slots: Sequence[_Slot], picks: Sequence[Pick], horizon: float,
               colocation: float) -> _Costed | None:
    """The cash cost of one way to equip the phases; None when it is not possible (a reuse without a purchase,
    or phases side by side on more of a purchase than it has)."""
    plans: list[PhasePlan] = []
    held: dict[int, Held] = {}
    end_prev = 0.0
    for slot, pick in zip(slots, picks, strict=True):
        plan = _phase_plan(slot, pick, end_prev, horizon, colocation)
        if plan is None:
            return None
        plans.append(plan)
        start, end_prev = _times(slot, pick, end_prev, horizon)
        run = Use(start, end_prev - start, plan.count)
        choice, k, owner = pick
        if choice == "buy":  # held to the horizon's end ("sell": sold when its phase ends, reused by none)
            held[slot.phase.index] = Held(slot.phase.index, k, plan.count, (run,))
        elif choice == "reuse":  # a reuse needs that very purchase in the fleet, with room beside its other runs
            bought = held.get(owner)
            if bought is None or bought.k != k:
                return None
            held[owner] = Held(owner, k, bought.size, (*bought.uses, run))
    if not all(fits(h) for h in held.values()):
        return None
    return _Costed(tuple(plans), round(sum(p.capex_usd for p in plans), 2), round(sum(map(_spend, plans)), 2),
                   round(sum(map(_cash, plans)), 2))


def _times(slot: _Slot, pick: Pick, end_prev: float, horizon: float) -> tuple[float, float]:
    """(start, end) of the phase on this option, unrounded (a plan's months are rounded for show)."""
    ph = slot.phase
    start = float(ph.settings.start_month) if ph.settings.start_month is not None else end_prev
    cand = _chosen(slot, pick)
    assert cand is not None
    months, _ = _span(ph, cand, start, horizon)
    return start, start + months


def _label(plans: Sequence[PhasePlan]) -> tuple[str, str]:
    """(choice, description) of a fleet, in words."""
    buys = [p for p in plans if p.choice == "buy"]
    reuses = [p for p in plans if p.choice == "reuse"]
    rents = [p for p in plans if p.choice not in ("buy", "reuse")]
    parts = []
    for p in plans:
        sell = f", sold at month {p.sold_month:.1f}" if p.sold_month is not None else ""
        what = {"buy": f"buy {p.title.removeprefix('Buy ')}{sell}", "reuse": f"run on {p.title} in phase "
                f"{p.reuses_phase}", "own": f"use {p.title}", "free": f"use {p.title}"}.get(p.choice,
                                                                                            f"rent {p.title}")
        parts.append(f"phase {p.phase} ({p.name}): {what}")
    text = "; ".join(parts)
    if len(buys) == 1 and reuses and not rents:
        return "one-fleet", "One fleet reused across phases — " + text
    if not buys:
        return ("own" if all(p.choice == "own" for p in plans) else "rent"), "Rent throughout — " + text
    if len(buys) == len(plans) == 1:
        return "buy", "Buy — " + text
    return "split", "Split — " + text


def _budget(lc: LifecycleAnswers) -> float | None:
    b = lc.phases[0].answers.budget
    if b.capex_usd is None and b.monthly_usd is None:
        return None
    return float(b.capex_usd or 0.0) + float(b.monthly_usd or 0.0) * lc.horizon_months


def _options(slots: Sequence[_Slot]) -> list[list[Pick]]:
    out: list[list[Pick]] = []
    for slot in slots:
        opts: list[Pick] = [("rent", k, 0) for k in range(len(slot.rents))]
        opts += [(choice, k, 0) for k in range(len(slot.buys)) for choice in BUYS]
        opts += [("reuse", k, owner) for owner, k in sorted(slot.reuse)]
        out.append(opts)
    return out


def search_fleets(slots: Sequence[_Slot], lc: LifecycleAnswers, colocation: float) -> SearchResult:
    """The cheapest ways to equip the phases (rules/lifecycle/fleet_search.py), each phase costed by `_phase_plan`."""
    horizon = lc.horizon_months

    def step(j: int, pick: Pick, t: float) -> Step | None:
        slot = slots[j]
        plan = _phase_plan(slot, pick, t, horizon, colocation)
        if plan is None:
            return None
        start, end = _times(slot, pick, t, horizon)
        return Step(start=start, months=end - start, count=plan.count, cost=_spend(plan), capex=plan.capex_usd,
                    own=plan.choice == "own")

    def reusable(j: int, owner: int, k: int) -> bool:
        return any((owner, k) in later.reuse for later in slots[j:])

    return search(_options(slots), step, reusable, keep=ALTERNATIVES_LISTED,
                  capex_cap=lc.phases[0].answers.budget.capex_usd)


def fleets(slots: Sequence[_Slot], lc: LifecycleAnswers, colocation: float) -> tuple[list[FleetPlan], int]:
    """The ways to equip the phases worth listing, best first — within the budget, then by total cash over the
    horizon — and how many feasible ways there are: the ALTERNATIVES_LISTED cheapest and the cheapest of each kind
    (one fleet, split, rent, own), the first exactly the cheapest within the budget
    (rules/lifecycle/fleet_search.py)."""
    budget = _budget(lc)
    capex_cap = lc.phases[0].answers.budget.capex_usd
    found = search_fleets(slots, lc, colocation)
    costed = [c for c in (cost_fleet(slots, f.picks, lc.horizon_months, colocation) for f in found.fleets)
              if c is not None]
    cheapest = min((c.total for c in costed if c.total > 0), default=0.0)
    out: list[FleetPlan] = []
    for c in costed:
        choice, description = _label(c.plans)
        left = None if budget is None else round(budget - c.cash, 2)
        within = (left is None or left >= 0) and (capex_cap is None or c.capex <= capex_cap)
        share = 100.0 if c.total <= 0 or cheapest <= 0 else 100.0 * cheapest / c.total
        out.append(FleetPlan(choice=choice, description=description, phases=list(c.plans), capex_usd=c.capex,
                             total_cost_usd=c.total, cash_usd=c.cash, budget_left_usd=left, within_budget=within,
                             advice_points=0.0, score=round(share, 2)))
    out.sort(key=lambda f: (not f.within_budget, f.total_cost_usd, f.description))
    listed: list[FleetPlan] = []
    seen: set[str] = set()
    kinds: set[str] = set()
    for f in out:
        if f.description in seen:
            continue
        if len(listed) < ALTERNATIVES_LISTED or f.choice not in kinds:
            listed.append(f)
            seen.add(f.description)
            kinds.add(f.choice)
    return listed, found.count


# --- the consultation ----------------------------------------------------------------------------------------------

@dataclass
class _Planned:
    slots: list[_Slot]
    plans: list[FleetPlan]
    chosen: FleetPlan | None
    cons: Consultation
    weighed: int = 0
    """How many feasible ways to equip the phases there are (the plans listed are the cheapest of them)."""


def plan_lifecycle(advisor: Advisor, lc: LifecycleAnswers, *, top: int = 5) -> _Planned:
    """Every phase consulted, the cheapest fleets found, the cheapest within the budget chosen, the lifecycle rules
    run."""
    results = [advisor.consult(p.answers, top=top) for p in lc.phases]
    per = CANDIDATES_PER_KIND if len(lc.phases) <= 3 else 1
    econ = economics(advisor.catalog)
    slots = [_Slot(p, r, _pick(r, ("rent", "free", "own"), per), _pick(r, ("buy",), per, econ, advisor.catalog))
             for p, r in zip(lc.phases, results, strict=True)]
    if len(slots) <= MAX_REUSE_PHASES:
        for j, slot in enumerate(slots):
            for i in range(j):
                for k, bought in enumerate(slots[i].buys):
                    found = reuse_candidate(advisor, slot.phase.answers, bought)
                    if found is not None:
                        slot.reuse[(i + 1, k)] = found
    colocation = advisor.derivations.base_factors.colocation_usd_per_kw_month
    plans, weighed = fleets(slots, lc, colocation) if all(r.feasible for r in results) else ([], 0)
    chosen = plans[0] if plans else None
    cons = advisor.engine.consult(lifecycle_inputs(lc, slots, chosen, plans, weighed))
    return _Planned(slots, plans, chosen, cons, weighed)


def consult_lifecycle(advisor: Advisor, lc: LifecycleAnswers, *, top: int = 5) -> RecommendResult:
    """The published result of a lifecycle: the phases' results, the fleet, the findings about their interplay."""
    planned = plan_lifecycle(advisor, lc, top=top)
    slots, plans, chosen, cons = planned.slots, planned.plans, planned.chosen, planned.cons
    explainer = Explainer(cons, advisor.catalog)
    warnings = [Warning(id=str(w.get("heuristic") or w["rule"]), rule=str(w["rule"]), category=w["category"],
                        severity=severity_of(str(w["severity"]), str(w["category"])), message=str(w["message"]),
                        shown=True, why=explainer.chain(fid)) for fid, w in cons.of_kind("warning")]
    warnings.sort(key=lambda w: ({"risk": 0, "advice": 1, "note": 2}[w.severity], w.id))
    lifecycle = _lifecycle_out(lc, chosen, plans, fleet_why(lc, slots, chosen, plans, planned.weighed))
    phases = [_phase_result(slot, chosen) for slot in slots]
    first = slots[0].result
    fixes = [f"phase {p.phase} ({p.name}): {t}" for p in phases for t in p.to_make_feasible]
    if chosen is not None and not chosen.within_budget:
        budget = _budget(lc) or 0.0
        fixes.append(f"The cheapest way to equip every phase pays out ${chosen.cash_usd:,.0f} over "
                     f"{lc.horizon_months:g} months (${chosen.capex_usd:,.0f} of it bought), against a budget of "
                     f"${budget:,.0f}: set budget.capex_usd = {chosen.cash_usd:.0f}, or shorten the horizon "
                     "(lifecycle.horizon_months), the load or the training run")
    return RecommendResult(
        answers=lc.given(), answers_effective=_effective(lc), defaults_applied=_defaults(lc),
        profile=first.profile, feasible=chosen is not None and chosen.within_budget,
        headline=_headline(lc, lifecycle, chosen),
        recommendations=[], runners_up=[], warnings=warnings, ruled_out=[], to_make_feasible=fixes,
        assumptions=first.assumptions, knowledge=first.knowledge,
        rules_fired=sum(s.result.rules_fired for s in slots) + len(cons.fired), phases=phases, lifecycle=lifecycle)


FLEET_RULE_TITLE = "Fleet: the cheapest way to equip every phase within the budget, in cash over the horizon"
FLEET_SOURCE = "rules/lifecycle/consult.py; 002_b9a26b66ce9b897d.txt › Interview Q&A › Q6 (rent vs buy)"
FACT_ID_STRIDE = 1_000_000
"""Each phase's chain keeps its own fact ids, offset by phase × this, so chains of two consultations never collide."""


def fleet_why(lc: LifecycleAnswers, slots: Sequence[_Slot], chosen: FleetPlan | None,
              plans: Sequence[FleetPlan], weighed: int | None = None) -> list[WhyStep]:
    """The WHY chain of the fleet: its choice, then each phase's plan with that option's own chain (down to the
    answers, the datasheets and the documents), then the budget arithmetic."""
    if chosen is None:
        return []
    steps = [WhyStep(depth=0, fact=0, kind="fleet", rule="LIFECYCLE", rule_title=FLEET_RULE_TITLE,
                     rule_kind="ranking", source=FLEET_SOURCE,
                     text=f"{chosen.description}: ${chosen.total_cost_usd:,.0f} over {lc.horizon_months:g} months "
                          f"(the cheapest of {weighed or len(plans):,} ways to equip the phases"
                          + (" within the budget)" if chosen.within_budget else "; none is within the budget)"))]
    for plan, slot in zip(chosen.phases, slots, strict=True):
        base = plan.phase * FACT_ID_STRIDE
        spend = _spend(plan)
        sold = plan.sold_month if plan.sold_month is not None else lc.horizon_months
        port = f" + ${plan.engineering_usd:,.0f} porting" if plan.engineering_usd else ""
        how = (f"${plan.capex_usd:,.0f} to buy + ${plan.holding_usd:,.0f} site rent to month {sold:g} "
               f"+ ${plan.cost_usd:,.0f} power{port} − ${plan.resale_usd:,.0f} resale at month {sold:g}"
               if plan.choice == "buy" else f"${plan.cost_usd:,.0f}{port}")
        steps.append(WhyStep(depth=1, fact=base, kind="phase", rule="LIFECYCLE", rule_title=FLEET_RULE_TITLE,
                             rule_kind="ranking", source=FLEET_SOURCE,
                             text=f"Phase {plan.phase} ({plan.name}), months {plan.start_month:g}–"
                                  f"{plan.start_month + plan.months:.1f}: {plan.choice} {plan.title} = "
                                  + (f"{how} = " if plan.choice == "buy" or port else "") + f"${spend:,.0f}"
                                  + (f" ({plan.note})" if plan.note else "")))
        rec = next((r for r in [*slot.result.recommendations, *slot.result.runners_up] if r.option == plan.option),
                   None)
        if rec is not None and plan.choice != "reuse":
            steps += [w.model_copy(update={"depth": w.depth + 2, "fact": base + w.fact + 1}) for w in rec.why]
    budget = _budget(lc)
    if budget is not None:
        steps.append(WhyStep(depth=1, fact=FACT_ID_STRIDE - 1, kind="answer", source="your answer",
                             text=f"Budget ${budget:,.0f} (budget.capex_usd + budget.monthly_usd × "
                                  f"{lc.horizon_months:g} months) − ${chosen.total_cost_usd:,.0f} = "
                                  f"${budget - chosen.total_cost_usd:,.0f} left"))
    return steps


def _phase_result(slot: _Slot, chosen: FleetPlan | None) -> PhaseResult:
    plan = chosen.phases[slot.phase.index - 1] if chosen else None
    data = slot.result.model_dump()
    data.update(phase=slot.phase.index, name=slot.phase.name, model_from=slot.phase.model_from,
                start_month=plan.start_month if plan else 0.0, months=plan.months if plan else 0.0,
                cost_usd=round(_spend(plan), 2) if plan else None)
    return PhaseResult.model_validate(data)


def _effective(lc: LifecycleAnswers) -> dict[str, Any]:
    first = lc.phases[0].answers.model_dump(mode="json")
    out = {k: first[k] for k in ("budget", "deployment", "constraints", "framework", "current")}
    out["lifecycle"] = {"horizon_months": lc.horizon_months, "phases": len(lc.phases)}
    return out


def _defaults(lc: LifecycleAnswers) -> list[str]:
    out = []
    if lc.settings.horizon_months is None:
        out.append(f"lifecycle.horizon_months = {lc.horizon_months:g} (deployment.lifetime_years × 12: purchases are "
                   "amortized over it)")
    return out


def _headline(lc: LifecycleAnswers, life: LifecycleOut, chosen: FleetPlan | None) -> str | None:
    if chosen is None:
        return None
    steps: list[str] = []
    end = 0.0
    for p in chosen.phases:
        verb = {"buy": "buy", "reuse": "reuse", "own": "use", "free": "use"}.get(p.choice, "rent")
        title = p.title.removeprefix("Buy ") if p.choice == "buy" else p.title
        spent = _spend(p)
        days = p.months * DAYS_PER_MONTH
        when = f"{p.months:,.1f} months" if p.workload == "inference" or p.runs and p.runs > 1 else \
            (f"{days:,.0f} days" if days >= 1 else f"{days * 24:,.1f} hours")
        link = "" if not steps else ("; then " if p.start_month >= end - 1e-6 else "; alongside, ")
        sold = f", sold at month {p.sold_month:.1f}" if p.sold_month is not None else ""
        steps.append(f"{link}{p.name}: {verb} {title} ({when}{sold}, ${spent:,.0f})")
        end = max(end, p.start_month + p.months)
    left = "" if life.budget_left_usd is None else (
        f"; ${life.budget_left_usd:,.0f} of the budget left" if life.budget_left_usd >= 0 else
        f"; ${-life.budget_left_usd:,.0f} over the budget")
    over = "" if chosen.within_budget else " — OVER BUDGET: no way to equip the phases fits it"
    return (f"{_CHOICE_WORDS.get(chosen.choice, chosen.choice)}: " + "".join(steps)
            + f". Total ${chosen.total_cost_usd:,.0f} over {lc.horizon_months:g} months{left}{over}.")


_CHOICE_WORDS = {"one-fleet": "One fleet for every phase", "split": "A split fleet", "rent": "Rent throughout",
                 "own": "Your own hardware throughout", "buy": "Buy"}


def _lifecycle_out(lc: LifecycleAnswers, chosen: FleetPlan | None, plans: list[FleetPlan],
                   why: list[Any]) -> LifecycleOut:
    budget = _budget(lc)
    notes = [
        "Each phase is priced as its own consultation prices the option (its decision cost): rentals for their runs "
        "or months, the port to another stack once (H10.port); a purchase's price when its phase starts, then site "
        "rent per kW (none for desk-side machines) while held and power while busy (deployment.pue, "
        "deployment.power_usd_per_kwh), less what it resells for when sold — at the end of the horizon, or when its "
        "phase ends if no later phase needs it — at the used price of its age from launch then (resale_share_*; "
        "hosts and network at scrap, resale_share_host), less selling costs.",
        "Reuse: a later phase consulted again with the purchase as your own hardware; its cost is the power of the "
        "accelerators it uses.",
        "The budget counted against is budget.capex_usd plus budget.monthly_usd × the horizon's months; rentals "
        "are paid from it too, and it is checked against the cash paid out (resale comes after the horizon).",
        "The fleet is chosen by its total alone: the cheapest way within the budget (of every feasible way, "
        "found by dynamic programming over the phases); the phases' advice is in their findings, not in this "
        "choice.",
    ]
    if chosen is None:
        return LifecycleOut(fleet_choice="none", description="No feasible plan for every phase: see each phase's "
                            "to_make_feasible.", horizon_months=lc.horizon_months, total_cost_usd=0.0, capex_usd=0.0,
                            budget_usd=budget, budget_left_usd=None, within_budget=False, plan=[],
                            alternatives=plans, notes=notes, why=why)
    return LifecycleOut(fleet_choice=chosen.choice, description=chosen.description, horizon_months=lc.horizon_months,
                        total_cost_usd=chosen.total_cost_usd, cash_usd=chosen.cash_usd, capex_usd=chosen.capex_usd,
                        budget_usd=budget,
                        budget_left_usd=chosen.budget_left_usd, within_budget=chosen.within_budget,
                        plan=list(chosen.phases), alternatives=plans, notes=notes, why=why)


# --- facts for the lifecycle rules ---------------------------------------------------------------------------------

def lifecycle_inputs(lc: LifecycleAnswers, slots: Sequence[_Slot], chosen: FleetPlan | None,
                     plans: Sequence[FleetPlan], weighed: int | None = None) -> list[InputFact]:
    """The phases, the chosen fleet, each purchase's use after its phase, and each served trained model's
    evaluation check, as facts the lifecycle rules test."""
    facts: list[InputFact] = []
    for slot in slots:
        ph = slot.phase
        plan = chosen.phases[ph.index - 1] if chosen else None
        facts.append(InputFact({
            "kind": "phase", "ref": f"phase:{ph.index}", "index": ph.index, "name": ph.name,
            "workload": ph.answers.workload, "model_from": ph.model_from or 0,
            "start_month": plan.start_month if plan else 0.0, "months": plan.months if plan else 0.0,
            "text": f"Phase {ph.index} ({ph.name}): {ph.answers.workload}"
                    + (f" of the model phase {ph.model_from} trains" if ph.model_from else "")
                    + (f", from month {plan.start_month:g} for {plan.months:,.2f} months on {plan.title}"
                       if plan else "") + (f"; its plan: {slot.result.headline}" if slot.result.headline else ""),
        }, f"phase {ph.index} consultation"))
    if chosen is None:
        return facts
    left = chosen.budget_left_usd
    facts.append(InputFact({
        "kind": "fleet", "ref": "fleet", "choice": chosen.choice, "total_cost_usd": chosen.total_cost_usd,
        "capex_usd": chosen.capex_usd, "budget_left_usd": left if left is not None else 0.0,
        "budget_given": left is not None, "within_budget": chosen.within_budget,
        "alternatives": weighed or len(plans),
        "text": f"{chosen.description}: ${chosen.total_cost_usd:,.0f} over {lc.horizon_months:g} months "
                f"(the cheapest of {weighed or len(plans):,} ways to equip the phases"
                + (" within the budget)" if chosen.within_budget else "; none is within the budget)"),
    }, "lifecycle: fleets costed in rules/lifecycle/consult.py"))
    facts += _purchase_uses(lc, slots, chosen)
    facts += _eval_checks(slots, chosen)
    return facts


def _purchase_uses(lc: LifecycleAnswers, slots: Sequence[_Slot], chosen: FleetPlan) -> list[InputFact]:
    """How busy each training purchase stays after its run: the chosen fleet's, and the one a training phase's own
    consultation ranks first (costed there as if someone else used it after the run)."""
    out: list[InputFact] = []
    horizon = lc.horizon_months
    for slot in slots:
        ph = slot.phase
        if ph.answers.workload == "inference":
            continue
        plan = chosen.phases[ph.index - 1]
        top = slot.result.recommendations[0] if slot.result.recommendations else None
        scenario: tuple[Candidate, bool] | None = None
        mine = _cand_of(slot, plan)
        if plan.choice == "buy" and mine is not None:
            scenario = (mine, True)
        elif top is not None and top.acquisition == "buy" and slot.buy is not None:
            scenario = (slot.buy, False)
        if scenario is None:
            continue
        cand, in_plan = scenario
        end = plan.start_month + plan.months
        after = max(0.0, horizon - end)
        used = 0.0
        users = []
        busy = 0.0
        for later in chosen.phases[ph.index:]:
            if later.choice == "reuse" and later.reuses_phase == ph.index and in_plan:
                share = later.count / max(cand.count, 1)
                used += share * later.months
                reused = _cand_of(slots[later.phase - 1], later)
                util = reused.utilization if reused is not None else 1.0
                busy += share * later.months * util
                users.append(f"phase {later.phase} ({later.name}) on {later.count} of {cand.count}")
        busy_share = used / after if after > 0 else 1.0
        util_after = busy / after if after > 0 else 1.0
        sold = in_plan and plan.sold_month is not None
        fate = (f"it is sold when the run ends (month {plan.sold_month:.1f}) for ${plan.resale_usd:,.0f}"
                if sold and plan.sold_month is not None else
                f"it would sit idle for the remaining {after:.0f} months")
        be = cand.break_even if cand.break_even is not None else H15_BREAK_EVEN
        rented = _cand_of(slot, plan) if plan.choice in ("rent", "free", "own") else slot.rent
        rent_cost = (rented.usd_per_run or 0.0) * float(plan.runs or 1.0) if rented else 0.0
        instead = (f"Rent the run ({rented.title}: ${rent_cost:,.0f})" if rented is not None else
                   "Renting the run is excluded by your answers (deployment.where); allowing it "
                   '(deployment.where = "either") would show what it costs')
        spend = _spend(plan)
        verb = {"rent": "rents", "buy": "buys", "reuse": "reuses", "own": "uses", "free": "uses"}[plan.choice]
        plan_text = f"{verb} {plan.title.removeprefix('Buy ')} (${spend:,.0f})"
        out.append(InputFact({
            "kind": "purchase_use", "ref": f"purchase:{ph.index}", "phase": ph.index, "name": ph.name,
            "workload": ph.answers.workload, "title": cand.title, "count": cand.count, "in_plan": in_plan,
            "capex_usd": cand.capex_usd, "months_after": round(after, 2), "busy_share_after": round(busy_share, 4),
            "utilization_after": round(util_after, 4), "break_even_utilization": round(be, 4),
            "idle_after": busy_share < IDLE_SHARE and after > 0 and not sold, "sold": sold,
            "unused_after": busy_share < IDLE_SHARE and after > 0, "fate": fate,
            "below_break_even": util_after < be and busy_share >= IDLE_SHARE,
            "instead": instead, "plan_text": plan_text,
            "text": f"{cand.title} ({'in the chosen fleet' if in_plan else f'phase {ph.index} ranks it first'})"
                    f": after the run ({plan.months * DAYS_PER_MONTH:,.0f} days) {after:,.1f} months remain; "
                    + ("; ".join(users) if users else "no later phase runs on it")
                    + f" — busy {util_after:.0%} of that time (break-even {be:.0%})",
        }, f"lifecycle: phase {ph.index} purchase"))
    return out


def _cand_of(slot: _Slot, plan: PhasePlan) -> Candidate | None:
    """The candidate a phase plan was built from."""
    if plan.choice == "reuse":
        pool = [c for (owner, _), c in slot.reuse.items() if owner == plan.reuses_phase]
    else:
        pool = slot.buys if plan.choice == "buy" else slot.rents
    return next((c for c in pool if c.option == plan.option), None)


def _eval_checks(slots: Sequence[_Slot], chosen: FleetPlan) -> list[InputFact]:
    """Can the serving hardware of a phase that serves a trained model hold that model as trained (its precision),
    to evaluate it before release? One machine's accelerators, against the trained weights + 10% headroom (W6)."""
    out: list[InputFact] = []
    for slot in slots:
        ph = slot.phase
        if ph.answers.workload != "inference" or not ph.model_from:
            continue
        trainer = slots[ph.model_from - 1]
        if trainer.phase.answers.workload == "inference":
            continue
        plan = chosen.phases[ph.index - 1]
        cand = _cand_of(slot, plan)
        if cand is None:
            continue
        trained = trainer.result.profile
        need = trained.weights_gb * 1.1
        machine = cand.per_machine * cand.memory_gb
        prec = str(trainer.result.answers_effective["precision"]["weights"])  # the format resolution chose
        out.append(InputFact({
            "kind": "eval_check", "ref": f"eval:{ph.index}", "phase": ph.index, "name": ph.name,
            "trained_phase": trainer.phase.index, "title": cand.title, "machine_memory_gb": round(machine, 1),
            "eval_need_gb": round(need, 1), "fits_eval": machine >= need, "precision": prec,
            "text": f"Phase {ph.index} serves on {cand.title}: one machine holds {cand.per_machine} × "
                    f"{cand.memory_gb:g} GB = {machine:,.0f} GB; the model phase {trainer.phase.index} trains is "
                    f"{trained.weights_gb:,.1f} GB in {prec} + 10% headroom = {need:,.1f} GB",
        }, f"lifecycle: phase {ph.index} serving hardware"))
    return out
