"""Serving under load: what a replica delivers with every prompt processed, and what a request waits (S10, H4).

A production engine (vLLM, SGLang, TensorRT-LLM in-flight batching) runs continuous batching with chunked prefill:
every iteration advances each running sequence by one token and admits prompt tokens in chunks, in one pass over
the weights. The decode-only figure (`DecodeCurve`) leaves the prompts out; at large batch they cost as much compute
as the outputs (an OpenOrca request has about as many prompt tokens as generated ones), so capacity sized on it is
too high by up to 2×.

Throughput with prompts (steady state). With B sequences running, each finishing after O outputs, B/O requests
finish per iteration, so on average B·I/O prompt tokens (prompts of I tokens) are prefilled per iteration:

    P      = B·I/O                                    prompt tokens per iteration
    passes = max(1, (B + P) / chunk)                  a pass holds at most `chunk` tokens (max_num_batched_tokens)
    t_iter = max(t_w(m)·passes + t_kv(B), t_comp(B) + F_p·B/O ÷ (peak·η_c)) + t_layer·passes + t_seq(B)
             + comm(m)·passes                          m = (B + P) / passes tokens in a pass
    own    = I / ⌈I / budget⌉                         a prompt comes whole: one chunk of its tokens at a time
    mean   = t_iter(B, P)                             when P ≥ own (every iteration carries prompts), else
           = f·t_iter(B, own) + (1 − f)·t_iter(B, 0)  f = P / own of the iterations carry a chunk, the rest decode
    throughput = B / mean                              generated tokens/s of one replica, every prompt processed

t_w, t_kv, t_comp, t_layer, t_seq and comm are the decode step's weight read, KV-cache read, compute, per-layer and
per-sequence overheads and collectives (`DecodeCurve.parts`); F_p is one prompt's prefill FLOPs (`PrefillModel.flops`:
2 × matmul parameters × I + causal attention + the LM head of the last token). Weight reads are shared by the decode
and prompt tokens of a pass, so at small batch prompts ride free on the memory-bound step; at large batch the step is
compute-bound and the prompts' FLOPs add in full. But prompts are not spread thinly over every iteration: each
arrives whole and is prefilled in chunks, so with fewer prompt tokens per iteration than one chunk holds, a share of
the iterations carries a compute-bound chunk while the others decode alone at their memory-bound (or, for an MoE,
fewer-experts) cost; the step time is not linear in its tokens, so that mean differs from the step of the mean
(NVIDIA NIM's 70B at 25 clients: 37 ms per output token where the thin spread gave 25; SGLang, which runs prefill
and decode batches apart, the same). Each pass reads the weights and pays the per-layer cost again, but a
running sequence's cache is read and its host work done once per iteration, so once the prompts overflow one pass
the iteration grows in proportion to the batch: the throughput rises with the batch and then levels off, it never
falls (a property test holds it to that).

Latency under load, closed loop (`latency_at_concurrency`: a benchmark's N clients, each sending its next request
when its last one finishes, `estimate --batch N`). The replica runs B = min(N, c) of them (c: the batch slots, what
the KV-cache memory or the engine's max_num_seqs holds); the rest wait for a slot, (N − c) ÷ completions per second.
Prompts contend for prefill: clients start together and requests of equal lengths finish on the same iteration, so
the prompts one chunk prefilled together come back together; a closed loop keeps bunches of k = min(N, ⌊chunk ÷ I⌋)
prompts (1 for prompts longer than the chunk), and a prompt waits for the (k − 1)/2 of its bunch ahead of it, each
adding s_p = t_iter(B, P + I) − t_iter(B, P) (one more prompt's work in the iterations):

    TTFT   = wait + ½·t_iter(B) + ⌈I / budget⌉·t_own(B) + (k − 1)/2·s_p      budget = max(chunk − B, chunk/4)
    TPOT   = mean(B) with P·(B − 1)/B                  (the others' prompts; t_own: an iteration carrying its own)

TTFT never falls as N grows (k, B, t_iter and the wait do not), and jumps where N passes c: the saturation point.
The idle figures (one request on an idle replica: its prompt alone, then batch-1 decode) are kept apart.

Latency under load, open loop (`latency_at_rate`: requests arriving independently at rate λ, what MLPerf Server's
LoadGen and most traffic generators send; `--rate R`): the M/M/c queue (Erlang C). A replica serves up to c requests
at once, each for S = (⌈I / budget⌉ + O − 1)·t_iter(B): every prompt's work is spread over the average iteration, so
the slots' service agrees with the throughput above. M/M/c is the textbook model of c parallel servers fed by one
queue, which is what a continuous-batching scheduler is; exponential service is the simplification (real output
lengths are widely spread, so its tail is closer than a deterministic one). Because t_iter grows with the batch, the
batch the engine forms is the fixed point of Little's law, B = λ·S(B), found by bisection. Then:

    P(wait)   = Erlang C(c, a = λ·S)                  probability an arrival finds every slot busy
    wait_q    = ln(P(wait) / (1 − q)) / (c/S − λ)     q-quantile of the queueing delay (0 when P(wait) ≤ 1 − q)
    TTFT_q    = wait_q + (½ or 1) · t_iter(B) + ⌈I / budget⌉ · t_own(B)   (p50: half an iteration under way;
                t_own is longer than t_iter when prompts are long next to outputs)
    TPOT_p50  = t_iter(B);  TPOT_p95 = t_iter(B95), B95 = min(c, a + 1.645·√a) (slots busy at the 95th percentile)
    latency_q = TTFT_q + O · TPOT_q
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuadvisor.rules.sizing.search import first_true
from gpuadvisor.rules.sizing.speed import DecodeCurve

Z95 = 1.6449
"""Standard normal 95th percentile: the busy slots' spread around their mean (Poisson: √a)."""
Z99 = 2.3263
"""Standard normal 99th percentile (the same spread at p99)."""
MAX_PREFILL_SHARE = 0.95
"""Cap on the share of a replica's time its prompts take in the closed loop's prefill queue (ρ → 1 would make the
M/D/1 wait diverge; at the cap the iterations are all prefill, which the throughput already charges)."""
P95_OF_MEAN_WAIT = 3.0
"""p95 of an M/D/1-like queueing delay as a multiple of its mean (the delay is about exponential: −ln 0.05 ≈ 3.0)."""
P99_OF_MEAN_WAIT = 4.6
"""p99 of the same delay as a multiple of its mean (−ln 0.01 ≈ 4.6)."""
BENCHMARK_ROUNDS = 10
"""Requests each client of a benchmark's closed loop sends: `--num-prompts` = 10 × `--max-concurrency` (InferenceX's
benchmark scripts for vLLM, SGLang and TensorRT-LLM alike), so the burst a run starts with is a tenth of its
requests, and its slowest prompts set the p99 of the time to first token."""

ARRIVAL_BURST = "closed loop, burst start"
"""A benchmark's N clients (vLLM `bench serve`, SGLang `bench_serving` with `--max-concurrency N` and the request
rate unbounded): every client sends its first request at once, then its next when its last one ends; equal prompts
come back in bunches, and the run's first burst queues every prompt behind the others."""
ARRIVAL_USERS = "closed loop, independent users"
"""N people each with one request in flight, their requests drifting apart: no burst, no bunches."""
ARRIVAL_OPEN = "open loop, Poisson arrivals"
"""Requests arriving independently at a rate (MLPerf Server's LoadGen, most traffic generators)."""


@dataclass(frozen=True)
class ServingRate:
    """One replica at a batch, every prompt processed (continuous batching with chunked prefill)."""

    batch: int
    input_tokens: int
    output_tokens: int
    iteration_seconds: float
    """One engine iteration: every running sequence advances one token (the time per output token at this batch)."""
    prompt_tokens_per_iteration: float
    passes: float
    """Weight passes per iteration (1 unless the prompt work overflows the chunk)."""
    tokens_per_s: float
    """Generated tokens/s, prompts included."""
    decode_only_tokens_per_s: float
    """batch ÷ decode step: the figure without prompts, for comparison."""
    tpot_seconds: float = 0.0
    """The mean iteration one running request decodes through: the other requests' prompts ride in it, its own
    does not (that is in its time to first token); equal to `iteration_seconds` at large batch, the decode step
    alone at batch 1."""

    @property
    def requests_per_s(self) -> float:
        return self.tokens_per_s / self.output_tokens


def serving_rate(curve: DecodeCurve, prompt_flops: float, *, batch: int, input_tokens: int, output_tokens: int,
                 chunk_tokens: float) -> ServingRate:
    """Generated tokens/s of one replica running `batch` sequences, every prompt of `input_tokens` processed
    (the module docstring's steady state). `prompt_flops` is one prompt's prefill FLOPs (`PrefillModel.flops` at
    batch 1); `chunk_tokens` the tokens one pass holds (the engine's max_num_batched_tokens)."""
    if batch < 1 or input_tokens < 0 or output_tokens < 1 or chunk_tokens < 1:
        raise ValueError("batch, output tokens and chunk must be positive")
    prompt_tokens = batch * input_tokens / output_tokens
    seconds, passes = _mean_iteration(curve, prompt_flops, batch, prompt_tokens, input_tokens, chunk_tokens)
    # the iterations one request decodes through carry the other requests' prompts, not its own (in its TTFT)
    tpot, _ = _mean_iteration(curve, prompt_flops, batch, prompt_tokens * (batch - 1) / batch, input_tokens,
                              chunk_tokens)
    return ServingRate(batch=batch, input_tokens=input_tokens, output_tokens=output_tokens,
                       iteration_seconds=seconds, prompt_tokens_per_iteration=prompt_tokens, passes=passes,
                       tokens_per_s=batch / seconds, decode_only_tokens_per_s=batch / curve.seconds(batch),
                       tpot_seconds=tpot)


def _mean_iteration(curve: DecodeCurve, prompt_flops: float, batch: int, prompt_tokens: float, input_tokens: int,
                    chunk_tokens: float) -> tuple[float, float]:
    """(seconds, passes) of the mean iteration that advances `batch` sequences and prefills `prompt_tokens` prompt
    tokens on average. Prompts come whole, a chunk of `own` = I ÷ ⌈I ÷ budget⌉ tokens at a time: when fewer than
    that arrive per iteration (P < own), a share f = P ÷ own of the iterations carries a chunk and is compute-bound
    while the rest decode alone, memory-bound; the mean is f·t_iter(B, own) + (1 − f)·t_iter(B, 0), above
    t_iter(B, P) (the step time is convex in its tokens: a thin spread of prompts would hide under the weight read,
    whole prompts do not). Otherwise every iteration carries prompts and t_iter(B, P) is the mean."""
    share = _attention_share(curve, prompt_flops, input_tokens)
    own = input_tokens / _prompt_iterations(input_tokens, batch, chunk_tokens) if input_tokens else 0.0
    if not 0.0 < prompt_tokens < own:
        return _iteration(curve, batch, prompt_tokens, prompt_flops * prompt_tokens / max(1, input_tokens),
                          chunk_tokens, share)
    f = prompt_tokens / own
    with_prompt, own_passes = _iteration(curve, batch, own, prompt_flops * own / input_tokens, chunk_tokens, share)
    alone, _ = _iteration(curve, batch, 0.0, 0.0, chunk_tokens, share)
    return f * with_prompt + (1.0 - f) * alone, f * own_passes + (1.0 - f)


def _attention_share(curve: DecodeCurve, prompt_flops: float, input_tokens: int) -> float:
    """The share of one prompt's prefill FLOPs its causal attention takes (the rest runs in the GEMMs)."""
    if prompt_flops <= 0 or input_tokens < 1:
        return 0.0
    return min(1.0, curve.prompt_attention_flops(input_tokens) / prompt_flops)


def _iteration(curve: DecodeCurve, batch: int, prompt_tokens: float, prompt_flops: float,
               chunk_tokens: float, attention_share: float = 0.0) -> tuple[float, float]:
    """(seconds, passes) of one iteration advancing `batch` sequences and prefilling `prompt_tokens` prompt tokens
    of `prompt_flops` FLOPs (`attention_share` of them in attention), in passes of at most `chunk_tokens` tokens
    (the module docstring's t_iter; the attention FLOPs at the attention kernels' rate). Each pass reads the weights its
    tokens touch and pays the per-layer cost and a collective of its tokens; each running sequence's KV cache is
    read, and its host work done, once (its one decode token sits in one pass), so the time grows linearly with the
    batch once the passes do and the throughput levels off instead of falling."""
    parts = curve.parts(batch)
    tokens = batch + prompt_tokens
    passes = max(1.0, tokens / chunk_tokens)
    per_pass = max(batch if passes == 1.0 else 1, math.ceil(tokens / passes))
    pass_parts = curve.parts(per_pass) if per_pass != batch else parts
    weights = pass_parts.weights if curve.arch.moe is not None else parts.weights
    comm = pass_parts.comm if curve.tp > 1 or curve.ep > 1 else parts.comm
    gemm, attention = curve.mixed_compute_seconds(batch, prompt_tokens, prompt_flops, passes,
                                                  prompt_flops * attention_share)
    overhead = parts.per_layer * passes + (parts.overhead - parts.per_layer)
    memory = weights * passes + (parts.memory - parts.weights)
    return max(memory, gemm + attention) + overhead + comm * passes, passes


def prompt_iteration_seconds(curve: DecodeCurve, prompt_flops: float, rate: ServingRate,
                             chunk_tokens: float) -> float:
    """One iteration that carries a request's own prompt. A prompt is prefilled in whole chunks, not spread over
    the iterations as the steady-state average is: the iterations that carry it hold its chunk (or the average
    share, if that is larger) and last longer than t_iter when prompts are long next to outputs. Without this a
    long prompt under load would get its first token sooner than on an idle replica."""
    own = rate.input_tokens / _prompt_iterations(rate.input_tokens, rate.batch, chunk_tokens)
    if own <= rate.prompt_tokens_per_iteration or not rate.input_tokens:
        return rate.iteration_seconds
    return _iteration(curve, rate.batch, own, prompt_flops * own / rate.input_tokens, chunk_tokens,
                      _attention_share(curve, prompt_flops, rate.input_tokens))[0]


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in an M/M/c queue with `servers` slots and offered load a = λ·S
    (Erlang C), through the Erlang B recurrence B(k) = a·B(k−1) / (k + a·B(k−1)), stable for thousands of slots.
    1 when the load reaches the slots (the queue grows without bound)."""
    if servers < 1 or offered < 0:
        raise ValueError("servers must be positive and the load non-negative")
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    rho = offered / servers
    return b / (1.0 - rho * (1.0 - b))


def wait_quantile(servers: int, offered: float, service_seconds: float, q: float) -> float:
    """q-quantile of the queueing delay in M/M/c: P(W > t) = C·exp(−(c/S − λ)·t), so t_q = ln(C / (1 − q)) ÷
    (c/S − λ), and 0 when fewer than 1 − q of the arrivals wait at all. Infinite at or beyond saturation."""
    if not 0 < q < 1:
        raise ValueError("q must be in (0, 1)")
    p_wait = erlang_c(servers, offered)
    if p_wait >= 1.0:
        return math.inf
    if p_wait <= 1.0 - q:
        return 0.0
    drain = (servers - offered) / service_seconds  # c·μ − λ
    return math.log(p_wait / (1.0 - q)) / drain


@dataclass(frozen=True)
class LoadLatency:
    """What a request sees at a load: p50 and p95 of time to first token, time per output token and the whole
    request (s), with the batch the engine forms."""

    batch: int
    """Sequences in flight on average (Little's law at this load)."""
    slots: int
    """The most the replica holds at once (c)."""
    utilization: float
    """Offered load ÷ slots (≥ 1: saturated, the queue grows without bound)."""
    wait_probability: float
    ttft_p50_s: float
    ttft_p95_s: float
    tpot_p50_s: float
    tpot_p95_s: float
    latency_p50_s: float
    latency_p95_s: float
    tokens_per_s: float
    """Generated tokens/s of the replica at the batch it forms (its capacity at that batch)."""
    ttft_idle_s: float = 0.0
    """Time to first token of one request on an idle replica (its prompt alone): the figure without the load."""
    tpot_idle_s: float = 0.0
    """Time per output token of one request on an idle replica (batch-1 decode)."""
    queued: int = 0
    """Requests waiting for a batch slot (closed loop beyond the slots)."""
    bunch: int = 1
    """Prompts that arrive together and contend for prefill (closed loop; 1 in an open loop)."""
    ttft_p99_s: float = 0.0
    """p99 time to first token: for a benchmark's burst start, the slowest prompts of the first burst."""
    tpot_p99_s: float = 0.0
    """p99 time per output token: for a burst start, the first requests of the burst, whose decode iterations
    carry every other prompt of the burst."""
    arrival: str = ""
    """The arrival pattern these figures assume (`ARRIVAL_BURST`, `ARRIVAL_USERS`, `ARRIVAL_OPEN`)."""

    @property
    def saturated(self) -> bool:
        """Past the point where requests wait for a slot (closed loop) or the queue grows without bound (open)."""
        return self.wait_probability >= 1.0


def idle_latency(curve: DecodeCurve, prompt_flops: float, *, input_tokens: int, chunk_tokens: float
                 ) -> tuple[float, float]:
    """(TTFT, TPOT) of one request on an idle replica: its prompt prefilled in whole chunks with nothing else in the
    iterations, then decoded at batch 1. What `estimate` printed as the time to first token before it reported the
    figures under load; kept beside them."""
    if input_tokens < 1 or chunk_tokens < 1:
        raise ValueError("input tokens and chunk must be positive")
    it = _prompt_iterations(input_tokens, 1, chunk_tokens)
    own = input_tokens / it
    return (it * _iteration(curve, 1, own, prompt_flops * own / input_tokens, chunk_tokens,
                            _attention_share(curve, prompt_flops, input_tokens))[0], curve.seconds(1))


def bunch_size(clients: int, input_tokens: int, chunk_tokens: float) -> int:
    """Prompts a closed loop of `clients` keeps arriving together: those one chunk prefills together come back
    together (equal lengths finish on the same iteration), so min(N, ⌊chunk ÷ I⌋), at least 1."""
    if clients < 1:
        raise ValueError("clients must be positive")
    return max(1, min(clients, int(chunk_tokens // max(1, input_tokens))))


def prompt_seconds(curve: DecodeCurve, prompt_flops: float, rate: ServingRate, chunk_tokens: float,
                   bunch: int = 1) -> float:
    """What each prompt of a bunch of `bunch` arriving together adds to the iterations at this load:
    (t_iter(B, P + k·I) − t_iter(B, P)) ÷ k. Nothing while the iteration is bound by its memory read with room for
    the prompts' FLOPs; each prompt's compute (and any extra pass) once they make it compute-bound: the time the
    prompts ahead of a prompt make it wait."""
    if bunch < 1:
        raise ValueError("bunch must be positive")
    b, o = rate.batch, rate.output_tokens
    share = _attention_share(curve, prompt_flops, rate.input_tokens)
    base, _ = _iteration(curve, b, rate.prompt_tokens_per_iteration, prompt_flops * b / o, chunk_tokens, share)
    more, _ = _iteration(curve, b, rate.prompt_tokens_per_iteration + bunch * rate.input_tokens,
                         prompt_flops * (b / o + bunch), chunk_tokens, share)
    return max(0.0, more - base) / bunch


def _prompt_iterations(input_tokens: int, batch: int, chunk_tokens: float) -> int:
    """Iterations a new prompt needs: the chunk less the running sequences' decode tokens, at least a quarter of
    the chunk (schedulers reserve prefill budget so a full batch cannot starve new prompts)."""
    budget = max(chunk_tokens - batch, chunk_tokens / 4.0)
    return max(1, math.ceil(input_tokens / budget))


def _burst_iterations(curve: DecodeCurve, prompt_flops: float, rate: ServingRate, chunk_tokens: float,
                      prompts: int) -> tuple[int, float]:
    """(iterations, seconds of each) in which a burst's first `prompts` prompts are prefilled: ⌈prompts × I ÷
    budget⌉ iterations sharing their tokens evenly, each beside the running sequences' decodes."""
    i = max(1, rate.input_tokens)
    budget = max(chunk_tokens - rate.batch, chunk_tokens / 4.0)
    n = math.ceil(prompts * i / budget)
    tokens = prompts * i / n
    t, _ = _iteration(curve, rate.batch, tokens, prompt_flops * tokens / i, chunk_tokens,
                      _attention_share(curve, prompt_flops, i))
    return n, t


def burst_ttft(curve: DecodeCurve, prompt_flops: float, rate: ServingRate, chunk_tokens: float,
               position: int) -> float:
    """Time to first token of the `position`-th prompt (from 1) of a burst: a benchmark's clients all send at once,
    so the replica prefills the burst's prompts one after another, a budget of prompt tokens an iteration beside
    the running sequences' decodes, and the prompt waits for the ones ahead of it (`_burst_iterations`). Position
    1 of a burst of one is the idle figure."""
    if position < 1:
        raise ValueError("position must be positive")
    n, t = _burst_iterations(curve, prompt_flops, rate, chunk_tokens, position)
    return n * t


def burst_tpot(curve: DecodeCurve, prompt_flops: float, rate: ServingRate, chunk_tokens: float,
               position: int) -> float:
    """Time per output token of the `position`-th request (from 1) to get its first token in a burst of B: its
    decode iterations carry the prompts of the burst still waiting, the burst's prefill iterations less its own
    (`_burst_iterations`), each instead of a steady one, spread over its O − 1 tokens."""
    if position < 1:
        raise ValueError("position must be positive")
    n, t = _burst_iterations(curve, prompt_flops, rate, chunk_tokens, rate.batch)
    own, _ = _burst_iterations(curve, prompt_flops, rate, chunk_tokens, min(position, rate.batch))
    tokens = max(1, rate.output_tokens - 1)
    loaded = min(tokens, n - own)
    return rate.tpot_seconds + max(0, loaded) * max(0.0, t - rate.tpot_seconds) / tokens


def _latency(curve: DecodeCurve, prompt_flops: float, rates: tuple[ServingRate, ServingRate, ServingRate],
             slots: int, offered: float, waits: tuple[float, float, float], chunk_tokens: float, p_wait: float,
             bunch: int = 0, queued: int = 0, clients: int = 0, arrival: str = ARRIVAL_OPEN) -> LoadLatency:
    """The figures at a load: `rates` and `waits` at p50, p95 and p99 (the batch the engine forms at each, the
    queueing delay before a slot); `bunch` > 0 for a closed loop of `clients` clients, whose prompts arrive in
    bunches of `bunch` (1: independent users) and contend for prefill with the other clients' prompts only."""
    rate, rate95, rate99 = rates
    wait50, wait95, wait99 = waits
    it = _prompt_iterations(rate.input_tokens, rate.batch, chunk_tokens)
    own50 = prompt_iteration_seconds(curve, prompt_flops, rate, chunk_tokens)
    own95 = own50 if rate95 is rate else prompt_iteration_seconds(curve, prompt_flops, rate95, chunk_tokens)
    own99 = own95 if rate99 is rate95 else prompt_iteration_seconds(curve, prompt_flops, rate99, chunk_tokens)
    ahead50 = ahead95 = ahead99 = 0.0
    under_way = 1.0  # a prompt arrives during an iteration of the others' decodes: half of one (p50), all (p95)
    if bunch:  # closed loop: prompts contend for prefill, with the other clients' prompts only
        each = prompt_seconds(curve, prompt_flops, rate, chunk_tokens, max(1, bunch))
        # the prompts of its own bunch prefilled before it: half of them on average, all but 5 % (1 %) at p95 (p99)
        ahead50 = 0.5 * (bunch - 1) * each
        ahead95, ahead99 = (math.ceil(0.95 * bunch) - 1) * each, (math.ceil(0.99 * bunch) - 1) * each
        # and the bunches the other clients sent just before it (M/D/1: bunches arrive at random, each prefilled in
        # a fixed time) at ρ, the share of the replica's time the others' prompts take; never more prompts than the
        # others hold: one client alone waits for none, and its request finds the replica idle
        others = max(0, clients - bunch)
        rho = min(MAX_PREFILL_SHARE, rate.requests_per_s * each * others / max(1, clients))
        queue = rho * bunch * each / (2.0 * (1.0 - rho))
        most = others * each
        ahead50 += min(queue, most)
        ahead95 += min(queue * P95_OF_MEAN_WAIT, most)
        ahead99 += min(queue * P99_OF_MEAN_WAIT, most)
        if clients <= 1:
            under_way = 0.0
    ttft50 = wait50 + 0.5 * under_way * rate.iteration_seconds + it * own50 + ahead50
    ttft95 = wait95 + under_way * rate95.iteration_seconds + it * own95 + ahead95
    ttft99 = wait99 + under_way * rate99.iteration_seconds + it * own99 + ahead99
    tpot99 = rate99.tpot_seconds
    if arrival == ARRIVAL_BURST:
        # the run starts with a burst of every client, 1 / BENCHMARK_ROUNDS of its requests: the top 1 % of the
        # run's first tokens are its last prompts, the top 1 % of its times per token its first requests
        admitted = min(clients, slots)
        top = math.floor(0.01 * clients * BENCHMARK_ROUNDS)
        ttft99 = max(ttft99, burst_ttft(curve, prompt_flops, rate, chunk_tokens, max(1, admitted - top)))
        tpot99 = max(tpot99, burst_tpot(curve, prompt_flops, rate, chunk_tokens, max(1, min(admitted, top))))
    o = rate.output_tokens
    ttft_idle, tpot_idle = idle_latency(curve, prompt_flops, input_tokens=max(1, rate.input_tokens),
                                        chunk_tokens=chunk_tokens)
    return LoadLatency(batch=rate.batch, slots=slots, utilization=offered / slots, wait_probability=p_wait,
                       ttft_p50_s=ttft50, ttft_p95_s=ttft95, tpot_p50_s=rate.tpot_seconds,
                       tpot_p95_s=rate95.tpot_seconds,
                       latency_p50_s=ttft50 + (o - 1) * rate.tpot_seconds,
                       latency_p95_s=ttft95 + (o - 1) * rate95.tpot_seconds,
                       tokens_per_s=rate.tokens_per_s, ttft_idle_s=ttft_idle, tpot_idle_s=tpot_idle, queued=queued,
                       bunch=max(1, bunch), ttft_p99_s=ttft99, tpot_p99_s=tpot99, arrival=arrival)


def latency_at_rate(curve: DecodeCurve, prompt_flops: float, *, arrival_rate: float, slots: int, input_tokens: int,
                    output_tokens: int, chunk_tokens: float) -> LoadLatency:
    """Latency of one replica with `slots` batch slots fed `arrival_rate` requests/s (open loop, M/M/c; see the
    module docstring). Beyond saturation the waits are infinite and `utilization` ≥ 1 says so."""
    if arrival_rate <= 0 or slots < 1:
        raise ValueError("arrival rate and slots must be positive")

    rates: dict[int, ServingRate] = {}  # the search, the settled batch and its p95 ask for the same batches again

    def rate_at(b: int) -> ServingRate:
        found = rates.get(b)
        if found is None:
            found = rates[b] = serving_rate(curve, prompt_flops, batch=b, input_tokens=input_tokens,
                                            output_tokens=output_tokens, chunk_tokens=chunk_tokens)
        return found

    def service(b: int) -> float:
        r = rate_at(b)
        return (_prompt_iterations(input_tokens, b, chunk_tokens) + output_tokens - 1) * r.iteration_seconds

    # Little's law: the mean batch is λ·S(B), S growing with B; the smallest B with λ·S(B) ≤ B is the fixed point
    def settles(b: int) -> bool:
        return arrival_rate * service(b) <= b

    if arrival_rate * service(slots) >= slots:
        batch = slots
    else:
        batch = 1 if settles(1) else first_true(settles, 1, slots)
    s = service(batch)
    offered = arrival_rate * s
    p_wait = erlang_c(slots, offered)
    b95 = min(slots, max(batch, math.ceil(offered + Z95 * math.sqrt(offered))))
    b99 = min(slots, max(b95, math.ceil(offered + Z99 * math.sqrt(offered))))
    at = (rate_at(batch), rate_at(b95), rate_at(b99))
    waits = (wait_quantile(slots, offered, s, 0.5), wait_quantile(slots, offered, s, 0.95),
             wait_quantile(slots, offered, s, 0.99))
    return _latency(curve, prompt_flops, at, slots, offered, waits, chunk_tokens, p_wait, bunch=0,
                    arrival=ARRIVAL_OPEN)


def latency_at_concurrency(curve: DecodeCurve, prompt_flops: float, *, concurrency: int, slots: int,
                           input_tokens: int, output_tokens: int, chunk_tokens: float,
                           clients_in_step: bool = False) -> LoadLatency:
    """Latency with `concurrency` clients each keeping one request in flight (closed loop; the module docstring):
    min(N, c) run, the rest wait for a slot, (N − c) ÷ completions per second on average (the same for p50 and p95:
    the queue is a fixed length), and a prompt waits for the prompts of its bunch ahead of it.

    `clients_in_step`: a benchmark's clients, started together (`ARRIVAL_BURST`), whose equal prompts come back in
    bunches (`bunch_size`; NVIDIA NIM's and InferenceX's tables are measured so), the run's first burst setting its
    p99s (`burst_ttft`, `burst_tpot`). Otherwise the N are independent users whose requests drift apart, a bunch of
    one (`ARRIVAL_USERS`): what a plan for people is held to. Either way a prompt waits only for the other clients'
    prompts: one client alone sees the idle figures."""
    if concurrency < 1 or slots < 1:
        raise ValueError("concurrency and slots must be positive")
    batch = min(concurrency, slots)
    rate = serving_rate(curve, prompt_flops, batch=batch, input_tokens=input_tokens, output_tokens=output_tokens,
                        chunk_tokens=chunk_tokens)
    wait = (concurrency - batch) / rate.requests_per_s
    return _latency(curve, prompt_flops, (rate, rate, rate), slots, float(concurrency), (wait, wait, wait),
                    chunk_tokens, 1.0 if concurrency > slots else 0.0,
                    bunch_size(concurrency, input_tokens, chunk_tokens) if clients_in_step else 1,
                    concurrency - batch, clients=concurrency,
                    arrival=ARRIVAL_BURST if clients_in_step else ARRIVAL_USERS)
