"""One training step, part by part: compute at the per-GPU micro-batch, the communication left exposed, the bubble.

A step processes the global batch of G sequences of s tokens. The GPUs are split tp (tensor, inside a scale-up
domain) × cp (context: a sequence's tokens over cp GPUs) × dp (data) × pp (pipeline stages, outermost), Megatron's
rank order; each data-parallel rank runs m = G ÷ (dp × b) micro-batches of b sequences (gradient accumulation).
Per micro-batch a GPU runs its 1/(tp·pp) of the layers on its 1/cp of the tokens:

    compute   = GEMM FLOPs × depth ÷ R_gemm + attention FLOPs × c_attn ÷ R_bf16 + elementwise bytes ÷ HBM
                (c_attn = 1 + the softmax's share, which parts with faster exponential units pay less of)
    R         = dense peak at the format × the part's achievable-matmul share (MAMF) × the stack's share of it
    exposed   = Σ max(0, collective − ω × the compute it can hide behind)
                TP: 4 all-gathers / reduce-scatters per layer forward, 4 backward (4 more under full recompute)
                CP: the K/V ring of every layer (forward, and K/V with their gradients backward), behind attention
                PP: the activations sent between stages, behind the micro-batch
    bubble    = (pp − 1) ÷ vp micro-batches (interleaved 1F1B; vp falls to 1 when m < pp)
    DP        = gradients reduce-scattered and weights all-gathered over the dp × cp ranks once a step behind one
                micro-batch (distributed optimizer, ZeRO 1-2), or gathered twice and reduced every micro-batch (FSDP,
                ZeRO 3); hierarchical: inside the node over the scale-up link, across nodes over the node's NICs
    step      = m × micro-batch + bubble + exposed DP + optimizer update (its states read and written once)

Nothing is a constant share: 512 GPUs given one or two sequences each get one micro-batch per step, so the
gradient exchange has one micro-batch to hide behind and the bubble is not amortised, and scaling efficiency (the
compute's share of the step) is what comes out. The calibration (tests/benchmarks/fit_training.py) fits four
constants with a physical meaning: the stacks' share of the achievable matmul rate, the attention cost, the
elementwise traffic and the overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors, Note
from gpuadvisor.rules.sizing.memory import Parallelism, Recompute, _attention_widths
from gpuadvisor.rules.sizing.params import ParameterCount
from gpuadvisor.rules.sizing.speed import gemm_depth_factor
from gpuadvisor.rules.sizing.units import GB, SECONDS_PER_HOUR, TFLOPS

TrainMethod = Literal["full", "lora", "qlora"]
FLOPS_PER_PARAM_TOKEN: dict[str, float] = {"full": 6.0, "lora": 4.0, "qlora": 4.0}
"""Model FLOPs per active parameter per token: forward 2 + backward 4 (activation and weight gradients);
LoRA/QLoRA skip the frozen base's weight gradients (2), leaving 4 (adapter FLOPs are <1% and ignored)."""
ACTIVATION_BYTES = 2.0
OPTIMIZER_TRAFFIC_BYTES = 30.0
"""Bytes per parameter the optimizer update reads and writes (mixed-precision Adam: weights 2, gradients 2-4,
master 4, m 4, v 4 read; weights, master, m, v written)."""


@dataclass(frozen=True)
class TrainingFormat:
    """How a training recipe runs its linear layers: `compute` is the format of the quantized GEMMs (bf16, tf32,
    fp8, fp4), `high_precision_share` the share of those GEMMs' FLOPs the recipe keeps in BF16 (NVFP4 pretraining
    keeps about 16 % of the linear layers in BF16; the LM head is always BF16: it is not a quantized layer)."""

    compute: str = "bf16"
    high_precision_share: float = 0.0


@dataclass(frozen=True)
class TrainingDevice:
    """What one accelerator of a cluster brings to a step (built by rules/planning/topology.py from the part and its
    unit)."""

    gemm_tflops: float
    """Achievable dense matmul rate at the training format (peak × the part's achievable-matmul share)."""
    bf16_tflops: float
    """Achievable dense matmul rate at BF16: attention and the layers a recipe keeps in BF16."""
    bandwidth_gbs: float
    stack_efficiency: float
    """Share of the achievable matmul rate a training stack's GEMMs reach in a whole step (fitted per stack)."""
    gpus_per_node: int = 8
    scale_up_gbs: float | None = None
    """Per GPU per direction inside the scale-up domain (NVLink, Infinity Fabric, ICI); None = none."""
    scale_up_domain: int = 1
    pcie_gbs: float = 31.5
    network_gbs: float | None = None
    """A node's NIC bandwidth per direction (GB/s), after the fabric's efficiency; None = no network."""
    softmax_speedup: float = 1.0
    """How many times faster the part runs attention's softmax exponentials than the parts the attention cost was
    fitted on (`Accelerator.attention_softmax_speedup`: Blackwell Ultra 2)."""

    def __post_init__(self) -> None:
        if min(self.gemm_tflops, self.bf16_tflops, self.bandwidth_gbs, self.stack_efficiency) <= 0:
            raise ValueError("training rates must be positive")


@dataclass(frozen=True)
class TrainingRun:
    """The model side of a step: what is trained, on which batch, split how."""

    arch: Architecture
    params: ParameterCount
    seq: int
    global_batch: int
    """Sequences per optimizer step (at least one micro-batch per data-parallel rank: `micro_batches` rounds up)."""
    micro_batch: int
    par: Parallelism
    method: TrainMethod = "full"
    recompute: Recompute = "none"
    fmt: TrainingFormat = TrainingFormat()
    grad_bytes_per_param: float = 6.0
    """Bytes per parameter of the data-parallel exchange of a step: gradients reduce-scattered (FP32: 4) and
    weights all-gathered (BF16: 2), `training_grad_bytes_per_param`."""
    weight_bytes: float = 2.0
    """Bytes per parameter FSDP gathers (BF16 2; a QLoRA base in NF4 ≈ 0.56)."""

    @property
    def micro_batches(self) -> int:
        """Micro-batches each data-parallel rank runs per step (gradient accumulation steps)."""
        return max(1, math.ceil(self.global_batch / (self.par.dp * self.micro_batch)))

    @property
    def sequences(self) -> int:
        """Sequences a step actually processes: the global batch, rounded up to whole micro-batches per rank."""
        return self.micro_batches * self.par.dp * self.micro_batch


@dataclass(frozen=True)
class TrainingStep:
    """One optimizer step on one GPU, part by part (seconds)."""

    seconds: float
    compute: float
    """m micro-batches of GEMMs, attention and elementwise work, recomputation included."""
    bubble: float
    exposed_tp: float
    exposed_cp: float
    exposed_pp: float
    exposed_dp: float
    optimizer: float
    micro_batches: int
    tokens: float
    """Tokens the step trains on (the whole cluster)."""
    gpus: int
    model_flops: float
    """k·N per token × tokens: the FLOPs MFU is counted on (6·N·D, LoRA 4·N·D)."""

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds

    @property
    def exposed(self) -> float:
        """Communication left on the critical path."""
        return self.exposed_tp + self.exposed_cp + self.exposed_pp + self.exposed_dp

    @property
    def scaling_efficiency(self) -> float:
        """The compute's share of the step: 1 when nothing waits for a collective, a bubble or the optimizer."""
        return self.compute / self.seconds

    def mfu(self, peak_tflops: float) -> float:
        """Model FLOPs utilisation against `peak_tflops` (the datasheet peak of the training format)."""
        return self.model_flops / (self.gpus * peak_tflops * TFLOPS * self.seconds)


def default_virtual_stages(layers: int, pp: int) -> int:
    """Virtual stages per GPU the engines' recipes interleave: about two layers per model chunk (NeMo's Llama 3
    70B at PP 8 runs VP 5, Llama 3.1 405B at PP 8 VP 8 and at PP 16 VP 4; Megatron-Bridge performance recipes)."""
    if pp <= 1:
        return 1
    return max(1, round(layers / (2 * pp)))


def _group(dev: TrainingDevice, inner: int, size: int) -> tuple[int, float | None, float | None]:
    """(members per island, GB/s per GPU inside it, per-GPU share of the NICs) of a group of `size` ranks whose
    neighbours are `inner` ranks apart (Megatron's order: tp, cp, dp, then pp). An island is a machine, or the whole
    scale-up domain where it spans machines (a GB200 NVL72 rack of 4-GPU trays, a TPU slice): collectives inside it
    run over NVLink / ICI, and only what leaves it crosses the NICs."""
    node = max(1, dev.gpus_per_node)
    island = max(node, dev.scale_up_domain if dev.scale_up_gbs else 1)
    per_island = max(1, min(size, island // inner)) if inner <= island else 1
    intra = None
    if per_island > 1:
        span = inner * per_island
        intra = dev.scale_up_gbs if dev.scale_up_gbs and span <= dev.scale_up_domain else dev.pcie_gbs
    nic = dev.network_gbs / node if dev.network_gbs else None
    return per_island, intra, nic


def _collective(dev: TrainingDevice, inner: int, size: int, payload: float) -> float:
    """Seconds to reduce-scatter or all-gather `payload` bytes per rank over a group, hierarchically: (r − 1)/r of it
    inside the island over the scale-up link, then (q − 1)/q of the island's 1/r share across q islands over each
    GPU's share of the NICs (an island's ranks of a group use all its NICs); the slower of the two."""
    if size <= 1 or payload <= 0:
        return 0.0
    per_node, intra, nic = _group(dev, inner, size)
    t = 0.0
    if per_node > 1 and intra:
        t = payload * (per_node - 1) / per_node / (intra * GB)
    nodes = size / per_node
    if nodes > 1:
        if nic is None:  # no network: a group cannot span nodes (the planner never builds one); PCIe bounds it
            nic = dev.pcie_gbs
        t = max(t, payload / per_node * (nodes - 1) / nodes / (nic * GB))
    return t


def attention_flops_per_token(arch: Architecture, seq: int) -> float:
    """Attention-score FLOPs one token costs in training, causal, forward and backward: QKᵀ and PV each 2 × s/2 × the
    query width per layer forward, twice that backward (6·L·s·q), which 6·N·D leaves out."""
    q, _, _ = _attention_widths(arch)
    return 6.0 * arch.num_hidden_layers * seq * q


def attention_cost(fitted: float, softmax_speedup: float = 1.0) -> float:
    """Cost of an attention-score FLOP relative to a GEMM FLOP: its own matmul (1) plus the softmax beside it
    (`fitted` − 1), whose exponentials run on the special-function units, not the tensor cores (FlashAttention-3/4:
    on Hopper and Blackwell the exponential's throughput, not the matmul's, bounds the kernel), so a part with faster
    exponential units pays that share `softmax_speedup` times less."""
    return 1.0 + max(0.0, fitted - 1.0) / max(softmax_speedup, 1e-9)


def training_step(run: TrainingRun, dev: TrainingDevice, factors: Factors = DEFAULT_FACTORS) -> TrainingStep:
    """The step time of `run` on GPUs like `dev` (see the module docstring for the parts)."""
    par, arch, params = run.par, run.arch, run.params
    tp, pp, cp = par.tp, par.pp, par.cp
    layers = arch.num_hidden_layers
    h = arch.hidden_size
    m = run.micro_batches
    tokens_mb = run.micro_batch * run.seq / cp  # tokens of one micro-batch on one GPU
    k = FLOPS_PER_PARAM_TOKEN[run.method]
    if run.recompute == "full":
        k += 2.0
    eff = dev.stack_efficiency
    r_low = dev.gemm_tflops * TFLOPS * eff
    r_bf16 = dev.bf16_tflops * TFLOPS * eff
    # GEMMs: the LM head stays in BF16; of the rest, the recipe's high-precision share too
    active = float(params.active)
    head = float(params.lm_head or params.embedding)
    body = max(0.0, active - head)
    depth = gemm_depth_factor(arch, tp)
    hp = run.fmt.high_precision_share
    gemm_flops = k * tokens_mb / (tp * pp)
    gemm = gemm_flops * depth * (body * (1.0 - hp) / r_low + (body * hp + head) / r_bf16)
    attn_passes = 6.0 + (2.0 if run.recompute == "full" else 0.0)
    attention = attention_flops_per_token(arch, run.seq) * attn_passes / 6.0 * tokens_mb / (tp * pp) \
        * attention_cost(factors.training_attention_cost, dev.softmax_speedup) / r_bf16
    elementwise = factors.training_elementwise_bytes * h * tokens_mb * layers / (tp * pp) \
        / (dev.bandwidth_gbs * GB)
    compute_mb = gemm + attention + elementwise
    overlap = factors.training_comm_overlap
    # tensor parallel: 8 collectives of the micro-batch's activations per layer (12 with full recompute)
    exposed_tp = 0.0
    if tp > 1:
        per = 12.0 if run.recompute == "full" else 8.0
        payload = tokens_mb * h * ACTIVATION_BYTES
        t_tp = per * layers / pp * _collective(dev, 1, tp, payload)
        exposed_tp = max(0.0, t_tp - overlap * compute_mb)
    # context parallel: the K/V blocks go round the ring each layer (forward once, backward K/V and their
    # gradients), hidden behind the attention
    exposed_cp = 0.0
    if cp > 1:
        _, kv, _ = _attention_widths(arch)
        payload = tokens_mb * kv * ACTIVATION_BYTES / tp * cp  # the whole sequence's K/V shard per tp rank
        t_cp = 3.0 * layers / pp * _collective(dev, tp, cp, payload)
        exposed_cp = max(0.0, t_cp - overlap * attention)
    # pipeline: activations across each virtual-stage boundary, forward and backward
    exposed_pp = 0.0
    vp = par.vp if m >= pp else 1
    if pp > 1:
        payload = tokens_mb * h * ACTIVATION_BYTES / tp
        per_island, intra, nic = _group(dev, tp * cp * par.dp, pp)
        link = nic if nic and per_island < pp else (intra or dev.pcie_gbs)
        t_pp = 2.0 * par.vp * payload / (link * GB)
        exposed_pp = max(0.0, t_pp - overlap * compute_mb)
    micro = compute_mb + exposed_tp + exposed_cp + exposed_pp
    bubble = (pp - 1) / vp * micro if pp > 1 else 0.0
    # data parallel over the dp × cp ranks holding the same weights
    replicas = par.replicas
    shard = float(params.total) / (tp * pp)
    exposed_dp = 0.0
    if replicas > 1:
        inner = tp
        if run.method == "full":
            if par.zero >= 3:  # FSDP: weights gathered for the forward and the backward, gradients reduced, per
                # micro-batch, each behind that micro-batch
                reduce_b = run.grad_bytes_per_param - run.weight_bytes
                per_mb = _collective(dev, inner, replicas, shard * (2.0 * run.weight_bytes + reduce_b))
                exposed_dp = m * max(0.0, per_mb - overlap * compute_mb)
            else:
                t_dp = _collective(dev, inner, replicas, shard * run.grad_bytes_per_param)
                exposed_dp = max(0.0, t_dp - overlap * compute_mb)
        elif par.zero >= 3:  # adapters on a sharded frozen base (FSDP-QLoRA): the base gathered twice a micro-batch
            per_mb = _collective(dev, inner, replicas, shard * 2.0 * run.weight_bytes)
            exposed_dp = m * max(0.0, per_mb - overlap * compute_mb)
    # the optimizer update: its states read and written once, for the parameters this GPU owns
    trained = shard if run.method == "full" else 0.0
    owned = trained / (replicas if par.zero >= 1 else 1)
    optimizer = owned * OPTIMIZER_TRAFFIC_BYTES / (dev.bandwidth_gbs * GB * factors.decode_bandwidth_efficiency)
    compute = m * compute_mb
    seconds = m * micro + bubble + exposed_dp + optimizer
    tokens = float(run.sequences * run.seq)
    model_flops = FLOPS_PER_PARAM_TOKEN[run.method] * active * tokens
    return TrainingStep(seconds=seconds, compute=compute, bubble=bubble, exposed_tp=m * exposed_tp,
                        exposed_cp=m * exposed_cp, exposed_pp=m * exposed_pp, exposed_dp=exposed_dp,
                        optimizer=optimizer, micro_batches=m, tokens=tokens, gpus=par.gpus, model_flops=model_flops)


BATCH_GROWTH_FROM_PARAMS = 30e9
"""Llama 2 trained 7B-70B on 4M-token batches (Touvron et al. 2023, table 1); Llama 3 405B ends at 16M (Llama Team
2024, section 3.4.1). Below 30B parameters the batch is `training_global_batch_tokens`; above it grows as
(N / 30B)^0.533, reaching 4× (16M) at 405B, and no further."""
BATCH_GROWTH_EXPONENT = math.log(4.0) / math.log(405e9 / BATCH_GROWTH_FROM_PARAMS)


def global_batch_tokens(active_params: float, factors: Factors = DEFAULT_FACTORS) -> float:
    """Typical global batch (tokens per optimizer step) of a pretraining run of this size."""
    growth = min(4.0, float(max(1.0, active_params / BATCH_GROWTH_FROM_PARAMS) ** BATCH_GROWTH_EXPONENT))
    return factors.training_global_batch_tokens * growth


def default_global_batch(active_params: float, seq: int, pretraining: bool, factors: Factors = DEFAULT_FACTORS
                         ) -> int:
    """Sequences per optimizer step when the user gives none: a pretraining run of this size's token batch
    (`global_batch_tokens`: 4M tokens to 30B parameters, 16M at 405B) in sequences of `seq`, or a fine-tune's
    `finetune_global_batch_sequences`."""
    if not pretraining:
        return max(1, round(factors.finetune_global_batch_sequences))
    return max(1, round(global_batch_tokens(active_params, factors) / seq))


def network_efficiency(tcp: bool, nodes: int, factors: Factors = DEFAULT_FACTORS) -> float:
    """Share of the line rate collectives reach across `nodes` nodes: 1 over RDMA (InfiniBand, RoCE, EFA, ICI);
    over plain Ethernet `tcp_fabric_efficiency`, falling by `tcp_fabric_loss_per_doubling` per doubling of nodes."""
    if not tcp or nodes <= 1:
        return 1.0
    return factors.tcp_fabric_efficiency / (1.0 + factors.tcp_fabric_loss_per_doubling * math.log2(nodes))


@dataclass(frozen=True)
class TrainingTime:
    flops: float
    gpu_hours: float
    wall_hours: float
    tokens_per_s: float
    notes: tuple[Note, ...]
    mfu: float = 0.0
    """The model FLOPs utilisation that results (or the one given)."""
    step: TrainingStep | None = None
    """The optimizer step it was sized from (None: a flat or a user-given MFU)."""

    @property
    def days(self) -> float:
        return self.wall_hours / 24.0


def step_text(step: TrainingStep) -> str:
    """'step 2.41 s: compute 2.10 s, exposed communication 0.09 s (data parallel 0.09 s), bubble 0.20 s, ...'."""
    parts = [f"compute {step.compute:.3g} s"]
    comm = [(name, t) for name, t in (("tensor parallel", step.exposed_tp), ("context parallel", step.exposed_cp),
                                      ("pipeline", step.exposed_pp), ("data parallel", step.exposed_dp)) if t > 0]
    if comm:
        parts.append(f"exposed communication {step.exposed:.3g} s ("
                     + ", ".join(f"{name} {t:.3g} s" for name, t in comm) + ")")
    if step.bubble > 0:
        parts.append(f"pipeline bubble {step.bubble:.3g} s")
    if step.optimizer >= 0.001 * step.seconds:
        parts.append(f"optimizer update {step.optimizer:.3g} s")
    head = (f"step {step.seconds:.3g} s for {step.tokens:,.0f} tokens ({step.micro_batches} micro-batch"
            f"{'es' if step.micro_batches != 1 else ''} per data-parallel rank)")
    if len(parts) == 1:  # nothing exposed, no bubble: every GPU computes the whole step (a report says it once)
        return head + ", all of it compute"
    return head + ": " + ", ".join(parts) + f"; scaling efficiency {step.scaling_efficiency:.0%}"


def training_time(active_params: float, tokens: float, *, gpus: int, peak_tflops: float,
                  method: TrainMethod = "full", factors: Factors = DEFAULT_FACTORS, with_notes: bool = True,
                  step: TrainingStep | None = None, mfu: float | None = None) -> TrainingTime:
    """Training compute and time (S8): FLOPs = k·N·D; the time is the run's tokens at the rate of its optimizer
    `step` (rules/sizing/training.py), or FLOPs ÷ (GPUs × dense peak × MFU) with the user's `mfu`, or with the flat
    `training_mfu` when there is no step to size. `with_notes=False` skips the explanatory notes."""
    if active_params <= 0 or tokens <= 0 or gpus < 1 or peak_tflops <= 0:
        raise ValueError("parameters, tokens, GPUs and peak must be positive")
    if mfu is not None and not 0 < mfu <= 1:
        raise ValueError("MFU must be in (0, 1]")
    k = FLOPS_PER_PARAM_TOKEN[method]
    flops = k * active_params * tokens
    used_step = step if mfu is None else None
    if used_step is not None:
        used = used_step.mfu(peak_tflops)
        wall_s = tokens / used_step.tokens_per_s
    else:
        used = mfu if mfu is not None else factors.training_mfu
        wall_s = flops / (peak_tflops * TFLOPS * used) / gpus
    notes: tuple[Note, ...] = ()
    if with_notes:
        if mfu is not None:
            mfu_note = Note("method.training_mfu", "Model FLOPs utilisation given by the user", value=mfu,
                            source="user")
        elif used_step is not None:
            on = f"{gpus:,} GPU{'s' if gpus != 1 else ''}"
            mfu_note = Note("method.training_step", f"Training step on {on}: {step_text(used_step)}; model "
                            f"FLOPs utilisation {used:.1%}", value=used,
                            source="rules/sizing/training.py; calibrated on published runs (tests/data/"
                                   "calibration.toml, tests/benchmarks/fit_training.py)")
        else:
            mfu_note = factors.note("training_mfu", "Model FLOPs utilisation (no device to size the step on)")
        notes = (
            Note("method.training_flops", f"Training FLOPs = {k:g} × N × D with N = active parameters "
                 + ("(forward 2 + backward 4; Kaplan et al. 2020)" if method == "full" else
                    "(LoRA/QLoRA: forward 2 + activation gradients 2; the frozen base gets no weight gradients)"),
                 value=k, source="S8 (000); Kaplan et al. 2020; Hu et al. 2021"),
            mfu_note,
        )
    return TrainingTime(flops=flops, gpu_hours=wall_s * gpus / SECONDS_PER_HOUR, wall_hours=wall_s / SECONDS_PER_HOUR,
                        tokens_per_s=tokens / wall_s, notes=notes, mfu=used, step=used_step)
