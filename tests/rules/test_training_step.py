"""The training step part by part (rules/sizing/training.py), checked by hand, and the strong-scaling behaviour it
must show: scaling efficiency is what comes out, not an input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.memory import Parallelism
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import gemm_depth_factor
from gpuadvisor.rules.sizing.training import (
    TrainingDevice,
    TrainingFormat,
    TrainingRun,
    default_global_batch,
    default_virtual_stages,
    training_step,
)

# Llama 2 7B's shape (config.json): 6,738,415,616 parameters, 6,607,343,616 multiplied per token (the input table
# is a lookup), an untied 131,072,000-parameter LM head; GEMM depth factor 1.10533 at tp 1.
ARCH = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=32)
PARAMS = count_parameters(ARCH)
F = Factors(training_attention_cost=2.0, training_elementwise_bytes=20.0, training_comm_overlap=0.2,
            training_stack_efficiency=0.5, decode_bandwidth_efficiency=0.75)
# a device with round numbers: 1,000 TFLOPS at the format and at BF16 (× stack 0.5 = 500), 2,000 GB/s of HBM, an
# 8-GPU node with 400 GB/s NVLink per direction and 400 GB/s of NICs per node (50 per GPU)
DEV = TrainingDevice(gemm_tflops=1000.0, bf16_tflops=1000.0, bandwidth_gbs=2000.0, stack_efficiency=0.5,
                     gpus_per_node=8, scale_up_gbs=400.0, scale_up_domain=8, pcie_gbs=32.0, network_gbs=400.0)


def run(**kw: object) -> TrainingRun:
    base = dict(arch=ARCH, params=PARAMS, seq=4096, global_batch=8, micro_batch=1, par=Parallelism())
    base.update(kw)
    return TrainingRun(**base)  # type: ignore[arg-type]


def test_one_gpu_step_is_its_compute_and_optimizer_update() -> None:
    """One GPU, 8 micro-batches of one 4,096-token sequence. Per micro-batch:
    GEMMs: 6 × 4096 tokens × 6,607,343,616 × depth 1.105332 ÷ 500e12 (the LM head's 131M parameters at
    the BF16 rate, here the same rate) = 0.358972 s; attention: 6·L·s·q = 6 × 32 × 4096 × 4096 = 3.2212e9 FLOPs a
    token × 4096 tokens × cost 2 ÷ 500e12 = 0.052777 s; elementwise: 20 B × 4096 × 4096 tokens × 32 layers ÷
    2,000e9 = 0.005369 s. Optimizer: 6.738e9 parameters × 30 B ÷ (2,000e9 × 0.75) = 0.134768 s."""
    step = training_step(run(), DEV, F)
    gemm = 6 * 4096 * 6_607_343_616 * gemm_depth_factor(ARCH, 1) / 500e12
    attention = 6 * 32 * 4096 * 4096 * 4096 * 2.0 / 500e12
    elementwise = 20.0 * 4096 * 4096 * 32 / 2000e9
    assert gemm == pytest.approx(0.358972, rel=1e-5)
    assert step.micro_batches == 8
    assert step.compute == pytest.approx(8 * (gemm + attention + elementwise))
    assert step.optimizer == pytest.approx(6_738_415_616 * 30 / (2000e9 * 0.75))
    assert step.seconds == pytest.approx(step.compute + step.optimizer)
    assert step.bubble == step.exposed == 0.0
    assert step.tokens == 8 * 4096
    assert step.model_flops == pytest.approx(6 * 6_607_343_616 * 8 * 4096)


def test_pipeline_bubble_is_pp_minus_one_micro_batches_over_the_virtual_stages() -> None:
    """PP 4 on one node: each GPU runs a quarter of the layers; the bubble is (pp − 1) ÷ vp micro-batches, vp falling
    to 1 when there are fewer micro-batches than stages."""
    par = Parallelism(pp=4)
    plain = training_step(run(par=par, global_batch=8), DEV, F)
    micro = plain.compute / 8
    assert plain.bubble == pytest.approx(3 * micro, rel=1e-3)  # + the stage-to-stage sends, hidden
    interleaved = training_step(run(par=replace(par, vp=4), global_batch=8), DEV, F)
    assert interleaved.bubble == pytest.approx(plain.bubble / 4, rel=1e-3)
    few = training_step(run(par=replace(par, vp=4), global_batch=2), DEV, F)  # m = 2 < pp: no interleaving gain
    assert few.bubble == pytest.approx(3 * few.compute / 2, rel=1e-3)
    assert default_virtual_stages(126, 16) == 4 and default_virtual_stages(80, 8) == 5
    assert default_virtual_stages(80, 1) == 1


def test_data_parallel_exchange_is_hidden_by_one_micro_batch_only() -> None:
    """64 GPUs (8 nodes) of pure data parallelism with the distributed optimizer: 6 B × 6.738e9 = 40.43 GB per rank,
    inside a node 7/8 of it over 400 GB/s (0.0884 s), across 8 nodes 1/8 of it × 7/8 over each GPU's 50 GB/s
    (0.0884 s): 0.0884 s, of which 0.2 × one micro-batch's compute is hidden. With 64 sequences a step (one each),
    the exchange is exposed; with 512 (8 micro-batches) the same exposure is spread over 8× the work."""
    par = Parallelism(dp=64, zero=1)
    one = training_step(run(par=par, global_batch=64), DEV, F)
    exchange = 6.0 * 6_738_415_616 * 7 / 8 / 400e9
    assert one.micro_batches == 1
    assert one.exposed_dp == pytest.approx(exchange - 0.2 * one.compute)
    eight = training_step(run(par=par, global_batch=512), DEV, F)
    assert eight.exposed_dp == pytest.approx(one.exposed_dp)
    assert eight.scaling_efficiency > one.scaling_efficiency
    # a faster fabric does not help here: the node's NVLink share of the exchange is as slow as its NIC share
    assert training_step(run(par=par, global_batch=64), replace(DEV, network_gbs=800.0), F).seconds == \
        pytest.approx(one.seconds)


def test_doubling_the_cluster_at_a_fixed_batch_loses_mfu() -> None:
    """The same 512-sequence batch on 64, 128, 256 and 512 GPUs: each doubling halves the compute a GPU does per step
    while the exchange stays, so the MFU falls as the cluster doubles (it is not a constant), and a 4× faster chip
    (4,000 TFLOPS at the format: FP8 on Blackwell) loses far more, having less compute to hide the same exchange
    behind: at one sequence per GPU its step is 0.109 s of compute and 0.078 s of exposed exchange."""
    def mfus(dev: TrainingDevice) -> list[float]:
        return [training_step(run(par=Parallelism(dp=dp, zero=1), global_batch=512), dev, F).mfu(dev.gemm_tflops)
                for dp in (64, 128, 256, 512)]

    slow = mfus(DEV)
    fast = mfus(replace(DEV, gemm_tflops=4000.0, bf16_tflops=4000.0))
    assert all(b < a for a, b in zip(slow, slow[1:], strict=False))
    assert all(b < a for a, b in zip(fast, fast[1:], strict=False))
    assert fast[-1] / fast[0] < 0.7 < 0.95 < slow[-1] / slow[0]
    step = training_step(run(par=Parallelism(dp=512, zero=1), global_batch=512),
                         replace(DEV, gemm_tflops=4000.0, bf16_tflops=4000.0), F)
    # across 64 nodes: 1/8 of the 40.43 GB × 63/64 over 50 GB/s = 0.0995 s (inside the node: 0.0884 s)
    assert step.exposed_dp == pytest.approx(6.0 * 6_738_415_616 / 8 * 63 / 64 / 50e9 - 0.2 * step.compute)
    assert step.scaling_efficiency < 0.65


def test_fsdp_gathers_every_micro_batch_over_the_link_they_cross() -> None:
    """ZeRO-3 on 8 GPUs of one node: per micro-batch 2 gathers of BF16 weights and an FP32 reduce-scatter, (2 + 2 + 4)
    B × 6.738e9 × 7/8 = 47.17 GB per GPU: 0.118 s over NVLink, 1.47 s over PCIe (32 GB/s), each behind 0.2 of its
    micro-batch."""
    par = Parallelism(dp=8, zero=3)
    nvlink = training_step(run(par=par, global_batch=64), DEV, F)
    pcie = training_step(run(par=par, global_batch=64), replace(DEV, scale_up_gbs=None, scale_up_domain=1), F)
    per_mb = 8.0 * 6_738_415_616 * 7 / 8
    assert nvlink.exposed_dp == pytest.approx(8 * max(0.0, per_mb / 400e9 - 0.2 * nvlink.compute / 8))
    assert pcie.exposed_dp == pytest.approx(8 * (per_mb / 32e9 - 0.2 * pcie.compute / 8))
    assert pcie.seconds > 2 * nvlink.seconds


def test_tensor_parallel_splits_the_compute_and_charges_its_collectives() -> None:
    """TP 2: half of each GEMM (at the shallower depth of the row-split ones) and 8 collectives of the micro-batch's
    4096 × 4096 × 2 B activations per layer, half of each crossing NVLink: 8 × 32 × 33.55 MB / 2 ÷ 400 GB/s =
    0.01074 s, hidden behind 0.2 of the compute."""
    step = training_step(run(par=Parallelism(tp=2)), DEV, F)
    gemm = 6 * 4096 * 6_607_343_616 / 2 * gemm_depth_factor(ARCH, 2) / 500e12
    assert step.compute / 8 > gemm
    assert step.exposed_tp == 0.0  # 0.0107 s against 0.2 × 0.21 s
    slow = training_step(run(par=Parallelism(tp=2)), replace(DEV, scale_up_gbs=None, scale_up_domain=1,
                                                              pcie_gbs=2.0), F)
    assert slow.exposed_tp == pytest.approx(8 * (8 * 32 * 4096 * 4096 * 2 / 2 / 2e9 - 0.2 * slow.compute / 8))


def test_fp4_recipe_runs_its_bf16_share_at_the_bf16_rate() -> None:
    """NVFP4: 84 % of the linear layers' GEMMs at the FP4 rate (here 2,000 TFLOPS), 16 % and the LM head at BF16's."""
    fp4 = replace(DEV, gemm_tflops=2000.0)
    step = training_step(run(fmt=TrainingFormat("fp4", 0.16)), fp4, F)
    body = 6_607_343_616 - 131_072_000
    gemm = 6 * 4096 * gemm_depth_factor(ARCH, 1) * (body * 0.84 / 1000e12 + (body * 0.16 + 131_072_000) / 500e12)
    attention = 6 * 32 * 4096 * 4096 * 4096 * 2.0 / 500e12
    elementwise = 20.0 * 4096 * 4096 * 32 / 2000e9
    assert step.compute == pytest.approx(8 * (gemm + attention + elementwise))
    bf16 = training_step(run(), DEV, F)
    assert 1.3 < bf16.compute / step.compute < 1.7  # the attention and the kept share bound the gain


def test_full_recomputation_costs_a_forward_pass() -> None:
    """Full recomputation runs each layer's forward again: 8·N instead of 6·N GEMM FLOPs, attention 8/6."""
    none = training_step(run(), DEV, F)
    full = training_step(run(recompute="full"), DEV, F)
    assert 1.30 < full.compute / none.compute < 1.34


def test_the_practice_global_batch_grows_with_the_model() -> None:
    """4M tokens below 30B parameters (Llama 2), 16M at 405B (Llama 3): 512 and 2,048 sequences of 8,192 tokens;
    fine-tuning 64 sequences."""
    assert default_global_batch(7.5e9, 8192, True) == 512
    assert default_global_batch(405e9, 8192, True) == 2048
    assert default_global_batch(70e9, 4096, False) == 64
