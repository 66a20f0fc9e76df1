"""The configuration search behind rule H1: for one accelerator, the smallest setup that fits and meets the targets.

Pure functions over the sizing math (no engine): the rules call them once per accelerator and assert only the
result, one `config` fact or one rule-out, which keeps a consultation to a few hundred rule firings (see the
durable-rules note, §6.5: expand combinations inside a callback, assert survivors).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal, NamedTuple

from gpuadvisor.knowledge.schema import Accelerator, Architecture, Precision
from gpuadvisor.rules.sizing.factors import Factors, Note
from gpuadvisor.rules.sizing.memory import (
    InferenceMemoryCurve,
    MemoryBreakdown,
    Parallelism,
    inference_memory,
    split_weight_format,
    training_memory,
)
from gpuadvisor.rules.sizing.params import ParameterCount
from gpuadvisor.rules.sizing.speed import (
    PCIE_GBS_PER_DIRECTION,
    DecodeCurve,
    Device,
    EngineEfficiency,
    PrefillModel,
    TrainingShape,
    training_time,
)
from gpuadvisor.rules.sizing.units import GB
from gpuadvisor.rules.topology import FAST_LINKS, cluster_limit, link_domain, replica_limit

MAX_BATCH_PER_REPLICA = 256
"""vLLM's default max_num_seqs: a replica schedules at most this many sequences at once."""
POWERS = (1, 2, 4, 8, 16, 32, 64)
NVLINK_LIKE = FAST_LINKS
NO_CAP = 1 << 20
"""The GPU count searched when the user sets no maximum: the job's own needs decide the size."""


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

    @property
    def mean_kv_length(self) -> int:
        """Average KV length a decode step reads: the prompt plus half the output (capped by the context).
        Memory is planned for the maximum context (W5); speed follows the average request."""
        return max(1, min(self.context, self.input_tokens + self.output_tokens // 2))


@dataclass(frozen=True)
class TrainingTargets:
    tokens: float
    flops_factor: Literal["full", "lora", "qlora"]
    seq: int
    micro_batch: int
    deadline_days: float
    optimizer: Literal["adamw", "sgd", "adam8bit"]
    zero_stage: int | None
    checkpointing: bool
    lora_rank: int
    max_gpus: int | None


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

    @property
    def memory_gb_per_gpu(self) -> float:
        return self.memory.total / GB

    @property
    def memory_utilization(self) -> float:
        return self.memory.total / (self.capacity_gb * GB)


@dataclass(frozen=True)
class NoFit:
    """Why no configuration of an accelerator works (H1)."""

    accelerator: str
    reason: str


def link_kind(acc: Accelerator, group: int) -> str:
    """The interconnect a tensor-parallel group of `group` GPUs talks over: beyond the NVLink domain it is PCIe."""
    return acc.interconnect_kind if group <= link_domain(acc) else "pcie"


def device_for(acc: Accelerator, compute: str, group: int = 1,
               efficiency: EngineEfficiency | None = None) -> Device:
    """The speed model's view of an accelerator at a compute precision (falls back to BF16/FP16 rates)."""
    peak = acc.dense_tflops(compute) or acc.dense_tflops("bf16") or acc.dense_tflops("fp16")
    if link_kind(acc, group) in NVLINK_LIKE and acc.interconnect_gbs:
        return Device(acc.memory_bandwidth_gbs.value, peak, acc.interconnect_gbs.value / 2, "nvlink",
                      efficiency)
    gen = int(acc.pcie_gen.value) if acc.pcie_gen else 4
    return Device(acc.memory_bandwidth_gbs.value, peak, PCIE_GBS_PER_DIRECTION.get(gen, 31.5), "pcie",
                  efficiency)


def _flash(acc: Accelerator) -> bool:
    return acc.flash_attention_2 in {"yes", "not-listed"} or acc.software_stack not in {"cuda", "rocm"}


def _parallel_layouts(acc: Accelerator, limit: int) -> list[tuple[int, int]]:
    """(tp, pp) per model replica, cheapest communication first: TP inside a node, then pipeline across nodes.
    Desk-side cards keep a replica inside one workstation (topology.replica_limit)."""
    node = acc.max_per_node
    limit = min(limit, replica_limit(acc))
    layouts = [(tp, 1) for tp in POWERS if tp <= node and tp <= limit]
    top = layouts[-1][0] if layouts else 1
    layouts += [(top, pp) for pp in POWERS[1:] if top * pp <= limit]
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


class InferenceSearch:
    """The serving configuration search for one model, formats, targets and factors, over any accelerator.

    Per-GPU memory does not depend on the accelerator (only on the split and whether attention is fused), so its
    curves are built once and shared by every accelerator searched; speed is per accelerator. Keep one instance per
    consultation (for example in `RuleContext.scratch`): nothing here outlives the inputs it was built from.
    """

    def __init__(self, arch: Architecture, params: ParameterCount, weights: Precision, kv: Precision,
                 t: ServingTargets, factors: Factors,
                 efficiency: Callable[[Accelerator], EngineEfficiency | None] = lambda acc: None,
                 memory_factors: Callable[[Accelerator], tuple[tuple[str, float], ...]] = lambda acc: ()) -> None:
        self.arch, self.params, self.weights, self.kv, self.t, self.factors = arch, params, weights, kv, t, factors
        self.efficiency = efficiency
        self.memory_factors = memory_factors
        """The serving engine's memory factors on an accelerator (free margin, own footprint), overriding the
        assumptions'."""
        self._saturation = math.ceil(factors.prefill_chunk_tokens / t.context)
        self._memory: dict[tuple[int, int, bool, tuple[tuple[str, float], ...]], InferenceMemoryCurve] = {}
        self._speed: DecodeCurve | None = None  # the model's decode constants; `split` per device and layout
        self._bytes_per_weight, self._experts = split_weight_format(arch, weights)  # gpt-oss: MXFP4 experts
        self._prefill = PrefillModel(arch, params, bytes_per_weight=self._bytes_per_weight,
                                     prompt_tokens=min(t.input_tokens, t.context), factors=factors,
                                     experts=self._experts)
        self._notes: dict[tuple[object, ...], tuple[Note, ...]] = {}  # decode and prefill notes, equal across GPUs

    def speed(self, device: Device, tp: int, pp: int) -> DecodeCurve:
        """Decode speed of the model on `device` split `tp` × `pp` (at the average KV length)."""
        if self._speed is None:
            self._speed = DecodeCurve(self.arch, self.params, device, bytes_per_weight=self._bytes_per_weight,
                                      kv_bytes_per_value=self.kv.bytes_per_weight, context=self.t.mean_kv_length,
                                      tp=tp, pp=pp, factors=self.factors, experts=self._experts)
            return self._speed
        return self._speed.split(device, tp, pp)

    def memory(self, tp: int, pp: int, flash: bool,
               overrides: tuple[tuple[str, float], ...] = ()) -> InferenceMemoryCurve:
        """Per-GPU memory of a split; `overrides` are the engine's memory factors (see `memory_factors`)."""
        key = (tp, pp, flash, overrides)
        curve = self._memory.get(key)
        if curve is None:
            factors = replace(self.factors, **dict(overrides)) if overrides else self.factors
            curve = self._memory[key] = InferenceMemoryCurve(
                self.arch, self.params, weight_bytes_per_param=self._bytes_per_weight,
                kv_bytes_per_value=self.kv.bytes_per_weight, context=self.t.context, par=Parallelism(tp=tp, pp=pp),
                flash_attention=flash, factors=factors, experts=self._experts)
        return curve

    def plan(self, acc: Accelerator, with_notes: bool = True) -> Plan | NoFit:
        """Smallest replica layout that fits; enough replicas for concurrency and tokens/s; SLA checked.
        `with_notes=False` leaves out the explanatory notes (and the memory breakdown's), nothing else."""
        weights, t, factors = self.weights, self.t, self.factors
        capacity = acc.memory_gb.value * GB
        flash = _flash(acc)
        # searched beyond a user's maximum too, so a plan that needs more can say how many (C.max-gpus)
        search_limit = max(t.max_gpus or 0, 8 * acc.max_per_node)
        candidates: list[_Candidate] = []
        devices: dict[bool, Device] = {}
        engine_memory = self.memory_factors(acc)
        for tp, pp in _parallel_layouts(acc, search_limit):
            mem = self.memory(tp, pp, flash, engine_memory)
            if not mem.fits(1, capacity):
                continue
            fit = _largest_fitting_batch(mem, capacity, MAX_BATCH_PER_REPLICA, self._saturation)
            fast_link = link_kind(acc, tp) in NVLINK_LIKE  # all device_for's result depends on besides `acc`
            device = devices.get(fast_link)
            if device is None:
                device = devices[fast_link] = device_for(acc, weights.compute, tp, self.efficiency(acc))
            if device.peak_tflops is None:
                # no published compute peak: batching gains cannot be estimated, so none are assumed (a replica
                # serves one sequence at a time; more load takes more replicas)
                fit = 1
            speed = self.speed(device, tp, pp)
            batch, replicas, throttle = _batching(acc, tp * pp, fit, t, speed.seconds, factors)
            step_seconds = speed.seconds(batch)
            count = tp * pp * replicas
            per_user = 1.0 / step_seconds * throttle  # DecodeStep.tokens_per_s_per_sequence × throttle
            ttft = self._prefill.seconds(device, tp) + step_seconds
            latency = ttft + t.output_tokens / per_user
            candidates.append(_Candidate(
                tp, pp, replicas, batch, fit, throttle, count, per_user, ttft, latency,
                meets_tpot=t.min_tokens_per_s_per_user is None or per_user >= t.min_tokens_per_s_per_user,
                meets_ttft=t.ttft_max_s is None or ttft <= t.ttft_max_s,
                meets_latency=t.latency_p95_s is None or latency <= t.latency_p95_s,
                within_max_gpus=t.max_gpus is None or count <= t.max_gpus, mem=mem, speed=speed, device=device))
            if _settled(candidates):
                break
        if not candidates:
            return NoFit(acc.id, _no_fit_reason(acc, min(search_limit, replica_limit(acc)),
                                                "the weights and one sequence's KV cache"))
        meeting = [c for c in candidates if c.meets_tpot and c.meets_ttft and c.meets_latency and c.within_max_gpus]
        c = min(meeting or candidates, key=lambda c: (c.gpus, c.tp * c.pp))
        return self._plan(acc, c, capacity, flash, with_notes)

    def _plan(self, acc: Accelerator, c: _Candidate, capacity: float, flash: bool, with_notes: bool) -> Plan:
        """The kept layout as a `Plan`, with the notes of its memory, decode and prefill figures."""
        bound, step_seconds = c.speed.bound(c.batch), c.speed.seconds(c.batch)
        memory = c.mem.breakdown(c.batch, with_notes)
        step_notes: tuple[Note, ...] = ()
        pre_notes: tuple[Note, ...] = ()
        if with_notes:
            key: tuple[object, ...] = ("decode", c.batch, c.tp > 1 and c.device.link_kind == "nvlink", c.tp > 1,
                                       c.device.efficiency)  # the engine profile is named in the notes
            step_notes = self._notes.get(key) or c.speed.step(c.batch).notes
            self._notes[key] = step_notes
            key = ("prefill", bool(c.device.peak_tflops))
            pre_notes = self._notes.get(key) or self._prefill.prefill(c.device, c.tp).notes
            self._notes[key] = pre_notes
        return Plan(
            accelerator=acc.id, count=c.gpus, nodes=math.ceil(c.gpus / acc.max_per_node), tensor_parallel=c.tp,
            pipeline_parallel=c.pp, replicas=c.replicas, zero_stage=0, batch_per_replica=c.batch, memory=memory,
            capacity_gb=acc.memory_gb.value,
            fits_single_gpu=c.tp * c.pp == 1 or self.memory(1, 1, flash, self.memory_factors(acc)).fits(1, capacity),
            bound=bound, throttled=c.throttle < 1.0, tokens_per_s=c.batch / step_seconds * c.throttle * c.replicas,
            capacity_tokens_per_s=c.fit / c.speed.seconds(c.fit) * c.throttle * c.replicas,
            tokens_per_s_per_user=c.per_user, ttft_s=c.ttft, latency_s=c.latency, meets_tpot=c.meets_tpot,
            meets_ttft=c.meets_ttft, meets_latency=c.meets_latency, within_max_gpus=c.within_max_gpus,
            notes=(*memory.notes, *step_notes, *pre_notes),
        )


def plan_inference(acc: Accelerator, arch: Architecture, params: ParameterCount, weights: Precision,
                   kv: Precision, t: ServingTargets, factors: Factors) -> Plan | NoFit:
    """Smallest replica layout that fits; enough replicas for concurrency and tokens/s; SLA checked.
    (One accelerator; searching many for the same model, use one `InferenceSearch`.)"""
    return InferenceSearch(arch, params, weights, kv, t, factors).plan(acc)


def _settled(candidates: list[_Candidate]) -> bool:
    """Stop widening the model split once a layout meets every target and the last widening saved no GPUs:
    more tensor parallelism only adds communication from there (a single replica cannot get smaller)."""
    last = candidates[-1]
    ok = last.meets_tpot and last.meets_ttft and last.meets_latency
    if ok and last.replicas == 1:
        return True
    return ok and len(candidates) >= 2 and last.gpus >= candidates[-2].gpus


def _batching(acc: Accelerator, gpus_per_replica: int, fit: int, t: ServingTargets,
              seconds: Callable[[int], float], factors: Factors) -> tuple[int, int, float]:
    """Sequences per replica and replicas: hold at least `t.concurrency` sequences in flight and serve
    `t.tokens_per_s`, using the smallest batch that does (a smaller batch streams faster to each user).

    Returns (batch per replica, replicas, throughput factor); the factor is below 1 when the W4 consumer-rack
    throttle applies, which depends on the count and is therefore settled by iterating.
    """
    throttle = 1.0
    batch: int | None = fit
    replicas = 1
    for _ in range(3):
        replicas = max(1, math.ceil(t.concurrency / fit))
        while True:
            batch = _smallest_batch(replicas, fit, t, seconds, throttle)
            if batch is not None and _fast_enough(seconds(batch), t, throttle):
                break
            if batch is not None and batch <= max(1, math.ceil(t.concurrency / replicas)):
                break  # smaller batches would drop requests in flight: the SLA rules will judge this layout
            if batch is None:
                replicas = max(replicas + 1, math.ceil(t.tokens_per_s / (fit / seconds(fit) * throttle)))
            else:
                replicas += max(1, replicas // 4)  # more replicas, smaller batches, faster streams per user
        throttled = acc.market == "consumer" and gpus_per_replica * replicas >= 4
        new = 1.0 - factors.consumer_dense_throttle if throttled else 1.0
        if new == throttle:
            break
        throttle = new
    return int(batch or fit), replicas, throttle


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
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _fast_enough(step_seconds: float, t: ServingTargets, throttle: float) -> bool:
    per_user = 1.0 / step_seconds * throttle
    if t.min_tokens_per_s_per_user is not None and per_user < t.min_tokens_per_s_per_user:
        return False
    return t.latency_p95_s is None or t.output_tokens / per_user <= t.latency_p95_s


def _fits_single(arch: Architecture, params: ParameterCount, weights: Precision, kv: Precision, t: ServingTargets,
                 capacity: float, flash: bool, factors: Factors) -> bool:
    rest_bytes, experts = split_weight_format(arch, weights)
    return inference_memory(arch, params, weight_bytes_per_param=rest_bytes,
                            kv_bytes_per_value=kv.bytes_per_weight, context=t.context, batch=1,
                            flash_attention=flash, factors=factors, experts=experts).fits(capacity)


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


def _no_fit_reason(acc: Accelerator, limit: int, what: str) -> str:
    where = (f"over the {limit} GPUs one workstation holds" if limit == acc.max_per_node and limit < NO_CAP
             else f"over {limit:,} GPUs")
    return f"{acc.name} ({acc.memory_gb.value:g} GB): {what} do not fit even split {where} with the required headroom"


def _whole_nodes(n: int, node: int) -> int:
    """A GPU count a job is deployed with: a power of two inside one node, whole nodes beyond."""
    if n <= node:
        return next(c for c in sorted({*POWERS, node}) if n <= c <= node)
    return math.ceil(n / node) * node


def _whole_nodes_below(cap: int, node: int) -> int:
    """The largest deployable count (see `_whole_nodes`) not above `cap`."""
    if cap >= node:
        return cap // node * node
    return max(c for c in POWERS if c <= cap)


def _training_counts(acc: Accelerator, limit: int) -> tuple[int, ...]:
    return _counts(acc.max_per_node, limit)


@lru_cache(maxsize=256)
def _counts(node: int, limit: int) -> tuple[int, ...]:
    counts = [n for n in POWERS if n <= node]
    n = node * 2
    while n <= limit:
        counts.append(n)
        n *= 2
    return tuple(counts)


def _training_layouts(n: int, acc: Accelerator, zero: int | None) -> tuple[Parallelism, ...]:
    """Ways to spread a model over n GPUs, least communication first: data parallel with ZeRO 0→3, then tensor
    parallel inside a node with ZeRO, then pipeline stages across nodes."""
    return _layouts(n, acc.max_per_node, zero)


@lru_cache(maxsize=4096)
def _layouts(n: int, node: int, zero: int | None) -> tuple[Parallelism, ...]:
    zeros = [zero] if zero is not None else [0, 1, 2, 3]
    shapes: list[tuple[int, int]] = [(1, 1)]
    shapes += [(tp, 1) for tp in (2, 4, 8) if tp <= min(n, node) and n % tp == 0]
    shapes += [(node, pp) for pp in (2, 4, 8, 16) if n % (node * pp) == 0 and node <= 8]
    out: dict[tuple[int, int, int, int], Parallelism] = {}
    for tp, pp in shapes:
        dp = n // (tp * pp)
        for z in zeros:
            zz = z if dp > 1 else 0
            out.setdefault((tp, pp, dp, zz), Parallelism(tp=tp, pp=pp, dp=dp, zero=zz))
    return tuple(out.values())


@lru_cache(maxsize=4096)
def _sharded(n: int, node: int, zero: int | None) -> tuple[Parallelism, ...]:
    """`_most_sharded` of the layouts of n GPUs (the same objects as `_layouts` gives)."""
    return tuple(_most_sharded(_layouts(n, node, zero)))


def _most_sharded(layouts: tuple[Parallelism, ...]) -> list[Parallelism]:
    """The layouts with the least memory per GPU for their kind: deepest ZeRO at the widest tensor/pipeline split."""
    widest = max(layouts, key=lambda p: (p.tp * p.pp, p.zero))
    flat = max((p for p in layouts if p.tp * p.pp == 1), key=lambda p: p.zero, default=widest)
    return [flat] if flat is widest else [flat, widest]


def training_peak(acc: Accelerator, weights: Precision) -> float | None:
    """Dense peak used for training: FP8 training on FP8 parts, TF32 for FP32 weights, else BF16 (or FP16)."""
    if weights.compute == "fp8" and acc.fp8_support:
        return acc.dense_tflops("fp8")
    if weights.bits_per_weight >= 32:
        return acc.dense_tflops("tf32") or acc.dense_tflops("fp32")
    return acc.dense_tflops("bf16") or acc.dense_tflops("fp16")


class TrainingSearch:
    """The training configuration search for one model, format, targets and factors, over any accelerator.

    Per-GPU memory of a layout does not depend on the accelerator (only on the layout and whether attention is
    fused), so each layout's memory is computed once and shared by every accelerator searched. Keep one instance
    per consultation (for example in `RuleContext.scratch`).
    """

    def __init__(self, arch: Architecture, params: ParameterCount, weights: Precision, t: TrainingTargets,
                 factors: Factors) -> None:
        self.arch, self.params, self.weights, self.t, self.factors = arch, params, weights, t, factors
        method = t.flops_factor
        self._bits = weights.bits_per_weight if method != "full" else (32.0 if weights.bits_per_weight >= 32
                                                                       else 16.0)
        self._totals: dict[tuple[int, bool], tuple[Parallelism, float]] = {}
        self._free = 1.0 - factors.headroom_fraction

    def memory(self, par: Parallelism, flash: bool, with_notes: bool = False) -> MemoryBreakdown:
        t = self.t
        return training_memory(self.arch, self.params, method=t.flops_factor, optimizer=t.optimizer,
                               weight_bits=self._bits, seq=t.seq, micro_batch=t.micro_batch, par=par,
                               checkpointing=t.checkpointing, flash_attention=flash, lora_rank=t.lora_rank,
                               factors=self.factors, with_notes=with_notes)

    def _total(self, par: Parallelism, flash: bool) -> float:
        """`memory(par, flash).total`, computed once per layout. Keyed by the layout object's identity (layouts come
        from the cached `_layouts`; the entry keeps its layout alive, so the identity cannot be reused)."""
        key = (id(par), flash)
        found = self._totals.get(key)
        if found is None or found[0] is not par:
            found = self._totals[key] = (par, self.memory(par, flash).total)
        return found[1]

    def _fit(self, n: int, acc: Accelerator, flash: bool, capacity: float) -> Parallelism | None:
        """The least-communication layout of n GPUs that fits, or None."""
        layouts = _training_layouts(n, acc, self.t.zero_stage)
        limit = capacity * self._free  # MemoryBreakdown.fits: total <= capacity × (1 − headroom)
        # the most sharded layouts bound what n GPUs can do: if neither fits, no layout of n does
        if not any(self._total(p, flash) <= limit for p in _sharded(n, acc.max_per_node, self.t.zero_stage)):
            return None
        return next((par for par in layouts if self._total(par, flash) <= limit), None)

    def plan(self, acc: Accelerator, with_notes: bool = True) -> Plan | NoFit:
        """Fewest GPUs whose per-GPU memory fits and that finish before the deadline (or the most allowed).
        `with_notes=False` leaves out the explanatory notes (and the memory breakdown's), nothing else."""
        t, params, factors = self.t, self.params, self.factors
        peak = training_peak(acc, self.weights)
        if not peak:
            return NoFit(acc.id, f"{acc.name}: no published dense training throughput to size the run with")
        capacity = acc.memory_gb.value * GB
        flash = _flash(acc)
        cap = min(t.max_gpus if t.max_gpus is not None else NO_CAP, cluster_limit(acc))
        method = t.flops_factor
        counts = _training_counts(acc, cap)
        first_fit = next(((n, found) for n in counts if (found := self._fit(n, acc, flash, capacity)) is not None),
                         None)
        if first_fit is None:
            return NoFit(acc.id, _no_fit_reason(acc, cap, "the weights, gradients and optimizer states"))
        n_mem = first_fit[0]
        shape = TrainingShape(self.arch.hidden_size, self.arch.num_hidden_layers, t.seq,
                              fp8=self.weights.compute == "fp8" and acc.fp8_support,
                              gpus_per_node=acc.max_per_node)
        one = training_time(params.active, t.tokens, gpus=1, peak_tflops=peak, method=method, factors=factors,
                            shape=shape,
                            with_notes=False)
        n_deadline = math.ceil(one.wall_hours / 24.0 / t.deadline_days) if t.deadline_days > 0 else 1
        node = acc.max_per_node
        n = min(_whole_nodes(max(n_mem, n_deadline), node), _whole_nodes_below(cap, node))
        n = max(n, n_mem)  # the deadline may ask for more than allowed: use the most allowed and report the miss
        chosen = self._fit(n, acc, flash, capacity) if n != n_mem else first_fit[1]
        while chosen is None and n + node <= cap:  # a count whose layouts do not divide evenly: one node more
            n += node
            chosen = self._fit(n, acc, flash, capacity)
        if chosen is None:
            n, chosen = first_fit
        par = chosen
        mem = self.memory(par, flash, with_notes=with_notes)
        throttled = acc.market == "consumer" and n >= 4
        slowdown = 1.0 / (1.0 - factors.consumer_dense_throttle) if throttled else 1.0
        tt = training_time(params.active, t.tokens, gpus=n, peak_tflops=peak, method=method, factors=factors,
                           shape=replace(shape, model_parallel=par.tp * par.pp), with_notes=with_notes)
        for _ in range(4):  # the count came from one GPU's time; synchronisation at scale can stretch it: grow
            if tt.days * slowdown <= t.deadline_days or n >= cap:
                break
            more = min(_whole_nodes(math.ceil(n * tt.days * slowdown / t.deadline_days), node),
                       _whole_nodes_below(cap, node))
            bigger = self._fit(more, acc, flash, capacity) if more > n else None
            if bigger is None:
                break
            n, par = more, bigger
            mem = self.memory(par, flash, with_notes=with_notes)
            tt = training_time(params.active, t.tokens, gpus=n, peak_tflops=peak, method=method, factors=factors,
                               shape=replace(shape, model_parallel=par.tp * par.pp), with_notes=with_notes)
        days = tt.days * slowdown
        return Plan(
            accelerator=acc.id, count=n, nodes=math.ceil(n / acc.max_per_node), tensor_parallel=par.tp,
            pipeline_parallel=par.pp, replicas=par.dp, zero_stage=par.zero, batch_per_replica=t.micro_batch,
            memory=mem, capacity_gb=acc.memory_gb.value, fits_single_gpu=n_mem == 1, bound="compute",
            throttled=throttled, training_days=days, training_gpu_hours=tt.gpu_hours * slowdown,
            tokens_per_s=tt.tokens_per_s / slowdown, meets_deadline=days <= t.deadline_days,
            within_max_gpus=t.max_gpus is None or n <= t.max_gpus, notes=(*mem.notes, *tt.notes),
        )


def plan_training(acc: Accelerator, arch: Architecture, params: ParameterCount, weights: Precision,
                  t: TrainingTargets, factors: Factors) -> Plan | NoFit:
    """Fewest GPUs whose per-GPU memory fits and that finish before the deadline (or the most allowed).
    (One accelerator; searching many for the same model, use one `TrainingSearch`.)"""
    return TrainingSearch(arch, params, weights, t, factors).plan(acc)
