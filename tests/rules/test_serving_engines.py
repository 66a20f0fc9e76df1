"""Serving engines: the automatic choice, the family a profile is looked up by, the speed model's use of an engine's
efficiencies (hand calculations), engines.toml's validation, and the scale-aware training MFU."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.engine_names import canonical_engine
from gpuadvisor.knowledge.errors import InputError, KnowledgeError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import Architecture
from gpuadvisor.rules.planning.serving import (
    auto_engine,
    efficiency_bounds,
    engine_efficiency,
    family_keys,
    profile_for,
)
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import (
    Device,
    EngineEfficiency,
    decode_step,
)
from gpuadvisor.rules.sizing.training import training_time

LLAMA_3_8B = Architecture(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                          num_attention_heads=32, num_key_value_heads=8)


@pytest.mark.parametrize("gpu,engine", [
    ("nvidia-rtx-4090", "llama.cpp"), ("nvidia-rtx-6000-ada", "llama.cpp"), ("apple-m3-max", "mlx"),
    ("nvidia-h100-sxm5", "vllm"), ("amd-mi300x", "vllm"), ("nvidia-a10g", "vllm"),
])
def test_auto_engine_by_deployment(catalog: Catalog, gpu: str, engine: str) -> None:
    assert auto_engine(catalog.accelerators[gpu]) == engine


def test_family_keys_most_specific_first(catalog: Catalog) -> None:
    assert family_keys(catalog.accelerators["nvidia-a100-sxm-80gb"]) == (
        "nvidia-ampere-hbm", "nvidia-hbm", "nvidia", "any")
    assert family_keys(catalog.accelerators["nvidia-rtx-3090"])[0] == "nvidia-ampere-gddr"
    assert family_keys(catalog.accelerators["amd-mi300x"])[0] == "amd-cdna3-hbm"
    assert family_keys(catalog.accelerators["apple-m2-ultra"])[0] == "apple-silicon-unified"


def test_every_engine_has_a_fallback_profile(catalog: Catalog) -> None:
    """Any accelerator gets a calibrated profile for every engine (at worst the engine's pooled `any`)."""
    for engine in ("llama.cpp", "vllm", "sglang", "tensorrt-llm", "mlx"):
        assert f"{engine}@any" in catalog.engine_profiles
        assert profile_for(catalog, catalog.accelerators["intel-gaudi3"], engine) is not None


def test_ollama_is_llama_cpp_and_unknown_names_fail() -> None:
    assert canonical_engine("Ollama") == "llama.cpp" and canonical_engine("TRT-LLM") == "tensorrt-llm"
    with pytest.raises(InputError, match="unknown engine 'tgi'"):
        canonical_engine("tgi")


def test_bands_bracket_the_value(catalog: Catalog) -> None:
    for gpu in ("nvidia-rtx-4090", "nvidia-h100-sxm5", "apple-m3-max", "amd-mi300x"):
        value, slow, fast = efficiency_bounds(catalog, catalog.accelerators[gpu])
        assert value and slow and fast
        assert slow.bandwidth_efficiency <= value.bandwidth_efficiency <= fast.bandwidth_efficiency
        assert slow.overhead_per_layer_us >= value.overhead_per_layer_us >= fast.overhead_per_layer_us


def test_decode_uses_the_engines_efficiencies() -> None:
    """Llama 3 8B at 4.5 bits per weight, KV length 1,000, on a 1,000 GB/s card: weights read 7,504,924,672 ×
    0.5625 B = 4.2215 GB (all but the input embedding table: 8,030,261,248 − 525,336,576); KV 131,072 B × 1,000 =
    0.131 GB. At 80 % on weights, 40 % on the KV cache and 10 µs per layer:
    4.2215/(1000 × 0.8) + 0.131072/(1000 × 0.4) s + 32 × 10 µs = 5.2769 + 0.3277 + 0.32 ms = 5.9246 ms."""
    params = count_parameters(LLAMA_3_8B)
    assert params.total - params.embedding == 7_504_924_672
    eff = EngineEfficiency("llama.cpp", 0.8, 0.4, 10.0)
    step = decode_step(LLAMA_3_8B, params, Device(1000.0, None, efficiency=eff), bytes_per_weight=0.5625,
                       kv_bytes_per_value=2.0, context=1000)
    expected = 7_504_924_672 * 0.5625 / 0.8e12 + 131_072_000 / 0.4e12 + 32 * 10e-6
    assert step.step_seconds == pytest.approx(expected) and expected == pytest.approx(5.9246e-3, rel=1e-4)
    # without an engine the engine-blind factors apply: one 75 % rate for both, 60 µs per layer
    blind = decode_step(LLAMA_3_8B, params, Device(1000.0, None), bytes_per_weight=0.5625, kv_bytes_per_value=2.0,
                        context=1000)
    assert blind.step_seconds == pytest.approx((7_504_924_672 * 0.5625 + 131_072_000) / 0.75e12 + 32 * 60e-6)


def test_per_sequence_overhead_grows_with_the_batch() -> None:
    params = count_parameters(LLAMA_3_8B)
    eff = EngineEfficiency("vllm", 0.8, 0.8, 10.0, overhead_per_sequence_us=20.0)
    one, many = (decode_step(LLAMA_3_8B, params, Device(1000.0, None, efficiency=eff), bytes_per_weight=2.0,
                             kv_bytes_per_value=2.0, context=100, batch=b) for b in (1, 64))
    # host work per sequence per step, whatever the layers: 63 more sequences × 20 µs = 1.26 ms more overhead
    assert many.overhead_seconds - one.overhead_seconds == pytest.approx(63 * 20e-6)


def test_llama_cpp_on_an_a100_reads_less_of_the_bandwidth_than_vllm(catalog: Catalog) -> None:
    """The issue's point: one fraction for every engine over-estimated llama.cpp on data-centre cards."""
    a100 = catalog.accelerators["nvidia-a100-sxm-80gb"]
    llama, vllm = engine_efficiency(catalog, a100, "ollama"), engine_efficiency(catalog, a100, "vllm")
    assert llama and vllm and llama.bandwidth_efficiency < vllm.bandwidth_efficiency


def test_bad_profile_in_an_overlay_names_file_and_field(tmp_path: Path) -> None:
    overlay = tmp_path / "engines.toml"
    overlay.write_text('[[engine_profile]]\nid = "vllm@any"\n'
                       'bandwidth_efficiency = { value = 0.9, low = 0.95, high = 1.0 }\n', encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"engines\.toml:\d+: engine_profile 'vllm@any': bandwidth_efficiency: "
                                             r"need low <= value <= high"):
        load_catalog(user_dir=tmp_path)


def test_training_time_mfu_override_wins() -> None:
    """The user's MFU replaces the step's; without either the flat training_mfu stands in."""
    fixed = training_time(8e9, 1e12, gpus=8, peak_tflops=989.0, mfu=0.5)
    assert fixed.mfu == 0.5 and fixed.gpu_hours == pytest.approx(6 * 8e9 * 1e12 / (989e12 * 0.5) / 3600)
    assert fixed.step is None
    flat = training_time(8e9, 1e12, gpus=8, peak_tflops=989.0)
    assert flat.mfu == Factors().training_mfu
    with pytest.raises(ValueError):
        training_time(8e9, 1e12, gpus=8, peak_tflops=989.0, mfu=1.5)
