"""Hypothesis-generated answers never crash a consultation: each gives a result or a clear InputError.

CI (CI=true) runs 10,000 cases, as the issue asks; a developer's run does GPUADVISOR_FUZZ_CASES (default 300), since a
consultation takes tens of milliseconds.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.preference import tier
from gpuadvisor.rules.inputs.answers import ALL_PROVIDERS, ALL_VENDORS, parse_answers

CASES = int(os.environ.get("GPUADVISOR_FUZZ_CASES", "10000" if os.environ.get("CI") else "300"))
CATALOG = load_catalog(user_dir=None)
MODELS = sorted(CATALOG.models)
PRECISIONS = sorted(CATALOG.precisions) + ["fp33", "bfloat16", "Q4_K_M", ""]


@cache
def advisor() -> Advisor:
    return Advisor(CATALOG, include_user_packs=False)


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def section(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A table whose keys may each be absent."""
    return st.fixed_dictionaries({}, optional={k: v for k, v in fields.items()})


numbers = st.floats(min_value=-10, max_value=1e7, allow_nan=False)
answers = st.fixed_dictionaries({}, optional={
    "workload": st.sampled_from(["training", "finetune", "inference"]),
    "stage": st.sampled_from(["learning", "prototyping", "production"]),
    "model": st.one_of(
        st.fixed_dictionaries({"name": st.sampled_from(MODELS + ["llama 70b", "gpt", "x"])}),
        st.fixed_dictionaries({"params_b": st.floats(min_value=-1, max_value=20_000, allow_nan=False)}),
    ),
    "finetune": section(method=st.sampled_from(["full", "lora", "qlora"]), lora_rank=st.integers(-1, 512)),
    "training": section(tokens_b=st.floats(min_value=-1, max_value=50_000, allow_nan=False),
                        deadline_days=st.floats(min_value=0.01, max_value=3650), checkpointing=st.booleans(),
                        optimizer=st.sampled_from(["adamw", "sgd", "adam8bit"]),
                        zero_stage=st.sampled_from(["auto", 0, 1, 2, 3])),
    "inference": section(requests_per_minute=numbers, input_tokens=st.integers(-5, 200_000),
                         output_tokens=st.integers(1, 50_000), concurrent_requests=optional(st.integers(1, 100_000)),
                         latency_p95_s=optional(st.floats(min_value=0.001, max_value=600)),
                         min_tokens_per_s_per_user=optional(st.floats(min_value=0.1, max_value=5000)),
                         ttft_max_s=optional(st.floats(min_value=0.001, max_value=60)),
                         models_per_gpu=st.integers(1, 16)),
    "precision": section(weights=st.sampled_from(PRECISIONS), kv_cache=st.sampled_from(PRECISIONS),
                         context_tokens=st.integers(-1, 2_000_000), batch_size=st.integers(1, 4096)),
    "budget": section(capex_usd=optional(numbers), hourly_usd=optional(numbers), monthly_usd=optional(numbers)),
    "deployment": section(where=st.sampled_from(["cloud", "on_prem", "either"]),
                          providers=st.lists(st.sampled_from(ALL_PROVIDERS + ["ibm"]), max_size=4),
                          utilization=st.floats(min_value=0, max_value=1.2), spot=st.booleans(),
                          sensitive_data=st.booleans(), allow_marketplace=st.booleans()),
    "framework": section(name=st.sampled_from(["pytorch", "jax", "tensorflow", "other"])),
    "constraints": section(datacenter_only=st.booleans(), ecc_required=st.booleans(),
                           vendors=st.lists(st.sampled_from(ALL_VENDORS), max_size=3),
                           max_gpus=st.integers(0, 100_000)),
    "current": section(gpu_utilization=optional(st.floats(min_value=0, max_value=1))),
})


@settings(max_examples=CASES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(answers)
def test_generated_answers_give_a_result_or_a_clear_error(data: dict[str, Any]) -> None:
    try:
        result = advisor().consult(parse_answers(data))
    except InputError as exc:
        assert str(exc).strip(), "an InputError must say what is wrong"
        return
    assert result.feasible == bool(result.recommendations)
    if not result.feasible:
        assert result.to_make_feasible
    for rec in result.recommendations:
        assert rec.count >= 1 and rec.memory.total <= rec.memory.capacity
        # the ranked figure is its parts' sum, and the ranking is cheapest first (to the dollar)
        assert abs(rec.decision_cost.usd - sum(p.usd for p in rec.decision_cost.parts)) < 0.05
    # the tiers come first (rules/consultation/preference.py: what you own, sound plans, last resorts), then dollars
    keys = [(tier(r.acquisition, r.last_resort is not None), round(r.decision_cost.usd))
            for r in result.recommendations]
    assert keys == sorted(keys)
