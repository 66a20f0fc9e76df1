"""The MoE decode step from the hardware up (issue 43): the fixed cost per layer counted in weight GEMMs, the busiest
expert-parallel rank, and the routed experts' own weight-read rate.

Hand calculations: rules/sizing/kernels.py counts GEMMs as the engines fuse them (Llama 4 a layer, an MoE layer 3 +
2 for a shared expert, MLA 5); the straggler is the expected maximum of `ep` binomial loads (Blom's approximation
of the normal order statistic).
"""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.estimate.consult import EstimateRequest, estimate
from gpuadvisor.rules.sizing.kernels import DENSE_LAYER_GEMMS, layer_gemms, model_gemms, overhead_layers
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import (
    DecodeCurve,
    Device,
    EngineEfficiency,
    ep_expert_straggler,
    ep_token_straggler,
    expected_max_standard_normal,
    routed_bytes_per_step,
)

CATALOG = load_catalog(user_dir=None)


def _arch(model: str):  # type: ignore[no-untyped-def]
    return CATALOG.models[model].architecture


@pytest.mark.parametrize(("model", "dense", "moe", "layers"), [
    ("llama-3.1-8b", 4, None, 32.0),  # the reference layer: the profiles' per-layer cost as fitted
    ("mixtral-8x7b", 4, 5, 32 * 5 / 4),  # QKV, output; router, grouped gate-up, grouped down
    # MLA (q down, q up, latent down, absorbed up, output) + 2 dense / router + 2 grouped + 2 shared
    ("deepseek-v3", 7, 10, (3 * 7 + 58 * 10) / 4),
])
def test_overhead_layers_count_each_layer_by_its_gemms(model: str, dense: int, moe: int | None,
                                                       layers: float) -> None:
    arch = _arch(model)
    params = count_parameters(arch)
    assert layer_gemms(arch, False) == dense
    if moe is not None:
        assert layer_gemms(arch, True) == moe
    assert overhead_layers(arch, params.dense_layers, params.moe_layers) == pytest.approx(layers)
    # one count: the GEMM ramp's kernels are the same GEMMs plus the LM head
    assert model_gemms(arch, params.dense_layers, params.moe_layers) == round(layers * DENSE_LAYER_GEMMS) + 1


def test_a_deepseek_step_pays_two_and_a_half_llama_layers_a_layer() -> None:
    """The per-layer cost of a 30 µs profile: a DeepSeek-V3 pass pays 150.25 × 30 µs = 4.51 ms, not 61 × 30 =
    1.83 ms: what makes its small-batch decode slower than its bytes (issue 43: 20-45 % too fast at 4-16 requests
    before)."""
    arch = _arch("deepseek-v3")
    params = count_parameters(arch)
    eff = EngineEfficiency("test", 0.8, 0.8, 30.0)
    curve = DecodeCurve(arch, params, Device(bandwidth_gbs=4800.0, peak_tflops=1979.0, efficiency=eff),
                        bytes_per_weight=1.0, kv_bytes_per_value=1.0, context=1000, tp=8)
    assert curve.parts(1).per_layer == pytest.approx(150.25 * 30e-6)


def test_expected_max_of_normals_against_tables() -> None:
    """Exact expected maxima of n standard normals (Harter 1961): n = 2: 1/√π = 0.5642; n = 4: 1.0294; n = 8:
    1.4236; Blom's formula is within 5 % at 2 ranks, 2 % at 4, 1 % at 8."""
    assert expected_max_standard_normal(1) == 0.0
    assert expected_max_standard_normal(2) == pytest.approx(1 / math.sqrt(math.pi), rel=0.05)
    assert expected_max_standard_normal(4) == pytest.approx(1.0294, rel=0.02)
    assert expected_max_standard_normal(8) == pytest.approx(1.4236, rel=0.01)
    assert expected_max_standard_normal(72) == pytest.approx(NormalDist().inv_cdf((72 - 0.375) / 72.25))


def test_busiest_rank_reads_more_experts_at_small_batches() -> None:
    """DeepSeek-V3 over 8 ranks at 4 tokens: a rank holds 32 experts, each touched with p = 1 − (31/32)^4 = 0.1193:
    mean 3.818, sd √(3.818 × 0.8807) = 1.834, busiest 3.818 + 1.4236 × 1.834 = 6.43 (1.69 times the mean); at
    1,024 tokens every expert is touched: 1."""
    p = 1 - (31 / 32) ** 4
    mean, sd = 32 * p, math.sqrt(32 * p * (1 - p))
    assert ep_expert_straggler(256, 8, 4, 8) == pytest.approx((mean + 1.4236 * sd) / mean, rel=0.01)
    assert ep_expert_straggler(256, 8, 1024, 8) == pytest.approx(1.0)
    assert ep_expert_straggler(256, 8, 4, 1) == 1.0
    assert ep_expert_straggler(256, 8, 32, 8) < ep_expert_straggler(256, 8, 8, 8)


def test_busiest_rank_computes_more_token_pairs() -> None:
    """32 token-expert pairs (4 tokens × 8) over 8 ranks: mean 4, variance 32 × 1/8 × 7/8 = 3.5, busiest
    4 + 1.4236 × 1.871 = 6.66 (1.67)."""
    assert ep_token_straggler(8, 4, 8) == pytest.approx((4 + 1.4236 * math.sqrt(3.5)) / 4, rel=0.01)
    assert ep_token_straggler(8, 4, 1) == 1.0


def test_expert_parallel_step_waits_for_the_busiest_rank() -> None:
    """With ep = 8 the routed bytes a rank reads are routed ÷ 8 × the straggler: at batch 4 on 4.8 TB/s at 0.8, the
    routed share of the memory time is that many bytes at that rate."""
    arch = _arch("deepseek-v3")
    params = count_parameters(arch)
    eff = EngineEfficiency("test", 0.8, 0.8, 0.0)
    device = Device(bandwidth_gbs=4800.0, peak_tflops=None, efficiency=eff)
    curve = DecodeCurve(arch, params, device, bytes_per_weight=1.0, kv_bytes_per_value=1.0, context=1,
                        tp=1, ep=8)
    routed = routed_bytes_per_step(params, arch, 4, 1.0)
    straggler = ep_expert_straggler(256, 8, 4, 8)
    uniform = dataclasses.replace(eff, expert_bandwidth_efficiency=0.4)
    slower = DecodeCurve(arch, params, Device(bandwidth_gbs=4800.0, peak_tflops=None, efficiency=uniform),
                         bytes_per_weight=1.0, kv_bytes_per_value=1.0, context=1, tp=1, ep=8)
    # the experts at half the dense rate add exactly their bytes once more at the dense rate
    assert slower.parts(4).memory - curve.parts(4).memory == pytest.approx(
        routed / 8 * straggler / (4800e9 * 0.8), rel=1e-9)


def test_routed_experts_read_at_their_own_rate() -> None:
    """Mixtral at tp 2, batch 1: the routed experts (2 of 8 a layer) at 0.9 of the bandwidth, the rest at 0.6:
    memory = rest ÷ (2 × 0.6 × B) + routed ÷ (2 × 0.9 × B) (+ the KV cache)."""
    arch = _arch("mixtral-8x7b")
    params = count_parameters(arch)
    base = EngineEfficiency("test", 0.6, 0.6, 0.0)
    split = dataclasses.replace(base, expert_bandwidth_efficiency=0.9)
    bw = 3350.0

    def memory(eff: EngineEfficiency) -> float:
        return DecodeCurve(arch, params, Device(bandwidth_gbs=bw, peak_tflops=None, efficiency=eff),
                           bytes_per_weight=1.0, kv_bytes_per_value=1.0, context=1, tp=2).parts(1).memory

    routed = routed_bytes_per_step(params, arch, 1, 1.0)
    assert memory(base) - memory(split) == pytest.approx(routed / 2 / (bw * 1e9) * (1 / 0.6 - 1 / 0.9), rel=1e-9)


def test_expert_rate_must_be_positive() -> None:
    with pytest.raises(ValueError):
        EngineEfficiency("test", 0.6, 0.6, 0.0, expert_bandwidth_efficiency=0.0)


# --- the same mechanism on Apple silicon ------------------------------------------------------------------------

def test_deepseek_r1_on_an_m3_ultra_with_llama_cpp() -> None:
    """DeepSeek-R1 (671B) at 4 bits on an M3 Ultra 512 GB: 17-18 tokens/s published (Dave2D's run, as reported by
    Wccftech, 2025-03, 'M3 Ultra chip handles DeepSeek R1 model with 671 billion parameters'; its engine is not
    named in the report as read). llama.cpp's Metal profile pays its 153 µs a reference layer 150.25 times a pass
    (a MoE layer's router and grouped GEMMs, MLA's five projections): 17.4 tokens/s, was 22.8 when a DeepSeek layer
    cost what a Llama layer does."""
    r = estimate(EstimateRequest(model="deepseek-r1", gpu="apple-m3-ultra-512gb", precision="q4_k_m",
                                 engine="llama.cpp", context=1024, input_tokens=512, batch=1), CATALOG)
    assert r.decode_tokens_per_s == pytest.approx(17.5, rel=0.20)


def test_qwen3_moe_on_an_m2_ultra_with_llama_cpp() -> None:
    """Qwen3-30B-A3B Q8_0 on an M2 Ultra: 76.31 tokens/s (ggerganov, llama.cpp pull request #15616, llama-bench
    tg). Its MoE layers run 5 GEMMs to a Llama layer's 4: 69 tokens/s (-9.6 %)."""
    r = estimate(EstimateRequest(model="qwen3-30b-a3b", gpu="apple-m2-ultra", precision="q8_0", engine="llama.cpp",
                                 context=640, input_tokens=512, batch=1), CATALOG)
    assert r.decode_tokens_per_s == pytest.approx(76.31, rel=0.10)
