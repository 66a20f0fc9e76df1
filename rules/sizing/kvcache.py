"""KV-cache size (S3, W5): what autoregressive decoding keeps per token, per sequence and per GPU.

Standard attention (MHA/GQA/MQA) caches a key and a value vector per KV head per layer:
    bytes/token = 2 × layers × kv_heads × head_dim × bytes_per_value.
Multi-head latent attention (DeepSeek-V2/V3) caches one compressed latent plus the shared RoPE key per layer:
    bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes_per_value.
Local attention (sliding-window or chunked: Gemma 3's 5 local : 1 global, gpt-oss's alternating 128-token window,
Mistral 7B v0.1) keeps at most `sliding_window` tokens in a local layer, so one sequence of `context` tokens holds
    per-layer bytes × (global layers × context + local layers × min(context, sliding_window)).
The documents' 70B example (002) omits the KV-head count from the formula but its ≈85 GB result matches 8 KV heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing.factors import Note


@dataclass(frozen=True)
class KVCache:
    """KV cache of `batch` sequences of `context` tokens; bytes are totals unless named per_gpu."""

    kind: str
    """MHA, GQA, MQA or MLA."""
    bytes_per_value: float
    bytes_per_token: float
    """All layers, keys and values, one token of one sequence."""
    context: int
    batch: int
    total_bytes: float
    per_gpu_bytes: float
    """Share held by one GPU under tensor parallelism `tp` and pipeline parallelism `pp`."""
    notes: tuple[Note, ...]


def attention_kind(arch: Architecture) -> str:
    """MHA, GQA, MQA or MLA."""
    if arch.mla is not None:
        return "MLA"
    if arch.kv_heads == arch.num_attention_heads:
        return "MHA"
    return "MQA" if arch.kv_heads == 1 else "GQA"


def kv_bytes_per_token(arch: Architecture, bytes_per_value: float) -> float:
    """Cache bytes one token adds across all layers (see the module docstring for both formulas)."""
    if bytes_per_value <= 0:
        raise ValueError("bytes_per_value must be positive")
    if arch.mla is not None:
        latent = arch.num_hidden_layers * (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * bytes_per_value
        return latent + indexer_bytes_per_token(arch)
    return 2 * arch.num_hidden_layers * arch.kv_heads * arch.head_size * bytes_per_value


def indexer_bytes_per_token(arch: Architecture) -> int:
    """DeepSeek-V3.2's indexer key cache, all layers: one FP8 key of index_head_dim plus an FP32 scale per 128
    values, whatever the KV-cache format (the reference implementation's k_cache and k_scale_cache)."""
    ix = arch.indexer
    if ix is None:
        return 0
    return arch.num_hidden_layers * (ix.index_head_dim + 4 * -(-ix.index_head_dim // 128))


def kv_bytes_per_sequence(arch: Architecture, bytes_per_value: float, context: int) -> float:
    """Cache bytes of one sequence of `context` tokens: local layers stop growing at `sliding_window` tokens."""
    if context <= 0:
        raise ValueError("context must be positive")
    per_token = kv_bytes_per_token(arch, bytes_per_value)
    local = arch.local_layers
    if not local or arch.sliding_window is None:
        return per_token * context
    per_layer = per_token / arch.num_hidden_layers
    held = (arch.num_hidden_layers - local) * context + local * min(context, arch.sliding_window)
    return per_layer * held


def attended_tokens(arch: Architecture, context: int) -> int:
    """Key positions all layers together hold (and a new token attends to) at `context`: local layers stop at
    `sliding_window`. Equals layers × context for full-attention models."""
    local = arch.local_layers
    if not local or arch.sliding_window is None:
        return arch.num_hidden_layers * context
    return (arch.num_hidden_layers - local) * context + local * min(context, arch.sliding_window)


def causal_attention_pairs(arch: Architecture, tokens: int) -> int:
    """Query-key pairs of a causal prefill of `tokens`, summed over layers, counted as s² per full layer (the
    prefill FLOP formula's convention); a local layer of window w < s attends 2·w·s − w² pairs on that scale."""
    full = tokens * tokens
    local = arch.local_layers
    window = arch.sliding_window
    if not local or window is None or tokens <= window:
        return arch.num_hidden_layers * full
    return (arch.num_hidden_layers - local) * full + local * (2 * window * tokens - window * window)


def per_gpu_share(arch: Architecture, tp: int, pp: int) -> float:
    """Fraction of the cache one GPU holds.

    Tensor parallelism splits KV heads across ranks; when there are fewer KV heads than ranks each rank still holds
    one head (replication), and MLA's single latent is replicated on every rank. Pipeline parallelism splits layers.
    """
    if arch.mla is not None:
        head_share = 1.0
    else:
        head_share = math.ceil(arch.kv_heads / tp) / arch.kv_heads
    return head_share / pp


def read_replication(arch: Architecture, tp: int) -> float:
    """How many times the even 1/tp split one rank of a tensor-parallel group holds and reads of the cache: 1 when
    the KV heads divide among the ranks, tp for an MLA latent (every rank holds all of it), more than 1 when there
    are fewer KV heads than ranks."""
    return per_gpu_share(arch, tp, 1) * tp


def request_kv_tokens(context: int, input_tokens: int, output_tokens: int) -> int:
    """Tokens of KV cache one request holds at its end: its prompt plus its output, capped by the context."""
    return max(1, min(context, input_tokens + output_tokens))


def kv_cache(arch: Architecture, context: int, batch: int, bytes_per_value: float, tp: int = 1,
             pp: int = 1) -> KVCache:
    """The cache for `batch` concurrent sequences holding `context` tokens each (a request's prompt and output,
    capped by the model's context; plan for the peak concurrency, W5)."""
    if context <= 0 or batch <= 0:
        raise ValueError("context and batch must be positive")
    if tp <= 0 or pp <= 0:
        raise ValueError("tp and pp must be positive")
    per_token = kv_bytes_per_token(arch, bytes_per_value)
    total = kv_bytes_per_sequence(arch, bytes_per_value, context) * batch
    kind = attention_kind(arch)
    if arch.mla is not None:
        formula = (f"MLA: layers {arch.num_hidden_layers} × (kv_lora_rank {arch.mla.kv_lora_rank} + rope "
                   f"{arch.mla.qk_rope_head_dim}) × {bytes_per_value:g} B")
        if arch.indexer is not None:
            formula += f" + sparse-attention indexer keys {indexer_bytes_per_token(arch):,} B (FP8)"
    else:
        formula = (f"{kind}: 2 × layers {arch.num_hidden_layers} × KV heads {arch.kv_heads} × head dim "
                   f"{arch.head_size} × {bytes_per_value:g} B")
    local = arch.local_layers
    if local and arch.sliding_window is not None:
        span = (f"× context {context} on {arch.num_hidden_layers - local} global layers and × "
                f"min(context, window {arch.sliding_window:,}) on {local} local layers")
    else:
        span = f"× {context:,} tokens a sequence"
    notes = (
        Note("method.kv_cache", f"KV cache per token = {formula} = {per_token:,.0f} B; {span} "
             f"× batch {batch} (each request's prompt and output, at the peak concurrency, W5)", source="002 (S3)"),
    )
    return KVCache(kind=kind, bytes_per_value=bytes_per_value, bytes_per_token=per_token, context=context,
                   batch=batch, total_bytes=total, per_gpu_bytes=total * per_gpu_share(arch, tp, pp), notes=notes)
