"""Free notebooks planned as the machines they are (issue 29, item 5): Kaggle's "GPU T4 x2" is two T4s, used in data
parallel where the job allows (QLoRA with DDP, two serving replicas), never tensor parallel over PCIe for adapters,
and a longer context never comes out faster than a shorter one."""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


def _consult(advisor: Advisor, answers: dict[str, Any]) -> RecommendResult:
    return advisor.consult(parse_answers(answers), top=40)


def _free(result: RecommendResult) -> dict[str, Recommendation]:
    """The free-tier options of a consultation, by tier id."""
    return {r.option.rsplit(":", 1)[-1]: r for r in (*result.recommendations, *result.runners_up)
            if r.acquisition == "free"}


def _qlora(model: str, context: int) -> dict[str, Any]:
    return {"workload": "finetune", "stage": "learning", "model": {"name": model}, "finetune": {"method": "qlora"},
            "precision": {"context_tokens": context}}


def test_qlora_on_kaggle_t4x2_is_data_parallel_on_both_t4s(advisor: Advisor) -> None:
    """Hand calculation of the training step (rules/sizing/training.py), QLoRA on Llama 3.1 8B, the default 0.1B
    tokens in a fine-tune's 64 sequences of 4,096 tokens a step. A T4 (65 dense FP16 TFLOPS; measured FP16 square
    matmul 42.3 TFLOPS, the mean of 41.91 on Colab and 42.71 on Kaggle: torch-perf-test-data, issue 38) at the
    stack's 0.68 runs GEMMs at 28.76 TFLOPS (was 33.15 at the 0.75 default share before the measured rate). Its
    16 GB hold the 4-bit base with full recomputation only, so a token costs (4 + 2) × 7,504,924,672 matmul
    parameters × the depth factor 1.10024 (GEMMs of 4,096-wide inputs) = 4.9544e10 GEMM FLOPs, and the causal
    attention 6 × 32 layers × 4096 × 4096 × 8/6 (recomputed) = 4.2950e9 FLOPs at 2.6× a GEMM FLOP's cost; the
    elementwise work 22 B × 4096 × 32 layers ÷ 320 GB/s. Per token: 4.9544e10 / 28.764e12 + 4.2950e9 × 2.6 /
    28.764e12 + 2.8836e6 / 320e9 = 1.72243e-3 + 3.8823e-4 + 9.01e-6 s = 2.11967e-3 s: 471.8 tokens/s, 1e8 tokens in
    58.88 h on one T4. DDP on two: each GPU takes half the sequences and only the adapters' gradients are exchanged
    (not charged): 29.44 h."""
    free = _free(_consult(advisor, _qlora("llama-3.1-8b", 4096)))
    kaggle, colab = free["kaggle-t4x2"], free["colab-free"]
    assert (kaggle.count, kaggle.tensor_parallel, kaggle.pipeline_parallel, kaggle.replicas) == (2, 1, 1, 2)
    assert colab.count == 1
    rate = 65e12 * (42.3 / 65) * 0.68
    per_token = 6 * 7_504_924_672 * 1.1002385 / rate + 6 * 32 * 4096 * 4096 * 8 / 6 * 2.6 / rate \
        + 22 * 4096 * 32 / 320e9
    one_t4_hours = 1e8 * per_token / 3600
    assert one_t4_hours == pytest.approx(58.88, abs=0.01)
    assert colab.training_days is not None and kaggle.training_days is not None
    assert colab.training_days * 24 == pytest.approx(one_t4_hours, rel=2e-4)
    assert kaggle.training_days * 24 == pytest.approx(one_t4_hours / 2, rel=2e-4)  # 29.4 h, was 58.9 on one T4
    # the same GPU-hours, and the sessions the quota counts halve
    assert kaggle.training_gpu_hours == pytest.approx(colab.training_gpu_hours, rel=2e-4)
    assert kaggle.cost.usage_hours == pytest.approx(one_t4_hours / 2, rel=2e-4)


def test_adapters_never_go_tensor_parallel_over_pcie(advisor: Advisor) -> None:
    """At 8,192 tokens the 8B's activations (9.8 GB with checkpointing; T4s run PyTorch's memory-efficient
    attention, so they grow linearly with the sequence) fit beside its 4-bit base only with the base sharded over
    both T4s (FSDP-QLoRA, ZeRO-3: 14.0 GB of 16): still data parallel, and slower than at 4,096 tokens (23.0 h
    against 19.4 h). An old plan split the model TP 2 over PCIe, which no fine-tuning recipe runs, and came out
    faster than the shorter context; no option anywhere splits adapters by tensor parallelism over PCIe."""
    at_4k = _free(_consult(advisor, _qlora("llama-3.1-8b", 4096)))["kaggle-t4x2"]
    result = _consult(advisor, _qlora("llama-3.1-8b", 8192))
    at_8k = _free(result)["kaggle-t4x2"]
    assert (at_8k.tensor_parallel, at_8k.replicas, at_8k.zero_stage) == (1, 2, 3)
    assert at_8k.memory.total == pytest.approx(14.01, abs=0.01) and at_8k.memory.total < 16.0
    assert at_8k.training_days is not None and at_4k.training_days is not None
    assert at_8k.training_days > at_4k.training_days
    for r in (*result.recommendations, *result.runners_up):
        if r.tensor_parallel > 1:
            assert "PCIe" not in r.unit.topology or "NVLink" in r.unit.topology, r.title


@pytest.mark.parametrize("model", ["llama-3.2-1b", "qwen2.5-3b", "llama-3.1-8b"])
def test_longer_context_is_never_faster(advisor: Advisor, model: str) -> None:
    """The same tokens at a longer sequence cost more attention FLOPs (and at 8K the 3B model needs its base
    sharded, FSDP-QLoRA, whose gathers cost time): on every free tier, hours never fall as the context grows."""
    hours: dict[str, list[float]] = {}
    for context in (2048, 4096, 8192):
        for tier, r in _free(_consult(advisor, _qlora(model, context))).items():
            assert r.training_days is not None
            hours.setdefault(tier, []).append(r.training_days * 24)
    assert "kaggle-t4x2" in hours
    for tier, series in hours.items():
        assert series == sorted(series), (model, tier, series)


def test_kaggle_t4x2_data_parallel_at_8k_when_it_fits(advisor: Advisor) -> None:
    """Qwen2.5 3B at 8,192 tokens fits each T4 whole (13.1 GB: its activations double from 4.8 to 9.6 GB, no s²
    score term with memory-efficient attention): data parallel on both, unsharded, and slower than at 4,096
    tokens (10.6 h against 8.5 h)."""
    at_4k = _free(_consult(advisor, _qlora("qwen2.5-3b", 4096)))["kaggle-t4x2"]
    at_8k = _free(_consult(advisor, _qlora("qwen2.5-3b", 8192)))["kaggle-t4x2"]
    assert (at_4k.replicas, at_4k.zero_stage, at_8k.replicas, at_8k.tensor_parallel, at_8k.zero_stage) == (
        2, 0, 2, 1, 0)
    assert at_8k.training_days is not None and at_4k.training_days is not None
    assert at_8k.training_days > at_4k.training_days


def test_serving_on_kaggle_t4x2_runs_two_replicas(advisor: Advisor) -> None:
    """Llama 3.1 8B (the learning default: a 4-bit K-quant) fits one T4: Kaggle's two T4s serve two replicas,
    twice the capacity of Colab's one T4 at the same per-replica figures."""
    free = _free(_consult(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                                    "inference": {"concurrent_requests": 8}}))
    kaggle, colab = free["kaggle-t4x2"], free["colab-free"]
    assert (kaggle.count, kaggle.tensor_parallel, kaggle.replicas) == (2, 1, 2)
    assert (colab.count, colab.replicas) == (1, 1)
    assert kaggle.capacity_tokens_per_s == pytest.approx(2 * (colab.capacity_tokens_per_s or 0), rel=1e-6)
    assert (kaggle.batch_per_replica, colab.batch_per_replica) == (4, 8)  # the 8 requests shared by two replicas


def test_own_gpus_train_data_parallel_too(advisor: Advisor) -> None:
    """Your own two RTX 4090s cost only power, the same energy whether one runs twice as long or two run in
    parallel: the QLoRA run takes both, data parallel, in at most half the time of one (a second card can also hold
    what one needs to recompute: the step, not a constant, says how much faster)."""
    answers = {**_qlora("llama-3.1-8b", 4096), "current": {"gpu": "nvidia-rtx-4090", "gpu_count": 2}}
    result = _consult(advisor, answers)
    own = next(r for r in (*result.recommendations, *result.runners_up) if r.acquisition == "own")
    assert (own.count, own.tensor_parallel, own.replicas) == (2, 1, 2)
    single = _consult(advisor, {**answers, "current": {"gpu": "nvidia-rtx-4090", "gpu_count": 1}})
    one = next(r for r in (*single.recommendations, *single.runners_up) if r.acquisition == "own")
    assert one.count == 1 and one.training_days is not None and own.training_days is not None
    assert own.training_days <= one.training_days / 2 * (1 + 2e-3)
    assert own.training_days > one.training_days / 3
