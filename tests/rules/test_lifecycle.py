"""Lifecycle answers ([[phase]] tables): validation, the cash cost of a fleet by hand, the seed's opening case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.lifecycle.answers import DAYS_PER_MONTH, load_any, parse_lifecycle
from gpuadvisor.rules.lifecycle.consult import Candidate, _Slot, cost_fleet

ROOT = Path(__file__).resolve().parents[2]
OPENING = ROOT / "examples" / "lifecycle-13b-train-then-serve.toml"
TRAIN = {"workload": "training", "model": {"params_b": 1}}
SERVE = {"workload": "inference", "model": "phase:1", "inference": {"requests_per_minute": 60}}


# --- validation --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "message"), [
    ({"phase": [TRAIN, {**SERVE, "model": "phase:3"}]},
     r"f\.toml: phase\[2\]\.model: 'phase:3' names no earlier phase \(earlier phases: 1\)"),
    ({"phase": [{**SERVE, "model": "phase:1"}]}, r"phase\[1\]\.model: 'phase:1' names no earlier phase"),
    ({"phase": [{**TRAIN, "name": "pre"}, {**SERVE, "model": "phase:post"}]},
     r"phase\[2\]\.model: 'phase:post' names no earlier phase \(earlier phases: 1 'pre'\)"),
    ({"phase": [TRAIN, {**SERVE, "budget": {"capex_usd": 5}}]},
     r"f\.toml: phase\[2\]: budget: the budget is shared by all phases: set \[budget\] at the top level"),
    ({"workload": "training", "phase": [TRAIN]}, r"f\.toml: workload: in a file with \[\[phase\]\] tables"),
    ({"phase": [{"model": {"params_b": 1}}]}, r"f\.toml: phase\[1\]: workload: every phase names its workload"),
    ({"phase": [TRAIN, {**SERVE, "inference": {"rpm": 3}}]}, r"f\.toml: phase\[2\]: inference\.rpm: unknown key"),
    ({"phase": []}, r"f\.toml: phase: must be a list of \[\[phase\]\] tables"),
    ({"phase": [{**TRAIN, "runs_per_month": 0}]}, r"f\.toml: phase\[1\]: runs_per_month: Input should be greater"),
    ({"phase": [TRAIN], "lifecycle": {"horizon": 3}}, r"f\.toml: lifecycle: horizon: unknown key"),
])
def test_bad_lifecycle_files_name_the_field_and_file(data: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_lifecycle(data, "f.toml")


def test_shared_tables_apply_to_every_phase_and_a_phase_wins() -> None:
    lc = parse_lifecycle({"budget": {"capex_usd": 9}, "deployment": {"where": "cloud", "pue": 1.2},
                          "phase": [TRAIN, {**SERVE, "deployment": {"pue": 1.5}, "name": "serve"}]}, "f.toml")
    first, second = lc.phases
    assert first.answers.budget.capex_usd == second.answers.budget.capex_usd == 9
    assert first.answers.deployment.pue == 1.2 and second.answers.deployment.pue == 1.5
    assert second.answers.deployment.where == "cloud"
    assert second.model_from == 1 and second.answers.model.params_b == 1  # inherited from phase 1
    assert (first.name, second.name) == ("training", "serve")
    assert lc.horizon_months == 36  # deployment.lifetime_years 3 × 12


# --- the cash cost of a fleet, by hand -------------------------------------------------------------------------------

def _cand(choice: str, **kw: Any) -> Candidate:
    base: dict[str, Any] = dict(choice=choice, title=f"{choice} thing", option=f"opt:{choice}", accelerator="x",
                                count=8, machines=1, per_machine=8, memory_gb=80.0, usd_per_run=None,
                                usd_per_month=None, training_days=None)
    return Candidate(**{**base, **kw})


def _slots() -> list[_Slot]:
    lc = parse_lifecycle({"phase": [TRAIN, SERVE]}, "f.toml")
    train = _Slot(lc.phases[0], None, [_cand("rent", usd_per_run=30_000.0, training_days=15.0)],  # type: ignore[arg-type]
                  [_cand("buy", capex_usd=300_000.0, power_kw=10.0, training_days=12.0)])
    serve = _Slot(lc.phases[1], None, [_cand("rent", usd_per_month=2_000.0)], [])  # type: ignore[arg-type]
    serve.reuse[(1, 0)] = _cand("reuse", count=2, usd_per_month=150.0)
    return [train, serve]


def test_rent_throughout_by_hand() -> None:
    # training: one run at $30,000, 15 days = 15 / 30.4375 = 0.49281 months; serving from there to month 36:
    # 35.50719 months × $2,000 = $71,014.37; total $101,014.37
    costed = cost_fleet(_slots(), [("rent", 0, 0), ("rent", 0, 0)], 36.0, 184.06)
    assert costed is not None
    train, serve = costed.plans
    assert train.months == pytest.approx(15 / DAYS_PER_MONTH, abs=1e-3) == pytest.approx(0.493, abs=1e-3)
    assert serve.start_month == pytest.approx(0.493, abs=1e-3) and serve.months == pytest.approx(35.507, abs=1e-3)
    assert costed.total == pytest.approx(101_014.37, abs=0.05)
    assert costed.capex == 0


def test_a_reservation_is_paid_for_every_term_the_phase_starts_by_hand() -> None:
    # serving rented on a 3-year reservation at $1.1082/h, the horizon (and the phase) 24 months: the reservation
    # is 36 months × 730 h × $1.1082 = $29,123.50, not the 24 months' $19,415.66 its own consultation's monthly
    # figure ($808.99, the 36 months spread over its 36-month horizon) gave; a 1-year one at $1.5718/h is two
    # terms, 24 × 730 × $1.5718 = $27,537.94: the cheaper for this horizon
    lc = parse_lifecycle({"phase": [{**SERVE, "model": {"params_b": 8}}]}, "f.toml")
    three = _cand("rent", usd_per_month=808.99, usd_per_hour=1.1082, pricing="reserved-3y")
    one = _cand("rent", usd_per_month=1147.38, usd_per_hour=1.5718, pricing="reserved-1y")
    for cand, want in ((three, 29_123.50), (one, 27_537.94)):
        costed = cost_fleet([_Slot(lc.phases[0], None, [cand], [])], [("rent", 0, 0)], 24.0, 184.06)  # type: ignore[arg-type]
        assert costed is not None and costed.total == pytest.approx(want, abs=0.05)
    on_demand = _cand("rent", usd_per_month=1153.40)  # no term: the months used
    costed = cost_fleet([_Slot(lc.phases[0], None, [on_demand], [])], [("rent", 0, 0)], 24.0, 184.06)  # type: ignore[arg-type]
    assert costed is not None and costed.total == pytest.approx(24 * 1153.40, abs=0.05)


def test_one_fleet_bought_for_training_and_reused_by_hand() -> None:
    # buy at month 0: $300,000; power of the 12-day run: 10 kW × 1.3 PUE × $0.12/kWh × 288 h = $449.28;
    # site rent 10 kW × $184.06/kW-month × 36 months = $66,261.60 (held to the end of the horizon);
    # serving on 2 of its GPUs from month 12/30.4375 = 0.39425 for 35.60575 months × $150 power = $5,340.86;
    # total $300,000 + $449.28 + $66,261.60 + $5,340.86 = $372,051.74
    costed = cost_fleet(_slots(), [("buy", 0, 0), ("reuse", 0, 1)], 36.0, 184.06)
    assert costed is not None
    buy, reuse = costed.plans
    assert buy.cost_usd == pytest.approx(449.28, abs=0.01)
    assert buy.holding_usd == pytest.approx(66_261.60, abs=0.01)
    assert reuse.choice == "reuse" and reuse.reuses_phase == 1 and reuse.cost_usd == pytest.approx(5340.86, abs=0.02)
    assert costed.total == pytest.approx(372_051.74, abs=0.05) and costed.capex == 300_000


def test_phases_side_by_side_cannot_share_more_than_was_bought() -> None:
    slots = _slots()
    assert cost_fleet(slots, [("buy", 0, 0), ("reuse", 0, 1)], 36.0, 184.06) is not None  # one after the other
    slots[1].phase.settings.__dict__["start_month"] = 0.0  # serving alongside the run: 8 (the run) + 2 > 8 bought
    assert cost_fleet(slots, [("buy", 0, 0), ("reuse", 0, 1)], 36.0, 184.06) is None
    slots[1].phase.settings.__dict__["start_month"] = 0.3  # still during the 12-day (0.394-month) run
    assert cost_fleet(slots, [("buy", 0, 0), ("reuse", 0, 1)], 36.0, 184.06) is None
    assert cost_fleet(slots, [("rent", 0, 0), ("rent", 0, 0)], 36.0, 184.06) is not None


# --- the seed's opening case as one consultation ------------------------------------------------------------------

@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


@pytest.fixture(scope="module")
def opening(advisor: Advisor) -> Any:
    lc = load_any(OPENING)
    assert not isinstance(lc, type(parse_answers({})))
    return advisor.consult_lifecycle(lc)  # type: ignore[arg-type]


def test_opening_case_is_one_consultation_with_a_plan_per_phase(opening: Any) -> None:
    assert opening.feasible and opening.recommendations == []
    assert [p.name for p in opening.phases] == ["pretrain", "serve"]
    pretrain, serve = opening.phases
    assert pretrain.recommendations and serve.recommendations  # each phase ranks its own options
    assert serve.model_from == 1
    # 50,000 users × 2 × 5 = 500,000 a day = 347.22/min × 3 = 1,041.67/min × 200 tokens ÷ 60 = 3,472.2 tok/s,
    # + 20% burst = 4,166.7 tok/s
    assert serve.profile.required_tokens_per_s == pytest.approx(4166.67, abs=0.01)
    # 20 tokens per parameter: 20 × 13.15B parameters = 263B tokens
    assert pretrain.answers_effective["training"]["tokens_b"] == pytest.approx(263.0, abs=0.1)


def test_opening_case_totals_add_up(opening: Any) -> None:
    life = opening.lifecycle
    # the total is what each phase costs its owner (a purchase: price, site and power less its resale at the
    # horizon's end); the budget is checked against the cash paid out, before the resale
    spends = [p.cost_usd + p.capex_usd + p.holding_usd - p.resale_usd for p in life.plan]
    cash = [p.cost_usd + p.capex_usd + p.holding_usd for p in life.plan]
    assert life.total_cost_usd == pytest.approx(sum(spends), abs=0.05)
    assert life.cash_usd == pytest.approx(sum(cash), abs=0.05)
    assert life.budget_usd == 2_000_000
    assert life.budget_left_usd == pytest.approx(2_000_000 - life.cash_usd, abs=0.05)
    assert life.within_budget and life.horizon_months == 36
    # the timeline: pretraining from month 0, serving from its end to month 36
    first, second = life.plan
    assert first.start_month == 0 and second.start_month == pytest.approx(first.months, abs=1e-3)
    assert second.start_month + second.months == pytest.approx(36.0, abs=1e-3)
    assert life.alternatives[0].description == life.description
    # renting throughout and buying the serving servers are both weighed (with selling costs taken off the resale,
    # no purchase for the 19-day pretraining run is among that phase's best options, so no one-fleet is listed)
    assert {"rent", "split"} <= {a.choice for a in life.alternatives}
    assert [p.cost_usd for p in opening.phases] == pytest.approx(spends, abs=0.05)


def test_opening_case_why_reaches_the_answers_and_the_documents(opening: Any) -> None:
    why = opening.lifecycle.why
    assert why[0].depth == 0 and why[0].rule == "LIFECYCLE"
    texts = " | ".join(s.text for s in why)
    assert "Phase 1 (pretrain)" in texts and "Phase 2 (serve)" in texts
    assert "50,000 daily users" in texts  # the serving plan's chain goes down to the load
    assert any(s.source and "002_b9a26b66ce9b897d" in s.source for s in why)
    assert why[-1].text.startswith("Budget $2,000,000")
    assert len({s.fact for s in why}) == len(why) or any(s.repeated for s in why)


def test_lifecycle_json_reruns_and_single_workload_json_is_unchanged(opening: Any, advisor: Advisor,
                                                                     tmp_path: Path) -> None:
    data = json.loads(opening.model_dump_json())
    assert {"phases", "lifecycle"} <= set(data) and data["lifecycle"]["fleet_choice"] == opening.lifecycle.fleet_choice
    assert data["phases"][1]["recommendations"] and data["phases"][1]["phase"] == 2
    saved = tmp_path / "report.json"
    saved.write_text(opening.model_dump_json(), encoding="utf-8")
    again = load_any(saved)
    assert [p.name for p in again.phases] == ["pretrain", "serve"]  # type: ignore[union-attr]
    single = advisor.consult(parse_answers({"model": {"name": "gpt2"}}), top=1)
    assert single.phases == [] and single.lifecycle is None


def test_a_monthly_fine_tune_beside_serving_by_hand() -> None:
    # serving from month 0 to 36 on a rental at $2,000 a month = $72,000; a fine-tune every month from month 0 for
    # 12 months (runs_per_month 1 → 12 runs) at $500 a run = $6,000; side by side, total $78,000
    lc = parse_lifecycle({"phase": [
        {"workload": "inference", "model": {"params_b": 1}, "name": "serve"},
        {"workload": "finetune", "model": "phase:serve", "start_month": 0, "months": 12, "runs_per_month": 1}]},
        "f.toml")
    serve = _Slot(lc.phases[0], None, [_cand("rent", usd_per_month=2_000.0)], [])  # type: ignore[arg-type]
    tune = _Slot(lc.phases[1], None, [_cand("rent", usd_per_run=500.0, training_days=0.5)], [])  # type: ignore[arg-type]
    costed = cost_fleet([serve, tune], [("rent", 0, 0), ("rent", 0, 0)], 36.0, 184.06)
    assert costed is not None
    first, second = costed.plans
    assert (first.start_month, first.months) == (0, 36) and (second.start_month, second.months) == (0, 12)
    assert second.runs == 12 and second.cost_usd == 6_000 and costed.total == 78_000


def test_rules_about_a_phase_fire_on_that_phase(opening: Any) -> None:
    pretrain, serve = opening.phases
    assert "W2" in {w.id for w in pretrain.warnings}  # training memory beyond the weights: the training phase
    assert "W2" not in {w.id for w in serve.warnings}
    # prefill and decode pools weighed at the phase's request rate: the serving phase
    assert "PD.considered" in {w.rule for w in serve.warnings}
    assert "PD.considered" not in {w.rule for w in pretrain.warnings}
    assert "W5" not in {w.id for w in pretrain.warnings}
    # the whole carries only the findings about how the phases interact: none here — phase 1 alone ranks a rental
    # first (a purchase for the run is charged its price less its resale), and serving for 35 months buys its
    # servers (price, site and power less their resale at month 36 beat renting three L40S): a split
    assert opening.warnings == []
    assert opening.lifecycle is not None and opening.lifecycle.fleet_choice == "split"
    assert [p.choice for p in opening.lifecycle.plan] == ["rent", "buy"]
    bought = opening.lifecycle.plan[1]
    assert 0 < bought.resale_usd < bought.capex_usd


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_example_answers_files_validate(path: Path) -> None:
    loaded = load_any(path)
    if path.name.startswith("lifecycle-"):
        assert loaded.phases  # type: ignore[union-attr]
    else:
        assert loaded.workload in ("training", "finetune", "inference")  # type: ignore[union-attr]
