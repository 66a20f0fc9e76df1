"""Each part's view in the training step (rules/training_plan.training_device): its achievable matmul share, its
software stack's share, and what Blackwell Ultra's faster softmax does to attention. Figures by hand from
knowledge/data/accelerators.toml and assumptions.toml."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.estimate.consult import catalog_factors
from gpuadvisor.rules.planning.topology import accelerator_topology
from gpuadvisor.rules.planning.training_plan import stack_efficiency, training_device
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.training import TrainingFormat, attention_cost


@pytest.fixture(scope="module")
def factors(catalog: Catalog) -> Factors:
    return catalog_factors(catalog)


def test_softmax_share_of_attention_is_paid_less_on_faster_exponential_units() -> None:
    """Attention cost 2.6 = its matmul (1) + the softmax (1.6); at twice the exponential rate 1 + 0.8 = 1.8."""
    assert attention_cost(2.6) == pytest.approx(2.6)
    assert attention_cost(2.6, 2.0) == pytest.approx(1.8)
    assert attention_cost(0.9, 2.0) == pytest.approx(1.0)  # the matmul itself is never cheaper


def test_b300_is_not_a_b200(catalog: Catalog, factors: Factors) -> None:
    """Same tensor cores and dense peaks (MAMF 1,745.0 of 2,250 BF16 on both), but the B300 runs the softmax
    exponential twice as fast (NVIDIA's Blackwell Ultra softmax blog): its attention costs 1 + 1.632/2 at the fitted
    2.632 instead of 2.632."""
    fmt = TrainingFormat("bf16")
    devs = {}
    for part in ("nvidia-b200", "nvidia-b300"):
        acc = catalog.accelerators[part]
        devs[part] = training_device(acc, accelerator_topology(acc), fmt, 8, factors)
    b200, b300 = devs["nvidia-b200"], devs["nvidia-b300"]
    assert b200 is not None and b300 is not None
    assert b200.softmax_speedup == 1.0
    assert b300.softmax_speedup == 2.0
    c = factors.training_attention_cost
    assert attention_cost(c, b300.softmax_speedup) == pytest.approx(1 + (c - 1) / 2)


def test_each_stack_takes_its_own_share(catalog: Catalog, factors: Factors) -> None:
    """CUDA, ROCm, SynapseAI and XLA each their fitted share (assumptions.toml); Neuron, with no table, CUDA's."""
    acc = catalog.accelerators
    assert stack_efficiency(acc["nvidia-h100-sxm5"], factors) == factors.training_stack_efficiency
    assert stack_efficiency(acc["amd-mi355x"], factors) == pytest.approx(0.80)
    assert stack_efficiency(acc["intel-gaudi2"], factors) == pytest.approx(0.56)
    neuron = [a for a in acc.values() if a.software_stack == "neuron"]
    assert neuron and stack_efficiency(neuron[0], factors) == factors.training_stack_efficiency


def test_gaudi2_reaches_less_of_its_peak_in_a_step_than_its_matmul_benchmark(catalog: Catalog,
                                                                               factors: Factors) -> None:
    """Gaudi 2's MAMF row is 418.7 of 432 TFLOPS (96.9 %, at GEMM shapes of 20k × 20k × 11k); under SynapseAI's
    fitted 0.56 a training step's GEMMs run at 0.969 × 0.56 = 54 % of the peak, not the 97 % × CUDA share that sized
    clusters of Gaudi 2 33 % faster than Intel's own pre-training table (Llama 2 70B on 64 HPUs, FP8: 853
    tokens/s/HPU)."""
    acc = catalog.accelerators["intel-gaudi2"]
    dev = training_device(acc, accelerator_topology(acc), TrainingFormat("bf16"), 8, factors)
    assert dev is not None
    assert dev.gemm_tflops == pytest.approx(418.7)
    assert dev.gemm_tflops * dev.stack_efficiency / 432 == pytest.approx(0.969 * 0.56, rel=1e-2)


def test_a_down_clocked_sibling_is_not_faster_than_its_measured_part(catalog: Catalog, factors: Factors) -> None:
    """The MI350X is the MI355X's die at 2.2 GHz instead of 2.4: its matmul rate is the MI355X's MAMF 1,565.0 ×
    2.2/2.4 = 1,434.6 TFLOPS (not the 75 % default share, 1,730 TFLOPS, which planned it faster than the MI355X)."""
    fmt = TrainingFormat("bf16")
    rate = {}
    for part in ("amd-mi350x", "amd-mi355x"):
        acc = catalog.accelerators[part]
        dev = training_device(acc, accelerator_topology(acc), fmt, 8, factors)
        assert dev is not None
        rate[part] = dev.gemm_tflops
    assert rate["amd-mi355x"] == pytest.approx(1565.0)
    assert rate["amd-mi350x"] == pytest.approx(1565.0 * 2.2 / 2.4, rel=1e-3)


def test_a_t4_has_no_bf16_so_its_fp16_matmul_share_serves(catalog: Catalog) -> None:
    """T4: measured FP16 square matmul 42.3 of 65 TFLOPS (65 %); its BF16 share falls back to that."""
    t4 = catalog.accelerators["nvidia-t4"]
    assert t4.matmul_share("bf16") == pytest.approx(42.3 / 65, rel=1e-3)
