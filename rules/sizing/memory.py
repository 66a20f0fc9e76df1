"""GPU memory per device for inference, full training, LoRA and QLoRA (S1, S2, S4, S5, S11, S12, W2, W6).

Everything is in bytes per GPU. A breakdown lists weights, KV cache, activations, gradients, optimizer states and
runtime overhead (CUDA context, framework, library workspaces); `fits` keeps `headroom_fraction` of the card free,
because the caching allocator fragments and jobs fail at 85-90% of nominal capacity (002, W6).

Training accounting (mixed precision, the default): bf16 weights 2 + bf16 gradients 2 + fp32 master weights 4 +
fp32 Adam m 4 + fp32 Adam v 4 = 16 bytes/param, as in the ZeRO paper (Rajbhandari et al. 2020, §3.1: 2Ψ + 2Ψ + 12Ψ).
Document 002 counts 18 (fp32 gradients, `grad_precision="fp32"`); 000's "4× the FP16 weights" (8 B/param) omits the
fp32 master copy and the moments' full width and undercounts by half.

Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", Eq. 1:
s·b·h·(34 + 5·a·s/h) bytes per layer for GPT-3-style layers), adapted to current decoders: no dropout masks,
grouped-query K/V of width kv_heads·head_dim, a gated MLP storing four tensors of intermediate width (gate, up,
SiLU(gate), product) and RMSNorm inputs. Per token per layer, in 16-bit:
    2·(h [attn norm out] + q [Q] + 2·kv [K, V] + q_o [attention output]) + 2·(h + 4·i) [MLP] + 4·h [norm inputs]
plus 2·a·s for the softmax output when attention is not fused (FlashAttention recomputes it, so the term vanishes).
For a GPT-3 layer (kv = h, plain MLP of 4h storing 2 tensors) this gives 32h, i.e. Korthikanti's 34h less the two
dropout masks. With full activation checkpointing each layer keeps only its 16-bit input (2·s·b·h) plus one layer's
full set while it is recomputed. Tensor parallelism with sequence parallelism divides activations by tp. Pipeline
parallelism does not reduce them: under 1F1B the first stage keeps pp micro-batches in flight, each holding L/pp
layers (Korthikanti §4.2.3), i.e. one micro-batch through all L layers. The loss adds the logits: bf16 logits plus
their fp32 upcast for cross-entropy, 6 bytes per vocabulary entry per token (vocabulary-parallel under tp).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuadvisor.knowledge.schema import Accelerator, Architecture, Precision
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors, Note
from gpuadvisor.rules.sizing.kvcache import kv_bytes_per_sequence, kv_cache, per_gpu_share
from gpuadvisor.rules.sizing.params import ParameterCount, moe_layer_split
from gpuadvisor.rules.sizing.units import GB

Method = Literal["full", "lora", "qlora"]
Recompute = Literal["none", "selective", "full"]
"""Activation recomputation: none, selective (the elementwise work of a layer: norms and the MLP's activation), or
full (each layer keeps its input and reruns its forward pass in the backward pass)."""
Optimizer = Literal["adamw", "sgd", "adam8bit"]
GradPrecision = Literal["bf16", "fp32"]

OPTIMIZER_BYTES_MIXED: dict[str, float] = {"adamw": 12.0, "sgd": 8.0, "adam8bit": 6.0}
"""Optimizer bytes/param with 16-bit weights: fp32 master copy (4) + states (AdamW m, v: 8; SGD momentum: 4;
8-bit Adam m, v: 2, bitsandbytes block-wise, scales negligible)."""
OPTIMIZER_BYTES_FP32: dict[str, float] = {"adamw": 8.0, "sgd": 4.0, "adam8bit": 2.0}
"""Optimizer bytes/param in pure fp32 training: the weights are the master copy, only the states remain."""
ADAPTER_STATE_BYTES: dict[str, float] = {"adamw": 8.0, "sgd": 4.0, "adam8bit": 2.0}
"""Optimizer state bytes per adapter parameter (adapters are trained in fp32, so no separate master copy)."""
ADAPTER_WEIGHT_BYTES = 4.0
ADAPTER_GRAD_BYTES = 4.0
LOGIT_BYTES = 6.0
ACT_BYTES = 2.0


@dataclass(frozen=True)
class Parallelism:
    """How the model is split: tensor (tp) × pipeline (pp) × context (cp) × data (dp) parallel GPUs, and the ZeRO
    stage over the dp × cp ranks that hold the same weights.

    `ep` > 1 (MoE serving): the routed experts are split over ep GPUs of a replica, ep a multiple of tp; attention
    and the other weights are tensor-parallel over tp and replicated in ep ÷ tp data-parallel groups, so a replica
    spans ep GPUs per pipeline stage."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    """0 = plain data parallel; 1 shards optimizer states (Megatron's distributed optimizer), 2 also gradients, 3
    (= FSDP) also weights, over the dp × cp ranks that hold the same weights."""
    ep: int = 1
    cp: int = 1
    """Context parallel (training): each sequence split over cp GPUs (ring attention), which hold the same weights
    and each 1/cp of every activation; the gradients are reduced over dp × cp."""
    vp: int = 1
    """Virtual pipeline stages per GPU (interleaved 1F1B, training): the bubble shrinks vp-fold, the first stage
    keeps a little more in flight."""

    def __post_init__(self) -> None:
        for name in ("tp", "pp", "dp", "ep", "cp", "vp"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.zero not in (0, 1, 2, 3):
            raise ValueError("zero must be 0, 1, 2 or 3")
        if self.ep > 1 and self.ep % self.tp:
            raise ValueError(f"ep {self.ep} must be a multiple of tp {self.tp}")

    @property
    def gpus(self) -> int:
        return self.model_shards * self.cp * self.dp

    @property
    def model_shards(self) -> int:
        """GPUs the weights of one model copy are split over (tp × pp; ep × pp under expert parallelism)."""
        return max(self.tp, self.ep) * self.pp

    @property
    def replicas(self) -> int:
        """Ranks that hold the same weights: data parallel × context parallel (what ZeRO shards over)."""
        return self.dp * self.cp

    def shard(self, stage: int) -> int:
        """Divisor over the weight-sharing ranks (dp × cp) for state sharded from ZeRO `stage` upward."""
        return self.replicas if self.zero >= stage else 1


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per GPU by line item, with the headroom required on top (W6)."""

    weights: float
    kv_cache: float
    activations: float
    gradients: float
    optimizer_states: float
    runtime_overhead: float
    headroom_fraction: float
    notes: tuple[Note, ...]

    @property
    def total(self) -> float:
        return (self.weights + self.kv_cache + self.activations + self.gradients + self.optimizer_states
                + self.runtime_overhead)

    @property
    def required_capacity(self) -> float:
        """Card capacity needed so that `headroom_fraction` stays free."""
        return self.total / (1.0 - self.headroom_fraction)

    def usable(self, capacity_bytes: float) -> float:
        """What a card of `capacity_bytes` can hold while keeping the headroom free."""
        return capacity_bytes * (1.0 - self.headroom_fraction)

    def fits(self, capacity_bytes: float) -> bool:
        return self.total <= self.usable(capacity_bytes)


# --- parameters ------------------------------------------------------------------------------------------------

def embedding_params(params: ParameterCount) -> int:
    """Token + position tables and an untied LM head: kept in 16-bit by weight-only quantizers (bitsandbytes)."""
    return params.embedding + params.position_embedding + params.lm_head


@dataclass(frozen=True)
class ExpertFormat:
    """Routed experts' weight matrices stored in a format of their own (gpt-oss: MXFP4 experts, bf16 elsewhere)."""

    params: int
    """Parameters in that format: every routed expert's weight matrices (their biases stay 16-bit)."""
    bytes_per_weight: float
    precision: str


def expert_matrix_params(arch: Architecture) -> int:
    """Weight-matrix parameters of all routed experts of all MoE layers (no biases, shared experts or router)."""
    moe = arch.moe
    if moe is None:
        return 0
    _, moe_layers = moe_layer_split(arch.num_hidden_layers, moe)
    matrices = 3 if arch.mlp == "gated" else 2
    return moe_layers * moe.num_experts * matrices * arch.hidden_size * moe.expert_intermediate_size


def routed_expert_bytes(params: ParameterCount, arch: Architecture, bytes_per_weight: float,
                        experts: ExpertFormat | None = None) -> float:
    """Resident bytes of every routed expert of every MoE layer (what expert parallelism splits over ep GPUs)."""
    if arch.moe is None:
        return 0.0
    routed = float(params.moe_layers * arch.moe.num_experts * params.expert)
    if experts is None:
        return routed * bytes_per_weight
    return (routed - experts.params) * bytes_per_weight + experts.params * experts.bytes_per_weight


def split_weight_format(arch: Architecture, precision: Precision) -> tuple[float, ExpertFormat | None]:
    """(bytes per weight of the non-expert tensors, the experts' own format or None) when weights are `precision`
    (`weight_format` without the embedding tables)."""
    fmt = weight_format(arch, precision)
    return fmt.bytes_per_weight, fmt.experts


def is_gguf(precision: Precision) -> bool:
    """llama.cpp formats, whose bits per weight already average over every tensor (embeddings included)."""
    return "gguf" in (precision.library or "").lower() or precision.name.lower().startswith("gguf")


def embedding_bytes(precision: Precision) -> float | None:
    """Bytes per embedding/LM-head weight: quantizers other than GGUF keep those tables in 16-bit
    (bitsandbytes, AutoGPTQ, AutoAWQ, FP8/INT8 recipes); None = same as the weights."""
    if precision.bits_per_weight >= 16 or is_gguf(precision):
        return None
    return 2.0


@dataclass(frozen=True)
class WeightFormat:
    """How a checkpoint in `precision` stores each kind of tensor: the one answer to "how many bytes are the
    weights", used by memory, decode, prefill and every report (estimate and the planner alike)."""

    precision: str
    bytes_per_weight: float
    """Linear layers (attention, MLP, router, shared experts), scales included in the format's effective bits."""
    embedding_bytes: float | None
    """Token/position tables and an untied LM head; None = `bytes_per_weight`."""
    experts: ExpertFormat | None
    """The routed experts' own format when the checkpoint is published with one (gpt-oss: MXFP4)."""

    def total_bytes(self, params: ParameterCount) -> float:
        """Every resident weight byte of the model (all experts, W13)."""
        return weight_bytes(params, self.bytes_per_weight, self.embedding_bytes, self.experts)


def weight_format(arch: Architecture, precision: Precision) -> WeightFormat:
    """The weight format of `arch` stored in `precision`.

    Picking the format a publisher ships the routed experts in (Architecture.expert_weights_format: gpt-oss's
    "mxfp4") means the checkpoint as published: experts in that format, attention, router, embeddings, biases and
    norms in bf16 (2 bytes). Any other quantized choice stores the linear layers in the chosen format and keeps the
    embedding tables in 16-bit (`embedding_bytes`); 16-bit and wider formats, and GGUF, store every tensor alike."""
    native = arch.expert_weights_format
    if arch.moe is not None and native is not None and precision.id == native:
        return WeightFormat(precision.id, 2.0, None,
                            ExpertFormat(expert_matrix_params(arch), precision.bytes_per_weight, precision.id))
    return WeightFormat(precision.id, precision.bytes_per_weight, embedding_bytes(precision), None)


def weight_bytes(params: ParameterCount, bytes_per_weight: float, embedding_bytes: float | None = None,
                 experts: ExpertFormat | None = None) -> float:
    """All resident weights (every expert of an MoE, W13): linear layers at `bytes_per_weight` (scale overhead
    included in the precision's effective bits), embeddings/LM head at `embedding_bytes` (default: the same),
    and, per-tensor mixed precision, the routed experts' matrices at `experts.bytes_per_weight`."""
    emb = embedding_params(params)
    own = experts.params * experts.bytes_per_weight if experts is not None else 0.0
    rest = params.total - emb - (experts.params if experts is not None else 0)
    return rest * bytes_per_weight + own + emb * (bytes_per_weight if embedding_bytes is None else embedding_bytes)


def _linear_shapes(arch: Architecture) -> list[tuple[int, int, int]]:
    """(d_in, d_out, count per model) of every attention and MLP projection a LoRA 'all-linear' target adapts."""
    h, layers = arch.hidden_size, arch.num_hidden_layers
    shapes: list[tuple[int, int, int]] = []
    heads = arch.num_attention_heads
    if arch.mla is not None:
        m = arch.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            shapes += [(h, m.q_lora_rank, layers), (m.q_lora_rank, heads * qk, layers)]
        else:
            shapes.append((h, heads * qk, layers))
        shapes += [(h, m.kv_lora_rank + m.qk_rope_head_dim, layers),
                   (m.kv_lora_rank, heads * (m.qk_nope_head_dim + m.v_head_dim), layers),
                   (heads * m.v_head_dim, h, layers)]
    else:
        hd = arch.head_size
        shapes += [(h, heads * hd, layers), (h, arch.kv_heads * hd, 2 * layers), (heads * hd, h, layers)]

    def mlp(inter: int, count: int) -> None:
        if count <= 0:
            return
        if arch.mlp == "gated":
            shapes.extend([(h, inter, 2 * count), (inter, h, count)])
        else:
            shapes.extend([(h, inter, count), (inter, h, count)])

    moe = arch.moe
    if moe is None:
        mlp(arch.intermediate_size, layers)
    else:
        dense_layers, moe_layers = moe_layer_split(layers, moe)
        mlp(arch.intermediate_size, dense_layers)
        mlp(moe.expert_intermediate_size, moe_layers * moe.num_experts)
        shared = moe.shared_expert_intermediate_size or moe.expert_intermediate_size
        mlp(shared, moe_layers * moe.num_shared_experts)
    return shapes


def lora_parameters(arch: Architecture, rank: int) -> int:
    """Trainable LoRA parameters: r × (d_in + d_out) per adapted matrix, on every attention and MLP projection
    (PEFT target_modules="all-linear", the QLoRA paper's setup); the LM head and MoE routers are not adapted."""
    if rank < 1:
        raise ValueError("LoRA rank must be at least 1")
    return sum(rank * (d_in + d_out) * count for d_in, d_out, count in _linear_shapes(arch))


# --- activations -----------------------------------------------------------------------------------------------

def mlp_width(arch: Architecture) -> int:
    """Intermediate width one token passes through: dense MLP, or k routed experts plus the shared experts."""
    moe = arch.moe
    if moe is None:
        return arch.intermediate_size
    shared = (moe.shared_expert_intermediate_size or moe.expert_intermediate_size) * moe.num_shared_experts
    routed = moe.experts_per_token * moe.expert_intermediate_size + shared
    has_dense = moe.first_dense_layers or moe.interleave_moe_layer_step > 1
    return max(routed, arch.intermediate_size if has_dense else 0)


def _attention_widths(arch: Architecture) -> tuple[int, int, int]:
    """(query width, key+value width, attention-output width) per token."""
    heads = arch.num_attention_heads
    if arch.mla is not None:
        m = arch.mla
        qk = heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)
        return qk, qk + heads * m.v_head_dim, heads * m.v_head_dim
    hd = arch.head_size
    return heads * hd, 2 * arch.kv_heads * hd, heads * hd


MEM_EFFICIENT_SDPA_MIN_CC = 5.0
"""PyTorch's memory-efficient attention kernel (scaled_dot_product_attention's xformers/CUTLASS backend) runs on
CUDA compute capability 5.0 and up (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
check_mem_efficient_hardware_support: sm50-sm90, newer parts have FlashAttention)."""


def fused_attention(acc: Accelerator) -> bool:
    """Whether attention runs fused — no s × s score matrix kept per head, so activations hold no s² term. Yes
    with FlashAttention-2; on CUDA parts without it (T4, V100, P100) PyTorch's default SDPA picks its
    memory-efficient kernel, also O(s); off CUDA and ROCm the stacks bring their own fused kernels (XLA, Neuron,
    Metal, llama.cpp). ROCm without FlashAttention-2 (RDNA3, the W7900) computes attention unfused: its
    memory-efficient kernel is experimental there and off unless TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL is set
    (same file). The one place this is decided: estimate and the planner both ask it."""
    if acc.flash_attention_2 in {"yes", "not-listed"} or acc.software_stack not in {"cuda", "rocm"}:
        return True
    cc = acc.cc
    return acc.software_stack == "cuda" and cc is not None and cc >= MEM_EFFICIENT_SDPA_MIN_CC


def layer_activation_bytes(arch: Architecture, seq: int, batch: int, flash_attention: bool = True,
                           recompute: Recompute = "none") -> float:
    """Activations one layer stores for the backward pass (16-bit; see the module docstring for the formula).

    `selective` recomputes the elementwise work of the backward pass instead of storing it — the norms' outputs and
    the MLP's activation function (gated: SiLU(gate) and its product with up; plain: the activation) — as
    Megatron-Core's `recompute_modules` for the layernorm and activation do: no GEMM is run again, and a layer keeps
    its attention tensors, the MLP's GEMM outputs and the residual stream (what a layer of Llama 3.1 405B keeps falls
    from 627 to 348 kB per token)."""
    h = arch.hidden_size
    q, kv, q_out = _attention_widths(arch)
    mlp_tensors = 4 if arch.mlp == "gated" else 2
    if recompute == "selective":
        per_token = ACT_BYTES * (q + kv + q_out) + ACT_BYTES * (mlp_tensors // 2) * mlp_width(arch) \
            + 2 * ACT_BYTES * h
    else:
        per_token = ACT_BYTES * (h + q + kv + q_out) + ACT_BYTES * (h + mlp_tensors * mlp_width(arch)) \
            + 2 * ACT_BYTES * h
    scores = 0.0 if flash_attention else ACT_BYTES * arch.num_attention_heads * seq
    return seq * batch * (per_token + scores)


def pipeline_in_flight(pp: int, vp: int = 1) -> float:
    """Micro-batches' worth of all layers the first pipeline stage holds: under 1F1B it keeps pp micro-batches of
    its L/pp layers in flight (one micro-batch through all L), the interleaved schedule (1 + (pp − 1) ÷ (pp × vp))
    times that (Korthikanti et al. 2022 §4.2.3; Narayanan et al. 2021)."""
    if pp <= 1:
        return 1.0
    return 1.0 + (pp - 1) / (pp * vp) if vp > 1 else 1.0


def training_activation_bytes(arch: Architecture, seq: int, micro_batch: int, *, tp: int = 1, cp: int = 1,
                              pp: int = 1, vp: int = 1, recompute: Recompute = "full",
                              flash_attention: bool = True) -> float:
    """Activation memory of the busiest GPU for the micro-batches in flight: the first pipeline stage's L layers'
    worth (`pipeline_in_flight`), or the last stage's L/pp layers with the logits of the loss, whichever is larger;
    sequence-parallel tensor parallelism divides by tp, context parallelism by cp (each rank holds seq/cp tokens)."""
    layers = arch.num_hidden_layers
    if recompute == "full":
        full = layer_activation_bytes(arch, seq, micro_batch, flash_attention)
        stored = layers * ACT_BYTES * seq * micro_batch * arch.hidden_size
        first = stored * pipeline_in_flight(pp, vp) + full
        last = stored / pp + full
    else:
        per_layer = layer_activation_bytes(arch, seq, micro_batch, flash_attention, recompute)
        first = layers * per_layer * pipeline_in_flight(pp, vp)
        last = layers * per_layer / pp
    logits = LOGIT_BYTES * seq * micro_batch * arch.vocab_size
    return max(first if pp > 1 else 0.0, last + logits) / (tp * cp)


def inference_activation_bytes(arch: Architecture, context: int, batch: int, *, chunk_tokens: int, tp: int = 1,
                               flash_attention: bool = True) -> float:
    """Transient working set of one forward pass (nothing is kept for a backward pass).

    A pass handles at most `chunk_tokens` tokens (chunked prefill); one layer's tensors are live at a time: the
    residual stream and its normed copy (2h), Q/K/V, and the MLP's gate, up and product (3i; plain MLP 2i), 16-bit.
    Unfused attention adds the score matrix of one layer (heads × chunk × context). Sampling keeps fp32 logits of
    the last position of each sequence (batch × vocab × 4).
    """
    tokens = min(context * batch, chunk_tokens)
    q, kv, _ = _attention_widths(arch)
    mlp_tensors = 3 if arch.mlp == "gated" else 2
    per_token = ACT_BYTES * (2 * arch.hidden_size + q + kv + mlp_tensors * mlp_width(arch))
    scores = 0.0 if flash_attention else ACT_BYTES * arch.num_attention_heads * tokens * context
    logits = 4.0 * batch * arch.vocab_size
    return (tokens * per_token + scores + logits) / tp


# --- breakdowns -------------------------------------------------------------------------------------------------

def _common_notes(factors: Factors, par: Parallelism) -> list[Note]:
    notes = [
        factors.note("runtime_overhead_gb", "CUDA context, framework and library workspaces per GPU"),
        factors.note("headroom_fraction", "GPU memory kept free against allocator fragmentation (W6)"),
    ]
    if par.ep > 1:
        notes.append(Note("method.expert_parallel", f"Routed experts split over ep {par.ep} GPUs; attention and the "
                          f"other weights over tp {par.tp}, replicated in {par.ep // par.tp} attention group(s) that "
                          f"each hold the KV cache of their own sequences; pp {par.pp}",
                          source="DeepSeek-V3 technical report (EP with data-parallel attention); "
                                 "vLLM/SGLang/TensorRT-LLM expert parallelism"))
    elif par.model_shards > 1:
        notes.append(Note("method.model_parallel", f"Weights and states split evenly over tp {par.tp} × pp {par.pp} "
                          "GPUs (embeddings vocabulary-parallel; pipeline stages balanced)",
                          source="Shoeybi et al. 2019 (Megatron-LM); Narayanan et al. 2021"))
    return notes


class InferenceMemoryCurve:
    """`inference_memory` for one model, split and context, as a function of the batch alone.

    The weights, the per-sequence KV cache and the activation constants are computed once, so a search for the
    largest batch that fits probes cheaply; `inference_memory` is built on this class, so both give bit-identical
    figures (same operations in the same order).
    """

    __slots__ = ("arch", "params", "weight_bytes_per_param", "kv_bytes_per_value", "context", "par",
                 "embedding_bytes", "flash_attention", "factors", "experts", "_weights", "_kv_per_sequence", "_share",
                 "_chunk", "_act_per_token", "_score_factor", "_runtime", "_reserve", "_totals", "_notes", "models")

    def __init__(self, arch: Architecture, params: ParameterCount, *, weight_bytes_per_param: float,
                 kv_bytes_per_value: float, context: int, par: Parallelism | None = None,
                 embedding_bytes: float | None = None, flash_attention: bool = True,
                 factors: Factors = DEFAULT_FACTORS, experts: ExpertFormat | None = None, models: int = 1) -> None:
        """`models` > 1: that many distinct models of this architecture hosted side by side, each with its own
        weights; the KV cache of `batch` sequences is shared out among them."""
        if context <= 0 or models < 1:
            raise ValueError("context and batch must be positive")
        par = par or Parallelism()
        self.arch, self.params, self.par, self.factors = arch, params, par, factors
        self.weight_bytes_per_param, self.kv_bytes_per_value = weight_bytes_per_param, kv_bytes_per_value
        self.context, self.embedding_bytes, self.flash_attention = context, embedding_bytes, flash_attention
        self.experts, self.models = experts, models
        self._weights = weight_bytes(params, weight_bytes_per_param, embedding_bytes, experts) / par.model_shards * \
            models
        # kv_cache(): per_token × context × batch × per-GPU share, in that order
        self._kv_per_sequence = kv_bytes_per_sequence(arch, kv_bytes_per_value, context)
        self._share = per_gpu_share(arch, par.tp, par.pp)
        if par.ep > 1:
            # experts split over ep; the rest over tp (replicated in each attention group, which holds the KV
            # cache of its own tp/ep share of the sequences)
            routed = routed_expert_bytes(params, arch, weight_bytes_per_param, experts)
            rest = weight_bytes(params, weight_bytes_per_param, embedding_bytes, experts) - routed
            self._weights = (routed / par.ep + rest / par.tp) / par.pp * models
            self._share = self._share * par.tp / par.ep
        # inference_activation_bytes(), its batch-independent parts
        self._chunk = int(factors.prefill_chunk_tokens)
        q, kv, _ = _attention_widths(arch)
        mlp_tensors = 3 if arch.mlp == "gated" else 2
        self._act_per_token = ACT_BYTES * (2 * arch.hidden_size + q + kv + mlp_tensors * mlp_width(arch))
        self._score_factor = ACT_BYTES * arch.num_attention_heads
        # one serving process per model (vLLM and llama.cpp's servers load one model each): each has its own CUDA
        # context and engine workspaces on every GPU it uses
        self._runtime = factors.runtime_overhead_gb * GB * models
        self._reserve = activation_reserve(factors, par) * GB
        self._totals: dict[int, float] = {}
        self._notes: dict[int, tuple[Note, ...]] = {}

    def _parts(self, batch: int) -> tuple[float, float]:
        """(KV cache, activations) per GPU at `batch` sequences."""
        if batch <= 0:
            raise ValueError("context and batch must be positive")
        context = self.context
        kv = self._kv_per_sequence * batch * self._share
        tokens = min(context * batch, self._chunk)
        scores = 0.0 if self.flash_attention else self._score_factor * tokens * context
        logits = 4.0 * batch * self.arch.vocab_size
        acts = (tokens * self._act_per_token + scores + logits) / self.par.tp
        return kv, max(acts, self._reserve)

    def total(self, batch: int) -> float:
        """Bytes per GPU at `batch` sequences (`MemoryBreakdown.total`)."""
        found = self._totals.get(batch)
        if found is None:
            kv, acts = self._parts(batch)
            found = self._totals[batch] = self._weights + kv + acts + 0.0 + 0.0 + self._runtime
        return found

    def fits(self, batch: int, capacity_bytes: float) -> bool:
        """`MemoryBreakdown.fits`: the total stays below the capacity less the headroom (W6)."""
        return self.total(batch) <= capacity_bytes * (1.0 - self.factors.headroom_fraction)

    def breakdown(self, batch: int, with_notes: bool = True) -> MemoryBreakdown:
        """The full `MemoryBreakdown` at `batch` (what `inference_memory` returns)."""
        kv, acts = self._parts(batch)
        factors = self.factors
        return MemoryBreakdown(weights=self._weights, kv_cache=kv, activations=acts, gradients=0.0,
                               optimizer_states=0.0, runtime_overhead=self._runtime,
                               headroom_fraction=factors.headroom_fraction,
                               notes=self.notes(batch) if with_notes else ())

    def notes(self, batch: int) -> tuple[Note, ...]:
        """The notes of `breakdown(batch)` (written once per batch: a search shares the curve across accelerators)."""
        found = self._notes.get(batch)
        if found is not None:
            return found
        factors, params, par = self.factors, self.params, self.par
        experts = self.experts
        if experts is None:
            weights_note = Note("method.weights", f"Weights = {params.total:,} parameters × "
                                f"{self.weight_bytes_per_param:g} B (all experts resident, W13; quantization scales "
                                "included in the format's effective bits)", source="S1 (002, 003)")
        else:
            weights_note = Note("method.weights", f"Weights, per-tensor mixed precision as published: "
                                f"{experts.params:,} routed-expert matrix parameters × {experts.bytes_per_weight:g} B "
                                f"({experts.precision}, scales included) + {params.total - experts.params:,} other "
                                f"parameters × {self.weight_bytes_per_param:g} B (attention, router, embeddings, "
                                "biases, norms; all experts resident, W13)", source="S1 (002, 003); model config")
        notes = (
            weights_note,
            *kv_cache(self.arch, self.context, batch, self.kv_bytes_per_value, tp=par.tp, pp=par.pp).notes,
            Note("method.inference_activations", "Inference activations are transient: one layer's tensors for "
                 "a prefill chunk, plus fp32 logits of the last position"
                 + ("" if self.flash_attention else "; unfused attention adds one layer's score matrix"),
                 source="gpuadvisor sizing (memory.py)"),
            factors.note("prefill_chunk_tokens", "Tokens per prefill forward pass (chunked prefill)"),
            *_reserve_notes(self._reserve),
            *_common_notes(factors, par),
            *((Note("method.models", f"{self.models} models side by side, each served by its own process (a "
                    "vLLM or llama.cpp server loads one model): its weights and its runtime overhead each",
                    source="gpuadvisor sizing (memory.py)"),) if self.models > 1 else ()),
        )
        self._notes[batch] = notes
        return notes


def activation_reserve(factors: Factors, par: Parallelism) -> float:
    """GB per GPU the serving engine holds back for its activations, CUDA graphs and metadata in a replica split as
    `par` (0 without such a reserve): the one-GPU reserve, plus its share per further GPU of the replica, plus the
    larger graphs captured from 4-way tensor parallelism up (engines.toml `static_memory`)."""
    if factors.activation_reserve_gb <= 0.0:
        return 0.0
    tp = max(par.tp, par.ep)  # an expert-parallel replica's engine runs tensor-parallel over all its GPUs
    return (factors.activation_reserve_gb + factors.activation_reserve_per_gpu_gb * (tp * par.pp - 1)
            + (factors.activation_reserve_wide_gb if tp >= 4 else 0.0))


def _reserve_notes(reserve: float) -> tuple[Note, ...]:
    if reserve <= 0.0:
        return ()
    return (Note("method.activation_reserve", f"Activations: the engine holds back {reserve / GB:.2f} GB per GPU for "
                 "its activations, CUDA graphs and metadata whatever they need (SGLang: the memory its default "
                 "mem_fraction_static leaves beside the weights and KV cache pool)",
                 source="SGLang server arguments (mem_fraction_static; server_args.py _handle_gpu_memory_settings)"),)


def inference_memory(arch: Architecture, params: ParameterCount, *, weight_bytes_per_param: float,
                     kv_bytes_per_value: float, context: int, batch: int, par: Parallelism | None = None,
                     embedding_bytes: float | None = None, flash_attention: bool = True,
                     factors: Factors = DEFAULT_FACTORS, with_notes: bool = True,
                     experts: ExpertFormat | None = None) -> MemoryBreakdown:
    """Serving memory per GPU: weights + KV cache (context × batch) + transient activations + runtime (S2).

    `with_notes=False` skips writing the explanatory notes (a configuration search evaluates many candidates and
    explains only the one it keeps; one probing many batches uses `InferenceMemoryCurve` directly)."""
    if context <= 0 or batch <= 0:
        raise ValueError("context and batch must be positive")
    curve = InferenceMemoryCurve(arch, params, weight_bytes_per_param=weight_bytes_per_param,
                                 kv_bytes_per_value=kv_bytes_per_value, context=context, par=par,
                                 embedding_bytes=embedding_bytes, flash_attention=flash_attention, factors=factors,
                                 experts=experts)
    return curve.breakdown(batch, with_notes)


def training_memory(arch: Architecture, params: ParameterCount, *, method: Method = "full",
                    optimizer: Optimizer = "adamw", weight_bits: float = 16.0, grad_precision: GradPrecision = "bf16",
                    seq: int, micro_batch: int, par: Parallelism | None = None, recompute: Recompute = "full",
                    flash_attention: bool = True, lora_rank: int = 16,
                    factors: Factors = DEFAULT_FACTORS, with_notes: bool = True) -> MemoryBreakdown:
    """Training / fine-tuning memory per GPU.

    `weight_bits` is the stored width of the weights: 16 (bf16/fp16 mixed precision) or 32 (pure fp32) for full
    training and LoRA's frozen base; the 4-bit format's effective bits (NF4 with double quantization ≈ 4.127) for
    QLoRA, whose embeddings and LM head stay in 16-bit as bitsandbytes leaves them.
    """
    par = par or Parallelism()
    if optimizer not in OPTIMIZER_BYTES_MIXED:
        raise ValueError(f"unknown optimizer {optimizer!r}")
    shards = par.model_shards
    notes: list[Note] = []
    if method == "full":
        if weight_bits >= 32:
            w_b, g_b, o_b = 4.0, 4.0, OPTIMIZER_BYTES_FP32[optimizer]
            notes.append(Note("method.training_bytes", f"Pure fp32 {optimizer}: weights 4 + gradients 4 + states "
                              f"{o_b:g} = {w_b + g_b + o_b:g} bytes/param", source="Rajbhandari et al. 2020 (ZeRO)"))
        else:
            w_b, g_b, o_b = 2.0, 4.0 if grad_precision == "fp32" else 2.0, OPTIMIZER_BYTES_MIXED[optimizer]
            notes.append(_mixed_note(optimizer, g_b, o_b))
        n = params.total
        weights = n * w_b / shards / par.shard(3)
        grads = n * g_b / shards / par.shard(2)
        opt = n * o_b / shards / par.shard(1)
    elif method in ("lora", "qlora"):
        n_a = lora_parameters(arch, lora_rank)
        base_bytes = weight_bits / 8.0
        base = weight_bytes(params, base_bytes, 2.0 if method == "qlora" else None)
        weights = (base + n_a * ADAPTER_WEIGHT_BYTES) / shards / par.shard(3)
        grads = n_a * ADAPTER_GRAD_BYTES / shards / par.shard(2)
        opt = n_a * ADAPTER_STATE_BYTES[optimizer] / shards / par.shard(1)
        base_text = (f"NF4/4-bit base at {weight_bits:g} effective bits, embeddings and LM head in 16-bit"
                     if method == "qlora" else f"frozen {weight_bits:g}-bit base")
        notes.append(Note("method.lora", f"{method.upper()}: {base_text}; adapters of rank {lora_rank} on every "
                          f"attention and MLP projection = r × (d_in + d_out) per matrix = {n_a:,} parameters, "
                          f"trained in fp32 (weights 4 + gradients 4 + {optimizer} states "
                          f"{ADAPTER_STATE_BYTES[optimizer]:g} bytes each); no gradients or states for the base",
                          value=float(n_a), source="Hu et al. 2021 (LoRA); Dettmers et al. 2023 (QLoRA); PEFT"))
    else:
        raise ValueError(f"unknown method {method!r}")
    acts = training_activation_bytes(arch, seq, micro_batch, tp=par.tp, cp=par.cp, pp=par.pp, vp=par.vp,
                                     recompute=recompute, flash_attention=flash_attention)
    if not with_notes:
        return MemoryBreakdown(weights=weights, kv_cache=0.0, activations=acts, gradients=grads, optimizer_states=opt,
                               runtime_overhead=factors.runtime_overhead_gb * GB,
                               headroom_fraction=factors.headroom_fraction, notes=())
    notes.append(Note("method.activations", (
        "Activations per layer: Korthikanti et al. 2022 Eq. 1 adapted to GQA, gated MLP, no dropout "
        + ("(FlashAttention: no s² score term)" if flash_attention else "(unfused attention: 2·a·s² score term)")
        + {"full": "; full recomputation keeps 2·s·b·h per layer plus one layer being recomputed",
           "selective": "; selective recomputation reruns the norms and the MLP's activation function (no GEMM)",
           "none": "; no recomputation: every layer's activations kept"}[recompute]),
        source="Korthikanti et al. 2022 (arXiv 2205.05198)"))
    # the part every layout shares, a note of its own so that a report listing many layouts holds it once
    notes.append(Note("method.activation_split", (
        "Activations divided by tp (sequence parallel) and cp (context parallel); 1F1B pipelines keep one "
        "micro-batch's worth of all layers on the first stage (interleaved: × (1 + (pp − 1)/(pp·vp))); logits "
        "6 B per vocabulary entry per token on the last stage"), source="Korthikanti et al. 2022 (arXiv 2205.05198)"))
    if par.replicas > 1 and par.zero:
        notes.append(Note("method.zero", f"ZeRO stage {par.zero} (stage 1 = Megatron's distributed optimizer): "
                          "optimizer states"
                          + (", gradients" if par.zero >= 2 else "") + (" and weights (= FSDP full sharding)"
                                                                        if par.zero >= 3 else "")
                          + f" divided by the {par.replicas} ranks holding the same weights (data × context parallel)",
                          source="Rajbhandari et al. 2020 (ZeRO); S11"))
    notes.extend(_common_notes(factors, par))
    return MemoryBreakdown(weights=weights, kv_cache=0.0, activations=acts, gradients=grads, optimizer_states=opt,
                           runtime_overhead=factors.runtime_overhead_gb * GB,
                           headroom_fraction=factors.headroom_fraction, notes=tuple(notes))


def _mixed_note(optimizer: str, grad_bytes: float, opt_bytes: float) -> Note:
    total = 2 + grad_bytes + opt_bytes
    states = {"adamw": "fp32 master 4 + m 4 + v 4", "sgd": "fp32 master 4 + momentum 4",
              "adam8bit": "fp32 master 4 + 8-bit m 1 + 8-bit v 1"}[optimizer]
    text = (f"Mixed-precision {optimizer}: bf16 weights 2 + {'fp32' if grad_bytes == 4 else 'bf16'} gradients "
            f"{grad_bytes:g} + {states} = {total:g} bytes/param")
    if optimizer == "adamw":
        text += (" (ZeRO paper's 16 B/param; document 002 counts 18 with fp32 gradients; 000's '4× FP16 weights' "
                 "= 8 B/param omits the fp32 master copy and full-width moments and undercounts)")
    return Note("method.training_bytes", text, value=total, source="Rajbhandari et al. 2020 (ZeRO) §3.1; S4")


# NVIDIA MIG User Guide, "Supported MIG Profiles" (A100 80GB, H100, H200, B200): a GPU instance of g compute slices
# gets this many eighths of the memory (1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb on an 80 GB part).
MIG_MEMORY_EIGHTHS = {1: 1, 2: 2, 3: 4, 4: 4, 7: 8}


def mig_slice_bytes(capacity_bytes: float, mig_instances: int, models: int) -> float | None:
    """Memory of the MIG instance each of `models` models gets on a part of `mig_instances` compute slices, the
    largest profile of which `models` fit side by side (2 models: 3g each; 3: 2g; 4 to 7: 1g); None when the part
    has no MIG or more models than slices."""
    if mig_instances < 2 or models < 2 or models > mig_instances:
        return None
    g = max(k for k in MIG_MEMORY_EIGHTHS if k * models <= mig_instances)
    return capacity_bytes * MIG_MEMORY_EIGHTHS[g] / 8


def per_model_bytes(memory: MemoryBreakdown, models: int) -> float:
    """What one of `models` models hosted together needs alone (in its own MIG instance): its share of the weights,
    KV cache and activations, and its own process's runtime overhead (the breakdown holds one per model)."""
    shared = memory.weights + memory.kv_cache + memory.activations
    return (shared + memory.runtime_overhead) / max(1, models)
