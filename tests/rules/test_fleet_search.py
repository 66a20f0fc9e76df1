"""The lifecycle's fleet search (rules/lifecycle/fleet_search.py) against brute force: every combination of the phases'
options costed with `cost_fleet` and ranked (within the budget, then by total cash), on generated lifecycles of one
to five phases with rentals, purchases, reuses, side-by-side starts and purchase caps; and a twelve-phase one whose
4,096 fleets the search covers in a few hundred states. Issue 31: 16 phases used to take 48 s and 1.9 GB."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.lifecycle.answers import MAX_PHASES, LifecycleAnswers, parse_lifecycle
from gpuadvisor.rules.lifecycle.consult import (
    Candidate,
    _budget,
    _label,
    _options,
    _Slot,
    cost_fleet,
    fleets,
    search_fleets,
)

COLOCATION = 184.06


def _cand(rng: random.Random, choice: str, training: bool) -> Candidate:
    count = rng.choice([1, 2, 4, 8])
    return Candidate(
        choice=choice, title=f"{choice} {rng.randrange(10**6)}", option=f"opt:{rng.randrange(10**9)}",
        accelerator="x", count=count, machines=1, per_machine=count, memory_gb=80.0,
        usd_per_run=round(rng.uniform(100, 50_000), 2) if training else None,
        usd_per_month=None if training else round(rng.uniform(50, 9_000), 2),
        training_days=round(rng.uniform(0.5, 60), 3) if training else None,
        capex_usd=round(rng.uniform(5_000, 400_000), 2) if choice == "buy" else 0.0,
        power_kw=round(rng.uniform(0.5, 12), 2) if choice == "buy" else 0.0, utilization=rng.uniform(0.3, 1.0),
        desk_side=rng.random() < 0.2)


def _lifecycle(rng: random.Random, n: int) -> LifecycleAnswers:
    phases: list[dict[str, Any]] = []
    for i in range(n):
        training = rng.random() < 0.5
        phase: dict[str, Any] = {"workload": "training" if training else "inference", "model": {"params_b": 1}}
        if i and rng.random() < 0.35:
            phase["start_month"] = round(rng.uniform(0, 6), 2)  # side by side with an earlier phase, or a gap
        if rng.random() < 0.3:
            phase["months"] = round(rng.uniform(1, 12), 2)
            if training and rng.random() < 0.5:
                phase["runs_per_month"] = rng.choice([1, 2])
        phases.append(phase)
    data: dict[str, Any] = {"phase": phases, "lifecycle": {"horizon_months": rng.choice([12, 24, 36])}}
    if rng.random() < 0.5:
        data["budget"] = {"capex_usd": rng.choice([50_000, 200_000, 500_000])}
    return parse_lifecycle(data, "generated")


def _slots(rng: random.Random, lc: LifecycleAnswers, reuse: bool = True) -> list[_Slot]:
    slots: list[_Slot] = []
    for ph in lc.phases:
        training = ph.answers.workload != "inference"
        kinds = ["rent"] * rng.randint(0, 3) + ["buy"] * rng.randint(0, 3)
        if not kinds:
            kinds = ["rent"]
        if rng.random() < 0.15:
            kinds[0] = "own"
        rents = [_cand(rng, c, training) for c in kinds if c != "buy"]
        buys = [_cand(rng, c, training) for c in kinds if c == "buy"]
        slots.append(_Slot(ph, None, rents, buys))  # type: ignore[arg-type]  # the phase result is not read here
    if reuse:
        for j, slot in enumerate(slots):
            training = slot.phase.answers.workload != "inference"
            for i in range(j):
                for k, bought in enumerate(slots[i].buys):
                    if rng.random() < 0.7:
                        used = _cand(rng, "reuse", training)
                        slot.reuse[(i + 1, k)] = Candidate(**{**used.__dict__, "count": rng.randint(1, bought.count),
                                                              "capex_usd": 0.0, "power_kw": 0.0})
    return slots


def _brute_force(slots: list[_Slot], lc: LifecycleAnswers) -> list[tuple[bool, float, str, str]]:
    """(within the budget, total, description, choice) of every feasible combination, best first."""
    cap = lc.phases[0].answers.budget.capex_usd
    budget = _budget(lc)  # budget.capex_usd (+ monthly × months): the total must fit it, and the purchases the cap
    out = []
    for picks in itertools.product(*_options(slots)):
        costed = cost_fleet(slots, picks, lc.horizon_months, COLOCATION)
        if costed is not None:
            choice, description = _label(costed.plans)
            within = (budget is None or costed.total <= budget) and (cap is None or costed.capex <= cap)
            out.append((within, costed.total, description, choice))
    out.sort(key=lambda f: (not f[0], f[1], f[2]))
    return out


@pytest.mark.parametrize("seed", range(80))
def test_the_search_finds_what_brute_force_finds(seed: int) -> None:
    rng = random.Random(seed)
    lc = _lifecycle(rng, rng.randint(1, 5))
    slots = _slots(rng, lc)
    every = _brute_force(slots, lc)
    listed, count = fleets(slots, lc, COLOCATION)
    assert count == len(every)  # every feasible fleet is counted, none costed one by one
    if not every:
        assert listed == []
        return
    best = listed[0]
    assert (best.within_budget, best.total_cost_usd) == every[0][:2]  # the cheapest within the purchase cap
    # the ten cheapest (ties aside, the same fleets) and the cheapest of each kind
    distinct: list[tuple[bool, float, str, str]] = []
    for f in every:
        if f[2] not in {d[2] for d in distinct}:
            distinct.append(f)
    top = [(f.within_budget, f.total_cost_usd) for f in listed[:10]]
    assert top == [d[:2] for d in distinct[:10]]
    for kind in {f[3] for f in every}:
        cheapest = min(f[1] for f in every if f[3] == kind)
        assert min(f.total_cost_usd for f in listed if f.choice == kind) == cheapest
    assert all(f.advice_points == 0 for f in listed)  # advice is not part of the choice (issue 26)


def test_twelve_phases_are_searched_in_states_not_fleets() -> None:
    """Twelve phases of one rental and one purchase each, the purchase kept to the horizon or sold when its phase
    ends (issue 39): every fleet brute force finds (2 or 3 ways a phase, 6,144 here) is counted, and the search
    works in states, each phase's step computed once per state and option."""
    rng = random.Random(12)
    lc = _lifecycle(rng, MAX_PHASES)
    slots = _slots(rng, lc, reuse=False)
    for slot in slots:
        slot.rents[1:], slot.buys[1:] = [], []
        if not slot.buys:
            slot.buys.append(_cand(rng, "buy", slot.phase.answers.workload != "inference"))
        if not slot.rents:
            slot.rents.append(_cand(rng, "rent", slot.phase.answers.workload != "inference"))
    found = search_fleets(slots, lc, COLOCATION)
    every = _brute_force(slots, lc)
    assert found.count == len(every) == 6144  # 2^11 × 3: eleven phases run to the horizon (nothing to sell early)
    assert found.states < 2 ** 12 * 2  # at most 2^11 end months × the kinds; here far fewer merge
    listed, _ = fleets(slots, lc, COLOCATION)
    assert (listed[0].within_budget, listed[0].total_cost_usd) == every[0][:2]


def test_more_phases_than_the_limit_are_refused_at_once() -> None:
    phase = {"workload": "inference", "model": {"params_b": 1}}
    assert len(parse_lifecycle({"phase": [phase] * MAX_PHASES}, "f.toml").phases) == 12
    for n in (13, 1000):
        with pytest.raises(InputError) as info:
            parse_lifecycle({"phase": [phase] * n}, "f.toml")
        assert str(info.value) == (f"f.toml: phase: {n:,} [[phase]] tables; a lifecycle holds at most 12 (a year of "
                                   "monthly phases): give a repeated workload once with runs_per_month and months, "
                                   "or plan the rest in a second file")
