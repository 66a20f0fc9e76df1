"""A plausible transformer shape for a bare parameter count (`--params 70B`).

Memory and speed need layers, KV heads and head size, not just a count. For a bare size we build a Llama-3-like
decoder: head dim 128, grouped-query attention with 8 KV heads (the largest divisor of the head count up to 8), a gated
(SwiGLU) MLP of 3.5 × hidden, RMSNorm, vocabulary 128,256 (32,000 below 1B), embeddings tied below 5B as in
Llama 3.2 1B/3B. The hidden size follows the Llama family by size class (3B: 3072, 8B: 4096, 13B: 5120,
33B-class: 7168, 70B: 8192, 405B: 16384); layers are then solved so the exact count is within 2% of the requested size.
Sizes the table cannot hit within 2% (very small models) search all hidden sizes for the one whose hidden/layers
ratio is closest to Llama 3's ≈128. The result is flagged as synthesized wherever it is reported.
"""

from __future__ import annotations

import math

from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing.params import count_parameters

HEAD_DIM = 128
KV_HEADS = 8
MLP_RATIO = 3.5
TARGET_ASPECT = 128.0
TOLERANCE = 0.02
_HIDDEN_CANDIDATES = (256, 512, 768, *range(1024, 32768 + 1, 1024))
_LLAMA_HIDDEN = ((2e9, 2048), (5e9, 3072), (10e9, 4096), (20e9, 5120), (45e9, 7168), (120e9, 8192), (250e9, 12288),
                 (700e9, 16384), (1.5e12, 20480),
                 (float("inf"), 25600))
"""(largest size, hidden size) by size class, after Llama 3.2 1B/3B, Llama 3 8B/70B/405B, Llama 2 13B; 7168 (56 heads)
for the 33B class keeps the head count a multiple of 8."""


def _shape(hidden: int, layers: int, vocab: int, tied: bool) -> Architecture:
    heads = max(1, hidden // HEAD_DIM)
    kv = max(d for d in range(1, KV_HEADS + 1) if heads % d == 0)
    intermediate = max(256, int(round(MLP_RATIO * hidden / 256)) * 256)
    return Architecture(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv, head_dim=HEAD_DIM if hidden >= HEAD_DIM else None,
        tie_word_embeddings=tied, mlp="gated", norm="rmsnorm",
    )


MAX_SYNTHESIZED = 1e14
"""Largest bare size sized (the answers' params_b bound too): beyond it no plausible shape (at most 10,000 layers of
hidden 32,768) holds the count."""


def _layers_for(params: float, hidden: int, vocab: int, tied: bool) -> int:
    one = count_parameters(_shape(hidden, 1, vocab, tied)).total
    two = count_parameters(_shape(hidden, 2, vocab, tied)).total
    per_layer, fixed = two - one, one - (two - one)
    return max(1, int(round((params - fixed) / per_layer)))


def synthesize_architecture(params: float) -> Architecture:
    """A Llama-3-like Architecture whose exact parameter count is within 2% of `params` (≥ 50M).

    Uses the Llama hidden size of the size class; otherwise, among hidden sizes that reach the tolerance, the one
    whose hidden/layers ratio is closest to 128.
    """
    if not math.isfinite(params) or params < 5e7:
        raise ValueError(f"cannot synthesize a transformer of {params:g} parameters (need at least 50M)")
    if params > MAX_SYNTHESIZED:
        raise ValueError(f"cannot synthesize a transformer of {params:g} parameters (at most 100T: a plausible "
                         "shape stops there)")
    vocab = 128_256 if params >= 1e9 else 32_000
    tied = params < 5e9
    hidden = next(h for limit, h in _LLAMA_HIDDEN if params <= limit)
    arch = _shape(hidden, _layers_for(params, hidden, vocab, tied), vocab, tied)
    if abs(count_parameters(arch).total - params) / params <= TOLERANCE:
        return arch
    best: tuple[float, float, Architecture] | None = None
    for hidden in _HIDDEN_CANDIDATES:
        layers = _layers_for(params, hidden, vocab, tied)
        arch = _shape(hidden, layers, vocab, tied)
        error = abs(count_parameters(arch).total - params) / params
        aspect = abs(math.log((hidden / layers) / TARGET_ASPECT))
        key = (0.0 if error <= TOLERANCE else error, aspect)
        if best is None or key < best[:2]:
            best = (key[0], key[1], arch)
    assert best is not None
    return best[2]


def describe_synthesis(params: float, arch: Architecture) -> str:
    """One line for the assumptions list."""
    return (f"Synthesized Llama-3-like shape for a bare size of {params / 1e9:.3g}B parameters: "
            f"{arch.num_hidden_layers} layers, hidden {arch.hidden_size}, {arch.num_attention_heads} heads / "
            f"{arch.kv_heads} KV heads (GQA), head dim {arch.head_size}, gated MLP {arch.intermediate_size}, "
            f"vocabulary {arch.vocab_size}{', tied embeddings' if arch.tie_word_embeddings else ''}. Real models of "
            "this size differ; give --model or --model-config for exact figures.")
