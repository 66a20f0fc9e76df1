"""MoE at scale (issue 17): grouped expert-GEMM efficiency, the expert-parallel all-to-all, and per-GPU memory and
step under expert parallelism, each pinned to a hand calculation."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.estimate.consult import EstimateRequest, InputError, estimate
from gpuadvisor.rules.planning.search import InferenceSearch, Plan, ServingTargets
from gpuadvisor.rules.planning.serving import engine_efficiency, engine_memory
from gpuadvisor.rules.planning.topology import Link
from gpuadvisor.rules.planning.units import unit_table
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors
from gpuadvisor.rules.sizing.memory import Parallelism, inference_memory, routed_expert_bytes, weight_bytes
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import (
    DecodeCurve,
    Device,
    alltoall_seconds,
    decode_step,
    expert_gemm_efficiency,
    expert_half_tokens,
    gemm_depth_factor,
    prefill,
    ridge_rows,
    tokens_per_expert,
)
from gpuadvisor.rules.sizing.units import GB, TFLOPS

CATALOG = load_catalog(user_dir=None)
DEEPSEEK = CATALOG.models["deepseek-v3"].architecture
MIXTRAL = CATALOG.models["mixtral-8x7b"].architecture
NVLINK = Device(8000.0, 9000.0, link_gbs_per_direction=900.0, link_kind="nvlink")


def test_moe_gemm_half_ridge_is_the_catalog_assumption() -> None:
    assert CATALOG.assumptions["moe_gemm_half_ridge"].value == DEFAULT_FACTORS.moe_gemm_half_ridge == 0.71


def test_the_half_rate_rows_scale_with_the_ridge_point() -> None:
    # H800 at FP8 (H100 SXM5 rates) with the engine-blind rates: ridge 1,979e12 × 0.5 × 1 ÷ (2 × 3,350e9 × 0.75)
    # = 196.915 rows; m½ = 0.71 × 196.915 = 139.8, the 140 DeepGEMM's grouped GEMMs imply
    h800 = Device(3350.0, 1979.0)
    assert ridge_rows(h800, 1.0, DEFAULT_FACTORS) == pytest.approx(196.915, abs=1e-3)
    assert expert_half_tokens(h800, 1.0, DEFAULT_FACTORS) == pytest.approx(0.71 * 196.915, abs=1e-3)
    # RTX 3090 at FP16 (71 TFLOPS, 936 GB/s, 2 bytes): ridge 71e12 × 0.5 × 2 ÷ (2 × 936e9 × 0.75) = 50.57 rows,
    # m½ = 35.9
    rtx3090 = Device(936.0, 71.0)
    assert expert_half_tokens(rtx3090, 2.0, DEFAULT_FACTORS) == pytest.approx(0.71 * 50.570, abs=1e-3)
    # so Mixtral's batch-1 decode there stays bound by the weight read: per routed parameter the compute charged is
    # 2 × (1 + 35.9) ÷ (71e12 × 0.5) × 1.096 (its GEMMs' depth, K = 4,096 and 14,336: gemm_depth_factor) =
    # 2.28e-12 s, the read 2 ÷ (936e9 × 0.75) = 2.85e-12 s (ratio 0.80 < 1; the whole step, attention and dense
    # weights included, 0.71)
    params = count_parameters(MIXTRAL)
    curve = DecodeCurve(MIXTRAL, params, rtx3090, bytes_per_weight=2.0, kv_bytes_per_value=2.0, context=1000)
    step = curve.parts(1)
    assert step.memory > step.compute
    assert gemm_depth_factor(MIXTRAL) == pytest.approx(1.096, abs=1e-3)
    assert step.compute / step.memory == pytest.approx(0.707, abs=0.005)
    assert ridge_rows(Device(936.0, None), 2.0, DEFAULT_FACTORS) == 0.0  # no published peak: no compute term


def test_expert_gemm_efficiency_at_two_batches() -> None:
    # DeepSeek (256 experts, 8 per token) at batch 4,096: the tokens reach every expert, 4,096 × 8 / 256 = 128 rows
    # each (expected distinct experts 256 × (1 − (1 − 8/256)^4096) = 256 to 1e-50); ε = 128 / (128 + 140)
    m = tokens_per_expert(DEEPSEEK, 4096)
    assert m == pytest.approx(128.0)
    assert expert_gemm_efficiency(m, 140.0) == pytest.approx(128.0 / 268.0)  # 0.478
    # batch 64: distinct = 256 × (1 − (31/32)^64) = 222.44, rows = 512 / 222.44 = 2.302; ε = 2.302 / 142.302
    distinct = 256 * (1 - (1 - 8 / 256) ** 64)
    assert tokens_per_expert(DEEPSEEK, 64) == pytest.approx(512 / distinct)
    assert expert_gemm_efficiency(512 / distinct, 140.0) == pytest.approx(0.016175, abs=1e-6)
    # Mixtral (8 experts, 2 per token) at batch 1,024: 256 rows each, ε = 256 / 396 (DeepGEMM at 256 rows: 0.67-0.69)
    assert expert_gemm_efficiency(tokens_per_expert(MIXTRAL, 1024), 140.0) == pytest.approx(256 / 396)
    with pytest.raises(ValueError):
        expert_gemm_efficiency(0.0, 140.0)


def test_compute_bound_moe_step_charges_the_grouped_gemm_rate() -> None:
    params = count_parameters(DEEPSEEK)
    big = DecodeCurve(DEEPSEEK, params, NVLINK, bytes_per_weight=0.5, kv_bytes_per_value=1.0, context=1000)
    flat = DecodeCurve(DEEPSEEK, params, NVLINK, bytes_per_weight=0.5, kv_bytes_per_value=1.0, context=1000,
                       factors=Factors(moe_gemm_half_ridge=0.0))
    batch = 4096
    routed = params.moe_layers * 8 * params.expert  # 58 × 8 × 3 × 7168 × 2048
    assert routed == 58 * 8 * 3 * 7168 * 2048
    # m½ = 0.71 × the ridge 9,000e12 × 0.5 × 0.5 ÷ (2 × 8,000e9 × 0.75) = 0.71 × 187.5 = 133.1 rows; 128 rows
    half = 0.71 * 187.5
    extra = 2.0 * routed * batch * ((128.0 + half) / 128.0 - 1.0)  # (1/ε − 1) more routed FLOPs
    rate = 9000.0 * TFLOPS * DEFAULT_FACTORS.compute_efficiency / gemm_depth_factor(DEEPSEEK)  # GEMMs at their depth
    assert big.parts(batch).compute - flat.parts(batch).compute == pytest.approx(extra / rate, rel=1e-6)
    # a dense model is untouched
    llama = CATALOG.models["llama-3.1-8b"].architecture
    lp = count_parameters(llama)
    a = DecodeCurve(llama, lp, NVLINK, bytes_per_weight=2.0, kv_bytes_per_value=2.0, context=100)
    b = DecodeCurve(llama, lp, NVLINK, bytes_per_weight=2.0, kv_bytes_per_value=2.0, context=100,
                    factors=Factors(moe_gemm_half_ridge=0.0))
    assert a.parts(512) == b.parts(512)


def test_alltoall_seconds_by_hand() -> None:
    # hidden 7168, k 8, ep 8, 4,096 tokens on NVLink at 900 GB/s per direction, 8 µs latency:
    # each GPU holds 512 tokens, sends each to 7 × (1 − (7/8)^8) = 4.5939 remote ranks × 7168 × 2 B
    remote = 7 * (1 - (7 / 8) ** 8)
    sent = 512 * remote * 7168 * 2.0
    assert sent == pytest.approx(33.72e6, rel=1e-3)
    expected = 2 * (8e-6 + sent / (900.0 * GB))  # dispatch + combine: 2 × (8 µs + 37.5 µs) = 90.9 µs
    assert alltoall_seconds(4096, DEEPSEEK, 8, NVLINK, DEFAULT_FACTORS) == pytest.approx(expected)
    assert expected == pytest.approx(90.9e-6, rel=1e-3)
    assert alltoall_seconds(4096, DEEPSEEK, 1, NVLINK, DEFAULT_FACTORS) == 0.0


def test_expert_parallel_step_splits_experts_and_adds_the_alltoall() -> None:
    params = count_parameters(DEEPSEEK)
    kw = {"bytes_per_weight": 0.5, "kv_bytes_per_value": 1.0, "context": 2000}
    step = decode_step(DEEPSEEK, params, NVLINK, **kw, batch=4096, tp=1, ep=8)
    # every expert is touched at batch 4,096: per GPU the non-expert weights read in full (attention replicated),
    # 1/8 of the routed experts, 1/8 of the batch's KV cache
    routed = routed_expert_bytes(params, DEEPSEEK, 0.5)
    single = decode_step(DEEPSEEK, params, NVLINK, **kw, batch=4096)
    total_weights = single.bytes_per_gpu - 4096 * 2000 * 61 * 576 * 1.0
    expected = (total_weights - routed) + routed / 8 + 4096 * 2000 * 61 * 576 / 8
    assert step.bytes_per_gpu == pytest.approx(expected, rel=1e-9)
    assert step.flops_per_gpu == pytest.approx(single.flops_per_gpu / 8)
    # comm: no all-reduce (tp 1), one all-to-all per MoE layer (58 of 61)
    assert step.comm_seconds == pytest.approx(58 * alltoall_seconds(4096, DEEPSEEK, 8, NVLINK, DEFAULT_FACTORS))
    # prefill charges the same all-to-all per MoE layer on the prompt's tokens
    p8 = prefill(DEEPSEEK, params, NVLINK, bytes_per_weight=0.5, prompt_tokens=1000, ep=8)
    p1 = prefill(DEEPSEEK, params, NVLINK, bytes_per_weight=0.5, prompt_tokens=1000)
    assert p8.seconds < p1.seconds
    with pytest.raises(ValueError):
        decode_step(DEEPSEEK, params, NVLINK, **kw, batch=8, tp=8, ep=4)
    with pytest.raises(ValueError):
        decode_step(CATALOG.models["llama-3.1-8b"].architecture,
                    count_parameters(CATALOG.models["llama-3.1-8b"].architecture), NVLINK, **kw, batch=8, ep=2)


def test_per_gpu_memory_with_expert_parallelism() -> None:
    params = count_parameters(DEEPSEEK)
    # routed experts: 58 MoE layers × 256 experts × 3 × 7168 × 2048 parameters at 0.5625 B (NVFP4)
    routed = routed_expert_bytes(params, DEEPSEEK, 0.5625)
    assert routed == pytest.approx(58 * 256 * 3 * 7168 * 2048 * 0.5625)
    rest = weight_bytes(params, 0.5625) - routed
    m = inference_memory(DEEPSEEK, params, weight_bytes_per_param=0.5625, kv_bytes_per_value=1.0, context=2000,
                         batch=512, par=Parallelism(tp=1, ep=8))
    # each GPU: 1/8 of the experts + every other weight (attention replicated in 8 data-parallel groups)
    assert m.weights == pytest.approx(routed / 8 + rest)
    # 653.9B routed × 0.5625 B / 8 = 45.98 GB + the other 17.12B × 0.5625 B = 9.63 GB: 55.6 GB (671B under TP 8: 47.2)
    assert m.weights / GB == pytest.approx(55.6, abs=0.05)
    # KV: the MLA latent (61 layers × 576 × 1 B) of this GPU's 512 / 8 sequences only
    assert m.kv_cache == pytest.approx(61 * 576 * 2000 * 512 / 8)
    # TP 8 instead: weights split 8 ways, but the MLA latent is replicated on every rank
    t = inference_memory(DEEPSEEK, params, weight_bytes_per_param=0.5625, kv_bytes_per_value=1.0, context=2000,
                         batch=512, par=Parallelism(tp=8))
    assert t.weights == pytest.approx((routed + rest) / 8)
    assert t.kv_cache == pytest.approx(61 * 576 * 2000 * 512)
    # TP 2 attention groups inside EP 8: the rest split 2 ways, the KV cache over 8
    h = inference_memory(DEEPSEEK, params, weight_bytes_per_param=0.5625, kv_bytes_per_value=1.0, context=2000,
                         batch=512, par=Parallelism(tp=2, ep=8))
    assert h.weights == pytest.approx(routed / 8 + rest / 2)
    assert Parallelism(tp=2, ep=8, dp=3).gpus == 24
    with pytest.raises(ValueError):
        Parallelism(tp=8, ep=4)


def test_estimate_accepts_and_reports_ep() -> None:
    req = EstimateRequest(model="deepseek-r1", gpu="nvidia-b200", precision="nvfp4", kv_precision="fp8", ep=8,
                          batch=512, context=2000)
    r = estimate(req, CATALOG)
    assert (r.setup.gpus, r.setup.tensor_parallel, r.setup.expert_parallel, r.setup.data_parallel) == (8, 1, 8, 1)
    dumped = r.model_dump()
    assert dumped["setup"]["expert_parallel"] == 8
    with pytest.raises(InputError):
        estimate(EstimateRequest(model="llama-3.1-8b", gpu="nvidia-b200", ep=2), CATALOG)


# --- the planner chooses expert parallelism where it holds more ----------------------------------------------------

def _deepseek_search() -> InferenceSearch:
    factors = Factors.from_values({a.id: a.value for a in CATALOG.assumptions.values()})
    t = ServingTargets(concurrency=1, tokens_per_s=20_000, input_tokens=2000, output_tokens=500, context=8192,
                       min_tokens_per_s_per_user=20, ttft_max_s=3, latency_p95_s=None, max_gpus=None, failover=True,
                       requests_per_s=40)
    return InferenceSearch(DEEPSEEK, count_parameters(DEEPSEEK), CATALOG.precisions["fp8"],
                           CATALOG.precisions["fp8"], t, factors,
                           lambda a: engine_efficiency(CATALOG, a, "auto"), lambda a: engine_memory(CATALOG, a, "auto"))


def test_expert_parallelism_is_weighed_only_inside_a_fast_domain() -> None:
    search = _deepseek_search()
    assert search.expert_splits(8, Link("scale-up", "nvlink", 450.0)) == (1, 8)
    assert search.expert_splits(8, Link("pcie", "pcie", 32.0)) == (1,)  # the all-to-all needs the scale-up link
    assert search.expert_splits(1, Link("scale-up", "nvlink", 450.0)) == (1,)
    dense = InferenceSearch(CATALOG.models["llama-3.1-70b"].architecture,
                            count_parameters(CATALOG.models["llama-3.1-70b"].architecture), CATALOG.precisions["fp8"],
                            CATALOG.precisions["fp8"], search.t, search.factors)
    assert dense.expert_splits(8, Link("scale-up", "nvlink", 450.0)) == (1,)


def test_deepseek_on_eight_h200_splits_its_experts_and_holds_five_times_the_sequences() -> None:
    # DeepSeek-V3 in FP8 (1 byte a weight): 58 MoE layers × 256 experts × 3 × 7,168 × 2,048 = 653,908,770,816
    # routed parameters of 671,026,419,200, so 17,117,648,384 others; of these, the untied embedding and LM head,
    # 2 × 129,280 × 7,168 = 1,853,358,080, stay in BF16 as the FP8 checkpoint stores them (2 bytes: 1,853,358,080
    # bytes more). TP 8 holds (671.0e9 + 1.85e9) ÷ 8 = 84.11 GB a GPU; EP 8 holds 653.9e9 ÷ 8 + 17.1e9 + 1.85e9 =
    # 100.71 GB (the others replicated). But the MLA latent, (512 + 64) × 61 layers × 1 B = 35,136 B a token, is
    # whole on every GPU under TP 8, while EP 8 keeps each sequence on one GPU: at 64 requests of 2,000 + 500 tokens,
    # 5.62 GB a GPU against 0.70 GB.
    search = _deepseek_search()
    acc = CATALOG.accelerators["nvidia-h200-sxm"]
    overrides = engine_memory(CATALOG, acc, "auto")
    ep, tp = search.memory(8, 1, True, overrides, 8), search.memory(8, 1, True, overrides, 1)
    assert ep.breakdown(1, False).weights == 653_908_770_816 / 8 + 17_117_648_384 + 1_853_358_080
    assert tp.breakdown(1, False).weights == (671_026_419_200 + 1_853_358_080) / 8
    assert tp.breakdown(64, False).kv_cache == 35_136 * 2500 * 64
    assert ep.breakdown(64, False).kv_cache == 35_136 * 2500 * 8
    plan = search.plan(acc, unit_table(CATALOG).units["inst:aws-p5en.48xlarge"])
    assert isinstance(plan, Plan) and (plan.tensor_parallel, plan.expert_parallel) == (8, 8)
    # on 80 GB H100s the 98.86 GB of EP 8 weights fit only over two pipeline stages. The matrices split 8 ways
    # instead (TP 8) leave each expert's down projection 2,048 ÷ 8 = 256 deep, a GEMM at 256 ÷ 756 of its rate
    # (gemm_depth_factor 1.56 at TP 8 against 1.23 with the experts whole under EP 8); but at the ~64 requests a
    # replica that keep 20 tokens/s a user, an EP 8 layer waits for its busiest rank, which reads 1.10 times the
    # mean rank's distinct experts and computes 1.17 times its token pairs (uniform routing, speed.ep_*_straggler):
    # 16 EP 8 replicas (256 GPUs) no longer meet the target, 19 TP 8 × PP 2 replicas (304 GPUs) do
    h100 = search.plan(CATALOG.accelerators["nvidia-h100-sxm5"], unit_table(CATALOG).units["inst:aws-p5.48xlarge"])
    assert isinstance(h100, Plan) and (h100.expert_parallel, h100.pipeline_parallel) == (1, 2)
    assert (h100.tensor_parallel, h100.replicas, h100.count) == (8, 19, 304)
    assert gemm_depth_factor(DEEPSEEK, tp=8) == pytest.approx(1.561, abs=1e-3)
    assert gemm_depth_factor(DEEPSEEK, tp=8, ep=8) == pytest.approx(1.226, abs=1e-3)
