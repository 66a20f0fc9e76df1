"""Issue 44: local machines figured right — the request a short context holds, each engine's own multi-GPU split,
parts without a published tensor rate, desk-side boxes that pair, and the memory engines admit.

Every expected figure is a published measurement (cited at the test) or a hand calculation shown beside it.
"""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.answers import parse_answers, request_within_context
from gpuadvisor.rules.estimate import EstimateRequest, estimate

CATALOG = load_catalog(user_dir=None)


def test_a_short_context_holds_the_default_request_in_its_share() -> None:
    # the default request is 500 prompt + 200 output tokens; 128 tokens hold 500/700 of it as prompt (91), the
    # rest (37) as output; with one count given, the other takes what the context leaves
    assert request_within_context(128, None, None) == {"inference.input_tokens": 91, "inference.output_tokens": 37}
    assert request_within_context(128, None, 100) == {"inference.input_tokens": 28}
    assert request_within_context(512, 500, None) == {"inference.output_tokens": 12}
    assert request_within_context(700, None, None) == {}  # the default request fits: nothing derived
    assert request_within_context(4096, None, None) == {}


def test_a_typed_count_is_never_replaced_by_a_derived_default() -> None:
    a = parse_answers({"workload": "inference", "precision": {"context_tokens": 128},
                       "inference": {"input_tokens": 100}})
    eff = a.effective()
    assert eff["inference.input_tokens"] == 100
    assert eff["inference.output_tokens"] == 28  # 128 - 100
    unstated = parse_answers({"workload": "inference"}).effective()  # context not stated: the plain defaults
    assert (unstated["inference.input_tokens"], unstated["inference.output_tokens"]) == (500, 200)


@pytest.mark.parametrize(("model", "precision", "gpu", "measured"), [
    # XiongjieDai, GPU-Benchmarks-on-LLM-Inference (llama-bench tg128, tests/data/calibration.toml rows of context 64)
    ("llama-2-7b", "q4_0", "nvidia-rtx-4090", 149.37),
    ("llama-2-7b", "fp16", "nvidia-rtx-3090", 51.85),
    ("llama-2-70b", "q4_0", "nvidia-h100-pcie", 25.88),
])
def test_llama_bench_tg128_is_answered_at_context_128(model: str, precision: str, gpu: str,
                                                      measured: float) -> None:
    # `--context 128` with no request lengths given was refused (the 500-token default prompt exceeded it)
    r = estimate(EstimateRequest(model=model, gpu=gpu, precision=precision, engine="llama.cpp", context=128,
                                 batch=1), CATALOG)
    assert r.decode_tokens_per_s == pytest.approx(measured, rel=0.10)
    assert any(d.startswith("input_tokens = 91") for d in r.defaults_applied)
