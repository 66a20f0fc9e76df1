"""The split the engines' published recipes run a model at (engines.toml [[serving_recipe]], rules/planning/recipes.py):
a floor on the GPUs a replica for parts with no more memory than a recipe's part, preferred by the planner and named
by rule W3.recipe when a plan stays below it (issue 37, "Splits practitioners avoid")."""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.planning.recipes import recipe_split


@pytest.mark.parametrize(("model", "weights", "part", "gpus"), [
    # SGLang's DeepSeek V3/R1 page: FP8 on 8 x H200, 8 x B200, 8 x MI300X and 2 x 8 x H100; vLLM's recipes: 8 x H200
    # and 8 x MI300X. A part is bound by the recipes of parts with at least its memory, the largest split winning.
    ("deepseek-v3", "fp8", "nvidia-h100-sxm5", 16),   # 80 GB: the 2 x 8 H100 recipe itself
    ("deepseek-v3", "fp8", "nvidia-h200-sxm", 8),     # 141 GB
    ("deepseek-v3", "fp8", "nvidia-b200", 8),         # 180 GB
    ("deepseek-v3", "fp8", "amd-mi300x", 8),          # 192 GB
    ("deepseek-v3", "fp8", "amd-mi325x", None),       # 256 GB: more than every recipe's part, left to the physics
    ("deepseek-v3", "fp8", "amd-mi355x", None),       # 288 GB
    ("deepseek-v3", "bf16", "amd-mi300x", None),      # no BF16 recipe entered
    # vLLM's Llama 3.3 70B AMD recipe (-tp 2 on MI300X) is a latency choice, not entered (engines.toml says why)
    ("llama-3.3-70b", "bf16", "amd-mi300x", None),
])
def test_the_recipes_that_bind_a_part_are_those_of_parts_with_at_least_its_memory(
        catalog: Catalog, model: str, weights: str, part: str, gpus: int | None) -> None:
    found = recipe_split(catalog, model, weights, catalog.accelerators[part])
    assert (found.gpus if found else None) == gpus


def _consult(advisor: Advisor, answers: dict[str, Any]) -> RecommendResult:
    return advisor.consult(parse_answers(answers), top=40)


def _option(result: RecommendResult, accelerator: str) -> Recommendation:
    return next(r for r in (*result.recommendations, *result.runners_up) if r.accelerator.id == accelerator)


DEEPSEEK = {"workload": "inference", "model": {"name": "deepseek-v3"},
            "precision": {"weights": "fp8", "context_tokens": 4096}, "inference": {"concurrent_requests": 4},
            "deployment": {"where": "on_prem"}}


def test_deepseek_v3_fp8_on_prem_runs_tp8_on_one_8_gpu_node(advisor: Advisor) -> None:
    """The issue's reproduction: 4 requests in flight fit TP 4 (2 replicas on the 8-GPU server, 169.4 of 206 GB a
    GPU, 82 %), which is what the planner chose; the recipes run TP 8 and so does the plan now: 671B FP8 weights /
    8 = 84.1 GB + 1 GB runtime + the KV cache = 85.4 GB of 206 (41 %). The part with more memory than every recipe's
    (MI355X, 309 GB) keeps its cheaper-per-replica TP 4 (169.4 of 309 GB: 55 %)."""
    result = _consult(advisor, DEEPSEEK)
    for part in ("amd-mi300x", "nvidia-h200-sxm", "nvidia-b200"):
        opt = _option(result, part)
        assert (opt.count, opt.tensor_parallel, opt.replicas) == (8, 8, 1), part
        assert opt.memory_gb_per_gpu == pytest.approx(85.4, abs=0.1)
    h100 = _option(result, "nvidia-h100-sxm5")
    assert h100.tensor_parallel * h100.pipeline_parallel == 16 and h100.tensor_parallel == 8  # TP inside NVLink
    mi355x = _option(result, "amd-mi355x")
    assert (mi355x.tensor_parallel, mi355x.replicas) == (4, 2)
    assert mi355x.memory_gb_per_gpu == pytest.approx(169.4, abs=0.1)
    assert not [w for w in result.warnings if w.rule == "W3.recipe"]  # every plan shown is at the recipe's split


def test_a_plan_held_below_the_recipe_says_so_with_the_kv_cache_room_of_each_split(advisor: Advisor) -> None:
    """Four owned MI300X hold DeepSeek-V3 FP8 only at TP 4. By hand, at vLLM's 0.9 memory fraction of 192 GiB
    (206.2 GB): 185.5 GB usable; TP 4 holds 168.2 GB of weights + 1 GB runtime + 0.1 GB activations, leaving 16 GB
    for the KV cache; TP 8 holds 84.1 + 1.1, leaving 100 GB."""
    result = _consult(advisor, {**DEEPSEEK, "current": {"gpu": "amd-mi300x", "gpu_count": 4}})
    own = next(r for r in result.recommendations if r.acquisition == "own")
    assert own.tensor_parallel == 4
    [w] = [w for w in result.warnings if w.rule == "W3.recipe"]
    assert "a replica over 4 GPUs, where the SGLang and vLLM recipes run tensor parallel 8 on 8 × AMD Instinct " \
           "MI300X" in w.message
    assert "each GPU keeps 16 GB of its 206 GB for the KV cache, at the recipe's 100 GB" in w.message
