"""The sustained compute share of power-limited cards (accelerators.toml) is what the MLPerf pairs imply.

tests/benchmarks/derive_sustained.py pairs each card's MLPerf Offline rows with the same round's full-power module
rows (same benchmark and engine) and solves for the share s that leaves the card with its module's relative error.
The knowledge base must carry the median of those pairs (to the two digits it states), from the round it cites."""

from __future__ import annotations

import statistics

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from tests.benchmarks.derive_sustained import pairs_for


@pytest.mark.parametrize(("card", "round_", "expected"), [
    # v4.1 Llama 2 70B: 8× H100 PCIe 9,281.5 tokens/s = 1,160 per GPU against 2,586-3,027 per H100 SXM: s ≈ 0.50
    ("nvidia-h100-pcie", "mlperf-v4.1", 0.50),
    # v4.1: H100 NVL ×4 8,858.78 and ×8 15,875.8 against H100 SXM ×4/×8/×16/×32: s ≈ 0.87
    ("nvidia-h100-nvl", "mlperf-v4.1", 0.87),
    # v5.1: H200 NVL against H200 SXM, per-GPU 0.86-0.91 = the datasheet peak ratio 1,671/1,979: s ≈ 1
    ("nvidia-h200-nvl", "mlperf-v5.1", 1.0),
    # v5.1 Llama 3.1 8B, vLLM: L40S ×1 1,642.22 against H100 SXM ×1 5,777.08 (per-GPU 0.284): s ≈ 0.69
    ("nvidia-l40s", "mlperf-v5.1", 0.69),
])
def test_knowledge_base_carries_the_median_of_its_pairs(card: str, round_: str, expected: float) -> None:
    catalog = load_catalog(user_dir=None)
    shares = [s for s, r, _, _ in pairs_for(card, catalog) if r.raw["round"] == round_]
    assert shares
    stored = catalog.accelerators[card].sustained_compute_ratio
    assert stored is not None and stored.value == expected
    assert statistics.median(shares) == pytest.approx(expected, abs=0.015)


def test_a_card_that_holds_fp8_but_not_fp4_carries_a_per_precision_share() -> None:
    # MLPerf v5.1, 8× RTX PRO 6000 Server, TensorRT-LLM engines: the FP8 Mixtral row is predicted exactly at the
    # full FP8 rate; to be exact too, the NVFP4 Llama 3.1 8B row (46,841.8 tokens/s) needs s = 0.782 and the Llama 2
    # 70B row (26,205.8) s = 0.912: median 0.85, about 1,700 of the 2,000 datasheet FP4 TFLOPS.
    from gpuadvisor.rules.estimate import catalog_factors
    from gpuadvisor.rules.topology import device_for
    from tests.benchmarks.derive_sustained import precision_shares

    catalog = load_catalog(user_dir=None)
    card = "nvidia-rtx-pro-6000-blackwell-server"
    shares = [s for s, _, _ in precision_shares(card, "nvfp4", catalog)]
    assert len(shares) == 2
    stored = catalog.accelerators[card].sustained_compute_ratio_by_precision["fp4"]
    assert stored.value == 0.85 and stored.derived and stored.notes
    assert statistics.median(shares) == pytest.approx(0.85, abs=0.015)
    acc = catalog.accelerators[card]
    assert device_for(acc, "fp4").sustained == 0.85
    assert device_for(acc, "fp8").sustained == 1.0
    factors = catalog_factors(catalog)
    fp4 = device_for(acc, "fp4")
    assert fp4.flops_per_second(factors) == pytest.approx(2000e12 * 0.85 * fp4.compute_efficiency(factors))
