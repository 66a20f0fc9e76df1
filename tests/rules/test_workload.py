"""The typed Workload (rules/inputs/workload.py): built once from the answers, read by attribute below the engine, and
flattened into the `workload` fact only at the engine's edge."""

from __future__ import annotations

import dataclasses
from typing import get_type_hints

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.inputs.fact_kinds import WorkloadFact
from gpuadvisor.rules.inputs.resolve import resolve
from gpuadvisor.rules.inputs.usage import usage_values
from gpuadvisor.rules.inputs.user_load import user_load_values
from gpuadvisor.rules.inputs.workload import FACT_FIELDS, LOAD_FIELDS, Workload
from gpuadvisor.rules.planning.profile import deadline_start, workload_profile
from gpuadvisor.rules.sizing.params import count_parameters


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


DAILY_USERS = {"workload": "inference", "model": {"name": "llama-3.1-8b"},
               "inference": {"daily_active_users": 50_000}}
"""The user-load example of rules/inputs/user_load.py: 50,000 users × 2 sessions × 5 requests a day ÷ 1,440 min × peak
3."""


def _consulted(advisor: Advisor, data: dict[str, object]) -> tuple[dict[str, object], Workload]:
    cons, _ = advisor.run(parse_answers(data))
    [(fid, fact)] = cons.of_kind("workload")
    work = cons.attachment(fid)
    assert isinstance(work, Workload)
    return dict(fact), work


def _from_answers(advisor: Advisor, data: dict[str, object]) -> Workload:
    """The Workload as `gpuadvisor estimate` builds it: straight from `Answers.effective()`."""
    answers = parse_answers(data)
    resolved = resolve(answers, advisor.catalog)
    eff, given = answers.effective(), answers.given_keys()
    work = workload_profile(eff.__getitem__, eff.__getitem__, given.__contains__, model_name=resolved.model.name,
                            params=count_parameters(resolved.model.architecture),
                            moe=resolved.model.architecture.moe is not None, formats=resolved.formats,
                            usage_values=usage_values(advisor.catalog),
                            user_load_values=user_load_values(advisor.catalog))
    return deadline_start(work, advisor.catalog)  # when a stated deadline starts (issue 39), as estimate does


@pytest.mark.parametrize("data", [
    {"workload": "inference", "model": {"name": "llama-3.1-70b"}, "inference": {"requests_per_minute": 120}},
    {"workload": "training", "model": {"name": "llama-3.1-8b"}, "training": {"zero_stage": 2}},
    {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "qlora"}},
    DAILY_USERS,
], ids=["serving", "training", "qlora", "daily-users"])
def test_the_fact_is_the_workload_flattened(advisor: Advisor, data: dict[str, object]) -> None:
    fact, work = _consulted(advisor, data)
    assert fact == work.fact()
    # every declared field of the fact (rules/inputs/fact_kinds.py, the packs' vocabulary) comes from the Workload
    declared = set(get_type_hints(WorkloadFact)) - {"kind", "ref", "text"}
    optional = set(LOAD_FIELDS)
    assert set(fact) - {"kind", "ref", "text"} <= declared
    assert declared - optional <= set(fact)
    assert set(FACT_FIELDS) == declared | {"text"}
    # and estimate's Workload, built from the answers themselves, is the same value
    assert _from_answers(advisor, data) == work


def test_the_workload_is_frozen_and_typed(advisor: Advisor) -> None:
    _, work = _consulted(advisor, {"workload": "training", "model": {"name": "llama-3.1-8b"},
                                   "training": {"zero_stage": 2}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        work.batch = 8  # type: ignore[misc]
    assert work.training and not work.inference
    assert work.zero == 2 and isinstance(work.vendors, tuple)
    # 20 tokens per parameter (Chinchilla) × 8.03B parameters, in billions
    assert work.tokens_b == pytest.approx(20 * work.params_b, rel=1e-3)
    assert work.tokens_default.startswith("20 tokens per parameter")


def test_daily_users_become_a_request_rate(advisor: Advisor) -> None:
    fact, work = _consulted(advisor, DAILY_USERS)
    # 50,000 × 2 × 5 = 500,000 requests a day ÷ 1,440 = 347.2/min on average × 3 at the peak = 1,041.667/min
    assert work.requests_per_minute == pytest.approx(1041.667, abs=1e-3)
    assert work.daily_active_users == 50_000 and work.load_from_users
    assert set(LOAD_FIELDS) <= set(fact)
    # 1,041.667 requests/min × 200 output tokens ÷ 60 = 3,472.2 tokens/s served
    assert work.served_tokens_per_s == pytest.approx(3472.22, abs=0.01)
    # without daily users the load fields are absent from the fact (the engine sees them as unset)
    plain, _ = _consulted(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"}})
    assert not set(LOAD_FIELDS) & set(plain)
