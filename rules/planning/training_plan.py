"""What a training plan runs on and how it may be split: the training format of a part, the step model's view of
the part in its machines, and the layouts (tensor × context × pipeline × data, ZeRO stage) the search weighs.

The engines' recipes choose a layout per model and cluster (Megatron-Bridge's performance recipes, the Llama 3
paper's TP 8 × PP 16, CP 16 at 128k): tensor parallelism inside the scale-up domain, context parallelism for long
sequences, pipeline stages across machines, the distributed optimizer or FSDP over the data-parallel ranks, and no
more recomputation than memory needs. The search enumerates the same space and keeps the fastest step that fits
(`planning.TrainingSearch`); this module holds the parts that do not depend on the model's memory.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from gpuadvisor.knowledge.schema import Accelerator, Precision
from gpuadvisor.rules.inputs.formats import training_compute
from gpuadvisor.rules.planning.topology import SCALE_UP_KINDS, Topology
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.memory import Parallelism
from gpuadvisor.rules.sizing.peak import peak_tflops
from gpuadvisor.rules.sizing.training import TrainingDevice, TrainingFormat, default_virtual_stages, network_efficiency

TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16)
CONTEXT_PARALLEL = (1, 2, 4, 8, 16)
MIN_TOKENS_PER_CP_RANK = 4096
"""Context parallelism splits a sequence no finer than this (the recipes run CP 2 at 8k, CP 16 at 128k)."""


def training_format(acc: Accelerator, weights: Precision) -> TrainingFormat:
    """The format a training run's linear layers run at on `acc`: a published low-precision recipe where the part has
    its tensor cores (NVFP4 / MXFP4 on FP4 parts, keeping the recipe's share in BF16), FP8 on parts with FP8 tensor
    cores, TF32 for FP32 weights, else BF16."""
    recipe = weights.training_recipe
    if recipe is not None and recipe.compute == "fp4" and acc.fp4_support:
        return TrainingFormat("fp4", recipe.high_precision_share.value)
    compute = training_compute(weights)
    if compute == "fp4":  # the part has no FP4 tensor cores: the planner refuses the recipe, an estimate runs FP8
        compute = "fp8"
    if compute == "fp8" and not acc.fp8_support:
        compute = "bf16"
    return TrainingFormat(compute)


def _share(acc: Accelerator, compute: str, factors: Factors) -> float:
    """Share of the dense peak at `compute` a GEMM can reach on `acc`: its measured achievable matmul rate (FP4 at the
    FP8 share times the FP4 kernels' lower share, `sustained_compute_ratio_by_precision`), else BF16's, else the
    default share scaled by the part's sustained share (power-limited cards)."""
    share = acc.matmul_share(compute)
    if share is None:
        share = acc.matmul_share("bf16")
    if share is None:
        return factors.training_matmul_share_default * acc.sustained_share(compute)
    if compute == "fp4" and "fp4" in acc.sustained_compute_ratio_by_precision:
        share *= acc.sustained_share("fp4") / acc.sustained_share("fp8")
    return share


STACK_SHARES = {"xla": "training_xla_stack_efficiency", "rocm": "training_rocm_stack_efficiency",
                "synapseai": "training_synapseai_stack_efficiency"}
"""The factor holding each software stack's share of its parts' achievable matmul rate; every other stack (CUDA,
and Neuron, which no published table with its layout calibrates) takes `training_stack_efficiency`."""


def stack_efficiency(acc: Accelerator, factors: Factors) -> float:
    """Share of `acc`'s achievable matmul rate its training stack's GEMMs reach over a whole step, fitted per stack
    on its publisher's own tables (tests/benchmarks/fit_training.py)."""
    return float(getattr(factors, STACK_SHARES.get(acc.software_stack, "training_stack_efficiency")))


def training_device(acc: Accelerator, topo: Topology, fmt: TrainingFormat, gpus: int, factors: Factors
                    ) -> TrainingDevice | None:
    """The step model's view of `acc` in machines of `topo` running `gpus` of them; None without a dense peak."""
    peak = peak_tflops(acc, fmt.compute)[0]
    bf16 = peak_tflops(acc, "bf16")[0]
    if not peak or not bf16:
        return None
    up = topo.scale_up
    fast = up.kind in SCALE_UP_KINDS and up.domain > 1
    network = None
    if topo.joinable and gpus > topo.node:
        machines = math.ceil(gpus / topo.node)
        network = (topo.network_gbs() or factors.training_network_gbs) * network_efficiency(topo.tcp_network,
                                                                                           machines, factors)
    efficiency = stack_efficiency(acc, factors)
    return TrainingDevice(
        gemm_tflops=peak * _share(acc, fmt.compute, factors), bf16_tflops=bf16 * _share(acc, "bf16", factors),
        bandwidth_gbs=acc.memory_bandwidth_gbs.value, stack_efficiency=efficiency, gpus_per_node=topo.node,
        scale_up_gbs=up.gbs_per_direction if fast else None, scale_up_domain=up.domain if fast else 1,
        pcie_gbs=topo.pcie_gbs_per_direction, network_gbs=network,
        softmax_speedup=acc.attention_softmax_speedup.value if acc.attention_softmax_speedup else 1.0)


def layouts(n: int, topo: Topology, *, layers: int, heads: int, seq: int, micro_batch: int, global_batch: int,
            zeros: tuple[int, ...], full: bool = True, cp: int | None = None) -> Iterator[Parallelism]:
    """Every way to split a run over `n` GPUs of `topo` the recipes use: tp inside the scale-up domain (or, when
    `full` training, inside one machine), cp dividing the sequence into chunks of at least 4,096 tokens, pp stages
    (two layers a stage at least) with the recipes' virtual stages, and dp data-parallel ranks that each get at least
    one micro-batch of the global batch; `cp` fixes the context-parallel degree. Adapter fine-tuning
    (`full` False) runs data parallel (DDP, FSDP), tensor parallel only over a scale-up link: PEFT-style recipes
    (PEFT, Unsloth, Axolotl, torchtune) neither pipeline nor split a sequence."""
    node = topo.node
    fast = topo.scale_up.domain if topo.scale_up.kind in SCALE_UP_KINDS else 1
    for tp in TENSOR_PARALLEL:
        if n % tp or heads % tp or (tp > fast and not (full and tp <= node)):
            continue
        for c in (cp,) if cp is not None else (CONTEXT_PARALLEL if full else (1,)):
            if c > 1 and (seq % c or seq // c < MIN_TOKENS_PER_CP_RANK):
                continue
            for pp in PIPELINE_PARALLEL if full or fast > 1 else (1,):
                shards = tp * c * pp
                if n % shards or 2 * pp > layers:
                    continue
                if shards > node and not topo.joinable:
                    continue
                dp = n // shards
                if dp * micro_batch > max(global_batch, micro_batch):
                    continue
                vp = default_virtual_stages(layers, pp)
                for zero in zeros:
                    yield Parallelism(tp=tp, pp=pp, dp=dp, cp=c, vp=vp, zero=zero if dp * c > 1 else 0)
