"""Usage hours, rental set-up time and the topology of offers: hand-calculated figures."""

from __future__ import annotations

import math

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.usage import DEFAULTS, usage_profile, usage_values
from gpuadvisor.rules.planning import topology
from gpuadvisor.rules.sizing.units import HOURS_PER_MONTH


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


def test_an_hgx_instance_is_one_nvlink_domain_joined_by_its_fabric(catalog: Catalog) -> None:
    h100 = catalog.accelerators["nvidia-h100-sxm5"]
    p5 = topology.instance_topology(catalog.instances["aws-p5.48xlarge"], h100)
    assert p5.node == 8 and p5.scale_up.domain == 8
    # NVLink 4: 900 GB/s bidirectional per GPU, 450 per direction
    assert p5.link(8) == topology.Link("scale-up", "nvlink", 450.0)
    assert p5.link(1).cls == "local"
    # beyond the node the group crosses the cluster network: the node's NICs shared by its 8 GPUs
    beyond = p5.link(16)
    assert beyond.cls == "network" and p5.joinable
    assert beyond.gbs_per_direction == (None if p5.network_gbs() is None else p5.network_gbs() / 8)


def test_pcie_cards_talk_over_pcie_and_lone_machines_cannot_be_joined(catalog: Catalog) -> None:
    l40s = catalog.accelerators["nvidia-l40s"]
    g6e = topology.instance_topology(catalog.instances["aws-g6e.48xlarge"], l40s)
    assert g6e.node == 8 and g6e.scale_up.domain == 1
    # PCIe 4.0 x16: 31.5 GB/s per direction
    assert g6e.link(4) == topology.Link("pcie", "pcie", 31.5)
    assert not g6e.joinable
    with pytest.raises(ValueError, match="no network"):
        g6e.link(16)


def test_gaudi_scales_up_over_its_on_chip_roce_and_a_tpu_slice_over_ici(catalog: Catalog) -> None:
    gaudi = catalog.accelerators["intel-gaudi3"]
    up = topology.scale_up_of(gaudi)
    # 21 × 200 GbE = 525 GB/s per direction (1,050 bidirectional in the knowledge base), all-to-all among 8
    assert up == topology.ScaleUp("roce", 525.0, 8)
    assert topology.accelerator_topology(gaudi).link(8).fast
    v5e = catalog.instances["gcp-tpu-v5e-8"]
    tpu = topology.instance_topology(v5e, catalog.accelerators["google-tpu-v5e"])
    # a host of 8 chips inside a 256-chip ICI slice: a group of 16 spans two hosts but stays on ICI
    assert tpu.node == 8 and tpu.link(16).kind == "ici" and tpu.link(16).fast


def test_one_device_and_one_peak_for_every_path(catalog: Catalog) -> None:
    h100 = catalog.accelerators["nvidia-h100-sxm5"]
    p5 = topology.instance_topology(catalog.instances["aws-p5.48xlarge"], h100)
    nvlink = topology.device_for(h100, "bf16", p5.link(8))
    assert nvlink.link_kind == "nvlink" and nvlink.link_gbs_per_direction == 450.0
    assert nvlink.peak_tflops == h100.dense_tflops("bf16") == 989.4
    l4 = catalog.accelerators["nvidia-l4"]
    # FP8 on an FP8 part; fp4 falls back to fp8; a part without FP8 trains in BF16
    assert topology.peak_tflops(l4, "fp4") == (242.5, "fp8")
    a100 = catalog.accelerators["nvidia-a100-sxm-80gb"]
    fp8 = catalog.precisions["fp8"]
    assert topology.training_peak(a100, fp8) == 312.0
    assert topology.training_peak(h100, fp8) == 1979.0


def test_desk_side_cards_and_modules(catalog: Catalog) -> None:
    rtx = catalog.accelerators["nvidia-rtx-4090"]
    assert topology.desk_side(rtx) and not topology.desk_side(catalog.accelerators["nvidia-l40s"])
    assert topology.module_part(catalog.accelerators["nvidia-v100-sxm2"])
    assert topology.module_part(catalog.accelerators["amd-mi300x"])
    assert not topology.module_part(catalog.accelerators["nvidia-l40s"])
    assert not topology.module_part(rtx)
