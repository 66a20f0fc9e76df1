"""The port of H10 in a reader's words (issue 42, item 5 "Words by stage"): a finding says how many engineer-weeks
at what weekly rate, the noun in the number its count takes, and leaves the assumptions' ids to the WHY; a learner,
who has no codebase to move, pays no team's port (the seed document 000 prices the engineering time "for production").

The figures: knowledge/data/assumptions.toml port_weeks_serve_rocm = 1 engineer-week, ml_engineer_loaded_usd_per_week
= $4,630 (BLS OEWS 2024 wage × ECEC 2025 benefits share, its sources), so one week of porting costs 1 × 4,630 = $4,630.
"""

from __future__ import annotations

from functools import cache

import pytest

from gpuadvisor.knowledge.words import counted
from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import Answers

SERVE_70B = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-70b"},
             "inference": {"requests_per_minute": 1000}, "deployment": {"where": "cloud"}}
STUDENT = {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
           "finetune": {"method": "qlora"}, "training": {"tokens_b": 0.02}, "budget": {"monthly_usd": 20}}
"""examples/student-qlora-8b.toml."""


@cache
def result(kind: str) -> RecommendResult:
    return consult(Answers.model_validate(SERVE_70B if kind == "serve" else STUDENT))


@pytest.mark.parametrize(("count", "word", "text"), [
    (1, "engineer-week", "1 engineer-week"), (1.0, "engineer-week", "1 engineer-week"),
    (2, "engineer-week", "2 engineer-weeks"), (0.5, "engineer-week", "0.5 engineer-weeks"),
    (1000, "switch", "1,000 switches"), (0, "link", "0 links"), (1, "sequence", "1 sequence"),
])
def test_a_count_takes_its_nouns_number(count: float, word: str, text: str) -> None:
    assert counted(count, word) == text


def test_the_port_finding_says_weeks_times_rate_without_the_assumptions_ids() -> None:
    found = [w for w in result("serve").warnings if w.rule == "H10.port"]
    assert found, [w.rule for w in result("serve").warnings]
    port = found[0]
    # 1 week × $4,630 = $4,630 (the module docstring); the singular for one week, no ids in the sentence
    assert port.message.startswith("AMD Instinct MI325X runs on ROCm (AMD): 1 engineer-week of porting × $4,630 a "
                                   "week = $4,630."), port.message
    assert "port_weeks_" not in port.message and "ml_engineer" not in port.message
    # the ids and the other format's caveat are in the detail: the WHY's porting fact
    texts = [s.text for s in port.why if s.kind == "porting"]
    assert texts and "1 engineer-week (port_weeks_serve_rocm) × $4,630 a week (ml_engineer_loaded_usd_per_week)" \
        in texts[0], texts


def test_a_learner_pays_no_teams_port_and_is_told_why() -> None:
    res = result("student")
    shown = [*res.recommendations, *res.runners_up]
    amd = [r for r in shown if r.accelerator.vendor == "amd"]
    assert amd, "an AMD option is among the cheapest for a $1 run once no port is charged"
    assert all(p.part != "engineering" for r in shown for p in r.decision_cost.parts)
    # an AMD run's Total is its rental alone: its price an hour × the hours billed = its cost per run; it was $9,260
    # more (port_weeks_train_rocm = 2 engineer-weeks × $4,630), the "$9.3k" and "spot $9,279" the tester saw
    for r in amd:
        assert [p.part for p in r.decision_cost.parts] == ["rental"], r.option
        assert r.decision_cost.usd == pytest.approx(r.cost.usd_per_run, abs=0.01), r.option
    rules = {w.rule for w in res.warnings}
    assert "H10.learner" in rules and "H10.port" not in rules and "H10.cuda-first" not in rules
