"""Weight GEMM kernels one decode pass launches per layer: what an engine's fixed per-layer cost scales with (issue 43).

An engine profile's `overhead_per_layer_us` (engines.toml) is fitted on dense Llama-class rows, where every layer runs
the same four weight GEMMs. Its fixed part (each GEMM's launch, pipeline fill and last wave, and the small kernels
around it) is paid per GEMM, so a layer that runs more GEMMs costs more: a DeepSeek-V3 layer (multi-head latent
attention and a routed MoE with a shared expert) runs 2.5 times the GEMMs of a Llama layer, and a mixture of experts'
small-batch decode, whose bytes are few, is slower than its bytes say on every engine (CUDA graphs, ROCm, Metal).

GEMMs are counted as the engines fuse them (vLLM, SGLang and TensorRT-LLM fuse QKV and gate-up; the routed experts
run as one grouped GEMM per matrix):

    GQA attention   fused QKV, output: 2
    MLA attention   query down- and up-projection, latent down-projection, absorbed latent up-projection, output: 5
                    (4 without a query low rank); a sparse-attention indexer adds its query and weights GEMMs (2)
    dense MLP       fused gate-up, down: 2
    routed MoE      router, grouped gate-up, grouped down (vLLM's fused_experts: two invoke_fused_moe_kernel calls
                    around silu_and_mul): 3; a shared expert adds its gate-up and down (2)

Llama 4 GEMMs a layer (`DENSE_LAYER_GEMMS`), Mixtral, Qwen3-MoE and gpt-oss 5, DeepSeek-V3 10 (7 in its 3 dense layers).
"""

from __future__ import annotations

from gpuadvisor.knowledge.schema import Architecture

DENSE_LAYER_GEMMS = 4
"""Weight GEMMs of the reference layer the profiles' per-layer cost is fitted on (Llama: fused QKV, output, fused
gate-up, down; vllm/model_executor/models/llama.py: qkv_proj, o_proj, gate_up_proj, down_proj)."""


def attention_gemms(arch: Architecture) -> int:
    """Weight GEMMs of one layer's attention in a decode pass."""
    if arch.mla is None:
        return 2
    gemms = 5 if arch.mla.q_lora_rank else 4
    return gemms + (2 if arch.indexer is not None else 0)


def ffn_gemms(arch: Architecture, moe_layer: bool) -> int:
    """Weight GEMMs of one layer's feed-forward block: a gated MLP 2, a routed MoE 3 (+2 with a shared expert)."""
    moe = arch.moe
    if not moe_layer or moe is None:
        return 2
    return 3 + (2 if moe.num_shared_experts else 0)


def layer_gemms(arch: Architecture, moe_layer: bool) -> int:
    """Weight GEMMs one layer runs in a decode pass: Llama 4, Mixtral 5, a DeepSeek-V3 MoE layer 10."""
    return attention_gemms(arch) + ffn_gemms(arch, moe_layer)


def model_gemms(arch: Architecture, dense_layers: int, moe_layers: int) -> int:
    """Weight GEMMs of one forward pass: every layer's and the LM head (1). Llama 3.1 8B 129, a Llama 70B 321."""
    if dense_layers < 0 or moe_layers < 0:
        raise ValueError("layer counts must be non-negative")
    return dense_layers * layer_gemms(arch, False) + moe_layers * layer_gemms(arch, True) + 1


def overhead_layers(arch: Architecture, dense_layers: int, moe_layers: int) -> float:
    """The model's layers counted in reference dense layers of fixed cost: Σ GEMMs per layer ÷ `DENSE_LAYER_GEMMS`.
    Llama 3.1 8B: 32; Mixtral 8x7B: 40 (32 layers × 1.25); DeepSeek-V3: 3 dense layers × 1.75 + 58 MoE layers × 2.5 =
    150.25 (2.46 times its 61 layers)."""
    return (model_gemms(arch, dense_layers, moe_layers) - 1) / DENSE_LAYER_GEMMS
