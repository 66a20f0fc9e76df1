"""Roofline speed estimates: decode, prefill and training time (S6, S7, S8, H3, H4, H6, W3).

The roofline: a step takes at least its bytes moved ÷ memory bandwidth and at least its FLOPs ÷ peak FLOPS; the
ridge point (dense peak ÷ bandwidth, FLOP/byte) separates the two regimes. A decode step at batch B reads every
weight once (an MoE only the experts its tokens touch) and each sequence's KV cache, and does 2 FLOPs per active
weight per token, so its arithmetic intensity is ≈ B FLOP/byte at 16-bit: batch-1 decode is bandwidth-bound
(002: ≈1 FLOP/byte vs the A100's ≈156) and serving turns compute-bound only at large batches (H4).

    decode step = max(bytes ÷ (bandwidth × η_bw) + kernels × ramp, FLOPs ÷ (peak × η_c × s))
                  + layers × per-layer overhead + B ÷ groups × (per-sequence + layers × per-sequence-layer) + TP comm
                  (s: the share of the datasheet peak a power-limited card sustains, `Device.sustained`; ramp: the
                  fixed time of each weight GEMM kernel bound by its read, `weight_gemm_kernels`, set on the engine
                  profiles fitted on compute-bound rows only; groups: attention data-parallel groups; the per-sequence
                  costs are the host's work and the decode attention's fixed work per sequence in every layer)
    TP comm     = 2 all-reduces per layer of B × hidden × 2 bytes: latency + 2(tp−1)/tp × bytes ÷ link bandwidth
                  (per direction: NVLink 4 = 450 GB/s, PCIe 4.0 x16 ≈ 31.5 GB/s)
    prefill     = 2 × active params × prompt tokens + causal attention 2·L·a·d·s² per sequence, compute-bound
    training    = one optimizer step part by part (rules/sizing/training.py)

Tensor parallelism divides bytes and FLOPs by tp. Pipeline stages run one after another for a given token, so
pipeline parallelism adds no speed to a single stream (it only lets the model fit).

MoE at scale (issue 17). Routed experts run as grouped GEMMs of m = tokens × k ÷ distinct experts rows each; few rows
per expert run below the dense rate, so their FLOPs take 1 ÷ ε(m) longer, ε(m) = m ÷ (m + m½)
(`expert_gemm_efficiency`, m½ = `moe_gemm_half_ridge` × the part's ridge point). Expert parallelism over ep GPUs
of one scale-up domain (ep a multiple of tp: ep ÷ tp attention groups of tp GPUs, each serving its share of the
batch, the experts split E ÷ ep per GPU, what vLLM / SGLang / TensorRT-LLM run for DeepSeek):

    bytes per GPU = non-expert weights ÷ tp + routed experts touched ÷ ep + KV cache ÷ ep
    FLOPs per GPU = FLOPs ÷ ep
    comm          = (layers + dense layers) all-reduces of the group's tokens (tp > 1)
                    + MoE layers × all-to-all (dispatch + combine, `alltoall_seconds`)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors, Note
from gpuadvisor.rules.sizing.kvcache import (
    attended_tokens,
    causal_attention_pairs,
    kv_bytes_per_sequence,
    read_replication,
)
from gpuadvisor.rules.sizing.memory import ExpertFormat, embedding_params
from gpuadvisor.rules.sizing.params import ParameterCount
from gpuadvisor.rules.sizing.units import GB, TFLOPS

Bound = Literal["bandwidth", "compute"]
LinkKind = Literal["nvlink", "pcie", "other"]

PCIE_GBS_PER_DIRECTION = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}
"""x16 per direction with 128b/130b encoding (reference README: Gen4 ≈ 31.5 GB/s)."""


@dataclass(frozen=True)
class EngineEfficiency:
    """What one serving engine achieves on one accelerator (engines.toml, calibrated per engine × family).

    Replaces the engine-blind `Factors.decode_bandwidth_efficiency` / `step_overhead_per_layer_us` (and, when set,
    `compute_efficiency`) for the device it is attached to: llama.cpp on an A100 reaches a far smaller fraction of
    the bandwidth than TensorRT-LLM, and Metal attention reads the KV cache far below the weights' rate."""

    engine: str
    bandwidth_efficiency: float
    """Fraction of peak bandwidth achieved reading the weights."""
    kv_efficiency: float
    """Fraction of peak bandwidth achieved reading the KV cache (attention kernels)."""
    overhead_per_layer_us: float
    compute_efficiency: float | None = None
    profile: str | None = None
    """engines.toml id the figures came from (`engine@family`), for the notes."""
    overhead_per_sequence_us: float = 0.0
    """Cost per sequence of the batch per decode step (µs): the host's scheduling, sampling and detokenising of
    each sequence, which grows with the batch but not with the layers; what makes large batches slower than their
    bytes and FLOPs, and what separates TensorRT-LLM's PyTorch backend from its C++ executor (engines.toml)."""
    gemm_ramp_us: float = 0.0
    """Fixed time of each weight GEMM kernel of a weight-bound step beyond its bytes at the streaming rate (µs;
    `weight_gemm_kernels`); 0 where the profile's fitted per-layer overhead already holds it (engines.toml)."""
    overhead_per_sequence_layer_us: float = 0.0
    """Cost per sequence of the batch per layer per decode step (µs), beyond `overhead_per_sequence_us`: the decode
    attention of every layer launches work per sequence (TensorRT-LLM's XQA / FMHA decode blocks, the KV block-table
    walk, each token's RoPE, KV append and quantise), whose fixed part is paid again by every layer, so a deeper model
    pays more per sequence, however its KV heads are split over the tensor-parallel ranks. Fitted on TensorRT-LLM's
    PyTorch backend, whose rows span 32-126 layers on one release (fit_engines.SEQUENCE_LAYER_ENGINES); 0 elsewhere.
    Like the host's share, paid by each attention data-parallel group for its own sequences."""
    overhead_per_moe_layer_us: float = 0.0
    """Cost per MoE layer per pass (µs) beyond `overhead_per_layer_us`: the routing, token sorting and quantising
    kernels a fused-MoE path launches around its grouped GEMMs (and an MLA model's extra attention kernels), which
    the dense rows a profile is fitted on do not run. 0 where the profile's per-layer figure already carries it;
    SGLang on ROCm (engines.toml): fitted to InferenceX's MI325X DeepSeek-R1 runs at 4-16 requests."""
    release: str | None = None
    """The engine release(s) the profile's figures describe (engines.toml `release`), for the notes: engines
    change fast, and a figure says which software it assumed."""

    def __post_init__(self) -> None:
        if min(self.bandwidth_efficiency, self.kv_efficiency) <= 0 or min(
                self.overhead_per_layer_us, self.overhead_per_sequence_us, self.gemm_ramp_us,
                self.overhead_per_moe_layer_us, self.overhead_per_sequence_layer_us) < 0:
            raise ValueError("engine efficiencies must be positive")


@dataclass(frozen=True)
class Device:
    """The accelerator figures the speed math needs."""

    bandwidth_gbs: float
    peak_tflops: float | None
    """Dense tensor throughput at the compute precision; None when unpublished (then only bandwidth bounds)."""
    link_gbs_per_direction: float | None = None
    link_kind: LinkKind = "pcie"
    efficiency: EngineEfficiency | None = None
    """The serving engine's calibrated efficiencies on this accelerator; None = the engine-blind `Factors`."""
    sustained: float = 1.0
    """Share of `peak_tflops` the part sustains under a full serving load (`Accelerator.sustained_compute_ratio`:
    power-limited PCIe/NVL cards run their tensor cores below the datasheet clock); 1 = the datasheet rate."""
    attention_tflops: float | None = None
    """Dense peak the attention kernels' math runs at when it differs from `peak_tflops`: 4-bit weights still attend
    in FP8 (FlashMLA, TensorRT-LLM's FP8 FMHA and the FP8 KV cache they read); None = `peak_tflops`."""
    attention_sustained: float | None = None
    """Share of `attention_tflops` the part sustains when it is another precision's peak: the FP8 attention of a
    4-bit model runs at FP8's sustained share, not FP4's (a GB300 reaches a smaller share of its FP4 peak than of its
    FP8 one, accelerators.toml); None = `sustained`."""

    def __post_init__(self) -> None:
        if self.bandwidth_gbs <= 0:
            raise ValueError("bandwidth must be positive")
        if self.peak_tflops is not None and self.peak_tflops <= 0:
            raise ValueError("peak TFLOPS must be positive")
        if self.attention_tflops is not None and self.attention_tflops <= 0:
            raise ValueError("attention TFLOPS must be positive")
        if not 0 < self.sustained <= 1 or not 0 < (self.attention_sustained or 1.0) <= 1:
            raise ValueError("the sustained share of the peak must be in (0, 1]")

    def flops_per_second(self, factors: Factors) -> float | None:
        """FLOP/s the engine's matmuls reach: peak × compute efficiency × the sustained share (None without a
        published peak)."""
        if not self.peak_tflops:
            return None
        return self.peak_tflops * TFLOPS * self.compute_efficiency(factors) * self.sustained

    def attention_flops_per_second(self, factors: Factors) -> float | None:
        """FLOP/s the attention kernels reach: `attention_tflops` (else the peak) × compute efficiency × its
        sustained share (`attention_sustained`, else `sustained`; None without a published peak)."""
        if not self.peak_tflops:
            return None
        if self.attention_tflops:
            share = self.attention_sustained if self.attention_sustained is not None else self.sustained
            return self.attention_tflops * TFLOPS * self.compute_efficiency(factors) * share
        return self.peak_tflops * TFLOPS * self.compute_efficiency(factors) * self.sustained

    def weight_efficiency(self, factors: Factors) -> float:
        return self.efficiency.bandwidth_efficiency if self.efficiency else factors.decode_bandwidth_efficiency

    def kv_efficiency(self, factors: Factors) -> float:
        return self.efficiency.kv_efficiency if self.efficiency else factors.decode_bandwidth_efficiency

    def overhead_per_layer_us(self, factors: Factors) -> float:
        return self.efficiency.overhead_per_layer_us if self.efficiency else factors.step_overhead_per_layer_us

    def compute_efficiency(self, factors: Factors) -> float:
        found = self.efficiency.compute_efficiency if self.efficiency else None
        return found if found is not None else factors.compute_efficiency

    def overhead_seconds(self, layers: int, moe_layers: int, factors: Factors) -> float:
        """Per-pass fixed cost of `layers` layers of which `moe_layers` are MoE layers (s)."""
        moe = self.efficiency.overhead_per_moe_layer_us if self.efficiency else 0.0
        return (layers * self.overhead_per_layer_us(factors) + moe_layers * moe) * 1e-6


def ridge_point(peak_tflops: float, bandwidth_gbs: float) -> float:
    """FLOP per byte above which a kernel is compute-bound on this device."""
    return peak_tflops * TFLOPS / (bandwidth_gbs * GB)


def expected_distinct_experts(num_experts: int, experts_per_token: int, batch: int) -> float:
    """Experts one MoE layer reads in a step where `batch` tokens each pick `experts_per_token` of `num_experts`,
    routing assumed uniform and independent: E × (1 − (1 − k/E)^B). Batch 1 touches exactly k."""
    return num_experts * (1.0 - (1.0 - experts_per_token / num_experts) ** batch)


def weight_bytes_per_step(params: ParameterCount, arch: Architecture, batch: int, bytes_per_weight: float,
                          embedding_bytes: float | None = None, experts: ExpertFormat | None = None) -> float:
    """Weight bytes one decode step reads: everything but the input embedding table (a row lookup); the LM head
    (or the tied table used as one); for MoE only the experts the batch's tokens touch, their matrices at
    `experts.bytes_per_weight` when the routed experts have a format of their own (gpt-oss: MXFP4)."""
    emb_b = bytes_per_weight if embedding_bytes is None else embedding_bytes
    linear = float(params.total - embedding_params(params))
    lm_head = params.lm_head if params.lm_head else params.embedding
    moe = arch.moe
    own = 0.0
    if moe is not None:
        all_experts = params.moe_layers * moe.num_experts * params.expert
        distinct = expected_distinct_experts(moe.num_experts, moe.experts_per_token, batch)
        touched = params.moe_layers * distinct * params.expert
        linear = linear - all_experts + touched
        if experts is not None:
            matrices = experts.params * distinct / moe.num_experts
            linear -= matrices
            own = matrices * experts.bytes_per_weight
    return linear * bytes_per_weight + lm_head * emb_b + own


def expert_gemm_efficiency(tokens_per_expert: float, half_tokens: float) -> float:
    """Rate of a grouped expert GEMM with `tokens_per_expert` rows per expert relative to its large-batch rate:
    ε = m ÷ (m + m½). Few rows per expert leave the M tiles part-empty and the weight loads unamortised, so the rate
    falls as the batch spreads over many experts: DeepGEMM's grouped FP8 GEMMs on H800 at DeepSeek-V3's expert shapes
    run 0.67-0.69 of the 4,096-8,192-row rate at 256 rows, 0.75-0.77 at 512, 0.76-0.92 at 1,024 (m½ = 140 there;
    `expert_half_tokens` scales it to other parts)."""
    if tokens_per_expert <= 0 or half_tokens < 0:
        raise ValueError("tokens per expert must be positive and the half-rate tokens non-negative")
    return tokens_per_expert / (tokens_per_expert + half_tokens)


def ridge_rows(device: Device, bytes_per_weight: float, factors: Factors) -> float:
    """Rows per weight matrix at which a GEMM turns from weight-bound to compute-bound at the rates the step model
    uses: matmul FLOP/s (peak × compute efficiency × sustained share) × bytes per weight ÷ (2 × the weight-read
    rate). H800 at FP8 with the engine-blind rates: 1,979e12 × 0.5 × 1 ÷ (2 × 3,350e9 × 0.75) = 197 rows; 0 without
    a published peak."""
    rate = device.flops_per_second(factors)
    if rate is None:
        return 0.0
    return rate * bytes_per_weight / (2.0 * device.bandwidth_gbs * GB * device.weight_efficiency(factors))


def expert_half_tokens(device: Device, bytes_per_weight: float, factors: Factors) -> float:
    """m½ of `expert_gemm_efficiency` on `device`: a share (`moe_gemm_half_ridge`, under 1) of its ridge point. The
    grouped GEMM's lost rate is a knee effect: below the ridge the weight read governs (the step's memory term
    already counts it), so the half-rate rows scale with where the knee is, and at a few rows per expert the
    charged compute stays under the weight read on every part. A constant m½ from Hopper FP8 would make low-compute
    cards compute-bound at batch 1, which no published decode shows."""
    return factors.moe_gemm_half_ridge * ridge_rows(device, bytes_per_weight, factors)


def tokens_per_expert(arch: Architecture, tokens: float) -> float:
    """Rows one touched routed expert of a layer receives in a pass of `tokens` tokens (uniform routing):
    tokens × k ÷ expected distinct experts. Batch 1: 1 row each; large batches: tokens × k ÷ E."""
    moe = arch.moe
    if moe is None:
        raise ValueError("not a mixture-of-experts model")
    return tokens * moe.experts_per_token / expected_distinct_experts(moe.num_experts, moe.experts_per_token,
                                                                      max(1, round(tokens)))


def routed_params_per_token(params: ParameterCount, arch: Architecture) -> int:
    """Routed-expert weights one token multiplies through (k experts in every MoE layer; shared experts excluded:
    they see every token, a dense GEMM)."""
    return params.moe_layers * arch.moe.experts_per_token * params.expert if arch.moe is not None else 0


def routed_bytes_per_step(params: ParameterCount, arch: Architecture, batch: int, bytes_per_weight: float,
                          experts: ExpertFormat | None = None) -> float:
    """The routed experts' share of `weight_bytes_per_step`: what expert parallelism splits over ep GPUs."""
    moe = arch.moe
    if moe is None:
        return 0.0
    distinct = expected_distinct_experts(moe.num_experts, moe.experts_per_token, batch)
    touched = params.moe_layers * distinct * params.expert
    if experts is None:
        return touched * bytes_per_weight
    matrices = experts.params * distinct / moe.num_experts
    return (touched - matrices) * bytes_per_weight + matrices * experts.bytes_per_weight


GEMM_HALF_DEPTH = 500.0
"""K (the reduction depth) at which a compute-bound GEMM runs at half its deep-K rate: rate ∝ K ÷ (K + K½). Each
output tile pays a fixed prologue (filling the load pipeline) and epilogue (scaling, writing out) besides its K-loop,
so shallow GEMMs lose a share of the peak. Least-squares fit to DeepGEMM's dense FP8 GEMMs at M = 4,096 on H800
(README at 327ec92, the same table `moe_gemm_half_ridge` cites): 775 TFLOPS at K = 512, 1,212 at 1,536, 1,168 at 2,048,
1,410 at 7,168, 1,520 at 16,384 (N 2,112 left out: 4.1 waves of tiles on 132 SMs, a wave-quantisation loss) give
K½ = 500 with every point within 6 %. What it explains: a model's narrow GEMMs (8B: hidden 4,096) reach a lower
share of the peak than a wide one's (405B: 16,384), and tensor parallelism's row-split GEMMs (attention output,
MLP down) get shallower with tp."""


def gemm_depth_factor(arch: Architecture, tp: int = 1, ep: int = 1) -> float:
    """Time of one token's GEMMs at their depths ÷ their time at infinite depth: Σ w_g (1 + K½ ÷ K_g) ÷ Σ w_g over
    the GEMMs a token runs through (w_g their parameters; `GEMM_HALF_DEPTH`). K is each matrix's input width: the
    hidden size for QKV, gate/up, the LM head and MLA's down-projections; heads × head size ÷ tp for the attention
    output; the MLP width ÷ tp for the down projection (an expert's whole width under expert parallelism); MLA's
    latent ranks for its up-projections. 1.10 for Llama 3.1 8B at tp 1, 1.05 for a 70B, 1.02 for the 405B."""
    h, heads = arch.hidden_size, arch.num_attention_heads
    gemms: list[tuple[float, float]] = []  # (parameters, K)
    if arch.mla is not None:
        mla = arch.mla
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        if mla.q_lora_rank:
            gemms += [(h * mla.q_lora_rank, h), (mla.q_lora_rank * heads * qk, mla.q_lora_rank)]
        else:
            gemms.append((h * heads * qk, h))
        gemms += [(h * (mla.kv_lora_rank + mla.qk_rope_head_dim), h),
                  (mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank),
                  (heads * mla.v_head_dim * h, heads * mla.v_head_dim / tp)]
    else:
        q, kv = heads * arch.head_size, arch.kv_heads * arch.head_size
        gemms += [(h * (q + 2 * kv), h), (q * h, q / tp)]
    moe = arch.moe
    if moe is None:
        gemms += [(2 * h * arch.intermediate_size, h), (arch.intermediate_size * h, arch.intermediate_size / tp)]
    else:
        ei = moe.expert_intermediate_size
        k = moe.experts_per_token
        gemms += [(k * 2 * h * ei, h), (k * ei * h, ei if ep > 1 else ei / tp)]
        if moe.num_shared_experts:
            si = moe.shared_expert_intermediate_size or ei * moe.num_shared_experts
            gemms += [(2 * h * si, h), (si * h, si / tp)]
    gemms.append((h * arch.vocab_size / arch.num_hidden_layers, h))  # the LM head, one layer's share
    weight = sum(w for w, _ in gemms)
    return sum(w * (1.0 + GEMM_HALF_DEPTH / max(1.0, kk)) for w, kk in gemms) / weight


def weight_gemm_kernels(arch: Architecture, dense_layers: int, moe_layers: int) -> int:
    """Weight-reading GEMM kernels of one forward pass, as the engines fuse them: per layer the attention's
    projections (fused QKV and the output: 2; MLA: the query's down and up projections, the latent's down
    projection, its absorbed up-projection and the output: 5, 4 without a query low rank), per dense layer the fused
    gate-up and the down projection (2), per MoE layer the router and the grouped experts' two GEMMs (3) plus a
    shared expert's two; and the LM head (1). Each pays `EngineEfficiency.gemm_ramp_us` when the step is bound by its
    weight read: Llama 3.1 8B 129 kernels, a Llama 70B 321."""
    if arch.mla is not None:
        attention = 5 if arch.mla.q_lora_rank else 4
    else:
        attention = 2
    moe = arch.moe
    per_moe = 3 + (2 if moe is not None and moe.num_shared_experts else 0)
    return arch.num_hidden_layers * attention + dense_layers * 2 + moe_layers * per_moe + 1


ALLTOALL_BYTES_PER_VALUE = 2.0
"""Hidden-state bytes per value an expert-parallel dispatch or combine moves: 16-bit activations, as the
tensor-parallel all-reduce (FP8 dispatch, which DeepEP offers, would halve the dispatch half)."""


def alltoall_seconds(tokens: float, arch: Architecture, ep: int, device: Device, factors: Factors) -> float:
    """One MoE layer's expert-parallel all-to-all, dispatch then combine, over `ep` GPUs of one scale-up domain.

    Each GPU holds tokens ÷ ep of the pass's tokens and sends each token's hidden state once to every other rank
    holding at least one of its k experts, (ep − 1)·(1 − (1 − 1/ep)^k) ranks in expectation (uniform routing), and
    gets as much back in the combine: 2 × (latency + bytes ÷ per-direction link bandwidth)."""
    moe = arch.moe
    if ep <= 1 or moe is None:
        return 0.0
    remote_ranks = (ep - 1) * (1.0 - (1.0 - 1.0 / ep) ** moe.experts_per_token)
    sent = tokens / ep * remote_ranks * arch.hidden_size * ALLTOALL_BYTES_PER_VALUE
    latency_us = factors.allreduce_latency_nvlink_us if device.link_kind == "nvlink" else \
        factors.allreduce_latency_pcie_us
    link = device.link_gbs_per_direction or PCIE_GBS_PER_DIRECTION[4]
    return 2.0 * (latency_us * 1e-6 + sent / (link * GB))


def check_expert_parallel(arch: Architecture, tp: int, ep: int) -> None:
    """Expert parallelism needs an MoE with at least one expert per GPU and ep a multiple of the attention tp."""
    if ep < 1:
        raise ValueError("ep must be positive")
    if ep == 1:
        return
    if arch.moe is None:
        raise ValueError("expert parallelism needs a mixture-of-experts model")
    if ep % tp:
        raise ValueError(f"ep {ep} must be a multiple of tp {tp} (attention groups of tp GPUs)")
    if ep > arch.moe.num_experts:
        raise ValueError(f"ep {ep} exceeds the model's {arch.moe.num_experts} routed experts")


def _active_matmul_params(params: ParameterCount) -> int:
    """Parameters one token multiplies through, without the embedding lookup but with the LM head."""
    return params.active_per_token


def _attention_dims(arch: Architecture) -> tuple[int, int]:
    """(QK width, V width) summed over heads, for attention FLOPs."""
    heads = arch.num_attention_heads
    if arch.mla is not None:
        return heads * (arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim), heads * arch.mla.v_head_dim
    return heads * arch.head_size, heads * arch.head_size


def _decode_attention_dims(arch: Architecture) -> tuple[int, int]:
    """(QK width, V width) a decode step attends with. Multi-head latent attention decodes in its absorbed form
    (DeepSeek-V2 paper §2.1.2; FlashMLA, SGLang, vLLM and TensorRT-LLM all do): the up-projections fold into the
    query and the output, so every head scores the cached latent and RoPE key (kv_lora_rank + qk_rope_head_dim) and
    sums latents (kv_lora_rank): 3.4 times the FLOPs per cached position of the decompressed form a prefill uses."""
    if arch.mla is not None:
        heads = arch.num_attention_heads
        return heads * (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim), heads * arch.mla.kv_lora_rank
    return _attention_dims(arch)


def allreduce_seconds(message_bytes: float, tp: int, device: Device, factors: Factors) -> float:
    """One ring all-reduce across `tp` GPUs: latency + 2(tp−1)/tp × bytes ÷ per-direction link bandwidth."""
    if tp <= 1:
        return 0.0
    latency_us = factors.allreduce_latency_nvlink_us if device.link_kind == "nvlink" else \
        factors.allreduce_latency_pcie_us
    link = device.link_gbs_per_direction or PCIE_GBS_PER_DIRECTION[4]
    return latency_us * 1e-6 + 2.0 * (tp - 1) / tp * message_bytes / (link * GB)


@dataclass(frozen=True)
class DecodeStep:
    """One decode step of `batch` sequences at KV length `context`, per model replica."""

    batch: int
    context: int
    bytes_per_gpu: float
    """Bytes one tensor-parallel rank reads per step; pipeline stages read their shares one after another, so the
    step reads this much per rank in sequence."""
    flops_per_gpu: float
    memory_seconds: float
    compute_seconds: float
    overhead_seconds: float
    comm_seconds: float
    step_seconds: float
    arithmetic_intensity: float
    """FLOPs ÷ bytes of the step (FLOP/byte)."""
    bound: Bound
    tokens_per_s: float
    """Aggregate over the batch, one replica."""
    tokens_per_s_per_sequence: float
    bandwidth_bound_tokens_per_s: float
    """batch × bandwidth ÷ bytes: the ceiling no implementation can beat (η_bw = 1, no overhead)."""
    notes: tuple[Note, ...]


class StepParts(NamedTuple):
    """One decode step's times (s): memory and compute overlap (the roofline takes the larger), overhead and
    communication add. The memory time is the weights' read plus the KV cache's, the overhead the per-layer cost
    plus the per-sequence one: a continuous-batching iteration split into several passes (chunked prefill) reads the
    weights and pays the per-layer cost once per pass, but each running sequence's cache and host work once
    (rules/sizing/serving_load.py)."""

    memory: float
    compute: float
    overhead: float
    comm: float
    weights: float = 0.0
    """The weights' share of `memory`."""
    per_layer: float = 0.0
    """The per-layer (launch, small-op) share of `overhead`: paid once per pass."""
    attention: float = 0.0
    """The attention FLOPs' share of `compute` (at the attention kernels' rate, `Device.attention_tflops`)."""


class DecodeCurve:
    """`decode_step` for one model, device and split, as a function of the batch alone.

    Everything that does not depend on the batch is computed once, so a configuration search can probe many batches
    cheaply; `decode_step` itself is built on this class, so both give bit-identical figures (same operations in
    the same order).
    """

    __slots__ = ("arch", "params", "device", "bytes_per_weight", "kv_bytes_per_value", "context", "tp", "pp", "ep",
                 "embedding_bytes", "factors", "experts", "_attended", "_dense_weight_bytes", "_kv_per_token",
                 "_layers", "_matmul", "_qkv", "_mem_den", "_kv_den", "_comp_den", "_overhead", "_seq_overhead",
                 "_two_layers", "_hidden", "_ar_latency", "_ar_coef", "_link_den", "_pp_comm", "_cache", "_seconds",
                 "_routed", "_dense_layers", "_moe_layers", "_ranks", "_half_tokens", "_kv_replication", "_ramp",
                 "_groups", "_attn_per_token", "_prefill_qk_v", "_attn_den")

    def __init__(self, arch: Architecture, params: ParameterCount, device: Device, *, bytes_per_weight: float,
                 kv_bytes_per_value: float, context: int, tp: int = 1, pp: int = 1,
                 embedding_bytes: float | None = None, factors: Factors = DEFAULT_FACTORS,
                 experts: ExpertFormat | None = None, ep: int = 1) -> None:
        if context < 1 or tp < 1 or pp < 1:
            raise ValueError("context, batch, tp and pp must be positive")
        check_expert_parallel(arch, tp, ep)
        self.arch, self.params, self.device, self.factors = arch, params, device, factors
        self.bytes_per_weight, self.kv_bytes_per_value, self.embedding_bytes = (bytes_per_weight, kv_bytes_per_value,
                                                                               embedding_bytes)
        self.context, self.experts = context, experts
        self._attended = attended_tokens(arch, context)  # key positions one new token attends to, all layers
        self._dense_weight_bytes = (weight_bytes_per_step(params, arch, 1, bytes_per_weight, embedding_bytes)
                                    if arch.moe is None else None)
        self._kv_per_token = kv_bytes_per_sequence(arch, kv_bytes_per_value, context)  # one sequence's cache read
        self._layers = arch.num_hidden_layers
        self._matmul = _active_matmul_params(params)
        qk, v = _decode_attention_dims(arch)
        self._qkv = qk + v
        self._attn_per_token = 2.0 * self._attended * self._qkv  # attention FLOPs of one decode token, all layers
        self._prefill_qk_v = sum(_attention_dims(arch))
        self._two_layers = 2 * self._layers
        self._hidden = arch.hidden_size
        self._routed = routed_params_per_token(params, arch)
        self._dense_layers, self._moe_layers = params.dense_layers, params.moe_layers
        self._set_split(device, tp, pp, ep)

    def _set_split(self, device: Device, tp: int, pp: int, ep: int = 1) -> None:
        """The parts that depend on the device and the split (everything else depends on the model only)."""
        factors = self.factors
        self.device, self.tp, self.pp, self.ep = device, tp, pp, ep
        self._ranks = max(tp, ep)  # GPUs the replica's FLOPs spread over (one pipeline stage)
        # each rank of a tensor-parallel attention group reads its share of the cache; an MLA latent (and a KV head
        # shared by more ranks than there are heads) is replicated, so a rank reads more than 1/tp of it
        self._kv_replication = read_replication(self.arch, tp)
        self._mem_den = device.bandwidth_gbs * GB * device.weight_efficiency(factors)
        self._kv_den = device.bandwidth_gbs * GB * device.kv_efficiency(factors)
        rate = device.flops_per_second(factors)
        # GEMMs run below the peak by their depth (`gemm_depth_factor`); attention kernels have their own rate
        self._comp_den = rate / gemm_depth_factor(self.arch, tp, ep) if rate is not None else None
        self._attn_den = device.attention_flops_per_second(factors)
        self._half_tokens = expert_half_tokens(device, self.experts.bytes_per_weight if self.experts else
                                               self.bytes_per_weight, factors)
        self._overhead = device.overhead_seconds(self._layers, self._moe_layers, factors)
        # a weight-bound step's GEMMs each pay a fixed ramp beyond their bytes (pipeline fill, last wave, epilogue):
        # part of the weights' read, so it is hidden once the step is compute-bound and paid again by every pass
        ramp = device.efficiency.gemm_ramp_us if device.efficiency else 0.0
        self._ramp = weight_gemm_kernels(self.arch, self._dense_layers, self._moe_layers) * ramp * 1e-6
        eff = device.efficiency
        # per sequence: the host's share once, the decode attention's fixed share once per layer
        self._seq_overhead = (eff.overhead_per_sequence_us + self._layers * eff.overhead_per_sequence_layer_us) \
            * 1e-6 if eff else 0.0
        # attention data-parallel groups: each rank group schedules, samples and detokenises its own sequences (one
        # executor per group: TensorRT-LLM's enable_attention_dp, SGLang's and vLLM's DP attention), so the
        # per-sequence cost of a step is that of the busiest group's share, not of the whole batch
        self._groups = ep // tp if ep > 1 else 1
        # allreduce_seconds, split into its constant parts
        latency_us = factors.allreduce_latency_nvlink_us if device.link_kind == "nvlink" else \
            factors.allreduce_latency_pcie_us
        self._ar_latency = latency_us * 1e-6
        self._ar_coef = 2.0 * (tp - 1) / tp
        self._link_den = (device.link_gbs_per_direction or PCIE_GBS_PER_DIRECTION[4]) * GB
        self._pp_comm = (pp - 1) * (factors.allreduce_latency_nvlink_us if device.link_kind == "nvlink"
                                    else factors.allreduce_latency_pcie_us) * 1e-6
        self._cache: dict[int, tuple[float, ...]] = {}
        self._seconds: dict[int, float] = {}

    def split(self, device: Device, tp: int = 1, pp: int = 1, ep: int = 1) -> DecodeCurve:
        """The same model on another device or split: the model's constants are reused, not recomputed."""
        if tp < 1 or pp < 1:
            raise ValueError("context, batch, tp and pp must be positive")
        check_expert_parallel(self.arch, tp, ep)
        other = DecodeCurve.__new__(DecodeCurve)
        for name in _MODEL_SLOTS:
            setattr(other, name, getattr(self, name))
        other._set_split(device, tp, pp, ep)
        return other

    def _flop_seconds(self, flops: float, tokens: float, per_pass: float | None = None) -> float:
        """Seconds `flops` of the whole replica take for `tokens` tokens in passes of `per_pass` tokens (default:
        one pass): spread over its GPUs at the engine's compute rate, the routed experts' FLOPs (2 × routed params ×
        tokens) slowed to the grouped-GEMM rate of the rows each expert gets in a pass (`expert_gemm_efficiency`);
        0 without a published peak."""
        if self._comp_den is None:
            return 0.0
        if self._routed:
            m = tokens_per_expert(self.arch, tokens if per_pass is None else per_pass)
            eff = expert_gemm_efficiency(m, self._half_tokens)
            flops += 2.0 * self._routed * tokens * (1.0 / eff - 1.0)
        return flops / self._ranks / self._comp_den

    def _parts(self, batch: int) -> tuple[float, ...]:
        """(bytes, FLOPs, bytes per GPU, FLOPs per GPU, t_mem, t_comp, t_comm, step seconds, t_kv, t_attn) at
        `batch`."""
        found = self._cache.get(batch)
        if found is not None:
            return found
        if batch < 1:
            raise ValueError("context, batch, tp and pp must be positive")
        w_bytes = self._dense_weight_bytes
        if w_bytes is None:
            w_bytes = weight_bytes_per_step(self.params, self.arch, batch, self.bytes_per_weight, self.embedding_bytes,
                                            self.experts)
        kv_bytes = batch * self._kv_per_token
        total_bytes = w_bytes + kv_bytes
        attn_flops = batch * self._attn_per_token
        flops = 2.0 * batch * self._matmul + attn_flops
        tp, ep = self.tp, self.ep
        if ep > 1:
            # attention groups of tp GPUs hold the non-expert weights each; experts and sequences spread over ep
            routed = routed_bytes_per_step(self.params, self.arch, batch, self.bytes_per_weight, self.experts)
            rest = w_bytes - routed
            kv_read = kv_bytes * self._kv_replication
            bytes_gpu, flops_gpu = rest / tp + (routed + kv_read) / ep, flops / ep
            t_kv = kv_read / ep / self._kv_den
            t_mem = (rest / tp + routed / ep) / self._mem_den + self._ramp + t_kv
            group_tokens = batch * tp / ep
            allreduce = 0.0 if tp <= 1 else \
                self._ar_latency + self._ar_coef * (group_tokens * self._hidden * 2.0) / self._link_den
            t_comm = (self._layers + self._dense_layers) * allreduce \
                + self._moe_layers * alltoall_seconds(batch, self.arch, ep, self.device, self.factors)
            t_comp = self._flop_seconds(flops - attn_flops, batch)
        else:
            kv_read = kv_bytes * self._kv_replication
            bytes_gpu, flops_gpu = (w_bytes + kv_read) / tp, flops / tp
            t_kv = kv_read / tp / self._kv_den
            if self._kv_den == self._mem_den:
                t_mem = bytes_gpu / self._mem_den + self._ramp
            else:
                t_mem = w_bytes / tp / self._mem_den + self._ramp + t_kv
            if self._routed:
                t_comp = self._flop_seconds(flops - attn_flops, batch)
            else:
                t_comp = (flops - attn_flops) / tp / self._comp_den if self._comp_den is not None else 0.0
            allreduce = 0.0 if tp <= 1 else \
                self._ar_latency + self._ar_coef * (batch * self._hidden * 2.0) / self._link_den
            t_comm = self._two_layers * allreduce
        t_comm += self._pp_comm
        t_attn = attn_flops / self._ranks / self._attn_den if self._attn_den is not None else 0.0
        t_comp += t_attn
        step = max(t_mem, t_comp) + self._overhead + self._sequence_overhead(batch) + t_comm
        parts = (total_bytes, flops, bytes_gpu, flops_gpu, t_mem, t_comp, t_comm, step, t_kv, t_attn)
        self._cache[batch] = parts
        return parts

    def _sequence_overhead(self, batch: int) -> float:
        """Per-sequence cost of a step of `batch` sequences: each attention group's share (the groups are kept
        balanced: TensorRT-LLM's attention-DP balancing, SGLang's and vLLM's DP schedulers)."""
        return self._seq_overhead * batch / self._groups

    def seconds(self, batch: int) -> float:
        """Duration of one decode step of `batch` sequences (tokens/s = batch ÷ this)."""
        found = self._seconds.get(batch)
        if found is None:
            found = self._seconds[batch] = self._parts(batch)[7]
        return found

    def parts(self, batch: int) -> StepParts:
        """The step at `batch` split into what overlaps (memory, compute) and what adds (overheads, communication):
        what a mixed step of continuous batching adds its prompt tokens to (rules/sizing/serving_load.py)."""
        p = self._parts(batch)
        return StepParts(memory=p[4], compute=p[5], overhead=self._overhead + self._sequence_overhead(batch),
                         comm=p[6], weights=max(0.0, p[4] - p[8]), per_layer=self._overhead, attention=p[9])

    def compute_seconds(self, flops: float) -> float:
        """Seconds `flops` (of the whole replica) take on its tensor-parallel ranks at the engine's compute rate
        (0 without a published peak: only bandwidth bounds then)."""
        return flops / self._ranks / self._comp_den if self._comp_den is not None else 0.0

    def attention_seconds(self, flops: float) -> float:
        """Seconds attention `flops` (of the whole replica) take at the attention kernels' rate."""
        return flops / self._ranks / self._attn_den if self._attn_den is not None else 0.0

    def mixed_compute_seconds(self, batch: int, prompt_tokens: float, prompt_flops: float, passes: float,
                              prompt_attention_flops: float = 0.0) -> tuple[float, float]:
        """(GEMM seconds, attention seconds) of one continuous-batching iteration: the decode step's FLOPs at
        `batch` plus `prompt_flops` (of which `prompt_attention_flops` in attention) for `prompt_tokens` prompt
        tokens, in `passes` passes. An MoE's routed experts run at the grouped-GEMM rate of the pass's tokens (more
        tokens per expert than decode alone: prompts raise the experts' efficiency)."""
        p = self._parts(batch)
        attn = p[9] + self.attention_seconds(prompt_attention_flops)
        gemm_prompt = prompt_flops - prompt_attention_flops
        if not self._routed:
            return p[5] - p[9] + self.compute_seconds(gemm_prompt), attn
        tokens = batch + prompt_tokens
        decode_attn_flops = batch * self._attn_per_token
        return self._flop_seconds(p[1] - decode_attn_flops + gemm_prompt, tokens, tokens / passes), attn

    def prompt_attention_flops(self, prompt_tokens: int) -> float:
        """Causal attention FLOPs of one prompt's prefill (`PrefillModel.attention_flops` at batch 1): the part of a
        prompt's work the attention kernels do, beside the GEMMs."""
        return self._prefill_qk_v * float(causal_attention_pairs(self.arch, prompt_tokens)) if prompt_tokens else 0.0

    def bound(self, batch: int) -> Bound:
        """What limits a step at `batch` (`DecodeStep.bound`)."""
        parts = self._parts(batch)
        return "compute" if parts[5] > parts[4] else "bandwidth"

    def _notes(self, batch: int) -> tuple[Note, ...]:
        factors = self.factors
        eff = self.device.efficiency
        engine_notes = [
            factors.note("decode_bandwidth_efficiency", "Fraction of peak bandwidth a decode step achieves"),
            factors.note("compute_efficiency", "Fraction of dense peak FLOPS inference matmuls achieve"),
            factors.note("step_overhead_per_layer_us", "Fixed cost per layer per step (kernel launches, small ops)"),
        ] if eff is None else [
            Note(f"engine.{eff.profile or eff.engine}", f"{eff.engine} on this accelerator family: "
                 f"{eff.bandwidth_efficiency:.0%} of peak bandwidth on weights, {eff.kv_efficiency:.0%} on the KV "
                 f"cache, {eff.overhead_per_layer_us:g} µs per layer per step (calibrated on published "
                 "measurements, engines.toml" + (f"; release: {eff.release}" if eff.release else "") + ")",
                 value=eff.bandwidth_efficiency, source="engines.toml"),
            factors.note("compute_efficiency", "Fraction of dense peak FLOPS inference matmuls achieve"),
        ]
        notes = [
            *engine_notes,
            Note("method.decode", "Decode step = max(bytes ÷ (bandwidth × η_bw), FLOPs ÷ (peak × η_c)) + per-layer "
                 "overhead + 2 all-reduces per layer under TP; bytes = weights read (MoE: expected distinct experts) + "
                 f"KV cache of {batch} sequence(s) at {self.context} tokens (the longest step)",
                 source="S6, S7 (002)"),
        ]
        if self.device.sustained < 1.0:
            notes.append(Note("accelerator.sustained_compute_ratio", f"Power-limited form factor: matmuls run at "
                              f"{self.device.sustained:.0%} of the datasheet tensor rate under a full serving load "
                              "(derived from published MLPerf per-GPU throughput, accelerators.toml)",
                              value=self.device.sustained, source="accelerators.toml"))
        if self.tp > 1 or self.ep > 1:
            notes.append(factors.note("allreduce_latency_nvlink_us" if self.device.link_kind == "nvlink"
                                      else "allreduce_latency_pcie_us", "Latency of one tensor-parallel all-reduce"
                                      + (" (and of each all-to-all)" if self.ep > 1 else "")))
        if self._routed:
            m = tokens_per_expert(self.arch, batch)
            notes.append(Note("moe_gemm_half_ridge", f"Routed experts run as grouped GEMMs of {m:,.1f} tokens per "
                              f"expert at batch {batch}: {expert_gemm_efficiency(m, self._half_tokens):.0%} of the "
                              f"large-batch GEMM rate, m ÷ (m + m½), m½ = {self._half_tokens:,.0f} rows "
                              f"({factors.moe_gemm_half_ridge:g} of this part's ridge point)",
                              value=factors.moe_gemm_half_ridge))
        if self.ep > 1 and self.arch.moe is not None:
            experts = self.arch.moe.num_experts
            notes.append(Note("method.expert_parallel", f"Expert parallelism over {self.ep} GPUs: each holds "
                              f"{experts / self.ep:g} of {experts} routed experts "
                              f"and reads 1/{self.ep} of the touched ones; attention in {self.ep // self.tp} "
                              f"data-parallel group(s) of {self.tp} GPU(s); per MoE layer an all-to-all dispatch and "
                              "combine of the tokens' hidden states (16-bit) over the scale-up link",
                              source="speed.alltoall_seconds"))
        return tuple(notes)

    def step(self, batch: int, with_notes: bool = True) -> DecodeStep:
        """The full `DecodeStep` at `batch` (what `decode_step` returns)."""
        total_bytes, flops, bytes_gpu, flops_gpu, t_mem, t_comp, t_comm, step, _, _ = self._parts(batch)
        device = self.device
        notes = self._notes(batch) if with_notes else ()
        bound: Bound = "compute" if t_comp > t_mem else "bandwidth"
        return DecodeStep(
            batch=batch, context=self.context, bytes_per_gpu=bytes_gpu, flops_per_gpu=flops_gpu, memory_seconds=t_mem,
            compute_seconds=t_comp, overhead_seconds=self._overhead + self._sequence_overhead(batch),
            comm_seconds=t_comm, step_seconds=step,
            arithmetic_intensity=flops / total_bytes, bound=bound, tokens_per_s=batch / step,
            tokens_per_s_per_sequence=1.0 / step,
            bandwidth_bound_tokens_per_s=batch * device.bandwidth_gbs * GB / bytes_gpu, notes=notes)


_MODEL_SLOTS = ("arch", "params", "factors", "bytes_per_weight", "kv_bytes_per_value", "embedding_bytes", "context",
                "experts", "_attended",
                "_dense_weight_bytes", "_kv_per_token", "_layers", "_matmul", "_qkv", "_two_layers", "_hidden",
                "_routed", "_dense_layers", "_moe_layers", "_attn_per_token", "_prefill_qk_v")
"""What `DecodeCurve.split` shares: every slot that `_set_split` does not set."""


def decode_step(arch: Architecture, params: ParameterCount, device: Device, *, bytes_per_weight: float,
                kv_bytes_per_value: float, context: int, batch: int = 1, tp: int = 1, pp: int = 1,
                embedding_bytes: float | None = None, factors: Factors = DEFAULT_FACTORS,
                with_notes: bool = True, experts: ExpertFormat | None = None, ep: int = 1) -> DecodeStep:
    """Time and throughput of one decode step (S6, S7; H3 at small batch, H4 at large batch).

    `with_notes=False` skips the explanatory notes (for searches that explain only the step they keep); a search
    probing many batches of one setup uses `DecodeCurve` directly."""
    if context < 1 or batch < 1 or tp < 1 or pp < 1:
        raise ValueError("context, batch, tp and pp must be positive")
    curve = DecodeCurve(arch, params, device, bytes_per_weight=bytes_per_weight, kv_bytes_per_value=kv_bytes_per_value,
                        context=context, tp=tp, pp=pp, embedding_bytes=embedding_bytes, factors=factors,
                        experts=experts, ep=ep)
    return curve.step(batch, with_notes)


@dataclass(frozen=True)
class Prefill:
    """Processing `batch` prompts of `prompt_tokens` each in one go, per model replica."""

    prompt_tokens: int
    batch: int
    flops: float
    seconds: float
    tokens_per_s: float
    bound: Bound
    notes: tuple[Note, ...]


class PrefillModel:
    """`prefill` for one model, prompt and batch, on any device and split: the FLOPs and the weight bytes do not
    depend on the device, so a search computes them once. `prefill` is built on this class (same operations in the
    same order, so bit-identical figures)."""

    __slots__ = ("factors", "prompt_tokens", "batch", "tokens", "flops", "w_bytes", "layers", "message", "arch",
                 "routed_params", "expert_bytes_per_weight", "routed_bytes", "dense_layers", "moe_layers",
                 "attention_flops")

    def __init__(self, arch: Architecture, params: ParameterCount, *, bytes_per_weight: float, prompt_tokens: int,
                 batch: int = 1, embedding_bytes: float | None = None, factors: Factors = DEFAULT_FACTORS,
                 experts: ExpertFormat | None = None) -> None:
        if prompt_tokens < 1 or batch < 1:
            raise ValueError("prompt_tokens, batch and tp must be positive")
        self.factors, self.prompt_tokens, self.batch = factors, prompt_tokens, batch
        layers = arch.num_hidden_layers
        tokens = prompt_tokens * batch
        lm_head = params.lm_head if params.lm_head else params.embedding
        per_token = 2.0 * (_active_matmul_params(params) - lm_head)
        qk, v = _attention_dims(arch)
        attention = batch * (qk + v) * float(causal_attention_pairs(arch, prompt_tokens))  # causal: half of 2·s²·(qk+v)
        self.flops = per_token * tokens + attention + 2.0 * lm_head * batch
        self.attention_flops = attention
        self.w_bytes = weight_bytes_per_step(params, arch, tokens, bytes_per_weight, embedding_bytes, experts)
        self.layers, self.tokens = layers, tokens
        self.message = tokens * arch.hidden_size * 2.0  # bytes of one all-reduce
        self.arch, self.dense_layers, self.moe_layers = arch, params.dense_layers, params.moe_layers
        self.routed_params = routed_params_per_token(params, arch)
        self.expert_bytes_per_weight = experts.bytes_per_weight if experts else bytes_per_weight
        self.routed_bytes = routed_bytes_per_step(params, arch, tokens, bytes_per_weight, experts)

    def routed_extra_flops(self, device: Device) -> float:
        """What the routed experts' grouped GEMMs cost on `device` beyond their FLOPs, as FLOPs at the dense rate
        (2 × routed params × tokens × (1/ε − 1)); 0 for a dense model."""
        if not self.routed_params:
            return 0.0
        eff = expert_gemm_efficiency(tokens_per_expert(self.arch, self.tokens),
                                     expert_half_tokens(device, self.expert_bytes_per_weight, self.factors))
        return 2.0 * self.routed_params * self.tokens * (1.0 / eff - 1.0)

    def _times(self, device: Device, tp: int, ep: int = 1) -> tuple[float, float, float]:
        """(t_comp, t_mem, seconds) on `device` split over `tp` GPUs (and `ep` for the routed experts)."""
        if tp < 1:
            raise ValueError("prompt_tokens, batch and tp must be positive")
        check_expert_parallel(self.arch, tp, ep)
        factors = self.factors
        rate = device.flops_per_second(factors)
        if rate:
            rate /= gemm_depth_factor(self.arch, tp, ep)
        ranks = max(tp, ep)
        attn_rate = device.attention_flops_per_second(factors)
        t_attn = self.attention_flops / ranks / attn_rate if attn_rate else 0.0
        t_comp = (self.flops - self.attention_flops + self.routed_extra_flops(device)) / ranks / rate if rate else 0.0
        mem_den = device.bandwidth_gbs * GB * device.weight_efficiency(factors)
        if ep > 1:
            rest = self.w_bytes - self.routed_bytes
            t_mem = (rest / tp + self.routed_bytes / ep) / mem_den
            message = self.message * tp / ep  # one attention group's tokens
            t_comm = (self.layers + self.dense_layers) * allreduce_seconds(message, tp, device, factors) \
                + self.moe_layers * alltoall_seconds(self.tokens, self.arch, ep, device, factors)
        else:
            t_mem = self.w_bytes / tp / mem_den
            t_comm = 2 * self.layers * allreduce_seconds(self.message, tp, device, factors)
        t_over = device.overhead_seconds(self.layers, self.moe_layers, factors)
        t_comp += t_attn
        return t_comp, t_mem, max(t_comp, t_mem) + t_over + t_comm

    def seconds(self, device: Device, tp: int = 1, ep: int = 1) -> float:
        """`prefill(...).seconds`."""
        return self._times(device, tp, ep)[2]

    def prefill(self, device: Device, tp: int = 1, with_notes: bool = True, ep: int = 1) -> Prefill:
        t_comp, t_mem, seconds = self._times(device, tp, ep)
        factors = self.factors
        notes: tuple[Note, ...] = ()
        if with_notes:
            notes = (
                factors.note("compute_efficiency", "Fraction of dense peak FLOPS prefill matmuls achieve"),
                Note("method.prefill", "Prefill FLOPs = 2 × active parameters × prompt tokens + causal attention "
                     "2·L·a·d·s²/2 per sequence; compute-bound (S7)" + ("" if device.peak_tflops else
                                                                       "; no published peak: bandwidth only"),
                     source="S7 (002); Kaplan et al. 2020"),
            )
        bound: Bound = "compute" if t_comp >= t_mem else "bandwidth"
        return Prefill(prompt_tokens=self.prompt_tokens, batch=self.batch, flops=self.flops, seconds=seconds,
                       tokens_per_s=self.tokens / seconds, bound=bound, notes=notes)


def prefill(arch: Architecture, params: ParameterCount, device: Device, *, bytes_per_weight: float,
            prompt_tokens: int, batch: int = 1, tp: int = 1, embedding_bytes: float | None = None,
            factors: Factors = DEFAULT_FACTORS, with_notes: bool = True,
            experts: ExpertFormat | None = None, ep: int = 1) -> Prefill:
    """Prefill time (TTFT at batch 1): compute-bound except for very short prompts, which still read all weights.

    `with_notes=False` skips the explanatory notes (a search explains only the configuration it keeps; one trying
    many devices uses `PrefillModel`)."""
    if prompt_tokens < 1 or batch < 1 or tp < 1:
        raise ValueError("prompt_tokens, batch and tp must be positive")
    model = PrefillModel(arch, params, bytes_per_weight=bytes_per_weight, prompt_tokens=prompt_tokens, batch=batch,
                         embedding_bytes=embedding_bytes, factors=factors, experts=experts)
    return model.prefill(device, tp, with_notes, ep)


def generation_throughput(arch: Architecture, params: ParameterCount, device: Device, *, bytes_per_weight: float,
                          kv_bytes_per_value: float, input_tokens: int, output_tokens: int, batch: int, tp: int = 1,
                          embedding_bytes: float | None = None, factors: Factors = DEFAULT_FACTORS) -> float:
    """Output tokens/s of a static batch: prefill all prompts, then `output_tokens` decode steps at the average
    KV length (input + output/2). This is what offline benchmarks (TensorRT-LLM's gptSessionBenchmark) time."""
    pre = prefill(arch, params, device, bytes_per_weight=bytes_per_weight, prompt_tokens=input_tokens, batch=batch,
                  tp=tp, embedding_bytes=embedding_bytes, factors=factors)
    step = decode_step(arch, params, device, bytes_per_weight=bytes_per_weight, kv_bytes_per_value=kv_bytes_per_value,
                       context=input_tokens + max(1, output_tokens // 2), batch=batch, tp=tp,
                       embedding_bytes=embedding_bytes, factors=factors)
    return batch * output_tokens / (pre.seconds + output_tokens * step.step_seconds)
