"""One plan per configuration, kept beside its fact (rules/planning/planned.py): the result reads it, and never
searches again.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.ranking import build_result
from gpuadvisor.rules.consultation.result import MemoryBreakdown
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.planning.planned import Planned
from gpuadvisor.rules.planning.search import InferenceSearch, Plan, TrainingSearch
from gpuadvisor.rules.sizing.units import GB

CASES = {
    "serving 70B": {"workload": "inference", "model": {"name": "llama-3.1-70b"},
                    "inference": {"requests_per_minute": 600}},
    "serving MoE": {"workload": "inference", "model": {"name": "mixtral-8x22b"},
                    "inference": {"requests_per_minute": 2000}},  # some plans split the experts (EP > 1)
    "training 8B": {"workload": "training", "model": {"name": "llama-3.1-8b"}},
    "qlora 70B": {"workload": "finetune", "model": {"name": "llama-3.1-70b"}, "finetune": {"method": "qlora"}},
}


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


@pytest.mark.parametrize("name", CASES)
def test_every_configuration_carries_its_plan_and_the_searchs_notes(advisor: Advisor, name: str) -> None:
    cons, _ = advisor.run(parse_answers(CASES[name]))
    configs = cons.of_kind("config")
    assert configs
    # a spread of accelerators and units (every 7th: the test stays quick), and every expert-parallel layout
    spread = {fid: cfg for fid, cfg in configs[::7]} | {fid: cfg for fid, cfg in configs if cfg["expert_parallel"] > 1}
    for fid, cfg in spread.items():
        planned = cons.attachment(fid)
        assert isinstance(planned, Planned)
        assert planned.plan.count == cfg["count"] and planned.plan.accelerator == cfg["accelerator"]
        assert round(planned.plan.memory_gb_per_gpu, 3) == cfg["memory_gb_per_gpu"]
        # the notes written from the plan's own layout are those the search writes when asked for them
        searched = planned.search.plan(planned.accelerator, planned.unit, with_notes=True)
        assert isinstance(searched, Plan)
        assert planned.notes == tuple(sorted({n.text for n in searched.notes}))
        assert planned.notes  # every plan explains its memory at least


def test_a_result_never_searches_again(advisor: Advisor, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = parse_answers(CASES["training 8B"])
    cons, resolved = advisor.run(answers)
    calls: list[str] = []
    for cls in (InferenceSearch, TrainingSearch):
        original = cls.plan

        def counted(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(type(self).__name__)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "plan", counted)
    result = build_result(cons, answers, resolved, advisor.catalog)
    assert result.recommendations and all(r.notes for r in result.recommendations)
    assert calls == []


def test_the_memory_breakdown_is_the_plans_in_gb(advisor: Advisor) -> None:
    answers = parse_answers(CASES["serving 70B"])
    result = advisor.consult(answers)
    cons, _ = advisor.run(answers)
    planned = {str(f["ref"]): cons.attachment(fid) for fid, f in cons.of_kind("config")}
    top = result.recommendations[0]
    option = next(f for _, f in cons.of_kind("option") if f["ref"] == top.option)
    plan = planned[str(option["config"])]
    assert isinstance(plan, Planned)
    m = plan.memory
    # bytes → GB (10^9), four decimals; the headroom is the card's capacity × the kept-free share (W6)
    assert top.memory.weights == round(m.weights / GB, 4) and top.memory.total == round(m.total / GB, 4)
    assert top.memory.headroom_required == round(top.memory.capacity * m.headroom_fraction, 3)
    # the capacity is the device's bytes (an 80 GB card holds 80 GiB), not the figure it is sold as
    acc = advisor.catalog.accelerators[top.accelerator.id]
    assert top.memory.capacity == round(acc.memory_bytes() / GB, 3) != top.accelerator.memory_gb
    assert top.memory == MemoryBreakdown.of(m, acc)
    assert top.memory.utilization == round(top.memory.total / top.memory.capacity, 4)
