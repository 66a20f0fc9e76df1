"""Synthesized shapes for bare sizes (`--params 70B`) and the count parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.shape import describe_synthesis, synthesize_architecture
from gpuadvisor.rules.sizing.units import parse_billions, parse_count


@settings(max_examples=60, deadline=None)
@given(params=st.floats(5e7, 5e12))
def test_synthesized_count_within_2_percent(params: float) -> None:
    arch = synthesize_architecture(params)
    assert abs(count_parameters(arch).total - params) / params <= 0.02
    assert arch.num_attention_heads % arch.kv_heads == 0
    assert arch.mlp == "gated"


@pytest.mark.parametrize(("size", "hidden", "kv"), [(8e9, 4096, 8), (70e9, 8192, 8), (405e9, 16384, 8)])
def test_llama_3_like_shapes(size: float, hidden: int, kv: int) -> None:
    # Llama 3 8B: hidden 4096 × 32 layers; 70B: 8192 × 80; 405B: 16384 × 126, GQA with 8 KV heads, head dim 128.
    arch = synthesize_architecture(size)
    assert arch.hidden_size == hidden and arch.kv_heads == kv and arch.head_size == 128
    assert arch.intermediate_size == int(3.5 * hidden)


def test_8b_matches_llama_3_8b_exactly() -> None:
    # 32 layers of hidden 4096 with the 128,256 vocabulary is Llama 3 8B: 8,030,261,248 parameters.
    arch = synthesize_architecture(8e9)
    assert arch.num_hidden_layers == 32
    assert count_parameters(arch).total == 8_030_261_248


def test_description_says_synthesized() -> None:
    arch = synthesize_architecture(70e9)
    text = describe_synthesis(70e9, arch)
    assert "Synthesized" in text and "70B" in text and f"{arch.num_hidden_layers} layers" in text


def test_too_small_is_refused() -> None:
    with pytest.raises(ValueError):
        synthesize_architecture(1e6)


@pytest.mark.parametrize(("text", "value"), [
    ("70B", 70e9), ("1.5T", 1.5e12), ("500M", 500e6), ("10k", 1e4), ("7e9", 7e9), ("15_000_000", 15e6),
    ("2,000", 2000), (" 8b ", 8e9), ("3G", 3e9), (".5T", 0.5e12),
])
def test_parse_count(text: str, value: float) -> None:
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize(("text", "billions"), [
    ("70B", 70), ("500M", 0.5), ("61k", 6.1e-5), ("0.000061B", 6.1e-5), ("1.5T", 1500), ("70", 70), ("0.02", 0.02),
    ("7e9", 7), ("15_000_000", 0.015),
])
def test_parse_billions_reads_the_suffix_not_the_size(text: str, billions: float) -> None:
    # a suffixed count is a count whatever its size ('500k' was read as 500,000 billion before)
    assert parse_billions(text) == pytest.approx(billions)


@pytest.mark.parametrize("text", ["", "abc", "70X", "-5B", "0", "0B", "1e999", "B"])
def test_parse_count_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_count(text)
