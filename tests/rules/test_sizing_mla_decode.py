"""Multi-head latent attention in a decode step, by hand (DeepSeek-V3: 61 layers, 128 heads, kv_lora_rank 512,
qk_rope_head_dim 64). Two facts the published SGLang TP8 rows needed (bench_serving.py: DeepSeek-R1 on 8 H200s went
from 4-6x too fast to 1.8-3.5x): every rank of a tensor-parallel group reads the whole latent cache, since the latent
is shared by all heads and cannot be split across them; and decode attends in the absorbed form, each head scoring
the 576-wide latent and RoPE key and summing 512-wide latents."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import Device, decode_step

H200 = Device(4800.0, 989.0, 450.0, "nvlink")
BATCH, SHORT, LONG = 64, 2000, 4000


def _extra(name: str, tp: int, ep: int = 1) -> tuple[float, float]:
    """What 2,000 more cached positions per sequence add to one GPU's bytes and FLOPs in a step of 64."""
    arch = load_catalog(user_dir=None).models[name].architecture
    params = count_parameters(arch)
    steps = [decode_step(arch, params, H200, bytes_per_weight=1.0, kv_bytes_per_value=2.0, context=c, batch=BATCH,
                         tp=tp, ep=ep) for c in (SHORT, LONG)]
    return steps[1].bytes_per_gpu - steps[0].bytes_per_gpu, steps[1].flops_per_gpu - steps[0].flops_per_gpu


def test_every_tensor_parallel_rank_reads_the_whole_latent() -> None:
    extra_bytes, _ = _extra("deepseek-v3", tp=8)
    # 64 sequences × 2,000 positions × 61 layers × (512 + 64) values × 2 bytes, not divided by the 8 ranks
    assert extra_bytes == pytest.approx(64 * 2000 * 61 * 576 * 2, rel=1e-9)  # 8.99 GB


def test_attention_data_parallel_reads_only_its_own_sequences() -> None:
    extra_bytes, _ = _extra("deepseek-v3", tp=1, ep=8)
    assert extra_bytes == pytest.approx(64 * 2000 * 61 * 576 * 2 / 8, rel=1e-9)  # 1.12 GB: a rank's 8 sequences


def test_decode_attends_in_the_absorbed_form() -> None:
    _, extra_flops = _extra("deepseek-v3", tp=8)
    # 2 FLOPs × 64 × 61 layers × 2,000 positions × 128 heads × (576 scored + 512 summed), over 8 ranks: 2.72e11;
    # the decompressed form (192 + 128 per head) would be 8.0e10
    assert extra_flops == pytest.approx(2 * 64 * 61 * 2000 * 128 * (576 + 512) / 8, rel=1e-9)


def test_grouped_query_heads_still_split_over_the_ranks() -> None:
    extra_bytes, _ = _extra("llama-3.1-70b", tp=8)
    # 80 layers × 8 KV heads × 128 × (K + V) × 2 bytes per position, one KV head per rank
    assert extra_bytes == pytest.approx(64 * 2000 * 80 * 8 * 128 * 2 * 2 / 8, rel=1e-9)
