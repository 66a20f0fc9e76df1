"""`estimate` on a configuration that does not fit lists the changes that would make it fit, each sized again by the
same estimate (rules/estimate/fit_hints.py): figures checked by hand, and the order and choice of suggestions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.estimate.consult import EstimateRequest
from gpuadvisor.rules.estimate.fit_hints import estimate_with_fit_options as estimate

CATALOG = load_catalog(user_dir=None)
TRAIN_70B = EstimateRequest(model="llama-3.1-70b", workload="training", gpu="nvidia-h100-sxm5", gpus=64, tokens=100e9,
                            zero=0)
"""Plain data parallel (ZeRO 0, stated: an estimate's own default for full training is the distributed optimizer)."""


def test_plain_data_parallel_70b_training_is_told_to_shard() -> None:
    result = estimate(TRAIN_70B, CATALOG)
    # 70,553,706,496 parameters × 16 B (bf16 weights and gradients, fp32 master and Adam moments) on every GPU
    assert result.fits is False and result.memory_gb.optimizer_states == pytest.approx(70.553706496 * 12, rel=1e-3)
    assert [o.flags for o in result.fit_options] == ["--zero 3"]  # a wider split adds nothing once ZeRO-3 fits
    zero3 = result.fit_options[0]
    # ZeRO-3 over 64 ranks: 70.55B × 16 B ÷ 64 = 17.64 GB, plus the activations and runtime overhead that stay
    sharded = 70.553706496 * 16 / 64
    assert zero3.total_gb == pytest.approx(sharded + result.memory_gb.activations + result.memory_gb.runtime_overhead,
                                           abs=0.05)
    # an "80 GB" H100 holds 80 GiB: 0.9 × 80 × 2^30 bytes = 77.3 GB usable (issue 44)
    assert zero3.total_gb <= zero3.usable_gb == pytest.approx(0.9 * 80 * 2**30 / 1e9)
    # the same figure the estimate gives when asked for it (one pipeline)
    assert zero3.total_gb == estimate(replace(TRAIN_70B, zero=3), CATALOG).memory_gb.total


def test_70b_served_on_l40s_lists_a_smaller_format_and_a_split_that_fit() -> None:
    result = estimate(EstimateRequest(model="llama-3.1-70b", gpu="nvidia-l40s"), CATALOG)
    assert result.fits is False
    options = {o.flags: o for o in result.fit_options}
    # FP8 (70.6 GB of weights) is over 43.2 GB usable; 4-bit weights (about 0.5 B each) fit on one 48 GB card
    assert "--precision fp8" not in options and "--precision int4" in options
    # a 2-way split holds 70.6 GB of BF16 weights per GPU (too many); 4-way holds 35.3 GB and fits
    assert "--gpus 2 --tp 2" not in options and "--gpus 4 --tp 4" in options
    assert options["--gpus 4 --tp 4"].total_gb == pytest.approx(
        estimate(EstimateRequest(model="llama-3.1-70b", gpu="nvidia-l40s", gpus=4, tp=4), CATALOG).memory_gb.total)
    assert all(o.total_gb <= o.usable_gb for o in result.fit_options)


def test_a_full_fine_tune_on_a_24_gb_card_is_pointed_at_qlora() -> None:
    result = estimate(EstimateRequest(model="llama-3.1-8b", workload="finetune", method="full",
                                      gpu="nvidia-rtx-4090"), CATALOG)
    assert result.fits is False
    # 24 GiB hold LoRA on the BF16 base (16.1 GB of weights) since device memory is counted in binary units (issue
    # 44); the last, least disruptive adapter offered is LoRA
    assert [o.flags for o in result.fit_options][-1] == "--method lora"


def test_from_scratch_training_is_never_told_to_use_adapters() -> None:
    result = estimate(replace(TRAIN_70B, gpus=8), CATALOG)
    assert result.fits is False
    # on 8 GPUs neither ZeRO-3 (141 GB each) nor TP 8 fits; 16 ranks hold 70.55 GB + activations (over 72 GB
    # usable); 32 hold 70.55B × 16 B ÷ 32 = 35.3 GB + 9.9 GB of activations + 1 GB = 46.2 GB
    assert [o.flags for o in result.fit_options] == ["--gpus 32 --zero 3"]
    m = result.memory_gb
    assert result.fit_options[0].total_gb == pytest.approx(70.553706496 * 16 / 32 + m.activations + m.runtime_overhead,
                                                           abs=0.05)


def test_nothing_to_suggest_when_it_fits_or_without_a_gpu() -> None:
    assert estimate(EstimateRequest(model="llama-3.1-8b", gpu="nvidia-h100-sxm5"), CATALOG).fit_options == []
    assert estimate(EstimateRequest(model="llama-3.1-405b"), CATALOG).fit_options == []
