"""The advice model on whole consultations: usage-based budgets, free notebooks, your own hardware, clusters sized by
the job, constraints against advice, and "to make it feasible" with numbers that were checked."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


def run(advisor: Advisor, answers: dict[str, Any]) -> RecommendResult:
    return advisor.consult(parse_answers(answers))


def test_a_student_budget_pays_for_the_hours_used_and_the_free_notebook_comes_first(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "stage": "learning", "model": {"params_b": 1},
                      "budget": {"monthly_usd": 50}})
    assert r.feasible
    top = r.recommendations[0]
    assert top.acquisition == "free" and top.cost.usd_per_month == 0 and top.instance is not None
    assert top.instance.pricing == "free"
    # the cheapest rental is costed for 20 h + 7 sessions × 0.25 h = 21.75 billed hours, not for 730
    rentals = [x for x in r.recommendations + r.runners_up if x.acquisition == "rent" and x.cost.usd_per_hour]
    cheapest = min(rentals, key=lambda x: x.cost.usd_per_month or 0)
    assert cheapest.cost.usage_hours == pytest.approx(21.75)
    assert cheapest.cost.usd_per_month == pytest.approx(cheapest.cost.usd_per_hour * 21.75, rel=1e-3)


def test_free_notebooks_cost_nothing_and_are_not_servers(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "stage": "learning", "model": {"params_b": 1}})
    free = [x for x in r.recommendations if x.acquisition == "free"]
    assert free and all(x.decision_cost.usd == 0 and not x.decision_cost.parts for x in free)
    assert r.recommendations[0].acquisition == "free"
    prod = run(advisor, {"workload": "inference", "model": {"params_b": 1}})
    assert all(x.acquisition != "free" for x in prod.recommendations + prod.runners_up)
    outs = [o for o in prod.ruled_out if o.rule in ("C.free-limits", "A.free-production")]
    assert outs and all("not a server" in o.reason for o in outs)


def test_the_gpus_you_own_come_before_anything_paid_and_cost_their_power(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-8b"},
                      "current": {"gpu": "nvidia-rtx-3090", "gpu_count": 2}})
    # only a free notebook costs less than the electricity of the cards you own (advice moves no figure)
    top = next(x for x in r.recommendations if x.acquisition != "free")
    assert top.acquisition == "own" and top.accelerator.id == "nvidia-rtx-3090" and top.instance is None
    # 350 W per card × count × PUE 1.3 × $0.12/kWh, for 60 h a month (prototyping), over the 36-month horizon
    assert top.cost.usd_per_hour == pytest.approx(0.350 * top.count * 1.3 * 0.12, rel=1e-3)
    assert top.cost.usd_per_month == pytest.approx(top.cost.usd_per_hour * 60, rel=1e-2)
    assert [p.part for p in top.decision_cost.parts] == ["power"]
    assert top.decision_cost.usd == pytest.approx(0.350 * top.count * 1.3 * 0.12 * 60 * 36, rel=1e-3)
    # production: the cards are busy half of every hour held (owned_utilization_production 0.5), as a purchase of the
    # same card is costed — 365 busy hours a month, not all 730 at full power
    prod = run(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"},
                         "current": {"gpu": "nvidia-rtx-3090", "gpu_count": 2}})
    own = next(x for x in prod.recommendations + prod.runners_up if x.acquisition == "own")
    assert own.decision_cost.usd == pytest.approx(0.350 * own.count * 1.3 * 0.12 * 365 * 36, rel=1e-3)
    assert "13,140 busy hours" in own.decision_cost.parts[0].label
    # the purchases' power is charged for the same busy hours
    assert any(x.acquisition == "buy" and any("13,140 busy hours" in part.label for part in x.decision_cost.parts)
               for x in prod.recommendations + prod.runners_up)
    too_small = run(advisor, {"workload": "inference", "model": {"name": "llama-3.1-70b"},
                              "current": {"gpu": "nvidia-rtx-3090", "gpu_count": 1}})
    said = "Your 1× NVIDIA GeForce RTX 3090 cannot run this"
    assert any(w.id == "H1" and said in w.message for w in too_small.warnings)


def test_an_explicit_purchase_is_advised_against_not_vetoed(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "finetune", "stage": "prototyping", "model": {"name": "llama-3.1-8b"},
                      "finetune": {"method": "qlora"}, "training": {"tokens_b": 0.05},
                      "budget": {"capex_usd": 2500}, "deployment": {"where": "on_prem"}})
    assert r.feasible and r.recommendations[0].acquisition == "buy"
    # advice explains and changes no figure: the purchase's cost is its own parts, nothing from H13
    assert all(p.rule != "H13" for p in r.recommendations[0].decision_cost.parts)
    assert any(w.id == "H13" and w.category == "advice" for w in r.warnings)
    assert not any(o.rule == "H13" for o in r.ruled_out)


def test_pretraining_clusters_are_sized_by_the_deadline_not_capped(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "training", "model": {"name": "llama-2-70b"},
                      "training": {"tokens_b": 2000, "deadline_days": 120}, "deployment": {"where": "cloud"}})
    assert r.feasible and r.answers_effective["constraints"]["max_gpus"] is None
    for rec in r.recommendations:
        assert rec.count > 64 and rec.count == rec.unit.machines * rec.unit.per_machine  # whole machines
        assert rec.training_days is not None and rec.training_days <= 120 * 0.95  # the schedule margin


def test_huge_models_are_served_inside_fast_domains(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "model": {"name": "deepseek-v3"},
                      "precision": {"weights": "fp8"}, "inference": {"concurrent_requests": 4},
                      "deployment": {"where": "cloud"}})
    for rec in r.recommendations + r.runners_up:
        assert rec.accelerator.market not in ("consumer", "workstation"), rec.title
        assert rec.tensor_parallel <= 72


def test_no_request_rate_means_no_invented_throughput_target(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"}})
    assert r.profile.required_tokens_per_s == 0
    # every option whose part publishes (or derives) a compute rate shows its capacity; a part without one (Apple
    # silicon) shows none rather than one with its prompts counted as free (issue 44)
    assert all(x.headroom is None for x in r.recommendations)
    assert all(bool(x.capacity_tokens_per_s) == (x.accelerator.vendor != "apple") for x in r.recommendations)
    loaded = run(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"},
                           "inference": {"requests_per_minute": 600}})
    need = 600 * 200 / 60 * 1.2  # S10: requests/min × output tokens ÷ 60, +20% burst
    assert loaded.profile.required_tokens_per_s == pytest.approx(need)
    for x in loaded.recommendations:
        assert x.headroom == pytest.approx((x.capacity_tokens_per_s or 0) / need, rel=1e-3)
        assert x.headroom >= 1


def test_geforce_in_stated_production_is_ruled_out_with_the_licence(advisor: Advisor) -> None:
    answers = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-8b"},
               "inference": {"requests_per_minute": 300}}
    r = run(advisor, answers)
    assert not [x for x in r.recommendations + r.runners_up
                if x.accelerator.market == "consumer" and x.accelerator.vendor == "nvidia"]
    out = {o.rule for o in r.ruled_out}
    assert {"DC.geforce-licence", "DC.geforce-licence-onprem"} & out
    assert any("licence" in o.reason for o in r.ruled_out)
    # declared desk-side, GeForce cards may be bought for production (the licence concerns data centres)
    desk = run(advisor, {**answers, "deployment": {"where": "on_prem", "desk_side": True}})
    assert any(x.accelerator.market == "consumer" for x in desk.recommendations + desk.runners_up)


def test_to_make_feasible_names_the_binding_budget_with_hours_that_were_checked(advisor: Advisor) -> None:
    # BF16 weights (16 GB) do not fit the free notebooks' 16 GB GPUs, so only paid rentals can serve 400 h a month
    answers = {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
               "precision": {"weights": "bf16"},
               "deployment": {"where": "cloud", "hours_per_month": 400}, "budget": {"monthly_usd": 50}}
    r = run(advisor, answers)
    assert not r.feasible
    tip = next(t for t in r.to_make_feasible if "hours_per_month" in t)
    hours = int(tip.split("hours_per_month = ")[1].split()[0])
    rtx = advisor.catalog.instances["runpod-rtx-4090"].current_price("on-demand")
    assert rtx is not None
    # $50 ÷ $/h, less the set-up time of the 400 h's sessions (ceil(400/3) × 0.25 h)
    assert hours == math.floor(50 / rtx.usd_per_hour - math.ceil(400 / 3) * 0.25)
    assert run(advisor, {**answers, "deployment": {"where": "cloud", "hours_per_month": hours}}).feasible


def test_every_suggestion_makes_the_plan_feasible(advisor: Advisor) -> None:
    answers = {"workload": "inference", "model": {"name": "llama-3.1-405b"}, "constraints": {"max_gpus": 2}}
    r = run(advisor, answers)
    assert not r.feasible and r.to_make_feasible
    assert any("max_gpus" in t for t in r.to_make_feasible) and any("Quantize" in t for t in r.to_make_feasible)
    gpus = next(t for t in r.to_make_feasible if "max_gpus" in t)
    n = int(gpus.split("Allow ")[1].split()[0])
    assert run(advisor, {**answers, "constraints": {"max_gpus": n}}).feasible


def test_long_spot_runs_without_checkpoints_cannot_finish(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "training", "model": {"params_b": 1},
                      "training": {"tokens_b": 50, "deadline_days": 5, "checkpointing": False},
                      "deployment": {"where": "cloud"}})
    # a spot plan is kept only when it finishes within the hours spot capacity can be expected to last (24 h): a
    # 64-chip TPU slice does the run in under a day; the smaller spot plans are ruled out
    assert all(x.instance is None or x.instance.pricing != "spot" or (x.training_days or 0) * 24 <= 24
               for x in r.recommendations)
    assert any(o.rule == "W11.cannot-finish" for o in r.ruled_out) or any(
        "cannot finish" in o.reason for o in r.ruled_out)


def test_why_chains_say_which_rules_are_constraints_and_which_advise(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"},
                      "deployment": {"where": "on_prem"}, "budget": {"capex_usd": 500}})
    kinds = {s.rule: s.rule_kind for o in r.ruled_out for s in o.why if s.rule}
    assert kinds.get("B.capex") == "constraint"
    advice = {s.rule: s.rule_kind for w in r.warnings for s in w.why if s.rule}
    assert "advice" in advice.values() and "derivation" in advice.values()


def test_a_laptop_cpu_runs_a_small_quantized_model_at_memory_speed(advisor: Advisor) -> None:
    r = run(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                      "precision": {"weights": "q4_k_m"}, "current": {"gpu": "cpu"}})
    top = r.recommendations[0]
    assert top.acquisition == "own" and top.accelerator.id == "cpu-laptop-16gb"
    assert top.cost.usd_per_month == 0 and top.replicas == 1
    # llama.cpp reads every weight once per token: at most 89.6 GB/s ÷ 4.9 GB ≈ 18 tokens/s, calibrated below it
    ceiling = 89.6 / (r.profile.weights_gb + r.profile.kv_cache_gb / 2)
    assert 0.5 * ceiling < (top.tokens_per_s or 0) < ceiling
    training = run(advisor, {"workload": "finetune", "stage": "learning", "model": {"params_b": 1},
                             "current": {"gpu": "cpu"}})
    assert all(x.accelerator.id != "cpu-laptop-16gb" for x in training.recommendations)
