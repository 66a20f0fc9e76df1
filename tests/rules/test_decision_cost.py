"""The decision in dollars (issue 26): every option is ranked by what it costs its owner over the horizon, part by
part, each part checked here by hand against the knowledge base's figures; constraints rule out, advice moves no
figure, and no headline is contradicted by a risk about the option it recommends."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.lifecycle.answers import parse_any
from gpuadvisor.rules.planning.search import goodput
from gpuadvisor.rules.pricing.economics import economics
from gpuadvisor.rules.sizing.factors import Factors
from tests.rules.test_owner_economics import _curve, rtx_3090_decline

CATALOG = load_catalog(user_dir=None)
DATA = Path(__file__).resolve().parents[1] / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "expert-cases.toml"


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(CATALOG, include_user_packs=False)


def _parts(rec: Recommendation) -> dict[str, float]:
    out: dict[str, float] = {}
    for p in rec.decision_cost.parts:
        out[p.part] = out.get(p.part, 0.0) + p.usd
    return out


TODAY = 2026 + (329 - 1) / 365.25
"""GPUADVISOR_TODAY (tests/conftest.py: 2026-11-25, the 329th day of the year) as a decimal year."""


def _used_share(cls: str, age: float) -> float:
    """The used-market curve of a class by hand at its central values (tests/rules/test_owner_economics.py's)."""
    return _curve(cls, age)


def _age(acc_id: str) -> float:
    """Years from the part's launch (mid release year) to today."""
    release = CATALOG.accelerators[acc_id].release_year
    assert release is not None
    return TODAY - (release.value + 0.5)


def test_a_desk_side_purchase_costs_its_price_and_power_less_its_resale(advisor: Advisor) -> None:
    r = advisor.consult(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"},
                                       "inference": {"concurrent_requests": 8}, "deployment": {"where": "on_prem"},
                                       "constraints": {"vendors": ["nvidia"]}}))
    # the first desk-side PC among the options (a DGX Spark appliance may rank above it since its derived tensor
    # rate lets it batch, issue 44)
    top = next(x for x in r.recommendations if x.unit.kind == "desktop")
    assert top.acquisition == "buy"
    card = CATALOG.accelerators[top.accelerator.id]
    assert card.purchase_price_usd is not None and card.tdp_w is not None
    host = CATALOG.systems["desktop-single-consumer-gpu"]
    assert host.price is not None and host.host_power_w is not None
    price = card.purchase_price_usd.value + host.price.value
    kw = (card.tdp_w.value + host.host_power_w.value) / 1000
    # always on, owned hardware busy half the time (owned_utilization_production) for 36 months; no site rent at a
    # desk; the card resells at the GeForce curve's share of a part of its age when sold — years from its launch
    # to today plus the 3 years held (issue 39: age from launch, not from purchase) — the PC around it at scrap
    # (resale_share_host, 5 %, never above the card's share)
    busy_hours = 730 * 36 * 0.5
    # both net of the seller's costs (resale_selling_cost_share, 10 %)
    net = 1 - CATALOG.assumptions["resale_selling_cost_share"].value
    share = _used_share("consumer", _age(card.id) + 3)
    if card.id == "nvidia-rtx-3090":  # bought used at $700, with its own sold-price series: its trend's fall
        share = (1 - rtx_3090_decline()) ** 3
    elif card.purchase_price_usd.kind == "used":  # bought used: the curve's fall since then
        share /= _used_share("consumer", _age(card.id))
    scrap = min(share, CATALOG.assumptions["resale_share_host"].value)
    assert net == pytest.approx(0.9) and scrap == pytest.approx(0.05)
    resale = (card.purchase_price_usd.value * share + host.price.value * scrap) * net
    parts = _parts(top)
    assert parts["hardware"] == pytest.approx(price)
    assert parts["power"] == pytest.approx(kw * 1.3 * 0.12 * busy_hours, abs=0.005)
    assert parts["resale"] == pytest.approx(-resale, abs=0.005)  # parts are shown to the cent
    assert "site" not in parts
    assert top.decision_cost.usd == pytest.approx(price + kw * 1.3 * 0.12 * busy_hours - resale, abs=0.01)
    assert top.decision_cost.horizon == "over 36 months"


def test_a_rental_for_a_service_costs_its_rate_for_every_hour_of_the_horizon(advisor: Advisor) -> None:
    r = advisor.consult(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"},
                                       "deployment": {"where": "cloud", "providers": ["runpod"]}}))
    top = r.recommendations[0]
    assert top.instance is not None and top.cost.usd_per_hour is not None
    # always on: 730 h a month billed, one session a month, for the 36 months of deployment.lifetime_years
    assert _parts(top) == {"rental": pytest.approx(top.cost.usd_per_hour * 730 * 36)}
    assert top.cost.usd_per_month == pytest.approx(top.cost.usd_per_hour * 730)


def test_a_purchase_for_one_run_is_kept_unless_the_answers_sell_it(advisor: Advisor) -> None:
    answers = {"workload": "finetune", "model": {"name": "llama-3.1-70b"}, "finetune": {"method": "lora"},
               "training": {"tokens_b": 1, "deadline_from": "delivery"}, "deployment": {"where": "on_prem"},
               "constraints": {"vendors": ["nvidia"]}}
    kept = advisor.consult(parse_answers(answers))
    buys = [x for x in kept.recommendations if x.acquisition == "buy"]
    assert buys
    rec = buys[0]
    parts = _parts(rec)
    capex = rec.cost.capex_usd
    assert capex is not None and rec.training_days is not None and rec.training_days < 365
    # kept (deployment.after_run = "keep", the default): the run costs the whole price, no resale is taken off
    assert "resale" not in parts
    assert parts["hardware"] + parts.get("network", 0.0) == pytest.approx(capex)
    assert rec.decision_cost.horizon == "one run"
    assert rec.cost.usd_per_run == pytest.approx(rec.decision_cost.usd, abs=0.01)  # parts to the cent
    # a run shorter than a month spends its whole cost in one month: it is not spread over the run's hours (a
    # 3-hour run on a bought MI210 read "$1,091,132 a month" that way); a longer run spreads it over its months
    months = rec.training_days * 24 / 730
    assert rec.cost.usd_per_month == pytest.approx(rec.decision_cost.usd / max(months, 1.0), rel=1e-4)
    # what selling it when the run ends would fetch is said beside it (rule A.keep-or-sell), at the part's age then
    cls = "consumer" if rec.accelerator.market in ("consumer", "workstation") else "datacenter"
    share = _used_share(cls, _age(rec.accelerator.id) + rec.training_days / 365)
    card = CATALOG.accelerators[rec.accelerator.id].purchase_price_usd
    assert card is not None and card.kind != "used"
    cards = rec.count * card.value
    net = 1 - CATALOG.assumptions["resale_selling_cost_share"].value
    # hosts and network at scrap (resale_share_host), never above the accelerators' share
    resale = (cards * share + (capex - cards) * min(share, CATALOG.assumptions["resale_share_host"].value)) * net
    note = next(w for w in kept.warnings if w.id == "H15" and w.rule == "A.keep-or-sell")
    assert f"fetch about ${resale:,.0f} net of selling costs" in " ".join([note.message, *note.details])
    # sold (deployment.after_run = "sell"): that resale is taken off the same run
    sold = advisor.consult(parse_answers({**answers, "deployment": {"where": "on_prem", "after_run": "sell"}}))
    same = next(x for x in [*sold.recommendations, *sold.runners_up] if x.option == rec.option)
    assert _parts(same)["resale"] == pytest.approx(-resale, abs=0.01)
    assert same.decision_cost.usd == pytest.approx(rec.decision_cost.usd - resale, abs=0.02)


def test_a_pytorch_team_pays_engineer_weeks_to_move_to_another_stack(advisor: Advisor) -> None:
    answers = {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "lora"},
               "training": {"tokens_b": 2, "deadline_days": 3}, "deployment": {"where": "cloud"}}
    r = advisor.consult(parse_answers(answers))
    rocm = [x for x in [*r.recommendations, *r.runners_up] if x.accelerator.vendor == "amd"]
    weeks = CATALOG.assumptions["port_weeks_train_rocm"].value
    rate = CATALOG.assumptions["ml_engineer_loaded_usd_per_week"].value
    for x in rocm:
        assert _parts(x)["engineering"] == pytest.approx(weeks * rate)  # 2 weeks × $4,630 = $9,260
    assert r.recommendations[0].accelerator.vendor == "nvidia"
    assert all("engineering" not in _parts(x) for x in r.recommendations if x.accelerator.vendor == "nvidia")
    # a JAX team runs XLA already: no porting to TPU; a team of an unknown framework is charged none
    jax = advisor.consult(parse_answers({**answers, "framework": {"name": "jax"}}))
    tpus = [x for x in [*jax.recommendations, *jax.runners_up] if x.accelerator.vendor == "google"]
    assert tpus and all("engineering" not in _parts(x) for x in tpus)
    other = advisor.consult(parse_answers({**answers, "framework": {"name": "other"}}))
    assert all("engineering" not in _parts(x) for x in [*other.recommendations, *other.runners_up])


def test_porting_is_priced_from_the_answers_or_ruled_out(advisor: Advisor) -> None:
    answers = {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "lora"},
               "training": {"tokens_b": 2, "deadline_days": 3}, "deployment": {"where": "cloud"}}
    # the team's own figures: 6 engineer-weeks at $3,000 = $18,000 on every option off CUDA
    own = advisor.consult(parse_answers({**answers, "framework": {"port_weeks": 6, "engineer_usd_per_week": 3000}}),
                          top=100)
    ported = [x for x in [*own.recommendations, *own.runners_up] if "engineering" in _parts(x)]
    assert ported and all(_parts(x)["engineering"] == pytest.approx(18_000) for x in ported)
    # the figures are the team's (6 × $3,000), said in words; the answer ids are in the WHY (issue 42)
    assert any("6 engineer-weeks of porting × $3,000 a week = $18,000" in p.label
               for x in ported for p in x.decision_cost.parts)
    # porting is out: those options are ruled out by the constraint, never priced
    out = advisor.consult(parse_answers({**answers, "framework": {"porting": False}}), top=100)
    assert not [x for x in [*out.recommendations, *out.runners_up] if "engineering" in _parts(x)]
    assert any(o.rule == "C.no-porting" and "porting is out" in o.reason for o in out.ruled_out)


def test_porting_figures_follow_the_stack_and_the_workload() -> None:
    e = economics(CATALOG)
    assert e.porting_weeks("pytorch", "finetune", "cuda") == 0
    assert e.porting_weeks("pytorch", "training", "xla") == CATALOG.assumptions["port_weeks_train_tpu"].value
    assert e.porting_weeks("pytorch", "inference", "xla") == CATALOG.assumptions["port_weeks_serve_tpu"].value
    assert e.porting_weeks("jax", "training", "xla") == 0
    assert e.porting_weeks("jax", "training", "neuron") == CATALOG.assumptions["port_weeks_train_neuron"].value
    # resale: at most the first knot's share however young, interpolated between knots, the late decline beyond
    assert e.resale_share("datacenter", 0.1) == 0.88
    assert e.resale_share("datacenter", 2.5) == pytest.approx((0.78 + 0.68) / 2)
    assert e.resale_share("datacenter", 6.0) == pytest.approx(0.35 * (1 - 0.28))


def test_goodput_and_the_schedule_margin_size_a_training_cluster(advisor: Advisor) -> None:
    f = Factors()
    # Llama 3 405B: 16,384 GPUs × 1.97e-5 interruptions a GPU-hour × 0.3 h lost each = 9.7 % of the time lost
    assert goodput(16_384, f) == pytest.approx(1 - 16_384 * 1.97e-5 * 0.3)
    assert goodput(72, f) == pytest.approx(1 - 72 * 1.97e-5 * 0.3)
    assert goodput(10**7, f) == 0.5
    r = advisor.consult(parse_answers({"workload": "training", "model": {"name": "llama-2-7b"},
                                       "training": {"tokens_b": 2000, "deadline_days": 30},
                                       "deployment": {"where": "cloud"}}))
    for rec in r.recommendations:
        assert rec.training_days is not None and rec.training_days <= 30 * (1 - 0.05) + 1e-6


def test_the_ranking_reason_says_in_dollars_why_the_first_option_won(advisor: Advisor) -> None:
    r = advisor.consult(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"},
                                       "inference": {"concurrent_requests": 8}, "deployment": {"where": "on_prem"},
                                       "constraints": {"vendors": ["nvidia"]}}))
    first, second = r.recommendations[0].decision_cost, r.recommendations[1].decision_cost
    assert r.ranking_reason is not None
    assert r.ranking_reason.startswith(f"#1 costs ${second.usd - first.usd:,.0f} less over 36 months than #2 "
                                       f"(${first.usd:,.0f} against ${second.usd:,.0f}): ")
    assert r.recommendations[1].decision_cost.more_than_first_usd == pytest.approx(second.usd - first.usd, abs=0.01)


# ---- invariants over every golden and expert consultation ----------------------------------------------------------

def _cases() -> list[tuple[str, dict[str, Any]]]:
    from tests.rules.test_consult_golden import CASES

    out = [(f"golden:{k}", v) for k, v in CASES.items()]
    for label, path in (("own", DATA / "expert_cases.toml"), ("shared", SHARED)):
        if path.exists():
            with path.open("rb") as fh:
                out += [(f"{label}:{c['id']}", c["answers"]) for c in tomllib.load(fh).get("case", [])]
    return out


CASES = _cases()


def _invariants(name: str, result: RecommendResult) -> None:
    for rec in [*result.recommendations, *result.runners_up]:
        d = rec.decision_cost
        assert math.isclose(d.usd, sum(p.usd for p in d.parts), abs_tol=0.005), f"{name}: #{rec.rank} parts"
    if not result.recommendations:
        return
    top = result.recommendations[0]
    against = [w for w in result.warnings if w.severity == "risk" and top.option in w.options]
    assert not against, f"{name}: the recommended option carries a risk: {[(w.id, w.message) for w in against]}"


@pytest.mark.expert
@pytest.mark.parametrize(("name", "answers"), CASES, ids=[c[0] for c in CASES])
def test_no_headline_is_contradicted_and_every_figure_is_its_parts(name: str, answers: dict[str, Any],
                                                                   advisor: Advisor) -> None:
    loaded = parse_any(dict(answers), name)
    result = advisor.consult_lifecycle(loaded) if hasattr(loaded, "phases") else advisor.consult(loaded)
    for phase in result.phases:
        _invariants(f"{name} phase {phase.phase}", phase)  # type: ignore[arg-type]
    _invariants(name, result)


def test_the_readme_worked_example_adds_up(advisor: Advisor) -> None:
    # examples/pretrain-70b-on-prem.toml, the README's worked example: a bought cluster for one run is its price,
    # network, power and site less what it resells for when the run ends, and it meets the deadline with the margin
    from gpuadvisor.rules.lifecycle.answers import load_any

    answers = load_any(Path(__file__).resolve().parents[2] / "examples" / "pretrain-70b-on-prem.toml")
    top = advisor.consult(answers).recommendations[0]  # type: ignore[arg-type]
    parts = _parts(top)
    # a cluster network only where machines are joined: one GB300 NVL72 rack (72 GPUs in one NVLink domain, the pick
    # since the training step model) has none to buy
    network = {"network"} if top.unit.machines > 1 else set()
    assert top.acquisition == "buy" and set(parts) == {"hardware", "power", "site", "resale"} | network
    assert top.decision_cost.usd == pytest.approx(sum(parts.values()), abs=0.005)
    assert top.cost.capex_usd == pytest.approx(parts["hardware"] + parts.get("network", 0.0))
    # sold when the run ends (deployment.after_run = "sell"): the accelerators at the used price of parts of their
    # age then, counted from launch (a part younger than a year fetches the curve's first share), hosts and network
    # at scrap (resale_share_host), all net of the selling cost
    assert top.training_days is not None and top.training_days * 1.05 <= 90
    share = _used_share("datacenter", _age(top.accelerator.id) + top.training_days / 365)
    scrap = min(share, CATALOG.assumptions["resale_share_host"].value)
    net = 1 - CATALOG.assumptions["resale_selling_cost_share"].value
    # a rack's whole-system price (None beyond the accelerators) resells as accelerators, as rules/lifecycle reads it
    rest = top.cost.capex_beyond_accelerators_usd or 0.0
    assert top.cost.capex_usd is not None
    cards = top.cost.capex_usd - rest
    assert parts["resale"] == pytest.approx(-(cards * share + rest * scrap) * net, abs=0.01)
    # counted from today, the servers' lead time (lead_time_weeks_server, 12 weeks) leaves too little: rented
    given = answers.given()  # type: ignore[union-attr]
    today = advisor.consult(parse_answers({**given, "training": {**given["training"], "deadline_from": "today"}}))
    assert not today.recommendations and any(o.rule == "D.lead-time" for o in today.ruled_out)


def test_a_machine_without_a_power_rating_says_its_power_is_not_counted() -> None:
    # an appliance with no published wall rating (Apple's M4 Max Mac Studio) is charged no power: the part says so,
    # rather than showing "0.0 kW × …" as if it drew nothing
    from gpuadvisor.rules.pricing.decision_cost import Ownership, ownership_cost
    from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS

    o = Ownership(hardware_usd=1999.0, network_usd=0.0, power_w=0.0, site_kw=0.0, accelerators_usd=1999.0,
                  resale_share=0.45)
    cost = ownership_cost(o, window_hours=26_280, busy_hours=13_140, factors=DEFAULT_FACTORS, months=36.0)
    power = next(p for p in cost.parts if p.part == "power")
    assert power.usd == 0 and power.label.startswith("not counted: no published power rating")
    rated = ownership_cost(Ownership(hardware_usd=1999.0, network_usd=0.0, power_w=295.0, site_kw=0.0,
                                     accelerators_usd=1999.0, resale_share=0.45),
                           window_hours=26_280, busy_hours=13_140, factors=DEFAULT_FACTORS, months=36.0)
    # 0.295 kW × 1.3 PUE × $0.12/kWh = $0.04602 an hour × 13,140 h = $604.70
    assert next(p for p in rated.parts if p.part == "power").usd == pytest.approx(604.70, abs=0.01)


def test_a_spot_run_pays_for_its_reclaims_and_must_still_meet_the_deadline(advisor: Advisor) -> None:
    # each spot machine is reclaimed about once a day (spot_uninterrupted_hours 24) and each reclaim costs the whole
    # job 0.3 h (restart and work since the checkpoint, as an interruption): on m machines the run makes progress
    # 1 − m × 0.3 / 24 of the time, so it takes longer than on demand and is billed for it
    from gpuadvisor.rules.planning.search import spot_goodput
    from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS

    assert spot_goodput(1, 24.0, DEFAULT_FACTORS) == pytest.approx(1 - 0.3 / 24)
    assert spot_goodput(4, 24.0, DEFAULT_FACTORS) == pytest.approx(0.95)
    assert spot_goodput(80, 24.0, DEFAULT_FACTORS) <= 0  # more reclaims than the job survives
    r = advisor.consult(parse_answers({"workload": "training", "model": {"name": "llama-3.1-8b"},
                                       "training": {"tokens_b": 100, "deadline_days": 30},
                                       "deployment": {"where": "cloud"}}), top=40)
    rentals = [x for x in [*r.recommendations, *r.runners_up] if x.instance is not None]
    spot = next(x for x in rentals if x.instance is not None and x.instance.pricing == "spot")
    assert spot.instance is not None
    twin = next(x for x in rentals if x.instance is not None and x.instance.id == spot.instance.id
                and x.instance.pricing == "on-demand" and x.count == spot.count)
    share = 1 - spot.unit.machines * 0.3 / 24
    assert spot.training_days == pytest.approx(twin.training_days / share, rel=1e-3)
    assert "expected reclaims" in spot.decision_cost.parts[0].label
    # on demand it would finish 4 × 8.7 = 34.8 days into a 60-day deadline; 4 machines on spot take 5 % longer
    big = advisor.consult(parse_answers({"workload": "training", "model": {"name": "llama-3.1-70b"},
                                         "training": {"tokens_b": 300, "deadline_days": 60},
                                         "deployment": {"where": "cloud"}}), top=40)
    assert all(x.instance is None or x.instance.pricing != "spot" or
               x.training_days <= 60 * 0.95 for x in [*big.recommendations, *big.runners_up])
    # and the list of what was ruled out says why the spot H200s are gone, though the H200 is offered on demand (the
    # B200s before the training step model: its spot machines now finish inside the margin)
    gone = [o for o in big.ruled_out if o.rule == "D.spot-deadline" and o.family.startswith("nvidia-h200-sxm:")]
    assert gone and "past the deadline less its schedule margin" in gone[0].reason
