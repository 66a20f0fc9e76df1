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
    # v4.1 Llama 2 70B: 8× H100 PCIe 9,281.5 tokens/s = 1,160 per GPU against 2,586-3,027 per H100 SXM: s ≈ 0.45
    ("nvidia-h100-pcie", "mlperf-v4.1", 0.445),
    # v4.1: H100 NVL ×4 8,858.78 and ×8 15,875.8 against H100 SXM ×4/×8/×16/×32: s ≈ 0.81
    ("nvidia-h100-nvl", "mlperf-v4.1", 0.81),
    # v5.1: H200 NVL against H200 SXM, per-GPU 0.86-0.91 = the datasheet peak ratio 1,671/1,979: s ≈ 1
    ("nvidia-h200-nvl", "mlperf-v5.1", 1.0),
    # v5.1 Llama 3.1 8B, vLLM: L40S ×1 1,642.22 against H100 SXM ×1 5,777.08 (per-GPU 0.284): s ≈ 0.70
    ("nvidia-l40s", "mlperf-v5.1", 0.70),
])
def test_knowledge_base_carries_the_median_of_its_pairs(card: str, round_: str, expected: float) -> None:
    catalog = load_catalog(user_dir=None)
    shares = [s for s, r, _, _ in pairs_for(card, catalog) if r.raw["round"] == round_]
    assert shares
    stored = catalog.accelerators[card].sustained_compute_ratio
    assert stored is not None and stored.value == expected
    assert statistics.median(shares) == pytest.approx(expected, abs=0.015)
