"""Usage hours, rental set-up time and the topology of offers: hand-calculated figures."""

from __future__ import annotations

import math

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules import topology
from gpuadvisor.rules.usage import DEFAULTS, HOURS_PER_MONTH, usage_profile, usage_values


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(user_dir=None)


def test_defaults_equal_the_assumptions(catalog: Catalog) -> None:
    assert usage_values(catalog) == DEFAULTS


def test_learning_uses_a_few_hours_a_month_in_short_sessions() -> None:
    u = usage_profile("inference", "learning", None, None)
    assert u.hours_per_month == 20.0
    assert u.utilization == pytest.approx(20 / 730)
    assert u.sessions_per_month == math.ceil(20 / 3)  # 7 sessions of at most 3 h
    # each session pays 0.25 h of start-up and set-up: 20 + 7 × 0.25 = 21.75 billed hours
    assert u.rented_hours_per_month() == pytest.approx(21.75)


def test_production_serving_is_always_on_and_owned_hardware_half_busy() -> None:
    u = usage_profile("inference", "production", None, None)
    assert u.hours_per_month == HOURS_PER_MONTH and u.sessions_per_month == 1
    assert u.utilization == 0.5
    assert u.rented_hours_per_month() == HOURS_PER_MONTH  # never more than the month


def test_hours_and_utilization_imply_each_other_and_answers_win() -> None:
    assert usage_profile("inference", "production", 100.0, None).utilization == pytest.approx(100 / 730)
    assert usage_profile("inference", "production", None, 0.05).hours_per_month == pytest.approx(36.5)
    both = usage_profile("inference", "learning", 40.0, 0.9)
    assert both.hours_per_month == 40.0 and both.utilization == 0.9


def test_a_training_run_is_one_session_with_its_set_up() -> None:
    u = usage_profile("finetune", "production", None, None)
    assert u.per_run and u.sessions_per_month == 1
    assert u.rented_hours_per_run(10.0) == pytest.approx(10.25)


def test_tensor_parallel_groups_need_a_fast_domain(catalog: Catalog) -> None:
    h100 = catalog.accelerators["nvidia-h100-sxm5"]
    node = catalog.instances["lambda-8x-h100-sxm"]
    assert topology.instance_domain(node, h100) == 8
    assert topology.unsupported(node, h100, tensor_parallel=8, pipeline_parallel=1, count=8, training=False) is None
    single = next(i for i in catalog.instances.values()
                  if i.accelerator == "nvidia-rtx-4090" and i.accelerator_count == 1)
    rtx = catalog.accelerators["nvidia-rtx-4090"]
    reason = topology.unsupported(single, rtx, tensor_parallel=2, pipeline_parallel=1, count=2, training=False)
    assert reason is not None and "no fast interconnect" in reason
    # independent serving replicas need no interconnect at all
    assert topology.unsupported(single, rtx, tensor_parallel=1, pipeline_parallel=1, count=4, training=False) is None


def test_multi_node_work_needs_a_cluster_network(catalog: Catalog) -> None:
    h100 = catalog.accelerators["nvidia-h100-sxm5"]
    clusters = [i for i in catalog.instances.values() if i.accelerator == h100.id and i.accelerator_count == 8]
    joined = next(i for i in clusters if i.cluster)
    assert topology.unsupported(joined, h100, tensor_parallel=8, pipeline_parallel=2, count=16, training=False) is None
    alone = [i for i in catalog.instances.values() if i.accelerator == h100.id and not i.cluster]
    for inst in alone:
        reason = topology.unsupported(inst, h100, tensor_parallel=1, pipeline_parallel=1, count=64, training=True)
        assert reason is not None and "cluster network" in reason, inst.id


def test_desk_side_cards_stay_in_one_workstation_and_modules_on_their_board(catalog: Catalog) -> None:
    rtx = catalog.accelerators["nvidia-rtx-4090"]
    assert topology.replica_limit(rtx) == rtx.max_per_node == 4 and topology.cluster_limit(rtx) == 4
    assert topology.replica_limit(catalog.accelerators["nvidia-h100-sxm5"]) == topology.UNLIMITED
    assert topology.module_part(catalog.accelerators["nvidia-v100-sxm2"])
    assert topology.module_part(catalog.accelerators["amd-mi300x"])
    assert not topology.module_part(catalog.accelerators["nvidia-l40s"])
    assert not topology.module_part(rtx)
