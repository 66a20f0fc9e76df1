"""KV cache (S3, W5): the documents' worked example, GQA/MQA/MLA, precision and tensor-parallel share."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuadvisor.knowledge.schema import MLA, Architecture, MoE
from gpuadvisor.rules.sizing.kvcache import (
    attended_tokens,
    attention_kind,
    causal_attention_pairs,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_cache,
    per_gpu_share,
    read_replication,
)

# Llama 2/3 70B (reference README correction 15): 80 layers, hidden 8192, 64 heads, 8 KV heads, head dim 128.
LLAMA_70B = Architecture(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                         num_attention_heads=64, num_key_value_heads=8)
LLAMA2_7B = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32)
# DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64.
DEEPSEEK_V3 = Architecture(
    vocab_size=129280, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61, num_attention_heads=128,
    num_key_value_heads=128,
    mla=MLA(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128),
    moe=MoE(num_experts=256, experts_per_token=8, num_shared_experts=1, expert_intermediate_size=2048,
            first_dense_layers=3),
)


def test_002_worked_example_70b_8k_batch_32() -> None:
    # 2 × 80 layers × 8 KV heads × 128 × 2 B = 327,680 B/token; × 8192 × 32 = 85,899,345,920 B ≈ 86 GB.
    # 002 writes the formula without the KV-head count but its "~85 GB" is this number.
    kv = kv_cache(LLAMA_70B, context=8192, batch=32, bytes_per_value=2)
    assert kv.bytes_per_token == 327_680
    assert kv.total_bytes == 85_899_345_920
    assert kv.kind == "GQA"


def test_002_worked_example_4k_is_half() -> None:
    # 002 (W5): the same 70B at 4096 tokens × 32 requests ≈ 42 GB.
    assert kv_cache(LLAMA_70B, 4096, 32, 2).total_bytes / 1e9 == pytest.approx(42.9, abs=0.05)


def test_mha_7b() -> None:
    # Llama 2 7B (MHA): 2 × 32 × 32 × 128 × 2 B = 524,288 B per token, 0.5 MB.
    assert kv_bytes_per_token(LLAMA2_7B, 2) == 524_288
    assert attention_kind(LLAMA2_7B) == "MHA"


def test_mla_deepseek_v3_latent_cache() -> None:
    # 61 × (512 + 64) × 2 B = 70,272 B per token, vs 2 × 61 × 128 × 128 × 2 = 3,997,696 B had it been MHA.
    assert kv_bytes_per_token(DEEPSEEK_V3, 2) == 70_272
    assert attention_kind(DEEPSEEK_V3) == "MLA"


def test_mqa() -> None:
    mqa = LLAMA2_7B.model_copy(update={"num_key_value_heads": 1})
    assert attention_kind(mqa) == "MQA"
    assert kv_bytes_per_token(mqa, 2) == kv_bytes_per_token(LLAMA2_7B, 2) / 32


def test_fp8_kv_halves_the_cache() -> None:
    assert kv_bytes_per_token(LLAMA_70B, 1) * 2 == kv_bytes_per_token(LLAMA_70B, 2)


def test_tensor_parallel_share() -> None:
    assert per_gpu_share(LLAMA_70B, tp=8, pp=1) == 1 / 8
    # 16 ranks but 8 KV heads: each rank still holds a whole head (replicated), so 1/8, not 1/16.
    assert per_gpu_share(LLAMA_70B, tp=16, pp=1) == 1 / 8
    assert per_gpu_share(LLAMA_70B, tp=4, pp=2) == 1 / 8
    # MLA's single latent is replicated on every tensor-parallel rank.
    assert per_gpu_share(DEEPSEEK_V3, tp=8, pp=1) == 1.0


def test_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        kv_cache(LLAMA_70B, context=0, batch=1, bytes_per_value=2)
    with pytest.raises(ValueError):
        kv_bytes_per_token(LLAMA_70B, 0)


@given(context=st.integers(1, 1_000_000), batch=st.integers(1, 1024), extra=st.integers(1, 1000))
def test_grows_with_context_and_batch(context: int, batch: int, extra: int) -> None:
    base = kv_cache(LLAMA_70B, context, batch, 2).total_bytes
    assert kv_cache(LLAMA_70B, context + extra, batch, 2).total_bytes > base
    assert kv_cache(LLAMA_70B, context, batch + extra, 2).total_bytes > base
    assert base == kv_bytes_per_token(LLAMA_70B, 2) * context * batch


# --- local (sliding-window) / global attention ------------------------------------------------------------------

# google/gemma-3-27b-it text_config: 62 layers, 16 KV heads of 128, sliding_window 1024, sliding_window_pattern 6.
GEMMA3_27B = Architecture(vocab_size=262208, hidden_size=5376, intermediate_size=21504, num_hidden_layers=62,
                          num_attention_heads=32, num_key_value_heads=16, head_dim=128, tie_word_embeddings=True,
                          norms_per_layer=4, qk_norm=True, sliding_window=1024, sliding_window_pattern=6)
# openai/gpt-oss-120b: 36 layers alternating sliding (128) and full attention, 8 KV heads of 64.
GPT_OSS_120B = Architecture(vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36,
                            num_attention_heads=64, num_key_value_heads=8, head_dim=64, sliding_window=128,
                            layer_types=["sliding_attention", "full_attention"] * 18)


def test_gemma3_27b_32k_by_hand() -> None:
    # Per layer per token (bf16): 2 (K, V) x 16 KV heads x 128 x 2 B = 8,192 B. Layers 5, 11, ..., 59 are global
    # ((i + 1) % 6 == 0): 10 layers hold all 32,768 tokens; the other 52 hold their 1,024-token window.
    # 10 x 32,768 x 8,192 + 52 x 1,024 x 8,192 = 2,684,354,560 + 436,207,616 = 3,120,562,176 B (3.12 GB),
    # against 62 x 32,768 x 8,192 = 16,642,998,272 B if every layer were global.
    assert GEMMA3_27B.local_layers == 52
    kv = kv_cache(GEMMA3_27B, context=32768, batch=1, bytes_per_value=2)
    assert kv.bytes_per_token == 62 * 8192
    assert kv.total_bytes == 3_120_562_176
    assert kv_cache(GEMMA3_27B, context=32768, batch=4, bytes_per_value=2).total_bytes == 4 * 3_120_562_176
    assert "52 local layers" in kv.notes[0].text


def test_gpt_oss_half_the_layers_stop_at_128_tokens() -> None:
    # 2 x 8 x 64 x 2 B = 2,048 B per layer per token; 18 full layers x 131,072 + 18 sliding layers x 128.
    assert kv_bytes_per_sequence(GPT_OSS_120B, 2, 131072) == 2048 * (18 * 131072 + 18 * 128)


@given(st.integers(min_value=1, max_value=1024))
def test_within_the_window_local_layers_cost_the_same(context: int) -> None:
    full = GEMMA3_27B.model_copy(update={"sliding_window": None, "sliding_window_pattern": None})
    assert kv_bytes_per_sequence(GEMMA3_27B, 2, context) == kv_bytes_per_sequence(full, 2, context)
    assert kv_bytes_per_sequence(GEMMA3_27B, 2, context + 5000) < kv_bytes_per_sequence(full, 2, context + 5000)


def test_attention_spans() -> None:
    assert attended_tokens(GEMMA3_27B, 32768) == 10 * 32768 + 52 * 1024
    assert attended_tokens(LLAMA_70B, 4096) == 80 * 4096
    # prefill pairs: s² per global layer; a window-w layer 2ws − w² (same s² convention)
    assert causal_attention_pairs(GPT_OSS_120B, 1000) == 18 * 1000**2 + 18 * (2 * 128 * 1000 - 128**2)
    assert causal_attention_pairs(GPT_OSS_120B, 100) == 36 * 100**2


def test_deepseek_v32_indexer_keys_add_to_the_mla_cache() -> None:
    from gpuadvisor.knowledge.schema import Indexer

    v32 = DEEPSEEK_V3.model_copy(update={"indexer": Indexer(index_n_heads=64, index_head_dim=128, index_topk=2048)})
    # MLA latent 61 x (512 + 64) x 2 B = 70,272 B, plus 61 x (128 B FP8 key + 4 B FP32 scale) = 8,052 B
    assert kv_bytes_per_token(DEEPSEEK_V3, 2) == 70_272
    assert kv_bytes_per_token(v32, 2) == 70_272 + 8_052
    assert "indexer keys 8,052 B" in kv_cache(v32, 1024, 1, 2).notes[0].text
    with pytest.raises(ValueError, match="needs mla"):
        LLAMA_70B.model_validate({**LLAMA_70B.model_dump(), "indexer": {"index_n_heads": 64, "index_head_dim": 128,
                                                                          "index_topk": 2048}})


def test_layer_types_are_validated() -> None:
    with pytest.raises(ValueError, match="layer_types lists 2 layers"):
        Architecture(vocab_size=10, hidden_size=8, intermediate_size=8, num_hidden_layers=3, num_attention_heads=2,
                     sliding_window=4, layer_types=["sliding_attention", "full_attention"])
    with pytest.raises(ValueError, match="need sliding_window"):
        Architecture(vocab_size=10, hidden_size=8, intermediate_size=8, num_hidden_layers=6, num_attention_heads=2,
                     sliding_window_pattern=6)


@pytest.mark.parametrize(("arch", "tp", "times"), [
    (LLAMA_70B, 8, 1.0),  # 8 KV heads, one a rank
    (LLAMA_70B, 16, 2.0),  # 16 ranks share 8 heads: each head held by 2
    (LLAMA2_7B, 8, 1.0),
    (DEEPSEEK_V3, 8, 8.0),  # the latent is whole on every rank
    (DEEPSEEK_V3, 1, 1.0),
])
def test_read_replication_counts_what_a_rank_holds_beyond_1_over_tp(arch: Architecture, tp: int,
                                                                     times: float) -> None:
    assert read_replication(arch, tp) == times
