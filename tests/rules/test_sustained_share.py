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
    # full FP8 rate; to be exact too, the NVFP4 Llama 3.1 8B row (46,841.8 tokens/s) needs s = 0.780 and the Llama 2
    # 70B row (26,205.8) s = 0.857 (GEMMs at their depth; 0.782 and 0.912 before): median 0.82, about 1,640 of the
    # 2,000 datasheet FP4 TFLOPS.
    from gpuadvisor.rules.estimate.consult import catalog_factors
    from gpuadvisor.rules.planning.topology import device_for
    from tests.benchmarks.derive_sustained import precision_shares

    catalog = load_catalog(user_dir=None)
    card = "nvidia-rtx-pro-6000-blackwell-server"
    shares = [s for s, _, _ in precision_shares(card, "nvfp4", catalog)]
    assert len(shares) == 2
    stored = catalog.accelerators[card].sustained_compute_ratio_by_precision["fp4"]
    assert stored.value == 0.82 and stored.derived and stored.notes
    assert statistics.median(shares) == pytest.approx(0.82, abs=0.015)
    acc = catalog.accelerators[card]
    assert device_for(acc, "fp4").sustained == 0.82
    assert device_for(acc, "fp8").sustained == 1.0
    factors = catalog_factors(catalog)
    fp4 = device_for(acc, "fp4")
    assert fp4.flops_per_second(factors) == pytest.approx(2000e12 * 0.82 * fp4.compute_efficiency(factors))


def test_a_published_power_limit_is_the_median_of_its_capped_rows() -> None:
    # MLPerf v4.1, NVIDIA H200 SXM ×8 MaxQ (500 W) against the same system at 700 W: Llama 2 70B 25,262.1 vs
    # 31,302.7 tokens/s (0.807) and Mixtral 48,987.9 vs 59,022.3 (0.830); the shares that leave each capped row
    # with its full-power twin's relative error are 0.791 and 0.784: median 0.787, stored 0.79
    from tests.benchmarks.derive_sustained import power_limit_shares

    catalog = load_catalog(user_dir=None)
    h200 = catalog.accelerators["nvidia-h200-sxm"]
    shares = [s for s, _ in power_limit_shares(h200.id, 500, catalog)]
    assert len(shares) == 2 and statistics.median(shares) == pytest.approx(0.79, abs=0.01)
    (cap,) = h200.power_limits
    assert cap.limit_w == 500 and cap.sustained_compute_ratio.value == 0.79 and cap.sustained_compute_ratio.derived
    assert cap.system_power_w is not None and cap.system_power_w.value == 6153
    capped = h200.at_power_limit(500)
    assert capped.tdp_w is not None and capped.tdp_w.value == 500
    assert capped.sustained_share("fp8") == capped.sustained_share("bf16") == 0.79
    assert h200.sustained_share("fp8") == 1.0  # the catalogue's part is unchanged


def test_an_unpublished_power_limit_is_refused_not_guessed() -> None:
    catalog = load_catalog(user_dir=None)
    with pytest.raises(ValueError, match=r"no published result at a 450 W power limit \(published: 500 W\)"):
        catalog.accelerators["nvidia-h200-sxm"].at_power_limit(450)
    with pytest.raises(ValueError, match="none is published for this part"):
        catalog.accelerators["nvidia-h100-sxm5"].at_power_limit(450)


def test_estimate_at_a_power_limit_runs_the_tensor_math_at_the_published_share() -> None:
    from gpuadvisor.knowledge.errors import InputError
    from gpuadvisor.rules.estimate.consult import EstimateRequest, estimate

    catalog = load_catalog(user_dir=None)
    base = dict(workload="inference", model="llama-2-70b", gpu="nvidia-h200-sxm", gpus=8, tp=2, precision="fp8",
                context=1024, batch=512, input_tokens=222, output_tokens=291, engine="tensorrt-llm-engine")
    full = estimate(EstimateRequest(**base), catalog)  # type: ignore[arg-type]
    capped = estimate(EstimateRequest(**base, power_limit_w=500), catalog)  # type: ignore[arg-type]
    assert capped.setup.power_limit_w == 500 and full.setup.power_limit_w is None
    assert full.throughput_tokens_per_s is not None and capped.throughput_tokens_per_s is not None
    # batch 512 of a 70B at FP8 is mostly compute: the published ratio at this cap was 0.807 (Llama 2 70B Offline)
    ratio = capped.throughput_tokens_per_s / full.throughput_tokens_per_s
    assert 0.79 < ratio < 0.86
    assert any("capped at 500 W" in w for w in capped.warnings)
    with pytest.raises(InputError, match=r"--power-limit 450: NVIDIA H200 SXM: no published result"):
        estimate(EstimateRequest(**{**base, "power_limit_w": 450}), catalog)  # type: ignore[arg-type]
