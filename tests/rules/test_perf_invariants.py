"""The speed-ups must not change a single figure: each fast path is checked here against the plain computation.

- `DecodeCurve` / `InferenceMemoryCurve` against the formulas as `decode_step` / `inference_memory` wrote them before
  the curves existed (reference copies below, built from the same helper functions): equal to the last bit;
- a search shared by many accelerators against a fresh search per accelerator, and without notes against with;
- the galloping search against a linear scan;
- the wrapper's cheap fact identity against canonical JSON, the input memo against `prepare_fact`;
- reading activation ids off the engine's message against parsing it as JSON;
- pausing the garbage collector leaves it as it was.
"""

from __future__ import annotations

import gc
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.engine.gcpause import paused_gc
from gpuadvisor.rules.engine.messages import id_prefixes, read_activation, to_json
from gpuadvisor.rules.engine.values import InputMemo, canonical_json, prepare_fact, same_plain
from gpuadvisor.rules.planning.search import (
    InferenceSearch,
    NoFit,
    ServingTargets,
    TrainingSearch,
    TrainingTargets,
    _first_true,
    plan_inference,
    plan_training,
)
from gpuadvisor.rules.sizing.factors import DEFAULT_FACTORS, Factors
from gpuadvisor.rules.sizing.kernels import overhead_layers
from gpuadvisor.rules.sizing.kvcache import kv_bytes_per_token, kv_cache, per_gpu_share
from gpuadvisor.rules.sizing.memory import (
    InferenceMemoryCurve,
    Parallelism,
    inference_activation_bytes,
    inference_memory,
    weight_bytes,
)
from gpuadvisor.rules.sizing.params import ParameterCount, count_parameters
from gpuadvisor.rules.sizing.speed import (
    _MODEL_SLOTS,
    DecodeCurve,
    Device,
    PrefillModel,
    _active_matmul_params,
    _attention_dims,
    _decode_attention_dims,
    allreduce_seconds,
    decode_step,
    expected_distinct_experts,
    gemm_depth_factor,
    prefill,
    routed_bytes_per_step,
    weight_bytes_per_step,
)
from gpuadvisor.rules.sizing.units import GB, TFLOPS

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3", "gpt2")
DEVICES = (Device(3350.0, 989.0, 450.0, "nvlink"), Device(1008.0, 165.2, 31.5, "pcie"), Device(819.0, None))


def _model(catalog: Catalog, name: str) -> tuple[Architecture, ParameterCount]:
    arch = catalog.models[name].architecture
    return arch, count_parameters(arch)


# ---- reference formulas (decode_step and inference_memory as they were written before the curves) ----------------

def _routed_extra_flops(arch: Architecture, params: ParameterCount, tokens: int, factors: Factors,
                        device: Device, bytes_per_weight: float) -> float:
    """The routed experts' FLOPs at the grouped-GEMM rate ε = m / (m + m½), charged as extra FLOPs (0 if dense);
    m½ = moe_gemm_half_ridge × the device's ridge point at the step's rates."""
    moe = arch.moe
    if moe is None or not device.peak_tflops:
        return 0.0
    m = tokens * moe.experts_per_token / expected_distinct_experts(moe.num_experts, moe.experts_per_token, tokens)
    rate = device.peak_tflops * TFLOPS * factors.compute_efficiency * device.sustained
    half = factors.moe_gemm_half_ridge * (rate * bytes_per_weight / (
        2.0 * device.bandwidth_gbs * GB * factors.decode_bandwidth_efficiency))
    eff = m / (m + half)
    return 2.0 * params.moe_layers * moe.experts_per_token * params.expert * tokens * (1.0 / eff - 1.0)


def reference_step(arch: Architecture, params: ParameterCount, device: Device, *, bytes_per_weight: float,
                   kv_bytes_per_value: float, context: int, batch: int, tp: int, pp: int,
                   factors: Factors) -> tuple[float, ...]:
    layers = arch.num_hidden_layers
    w_bytes = weight_bytes_per_step(params, arch, batch, bytes_per_weight, None)
    kv_bytes = batch * context * kv_bytes_per_token(arch, kv_bytes_per_value)
    total_bytes = w_bytes + kv_bytes
    qk, v = _decode_attention_dims(arch)  # MLA decodes absorbed: heads × (latent + rope, latent)
    attention = 2.0 * batch * layers * context * (qk + v)
    flops = 2.0 * batch * _active_matmul_params(params) + attention
    replication = per_gpu_share(arch, tp, 1) * tp  # an MLA latent is read whole by every rank
    bytes_gpu, flops_gpu = (w_bytes + kv_bytes * replication) / tp, flops / tp
    t_mem = bytes_gpu / (device.bandwidth_gbs * GB * factors.decode_bandwidth_efficiency)
    # the GEMMs (routed experts at the grouped-GEMM rate) and the attention kernels, each at its own rate (the same
    # peak here: these devices run 16-bit attention)
    gemm = flops - attention
    if arch.moe is not None:
        gemm += _routed_extra_flops(arch, params, batch, factors, device, bytes_per_weight)
    rate = device.peak_tflops * TFLOPS * factors.compute_efficiency if device.peak_tflops else None
    # the GEMMs at their depth (speed.gemm_depth_factor), attention at the plain rate
    t_comp = gemm / tp / (rate / gemm_depth_factor(arch, tp)) + attention / tp / rate if rate else 0.0
    # the fixed cost is paid per weight GEMM: a layer counts as its GEMMs ÷ a Llama layer's (kernels.overhead_layers)
    t_over = overhead_layers(arch, params.dense_layers, params.moe_layers) * factors.step_overhead_per_layer_us * 1e-6
    t_comm = 2 * layers * allreduce_seconds(batch * arch.hidden_size * 2.0, tp, device, factors)
    t_comm += (pp - 1) * (factors.allreduce_latency_nvlink_us if device.link_kind == "nvlink"
                          else factors.allreduce_latency_pcie_us) * 1e-6
    step = max(t_mem, t_comp) + t_over + t_comm
    return (bytes_gpu, flops_gpu, t_mem, t_comp, t_over, t_comm, step, flops / total_bytes, batch / step,
            1.0 / step, batch * device.bandwidth_gbs * GB / bytes_gpu)


def reference_prefill(arch: Architecture, params: ParameterCount, device: Device, *, bytes_per_weight: float,
                      prompt_tokens: int, batch: int, tp: int, factors: Factors) -> tuple[float, ...]:
    layers = arch.num_hidden_layers
    tokens = prompt_tokens * batch
    lm_head = params.lm_head if params.lm_head else params.embedding
    per_token = 2.0 * (_active_matmul_params(params) - lm_head)
    qk, v = _attention_dims(arch)
    attention = batch * layers * (qk + v) * float(prompt_tokens) ** 2
    flops = per_token * tokens + attention + 2.0 * lm_head * batch
    rate = device.peak_tflops * TFLOPS * factors.compute_efficiency if device.peak_tflops else None
    gemm = flops - attention + _routed_extra_flops(arch, params, tokens, factors, device, bytes_per_weight)
    t_comp = gemm / tp / (rate / gemm_depth_factor(arch, tp)) + attention / tp / rate if rate else 0.0
    w_bytes = weight_bytes_per_step(params, arch, tokens, bytes_per_weight, None)
    # the routed experts' weights read at their grouped GEMMs' rate, the rest at the dense rate (the same share on
    # these devices, which carry no engine profile)
    routed = routed_bytes_per_step(params, arch, tokens, bytes_per_weight, None)
    den = device.bandwidth_gbs * GB * factors.decode_bandwidth_efficiency
    t_mem = (w_bytes - routed) / tp / den + routed / tp / den
    t_over = overhead_layers(arch, params.dense_layers, params.moe_layers) * factors.step_overhead_per_layer_us * 1e-6
    t_comm = 2 * layers * allreduce_seconds(tokens * arch.hidden_size * 2.0, tp, device, factors)
    seconds = max(t_comp, t_mem) + t_over + t_comm
    return flops, seconds, tokens / seconds


def reference_memory(arch: Architecture, params: ParameterCount, *, weight_bytes_per_param: float,
                     kv_bytes_per_value: float, context: int, batch: int, par: Parallelism, flash: bool,
                     factors: Factors) -> tuple[float, ...]:
    weights = weight_bytes(params, weight_bytes_per_param, None) / par.model_shards
    kv = kv_cache(arch, context, batch, kv_bytes_per_value, tp=par.tp, pp=par.pp)
    acts = inference_activation_bytes(arch, context, batch, chunk_tokens=int(factors.prefill_chunk_tokens),
                                      tp=par.tp, flash_attention=flash)
    runtime = factors.runtime_overhead_gb * GB
    return weights, kv.per_gpu_bytes, acts, weights + kv.per_gpu_bytes + acts + 0.0 + 0.0 + runtime


@pytest.mark.parametrize("name", MODELS)
@given(batch=st.integers(1, 300), tp=st.sampled_from([1, 2, 8]), pp=st.sampled_from([1, 2]),
       device=st.sampled_from(DEVICES), kv_bytes=st.sampled_from([2.0, 1.0]),
       context=st.integers(1, 40_000))
@settings(max_examples=40, deadline=None)
def test_decode_curve_is_the_reference_formula_to_the_bit(catalog: Catalog, name: str, batch: int, tp: int, pp: int,
                                                          device: Device, kv_bytes: float, context: int) -> None:
    arch, params = _model(catalog, name)
    kw: dict[str, Any] = {"bytes_per_weight": 2.0, "kv_bytes_per_value": kv_bytes, "context": context}
    ref = reference_step(arch, params, device, **kw, batch=batch, tp=tp, pp=pp, factors=DEFAULT_FACTORS)
    s = decode_step(arch, params, device, **kw, batch=batch, tp=tp, pp=pp)
    got = (s.bytes_per_gpu, s.flops_per_gpu, s.memory_seconds, s.compute_seconds, s.overhead_seconds,
           s.comm_seconds, s.step_seconds, s.arithmetic_intensity, s.tokens_per_s, s.tokens_per_s_per_sequence,
           s.bandwidth_bound_tokens_per_s)
    assert got == ref
    # the curve a search probes, and one derived from another device's curve with `split`
    other = DecodeCurve(arch, params, DEVICES[2], **kw)
    for curve in (DecodeCurve(arch, params, device, **kw, tp=tp, pp=pp), other.split(device, tp, pp)):
        assert curve.seconds(batch) == ref[6]
        assert curve.bound(batch) == s.bound
        assert curve.step(batch) == s


@pytest.mark.parametrize("name", MODELS)
@given(batch=st.integers(1, 300), tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]),
       flash=st.booleans(), context=st.integers(1, 130_000), weight_bytes_pp=st.sampled_from([2.0, 0.5625, 1.0]))
@settings(max_examples=40, deadline=None)
def test_memory_curve_is_the_reference_formula_to_the_bit(catalog: Catalog, name: str, batch: int, tp: int, pp: int,
                                                          flash: bool, context: int, weight_bytes_pp: float) -> None:
    arch, params = _model(catalog, name)
    par = Parallelism(tp=tp, pp=pp)
    kw: dict[str, Any] = {"weight_bytes_per_param": weight_bytes_pp, "kv_bytes_per_value": 2.0, "context": context}
    weights, kv, acts, total = reference_memory(arch, params, **kw, batch=batch, par=par, flash=flash,
                                                factors=DEFAULT_FACTORS)
    m = inference_memory(arch, params, **kw, batch=batch, par=par, flash_attention=flash)
    assert (m.weights, m.kv_cache, m.activations, m.total) == (weights, kv, acts, total)
    curve = InferenceMemoryCurve(arch, params, **kw, par=par, flash_attention=flash)
    assert curve.total(batch) == total
    capacity = 80e9
    assert curve.fits(batch, capacity) == m.fits(capacity)
    assert curve.breakdown(batch) == m


@pytest.mark.parametrize("name", MODELS)
@given(prompt=st.integers(1, 40_000), batch=st.integers(1, 8), tp=st.sampled_from([1, 2, 8]),
       device=st.sampled_from(DEVICES))
@settings(max_examples=30, deadline=None)
def test_prefill_model_is_the_reference_formula_to_the_bit(catalog: Catalog, name: str, prompt: int, batch: int,
                                                           tp: int, device: Device) -> None:
    arch, params = _model(catalog, name)
    ref = reference_prefill(arch, params, device, bytes_per_weight=2.0, prompt_tokens=prompt, batch=batch, tp=tp,
                            factors=DEFAULT_FACTORS)
    p = prefill(arch, params, device, bytes_per_weight=2.0, prompt_tokens=prompt, batch=batch, tp=tp)
    assert (p.flops, p.seconds, p.tokens_per_s) == ref
    model = PrefillModel(arch, params, bytes_per_weight=2.0, prompt_tokens=prompt, batch=batch)
    assert model.seconds(DEVICES[2], tp) == prefill(arch, params, DEVICES[2], bytes_per_weight=2.0,
                                                    prompt_tokens=prompt, batch=batch, tp=tp).seconds
    assert model.seconds(device, tp) == ref[1]


def test_split_shares_exactly_the_model_constants() -> None:
    split_only = {"device", "tp", "pp", "_mem_den", "_kv_den", "_comp_den", "_overhead", "_seq_overhead", "_ar_latency",
                  "_ar_coef", "_link_den", "_pp_comm", "ep", "_ranks", "_half_tokens", "_kv_replication",
                  "_cache", "_seconds", "_groups", "_attn_den", "_ramp", "_exp_den"}
    assert set(_MODEL_SLOTS) | split_only == set(DecodeCurve.__slots__)
    assert not set(_MODEL_SLOTS) & split_only


# ---- searches shared across accelerators ----------------------------------------------------------------------

def _serving(concurrency: int, tps: float, **sla: float) -> ServingTargets:
    return ServingTargets(concurrency=concurrency, tokens_per_s=tps, input_tokens=500, output_tokens=200,
                          context=4096, min_tokens_per_s_per_user=sla.get("tpot"), ttft_max_s=sla.get("ttft"),
                          latency_p95_s=sla.get("latency"), max_gpus=64)


@pytest.mark.parametrize(("name", "targets"), [
    ("llama-3.1-70b", _serving(32, 4000.0)),
    ("llama-3.1-8b", _serving(8, 1200.0, tpot=30.0, ttft=1.0)),
    ("mixtral-8x7b", _serving(16, 2400.0, tpot=20.0, latency=20.0)),
])
def test_shared_inference_search_equals_one_search_per_accelerator(catalog: Catalog, name: str,
                                                                   targets: ServingTargets) -> None:
    arch, params = _model(catalog, name)
    bf16, fp16 = catalog.precisions["bf16"], catalog.precisions["fp16"]
    search = InferenceSearch(arch, params, bf16, fp16, targets, DEFAULT_FACTORS)
    plans = 0
    for acc in catalog.accelerators.values():
        shared = search.plan(acc)
        assert shared == plan_inference(acc, arch, params, bf16, fp16, targets, DEFAULT_FACTORS)
        bare = search.plan(acc, with_notes=False)
        if isinstance(shared, NoFit):
            assert bare == shared
            continue
        plans += 1
        assert shared.notes and not bare.notes
        assert bare.memory.total == shared.memory.total
        assert _without_notes(bare) == _without_notes(shared)
    assert plans >= 20  # most catalogued parts can serve these models


@pytest.mark.parametrize(("name", "method", "zero"), [("llama-3.1-8b", "full", None), ("llama-3.1-70b", "lora", 3)])
def test_shared_training_search_equals_one_search_per_accelerator(catalog: Catalog, name: str, method: str,
                                                                  zero: int | None) -> None:
    arch, params = _model(catalog, name)
    bf16 = catalog.precisions["bf16"]
    t = TrainingTargets(tokens=1e10, flops_factor=method, seq=4096, micro_batch=1,  # type: ignore[arg-type]
                        deadline_days=30.0, optimizer="adamw", zero_stage=zero, lora_rank=16,
                        max_gpus=64)
    search = TrainingSearch(arch, params, bf16, t, DEFAULT_FACTORS)
    for acc in catalog.accelerators.values():
        shared = search.plan(acc)
        assert shared == plan_training(acc, arch, params, bf16, t, DEFAULT_FACTORS)
        bare = search.plan(acc, with_notes=False)
        assert _without_notes(bare) == _without_notes(shared)


def _without_notes(plan: Any) -> Any:
    if isinstance(plan, NoFit):
        return plan
    return (plan.count, plan.tensor_parallel, plan.pipeline_parallel, plan.replicas, plan.batch_per_replica,
            plan.memory.total, plan.tokens_per_s, plan.ttft_s, plan.training_days, plan.bound, plan.fits_single_gpu)


@given(lo=st.integers(0, 300), width=st.integers(1, 300), cut=st.integers(1, 300), guess=st.integers(-5, 700))
def test_first_true_finds_the_first_true_like_a_linear_scan(lo: int, width: int, cut: int, guess: int) -> None:
    hi = lo + width
    threshold = lo + min(cut, width)  # pred(lo) false, pred(hi) true
    probes: list[int] = []

    def pred(b: int) -> bool:
        probes.append(b)
        return b >= threshold

    got = _first_true(pred, lo, hi, min(hi, max(lo + 1, guess)))
    assert got == next(b for b in range(lo + 1, hi + 1) if b >= threshold)
    assert all(lo < b <= hi for b in probes)
    assert len(probes) <= 2 * math.ceil(math.log2(width + 1)) + 2


# ---- fact identity and preparation ------------------------------------------------------------------------------

SCALARS = st.sampled_from([0, 1, 1.0, True, False, 0.0, -0.0, "1", "", None, 2.5, -3, 1e-05, 1e16, "é"])
FLAT = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), SCALARS, max_size=4)


@given(x=FLAT, y=FLAT)
@settings(max_examples=300)
def test_identity_of_flat_facts_is_canonical_json_equality(x: dict[str, Any], y: dict[str, Any]) -> None:
    px, py = prepare_fact({"kind": "k", **x}, "t"), prepare_fact({"kind": "k", **dict(reversed(y.items()))}, "t")
    same_json = canonical_json(px.stored) == canonical_json(py.stored)
    if px.plain and py.plain:
        assert (px.ident == py.ident and same_plain(px.stored, py.stored)) == same_json
    elif not px.plain and not py.plain:
        assert (px.ident == py.ident) == same_json
    else:
        assert not same_json  # a fact with -0.0 is never the same as one without
    assert px.key == canonical_json(px.stored)


@given(facts=st.lists(FLAT, max_size=6))
def test_input_memo_prepares_like_prepare_fact(facts: list[dict[str, Any]]) -> None:
    memo = InputMemo()
    for _ in range(2):  # the second round is served from the memo
        for f in facts:
            fact = {"kind": "k", **f}
            got, want = memo.prepare(fact, "o"), prepare_fact(fact, "input from o")
            assert (got.stored, got.key, got.engine, got.plain) == (want.stored, want.key, want.engine, want.plain)
            assert [type(v) for v in got.stored.values()] == [type(v) for v in want.stored.values()]
            assert repr(got.stored) == repr(want.stored)  # -0.0 stays -0.0
            assert got.stored is not memo.prepare(fact, "o").stored  # every caller gets its own dict


# ---- activations, as the engine writes them ------------------------------------------------------------------

def _fact_text(fid: int, **fields: Any) -> str:
    return json.dumps({"id": str(fid), "sid": "7", **fields}, ensure_ascii=False)


@pytest.mark.parametrize("fields", [
    {"kind": "x", "name": "plain"},
    {"kind": "x", "name": 'tricky ":{"id": "99" and "m":{"id": "98"'},
    {"kind": "x", "name": "naïve ünïcode", "v": 1.5, "ok": True},
])
def test_activation_ids_read_from_the_text_match_json_parsing(fields: dict[str, Any]) -> None:
    text = '{"R.one-2":{"m":' + _fact_text(12, **fields) + ',"n":' + _fact_text(3, kind="y") + "}}"
    aliases = {"R.one-2": id_prefixes(["n", "m"])}
    assert aliases["R.one-2"] == (("n", '"n":{"id": "'), ("m", '"m":{"id": "'))
    parsed = json.loads(text)
    assert read_activation(text, aliases) == [("R.one-2", {a: f["id"] for a, f in parsed["R.one-2"].items()})]
    assert read_activation(text, aliases) == [("R.one-2", {"m": "12", "n": "3"})]


def test_a_consultation_reads_every_activation_without_json(monkeypatch: pytest.MonkeyPatch,
                                                            catalog: Catalog) -> None:
    """The fast reading is the one actually used: no activation of a real consultation needs the JSON fallback."""
    from gpuadvisor.rules.consult import Advisor
    from gpuadvisor.rules.engine import messages
    from gpuadvisor.rules.inputs.answers import parse_answers

    advisor = Advisor(catalog, include_user_packs=False)
    parsed: list[str] = []
    real = json.loads

    def spy(text: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(messages.json, "loads", spy)
    cons, _ = advisor.run(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"}}))
    monkeypatch.undo()
    assert len(cons.fired) > 100
    assert [t for t in parsed if t.startswith('{"') and '":{"' in t[:80]] == []


@given(fact=st.dictionaries(st.text(max_size=5), SCALARS, max_size=6))
def test_the_text_sent_to_the_engine_is_json_dumps(fact: dict[str, Any]) -> None:
    assert to_json(fact) == json.dumps(fact, ensure_ascii=False)


def test_activation_text_in_another_shape_falls_backto_json() -> None:
    compact = '{"R":{"m":{"sid":"7","id":"5","kind":"x"}}}'  # id not first: the fast reading does not apply
    assert read_activation(compact, {"R": (("m", '"m":{"id": "'),)}) == [("R", {"m": "5"})]
    assert read_activation(compact, {}) == [("R", {"m": "5"})]  # unknown rule name
    two = '{"R":{"m":' + _fact_text(1) + '},"S":{"m":' + _fact_text(2) + "}}"
    assert read_activation(two, {"R": (("m", '"m":{"id": "'),)}) == [("R", {"m": "1"})]  # the first, as durable does
    assert read_activation(two, {}) == [("R", {"m": "1"})]


# ---- the garbage collector ----------------------------------------------------------------------------------

def test_paused_gc_restores_the_collector_even_after_an_error() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        with paused_gc():
            assert not gc.isenabled()
            with paused_gc():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer section is still running
        assert gc.isenabled()
        with pytest.raises(RuntimeError), paused_gc():
            raise RuntimeError("boom")
        assert gc.isenabled()
        gc.disable()
        with paused_gc():
            pass
        assert not gc.isenabled()  # disabled before: stays disabled
    finally:
        (gc.enable if was else gc.disable)()
