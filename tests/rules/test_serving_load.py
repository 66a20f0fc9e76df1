"""Throughput with prompts and latency under load (rules/sizing/serving_load.py) against hand calculations."""

from __future__ import annotations

import math

import pytest

from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.sizing import speed
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.serving_load import (
    ARRIVAL_BURST,
    ARRIVAL_OPEN,
    ARRIVAL_USERS,
    bunch_size,
    erlang_c,
    idle_latency,
    latency_at_concurrency,
    latency_at_rate,
    prompt_seconds,
    serving_rate,
    wait_quantile,
)
from gpuadvisor.rules.sizing.speed import DecodeCurve, Device, EngineEfficiency, PrefillModel, gemm_depth_factor

# Llama 2 7B shape: 32 layers, hidden 4096, MHA, vocab 32000 (6,738,415,616 parameters)
ARCH = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=32)
PARAMS = count_parameters(ARCH)
# a device with round numbers: 1,000 GB/s, 100 TFLOPS, engine at 100 % of both, no overheads
EFF = EngineEfficiency("test", 1.0, 1.0, 0.0, compute_efficiency=1.0)
DEVICE = Device(1000.0, 100.0, efficiency=EFF)


@pytest.fixture(autouse=True)
def _deep_gemms(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand calculations below run every GEMM at the device's full rate: the GEMM-depth loss
    (`speed.gemm_depth_factor`, checked on its own in test_gemm_depth_factor_by_hand) is left out here."""
    monkeypatch.setattr(speed, "GEMM_HALF_DEPTH", 0.0)


def _curve(context: int) -> DecodeCurve:
    return DecodeCurve(ARCH, PARAMS, DEVICE, bytes_per_weight=2.0, kv_bytes_per_value=2.0, context=context,
                       factors=Factors())


def test_composed_throughput_matches_the_hand_calculation() -> None:
    # batch 64, prompts of 512, outputs of 128, average KV length 512 + 64 = 576
    curve = _curve(576)
    prompt_flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    rate = serving_rate(curve, prompt_flops, batch=64, input_tokens=512, output_tokens=128, chunk_tokens=8192)
    # weights read per step: all but the input embedding (6,738,415,616 − 131,072,000) × 2 bytes
    weights = (6_738_415_616 - 32000 * 4096) * 2.0
    # KV cache: 2 (K, V) × 32 layers × 4096 × 2 bytes = 524,288 bytes per token, × 576 tokens × 64 sequences
    kv = 524_288 * 576 * 64
    t_mem = (weights + kv) / 1000e9
    # decode FLOPs: 2 × 6,607,343,616 matmul parameters (LM head counted, embedding lookup not) per token, plus
    # attention 2 × 576 attended × (4096 + 4096) × 32 layers per token; × 64 tokens
    matmul = 6_738_415_616 - 32000 * 4096
    decode_flops = 64 * (2.0 * matmul + 2.0 * 576 * 32 * 8192)
    # one prompt: 2 × (matmul − LM head) × 512 tokens + causal attention (qk + v = 8192) × 32 layers × 512² (half of
    # 2·s² pairs × 2 FLOPs) + the LM head of the last token, 2 × 131,072,000
    prompt = 2.0 * (matmul - 32000 * 4096) * 512 + 8192 * 32 * 512**2 + 2.0 * 32000 * 4096
    assert prompt_flops == pytest.approx(prompt)
    # per iteration 64 ÷ 128 requests finish: half a prompt (256 tokens) on average, but prompts come whole (one
    # 512-token chunk, 64 + 512 < 8192), so every other iteration carries a whole prompt (compute-bound:
    # 8.5 + 68.0 ms) and the others decode alone (memory-bound: 32.5 ms): 54.5 ms on average, not the 42.5 ms of
    # half a prompt spread over each (the mean of the max is above the max of the mean)
    t_with = max(t_mem, (decode_flops + prompt) / 100e12)
    t_alone = max(t_mem, decode_flops / 100e12)
    expected = 64 / (0.5 * t_with + 0.5 * t_alone)
    assert expected == pytest.approx(64 / 0.0545, rel=0.01)
    assert rate.passes == 1.0
    assert rate.prompt_tokens_per_iteration == 256.0
    assert rate.tokens_per_s == pytest.approx(expected, rel=1e-9)
    # the decode-only figure leaves the prompt's compute out (compute-bound here: 64 × 13.2 GFLOP ÷ 100 TFLOPS)
    assert rate.decode_only_tokens_per_s == pytest.approx(64 / max(t_mem, decode_flops / 100e12), rel=1e-9)
    assert rate.tokens_per_s < rate.decode_only_tokens_per_s


def test_prompt_work_beyond_the_chunk_takes_more_passes() -> None:
    curve = _curve(1024)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=1000).flops
    rate = serving_rate(curve, flops, batch=256, input_tokens=1000, output_tokens=10, chunk_tokens=8192)
    # 256 × 1000 ÷ 10 = 25,600 prompt tokens + 256 decode tokens per iteration = 25,856 ÷ 8,192 = 3.156 passes
    assert rate.passes == pytest.approx(25_856 / 8192)


def test_each_pass_rereads_the_weights_but_each_sequence_is_read_once() -> None:
    # batch 256, 1,000-token prompts, 10 outputs: 25,856 tokens an iteration in 3.156 passes of 8,192. On a device
    # with 10 µs per layer and 20 µs per sequence: each pass reads the 13.2 GB of weights (13.21 ms) and pays
    # 32 × 10 µs; the 256 sequences' caches (256 × 1,024 × 524,288 B = 137 GB, 137.4 ms) and host work
    # (256 × 20 µs) are paid once
    eff = EngineEfficiency("test", 1.0, 1.0, 10.0, compute_efficiency=1.0, overhead_per_sequence_us=20.0)
    curve = DecodeCurve(ARCH, PARAMS, Device(1000.0, 100.0, efficiency=eff), bytes_per_weight=2.0,
                        kv_bytes_per_value=2.0, context=1024, factors=Factors())
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=1000).flops
    rate = serving_rate(curve, flops, batch=256, input_tokens=1000, output_tokens=10, chunk_tokens=8192)
    passes = 25_856 / 8192
    weights = (6_738_415_616 - 32000 * 4096) * 2.0 / 1000e9
    kv = 256 * 1024 * 524_288 / 1000e9
    matmul = 6_738_415_616 - 32000 * 4096
    decode = 256 * (2.0 * matmul + 2.0 * 1024 * 32 * 8192) / 100e12
    prompts = flops * 256 / 10 / 100e12
    expected = max(weights * passes + kv, decode + prompts) + 32 * 10e-6 * passes + 256 * 20e-6
    assert rate.iteration_seconds == pytest.approx(expected, rel=1e-9)


def test_erlang_c_matches_the_textbook_values() -> None:
    # one server: P(wait) = ρ (M/M/1)
    assert erlang_c(1, 0.7) == pytest.approx(0.7)
    # two servers, a = 1: B(2, 1) = 1/5, C = B / (1 − ρ(1 − B)) = 0.2 / (1 − 0.5 × 0.8) = 1/3
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert erlang_c(4, 4.0) == 1.0


def test_wait_quantile_of_mm1() -> None:
    # M/M/1, ρ = 0.8, service 1 s: P(W > t) = 0.8 e^{−0.2 t}; p95: t = ln(0.8 / 0.05) / 0.2 = 13.86 s
    assert wait_quantile(1, 0.8, 1.0, 0.95) == pytest.approx(math.log(16) / 0.2)
    # p50: ln(0.8 / 0.5) / 0.2 = 2.35 s; below ρ = 0.5 the median wait is 0
    assert wait_quantile(1, 0.8, 1.0, 0.5) == pytest.approx(math.log(1.6) / 0.2)
    assert wait_quantile(1, 0.4, 1.0, 0.5) == 0.0


def test_light_load_forms_the_little_batch_and_no_queue() -> None:
    curve = _curve(576)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    load = latency_at_rate(curve, flops, arrival_rate=1.0, slots=256, input_tokens=512, output_tokens=128,
                           chunk_tokens=8192)
    # Little: B = λ × S(B); at 1 request/s the batch is a few sequences, nobody waits
    def step_at(b: int) -> float:
        return serving_rate(curve, flops, batch=b, input_tokens=512, output_tokens=128,
                            chunk_tokens=8192).iteration_seconds

    def own_at(b: int) -> float:  # the iteration that prefills the request's whole 512-token prompt
        parts = curve.parts(b)
        return max(parts.memory, parts.compute + flops / 100e12)

    # a request is served for one prompt iteration + 127 more tokens at the average iteration (the prompts' work is
    # spread over it, as the throughput counts it); the batch is the smallest b with λ·S(b) ≤ b
    step = step_at(load.batch)
    assert 1.0 * 128 * step <= load.batch
    assert load.batch == 1 or 1.0 * 128 * step_at(load.batch - 1) > load.batch - 1
    assert load.wait_probability < 1e-6
    # TTFT p50 = ½ an average iteration under way + the iteration that prefills the request's whole 512-token
    # prompt: the batch's decode FLOPs plus one prompt's (an average iteration carries only b × 4 prompt tokens);
    # latency = TTFT + 127 × TPOT, the TPOT an iteration carrying the other requests' prompts, not its own (b − 1 of
    # the b running sequences' prompts: below the average iteration, which counts all of them)
    own = own_at(load.batch)
    assert own > flops / 100e12 > 4 * step  # no sooner than the prompt alone on an idle replica (72 ms)
    assert load.ttft_p50_s == pytest.approx(0.5 * step + own)
    rate = serving_rate(curve, flops, batch=load.batch, input_tokens=512, output_tokens=128, chunk_tokens=8192)
    alone = max(curve.parts(load.batch).memory, curve.parts(load.batch).compute)
    f = (load.batch - 1) * 4 / 512  # iterations carrying one of the others' 512-token prompts: (b − 1) × 4 ÷ 512
    assert load.tpot_p50_s == rate.tpot_seconds == pytest.approx(f * own + (1 - f) * alone, rel=1e-9)
    assert load.tpot_p50_s < step
    assert load.latency_p50_s == pytest.approx(0.5 * step + own + 127 * load.tpot_p50_s)


def test_overload_is_infinite_wait() -> None:
    curve = _curve(576)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    load = latency_at_rate(curve, flops, arrival_rate=1e6, slots=8, input_tokens=512, output_tokens=128,
                           chunk_tokens=8192)
    assert load.batch == 8 and load.utilization >= 1.0 and math.isinf(load.ttft_p95_s)


def test_independent_users_come_in_bunches_of_one() -> None:
    # the plan's N users are independent: their prompts drift apart, so none waits for a bunch of its own
    curve = _curve(576)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    users = latency_at_concurrency(curve, flops, concurrency=96, slots=64, input_tokens=512, output_tokens=128,
                                   chunk_tokens=8192)
    clients = latency_at_concurrency(curve, flops, concurrency=96, slots=64, input_tokens=512, output_tokens=128,
                                     chunk_tokens=8192, clients_in_step=True)
    assert (users.bunch, clients.bunch) == (1, 16)
    assert users.tpot_p50_s == clients.tpot_p50_s and users.ttft_p50_s < clients.ttft_p50_s


def test_closed_loop_queues_beyond_the_slots() -> None:
    curve = _curve(576)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    load = latency_at_concurrency(curve, flops, concurrency=96, slots=64, input_tokens=512, output_tokens=128,
                                  chunk_tokens=8192, clients_in_step=True)  # a benchmark's clients: bunched prompts
    rate = serving_rate(curve, flops, batch=64, input_tokens=512, output_tokens=128, chunk_tokens=8192)
    # 32 requests wait for a slot; completions per second = 64 ÷ (128 × step)
    wait = 32 / (rate.tokens_per_s / 128)
    assert load.batch == 64 and load.queued == 32 and load.saturated
    # the iteration carrying its prompt holds all 512 of its tokens, not the average 256
    parts = curve.parts(64)
    own = max(parts.memory, parts.compute + flops / 100e12)
    assert own > rate.iteration_seconds
    # prefill contention: 8,192 ÷ 512 = 16 prompts come back together; the iteration is compute-bound, so each adds
    # its whole compute, one prompt's FLOPs ÷ 100 TFLOPS = 67.0 ms, and a prompt waits for 7.5 of them; bunches that
    # the other 80 clients sent before it: M/D/1 at ρ = λ·s_p·80/96 (λ = 64 ÷ (128 × t_iter) requests/s, of which a
    # request's own bunch is not ahead of it), wait ρ·16·s_p ÷ (2(1 − ρ))
    each = flops / 100e12
    assert prompt_seconds(curve, flops, rate, 8192, 16) == pytest.approx(each, rel=1e-9)
    rho = rate.requests_per_s * each * 80 / 96
    assert 0.45 < rho < 0.6
    queue = rho * 16 * each / (2 * (1 - rho))
    assert load.bunch == 16
    assert load.ttft_p50_s == pytest.approx(wait + 0.5 * rate.iteration_seconds + own + 7.5 * each + queue)
    # p95: a whole iteration under way, 15 of the 16 ahead, the bunch queue's p95 (3 × its mean)
    assert load.ttft_p95_s == pytest.approx(wait + rate.iteration_seconds + own + 15 * each + 3.0 * queue)
    # p99: all but one of the 16 (⌈0.99 × 16⌉ − 1 = 15) and 4.6 × the queue's mean; the first burst's 64 prompts
    # (9.6 of 960 requests are the top 1 %: the 55th prompt of the burst, ⌈55 × 512 ÷ 8,128⌉ = 4 iterations of a
    # full budget) come first sooner than that here
    assert load.ttft_p99_s == pytest.approx(wait + rate.iteration_seconds + own + 15 * each + 4.6 * queue)
    assert load.arrival == ARRIVAL_BURST
    assert load.tpot_p50_s == rate.tpot_seconds < rate.iteration_seconds


def test_a_bunch_is_the_prompts_one_chunk_holds() -> None:
    assert bunch_size(96, 512, 8192) == 16
    assert bunch_size(5, 200, 8192) == 5  # fewer clients than fit: all of them
    assert bunch_size(50, 5000, 8192) == 1  # prompts longer than half the chunk: each alone
    assert bunch_size(1, 100_000, 8192) == 1


def test_prompts_ride_free_on_a_memory_bound_iteration() -> None:
    # one sequence of a 7B model at 1,000 GB/s: the step reads 13.2 GB (13.2 ms); one 16-token prompt adds
    # 16 × 13.2 GFLOP = 211 GFLOP = 2.1 ms of compute, under the read: it costs nothing extra
    curve = _curve(64)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=16).flops
    rate = serving_rate(curve, flops, batch=1, input_tokens=16, output_tokens=64, chunk_tokens=8192)
    assert prompt_seconds(curve, flops, rate, 8192) == 0.0


def test_idle_figures_are_one_prompt_alone_then_batch_one() -> None:
    # 512-token prompt alone: one iteration of its whole compute (67.0 ms, above the 13.2 GB read), then
    # batch-1 decode (the weights and one sequence's cache read)
    curve = _curve(576)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    ttft, tpot = idle_latency(curve, flops, input_tokens=512, chunk_tokens=8192)
    parts = curve.parts(1)
    assert ttft == pytest.approx(max(parts.memory, parts.compute + flops / 100e12))
    assert tpot == curve.seconds(1)
    load = latency_at_concurrency(curve, flops, concurrency=8, slots=64, input_tokens=512, output_tokens=128,
                                  chunk_tokens=8192)
    assert (load.ttft_idle_s, load.tpot_idle_s) == (ttft, tpot)
    assert load.ttft_p50_s > ttft and load.tpot_p50_s > tpot


def test_gemm_depth_factor_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    # Llama 2 7B: QKV (4,096 × 12,288), attention output (4,096 × 4,096), gate and up (2 × 4,096 × 11,008) and the LM
    # head's share of a layer (4,096 × 32,000 ÷ 32) reduce over K = 4,096; the down projection (11,008 × 4,096) over
    # K = 11,008. With K½ = 500: (161.38M × (1 + 500/4,096) + 45.09M × (1 + 500/11,008)) ÷ 206.47M = 1.1053
    monkeypatch.setattr(speed, "GEMM_HALF_DEPTH", 500.0)
    k4096 = 4096 * 12288 + 4096 * 4096 + 2 * 4096 * 11008 + 4096 * 32000 / 32
    down = 11008 * 4096
    expected = (k4096 * (1 + 500 / 4096) + down * (1 + 500 / 11008)) / (k4096 + down)
    assert gemm_depth_factor(ARCH) == pytest.approx(expected, rel=1e-12) == pytest.approx(1.1053, abs=1e-4)
    # tensor parallelism splits the attention output's and the down projection's K: shallower, slower
    k_tp = 4096 * 12288 + 2 * 4096 * 11008 + 4096 * 32000 / 32
    at_tp2 = (k_tp * (1 + 500 / 4096) + 4096 * 4096 * (1 + 500 / 2048) + down * (1 + 500 / 5504)) / (k4096 + down)
    assert gemm_depth_factor(ARCH, tp=2) == pytest.approx(at_tp2, rel=1e-12)
    # a decode step's GEMMs take that much longer at a compute-bound batch; attention does not
    deep = DecodeCurve(ARCH, PARAMS, DEVICE, bytes_per_weight=2.0, kv_bytes_per_value=2.0, context=576,
                       factors=Factors())
    parts = deep.parts(4096)
    monkeypatch.setattr(speed, "GEMM_HALF_DEPTH", 0.0)
    flat = DecodeCurve(ARCH, PARAMS, DEVICE, bytes_per_weight=2.0, kv_bytes_per_value=2.0, context=576,
                       factors=Factors()).parts(4096)
    assert parts.attention == pytest.approx(flat.attention, rel=1e-12)
    assert parts.compute - parts.attention == pytest.approx((flat.compute - flat.attention) * expected, rel=1e-9)


def test_one_client_sees_the_idle_replica() -> None:
    # a closed loop of one: nothing runs when its request arrives and no other prompt can be ahead of it, so its
    # first token is the idle figure at p50, p95 and p99 alike, benchmark or user (issue 44: a 16,000-token prompt
    # at one request in flight was given 4.4 × its idle first token by an M/D/1 queue of its own prompts)
    curve = _curve(16_100)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=16_000).flops
    for in_step in (False, True):
        load = latency_at_concurrency(curve, flops, concurrency=1, slots=8, input_tokens=16_000, output_tokens=200,
                                      chunk_tokens=8192, clients_in_step=in_step)
        ttft, tpot = idle_latency(curve, flops, input_tokens=16_000, chunk_tokens=8192)
        assert load.ttft_p50_s == load.ttft_p95_s == load.ttft_p99_s == pytest.approx(ttft, rel=1e-12)
        assert load.tpot_p50_s == load.tpot_p99_s == pytest.approx(tpot, rel=1e-12)
        assert load.arrival == (ARRIVAL_BURST if in_step else ARRIVAL_USERS)


def test_a_burst_start_sets_the_p99_first_token() -> None:
    # 64 clients of 2,048-token prompts start at once: the burst's prompts are prefilled 8,128 tokens (the chunk
    # less the 64 decodes) an iteration; the run is 640 requests, its top 1 % 6.4 of them, the burst's last six, so
    # the p99 is the 58th prompt: its 58 × 2,048 = 118,784 prompt tokens take ⌈118,784 ÷ 8,128⌉ = 15 iterations of
    # 7,918.9 prompt tokens and 64 decode tokens each, at 100 TFLOPS (compute-bound: 7,919 × 13.2 GFLOP ≫ the 13.2 GB
    # read)
    curve = _curve(2112)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=2048).flops
    load = latency_at_concurrency(curve, flops, concurrency=64, slots=64, input_tokens=2048, output_tokens=128,
                                  chunk_tokens=8192, clients_in_step=True)
    parts = curve.parts(64)

    def iteration(prompt_tokens: float) -> float:
        return max(parts.memory, parts.compute + prompt_tokens / 2048 * flops / 100e12)

    assert load.ttft_p99_s == pytest.approx(15 * iteration(118_784 / 15), rel=1e-9)
    assert load.ttft_p99_s > load.ttft_p95_s > load.ttft_p50_s
    # the p99 time per token: the burst's 6th request decodes through the burst's ⌈131,072 ÷ 8,128⌉ = 17 prefill
    # iterations (7,710 prompt tokens each) less its own ⌈12,288 ÷ 8,128⌉ = 2: 15 of its 127
    rate = serving_rate(curve, flops, batch=64, input_tokens=2048, output_tokens=128, chunk_tokens=8192)
    full = iteration(131_072 / 17)
    assert load.tpot_p99_s == pytest.approx(rate.tpot_seconds + 15 * (full - rate.tpot_seconds) / 127, rel=1e-9)
    # independent users have no burst: their p99 is the steady state's
    users = latency_at_concurrency(curve, flops, concurrency=64, slots=64, input_tokens=2048, output_tokens=128,
                                   chunk_tokens=8192)
    assert users.ttft_p99_s < load.ttft_p99_s and users.tpot_p99_s == users.tpot_p50_s


def test_open_loop_p99_is_the_queue_tail() -> None:
    curve = _curve(576)
    flops = PrefillModel(ARCH, PARAMS, bytes_per_weight=2.0, prompt_tokens=512).flops
    load = latency_at_rate(curve, flops, arrival_rate=2.0, slots=64, input_tokens=512, output_tokens=128,
                           chunk_tokens=8192)
    assert load.arrival == ARRIVAL_OPEN
    assert load.ttft_p99_s >= load.ttft_p95_s >= load.ttft_p50_s
    assert load.tpot_p99_s >= load.tpot_p95_s >= load.tpot_p50_s
