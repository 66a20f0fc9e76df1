"""The configuration search behind rule H1: for one deployable unit, the cheapest setup that fits and meets the targets.

A unit (rules/planning/units.py) is what one rents or buys: an instance type, a server, a workstation, a rack. The
search sizes the job in whole units and uses every accelerator it pays for: training spreads over all of them (data
parallel, with tensor and pipeline parallelism inside the domains the topology allows), serving counts them as
replicas. Pure functions over the sizing math (no engine): the rules call them once per unit shape and assert only
the result, one `config` fact or one rule-out, which keeps a consultation to a few hundred rule firings (see the
durable-rules note, §6.5: expand combinations inside a callback, assert survivors).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal, NamedTuple, cast

from gpuadvisor.knowledge.schema import Accelerator, Architecture, ModelSplit, Precision
from gpuadvisor.rules.planning.topology import SCALE_UP_KINDS, Link, Topology, device_for, training_peak
from gpuadvisor.rules.planning.training_plan import (
    CONTEXT_PARALLEL,
    MIN_TOKENS_PER_CP_RANK,
    PIPELINE_PARALLEL,
    TENSOR_PARALLEL,
    training_device,
    training_format,
)
from gpuadvisor.rules.planning.training_plan import layouts as training_layouts
from gpuadvisor.rules.planning.units import Unit, bare_unit
from gpuadvisor.rules.sizing.disagg import (
    MAX_POOL_REPLICAS,
    DecodePool,
    KvTransfer,
    PrefillPool,
    decode_batch,
    decode_pool,
    kv_transfer,
    prefill_pool,
    transfer_bound_replicas,
)
from gpuadvisor.rules.sizing.factors import Factors, Note
from gpuadvisor.rules.sizing.kvcache import kv_bytes_per_sequence, request_kv_tokens
from gpuadvisor.rules.sizing.memory import (
    InferenceMemoryCurve,
    MemoryBreakdown,
    Parallelism,
    Recompute,
    WeightFormat,
    fused_attention,
    training_memory,
    weight_format,
)
from gpuadvisor.rules.sizing.params import ParameterCount
from gpuadvisor.rules.sizing.search import first_true
from gpuadvisor.rules.sizing.serving_load import LoadLatency, latency_at_concurrency, latency_at_rate, serving_rate
from gpuadvisor.rules.sizing.speed import (
    DecodeCurve,
    Device,
    EngineEfficiency,
    PrefillModel,
)
from gpuadvisor.rules.sizing.training import (
    TrainingDevice,
    TrainingFormat,
    TrainingRun,
    TrainingStep,
    TrainingTime,
    default_global_batch,
    default_virtual_stages,
    training_step,
    training_time,
)
from gpuadvisor.rules.sizing.units import GB

MAX_BATCH_PER_REPLICA = 256
"""vLLM's default max_num_seqs: a replica schedules at most this many sequences at once."""
POWERS = (1, 2, 4, 8, 16, 32, 64)
NO_CAP = 1 << 20
"""The GPU count searched when the user sets no maximum: the job's own needs decide the size."""
SERVING_SPAN = 8
"""Most machines one serving replica is pipelined over (beyond, the model does not belong on this unit)."""


@dataclass(frozen=True)
class ServingTargets:
    """What an inference deployment must deliver (from the answers and the S10 demand)."""

    concurrency: int
    tokens_per_s: float
    input_tokens: int
    output_tokens: int
    context: int
    min_tokens_per_s_per_user: float | None
    ttft_max_s: float | None
    latency_p95_s: float | None
    max_gpus: int | None
    """Only when the user sets one: the cluster is sized by the job, not capped by a default."""
    failover: bool = False
    """The fleet must survive the loss of one machine at full load (N+1, on two machines at least): production."""
    requests_per_s: float | None = None
    """The arrival rate latency is queued at (open loop); None = the concurrency is held (closed loop)."""

    @property
    def mean_kv_length(self) -> int:
        """Average KV length a decode step reads: the prompt plus half the output (capped by the context)."""
        return max(1, min(self.context, self.input_tokens + self.output_tokens // 2))

    @property
    def kv_tokens(self) -> int:
        """KV cache one request holds at its end: its prompt plus its output, capped by the context. The batch's
        memory is planned at this length (an engine allocates KV blocks as tokens arrive, vLLM's PagedAttention);
        the maximum context is checked for one request (`InferenceSearch.holds_full_context`)."""
        return request_kv_tokens(self.context, self.input_tokens, self.output_tokens)


@dataclass(frozen=True)
class TrainingTargets:
    tokens: float
    flops_factor: Literal["full", "lora", "qlora"]
    seq: int
    micro_batch: int
    deadline_days: float
    optimizer: Literal["adamw", "sgd", "adam8bit"]
    zero_stage: int | None
    lora_rank: int
    max_gpus: int | None
    pretraining: bool = True
    """Training from scratch steps on a pretraining-size global batch; fine-tuning on a small one."""
    grad_precision: Literal["bf16", "fp32"] = "bf16"
    """Gradients of full training: bf16 (16 B/param with AdamW, the ZeRO paper's count) or fp32 (18, document 002)."""
    global_batch: int | None = None
    """Sequences per optimizer step; None = the practice default of the model's size (`default_global_batch`)."""
    context_parallel: int | None = None
    """The context-parallel degree the user fixes; None = the search chooses."""
    recompute: Literal["auto", "none", "selective", "full"] = "auto"
    """Activation recomputation: the least that fits (auto), or the one given."""


@dataclass(frozen=True)
class Plan:
    """One hardware configuration: how many of an accelerator, split how, and what it delivers."""

    accelerator: str
    count: int
    nodes: int
    tensor_parallel: int
    pipeline_parallel: int
    replicas: int
    zero_stage: int
    batch_per_replica: int
    memory: MemoryBreakdown
    capacity_gb: float
    fits_single_gpu: bool
    bound: Literal["bandwidth", "compute"]
    throttled: bool
    tokens_per_s: float | None = None
    capacity_tokens_per_s: float | None = None
    """Serving: the most tokens/s the configuration delivers (every replica at its largest fitting batch)."""
    tokens_per_s_per_user: float | None = None
    ttft_s: float | None = None
    latency_s: float | None = None
    training_days: float | None = None
    training_gpu_hours: float | None = None
    meets_tpot: bool = True
    meets_ttft: bool = True
    meets_latency: bool = True
    meets_deadline: bool = True
    within_max_gpus: bool = True
    notes: tuple[Note, ...] = field(default_factory=tuple)
    machines: int = 1
    """Machines (instances, servers, racks) of the unit the plan runs on; every accelerator in them is used."""
    replicas_for_load: int = 0
    """Serving: replicas the load needs; the rest are the failover spare(s) and what fills the machines."""
    link: str = "local"
    """What the model-parallel group talks over (a `topology.Link` kind): nvlink, pcie, infiniband ..."""
    sync_link: str = "local"
    """What the data-parallel synchronisation crosses at its slowest (training)."""
    meets_failover: bool = True
    """Serving that must survive a machine loss (production) does: two machines or more, N+1."""
    context_parallel: int = 1
    """Training: GPUs each sequence is split over (ring attention)."""
    recompute: str = "none"
    """Training: the activation recomputation the layout needs to fit (none, selective, full)."""
    training_step: TrainingStep | None = None
    """Training: one optimizer step, part by part (compute, exposed communication, bubble)."""
    expert_parallel: int = 1
    """Serving a mixture-of-experts model: > 1 when the replica's `tensor_parallel` GPUs split the routed experts
    over this many of them and run attention data-parallel (one group per GPU), instead of splitting every matrix
    (what vLLM, SGLang and TensorRT-LLM run for DeepSeek-class models)."""
    fits: bool = True
    """The memory fits with the headroom kept (and one request at the full context, serving). A search keeps only
    plans that fit; a layout evaluated as given (`evaluate`, `gpuadvisor estimate`) may not."""
    recipe_gpus: int = 1
    """Serving: the fewest GPUs a replica the engines' published recipes run this model at on this part
    (rules/planning/recipes.py; 1 when no recipe binds it). A replica below it carries rule W3.recipe."""

    @property
    def fill(self) -> int:
        """Accelerators per machine."""
        return self.count // max(1, self.machines)

    @property
    def memory_gb_per_gpu(self) -> float:
        return self.memory.total / GB

    @property
    def memory_utilization(self) -> float:
        return self.memory.total / (self.capacity_gb * GB)


@dataclass(frozen=True)
class Disaggregation:
    """Separate prefill and decode pools of one unit shape, against the colocated plan of the same unit
    (`InferenceSearch.disaggregated`, sizing in rules/sizing/disagg.py)."""

    prefill: PrefillPool
    decode: DecodePool
    transfer: KvTransfer
    prefill_machines: int
    decode_machines: int
    colocated_machines: int
    network: str
    """The fabric kind the KV cache crosses between the pools (infiniband, efa, roce ...)."""
    offered: bool
    """Cheaper than colocated by at least `disagg_min_saving` on a deployment of `disagg_min_machines` or more,
    or meeting a service level the colocated plan misses."""
    reason: str
    """Why it is offered, or why not (in words, with the figures)."""

    @property
    def machines(self) -> int:
        return self.prefill_machines + self.decode_machines


@dataclass(frozen=True)
class NoFit:
    """Why no configuration of an accelerator works (H1)."""

    accelerator: str
    reason: str


def _replica_layouts(unit: Unit, limit: int, splits: tuple[ModelSplit, ...] = ("tensor", "pipeline")
                     ) -> list[tuple[int, int]]:
    """(tp, pp) per model replica, cheapest communication first: tensor parallel inside a machine (or across the
    machines of a scale-up domain that spans them: NVL72 trays, TPU hosts), then pipeline stages over whole machines
    where a network joins them. Every layout fills whole machines or divides one machine's fill evenly, so a plan uses
    every accelerator it pays for. An engine that splits by layers only (`splits` without "tensor": llama.cpp)
    gets `_pipeline_layouts`."""
    if "tensor" not in splits:
        return _pipeline_layouts(unit, limit)
    topo = unit.topology
    domain = topo.scale_up.domain if topo.scale_up.domain > topo.node else topo.node
    fills = set(unit.fills)
    layouts = [(tp, 1) for tp in POWERS if tp <= min(domain, limit)
               and (any(f % tp == 0 for f in fills) or (tp > topo.node and tp % topo.node == 0))]
    if topo.joinable and not unit.single:
        top = max((tp for tp, _ in layouts if tp >= topo.node), default=topo.node)
        if top % topo.node == 0 or top == topo.node:
            layouts += [(top, pp) for pp in POWERS[1:] if top * pp <= limit and pp * top // topo.node <= SERVING_SPAN]
    return layouts


def _pipeline_layouts(unit: Unit, limit: int) -> list[tuple[int, int]]:
    """(1, pp): whole layers on each GPU, one sequence's token crossing them in turn (llama.cpp's layer split) — over
    any count of a machine's GPUs that divides one of its fills (three cards split a model as well as two), then
    over whole machines where a network joins them."""
    topo = unit.topology
    inside = sorted({n for n in (*POWERS, *unit.fills) if n <= min(topo.node, limit)
                     and any(f % n == 0 for f in unit.fills)})
    layouts = [(1, pp) for pp in inside]
    if topo.joinable and not unit.single:
        layouts += [(1, k * topo.node) for k in POWERS[1:] if k * topo.node <= limit and k <= SERVING_SPAN]
    return layouts


class _Candidate(NamedTuple):
    """One layout's outcome during the search; only the kept one becomes a `Plan` (with notes)."""

    tp: int
    pp: int
    replicas: int
    batch: int
    fit: int
    throttle: float
    gpus: int
    per_user: float
    ttft: float
    latency: float
    meets_tpot: bool
    meets_ttft: bool
    meets_latency: bool
    within_max_gpus: bool
    mem: InferenceMemoryCurve
    speed: DecodeCurve
    device: Device
    machines: int
    replicas_for_load: int
    cost: float
    link: Link
    meets_failover: bool
    ep: int = 1
    below_recipe: bool = False
    """A replica of fewer GPUs than the published recipes run the model at on this part (rules/planning/recipes.py)."""


def _split(tp: int, ep: int) -> tuple[int, int]:
    """(attention tensor parallel, expert parallel) of a replica of `tp` GPUs per stage: `ep` > 1 runs attention
    data-parallel over them (tp 1) and splits the routed experts over all `ep`."""
    return (1, ep) if ep > 1 else (tp, 1)


class InferenceSearch:
    """The serving configuration search for one model, formats, targets and factors, over any accelerator.

    Per-GPU memory does not depend on the accelerator (only on the split and whether attention is fused), so its
    curves are built once and shared by every accelerator searched; speed is per accelerator. Keep one instance per
    consultation (for example in `RuleContext.scratch`): nothing here outlives the inputs it was built from.
    """

    def __init__(self, arch: Architecture, params: ParameterCount, weights: Precision, kv: Precision,
                 t: ServingTargets, factors: Factors,
                 efficiency: Callable[[Accelerator], EngineEfficiency | None] = lambda acc: None,
                 memory_factors: Callable[[Accelerator], tuple[tuple[str, float], ...]] = lambda acc: (),
                 models: int = 1,
                 splits: Callable[[Accelerator], tuple[ModelSplit, ...]] = lambda acc: ("tensor", "pipeline"),
                 recipe_gpus: Callable[[Accelerator], int] = lambda acc: 1) -> None:
        self.arch, self.params, self.weights, self.kv, self.t, self.factors = arch, params, weights, kv, t, factors
        self.models = models
        """Distinct models of this size hosted side by side (inference.models_per_gpu): each replica holds all of
        their weights, and its accelerators take turns between them (a step of b sequences runs each model on
        its b ÷ models)."""
        self.efficiency = efficiency
        self.memory_factors = memory_factors
        """The serving engine's memory factors on an accelerator (free margin, own footprint), overriding the
        assumptions'."""
        self.splits = splits
        """How the serving engine on an accelerator spreads a model over GPUs (engines.toml `model_split`)."""
        self.recipe_gpus = recipe_gpus
        """The fewest GPUs a replica the published recipes run the model at on an accelerator
        (rules/planning/recipes.py): a smaller layout is kept only when no layout of the unit at the recipe's split
        serves."""
        self._saturation = math.ceil(factors.prefill_chunk_tokens / t.kv_tokens)
        self._memory: dict[tuple[int, int, bool, tuple[tuple[str, float], ...], int, int], InferenceMemoryCurve] = {}
        self._speed: DecodeCurve | None = None  # the model's decode constants; `split` per device and layout
        self._format = weight_format(arch, weights)  # gpt-oss: MXFP4 experts; 16-bit embeddings when quantized
        self._bytes_per_weight, self._experts = self._format.bytes_per_weight, self._format.experts
        self._prefill = PrefillModel(arch, params, bytes_per_weight=self._bytes_per_weight,
                                     embedding_bytes=self._format.embedding_bytes,
                                     prompt_tokens=min(t.input_tokens, t.context), factors=factors,
                                     experts=self._experts)
        self._notes: dict[tuple[object, ...], tuple[Note, ...]] = {}  # decode and prefill notes, equal across GPUs
        # a layout's decode curve and iteration time, and its latency under load, are the same on every unit that
        # gives the part the same link: computed once per consultation, not once per instance type or server
        self._curves: dict[tuple[Device, int, int, int], tuple[DecodeCurve, Callable[[int], float]]] = {}
        self._latencies: dict[tuple[Device, int, int, int, int, int], LoadLatency] = {}
        self._loads: dict[tuple[object, ...], tuple[int, int]] = {}
        self._batches: dict[tuple[object, ...], int | None] = {}

    @property
    def weight_format(self) -> WeightFormat:
        """How the weights are stored (`memory.weight_format`): what memory, decode and prefill read."""
        return self._format

    def speed(self, device: Device, tp: int, pp: int, ep: int = 1) -> DecodeCurve:
        """Decode speed of the model on `device` split `tp` × `pp` (at the average KV length); `ep` > 1: the tp
        GPUs split the experts instead (`_split`)."""
        attn, experts = _split(tp, ep)
        if self._speed is None:
            self._speed = DecodeCurve(self.arch, self.params, device, bytes_per_weight=self._bytes_per_weight,
                                      embedding_bytes=self._format.embedding_bytes,
                                      kv_bytes_per_value=self.kv.bytes_per_weight, context=self.t.mean_kv_length,
                                      tp=attn, pp=pp, factors=self.factors, experts=self._experts, ep=experts)
            return self._speed
        return self._speed.split(device, attn, pp, experts)

    def memory(self, tp: int, pp: int, flash: bool,
               overrides: tuple[tuple[str, float], ...] = (), ep: int = 1, *,
               kv_tokens: int | None = None) -> InferenceMemoryCurve:
        """Per-GPU memory of a split as a function of the batch, each sequence holding `kv_tokens` of KV cache
        (default: a request's prompt and output, `ServingTargets.kv_tokens`); `overrides` are the engine's memory
        factors (see `memory_factors`)."""
        tokens = self.t.kv_tokens if kv_tokens is None else kv_tokens
        key = (tp, pp, flash, overrides, ep, tokens)
        curve = self._memory.get(key)
        if curve is None:
            factors = replace(self.factors, **dict(overrides)) if overrides else self.factors
            attn, experts = _split(tp, ep)
            curve = self._memory[key] = InferenceMemoryCurve(
                self.arch, self.params, weight_bytes_per_param=self._bytes_per_weight,
                embedding_bytes=self._format.embedding_bytes,
                kv_bytes_per_value=self.kv.bytes_per_weight, context=tokens,
                par=Parallelism(tp=attn, pp=pp, ep=experts), flash_attention=flash, factors=factors,
                experts=self._experts, models=self.models)
        return curve

    def holds_full_context(self, tp: int, pp: int, flash: bool, capacity: float,
                           overrides: tuple[tuple[str, float], ...] = (), ep: int = 1) -> bool:
        """Whether one request at the full context fits a replica of this split (an engine refuses to start when
        its maximum model length does not fit: vLLM's max_model_len check)."""
        return self.memory(tp, pp, flash, overrides, ep, kv_tokens=self.t.context).fits(1, capacity)

    def kv_room_gb(self, acc: Accelerator, tp: int, pp: int, ep: int = 1) -> float:
        """GB each GPU of a replica split `tp` × `pp` on `acc` keeps for the KV cache: the memory the engine may use
        (its fraction, `headroom_fraction`) less the weights, activations and runtime (rules/planning/recipes.py)."""
        mem = self.memory(tp, pp, fused_attention(acc), self.memory_factors(acc), ep)
        kv = mem.breakdown(1, with_notes=False).kv_cache
        return (acc.memory_bytes() * (1.0 - mem.factors.headroom_fraction) - (mem.total(1) - kv)) / GB

    def curve(self, device: Device, tp: int, pp: int, ep: int = 1) -> tuple[DecodeCurve, Callable[[int], float]]:
        """`speed` and `seconds` of a layout on a device, once per consultation."""
        key = (device, tp, pp, ep)
        found = self._curves.get(key)
        if found is None:
            speed = self.speed(device, tp, pp, ep)
            found = self._curves[key] = (speed, self.seconds(speed))
        return found

    def expert_splits(self, tp: int, link: Link) -> tuple[int, ...]:
        """The ways a replica of `tp` GPUs per stage may hold a mixture-of-experts model: the matrices split
        (1), and, inside a scale-up domain (NVLink, Infinity Fabric, ICI: the all-to-all of every MoE layer needs
        it) with at most as many GPUs as routed experts, the experts split over all tp GPUs with attention
        data-parallel (tp)."""
        moe = self.arch.moe
        if moe is None or tp < 2 or self.models > 1 or not link.fast or tp > moe.num_experts:
            return (1,)
        return (1, tp)

    def seconds(self, speed: DecodeCurve) -> Callable[[int], float]:
        """One engine iteration at a batch, every prompt processed (continuous batching with chunked prefill,
        `serving_load.serving_rate`): its inverse is each stream's speed, batch ÷ it the replica's throughput. With
        several models hosted, each model with streams in flight runs its share in turn."""
        t = self.t
        flops, chunk = self._prefill.flops, self.factors.prefill_chunk_tokens
        prompt, out = min(t.input_tokens, t.context), t.output_tokens
        cache: dict[int, float] = {}

        def iteration(batch: int) -> float:
            found = cache.get(batch)
            if found is None:
                found = cache[batch] = serving_rate(speed, flops, batch=batch, input_tokens=prompt,
                                                    output_tokens=out, chunk_tokens=chunk).iteration_seconds
            return found

        n = self.models
        if n == 1:
            return iteration

        def in_turn(batch: int) -> float:
            # the streams in flight are spread over the models; only models with a stream take a turn
            active = max(1, min(n, batch))
            return active * iteration(-(-batch // active))

        return in_turn

    def latency(self, speed: DecodeCurve, replicas: int, slots: int) -> LoadLatency:
        """p50/p95 time to first token, time per token and request latency of one replica at its share of the load:
        queued at the arrival rate when one is given (M/M/c), else with its share of the concurrency held."""
        t = self.t
        prompt, out, chunk = min(t.input_tokens, t.context), t.output_tokens, self.factors.prefill_chunk_tokens
        if t.requests_per_s:
            return latency_at_rate(speed, self._prefill.flops, arrival_rate=t.requests_per_s / replicas, slots=slots,
                                   input_tokens=prompt, output_tokens=out, chunk_tokens=chunk)
        return latency_at_concurrency(speed, self._prefill.flops, concurrency=max(1, math.ceil(t.concurrency /
                                                                                                replicas)),
                                      slots=slots, input_tokens=prompt, output_tokens=out, chunk_tokens=chunk)

    def plan(self, acc: Accelerator, unit: Unit | None = None, with_notes: bool = True) -> Plan | NoFit:
        """The cheapest way to serve on `unit` (default: the part alone, `units.bare_unit`): a replica layout that
        fits, enough replicas for the concurrency and the load (N+1 on two machines or more when `failover`), whole
        machines each filled with whole replicas, SLA checked. `with_notes=False` leaves out the explanatory notes
        (and the memory breakdown's), nothing else."""
        unit = unit or bare_unit(acc)
        t = self.t
        capacity = acc.memory_bytes()
        flash = fused_attention(acc)
        # searched beyond a user's maximum too, so a plan that needs more can say how many (C.max-gpus)
        search_limit = max(t.max_gpus or 0, SERVING_SPAN * unit.node, unit.topology.scale_up.domain)
        candidates: list[_Candidate] = []
        devices: dict[str, Device] = {}
        engine_memory = self.memory_factors(acc)
        held: list[tuple[int, int]] = []  # (GPUs a replica, sequences it holds) of layouts that fit but not the load
        whole = _costs_nothing_more(unit)
        recipe = self.recipe_gpus(acc)
        for tp, pp in _replica_layouts(unit, search_limit, self.splits(acc)):
            if pp > self.arch.num_hidden_layers:
                continue
            link = replica_link(unit.topology, tp, pp)
            settled = False
            for ep in self.expert_splits(tp, link):
                mem = self.memory(tp, pp, flash, engine_memory, ep)
                if not mem.fits(1, capacity) or not self.holds_full_context(tp, pp, flash, capacity, engine_memory,
                                                                             ep):
                    continue
                fit = _largest_fitting_batch(mem, capacity, MAX_BATCH_PER_REPLICA, self._saturation)
                device = devices.get(link.kind)
                if device is None:
                    device = devices[link.kind] = device_for(acc, self.weights.compute, link, self.efficiency(acc))
                if device.peak_tflops is None:
                    # no published compute peak: batching gains cannot be estimated, so none are assumed (a replica
                    # serves one sequence at a time; more load takes more replicas)
                    fit = 1
                speed, seconds = self.curve(device, tp, pp, ep)
                found = self._packed(acc, unit, tp, pp, fit, speed, seconds, device, mem, link, ep)
                if found is not None:
                    found = found._replace(below_recipe=max(tp, ep) * pp < recipe)
                    candidates.append(found)
                    # hardware that is there already is searched whole: a wider split may be faster at no cost;
                    # below the recipes' split, the search goes on to it
                    settled = settled or (not whole and not found.below_recipe and _settled(candidates))
                else:
                    held.append((max(tp, ep) * pp, fit))
            if settled:
                break
        if not candidates and held:  # the model fits; the load does not (one machine that cannot grow)
            size, fit = min(held)
            why = ("no published compute rate, so one sequence at a time" if fit == 1 and
                   device_for(acc, self.weights.compute).peak_tflops is None else f"at most {fit} sequences each")
            return NoFit(acc.id, f"{acc.name} in {unit.name}: the model fits, but {t.concurrency:,} requests in "
                                 f"flight need more replicas of {size} GPU(s) ({why}) than the {max(unit.fills)} "
                                 f"GPU(s) there hold")
        if not candidates:
            return NoFit(acc.id, _no_fit_reason(acc, unit, f"the weights and one request's KV cache at the full "
                                                           f"{t.context:,}-token context"))
        meeting = [c for c in candidates if c.meets_tpot and c.meets_ttft and c.meets_latency and c.within_max_gpus
                   and c.meets_failover]
        c = min(meeting or candidates, key=lambda c: (c.below_recipe, c.cost, _gpus_key(unit, c, t.concurrency),
                                                      c.tp * c.pp, c.ep))
        return replace(self._plan(acc, unit, c, capacity, flash, with_notes), recipe_gpus=recipe)

    def disaggregated(self, acc: Accelerator, unit: Unit, plan: Plan) -> Disaggregation | str | None:
        """Prefill and decode pools on `unit` at the colocated `plan`'s replica layout, compared with it (issue 17;
        rules/sizing/disagg.py). None when not weighed at all (no arrival rate, or one machine that cannot be
        split); a string when weighed and not possible (why)."""
        t = self.t
        if not t.requests_per_s or unit.single:
            return None
        topo = unit.topology
        if topo.scale_out is None:
            return ("no network joins this unit's machines: the KV cache must move from the prefill "
                    "machines to the decode machines over RDMA-class fabric (InfiniBand, RoCE, EFA)")
        if topo.tcp_network:
            return ("this unit's machines are joined by TCP Ethernet only: moving the KV cache between prefill and "
                    "decode machines needs RDMA-class fabric (InfiniBand, RoCE, EFA)")
        tp, pp, ep = plan.tensor_parallel, plan.pipeline_parallel, plan.expert_parallel
        size, fill = tp * pp, plan.count // max(1, plan.machines)
        device = device_for(acc, self.weights.compute, topo.link(tp), self.efficiency(acc))
        speed, _ = self.curve(device, tp, pp, ep)
        prompt = min(t.input_tokens, t.context)
        rate = t.tokens_per_s / t.output_tokens if t.tokens_per_s > 0 else t.requests_per_s
        transfer = self._kv_transfer(topo, size, prompt)
        k = max(1, int(self.factors.prefill_chunk_tokens // prompt))
        pass_s = PrefillModel(self.arch, self.params, bytes_per_weight=self._bytes_per_weight, prompt_tokens=prompt,
                              batch=k, embedding_bytes=self._format.embedding_bytes, factors=self.factors,
                              experts=self._experts).seconds(device, *_split(tp, ep))
        pre = prefill_pool(pass_s, k, rate, t.ttft_max_s, transfer.seconds)
        if pre is None:
            if t.ttft_max_s is not None and pass_s + transfer.seconds > t.ttft_max_s:
                return (f"a prefill replica alone takes {pass_s + transfer.seconds:.2f} s for one {prompt:,}-token "
                        f"prompt and its KV transfer, beyond the {t.ttft_max_s:g} s time-to-first-token target")
            return (f"the prefill pool would need more than {MAX_POOL_REPLICAS:,} replicas at "
                    f"{rate:,.0f} requests/s")
        mem = self.memory(tp, pp, fused_attention(acc), self.memory_factors(acc), ep)
        fit = _largest_fitting_batch(mem, acc.memory_bytes(), MAX_BATCH_PER_REPLICA, self._saturation)
        b = decode_batch(speed.seconds, fit if device.peak_tflops is not None else 1, t.min_tokens_per_s_per_user,
                         pre.ttft_p95_s, t.output_tokens, t.latency_p95_s)
        if b is None:
            return "a decode-only replica cannot hold the per-user speed or the latency target even at batch 1"
        dec = decode_pool(speed.seconds(b), b, t.tokens_per_s, t.concurrency)
        pre_replicas = max(pre.replicas, transfer_bound_replicas(rate, transfer))
        if pre_replicas > pre.replicas:
            pre = replace(pre, replicas=pre_replicas, utilization=pre.utilization * pre.replicas / pre_replicas)
        p_machines = _machines(unit, size, fill, pre.replicas, t.failover)[0]
        d_machines = _machines(unit, size, fill, dec.replicas, t.failover)[0]
        if p_machines is None or d_machines is None:
            return None
        return self._disagg_verdict(unit, plan, pre, dec, transfer, p_machines, d_machines, prompt)

    def _kv_transfer(self, topo: Topology, size: int, prompt: int) -> KvTransfer:
        """One prompt's KV cache over the replica's share of its machines' NICs (the GPUs of a replica send their
        shards over their own NICs); the `training_network_gbs` stand-in when the bandwidth is unpublished."""
        net = topo.network_gbs() or self.factors.training_network_gbs
        share = net * size / topo.node
        return kv_transfer(kv_bytes_per_sequence(self.arch, self.kv.bytes_per_weight, prompt), share,
                           self.factors.kv_transfer_efficiency)

    def _disagg_verdict(self, unit: Unit, plan: Plan, pre: PrefillPool, dec: DecodePool, transfer: KvTransfer,
                        p_machines: int, d_machines: int, prompt: int) -> Disaggregation:
        """Offered or only considered, and why: fewer machines by `disagg_min_saving` on a deployment of at least
        `disagg_min_machines`, or a service level the colocated plan misses and the pools meet."""
        f, colo = self.factors, plan.machines
        total = p_machines + d_machines
        misses = not (plan.meets_ttft and plan.meets_tpot and plan.meets_latency)
        cheaper = colo >= f.disagg_min_machines and total <= colo * (1.0 - f.disagg_min_saving)
        offered = cheaper or misses
        pools = (f"{p_machines} prefill + {d_machines} decode machines ({pre.replicas} + {dec.replicas} "
                 f"replicas of TP {plan.tensor_parallel}" + (f" × PP {plan.pipeline_parallel}"
                                                             if plan.pipeline_parallel > 1 else "") + ")")
        why = (f"prefill-only replicas run the {prompt:,}-token prompts at full chunks ({pre.pass_seconds:.2f} s a "
               f"pass, first token p95 {pre.ttft_p95_s:.2f} s with {transfer.seconds * 1e3:,.0f} ms to move "
               f"{transfer.bytes_per_request / GB:,.2f} GB of KV cache), and decode replicas run batch "
               f"{dec.batch} at {dec.tokens_per_s_per_user:,.1f} tokens/s per user with no prompt chunks in their "
               "steps")
        if offered:
            reason = (f"{pools}, {total} in all instead of {colo} colocated"
                      + (" (the colocated plan misses the service level)" if misses and not cheaper else "")
                      + f": {why}")
        elif colo < f.disagg_min_machines:
            reason = (f"colocated {colo} machine(s) are below the {f.disagg_min_machines:g} where a "
                      f"split pays (it would take {pools}, {total} in all)")
        else:
            reason = f"colocated {colo} machines are cheaper than {pools}, {total} in all"
        return Disaggregation(pre, dec, transfer, p_machines, d_machines, colo,
                              unit.topology.scale_out.kind if unit.topology.scale_out else "none",
                              offered=offered, reason=reason)

    def _packed(self, acc: Accelerator, unit: Unit, tp: int, pp: int, fit: int, speed: DecodeCurve,
                seconds: Callable[[int], float], device: Device, mem: InferenceMemoryCurve,
                link: Link, ep: int = 1) -> _Candidate | None:
        """One layout packed into the unit's machines at the cheapest fill; None when no fill holds whole
        replicas (some accelerators paid for would sit idle)."""
        t, factors = self.t, self.factors
        size = tp * pp
        best: _Candidate | None = None
        for fill in _fills_for(unit, size):
            throttle = 1.0 - factors.consumer_dense_throttle if acc.market == "consumer" and fill >= 4 else 1.0
            layout = (device, tp, pp, fit, throttle, ep)
            found_load = self._loads.get(layout)
            if found_load is None:
                found_load = self._loads[layout] = _replicas_for_load(fit, t, seconds, throttle)
            batch, load = found_load
            machines, count, survives = _machines(unit, size, fill, load, t.failover)
            if machines is None:
                continue
            replicas = count // size
            if (layout, replicas) not in self._batches:
                self._batches[layout, replicas] = _smallest_batch(replicas, fit, t, seconds, throttle)
            batch = self._batches[layout, replicas] or batch
            batch = max(batch, min(fit, math.ceil(t.concurrency / replicas)))
            c = self._candidate(unit, tp, pp, ep, replicas, batch, fit, throttle, count, machines, load, survives,
                                mem, speed, device, link)
            if best is None or _preferred(unit, c, t.concurrency) < _preferred(unit, best, t.concurrency):
                best = c
        return best

    def _candidate(self, unit: Unit, tp: int, pp: int, ep: int, replicas: int, batch: int, fit: int,
                   throttle: float, count: int, machines: int, load: int, survives: bool, mem: InferenceMemoryCurve,
                   speed: DecodeCurve, device: Device, link: Link) -> _Candidate:
        """A layout's outcome at `replicas` replicas of `batch` sequences: its latency under the load (the
        service level checked here), its GPUs and its cost."""
        t = self.t
        key = (device, tp, pp, replicas, fit, ep)
        load_latency = self._latencies.get(key) or self._latencies.setdefault(
            key, self.latency(speed, replicas, max(fit, 1)))
        per_user = 1.0 / load_latency.tpot_p50_s * throttle  # the stream at the batch the engine forms
        ttft = load_latency.ttft_p95_s / throttle
        latency = load_latency.latency_p95_s / throttle
        return _Candidate(
            tp, pp, replicas, batch, fit, throttle, count, per_user, ttft, latency,
            meets_tpot=t.min_tokens_per_s_per_user is None or per_user >= t.min_tokens_per_s_per_user,
            meets_ttft=t.ttft_max_s is None or ttft <= t.ttft_max_s,
            meets_latency=t.latency_p95_s is None or latency <= t.latency_p95_s,
            within_max_gpus=t.max_gpus is None or count <= t.max_gpus, mem=mem, speed=speed, device=device,
            machines=machines, replicas_for_load=load, cost=unit.cost(machines, count), link=link,
            meets_failover=survives or not t.failover, ep=ep)

    def evaluate(self, acc: Accelerator, unit: Unit, tp: int, pp: int = 1, ep: int = 1, *, batch: int,
                 replicas: int = 1) -> Plan:
        """The plan of a layout as given — `replicas` replicas of `tp` (or `ep`) × `pp` GPUs, each running `batch`
        sequences — with the figures a search would give it (`gpuadvisor estimate`: the pipeline fixed to one
        accelerator and layout). It may not fit (`Plan.fits`); its speeds and latencies are reported anyway."""
        capacity = acc.memory_bytes()
        flash = fused_attention(acc)
        link = replica_link(unit.topology, max(tp, ep), pp)
        engine_memory = self.memory_factors(acc)
        mem = self.memory(tp, pp, flash, engine_memory, ep)
        holds = self.holds_full_context(tp, pp, flash, capacity, engine_memory, ep)
        fit = (_largest_fitting_batch(mem, capacity, max(MAX_BATCH_PER_REPLICA, batch), self._saturation)
               if mem.fits(1, capacity) else 0)
        device = device_for(acc, self.weights.compute, link, self.efficiency(acc))
        speed, _ = self.curve(device, tp, pp, ep)
        size = max(tp, ep) * pp
        count = size * replicas
        machines = max(1, math.ceil(count / unit.node)) if not unit.single else 1
        fill = count // machines
        throttle = 1.0 - self.factors.consumer_dense_throttle if acc.market == "consumer" and fill >= 4 else 1.0
        c = self._candidate(unit, tp, pp, ep, replicas, batch, fit, throttle, count, machines, replicas,
                            machines >= 2, mem, speed, device, link)
        plan = self._plan(acc, unit, c, capacity, flash, with_notes=True)
        return replace(plan, fits=holds and mem.fits(batch, capacity))

    def explain(self, acc: Accelerator, unit: Unit, plan: Plan) -> tuple[Note, ...]:
        """The notes of a plan this search found without them (`with_notes=False`): its own layout evaluated with
        notes, nothing searched again (the notes of memory, decode and prefill depend on the layout and batch only;
        ep is 1 or tp, so the layout's link is the search's)."""
        return self.evaluate(acc, unit, plan.tensor_parallel, plan.pipeline_parallel, plan.expert_parallel,
                             batch=plan.batch_per_replica, replicas=plan.replicas).notes

    def _plan(self, acc: Accelerator, unit: Unit, c: _Candidate, capacity: float, flash: bool,
              with_notes: bool) -> Plan:
        """The kept layout as a `Plan`, with the notes of its memory, decode and prefill figures."""
        _, seconds = self.curve(c.device, c.tp, c.pp, c.ep)
        bound, step_seconds = c.speed.bound(c.batch), seconds(c.batch)
        memory = c.mem.breakdown(c.batch, with_notes)
        step_notes: tuple[Note, ...] = ()
        pre_notes: tuple[Note, ...] = ()
        if with_notes:
            key: tuple[object, ...] = ("decode", c.batch, c.tp > 1 and c.device.link_kind == "nvlink", c.tp, c.ep,
                                       c.device.efficiency, c.device.sustained,  # both are named in the notes
                                       # and an MoE's grouped-GEMM rate, from the part's ridge point
                                       (c.device.peak_tflops, c.device.bandwidth_gbs) if self.arch.moe else None)
            step_notes = self._notes.get(key) or c.speed.step(c.batch).notes
            self._notes[key] = step_notes
            key = ("prefill", bool(c.device.peak_tflops), c.ep > 1)
            attn, experts = _split(c.tp, c.ep)
            pre_notes = self._notes.get(key) or self._prefill.prefill(c.device, attn, ep=experts).notes
            self._notes[key] = pre_notes
        return Plan(
            accelerator=acc.id, count=c.gpus, nodes=c.machines, tensor_parallel=c.tp,
            pipeline_parallel=c.pp, replicas=c.replicas, zero_stage=0, batch_per_replica=c.batch, memory=memory,
            capacity_gb=acc.memory_bytes() / GB,
            fits_single_gpu=c.tp * c.pp == 1 or self.memory(1, 1, flash, self.memory_factors(acc)).fits(1, capacity),
            bound=bound, throttled=c.throttle < 1.0, tokens_per_s=c.batch / step_seconds * c.throttle * c.replicas,
            # no capacity without a compute rate: the prompts' time would be counted as zero (issue 44)
            capacity_tokens_per_s=_capacity(c, self.t, seconds) if c.device.peak_tflops is not None else None,
            tokens_per_s_per_user=c.per_user, ttft_s=c.ttft, latency_s=c.latency, meets_tpot=c.meets_tpot,
            meets_ttft=c.meets_ttft, meets_latency=c.meets_latency, within_max_gpus=c.within_max_gpus,
            notes=(*memory.notes, *step_notes, *pre_notes), machines=c.machines,
            replicas_for_load=c.replicas_for_load, link=c.link.kind if c.tp * c.pp > 1 else "local",
            meets_failover=c.meets_failover, expert_parallel=c.ep,
        )


def plan_inference(acc: Accelerator, arch: Architecture, params: ParameterCount, weights: Precision,
                   kv: Precision, t: ServingTargets, factors: Factors, unit: Unit | None = None) -> Plan | NoFit:
    """Cheapest replica layout on `unit` that fits; enough replicas for concurrency and tokens/s; SLA checked.
    (One unit; searching many for the same model, use one `InferenceSearch`.)"""
    return InferenceSearch(arch, params, weights, kv, t, factors).plan(acc, unit)


def _gpus_key(unit: Unit, c: _Candidate, concurrency: int) -> tuple[float, int]:
    """Fewer GPUs first (each costs money), except where they cost nothing more. On a free notebook every GPU of
    the machine that has a request to serve does (Kaggle's T4 x2 runs two replicas for two requests or more), since
    the second costs nothing and doubles the capacity; a replica with no request of its own is not planned. On
    your own GPUs the layout each stream runs fastest on at the load (its throughput is that × the requests in
    flight): eight owned A100s serving 8 users in TP 8 rather than TP 4 with half the server idle."""
    if unit.acquisition == "free":
        return -min(c.replicas, concurrency), c.gpus
    if unit.acquisition == "own" and unit.single:
        return -round(c.per_user, 6), c.gpus
    return 0, c.gpus


def _preferred(unit: Unit, c: _Candidate, concurrency: int) -> tuple[bool, float, tuple[float, int]]:
    """How a layout's machine fills are ranked: failover met first, then cost, then GPUs (`_gpus_key`)."""
    return not c.meets_failover, c.cost, _gpus_key(unit, c, concurrency)


def replica_link(topo: Topology, tp: int, pp: int) -> Link:
    """What a replica's GPUs talk over: its tensor-parallel group's link, or — split by layers alone — the link
    its pipeline stages hand each token over (the network between two DGX Sparks, PCIe between cards)."""
    return topo.link(tp if tp > 1 else pp)


def _settled(candidates: list[_Candidate]) -> bool:
    """Stop widening the model split once a layout meets every target and the last widening saved nothing: more
    tensor parallelism only adds communication from there (a single replica cannot get smaller)."""
    last = candidates[-1]
    ok = last.meets_tpot and last.meets_ttft and last.meets_latency
    if ok and last.replicas_for_load == 1:
        return True
    return ok and len(candidates) >= 2 and last.cost >= candidates[-2].cost


def _replicas_for_load(fit: int, t: ServingTargets, seconds: Callable[[int], float],
                       throttle: float) -> tuple[int, int]:
    """(batch per replica, replicas) that hold at least `t.concurrency` sequences in flight and serve
    `t.tokens_per_s`, using the smallest batch that does (a smaller batch streams faster to each user); `throttle`
    is the W4 consumer-rack throughput factor (1 when it does not apply)."""
    replicas = max(1, math.ceil(t.concurrency / fit))
    while True:
        batch = _smallest_batch(replicas, fit, t, seconds, throttle)
        if batch is not None and _fast_enough(seconds(batch), t, throttle):
            return batch, replicas
        if batch is not None and batch <= max(1, math.ceil(t.concurrency / replicas)):
            return batch, replicas  # smaller batches would drop requests in flight: the SLA rules judge this layout
        if batch is None:
            replicas = max(replicas + 1, math.ceil(t.tokens_per_s / (fit / seconds(fit) * throttle)))
        else:
            replicas += max(1, replicas // 4)  # more replicas, smaller batches, faster streams per user


def _fills_for(unit: Unit, size: int) -> list[int]:
    """Machine fills that hold whole replicas of `size` accelerators: fills divisible by it, or full machines when
    a replica spans several."""
    if size > unit.node:
        return [unit.node] if size % unit.node == 0 else []
    return [f for f in unit.fills if f % size == 0]


def _machines(unit: Unit, size: int, fill: int, load: int, failover: bool) -> tuple[int | None, int, bool]:
    """(machines, accelerators, survives a machine loss) for `load` replicas of `size` at `fill` per machine; with
    `failover`, enough that losing any one machine still leaves `load` replicas, on two machines at least.
    Your own machine and a free notebook are one machine: (None, 0, False) when the load needs more; your own
    GPUs meet failover with a spare replica on them, a notebook never (the service-level rule says so)."""
    if size > unit.node:
        per_replica = size // unit.node
        machines = (load + 1 if failover else load) * per_replica
    else:
        machines = math.ceil(load / (fill // size))
        if failover:
            machines = max(2, machines + 1)
    if unit.single:
        # your own GPUs: failover is a spare replica on them (which machines hold them is not known); a free
        # notebook has none
        spare = 1 if failover and unit.kind == "own" else 0
        if (load + spare) * size <= fill:
            return 1, fill, spare > 0
        return (1, fill, False) if load * size <= fill else (None, 0, False)
    return machines, machines * fill, machines >= 2


def _smallest_batch(replicas: int, fit: int, t: ServingTargets, seconds: Callable[[int], float],
                    throttle: float) -> int | None:
    """Smallest batch per replica that holds the concurrency and serves the load, or None if even `fit` cannot.

    Throughput grows with the batch. A step's time is close to linear in the batch (weights once, KV cache and
    FLOPs per sequence), so the batch is solved from the line through both ends and then confirmed by probing
    around that guess (MoE steps bend away from the line: more experts are touched as the batch grows)."""
    low = max(1, math.ceil(t.concurrency / replicas))
    if low > fit:
        return None

    def serves(b: int) -> bool:
        return replicas * (b / seconds(b)) * throttle >= t.tokens_per_s

    if not serves(fit):
        return None
    if serves(low):
        return low
    need = t.tokens_per_s / (replicas * throttle)  # tokens/s one replica must deliver
    s_lo, s_hi = seconds(low), seconds(fit)
    slope = (s_hi - s_lo) / (fit - low) if fit > low else 0.0
    alpha = s_lo - slope * low
    guess = fit if need * slope >= 1 else math.ceil(need * alpha / (1 - need * slope))
    return _first_true(serves, low, fit, min(fit, max(low + 1, guess)))


def _first_true(pred: Callable[[int], bool], lo: int, hi: int, guess: int) -> int:
    """The smallest b in (lo, hi] with pred(b), for a monotone pred with pred(lo) false and pred(hi) true.

    Probes the guess, gallops away from it (steps 1, 2, 4, …) until the answer is bracketed, then bisects: a good
    guess costs two probes, a poor one about 2·log2 of its error, never more than a plain bisection's twice.
    """
    if guess < hi:
        if pred(guess):
            hi = guess
        else:
            lo = guess
    step = 1
    if hi == guess or guess >= hi:  # the answer is at or below hi: walk down
        while hi - step > lo:
            if not pred(hi - step):
                lo = hi - step
                break
            hi -= step
            step *= 2
    else:  # pred(guess) is false: walk up
        while lo + step < hi:
            if pred(lo + step):
                hi = lo + step
                break
            lo += step
            step *= 2
    return first_true(pred, lo, hi)


def _capacity(c: _Candidate, t: ServingTargets, seconds: Callable[[int], float]) -> float | None:
    """The most tokens/s the plan serves within its service level: every replica at the largest batch that fits
    memory AND keeps each stream at the per-user floor and within the p95 latency (`_fast_enough`), never below the
    planned batch. Capacity quoted at a batch the service level forbids would promise headroom the plan lacks."""
    if not c.fit:
        return None
    low = max(1, min(c.batch, c.fit))
    b = c.fit
    if not _fast_enough(seconds(b), t, c.throttle):
        lo, hi = low, c.fit  # speed falls as the batch grows: bisect for the last batch still fast enough
        if not _fast_enough(seconds(lo), t, c.throttle):
            hi = lo
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if _fast_enough(seconds(mid), t, c.throttle) else (lo, mid)
        b = lo
    return b / seconds(b) * c.throttle * c.replicas


def _fast_enough(step_seconds: float, t: ServingTargets, throttle: float) -> bool:
    per_user = 1.0 / step_seconds * throttle
    if t.min_tokens_per_s_per_user is not None and per_user < t.min_tokens_per_s_per_user:
        return False
    return t.latency_p95_s is None or t.output_tokens / per_user <= t.latency_p95_s


def _largest_fitting_batch(mem: InferenceMemoryCurve, capacity: float, upper: int, saturation: int) -> int:
    """Most sequences one replica holds at full context (batch 1 is known to fit).

    From `saturation` sequences on (where the prefill chunk is full), memory is exactly linear in the batch (KV cache
    and logits grow, activations do not), so the limit is solved from two points and confirmed; below it, bisect.
    """
    s = max(1, min(saturation, upper))
    if mem.fits(s, capacity):
        if s >= upper:
            return upper
        at_s = mem.total(s)
        slope = mem.total(s + 1) - at_s
        usable = capacity * (1.0 - mem.factors.headroom_fraction)
        b = upper if slope <= 0 else min(upper, s + int((usable - at_s) / slope))
        while b > s and not mem.fits(b, capacity):  # guard against rounding at the boundary
            b -= 1
        return b
    lo, hi = 1, s - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mem.fits(mid, capacity):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _no_fit_reason(acc: Accelerator, unit: Unit, what: str) -> str:
    topo = unit.topology
    if topo.joinable:
        where = "over as many machines as a cluster allows"
    elif unit.single:
        where = f"over the {max(unit.fills)} accelerator(s) there"
    else:
        where = f"over the {topo.node} accelerator(s) one {unit.kind} holds"
    return (f"{acc.name} ({acc.memory_gb.value:g} GB) in {unit.name}: {what} do not fit even split {where} with the "
            "required headroom")


_Timed = tuple[int, int, Parallelism, str, TrainingTime, float]
"""(machines, GPUs, layout, recompute, the run's time, its slowdown): a training deployment and how long it takes."""
RECOMPUTES: tuple[Recompute, ...] = ("none", "selective", "full")
LAYOUT_WALK = 64
"""Machines added one at a time, at most, looking for a GPU count some layout divides evenly."""
EVALUATED_LAYOUTS = 48
"""Fitting layouts whose step is evaluated per GPU count, least model-parallel first (the fastest is among them:
more splitting than memory needs only adds communication)."""


def _costs_nothing_more(unit: Unit) -> bool:
    """One machine that is there already, whatever share of it is used: a free notebook, your own GPUs."""
    return unit.single and unit.acquisition in ("free", "own")


def _deployable(unit: Unit, n: int, cap: int) -> tuple[int, int] | None:
    """(machines, accelerators): the smallest way to deploy at least `n` accelerators on `unit` for one job (a
    machine at one of its fills, else whole machines joined by the cluster network), within `cap`; None when
    none exists."""
    for f in unit.fills:
        if f >= n:
            return (1, f) if f <= cap else None
    if not unit.topology.joinable or unit.single:
        return None
    machines = math.ceil(n / unit.node)
    return (machines, machines * unit.node) if machines * unit.node <= cap else None


def _largest(unit: Unit, cap: int) -> tuple[int, int]:
    """The largest deployment within `cap` accelerators (at least one machine at its smallest fill)."""
    if unit.topology.joinable and not unit.single and cap >= 2 * unit.node:
        machines = min(cap, NO_CAP) // unit.node
        return machines, machines * unit.node
    fits = [f for f in unit.fills if f <= cap]
    return 1, max(fits) if fits else min(unit.fills)


class TrainingSearch:
    """The training configuration search for one model, format, targets and factors, over any accelerator.

    A layout's memory per GPU does not depend on the accelerator (only on the layout, the recomputation and whether
    attention is fused), so it is computed once and shared by every accelerator searched; a step is computed once
    per accelerator view (`training.TrainingDevice`) and layout. Keep one instance per consultation (for example in
    `RuleContext.scratch`).
    """

    def __init__(self, arch: Architecture, params: ParameterCount, weights: Precision, t: TrainingTargets,
                 factors: Factors) -> None:
        self.arch, self.params, self.weights, self.t, self.factors = arch, params, weights, t, factors
        method = t.flops_factor
        self._bits = weights.bits_per_weight if method != "full" else (32.0 if weights.bits_per_weight >= 32
                                                                       else 16.0)
        self.global_batch = t.global_batch or default_global_batch(float(params.active), t.seq, t.pretraining,
                                                                   factors)
        self._totals: dict[tuple[Parallelism, str, bool], float] = {}
        self._steps: dict[tuple[TrainingDevice, Parallelism, str, TrainingFormat], TrainingStep] = {}
        self._free = 1.0 - factors.headroom_fraction
        if method == "full":
            self._zeros: tuple[int, ...] = (t.zero_stage,) if t.zero_stage is not None else (1, 3)
        else:
            self._zeros = (t.zero_stage,) if t.zero_stage is not None else (0, 3)
        self._recomputes = RECOMPUTES if t.recompute == "auto" else (t.recompute,)

    def memory(self, par: Parallelism, flash: bool, with_notes: bool = False, recompute: str | None = None
               ) -> MemoryBreakdown:
        t = self.t
        return training_memory(self.arch, self.params, method=t.flops_factor, optimizer=t.optimizer,
                               weight_bits=self._bits, grad_precision=t.grad_precision, seq=t.seq,
                               micro_batch=t.micro_batch, par=par,
                               recompute=cast(Recompute, recompute or self._recomputes[-1]), flash_attention=flash,
                               lora_rank=t.lora_rank, factors=self.factors, with_notes=with_notes)

    def _total(self, par: Parallelism, recompute: str, flash: bool) -> float:
        """`memory(par, flash, recompute).total`, computed once per layout."""
        key = (par, recompute, flash)
        found = self._totals.get(key)
        if found is None:
            found = self._totals[key] = self.memory(par, flash, recompute=recompute).total
        return found

    def recompute_for(self, par: Parallelism, flash: bool, capacity: float) -> str | None:
        """The least recomputation with which `par` fits (the engines' choice), None when even the most does not."""
        limit = capacity * self._free  # MemoryBreakdown.fits: total <= capacity × (1 − headroom)
        return next((r for r in self._recomputes if self._total(par, r, flash) <= limit), None)

    def layouts(self, n: int, topo: Topology) -> list[Parallelism]:
        """The layouts of n GPUs on `topo` the search weighs, least model-parallel first. Adapters (LoRA, QLoRA) are
        never split by tensor parallelism over PCIe: no fine-tuning recipe (PEFT, Unsloth, Axolotl, torchtune) does."""
        return _layouts(n, topo, self.arch.num_hidden_layers, self.arch.num_attention_heads, self.t.seq,
                        self.t.micro_batch, self.global_batch, self._zeros, self.t.flops_factor == "full",
                        self.t.context_parallel)

    def _fit(self, n: int, topo: Topology, flash: bool, capacity: float) -> Parallelism | None:
        """The least-split layout of n GPUs that fits, or None (memory only)."""
        return next((par for par in self.layouts(n, topo) if self.recompute_for(par, flash, capacity) is not None),
                    None)

    def device(self, acc: Accelerator, unit: Unit, n: int) -> TrainingDevice | None:
        return training_device(acc, unit.topology, training_format(acc, self.weights), n, self.factors)

    def run(self, par: Parallelism, recompute: str, fmt: TrainingFormat) -> TrainingRun:
        t = self.t
        grad = self.factors.training_grad_bytes_per_param + (2.0 if t.grad_precision == "fp32" else 0.0)
        weight_bytes = self.weights.bytes_per_weight if t.flops_factor == "qlora" else self._bits / 8.0
        return TrainingRun(self.arch, self.params, seq=t.seq, global_batch=self.global_batch,
                           micro_batch=t.micro_batch, par=par, method=t.flops_factor,
                           recompute=cast(Recompute, recompute), fmt=fmt, grad_bytes_per_param=grad,
                           weight_bytes=weight_bytes)

    def step(self, dev: TrainingDevice, fmt: TrainingFormat, par: Parallelism, recompute: str) -> TrainingStep:
        key = (dev, par, recompute, fmt)
        found = self._steps.get(key)
        if found is None:
            found = self._steps[key] = training_step(self.run(par, recompute, fmt), dev, self.factors)
        return found

    def best(self, acc: Accelerator, unit: Unit, n: int, flash: bool, capacity: float
             ) -> tuple[Parallelism, str, TrainingStep] | None:
        """The fastest layout of n GPUs of `unit` that fits, with its recomputation and step; None when none fits
        (or the part has no dense peak)."""
        dev = self.device(acc, unit, n)
        if dev is None:
            return None
        fmt = training_format(acc, self.weights)
        best: tuple[Parallelism, str, TrainingStep] | None = None
        tried = 0
        for par in self.layouts(n, unit.topology):
            recompute = self.recompute_for(par, flash, capacity)
            if recompute is None:
                continue
            step = self.step(dev, fmt, par, recompute)
            if best is None or step.tokens_per_s > best[2].tokens_per_s * (1.0 + 1e-9):
                best = (par, recompute, step)
            tried += 1
            if tried >= EVALUATED_LAYOUTS:
                break
        return best

    def _smallest_fit(self, unit: Unit, cap: int, flash: bool, capacity: float
                      ) -> tuple[int, int, Parallelism] | None:
        """(machines, GPUs, layout): the smallest deployment of the unit whose per-GPU memory fits. Memory per GPU
        only falls as the job spreads, so machines are found by doubling, then bisection."""
        topo = unit.topology
        for f in unit.fills:
            if f <= cap and (par := self._fit(f, topo, flash, capacity)) is not None:
                return 1, f, par
        if not topo.joinable or unit.single:
            return None
        node = unit.node
        lo, hi = 1, 2
        while (par := self._fit(hi * node, topo, flash, capacity)) is None:
            if hi * node * 2 > cap:
                return None
            lo, hi = hi, hi * 2
        best = (hi, par)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            found = self._fit(mid * node, topo, flash, capacity)
            if found is None:
                lo = mid
            else:
                hi, best = mid, (mid, found)
        return best[0], best[0] * node, best[1]

    def _layout_at(self, unit: Unit, n: int, flash: bool, capacity: float, cap: int) -> tuple[int, int] | None:
        """The smallest deployment of at least `n` GPUs with a layout that fits (a machine more when none does, a
        few dozen machines at most), within the most GPUs the global batch can spread over (`max_gpus`)."""
        cap = min(cap, self.max_gpus(unit.topology))
        found = _deployable(unit, n, cap)
        for _ in range(LAYOUT_WALK):
            if found is None:
                return None
            machines, count = found
            if self._fit(count, unit.topology, flash, capacity) is not None:
                return machines, count
            found = _deployable(unit, count + 1, cap)
        return None

    def max_gpus(self, topo: Topology) -> int:
        """The most GPUs a layout of this run can use on `topo`: every data-parallel rank needs a micro-batch of
        the global batch, and one model copy spreads over at most the widest tensor (the scale-up domain, or a
        machine), context (chunks of 4,096 tokens) and pipeline (two layers a stage) split searched."""
        t = self.t
        ranks = max(1, self.global_batch // t.micro_batch)
        domain = topo.scale_up.domain if topo.scale_up.kind in SCALE_UP_KINDS else topo.node
        tp = max(x for x in TENSOR_PARALLEL if x <= max(1, domain))
        cp = max(x for x in CONTEXT_PARALLEL if t.seq // x >= MIN_TOKENS_PER_CP_RANK or x == 1) \
            if t.flops_factor == "full" else 1
        pp = max(x for x in PIPELINE_PARALLEL if 2 * x <= self.arch.num_hidden_layers or x == 1)
        return ranks * tp * cp * pp

    def plan(self, acc: Accelerator, unit: Unit | None = None, with_notes: bool = True) -> Plan | NoFit:
        """The deployment of `unit` (default: the part alone, `units.bare_unit`) with the fewest GPUs whose memory
        fits and that finish before the deadline (or the most allowed, or the most that still speed the run up at
        its global batch), using every GPU it pays for. `with_notes=False` leaves out the explanatory notes (and the
        memory breakdown's), nothing else."""
        unit = unit or bare_unit(acc)
        t = self.t
        if not acc.trains:
            return NoFit(acc.id, f"{acc.name} does not train: {acc.trains_note or 'its software stack serves only'}")
        if not training_peak(acc, self.weights):
            return NoFit(acc.id, f"{acc.name}: no published dense training throughput to size the run with")
        recipe = self.weights.training_recipe
        if recipe is not None and recipe.compute == "fp4" and not acc.fp4_support:
            return NoFit(acc.id, f"{acc.name} has no FP4 tensor cores: the {self.weights.name} training recipe "
                         "needs them")
        capacity = acc.memory_bytes()
        flash = fused_attention(acc)
        cap = t.max_gpus if t.max_gpus is not None else NO_CAP
        first = self._smallest_fit(unit, NO_CAP, flash, capacity)  # beyond a user's maximum too: say what it needs
        if first is None:
            return NoFit(acc.id, _no_fit_reason(acc, unit, "the weights, gradients and optimizer states"))
        machines, n, _ = first
        n_mem = n
        timed = self._timed(acc, unit, machines, n, flash, capacity, with_notes)
        if timed is None:
            return NoFit(acc.id, f"{acc.name} in {unit.name}: no layout of {n} GPUs gives each data-parallel rank a "
                         f"micro-batch of the {self.global_batch:,}-sequence global batch")
        target = self.target_days()
        missed = 0  # the largest count known to miss the target
        for _ in range(12):  # grow until the run leaves its schedule margin free, or more GPUs stop helping
            days = timed[4].days * timed[5]
            if days <= target or n >= cap:
                break
            missed = n
            found = self._layout_at(unit, math.ceil(n * days / target), flash, capacity, cap)
            if found is None:  # the deadline asks for more than the unit allows: try the most it allows
                big_m, big_n = _largest(unit, min(cap, NO_CAP))
                found = self._layout_at(unit, big_n, flash, capacity, NO_CAP) if big_n > n else None
            if found is None or found[1] <= n:
                break
            bigger = self._timed(acc, unit, found[0], found[1], flash, capacity, with_notes)
            if bigger is None or bigger[4].days * bigger[5] >= days * (1.0 - 1e-6):
                break  # the global batch no longer spreads over more GPUs: the step stops shrinking
            timed = bigger
            machines, n = found
        if missed and timed[4].days * timed[5] <= target * (1.0 + 1e-9):
            timed = self._fewest_meeting(acc, unit, missed, timed, flash, capacity, cap, with_notes)
        if _costs_nothing_more(unit):
            timed = self._every_gpu(acc, unit, timed, flash, capacity, cap, with_notes)
        return self._timed_plan(acc, unit, timed, n_mem == 1, flash, with_notes)

    def _fewest_meeting(self, acc: Accelerator, unit: Unit, missed: int, found: _Timed, flash: bool,
                        capacity: float, cap: int, with_notes: bool) -> _Timed:
        """The fewest GPUs above `missed` (a count that misses the target days) that still meet them, by bisection
        over the deployments between it and `found`'s count. The growth step scales the count by the days it
        lacks, measured at a smaller deployment whose per-GPU rate is lower (heavier recomputation, more pipeline
        stages), so it overshoots; fewer GPUs over longer cost less within the deadline, bought (fewer GPUs) or
        rented (fewer GPU-hours: scaling efficiency falls as the count grows)."""
        target = self.target_days() * (1.0 + 1e-9)
        lo, hi, best = missed, found[1], found
        while hi - lo > 1:
            mid = (lo + hi) // 2
            at = self._layout_at(unit, mid, flash, capacity, cap)
            if at is None or at[1] >= hi:  # nothing deployable from mid up to hi: only below mid is left
                hi = mid
                continue
            timed = self._timed(acc, unit, at[0], at[1], flash, capacity, with_notes)
            if timed is not None and timed[4].days * timed[5] <= target:
                best, hi = timed, at[1]
            else:
                lo = at[1]
        return best

    def _timed(self, acc: Accelerator, unit: Unit, machines: int, n: int, flash: bool, capacity: float,
               with_notes: bool) -> _Timed | None:
        best = self.best(acc, unit, n, flash, capacity)
        if best is None:
            return None
        par, recompute, step = best
        tt, slowdown = self._time(acc, machines, n, step, with_notes)
        return machines, n, par, recompute, tt, slowdown

    def _every_gpu(self, acc: Accelerator, unit: Unit, found: _Timed, flash: bool, capacity: float, cap: int,
                   with_notes: bool) -> _Timed:
        """On a machine whose GPUs cost nothing more to use (a free notebook such as Kaggle's T4 x2, your own
        GPUs), the job takes as many of them as a runnable layout fits (data parallel first: DDP over two T4s
        halves the run) when that finishes sooner; fewer GPUs are kept when more would not be faster."""
        best = found
        for f in unit.fills:
            if f <= best[1] or f > cap:
                continue
            timed = self._timed(acc, unit, 1, f, flash, capacity, with_notes)
            if timed is not None and timed[4].days * timed[5] < best[4].days * best[5] * (1.0 - 1e-9):
                best = timed
        return best

    def _time(self, acc: Accelerator, machines: int, n: int, step: TrainingStep | None, with_notes: bool,
              mfu: float | None = None) -> tuple[TrainingTime, float]:
        """The run's time on `n` GPUs of `machines` machines at `step`, and the slowdown of interruptions and of
        consumer cards packed four or more to a machine (W4)."""
        t = self.t
        throttled = acc.market == "consumer" and n // machines >= 4
        slowdown = 1.0 / (1.0 - self.factors.consumer_dense_throttle) if throttled else 1.0
        peak = training_peak(acc, self.weights) or 0.0
        tokens = t.tokens * (1.0 + self._token_overhead(acc))
        tt = training_time(float(self.params.active), tokens, gpus=n, peak_tflops=peak, method=t.flops_factor,
                           factors=self.factors, step=step, with_notes=with_notes, mfu=mfu)
        return tt, slowdown / goodput(n, self.factors)

    def _token_overhead(self, acc: Accelerator) -> float:
        """Extra tokens the run's low-precision recipe needs for the same loss (MXFP4: 8.5 %) where the part runs
        it."""
        recipe = self.weights.training_recipe
        if recipe is None or recipe.token_overhead is None or training_format(acc, self.weights).compute != \
                recipe.compute:
            return 0.0
        return recipe.token_overhead.value

    def target_days(self) -> float:
        """The days a plan is sized to finish in: the deadline less the schedule margin (interruptions beyond the
        expected ones, slow nodes, a rollback: training_schedule_margin)."""
        return self.t.deadline_days * (1.0 - self.factors.training_schedule_margin)

    def _timed_plan(self, acc: Accelerator, unit: Unit, timed: _Timed, fits_single: bool, flash: bool,
                    with_notes: bool) -> Plan:
        machines, n, par, recompute, tt, slowdown = timed
        t = self.t
        mem = self.memory(par, flash, with_notes=with_notes, recompute=recompute)
        days = tt.days * slowdown
        topo = unit.topology
        sync_link = "local" if n == 1 else (topo.link(n).kind if n <= topo.node or topo.joinable else "pcie")
        model_link = topo.link(par.tp).kind if par.tp > 1 else "local"
        notes = [*mem.notes, *tt.notes]
        if with_notes and tt.step is not None:
            notes.append(_layout_note(par, recompute, t.micro_batch, self.global_batch, t.seq, tt.step))
        return Plan(
            accelerator=acc.id, count=n, nodes=machines, tensor_parallel=par.tp,
            pipeline_parallel=par.pp, replicas=par.dp, zero_stage=par.zero, batch_per_replica=t.micro_batch,
            memory=mem, capacity_gb=acc.memory_bytes() / GB, fits_single_gpu=fits_single, bound="compute",
            throttled=acc.market == "consumer" and n // machines >= 4, training_days=days,
            training_gpu_hours=tt.gpu_hours * slowdown, tokens_per_s=tt.tokens_per_s / slowdown,
            meets_deadline=days <= self.target_days() * (1.0 + 1e-9),
            within_max_gpus=t.max_gpus is None or n <= t.max_gpus, notes=tuple(notes),
            machines=machines, link=model_link, sync_link=sync_link,
            fits=mem.fits(acc.memory_bytes()), context_parallel=par.cp, recompute=recompute,
            training_step=tt.step,
        )

    def explain(self, acc: Accelerator, unit: Unit, plan: Plan) -> tuple[Note, ...]:
        """The notes of a plan this search found without them (`with_notes=False`): its own layout evaluated with
        notes, nothing searched again (the memory and the run's time depend on the layout, not on the machines)."""
        pp = plan.pipeline_parallel
        par = Parallelism(tp=plan.tensor_parallel, pp=pp, dp=plan.replicas, zero=plan.zero_stage,
                          cp=plan.context_parallel, vp=default_virtual_stages(self.arch.num_hidden_layers, pp))
        return self.evaluate(acc, unit, par)[0].notes

    def evaluate(self, acc: Accelerator, unit: Unit, par: Parallelism, *, mfu: float | None = None
                 ) -> tuple[Plan, TrainingTime | None]:
        """The plan of a layout as given (`par` over its GPUs on machines of `unit`), with the figures a search
        would give it (`gpuadvisor estimate`), and the run's time (None when the part publishes no training
        rate); `mfu` overrides the step's utilization. The recomputation is the user's, else the least that fits
        (the most when none does)."""
        flash = fused_attention(acc)
        n = par.gpus
        machines = 1 if unit.single else max(1, math.ceil(n / unit.node))
        capacity = acc.memory_bytes()
        fits_single = self.recompute_for(Parallelism(), flash, capacity) is not None
        recompute = self.recompute_for(par, flash, capacity) or self._recomputes[-1]
        dev = self.device(acc, unit, n)
        if dev is None or not training_peak(acc, self.weights):
            mem = self.memory(par, flash, with_notes=True, recompute=recompute)
            return Plan(accelerator=acc.id, count=n, nodes=machines, tensor_parallel=par.tp,
                        pipeline_parallel=par.pp, replicas=par.dp, zero_stage=par.zero,
                        batch_per_replica=self.t.micro_batch, memory=mem, capacity_gb=acc.memory_bytes() / GB,
                        fits_single_gpu=fits_single, bound="compute", throttled=False, notes=mem.notes,
                        machines=machines, fits=mem.fits(acc.memory_bytes()), context_parallel=par.cp,
                        recompute=recompute), None
        step = self.step(dev, training_format(acc, self.weights), par, recompute)
        tt, slowdown = self._time(acc, machines, n, step, True, mfu)
        return self._timed_plan(acc, unit, (machines, n, par, recompute, tt, slowdown), fits_single, flash, True), tt


@lru_cache(maxsize=4096)
def _layouts(n: int, topo: Topology, layers: int, heads: int, seq: int, micro_batch: int, global_batch: int,
             zeros: tuple[int, ...], full: bool, cp: int | None) -> list[Parallelism]:
    found = dict.fromkeys(training_layouts(n, topo, layers=layers, heads=heads, seq=seq, micro_batch=micro_batch,
                                           global_batch=global_batch, zeros=zeros, full=full,
                                           cp=cp))
    return sorted(found, key=lambda p: (p.tp * p.pp * p.cp, p.pp, p.cp, p.zero))


def _layout_note(par: Parallelism, recompute: str, micro_batch: int, global_batch: int, seq: int,
                 step: TrainingStep) -> Note:
    split = f"TP {par.tp} × CP {par.cp} × PP {par.pp}" + (f" (VP {par.vp})" if par.pp > 1 else "") + \
        f" × DP {par.dp}, ZeRO {par.zero}" + (" (distributed optimizer)" if par.zero == 1 else
                                              " (FSDP)" if par.zero == 3 else "")
    return Note("method.training_layout", f"Layout {split}; global batch {global_batch:,} sequences of {seq:,} "
                f"tokens, micro-batch {micro_batch} × {step.micro_batches} accumulation steps per data-parallel "
                f"rank; recomputation {recompute} (the least that fits)",
                source="Megatron-Core / NeMo performance recipes (Megatron-Bridge); Llama 3 (Llama Team 2024, §3.3)")


def goodput(gpus: int, factors: Factors) -> float:
    """The share of wall-clock time a synchronous run of `gpus` GPUs makes progress: every interruption of any GPU
    stops the job for its restart and the work redone since the last checkpoint (interruptions per GPU-hour ×
    GPUs × hours lost each). 99.96 % on 72 GPUs, 90.3 % on 16,384 (Llama 3 405B reported 'higher than 90%');
    floored at one half, past which a run of that size needs its own reliability engineering."""
    lost = factors.training_interruptions_per_gpu_hour * gpus * factors.training_loss_per_interruption_hours
    return max(0.5, 1.0 - lost)


def spot_goodput(machines: int, uninterrupted_hours: float, factors: Factors) -> float:
    """The share of wall-clock time a synchronous run on `machines` spot machines makes progress: each machine is
    reclaimed about once every `uninterrupted_hours` (assumption spot_uninterrupted_hours), and every reclaim stops
    the whole job for its restart and the work redone since the last checkpoint, as an interruption does
    (`training_loss_per_interruption_hours`). 0 or less: the job cannot progress (more reclaims than it survives)."""
    return 1.0 - machines * factors.training_loss_per_interruption_hours / uninterrupted_hours


def spot_wall_hours(wall: float, machines: int, uninterrupted_hours: float, factors: Factors) -> float:
    """Hours a run of `wall` hours of work takes on `machines` spot machines (`spot_goodput` of the time makes
    progress); infinite when the reclaims leave it none."""
    share = spot_goodput(machines, uninterrupted_hours, factors)
    return wall / share if share > 0 else math.inf


def plan_training(acc: Accelerator, arch: Architecture, params: ParameterCount, weights: Precision,
                  t: TrainingTargets, factors: Factors, unit: Unit | None = None) -> Plan | NoFit:
    """Fewest GPUs of `unit` whose per-GPU memory fits and that finish before the deadline (or the most allowed).
    (One unit; searching many for the same model, use one `TrainingSearch`.)"""
    return TrainingSearch(arch, params, weights, t, factors).plan(acc, unit)
