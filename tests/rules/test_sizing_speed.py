"""Roofline speed (S6, S7, S8, H3, H4, H6, W3): documents' figures, corrections, and the bandwidth-bound property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import Architecture, MoE
from gpuadvisor.rules.planning.topology import device_for, peak_tflops
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import (
    Device,
    allreduce_seconds,
    decode_step,
    expected_distinct_experts,
    gemm_depth_factor,
    prefill,
    ridge_point,
    weight_bytes_per_step,
)
from gpuadvisor.rules.sizing.training import training_time

LLAMA2_7B = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32)
LLAMA3_8B = Architecture(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=8)
MIXTRAL = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8,
                       moe=MoE(num_experts=8, experts_per_token=2, expert_intermediate_size=14336))
P7 = count_parameters(LLAMA2_7B)
P8 = count_parameters(LLAMA3_8B)
A100 = Device(bandwidth_gbs=2039, peak_tflops=312, link_gbs_per_direction=300, link_kind="nvlink")
RTX4090 = Device(bandwidth_gbs=1008, peak_tflops=165.2, link_gbs_per_direction=31.5, link_kind="pcie")
IDEAL = Factors(decode_bandwidth_efficiency=1.0, compute_efficiency=1.0, step_overhead_per_layer_us=0.0)


def test_ridge_point_a100_002_and_corrected() -> None:
    # 002 Q5: 312 TFLOPS ÷ 2.0 TB/s = 156 FLOP/byte. With the datasheet bandwidths (reference correction 5):
    # A100 80GB SXM 2,039 GB/s → 153.0; A100 40GB 1,555 GB/s → 200.6 (002 rounds 40GB up to 1.6 TB/s → 195).
    assert ridge_point(312, 2000) == pytest.approx(156)
    assert ridge_point(312, 2039) == pytest.approx(153.02, abs=0.01)
    assert ridge_point(312, 1555) == pytest.approx(200.64, abs=0.01)


def test_h100_fp8_is_twice_bf16_not_three_times() -> None:
    # Reference correction 16: 002 says FP8 is "989 TFLOPS, a 3x improvement over BF16". H100 SXM dense: BF16
    # 989.4, FP8 1,979 = 2×, so the FP8 ridge point is twice the BF16 one.
    h100 = load_catalog(user_dir=None).accelerators["nvidia-h100-sxm5"]
    bf16, _ = peak_tflops(h100, "bf16")
    fp8, _ = peak_tflops(h100, "fp8")
    assert bf16 is not None and fp8 is not None
    assert bf16 == pytest.approx(989.4) and fp8 == pytest.approx(1979, rel=1e-3)
    assert fp8 / bf16 == pytest.approx(2.0, rel=1e-3)
    assert ridge_point(fp8, 3350) == pytest.approx(2 * ridge_point(bf16, 3350), rel=1e-3)


def test_batch_1_arithmetic_intensity_is_about_1() -> None:
    # 002 Q5: at batch 1 each 2-byte weight does one multiply-add (2 FLOPs): ≈ 1 FLOP/byte.
    step = decode_step(LLAMA2_7B, P7, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=128)
    assert 0.9 < step.arithmetic_intensity < 1.1
    assert step.bound == "bandwidth"


def test_large_batch_turns_compute_bound_h4() -> None:
    # H4: at batch 512 the intensity (≈ 350 FLOP/byte of weights) passes the A100 ridge (153).
    small = decode_step(LLAMA3_8B, P8, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=256, batch=8)
    large = decode_step(LLAMA3_8B, P8, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=256, batch=512)
    assert small.bound == "bandwidth"
    assert large.bound == "compute"


def test_002_bandwidth_table_7b_fp16() -> None:
    # 002: tokens/s = bandwidth ÷ model bytes; 7B FP16 (14 GB) on H100 3.35 TB/s ≈ 240, RTX 4090 ≈ 71.
    # Llama 2 7B reads 13.2 GB per step: every weight but the input embedding table (a row lookup), plus the
    # KV cache of the one token in context (2 × 32 layers × 32 heads × 128 × 2 B).
    h100 = Device(bandwidth_gbs=3350, peak_tflops=989.4)
    step = decode_step(LLAMA2_7B, P7, h100, bytes_per_weight=2, kv_bytes_per_value=2, context=1)
    read = (P7.total - 32000 * 4096) * 2 + 524_288
    assert step.bytes_per_gpu == pytest.approx(read)
    assert step.bandwidth_bound_tokens_per_s == pytest.approx(3350e9 / read)
    assert step.bandwidth_bound_tokens_per_s == pytest.approx(240, rel=0.07)
    r4090 = decode_step(LLAMA2_7B, P7, RTX4090, bytes_per_weight=2, kv_bytes_per_value=2, context=1)
    assert r4090.bandwidth_bound_tokens_per_s == pytest.approx(71, rel=0.08)
    # and the realistic figure sits below the ceiling (002 itself assumes 70% efficiency: ~50 t/s on the 4090)
    assert r4090.tokens_per_s < r4090.bandwidth_bound_tokens_per_s


def test_decode_step_formula() -> None:
    f = Factors(decode_bandwidth_efficiency=0.5, step_overhead_per_layer_us=10.0)
    step = decode_step(LLAMA2_7B, P7, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=1000, batch=4,
                       factors=f)
    kv = 4 * 1000 * 524_288
    weights = (P7.total - 32000 * 4096) * 2
    assert step.memory_seconds == pytest.approx((weights + kv) / (2039e9 * 0.5))
    assert step.overhead_seconds == pytest.approx(32 * 10e-6)
    assert step.step_seconds == pytest.approx(step.memory_seconds + step.overhead_seconds)
    assert step.tokens_per_s == pytest.approx(4 / step.step_seconds)


def test_moe_reads_only_touched_experts() -> None:
    # Uniform routing: E × (1 − (1 − k/E)^B). Batch 1 touches k = 2 of 8; batch 2: 8 × (1 − 0.75²) = 3.5.
    assert expected_distinct_experts(8, 2, 1) == pytest.approx(2)
    assert expected_distinct_experts(8, 2, 2) == pytest.approx(3.5)
    assert expected_distinct_experts(8, 2, 10_000) == pytest.approx(8)
    p = count_parameters(MIXTRAL)
    one = weight_bytes_per_step(p, MIXTRAL, 1, 2.0)
    many = weight_bytes_per_step(p, MIXTRAL, 4096, 2.0)
    assert many == pytest.approx((p.total - 32000 * 4096) * 2)  # every expert read
    assert one == pytest.approx(many - 32 * 6 * p.expert * 2)  # 6 of 8 experts per layer skipped
    # W13: FLOPs follow the active parameters, memory the total
    step = decode_step(MIXTRAL, p, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=1)
    assert step.flops_per_gpu < 2 * p.total * 0.4


def test_tensor_parallel_over_pcie_costs_more_than_nvlink_w3() -> None:
    pcie = Device(bandwidth_gbs=2039, peak_tflops=312, link_gbs_per_direction=31.5, link_kind="pcie")
    msg = 8 * 8192 * 2  # batch 8 × hidden 8192 × 2 bytes
    assert allreduce_seconds(msg, 2, pcie, Factors()) > 3 * allreduce_seconds(msg, 2, A100, Factors())
    assert allreduce_seconds(msg, 1, pcie, Factors()) == 0.0
    nv = decode_step(LLAMA2_7B, P7, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=512, tp=2)
    pc = decode_step(LLAMA2_7B, P7, pcie, bytes_per_weight=2, kv_bytes_per_value=2, context=512, tp=2)
    assert pc.step_seconds > nv.step_seconds
    # 2 all-reduces per layer: 64 × (30 µs + 2·(1/2)·8 KB ÷ 31.5 GB/s)
    assert pc.comm_seconds == pytest.approx(64 * (30e-6 + 8192 / 31.5e9))


def test_one_gpu_per_replica_beats_tensor_parallel_per_gpu_h6() -> None:
    # H6 / 002 Q3: a 7B that fits one RTX 4090 gives more tokens per GPU as two replicas than split over two
    # PCIe cards (TP 2); and pipeline-splitting it never speeds up a single stream.
    one = decode_step(LLAMA2_7B, P7, RTX4090, bytes_per_weight=2, kv_bytes_per_value=2, context=512)
    tp2 = decode_step(LLAMA2_7B, P7, RTX4090, bytes_per_weight=2, kv_bytes_per_value=2, context=512, tp=2)
    pp2 = decode_step(LLAMA2_7B, P7, RTX4090, bytes_per_weight=2, kv_bytes_per_value=2, context=512, pp=2)
    assert 2 * one.tokens_per_s > tp2.tokens_per_s
    assert pp2.tokens_per_s < one.tokens_per_s


def test_prefill_is_compute_bound() -> None:
    # 2 × 6.61B matmul params × 2048 tokens + attention 32 × 8192 × 2048² ≈ 28.2 TFLOP; A100 at 100%: 90 ms, the
    # GEMMs slowed by their depth (gemm_depth_factor: 1.105 for Llama 2 7B's K of 4,096 and 11,008): 97.5 ms
    pre = prefill(LLAMA2_7B, P7, A100, bytes_per_weight=2, prompt_tokens=2048, factors=IDEAL)
    attention = 32 * 8192 * 2048**2
    flops = 2 * (P7.total - 2 * 32000 * 4096) * 2048 + attention + 2 * 32000 * 4096
    assert pre.flops == pytest.approx(flops)
    assert gemm_depth_factor(LLAMA2_7B) == pytest.approx(1.1053, abs=1e-4)
    assert pre.seconds == pytest.approx(((flops - attention) * gemm_depth_factor(LLAMA2_7B) + attention) / 312e12)
    assert pre.seconds == pytest.approx(0.0975, abs=1e-4)
    assert pre.bound == "compute"


def test_training_6nd_and_000_example() -> None:
    # S8 / 000: "Llama 3 8B, 8× A100, 100B tokens: ~7-10 days". N = the 7.50B matmul parameters (8.03B less the
    # 128,256 × 4,096 input table, a lookup): 6 × 7.50B × 100B = 4.50e21 FLOPs; 8 A100s at their full 312 TFLOPS
    # need 1.80e6 s = 20.9 days, so 000's 7-10 days would take 2.1-3.0× the hardware's peak.
    # At an MFU of 0.35 (Llama 2 on A100 ran at 0.38-0.43) it is 59.6 days.
    assert P8.active == 8_030_261_248 - 128_256 * 4_096 == 7_504_924_672
    tt = training_time(P8.active, 100e9, gpus=8, peak_tflops=312, factors=Factors(training_mfu=0.35))
    assert tt.flops == pytest.approx(6 * 7_504_924_672 * 100e9)
    assert tt.days == pytest.approx(4.50295e21 / (8 * 312e12 * 0.35) / 86400, rel=1e-4)
    assert tt.days == pytest.approx(59.6, abs=0.1)
    at_peak = training_time(P8.active, 100e9, gpus=8, peak_tflops=312, factors=Factors(training_mfu=1.0))
    assert at_peak.days == pytest.approx(20.9, abs=0.1) and at_peak.days > 10
    assert tt.gpu_hours == pytest.approx(tt.wall_hours * 8)


def test_lora_counts_four_flops_per_param_token() -> None:
    full = training_time(7e9, 1e9, gpus=1, peak_tflops=312, method="full")
    lora = training_time(7e9, 1e9, gpus=1, peak_tflops=312, method="lora")
    assert lora.flops / full.flops == pytest.approx(4 / 6)


def test_device_from_catalog() -> None:
    cat = load_catalog(user_dir=None)
    h100 = device_for(cat.accelerators["nvidia-h100-sxm5"], "bf16")
    assert (h100.link_kind, h100.link_gbs_per_direction) == ("nvlink", 450)  # NVLink 4: 900 GB/s both ways
    r4090 = device_for(cat.accelerators["nvidia-rtx-4090"], "bf16")
    assert (r4090.link_kind, r4090.link_gbs_per_direction) == ("pcie", 31.5)  # PCIe 4.0 x16 per direction
    # T4 has no BF16: the FP16 rate is used instead.
    assert peak_tflops(cat.accelerators["nvidia-t4"], "bf16") == (65.0, "fp16")


@settings(max_examples=80, deadline=None)
@given(batch=st.integers(1, 2048), context=st.integers(1, 131072), bits=st.sampled_from([4.0, 4.85, 8.0, 16.0]),
       eff=st.floats(0.05, 1.0), ceff=st.floats(0.05, 1.0), overhead=st.floats(0, 500), tp=st.sampled_from([1, 2, 4]))
def test_decode_never_beats_the_bandwidth_bound(batch: int, context: int, bits: float, eff: float, ceff: float,
                                                overhead: float, tp: int) -> None:
    f = Factors(decode_bandwidth_efficiency=eff, compute_efficiency=ceff, step_overhead_per_layer_us=overhead)
    step = decode_step(LLAMA3_8B, P8, A100, bytes_per_weight=bits / 8, kv_bytes_per_value=2, context=context,
                       batch=batch, tp=tp, factors=f)
    ceiling = batch * A100.bandwidth_gbs * 1e9 / step.bytes_per_gpu
    assert step.tokens_per_s <= ceiling * (1 + 1e-9)
    assert step.bandwidth_bound_tokens_per_s == pytest.approx(ceiling)
    assert step.tokens_per_s_per_sequence == pytest.approx(step.tokens_per_s / batch)


def test_sustained_share_slows_compute_bound_steps_only() -> None:
    # Llama 3 8B at batch 512, context 256 on an A100-like device with ideal factors: the step is compute-bound
    # (test above). FLOPs = 2 × 512 × matmul params + attention; at s = 0.5 the compute time doubles exactly,
    # while the batch-1 step (bandwidth-bound: 16 GB ÷ 2,039 GB/s ≈ 7.9 ms, compute 16 GFLOP ÷ 156 TFLOP/s ≈ 0.1 ms)
    # does not move.
    half = Device(bandwidth_gbs=2039, peak_tflops=312, link_gbs_per_direction=300, link_kind="nvlink", sustained=0.5)
    full = decode_step(LLAMA3_8B, P8, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=256, batch=512,
                       factors=IDEAL)
    slow = decode_step(LLAMA3_8B, P8, half, bytes_per_weight=2, kv_bytes_per_value=2, context=256, batch=512,
                       factors=IDEAL)
    assert slow.compute_seconds == pytest.approx(2 * full.compute_seconds, rel=1e-12)
    assert slow.step_seconds == pytest.approx(slow.compute_seconds, rel=1e-12)
    one_full = decode_step(LLAMA3_8B, P8, A100, bytes_per_weight=2, kv_bytes_per_value=2, context=256, factors=IDEAL)
    one_slow = decode_step(LLAMA3_8B, P8, half, bytes_per_weight=2, kv_bytes_per_value=2, context=256, factors=IDEAL)
    assert one_slow.step_seconds == pytest.approx(one_full.step_seconds, rel=1e-12)
    # prefill (compute-bound) of 2,048 tokens doubles too
    p_full = prefill(LLAMA3_8B, P8, A100, bytes_per_weight=2, prompt_tokens=2048, factors=IDEAL)
    p_slow = prefill(LLAMA3_8B, P8, half, bytes_per_weight=2, prompt_tokens=2048, factors=IDEAL)
    assert p_slow.seconds == pytest.approx(2 * p_full.seconds, rel=1e-9)
    with pytest.raises(ValueError):
        Device(bandwidth_gbs=2039, peak_tflops=312, sustained=0.0)


def test_power_limited_cards_carry_their_sourced_sustained_share() -> None:
    # accelerators.toml, derived by tests/benchmarks/derive_sustained.py from MLPerf per-GPU ratios: H100 PCIe 0.50
    # (v4.1: 1,160 tokens/s per GPU against 2,586-3,027 on H100 SXM), H100 NVL 0.87, L40S 0.69 (v5.1); the SXM
    # module sustains its datasheet rate (no field), and so does H200 NVL at 600 W (1.0: v5.1, 6 pairs, 0.998).
    cat = load_catalog(user_dir=None)
    share = {k: device_for(cat.accelerators[k], "fp8").sustained for k in
             ("nvidia-h100-pcie", "nvidia-h100-nvl", "nvidia-l40s", "nvidia-h100-sxm5", "nvidia-h200-nvl")}
    assert share == {"nvidia-h100-pcie": 0.50, "nvidia-h100-nvl": 0.87, "nvidia-l40s": 0.69,
                     "nvidia-h100-sxm5": 1.0, "nvidia-h200-nvl": 1.0}
    for k in ("nvidia-h100-pcie", "nvidia-h100-nvl", "nvidia-l40s", "nvidia-h200-nvl"):
        m = cat.accelerators[k].sustained_compute_ratio
        assert m is not None and m.derived and m.sources and m.notes


def test_fine_grained_moe_reads_nearly_every_expert_at_modest_batch() -> None:
    # 128 experts, 8 per token (Qwen3-30B-A3B's router): at batch 64 a layer touches
    # 128 × (1 − (1 − 8/128)^64) = 128 × (1 − 0.9375^64) = 128 × (1 − 0.01607) ≈ 125.9 experts, so from a few dozen
    # sequences on the step reads the whole model, not the 3B active share; at batch 1 exactly 8.
    assert expected_distinct_experts(128, 8, 1) == pytest.approx(8)
    assert expected_distinct_experts(128, 8, 64) == pytest.approx(125.94, abs=0.01)
    assert expected_distinct_experts(128, 8, 1024) == pytest.approx(128, abs=1e-9)


def test_blackwell_runs_its_gemms_below_the_datasheet_rate() -> None:
    # accelerators.toml (issue 27, the family hold-out): a B200 FP8 GEMM reaches 2,544.7 of 4,500 TFLOPS = 0.566 of
    # its datasheet (vLLM PR #19566, Llama 3.1 8B N=6144 K=4096, M=16,384), an NVFP4 one 3,904.3 of 9,000 = 0.434
    # (vLLM PR #20578), where a Hopper GEMM of that depth reaches 0.705 (DeepGEMM H800, 1,520 TFLOPS at K=16,384
    # scaled by K/(K+500) to K=4,096: 1,396 of 1,979): s = 0.566/0.705 = 0.80 and 0.434/0.705 = 0.615. The FP8
    # attention of a 4-bit model keeps FP8's share.
    cat = load_catalog(user_dir=None)
    b200 = cat.accelerators["nvidia-b200"]
    assert 2544.7 / 4500 / (1520 * 16884 / 16384 * 4096 / 4596 / 1979) == pytest.approx(0.80, abs=0.005)
    assert 3904.3 / 9000 / (1520 * 16884 / 16384 * 4096 / 4596 / 1979) == pytest.approx(0.615, abs=0.0005)
    fp4 = device_for(b200, "fp4")
    assert (fp4.peak_tflops, fp4.sustained, fp4.attention_tflops, fp4.attention_sustained) == (9000, 0.615, 4500, 0.80)
    f = Factors(compute_efficiency=0.5)
    assert fp4.flops_per_second(f) == pytest.approx(9000e12 * 0.5 * 0.615)
    assert fp4.attention_flops_per_second(f) == pytest.approx(4500e12 * 0.5 * 0.80)
    assert device_for(b200, "fp8").sustained == 0.80 and device_for(b200, "fp8").attention_sustained is None
    for part in ("nvidia-gb200-per-gpu", "nvidia-b300", "nvidia-gb300-per-gpu"):  # carried over, marked approximate
        acc = cat.accelerators[part]
        assert acc.sustained_share("fp4") == 0.615 and acc.sustained_share("fp8") == 0.80
        assert acc.sustained_compute_ratio_by_precision["fp4"].approximate
    with pytest.raises(ValueError):
        Device(bandwidth_gbs=8000, peak_tflops=9000, attention_tflops=4500, attention_sustained=1.5)


def test_moe_layer_overhead_is_paid_per_moe_layer_per_pass() -> None:
    # EngineEfficiency.overhead_per_moe_layer_us (SGLang's ROCm MoE profile): a fixed cost per MoE layer, on top of
    # the per-layer one, in the decode step and the prefill. Mixtral: 32 layers, all MoE, each running 5 weight GEMMs
    # to a Llama layer's 4 (rules/sizing/kernels.py), so 40 reference layers; at 30 µs a reference layer and 100 µs
    # an MoE layer the fixed part of a step is 40 × 30 + 32 × 100 = 4,400 µs; a dense model pays none of the MoE part.
    from gpuadvisor.rules.sizing.speed import DecodeCurve, EngineEfficiency

    pm = count_parameters(MIXTRAL)
    plain = EngineEfficiency("sglang", 0.8, 0.8, 30.0)
    moe = EngineEfficiency("sglang", 0.8, 0.8, 30.0, overhead_per_moe_layer_us=100.0)
    dev = Device(bandwidth_gbs=5300, peak_tflops=1307, link_gbs_per_direction=64, link_kind="other")
    curves = [DecodeCurve(MIXTRAL, pm, Device(**{**dev.__dict__, "efficiency": e}), bytes_per_weight=1,
                          kv_bytes_per_value=1, context=1024) for e in (plain, moe)]
    assert curves[0].parts(8).per_layer == pytest.approx(40 * 30e-6)
    assert curves[1].parts(8).per_layer == pytest.approx(40 * 30e-6 + 32 * 100e-6)
    assert curves[1].seconds(8) - curves[0].seconds(8) == pytest.approx(3.2e-3)
    pre = [prefill(MIXTRAL, pm, Device(**{**dev.__dict__, "efficiency": e}), bytes_per_weight=1, prompt_tokens=512)
           for e in (plain, moe)]
    assert pre[1].seconds - pre[0].seconds == pytest.approx(3.2e-3)
    dense = [decode_step(LLAMA3_8B, P8, Device(**{**dev.__dict__, "efficiency": e}), bytes_per_weight=1,
                         kv_bytes_per_value=1, context=1024) for e in (plain, moe)]
    assert dense[0].step_seconds == dense[1].step_seconds
    with pytest.raises(ValueError):
        EngineEfficiency("sglang", 0.8, 0.8, 30.0, overhead_per_moe_layer_us=-1.0)


def test_per_sequence_layer_cost_grows_with_the_depth() -> None:
    # EngineEfficiency.overhead_per_sequence_layer_us (TensorRT-LLM's PyTorch backend): the decode attention's fixed
    # work per sequence is paid in every layer. Llama 3 8B (32 layers) at batch 100 with 10 µs per sequence (host)
    # and 0.5 µs per sequence per layer: 100 × (10 + 32 × 0.5) = 2,600 µs beside the 32 × 30 = 960 µs per-layer
    # cost; a profile without the layer term pays 100 × 10 = 1,000 µs. The per-layer share stays per pass.
    from gpuadvisor.rules.sizing.speed import DecodeCurve, EngineEfficiency

    host = EngineEfficiency("tensorrt-llm", 0.8, 0.8, 30.0, overhead_per_sequence_us=10.0)
    both = EngineEfficiency("tensorrt-llm", 0.8, 0.8, 30.0, overhead_per_sequence_us=10.0,
                            overhead_per_sequence_layer_us=0.5)
    dev = Device(bandwidth_gbs=3350, peak_tflops=989, link_gbs_per_direction=450, link_kind="nvlink")
    curves = [DecodeCurve(LLAMA3_8B, P8, Device(**{**dev.__dict__, "efficiency": e}), bytes_per_weight=2,
                          kv_bytes_per_value=2, context=1024) for e in (host, both)]
    assert curves[0].parts(100).overhead == pytest.approx(960e-6 + 1000e-6)
    assert curves[1].parts(100).overhead == pytest.approx(960e-6 + 2600e-6)
    assert curves[1].parts(100).per_layer == pytest.approx(960e-6)
    assert curves[1].seconds(100) - curves[0].seconds(100) == pytest.approx(1600e-6)
    # the whole step by hand: the 16-bit weights a step reads and 100 caches of 1,024 tokens × 128 KiB (32 layers
    # × 8 KV heads × 128 × 2 values × 2 bytes) at 80 % of 3,350 GB/s, plus both overheads; compute-light at 100
    w = weight_bytes_per_step(P8, LLAMA3_8B, 100, 2)
    kv = 100 * 1024 * 32 * 8 * 128 * 2 * 2
    t_mem = (w + kv) / (3350e9 * 0.8)
    step = curves[1].step(100, with_notes=False)
    assert step.bound == "bandwidth"
    assert step.step_seconds == pytest.approx(t_mem + 960e-6 + 2600e-6, rel=1e-3)
    # a deeper model pays more per sequence: 80 layers at the same figures, 100 × (10 + 80 × 0.5) = 5,000 µs
    llama3_70b = Architecture(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                              num_attention_heads=64, num_key_value_heads=8)
    deep = DecodeCurve(llama3_70b, count_parameters(llama3_70b), Device(**{**dev.__dict__, "efficiency": both}),
                       bytes_per_weight=1, kv_bytes_per_value=1, context=1024, tp=4)
    assert deep.parts(100).overhead - deep.parts(100).per_layer == pytest.approx(5000e-6)
    with pytest.raises(ValueError):
        EngineEfficiency("tensorrt-llm", 0.8, 0.8, 30.0, overhead_per_sequence_layer_us=-0.1)
