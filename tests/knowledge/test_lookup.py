"""Loose names resolve to one entry, or say which entries they could mean, or suggest the closest names."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AmbiguousNameError, UnknownNameError
from gpuadvisor.knowledge.lookup import (
    find_accelerator,
    find_instance,
    find_model,
    find_precision,
    natural_key,
    normalize,
)


def test_normalize() -> None:
    assert normalize("RTX-4090") == normalize("rtx 4090") == normalize("Rtx_4090") == "rtx4090"


@pytest.mark.parametrize(("query", "expected"), [
    ("nvidia-h100-sxm5", "nvidia-h100-sxm5"),  # exact id
    ("NVIDIA-H100-SXM5", "nvidia-h100-sxm5"),  # id, any case
    ("H100 SXM", "nvidia-h100-sxm5"),  # alias
    ("4090", "nvidia-rtx-4090"),
    ("rtx_4090", "nvidia-rtx-4090"),  # folded
    ("NVIDIA L40S", "nvidia-l40s"),  # name
    ("MI300X", "amd-mi300x"),
    ("TPU v5e", "google-tpu-v5e"),
    ("trillium", "google-tpu-v6e"),
    ("3090", "nvidia-rtx-3090"),  # the alias wins over the substring of "3090 Ti"
    ("3090 ti", "nvidia-rtx-3090-ti"),
    ("A100 SXM 80GB", "nvidia-a100-sxm-80gb"),
    ("h100 nvl", "nvidia-h100-nvl"),
    ("gaudi 3", "intel-gaudi3"),
])
def test_find_accelerator(shipped: Catalog, query: str, expected: str) -> None:
    assert find_accelerator(shipped, query).id == expected


def test_ambiguous_h100_lists_candidates(shipped: Catalog) -> None:
    with pytest.raises(AmbiguousNameError) as info:
        find_accelerator(shipped, "H100")
    ids = [cid for cid, _ in info.value.candidates]
    assert ids == ["nvidia-h100-nvl", "nvidia-h100-pcie", "nvidia-h100-sxm5"]
    assert "NVIDIA H100 SXM5 80GB" in str(info.value) and "which one?" in str(info.value)


def test_ambiguous_by_tokens(shipped: Catalog) -> None:
    with pytest.raises(AmbiguousNameError) as info:
        find_accelerator(shipped, "A100 80GB")
    assert [c for c, _ in info.value.candidates] == ["nvidia-a100-pcie-80gb", "nvidia-a100-sxm-80gb"]


def test_candidates_are_in_natural_order(shipped: Catalog) -> None:
    # sizes read as numbers: a plain sort put Qwen2.5 14B before 3B and left 7B off a six-line list
    with pytest.raises(AmbiguousNameError) as info:
        find_model(shipped, "qwen2.5")
    assert [c for c, _ in info.value.candidates] == [
        "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b"]
    assert sorted(["b1000", "b200", "a100"], key=natural_key) == ["a100", "b200", "b1000"]
    assert natural_key("qwen2.5-3b") < natural_key("qwen2.5-14b") < natural_key("qwen3-0.6b")


def test_typo_suggests(shipped: Catalog) -> None:
    with pytest.raises(UnknownNameError) as info:
        find_accelerator(shipped, "RTX 4900")
    assert "nvidia-rtx-4090" in info.value.suggestions
    assert str(info.value).startswith("unknown accelerator 'RTX 4900'; closest: ")
    with pytest.raises(UnknownNameError) as none:
        find_accelerator(shipped, "zzzzqqq")
    assert none.value.suggestions == []


@pytest.mark.parametrize(("query", "expected"), [
    ("bf16", "bf16"), ("BF16", "bf16"), ("bfloat16", "bf16"), ("fp16", "fp16"), ("half", "fp16"),
    ("fp32", "fp32"), ("fp8", "fp8"), ("int8", "int8"), ("int4", "int4"), ("awq", "awq"), ("gptq", "gptq"),
    ("nf4", "nf4"), ("qlora", "nf4"), ("q4_0", "q4_0"), ("Q4_K_M", "q4_k_m"), ("q4-k-m", "q4_k_m"),
    ("q8_0", "q8_0"), ("Q6_K", "q6_k"), ("q5_k_m", "q5_k_m"), ("mxfp4", "mxfp4"), ("NVFP4", "nvfp4"),
    ("llm.int8", "bnb-int8"),
])
def test_find_precision(shipped: Catalog, query: str, expected: str) -> None:
    assert find_precision(shipped, query).id == expected


def test_ambiguous_precision(shipped: Catalog) -> None:
    with pytest.raises(AmbiguousNameError) as info:
        find_precision(shipped, "q4")
    assert {c for c, _ in info.value.candidates} >= {"q4_0", "q4_k_m"}


@pytest.mark.parametrize(("query", "expected"), [
    ("aws-p5.48xlarge", "aws-p5.48xlarge"), ("p5.48xlarge", "aws-p5.48xlarge"), ("a2-highgpu-1g", "gcp-a2-highgpu-1g"),
    ("Lambda 8x H100 SXM", "lambda-8x-h100-sxm"), ("Standard_NC40ads_H100_v5", "azure-standard_nc40ads_h100_v5"),
])
def test_find_instance(shipped: Catalog, query: str, expected: str) -> None:
    assert find_instance(shipped, query).id == expected


@pytest.mark.parametrize(("query", "expected"), [
    ("llama-3.1-8b", "llama-3.1-8b"), ("Llama 3.1 8B", "llama-3.1-8b"), ("meta-llama/Llama-3.1-8B", "llama-3.1-8b"),
    ("Llama-3.1-8B", "llama-3.1-8b"), ("mixtral 8x7b", "mixtral-8x7b"),
])
def test_find_model(shipped: Catalog, query: str, expected: str) -> None:
    assert find_model(shipped, query).id == expected


def test_unknown_model(shipped: Catalog) -> None:
    with pytest.raises(UnknownNameError) as info:
        find_model(shipped, "llamma 3.1 8b")
    assert "llama-3.1-8b" in info.value.suggestions
