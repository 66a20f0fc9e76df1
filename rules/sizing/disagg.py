"""Disaggregated serving: separate prefill and decode pools, and the KV cache moving between them (issue 17).

A colocated replica (rules/sizing/serving_load.py) runs continuous batching with chunked prefill: every iteration
carries prompt chunks as well as decode tokens, so long prompts stretch each stream's time per token and a new
prompt waits behind running decodes. Splitting the two phases onto separate replicas (DistServe, OSDI 2024;
Splitwise, ISCA 2024; NVIDIA Dynamo and SGLang "PD disaggregation") lets each pool be sized for its own target:

    prefill pool   each replica runs prompts back to back at full chunks, compute-bound, no decode in the pass:
                   S_p = PrefillModel(k prompts).seconds, k = max(1, ⌊chunk ÷ I⌋) prompts per pass
                   M/M/c with c = replicas × k slots of service S_p, fed λ requests/s:
                   TTFT_p95 = wait_p95 + S_p + KV transfer   (the smallest c that meets the TTFT target)
    decode pool    each replica runs decode steps only (`DecodeCurve.seconds(b)`), no prompt chunks stealing time:
                   b = the largest batch that fits the KV memory, keeps every stream at the per-user floor and
                   keeps TTFT_p95 + (O − 1) × step(b) within the p95 latency target
                   replicas = max(⌈tokens/s needed ÷ (b ÷ step(b))⌉, ⌈concurrency ÷ b⌉)
    KV transfer    bytes = KV bytes of one prompt (`kv_bytes_per_sequence` at I tokens), from a prefill machine to a
                   decode machine over the unit's scale-out network at `kv_transfer_efficiency` of the replica's
                   share of the NICs; seconds = bytes ÷ that rate, counted in the TTFT. Across machines this needs
                   RDMA-class fabric (InfiniBand, RoCE, EFA): NIXL and Mooncake move VRAM to VRAM over it.

Pure functions over figures the planner already has; `planning.InferenceSearch.disaggregated` feeds them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuadvisor.rules.sizing.search import first_true
from gpuadvisor.rules.sizing.serving_load import wait_quantile
from gpuadvisor.rules.sizing.units import GB

MAX_POOL_REPLICAS = 1 << 14
"""Bound of the pool searches (a pool this large means the target cannot be met by adding replicas)."""


@dataclass(frozen=True)
class KvTransfer:
    """Moving one request's prompt KV cache from its prefill replica to its decode replica."""

    bytes_per_request: float
    gbs: float
    """Effective rate one replica's transfer gets (GB/s): its share of the machine's NICs × the efficiency."""
    seconds: float


@dataclass(frozen=True)
class PrefillPool:
    replicas: int
    prompts_per_pass: int
    pass_seconds: float
    """One prefill pass of `prompts_per_pass` prompts: a prompt's service time."""
    wait_p95_s: float
    ttft_p95_s: float
    """Queueing + the pass + the KV transfer, at the 95th percentile."""
    utilization: float


@dataclass(frozen=True)
class DecodePool:
    replicas: int
    batch: int
    """Most sequences a decode replica runs at once: KV memory, the per-user floor and the latency target."""
    step_seconds: float
    tokens_per_s_per_user: float
    tokens_per_s: float
    """Generated tokens/s of the whole pool at `batch` per replica."""


def kv_transfer(bytes_per_request: float, link_gbs: float, efficiency: float) -> KvTransfer:
    """Time to move one prompt's KV cache over a link of `link_gbs` (GB/s per direction) at `efficiency`."""
    if bytes_per_request < 0 or link_gbs <= 0 or not 0 < efficiency <= 1:
        raise ValueError("bytes must be non-negative, the link positive and the efficiency in (0, 1]")
    gbs = link_gbs * efficiency
    return KvTransfer(bytes_per_request=bytes_per_request, gbs=gbs, seconds=bytes_per_request / (gbs * GB))


def prefill_pool(pass_seconds: float, prompts_per_pass: int, arrival_rate: float, ttft_max_s: float | None,
                 transfer_s: float) -> PrefillPool | None:
    """The fewest prefill replicas that keep up with `arrival_rate` requests/s and, when a target is given, keep
    the p95 time to first token (wait + pass + transfer) within it; None when no number of replicas can (the pass
    and the transfer alone exceed the target)."""
    if pass_seconds <= 0 or prompts_per_pass < 1 or arrival_rate <= 0:
        raise ValueError("pass time, prompts per pass and arrival rate must be positive")
    if ttft_max_s is not None and pass_seconds + transfer_s > ttft_max_s:
        return None
    offered = arrival_rate * pass_seconds  # busy slots on average (Little)
    replicas = max(1, math.ceil(offered / prompts_per_pass))
    while replicas <= MAX_POOL_REPLICAS:
        slots = replicas * prompts_per_pass
        if offered < slots:
            wait = wait_quantile(slots, offered, pass_seconds, 0.95)
            ttft = wait + pass_seconds + transfer_s
            if ttft_max_s is None or ttft <= ttft_max_s:
                return PrefillPool(replicas=replicas, prompts_per_pass=prompts_per_pass, pass_seconds=pass_seconds,
                                   wait_p95_s=wait, ttft_p95_s=ttft, utilization=offered / slots)
        replicas += 1
    return None


def decode_batch(step_seconds: Callable[[int], float], fit: int, min_tps_user: float | None, ttft_s: float,
                 output_tokens: int, latency_p95_s: float | None) -> int | None:
    """The largest decode batch ≤ `fit` whose streams stay at the per-user floor and whose requests finish within
    the p95 latency target; None when even one sequence cannot. `step_seconds(b)` is the decode step at batch b
    (it grows with b, so the conditions hold below some batch: bisection)."""
    def ok(b: int) -> bool:
        s = step_seconds(b)
        if min_tps_user is not None and 1.0 / s < min_tps_user:
            return False
        return latency_p95_s is None or ttft_s + (output_tokens - 1) * s <= latency_p95_s

    if fit < 1 or not ok(1):
        return None
    if ok(fit):
        return fit
    return first_true(lambda b: not ok(b), 1, fit) - 1  # the last batch that still meets them


def decode_pool(step_seconds: float, batch: int, tokens_per_s: float, concurrency: int) -> DecodePool:
    """Decode-only replicas at `batch` sequences each (step `step_seconds`) for the generated tokens/s needed and
    the requests in flight."""
    if step_seconds <= 0 or batch < 1:
        raise ValueError("step and batch must be positive")
    per_replica = batch / step_seconds
    replicas = max(1, math.ceil(tokens_per_s / per_replica), math.ceil(concurrency / batch))
    return DecodePool(replicas=replicas, batch=batch, step_seconds=step_seconds,
                      tokens_per_s_per_user=1.0 / step_seconds, tokens_per_s=replicas * per_replica)


def transfer_bound_replicas(arrival_rate: float, transfer: KvTransfer) -> int:
    """Prefill replicas whose links together carry every request's KV cache (each replica sends at `transfer.gbs`)."""
    return max(1, math.ceil(arrival_rate * transfer.seconds))

