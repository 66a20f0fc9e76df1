"""Memory per GPU (S1, S2, S4, S5, S11, S12, W2, W6, H7): worked examples, corrections, and monotonicity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.memory import (
    MemoryBreakdown,
    Parallelism,
    fused_attention,
    inference_memory,
    layer_activation_bytes,
    lora_parameters,
    split_weight_format,
    training_activation_bytes,
    training_memory,
    weight_bytes,
)
from gpuadvisor.rules.sizing.params import count_parameters

# Shapes from the publishers' config.json files.
LLAMA2_7B = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32)
LLAMA3_70B = Architecture(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                          num_attention_heads=64, num_key_value_heads=8)
P7 = count_parameters(LLAMA2_7B)
P70 = count_parameters(LLAMA3_70B)
GB = 1e9


def test_parameter_counts_used_below() -> None:
    # Meta's published exact counts: Llama 2 7B 6,738,415,616; Llama 3 70B 70,553,706,496.
    assert P7.total == 6_738_415_616
    assert P70.total == 70_553_706_496


def test_7b_fp16_weights_14_gb() -> None:
    # S1 / 002: 7B × 2 bytes = 14 GB; the exact 6.74B parameters give 13.48 GB.
    assert weight_bytes(P7, 2.0) == 13_476_831_232
    assert weight_bytes(P7, 2.0) / GB == pytest.approx(14, rel=0.04)


def test_quantized_weights_keep_embeddings_16_bit() -> None:
    # AWQ 4.15625 bits on the linear layers, embedding + LM head (2 × 32000 × 4096) in 16-bit.
    emb = 2 * 32000 * 4096
    expected = (P7.total - emb) * 4.15625 / 8 + emb * 2
    assert weight_bytes(P7, 4.15625 / 8, embedding_bytes=2.0) == pytest.approx(expected)


def test_70b_int4_fits_80_gb_not_24_gb() -> None:
    # H7: 70B at AWQ 4-bit ≈ 37 GB of weights + 4k context KV cache fits an 80 GB card, not a 24 GB one.
    mem = inference_memory(LLAMA3_70B, P70, weight_bytes_per_param=4.15625 / 8, embedding_bytes=2.0,
                           kv_bytes_per_value=2, context=4096, batch=1)
    assert 35 * GB < mem.weights < 40 * GB
    assert mem.fits(80 * GB)
    assert not mem.fits(24 * GB)


def test_70b_fp16_needs_more_than_two_80_gb_cards_with_headroom() -> None:
    # 002 (Q4) says FP16 70B "requires 2x H100 80GB". Per GPU that is 70.6 GB of weights against 72 GB usable
    # once 10% is kept free (W6), leaving ~1.4 GB for KV cache, activations and runtime: it does not fit at 4k
    # context; four GPUs do.
    def mem(tp: int) -> MemoryBreakdown:
        return inference_memory(LLAMA3_70B, P70, weight_bytes_per_param=2, kv_bytes_per_value=2, context=4096,
                                batch=1, par=Parallelism(tp=tp))

    one, two, four = mem(1), mem(2), mem(4)
    assert not one.fits(80 * GB)
    assert not two.fits(80 * GB)
    assert two.total < 80 * GB  # it fits the card, but not with the headroom W6 asks for
    assert four.fits(80 * GB)
    assert two.weights == pytest.approx(one.weights / 2)


def test_headroom_rule_w6() -> None:
    # W6: a job needing 75 GB does not "fit" an 80 GB card with 10% kept free (72 GB usable).
    mem = inference_memory(LLAMA3_70B, P70, weight_bytes_per_param=1, kv_bytes_per_value=2, context=1024, batch=1)
    assert mem.total > 72 * GB and mem.total < 80 * GB  # 70.6 GB weights + KV + 1 GB runtime
    assert not mem.fits(80 * GB)
    assert mem.required_capacity == pytest.approx(mem.total / 0.9)
    relaxed = inference_memory(LLAMA3_70B, P70, weight_bytes_per_param=1, kv_bytes_per_value=2, context=1024,
                               batch=1, factors=Factors(headroom_fraction=0.0))
    assert relaxed.fits(80 * GB)


def _states(mem: MemoryBreakdown) -> float:
    return mem.weights + mem.gradients + mem.optimizer_states


def test_adamw_mixed_precision_is_16_bytes_per_param() -> None:
    # ZeRO paper §3.1: bf16 weights 2 + bf16 grads 2 + fp32 master 4 + m 4 + v 4 = 16 B/param → 7B: 107.8 GB.
    mem = training_memory(LLAMA2_7B, P7, seq=2048, micro_batch=1)
    assert _states(mem) == 16 * P7.total
    assert mem.optimizer_states == 12 * P7.total


def test_002_18_bytes_counts_fp32_gradients() -> None:
    # 002 counts 18 B/param: the same with fp32 gradients.
    mem = training_memory(LLAMA2_7B, P7, seq=2048, micro_batch=1, grad_precision="fp32")
    assert _states(mem) == 18 * P7.total


def test_000_four_times_rule_undercounts() -> None:
    # 000: "parameters × 4 (FP16 params, gradients, Adam 2 moments)" = 4 × 2 B = 8 B/param: half the real 16.
    mem = training_memory(LLAMA2_7B, P7, seq=2048, micro_batch=1)
    assert _states(mem) == 2 * (4 * 2 * P7.total)
    # W2: weights alone (13.5 GB) are under an eighth of the training footprint.
    assert mem.total > 8 * mem.weights


@pytest.mark.parametrize(("optimizer", "bytes_per_param"), [("sgd", 2 + 2 + 8), ("adam8bit", 2 + 2 + 6)])
def test_other_optimizers(optimizer: str, bytes_per_param: int) -> None:
    # SGD with momentum: fp32 master 4 + momentum 4; 8-bit Adam: fp32 master 4 + two 1-byte moments.
    mem = training_memory(LLAMA2_7B, P7, optimizer=optimizer, seq=2048, micro_batch=1)  # type: ignore[arg-type]
    assert _states(mem) == bytes_per_param * P7.total


def test_pure_fp32_adamw() -> None:
    # fp32 weights 4 + fp32 grads 4 + m 4 + v 4 = 16 (the weights are their own master copy).
    mem = training_memory(LLAMA2_7B, P7, weight_bits=32, seq=2048, micro_batch=1)
    assert _states(mem) == 16 * P7.total


def test_zero_stages_shard_over_data_parallel() -> None:
    # S11: stage 1 shards optimizer states, 2 also gradients, 3 (FSDP) also weights, over 8 GPUs.
    def states(z: int) -> tuple[float, float, float]:
        m = training_memory(LLAMA2_7B, P7, seq=2048, micro_batch=1, par=Parallelism(dp=8, zero=z))
        return m.weights, m.gradients, m.optimizer_states

    n = P7.total
    assert states(0) == (2 * n, 2 * n, 12 * n)
    assert states(1) == (2 * n, 2 * n, 12 * n / 8)
    assert states(2) == (2 * n, 2 * n / 8, 12 * n / 8)
    assert states(3) == (2 * n / 8, 2 * n / 8, 12 * n / 8)


def test_002_q2_13b_on_4_a100_zero3() -> None:
    # 002 Q2: 13B with AdamW on 4 × A100 80GB with ZeRO-3 is "comfortable". 16 B × 13.0B / 4 = 52 GB of states.
    llama2_13b = Architecture(vocab_size=32000, hidden_size=5120, intermediate_size=13824, num_hidden_layers=40,
                              num_attention_heads=40)
    p = count_parameters(llama2_13b)
    mem = training_memory(llama2_13b, p, seq=4096, micro_batch=1, par=Parallelism(dp=4, zero=3))
    assert _states(mem) == pytest.approx(16 * p.total / 4)
    assert mem.fits(80 * GB)
    assert not training_memory(llama2_13b, p, seq=4096, micro_batch=1).fits(80 * GB)


def test_lora_parameter_count_llama2_7b_rank_16() -> None:
    # r × (d_in + d_out) per matrix, all linear layers: per layer q,k,v,o 4 × 16 × (4096 + 4096) = 524,288,
    # gate/up 2 × 16 × (4096 + 11008) = 483,328, down 16 × (11008 + 4096) = 241,664 → 1,249,280 × 32 layers.
    assert lora_parameters(LLAMA2_7B, 16) == 39_976_960  # PEFT reports this figure for target_modules="all-linear"


def test_qlora_7b_fits_a_24_gb_card() -> None:
    # S5: 7B QLoRA (NF4 with double quantization, 4.127 bits) at 4k context: about 8 GB, fits an RTX 4090.
    mem = training_memory(LLAMA2_7B, P7, method="qlora", weight_bits=4.127, seq=4096, micro_batch=1)
    assert mem.fits(24 * GB)
    assert 5 * GB < mem.total < 12 * GB
    # base: 6.48B linear params × 4.127/8 B + 262M embedding/LM-head params × 2 B; adapters: 40M × 4 B
    base = (P7.total - 2 * 32000 * 4096) * 4.127 / 8 + 2 * 32000 * 4096 * 2
    assert mem.weights == pytest.approx(base + 39_976_960 * 4)
    assert mem.gradients == 39_976_960 * 4
    assert mem.optimizer_states == 39_976_960 * 8


def test_lora_16_bit_base_is_frozen() -> None:
    mem = training_memory(LLAMA2_7B, P7, method="lora", seq=2048, micro_batch=1)
    assert mem.weights == pytest.approx(2 * P7.total + 4 * 39_976_960)
    assert mem.gradients + mem.optimizer_states == 12 * 39_976_960
    assert not mem.fits(16 * GB)
    assert mem.fits(24 * GB)


def test_korthikanti_gpt3_layer() -> None:
    # Korthikanti et al. 2022, Eq. 1: s·b·h·(34 + 5·a·s/h) for a GPT-3 layer (MHA, plain 4h MLP, dropout).
    # Without dropout masks (2 of size h, and a·s for attention dropout, 2·a·s of its output) it is 32h + 2as,
    # which is what the adapted formula gives for that shape.
    gpt = Architecture(vocab_size=50257, hidden_size=12288, intermediate_size=4 * 12288, num_hidden_layers=96,
                       num_attention_heads=96, mlp="plain", norm="layernorm")
    s, b, h, a = 2048, 1, 12288, 96
    assert layer_activation_bytes(gpt, s, b, flash_attention=False) == s * b * h * 32 + 2 * a * s * s * b
    korthikanti = s * b * h * (34 + 5 * a * s / h)
    assert layer_activation_bytes(gpt, s, b, flash_attention=False) < korthikanti
    # FlashAttention drops the s² term.
    assert layer_activation_bytes(gpt, s, b, flash_attention=True) == s * b * h * 32


def test_checkpointing_and_flash_attention_reduce_activations() -> None:
    full = training_activation_bytes(LLAMA2_7B, 4096, 1, recompute="none", flash_attention=False)
    flash = training_activation_bytes(LLAMA2_7B, 4096, 1, recompute="none", flash_attention=True)
    selective = training_activation_bytes(LLAMA2_7B, 4096, 1, recompute="selective", flash_attention=True)
    ckpt = training_activation_bytes(LLAMA2_7B, 4096, 1, recompute="full", flash_attention=True)
    assert full > flash > selective > ckpt
    # Full checkpointing: 2·s·b·h per layer + one layer recomputed + logits (6 B × 32000 vocab per token).
    per_layer = layer_activation_bytes(LLAMA2_7B, 4096, 1, True)
    assert ckpt == 32 * 2 * 4096 * 4096 + per_layer + 6 * 4096 * 32000
    # Selective: a layer keeps Q, K, V, the attention output, the gate and up outputs and the residual stream, 2 B
    # each: 2 × (4096 + 8192 + 4096) + 2 × 2 × 11008 + 4 × 4096 = 93,184 B a token (no norm outputs, no SiLU(gate) or
    # product)
    assert layer_activation_bytes(LLAMA2_7B, 4096, 1, True, "selective") == 4096 * 93_184
    # Sequence parallelism divides by tp, context parallelism by cp.
    assert training_activation_bytes(LLAMA2_7B, 4096, 1, tp=4) == pytest.approx(ckpt / 4)
    assert training_activation_bytes(LLAMA2_7B, 4096, 1, tp=4, cp=2) == pytest.approx(ckpt / 8)


def test_pipeline_stages_keep_the_first_stage_busiest() -> None:
    """PP 4, no recomputation: the first stage keeps 4 micro-batches of its 8 layers in flight (32 layers' worth),
    × (1 + 3/(4·5)) = 1.15 interleaved over 5 virtual stages; the last stage 8 layers and the logits."""
    per_layer = layer_activation_bytes(LLAMA2_7B, 4096, 1, True)
    plain = training_activation_bytes(LLAMA2_7B, 4096, 1, pp=4, recompute="none")
    assert plain == pytest.approx(32 * per_layer)
    interleaved = training_activation_bytes(LLAMA2_7B, 4096, 1, pp=4, vp=5, recompute="none")
    assert interleaved == pytest.approx(32 * per_layer * 1.15)


@settings(max_examples=60, deadline=None)
@given(context=st.integers(1, 131072), batch=st.integers(1, 256), extra=st.integers(1, 4096),
       bits=st.sampled_from([4.0, 4.85, 8.0, 16.0]))
def test_inference_memory_grows_with_context_batch_and_bits(context: int, batch: int, extra: int,
                                                             bits: float) -> None:
    def total(c: int, b: int, w_bits: float) -> float:
        return inference_memory(LLAMA3_70B, P70, weight_bytes_per_param=w_bits / 8, kv_bytes_per_value=2,
                                context=c, batch=b).total

    base = total(context, batch, bits)
    assert total(context + extra, batch, bits) > base
    assert total(context, batch + 1, bits) > base
    assert total(context, batch, bits * 2) > base


@settings(max_examples=40, deadline=None)
@given(seq=st.integers(128, 32768), micro_batch=st.integers(1, 16), dp=st.integers(2, 64))
def test_training_memory_shrinks_with_zero_stage_and_tp(seq: int, micro_batch: int, dp: int) -> None:
    def total(par: Parallelism) -> float:
        return training_memory(LLAMA3_70B, P70, seq=seq, micro_batch=micro_batch, par=par).total

    stages = [total(Parallelism(dp=dp, zero=z)) for z in (0, 1, 2, 3)]
    assert stages == sorted(stages, reverse=True) and stages[0] > stages[3]
    assert total(Parallelism(tp=8)) < total(Parallelism(tp=4)) < total(Parallelism(tp=2)) < total(Parallelism())
    # grows with sequence length and micro-batch
    assert total(Parallelism(dp=dp, zero=3)) < training_memory(
        LLAMA3_70B, P70, seq=seq + 1, micro_batch=micro_batch + 1, par=Parallelism(dp=dp, zero=3)).total


def test_parallelism_validation() -> None:
    with pytest.raises(ValueError):
        Parallelism(tp=0)
    with pytest.raises(ValueError):
        Parallelism(zero=4)
    assert Parallelism(tp=2, pp=2, dp=3).gpus == 12


# --- per-tensor mixed precision: gpt-oss ships MXFP4 experts and BF16 everything else ----------------------------

CATALOG = load_catalog(user_dir=None)
MXFP4 = CATALOG.precisions["mxfp4"]


def _gpt_oss(model_id: str) -> Architecture:
    return CATALOG.models[model_id].architecture


@pytest.mark.parametrize(("model_id", "checkpoint_gib"), [("gpt-oss-120b", 60.8), ("gpt-oss-20b", 12.8)])
def test_gpt_oss_mxfp4_weights_match_the_published_checkpoint(model_id: str, checkpoint_gib: float) -> None:
    # OpenAI's model card: 60.8 GiB (120b) and 12.8 GiB (20b). The experts' gate/up/down matrices are MXFP4
    # (4.25 bits: 32 x E2M1 + one E8M0 scale); attention, router, embeddings, head, biases, norms and sinks BF16.
    arch = _gpt_oss(model_id)
    params = count_parameters(arch)
    rest_bytes, experts = split_weight_format(arch, MXFP4)
    assert experts is not None and rest_bytes == 2.0 and experts.bytes_per_weight == 4.25 / 8
    layers, n_experts = arch.num_hidden_layers, arch.moe.num_experts if arch.moe else 0
    assert experts.params == layers * n_experts * 3 * 2880 * 2880  # gate, up, down of 2,880 x 2,880
    total = weight_bytes(params, rest_bytes, None, experts)
    assert total == experts.params * 4.25 / 8 + (params.total - experts.params) * 2
    assert round(total / 2**30, 1) == checkpoint_gib
    if model_id == "gpt-oss-120b":
        # ollama's gpt-oss:120b download: 65,290,180,781 bytes (GGUF, MXFP4 experts): within 0.1 %
        assert total == pytest.approx(65_290_180_781, rel=1e-3)
        mem = inference_memory(arch, params, weight_bytes_per_param=rest_bytes, kv_bytes_per_value=2, context=4096,
                               batch=1, experts=experts)
        assert mem.weights == total and mem.fits(80 * GB)  # one 80 GB card, as OpenAI says
        assert "routed-expert matrix parameters" in mem.notes[0].text


def test_other_formats_store_every_tensor_alike() -> None:
    arch = _gpt_oss("gpt-oss-20b")
    params = count_parameters(arch)
    bf16 = CATALOG.precisions["bf16"]
    assert split_weight_format(arch, bf16) == (2.0, None)
    assert weight_bytes(params, 2.0) == 2 * 20_914_757_184  # a dequantized bf16 copy: 41.8 GB
    # a model not published in MXFP4 quantized to MXFP4: every linear layer at 4.25 bits (no expert split)
    assert split_weight_format(LLAMA3_70B, MXFP4) == (4.25 / 8, None)


def test_mig_instances_for_models_hosted_together() -> None:
    from gpuadvisor.rules.sizing.memory import mig_slice_bytes

    # H100 80 GB, 7 compute slices (NVIDIA MIG User Guide): 2 models → 2 × 3g.40gb, 3 → 3 × 2g.20gb, 5 → 5 × 1g.10gb
    assert mig_slice_bytes(80e9, 7, 2) == pytest.approx(40e9)
    assert mig_slice_bytes(80e9, 7, 3) == pytest.approx(20e9)
    assert mig_slice_bytes(80e9, 7, 5) == pytest.approx(10e9)
    assert mig_slice_bytes(80e9, 7, 8) is None  # more models than instances
    assert mig_slice_bytes(48e9, 0, 2) is None  # no MIG (L40S)


@pytest.mark.parametrize(("part", "fused"), [
    ("nvidia-h100-sxm5", True),       # FlashAttention-2
    ("nvidia-b200", True),            # not on FA2's list, FA3/cuDNN kernels: fused
    ("nvidia-t4", True),              # no FA2, CUDA 7.5: PyTorch's memory-efficient SDPA kernel (sm50 and up)
    ("nvidia-v100-sxm2", True),       # 7.0, likewise
    ("nvidia-p100", True),            # 6.0, likewise
    ("amd-radeon-pro-w7900", False),  # ROCm RDNA3: the memory-efficient kernel is experimental, off by default
    ("google-tpu-v5e", True),         # XLA's own fused attention
    ("apple-m2-ultra", True),         # Metal / llama.cpp / MLX kernels
])
def test_fused_attention_by_part(part: str, fused: bool) -> None:
    assert fused_attention(CATALOG.accelerators[part]) is fused


def test_unfused_attention_adds_the_score_matrix() -> None:
    """Llama 2 7B, one 4,096-token sequence: the unfused layer keeps 2 B × 32 heads × 4,096² of scores more."""
    gap = layer_activation_bytes(LLAMA2_7B, 4096, 1, flash_attention=False) - layer_activation_bytes(LLAMA2_7B, 4096, 1)
    assert gap == 2 * 32 * 4096 * 4096
