"""The training search buys or rents the fewest GPUs that meet the deadline (issue 38): the growth step scales the
count by the days it lacks, measured on a smaller deployment whose per-GPU rate is lower, so it overshoots; the
search then bisects back down. Fewer GPUs over longer cost less within the deadline, rented (fewer GPU-hours: the
scaling efficiency falls as the count grows) or bought (fewer GPUs)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.estimate.consult import catalog_factors
from gpuadvisor.rules.planning.search import Plan, TrainingSearch, TrainingTargets
from gpuadvisor.rules.planning.units import unit_table
from gpuadvisor.rules.sizing.params import count_parameters

TARGETS = TrainingTargets(tokens=2e12, flops_factor="full", seq=8192, micro_batch=1, deadline_days=90.0,
                          optimizer="adamw", zero_stage=None, lora_rank=16, max_gpus=None)


def _plan(catalog: Catalog, t: TrainingTargets) -> Plan:
    arch = catalog.models["llama-3.1-70b"].architecture
    search = TrainingSearch(arch, count_parameters(arch), catalog.precisions["bf16"], t, catalog_factors(catalog))
    unit = unit_table(catalog).units["inst:aws-p5.48xlarge"]
    plan = search.plan(catalog.accelerators[unit.accelerator], unit)
    assert isinstance(plan, Plan)
    return plan


def test_a_pretraining_run_rents_the_fewest_machines_that_meet_its_deadline(catalog: Catalog) -> None:
    # Llama 3.1 70B on 2T tokens within 90 days: the plan is sized to 90 × (1 − 0.05 schedule margin) = 85.5 days.
    plan = _plan(catalog, TARGETS)
    assert plan.meets_deadline and plan.training_days <= 85.5
    # The growth step alone stopped at 45 p5 (360 H100s) finishing in 65.2 days, 20 days early. The fewest: 34 p5
    # (272 H100s) in 84.3 days; one machine fewer (33 p5, 264 H100s, the most the search may take) misses 85.5.
    assert (plan.machines, plan.count) == (34, 272)
    assert 80.0 < plan.training_days <= 85.5
    fewer = _plan(catalog, replace(TARGETS, max_gpus=plan.count - 8))
    assert fewer.count == 264 and not fewer.meets_deadline and fewer.training_days > 85.5
    # By hand, the work is the same: 6 × 70.55e9 × 2e12 = 8.47e23 FLOPs. 272 GPUs × 84.3 days × 24 h = 550,000
    # GPU-hours = 1.98e9 GPU-seconds, 428 TFLOPS a GPU of model FLOPs (43 % of the H100's 989.4 BF16). At $55.04 an
    # hour per p5 (AWS, 2026-07-28): 34 × 84.3 × 24 × 55.04 = $3.79M, against 45 × 65.2 × 24 × 55.04 = $3.88M for
    # the 45 machines: more GPUs finish sooner but cost more GPU-hours.
    assert plan.training_gpu_hours == pytest.approx(plan.count * plan.training_days * 24, rel=1e-6)
    flops = 6 * 70_553_706_496 * 2e12
    per_gpu = flops / (plan.training_gpu_hours * 3600) / 1e12
    assert 380 < per_gpu < 470
    faster = _plan(catalog, replace(TARGETS, deadline_days=65.2 / 0.95 + 1.0))  # a deadline that needs more GPUs
    assert faster.count > plan.count and faster.training_gpu_hours > plan.training_gpu_hours
