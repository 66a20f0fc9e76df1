"""Exact parameter counting: hand arithmetic for each architecture feature, and properties that must always hold."""

from __future__ import annotations

from math import ceil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuadvisor.knowledge.schema import MLA, Architecture, MoE
from gpuadvisor.rules.sizing.params import count_parameters, describe

LLAMA2_7B = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=32)
LLAMA31_70B = Architecture(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                           num_attention_heads=64, num_key_value_heads=8)
GPT2 = Architecture(vocab_size=50257, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                    num_attention_heads=12, tie_word_embeddings=True, mlp="plain", norm="layernorm",
                    attention_bias=True, attention_output_bias=True, mlp_bias=True, learned_position_embeddings=1024)
MIXTRAL_8X7B = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                            num_attention_heads=32, num_key_value_heads=8,
                            moe=MoE(num_experts=8, experts_per_token=2, expert_intermediate_size=14336))
GEMMA2_2B = Architecture(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                         num_attention_heads=8, num_key_value_heads=4, head_dim=256, tie_word_embeddings=True,
                         norms_per_layer=4)
FALCON_7B = Architecture(vocab_size=65024, hidden_size=4544, intermediate_size=18176, num_hidden_layers=32,
                         num_attention_heads=71, num_key_value_heads=1, tie_word_embeddings=True, mlp="plain",
                         norm="layernorm", norms_per_layer=1, parallel_attention=True)
QWEN25_05B = Architecture(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                          num_attention_heads=14, num_key_value_heads=2, tie_word_embeddings=True, attention_bias=True)
DEEPSEEK_V3 = Architecture(
    vocab_size=129280, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61, num_attention_heads=128,
    num_key_value_heads=128,
    moe=MoE(num_experts=256, experts_per_token=8, num_shared_experts=1, expert_intermediate_size=2048,
            first_dense_layers=3, router_bias=True),
    mla=MLA(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128))
BLOOM = Architecture(vocab_size=250880, hidden_size=14336, intermediate_size=4 * 14336, num_hidden_layers=70,
                     num_attention_heads=112, tie_word_embeddings=True, mlp="plain", norm="layernorm", alibi=True,
                     embedding_norm=True, attention_bias=True, attention_output_bias=True, mlp_bias=True)
OPT_350M = Architecture(vocab_size=50272, hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                        num_attention_heads=16, tie_word_embeddings=True, mlp="plain", norm="layernorm",
                        final_norm=False, attention_bias=True, attention_output_bias=True, mlp_bias=True,
                        learned_position_embeddings=2048 + 2, word_embed_proj_dim=512)
GPTJ_6B = Architecture(vocab_size=50400, hidden_size=4096, intermediate_size=16384, num_hidden_layers=28,
                       num_attention_heads=16, mlp="plain", norm="layernorm", norms_per_layer=1,
                       parallel_attention=True, mlp_bias=True, lm_head_bias=True)
DEEPSEEK_V2_LITE = Architecture(
    vocab_size=102400, hidden_size=2048, intermediate_size=10944, num_hidden_layers=27, num_attention_heads=16,
    num_key_value_heads=16,
    moe=MoE(num_experts=64, experts_per_token=6, num_shared_experts=2, expert_intermediate_size=1408,
            first_dense_layers=1),
    mla=MLA(kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128))


def test_llama2_7b_by_hand() -> None:
    c = count_parameters(LLAMA2_7B)
    # attention: q, k, v, o are 4096 x 4096 each = 4 x 16,777,216 = 67,108,864
    assert c.attention_per_layer == 67_108_864
    # MLP: gate, up, down 4096 x 11008 = 3 x 45,088,768 = 135,266,304
    assert c.mlp_per_layer_dense == 135_266_304
    # embedding and untied LM head: 32000 x 4096 = 131,072,000 each
    assert c.embedding == c.lm_head == 131_072_000
    # norms: 2 RMSNorms x 32 layers x 4096 + final 4096 = 266,240
    assert c.norms == 266_240
    # 32 x (67,108,864 + 135,266,304) + 2 x 131,072,000 + 266,240 = 6,738,415,616
    assert c.total == c.active_with_lookups == 6_738_415_616
    # the matmul parameters leave out the 32,000 x 4,096 input table (untied: the LM head is its own matrix)
    assert c.active == 6_738_415_616 - 32_000 * 4_096 == 6_607_343_616
    assert c.expert == 0 and c.moe_layers == 0 and c.dense_layers == 32


def test_gqa_shrinks_only_k_and_v() -> None:
    c = count_parameters(LLAMA31_70B)
    # q and o: 8192 x 8192 = 67,108,864 each; k and v: 8192 x (8 x 128) = 8,388,608 each
    assert c.attention_per_layer == 2 * 67_108_864 + 2 * 8_388_608
    # 80 x (150,994,944 + 3 x 8192 x 28672) + 2 x 128256 x 8192 + (160 + 1) x 8192 = 70,553,706,496 (Hub count)
    assert c.total == 70_553_706_496


def test_gpt2_small_by_hand() -> None:
    c = count_parameters(GPT2)
    # c_attn 768 x 2304 + 2304 bias, c_proj 768 x 768 + 768 bias = 1,769,472 + 2,304 + 589,824 + 768
    assert c.attention_per_layer == 2_362_368
    # c_fc 768 x 3072 + 3072, c_proj 3072 x 768 + 768 = 4,718,592 + 3,840
    assert c.mlp_per_layer_dense == 4_722_432
    # LayerNorm has weight and bias: (2 x 12 + 1) x 2 x 768 = 38,400
    assert c.norms == 38_400
    assert c.embedding == 50257 * 768 == 38_597_376
    assert c.position_embedding == 1024 * 768 == 786_432
    assert c.lm_head == 0  # tied to wte
    # 12 x 7,084,800 + 38,597,376 + 786,432 + 38,400 = 124,439,808 (OpenAI's "124M")
    assert c.total == 124_439_808
    assert c.non_embedding == 124_439_808 - 38_597_376 - 786_432


def test_mixtral_8x7b_total_and_active() -> None:
    c = count_parameters(MIXTRAL_8X7B)
    expert = 3 * 4096 * 14336  # 176,160,768 per expert
    assert c.expert == expert
    assert c.router_per_layer == 4096 * 8
    shared_parts = 32 * (4096 * 4096 * 2 + 2 * 4096 * 1024) + 2 * 32000 * 4096 + (2 * 32 + 1) * 4096
    # total: all 8 experts in each of 32 layers
    assert c.total == shared_parts + 32 * (8 * expert + 4096 * 8) == 46_702_792_704
    # active: 2 experts per token; Mistral says 12.9B
    assert c.active_with_lookups == shared_parts + 32 * (2 * expert + 4096 * 8) == 12_879_925_248
    assert round(c.active_with_lookups / 1e9, 1) == 12.9  # Mistral counts the input table in 'active'
    assert c.active == 12_879_925_248 - 32_000 * 4_096  # the matmul parameters
    assert c.mlp_per_layer_dense == 0 and c.moe_layers == 32


def test_gemma2_head_dim_and_four_norms() -> None:
    c = count_parameters(GEMMA2_2B)
    # head_dim 256 (not 2304 / 8 = 288): q 2304 x 2048, k and v 2304 x 1024, o 2048 x 2304
    assert c.attention_per_layer == 2304 * 2048 * 2 + 2 * 2304 * 1024 == 14_155_776
    # 4 RMSNorms per layer: 26 x 4 x 2304 + 2304
    assert c.norms == 26 * 4 * 2304 + 2304
    assert c.lm_head == 0
    assert c.total == 2_614_341_888  # Hub and Keras Hub count


def test_falcon_7b_mqa_parallel_one_norm() -> None:
    c = count_parameters(FALCON_7B)
    # fused qkv 4544 x (71 + 2) x 64 + dense 4544 x 4544
    assert c.attention_per_layer == 4544 * 73 * 64 + 4544 * 4544
    assert c.mlp_per_layer_dense == 2 * 4544 * 18176  # plain MLP, no bias
    assert c.norms == (32 * 1 + 1) * 2 * 4544  # one LayerNorm per layer (shared by the parallel branches)
    # 6,921,720,704; the Hub's 7,217,189,760 counts the tied head twice (+65024 x 4544)
    assert c.total == 6_921_720_704
    assert c.total + 65024 * 4544 == 7_217_189_760


def test_qwen_qkv_bias() -> None:
    c = count_parameters(QWEN25_05B)
    # q 896 x 896, k and v 896 x 128 (2 KV heads of 64), o 896 x 896; biases on q, k, v: 896 + 2 x 128
    assert c.attention_per_layer == 2 * 896 * 896 + 2 * 896 * 128 + 896 + 256
    assert c.total == 494_032_768


def test_deepseek_v3_mla_and_moe_by_hand() -> None:
    c = count_parameters(DEEPSEEK_V3)
    q = 7168 * 1536 + 1536 + 1536 * 128 * 192  # q_a_proj, q_a_layernorm, q_b_proj to 128 heads x (128 + 64)
    kv = 7168 * (512 + 64) + 512 + 512 * 128 * (128 + 128)  # kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj
    o = 128 * 128 * 7168
    assert c.attention_per_layer == q + kv + o == 187_107_328
    assert c.expert == 3 * 7168 * 2048 == 44_040_192
    assert c.shared_experts_per_layer == c.expert
    assert c.router_per_layer == 7168 * 256 + 256  # gate weight + e_score_correction_bias
    assert c.mlp_per_layer_dense == 3 * 7168 * 18432
    assert (c.dense_layers, c.moe_layers) == (3, 58)
    # 671,026,419,200: the main model without the multi-token-prediction layer ("671B"; Hub: MAI-DS-R1)
    assert c.total == 671_026_419_200
    # DeepSeek's "36.6B activated" leaves out the input embedding table
    assert round(c.active / 1e9, 1) == 36.6 and c.active_with_lookups - c.active == c.embedding


def test_deepseek_v3_checkpoint_tensor_by_tensor() -> None:
    """The Hub's count for deepseek-ai/DeepSeek-V3, 684,531,386,000, rebuilt from the tensor shapes: the 61-layer main
    model, the multi-token-prediction layer 61 and the float32 block scales of the FP8 weights. Only with the
    router's e_score_correction_bias (256 per MoE layer) does it come out exact."""
    c = count_parameters(DEEPSEEK_V3)
    h, vocab, experts = 7168, 129280, 256
    moe_layer = c.attention_per_layer + 2 * h + experts * c.expert + c.shared_experts_per_layer + c.router_per_layer
    # layer 61: one MoE decoder layer, enorm + hnorm + shared_head.norm, eh_proj (2h -> h, BF16), and its own
    # copies of embed_tokens and shared_head.head
    mtp = moe_layer + 3 * h + 2 * h * h + 2 * vocab * h

    def scales(rows: int, cols: int) -> int:  # weight_scale_inv: one float32 per 128 x 128 block
        return ceil(rows / 128) * ceil(cols / 128)

    attention = (scales(1536, h) + scales(128 * 192, 1536) + scales(512 + 64, h) + scales(128 * 256, 512)
                 + scales(h, 128 * 128))

    def mlp(inner: int) -> int:
        return 2 * scales(inner, h) + scales(h, inner)

    fp8_scales = 62 * attention + 3 * mlp(18432) + 59 * (experts + 1) * mlp(2048)
    assert c.total + mtp + fp8_scales == 684_531_386_000
    # the router bias is what used to be missing: 58 MoE layers x 256 in the main model
    assert 58 * (c.router_per_layer - h * experts) == 14_848


def test_bloom_by_hand() -> None:
    c = count_parameters(BLOOM)
    h = 14336
    assert c.attention_per_layer == 4 * h * h + 4 * h  # query_key_value + dense, with biases
    assert c.mlp_per_layer_dense == 8 * h * h + 4 * h + h  # dense_h_to_4h + dense_4h_to_h, with biases
    assert c.norms == (2 * 70 + 1 + 1) * 2 * h  # two per layer, ln_f, word_embeddings_layernorm
    assert (c.position_embedding, c.lm_head) == (0, 0)  # ALiBi, tied head
    assert c.total == 176_247_271_424  # bigscience/bloom model card
    assert describe(BLOOM).endswith("ALiBi positions")


def test_opt_350m_projections_offset_and_no_final_norm() -> None:
    c = count_parameters(OPT_350M)
    assert c.embedding == 50272 * 512  # the table is word_embed_proj_dim wide
    assert c.embedding_projections == 2 * 512 * 1024  # project_in + project_out, no bias
    assert c.position_embedding == 2050 * 1024  # 2,048 positions + OPT's offset of 2
    assert c.norms == 24 * 2 * 2 * 1024  # no final LayerNorm (do_layer_norm_before false)
    assert c.total == 331_196_416
    assert c.non_embedding == c.total - 50272 * 512 - 2050 * 1024 - 2 * 512 * 1024


def test_gptj_lm_head_bias() -> None:
    c = count_parameters(GPTJ_6B)
    assert c.lm_head == 50400 * 4096 + 50400
    assert c.attention_per_layer == 4 * 4096 * 4096  # no attention biases
    assert c.total == 6_050_882_784


def test_bias_free_layernorm_counts_weight_only() -> None:
    with_bias = count_parameters(BLOOM)
    without = count_parameters(BLOOM.model_copy(update={"layernorm_bias": False}))
    assert with_bias.norms == 2 * without.norms
    # RMSNorm never has a bias, whatever layernorm_bias says
    assert count_parameters(LLAMA2_7B.model_copy(update={"layernorm_bias": False})) == count_parameters(LLAMA2_7B)


def test_mla_without_q_lora() -> None:
    c = count_parameters(DEEPSEEK_V2_LITE)
    q = 2048 * 16 * 192  # q_proj straight from hidden
    kv = 2048 * 576 + 512 + 512 * 16 * 256
    assert c.attention_per_layer == q + kv + 16 * 128 * 2048
    assert c.shared_experts_per_layer == 2 * 3 * 2048 * 1408
    assert c.total == 15_706_484_224  # Hub count of deepseek-ai/DeepSeek-V2-Lite


def test_impossible_moe_is_refused() -> None:
    bad = MIXTRAL_8X7B.model_copy(update={"moe": MoE(num_experts=8, experts_per_token=2,
                                                     expert_intermediate_size=14336, first_dense_layers=32)})
    with pytest.raises(ValueError, match="first_dense_layers"):
        count_parameters(bad)


def test_describe() -> None:
    assert describe(LLAMA31_70B) == "80 layers, hidden 8192, 64 heads / 8 KV heads (GQA), head dim 128"
    assert describe(FALCON_7B) == "32 layers, hidden 4544, 71 heads / 1 KV head (MQA), head dim 64"
    assert describe(LLAMA2_7B).endswith("32 heads / 32 KV heads (MHA), head dim 128")
    assert describe(GEMMA2_2B).endswith("head dim 256")
    assert describe(MIXTRAL_8X7B).endswith(", MoE 2 of 8 experts")
    text = describe(DEEPSEEK_V3)
    assert "MLA" in text and "+ 1 shared" in text and "first 3 layers dense" in text


# ---- properties -----------------------------------------------------------------------------------------------

@st.composite
def architectures(draw: st.DrawFn) -> Architecture:
    kv = draw(st.integers(1, 16))
    heads = kv * draw(st.integers(1, 8))
    moe = None
    if draw(st.booleans()):
        experts = draw(st.integers(2, 64))
        moe = MoE(num_experts=experts, experts_per_token=draw(st.integers(1, experts)),
                  num_shared_experts=draw(st.integers(0, 2)), expert_intermediate_size=draw(st.integers(1, 4096)),
                  first_dense_layers=draw(st.integers(0, 2)), router_bias=draw(st.booleans()))
    mla = None
    if draw(st.booleans()):
        mla = MLA(q_lora_rank=draw(st.none() | st.integers(1, 2048)), kv_lora_rank=draw(st.integers(1, 1024)),
                  qk_nope_head_dim=draw(st.integers(1, 256)), qk_rope_head_dim=draw(st.integers(1, 128)),
                  v_head_dim=draw(st.integers(1, 256)))
    return Architecture(
        vocab_size=draw(st.integers(1, 300_000)), hidden_size=draw(st.integers(1, 16_384)),
        intermediate_size=draw(st.integers(1, 65_536)), num_hidden_layers=draw(st.integers(3, 128)),
        num_attention_heads=heads, num_key_value_heads=kv, head_dim=draw(st.none() | st.integers(1, 256)),
        tie_word_embeddings=draw(st.booleans()), mlp=draw(st.sampled_from(["gated", "plain"])),
        norm=draw(st.sampled_from(["rmsnorm", "layernorm"])), norms_per_layer=draw(st.integers(0, 4)),
        attention_bias=draw(st.booleans()), attention_output_bias=draw(st.booleans()), mlp_bias=draw(st.booleans()),
        learned_position_embeddings=draw(st.sampled_from([0, 1024, 2048])), moe=moe, mla=mla,
        embedding_norm=draw(st.booleans()), layernorm_bias=draw(st.booleans()), lm_head_bias=draw(st.booleans()),
        word_embed_proj_dim=draw(st.none() | st.integers(1, 4096)))


@given(architectures(), st.integers(1, 16))
def test_more_layers_more_parameters(arch: Architecture, extra: int) -> None:
    deeper = arch.model_copy(update={"num_hidden_layers": arch.num_hidden_layers + extra})
    assert count_parameters(deeper).total > count_parameters(arch).total
    assert count_parameters(deeper).active > count_parameters(arch).active


@given(architectures())
def test_tying_removes_exactly_vocab_times_hidden(arch: Architecture) -> None:
    untied = count_parameters(arch.model_copy(update={"tie_word_embeddings": False}))
    tied = count_parameters(arch.model_copy(update={"tie_word_embeddings": True}))
    width = arch.word_embed_proj_dim or arch.hidden_size
    assert untied.total - tied.total == arch.vocab_size * width
    assert untied.active_with_lookups - tied.active_with_lookups == arch.vocab_size * width
    assert untied.active == tied.active  # the head is multiplied either way; only the lookup table is extra
    bias = arch.vocab_size if arch.lm_head_bias else 0
    assert tied.lm_head == bias and untied.lm_head == untied.embedding + bias


@given(architectures())
def test_breakdown_adds_up(arch: Architecture) -> None:
    c = count_parameters(arch)
    per_layer = c.attention_per_layer * arch.num_hidden_layers + c.mlp_per_layer_dense * c.dense_layers
    assert c.active_with_lookups - c.active == c.input_lookup == c.position_embedding + (
        0 if arch.tie_word_embeddings else c.embedding)
    if arch.moe is None:
        assert c.active_with_lookups == c.total
        assert c.total == (c.embedding + c.embedding_projections + c.position_embedding + c.lm_head + c.norms
                           + per_layer)
    else:
        moe = arch.moe
        routed = c.moe_layers * (moe.num_experts - moe.experts_per_token) * c.expert
        assert c.total - c.active_with_lookups == routed  # only unused routed experts are inactive
        assert c.total == (c.embedding + c.embedding_projections + c.position_embedding + c.lm_head + c.norms
                           + per_layer + c.moe_layers * (moe.num_experts * c.expert + c.shared_experts_per_layer
                                                            + c.router_per_layer))
    assert c.dense_layers + c.moe_layers == arch.num_hidden_layers
    assert 0 < c.active <= c.active_with_lookups <= c.total


@given(architectures().filter(lambda a: a.moe is not None), st.integers(1, 16))
def test_more_experts_raise_total_not_active(arch: Architecture, extra: int) -> None:
    assert arch.moe is not None
    more = arch.model_copy(update={"moe": arch.moe.model_copy(update={"num_experts": arch.moe.num_experts + extra})})
    before, after = count_parameters(arch), count_parameters(more)
    assert after.total > before.total
    # only the router grows (hidden, plus one bias each) for the active count
    assert after.active - before.active == before.moe_layers * extra * (arch.hidden_size + int(arch.moe.router_bias))
