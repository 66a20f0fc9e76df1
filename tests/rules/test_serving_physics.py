"""The serving step as physics (issue 27): properties every configuration keeps, from batch 1 to what the
submitters run, and the hand calculations of the terms that make them hold.

- throughput with prompts never falls as the batch grows, up to the memory limit, and is flat beyond it (the engine
  queues what does not fit);
- the per-GPU figure of an NVL72 part is at least its HGX twin's at the same settings (same die, faster domain);
- time to first token never falls as a closed loop's clients grow.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.planning.serving import engine_efficiency
from gpuadvisor.rules.planning.topology import accelerator_topology, device_for
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.memory import split_weight_format
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.serving_load import latency_at_concurrency, serving_rate
from gpuadvisor.rules.sizing.speed import DecodeCurve, Device, EngineEfficiency, PrefillModel

CATALOG = load_catalog(user_dir=None)


def _setup(model: str, gpu: str, precision: str, engine: str, input_tokens: int, output_tokens: int, tp: int = 1,
           ep: int = 1, group: int | None = None) -> tuple[DecodeCurve, float]:
    """A replica of `model` on `gpu` as the planner builds it: the part's own domain for a group of tp × ep GPUs."""
    acc = CATALOG.accelerators[gpu]
    arch = CATALOG.models[model].architecture
    params = count_parameters(arch)
    prec = CATALOG.precisions[precision]
    w_bytes, experts = split_weight_format(arch, prec)
    link = accelerator_topology(acc).link(group or max(tp, ep))
    device = device_for(acc, prec.compute, link, engine_efficiency(CATALOG, acc, engine))
    curve = DecodeCurve(arch, params, device, bytes_per_weight=w_bytes, kv_bytes_per_value=1.0,
                        context=input_tokens + output_tokens // 2, tp=tp, experts=experts, ep=ep)
    flops = PrefillModel(arch, params, bytes_per_weight=w_bytes, prompt_tokens=input_tokens, experts=experts).flops
    return curve, flops


CONFIGS = {
    # Llama 3.1 8B FP4 on one B200 at MLPerf's 871/128 (the case: 19,107 / 15,030 / 9,805 tokens/s at batch
    # 1,024 / 2,048 / 4,096 before this issue)
    "8b-b200": ("llama-3.1-8b", "nvidia-b200", "nvfp4", "tensorrt-llm-engine", 871, 128, 1, 1),
    # 70B FP8 TP2 on H100 with 5,000-token prompts (NIM's shape)
    "70b-h100": ("llama-3.3-70b", "nvidia-h100-sxm5", "fp8", "tensorrt-llm", 5000, 500, 2, 1),
    # Llama 3.1 8B FP8 on one H100 at NIM's 200/200, TensorRT engines: the profile with the weight GEMMs' ramp
    "8b-h100-engine": ("llama-3.1-8b", "nvidia-h100-sxm5", "fp8", "tensorrt-llm-engine", 200, 200, 1, 1),
    # DeepSeek-R1 FP4 on 8 B200, attention data-parallel, experts EP 8, MLPerf's 804/3,886
    "r1-b200": ("deepseek-v3", "nvidia-b200", "nvfp4", "tensorrt-llm", 804, 3886, 1, 8),
    # Mixtral on MI300X, vLLM
    "mixtral-mi300x": ("mixtral-8x7b", "amd-mi300x", "fp8", "vllm", 427, 146, 1, 1),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
@settings(max_examples=40, deadline=None, derandomize=True)
@given(small=st.integers(1, 16384), extra=st.integers(1, 16384))
def test_throughput_never_falls_as_the_batch_grows(name: str, small: int, extra: int) -> None:
    curve, flops = _setup(*CONFIGS[name])
    _, _, _, _, i, o, _, _ = CONFIGS[name]

    def tps(b: int) -> float:
        return serving_rate(curve, flops, batch=b, input_tokens=i, output_tokens=o, chunk_tokens=8192).tokens_per_s

    assert tps(small + extra) >= tps(small) * (1 - 1e-9)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_beyond_the_slots_the_throughput_is_flat_and_the_rest_queue(name: str) -> None:
    curve, flops = _setup(*CONFIGS[name])
    _, _, _, _, i, o, _, _ = CONFIGS[name]
    slots = 512
    at = [latency_at_concurrency(curve, flops, concurrency=n, slots=slots, input_tokens=i, output_tokens=o,
                                 chunk_tokens=8192) for n in (slots, 2 * slots, 8 * slots)]
    assert at[0].tokens_per_s == at[1].tokens_per_s == at[2].tokens_per_s
    assert [a.queued for a in at] == [0, slots, 7 * slots]
    assert not at[0].saturated and at[1].saturated


def test_past_the_chunk_the_iteration_grows_in_step_with_the_batch() -> None:
    # the 8B case: each sequence's KV read and host work once per iteration, the weights and per-layer cost once per
    # pass: past one pass the iteration is linear in the batch, so the throughput is exactly flat (not falling)
    curve, flops = _setup(*CONFIGS["8b-b200"])
    rates = [serving_rate(curve, flops, batch=b, input_tokens=871, output_tokens=128, chunk_tokens=8192)
             for b in (2048, 4096)]
    assert all(r.passes > 1 for r in rates)
    assert rates[1].iteration_seconds == pytest.approx(2 * rates[0].iteration_seconds, rel=1e-9)
    assert rates[1].tokens_per_s == pytest.approx(rates[0].tokens_per_s, rel=1e-9)


TWINS = [("nvidia-gb200-per-gpu", "nvidia-b200"), ("nvidia-gb300-per-gpu", "nvidia-b300")]


@pytest.mark.parametrize(("nvl72", "hgx"), TWINS)
@pytest.mark.parametrize("batch", [1, 64, 1024, 4096])
def test_an_nvl72_gpu_serves_at_least_as_much_as_its_hgx_twin(nvl72: str, hgx: str, batch: int) -> None:
    # the case: DeepSeek-R1 FP4, 8 GPUs, EP 8 (attention data-parallel), TensorRT-LLM, 804/3,886, FP8 cache:
    # GB300 was 6,752 decode tokens/s against B300's 15,200 because 8 GB300s talked over PCIe
    def tps(gpu: str) -> float:
        curve, flops = _setup("deepseek-v3", gpu, "nvfp4", "tensorrt-llm", 804, 3886, tp=1, ep=8)
        return serving_rate(curve, flops, batch=batch, input_tokens=804, output_tokens=3886,
                            chunk_tokens=8192).tokens_per_s

    assert tps(nvl72) >= tps(hgx)


@pytest.mark.parametrize(("nvl72", "hgx"), TWINS)
def test_the_nvl72_part_alone_keeps_its_nvlink_domain(nvl72: str, hgx: str) -> None:
    for gpu in (nvl72, hgx):
        link = accelerator_topology(CATALOG.accelerators[gpu]).link(8)
        assert (link.cls, link.kind) == ("scale-up", "nvlink")
    assert accelerator_topology(CATALOG.accelerators[nvl72]).link(72).kind == "nvlink"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_time_to_first_token_never_falls_as_clients_grow(name: str) -> None:
    curve, flops = _setup(*CONFIGS[name])
    _, _, _, _, i, o, _, _ = CONFIGS[name]
    slots = 300
    ttft = [latency_at_concurrency(curve, flops, concurrency=n, slots=slots, input_tokens=i, output_tokens=o,
                                   chunk_tokens=8192) for n in range(1, 2 * slots + 1, 7)]
    assert all(b.ttft_p50_s >= a.ttft_p50_s * (1 - 1e-9) for a, b in zip(ttft, ttft[1:], strict=False))
    assert all(b.ttft_p95_s >= a.ttft_p95_s * (1 - 1e-9) for a, b in zip(ttft, ttft[1:], strict=False))
    # and never below the idle figure
    assert all(t.ttft_p50_s >= t.ttft_idle_s * (1 - 1e-9) for t in ttft)


# ---- hand calculations of the new terms ------------------------------------------------------------------------

TOY = Architecture(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                   num_attention_heads=32, num_key_value_heads=32)
TOY_PARAMS = count_parameters(TOY)


def test_per_sequence_cost_is_the_busiest_attention_groups_share() -> None:
    # 20 µs per sequence per step; EP 8 over tp 1: 8 attention groups, each with its own executor: a step of 1,000
    # sequences pays 1,000 ÷ 8 = 125 × 20 µs = 2.5 ms, not 20 ms; with the experts split over tp (one group) 20 ms
    arch = CATALOG.models["deepseek-v3"].architecture
    params = count_parameters(arch)
    eff = EngineEfficiency("test", 0.8, 0.8, 0.0, compute_efficiency=0.5, overhead_per_sequence_us=20.0)
    device = Device(8000.0, 9000.0, 900.0, "nvlink", eff)
    dp = DecodeCurve(arch, params, device, bytes_per_weight=0.5, kv_bytes_per_value=1.0, context=2000, tp=1, ep=8)
    tp = DecodeCurve(arch, params, device, bytes_per_weight=0.5, kv_bytes_per_value=1.0, context=2000, tp=8, ep=8)
    assert dp.parts(1000).overhead == pytest.approx(125 * 20e-6)
    assert tp.parts(1000).overhead == pytest.approx(1000 * 20e-6)


def test_four_bit_weights_attend_at_the_fp8_rate() -> None:
    # B200: NVFP4 GEMMs at 9,000 TFLOPS dense, attention at FP8's 4,500; at FP8 weights both at 4,500
    b200 = CATALOG.accelerators["nvidia-b200"]
    fp4, fp8 = device_for(b200, "fp4"), device_for(b200, "fp8")
    assert (fp4.peak_tflops, fp4.attention_tflops) == (9000.0, 4500.0)
    assert (fp8.peak_tflops, fp8.attention_tflops) == (4500.0, None)
    # so a decode step's attention FLOPs take twice as long as at the GEMM rate: the toy model's 576-token context,
    # batch 64: 2 × 576 × 32 layers × 8,192 × 64 = 19.33 GFLOP at 4,500 × 0.5 TFLOPS = 8.59 µs
    f = Factors(compute_efficiency=0.5)
    curve = DecodeCurve(TOY, TOY_PARAMS, Device(8000.0, 9000.0, attention_tflops=4500.0), bytes_per_weight=0.5,
                        kv_bytes_per_value=1.0, context=576, factors=f)
    assert curve.parts(64).attention == pytest.approx(2 * 576 * 32 * 8192 * 64 / (4500e12 * 0.5))
