"""The efficiency and overhead factors the sizing math depends on, and the notes every result carries.

The values live in `knowledge/data/assumptions.toml` (each with a source and a low/high band); `Factors()` holds the
same defaults so the pure functions can be called without the knowledge base, and a test keeps the two equal.
`Factors.from_values` builds one from the catalog's assumptions, so a user's overlay changes every estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Note:
    """One assumption or method choice a result depends on.

    `id` is an assumptions.toml id when the value comes from there, otherwise a `method.*` id naming a modelling
    choice (with its citation in `source`).
    """

    id: str
    text: str
    value: float | None = None
    source: str | None = None


ENGINE_SET = ("activation_reserve_gb", "activation_reserve_per_gpu_gb", "activation_reserve_wide_gb")
"""Factors an engine's own profile sets (engines.toml `static_memory`: SGLang's reserve, planning.serving): at their
0 default they change no figure, and where an engine sets them its figure is said in the option's method note
(method.activation_reserve)."""


def changes_a_figure(assumption_id: str, value: float | str) -> bool:
    """Whether an assumption at `value` can change a figure: an engine-set factor at 0 does not (its default only
    says "no reserve"), so a consultation does not record it as read (issue 40)."""
    return not (assumption_id in ENGINE_SET and not value)


@dataclass(frozen=True)
class Factors:
    """Efficiency/overhead factors; field names are the assumption ids in assumptions.toml."""

    decode_bandwidth_efficiency: float = 0.75
    """Fraction of peak memory bandwidth a decode step achieves on its weight and KV-cache reads."""
    compute_efficiency: float = 0.50
    """Fraction of dense peak FLOPS achieved by inference matrix multiplies (prefill, compute-bound decode)."""
    step_overhead_per_layer_us: float = 60.0
    """Fixed cost per layer per forward step: kernel launches, synchronisation, small ops (µs)."""
    training_mfu: float = 0.36
    """Model FLOPs utilisation of training (model FLOPs = 6·N·D), used flat only when a run has no device to size its
    step on; every plan sizes its step part by part (rules/sizing/training.py)."""
    training_stack_efficiency: float = 0.68
    """Share of a part's achievable matmul rate (`Accelerator.matmul_tflops`) the GEMMs of a CUDA or ROCm training
    stack (Megatron-Core / NeMo, TorchTitan, FSDP) reach over a whole step (training.training_step)."""
    training_xla_stack_efficiency: float = 0.72
    """The same share for XLA on TPUs (MaxText)."""
    training_rocm_stack_efficiency: float = 0.80
    """The same share for ROCm stacks on AMD Instinct (Primus-Megatron, Primus-TorchTitan)."""
    training_synapseai_stack_efficiency: float = 0.56
    """The same share for SynapseAI on Intel Gaudi (Intel's pre-training table, Optimum Habana)."""
    training_matmul_share_default: float = 0.75
    """Achievable share of the dense peak assumed for a part whose matmul rate was never measured."""
    training_attention_cost: float = 2.6
    """Cost of an attention-score FLOP relative to a matmul FLOP in training (FlashAttention's kernels reach a smaller
    share of the peak than GEMMs)."""
    training_elementwise_bytes: float = 22.0
    """Memory traffic of a layer's elementwise work (norms, activation, residuals, RoPE, casts) per token per hidden
    unit, forward and backward (bytes)."""
    training_comm_overlap: float = 0.18
    """Share of the compute a collective runs beside that hides it (training.training_step)."""
    training_network_gbs: float = 400.0
    """Collective bus bandwidth across nodes in training clusters (GB/s; 8 × 400 Gb/s NICs per 8-GPU node)."""
    training_global_batch_tokens: float = 4194304.0
    """Global batch of a pretraining run below 30B parameters (tokens per optimizer step)."""
    finetune_global_batch_sequences: float = 64.0
    """Sequences per optimizer step of a fine-tuning run (far fewer tokens than a pretraining batch)."""
    tcp_fabric_efficiency: float = 0.4
    """Share of an Ethernet (TCP, no RDMA) network's line rate that collectives achieve on two nodes."""
    tcp_fabric_loss_per_doubling: float = 0.1
    """Relative loss of that share per doubling of the node count (congestion, stragglers)."""
    training_grad_bytes_per_param: float = 6.0
    """Bytes per parameter of the data-parallel exchange of a step (FP32 reduce-scatter + BF16 all-gather)."""
    runtime_overhead_gb: float = 1.0
    """CUDA context, framework and library workspaces per GPU (GB)."""
    headroom_fraction: float = 0.10
    """Share of GPU memory kept free against allocator fragmentation (W6)."""
    moe_gemm_half_ridge: float = 0.71
    """Rows per expert at which a grouped expert GEMM runs at half its large-batch rate, as a share of the part's
    ridge point (speed.expert_half_tokens)."""
    allreduce_latency_nvlink_us: float = 8.0
    allreduce_latency_pcie_us: float = 30.0
    activation_reserve_gb: float = 0.0
    """Memory per GPU a serving engine holds back beside its weights and KV cache whatever its activations need, for
    a replica of one GPU (SGLang: what its default mem_fraction_static leaves, engines.toml `static_memory`); 0: the
    activations are counted as computed."""
    activation_reserve_per_gpu_gb: float = 0.0
    """What that reserve grows by per further GPU of the replica (tensor × pipeline degree)."""
    activation_reserve_wide_gb: float = 0.0
    """What it grows by from 4-way tensor parallelism up (SGLang captures CUDA graphs of larger batches there)."""
    prefill_chunk_tokens: float = 8192.0
    """Tokens processed per prefill forward pass (chunked prefill); bounds inference activation memory."""
    consumer_dense_throttle: float = 0.20
    """Sustained-throughput loss of consumer cards in dense racks (W4)."""
    kv_transfer_efficiency: float = 0.7
    """Share of a replica's network bandwidth a prefill-to-decode KV transfer achieves (disaggregated serving)."""
    disagg_min_machines: float = 4.0
    """Smallest colocated deployment (machines) at which separate prefill and decode pools are offered."""
    disagg_min_saving: float = 0.10
    """Least share of the colocated machines the split must save to be offered."""
    burst_headroom: float = 0.20
    """Extra serving capacity planned above the average load (S10, 002 Q4)."""
    training_interruptions_per_gpu_hour: float = 1.97e-5
    """Unexpected interruptions of a synchronous training job per GPU-hour (Llama 3 405B: 419 in 54 days on 16,384
    H100s)."""
    training_loss_per_interruption_hours: float = 0.3
    """Job time lost per interruption: the restart and the work redone since the last checkpoint."""
    training_schedule_margin: float = 0.05
    """Least share of a deadline a training plan leaves free beyond the expected interruption loss."""
    colocation_usd_per_kw_month: float = 184.06
    """Site rent of owned servers: space, power and cooling capacity per kW per month (CBRE wholesale colocation)."""
    hardware_lifetime_years: float = 3.0
    pue: float = 1.3
    power_usd_per_kwh: float = 0.12
    gpu_hours_per_day: float = 24.0

    @classmethod
    def from_values(cls, values: Mapping[str, float]) -> Factors:
        """Factors with every known id taken from `values` (assumption id → value); others keep their default."""
        known = {f.name for f in fields(cls)}
        return replace(cls(), **{k: float(v) for k, v in values.items() if k in known})

    def note(self, name: str, text: str) -> Note:
        """A Note for one of these factors, carrying its current value."""
        return Note(id=name, text=text, value=float(getattr(self, name)))


DEFAULT_FACTORS = Factors()
