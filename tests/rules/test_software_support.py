"""Software-support horizons (issue 28): a part its toolkit has dropped carries the horizon as a risk, is not bought
for production, and a part without BF16 says it runs the plan in FP16 (a finding, not score points)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import SoftwareSupport
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.facts import accelerator_fact
from gpuadvisor.rules.inputs.answers import parse_answers


def _result(advisor: Advisor, answers: dict[str, Any]) -> dict[str, Any]:
    return json.loads(advisor.consult(parse_answers(answers), top=60).model_dump_json())


def test_the_horizon_is_a_sourced_fact_rules_can_read(catalog: Catalog) -> None:
    v100 = catalog.accelerators["nvidia-v100-sxm2"].software_support
    assert v100 is not None and v100.dropped and v100.dropped_in == "CUDA 13.0" and v100.last_release == "CUDA 12.9"
    assert v100.horizon() == "dropped in CUDA 13.0 (2025-08; last supported: CUDA 12.9)"
    t4 = catalog.accelerators["nvidia-t4"].software_support  # Turing (SM75) is kept by CUDA 13.0
    assert t4 is not None and not t4.dropped and t4.horizon() == "supported in CUDA 13.0"
    fact = accelerator_fact(catalog.accelerators["nvidia-p100"])
    assert fact["software_dropped"] and fact["software_horizon"].startswith("CUDA: dropped in CUDA 13.0")
    assert not accelerator_fact(catalog.accelerators["nvidia-h100-sxm5"])["software_dropped"]  # none stated
    with pytest.raises(ValueError, match="dropped_in"):
        SoftwareSupport(stack="CUDA", last_release="CUDA 12.9", sources=["x"])


def test_a_production_purchase_of_a_dropped_part_is_ruled_out_with_its_horizon(advisor: Advisor) -> None:
    result = _result(advisor, {"workload": "inference", "stage": "production", "model": {"name": "llama-3.3-70b"},
                               "deployment": {"where": "on_prem"}})
    out = [r for r in result["ruled_out"] if r["rule"] == "SW.dropped-production"]
    assert any("Tesla V100" in r["reason"] and "dropped in CUDA 13.0" in r["reason"] for r in out)
    for rec in result["recommendations"][:3]:  # nothing dropped is bought for production
        assert rec["accelerator"]["id"] not in {"nvidia-v100-sxm2", "nvidia-p100"}


def test_a_dropped_part_off_production_carries_the_advice_and_its_fp16_plan(advisor: Advisor) -> None:
    # BF16 stated: unstated, a prototype on one's own premises is served in Q4_K_M (the local engines' default)
    result = _result(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-8b"},
                               "precision": {"weights": "bf16"}, "deployment": {"where": "on_prem"},
                               "constraints": {"vendors": ["nvidia"], "datacenter_only": True}})
    v100 = next(o for o in result["recommendations"] + result["runners_up"]
                if o["accelerator"]["id"] == "nvidia-v100-sxm2")
    ids = set(v100["warnings"])  # the ids of the findings about this option
    assert {"SW.dropped", "SW.fp16-for-bf16"} <= ids
    dropped = next(w for w in result["warnings"] if w["id"] == "SW.dropped")
    assert dropped["severity"] == "advice" and "dropped in CUDA 13.0" in dropped["message"]
    fp16 = next(w for w in result["warnings"] if w["id"] == "SW.fp16-for-bf16")
    assert "as FP16" in fp16["message"]
    # a part with BF16 carries neither
    h100 = next(o for o in result["recommendations"] + result["runners_up"]
                if o["accelerator"]["id"].startswith("nvidia-h100"))
    assert not {"SW.dropped", "SW.fp16-for-bf16"} & set(h100["warnings"])
