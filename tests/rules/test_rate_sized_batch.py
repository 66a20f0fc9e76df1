"""A request rate with no concurrency: the decode batch is each option's, not the workload's batch 1.

At 24,000 requests a minute no line may describe the service as batch-1 decoding or size the KV cache "for 1
sequences" (the plans form batches of 13-27 per replica there); the same model with a stated concurrency keeps
the workload-level lines.
"""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers

RATE = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-70b"},
        "precision": {"weights": "fp8", "context_tokens": 16384},
        "inference": {"requests_per_minute": 24000, "input_tokens": 8192, "output_tokens": 256, "ttft_max_s": 2.0,
                      "min_tokens_per_s_per_user": 100},
        "deployment": {"where": "cloud", "providers": ["aws"], "reservations": False},
        "constraints": {"vendors": ["nvidia"]}}
# on-demand only (no 3-year reservation): AWS publishes a p5 reservation but none for p6-b200, so with them
# the H100 plan would win on its rate, not on the B200's capacity this case checks


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    catalog: Catalog = load_catalog(user_dir=None)
    return Advisor(catalog, include_user_packs=False)


def test_at_a_rate_the_kv_line_is_per_sequence_and_no_line_says_batch_1(advisor: Advisor) -> None:
    result = advisor.consult(parse_answers(RATE))
    rules = {w.rule for w in result.warnings}
    assert "W5.rate" in rules and not rules & {"W5", "H3", "W12", "W1.warn"}
    w5 = next(w for w in result.warnings if w.rule == "W5.rate")
    # Llama 3.1 70B, FP16 KV: 2 × 80 layers × 8 KV heads × 128 × 2 B = 327,680 B a token × (8,192 prompt + 256
    # output) = 2.77 GB; FP8 weights: (70,553,706,496 − 2,101,346,304 embedding and LM-head parameters) × 1 B +
    # 2,101,346,304 × 2 B (kept in BF16) = 72.66 GB
    assert w5.message.startswith(f"KV cache: {327_680 * 8_448 / 1e9:.2f} GB a sequence at 8,448 tokens (prompt and "
                                 "output) next to 72.7 GB of weights")
    text = " ".join(w.message for w in result.warnings)
    assert "for 1 sequences" not in text and "Batch 1 decoding" not in text
    top = result.recommendations[0]
    # what the plan actually runs: tokens/s ÷ one stream's tokens/s = sequences in flight, several per replica
    assert top.tokens_per_s is not None and top.tokens_per_s_per_user is not None
    assert top.tokens_per_s / top.tokens_per_s_per_user > 4 * top.replicas


def test_with_a_stated_concurrency_the_workload_lines_stay(advisor: Advisor) -> None:
    answers = {**RATE, "inference": {**RATE["inference"], "concurrent_requests": 32}}
    result = advisor.consult(parse_answers(answers))
    w5 = next(w for w in result.warnings if w.rule == "W5")
    assert w5.message.startswith(f"KV cache: {32 * 327_680 * 8_448 / 1e9:.1f} GB for 32 sequences × 8,448 tokens")
    assert "W5.rate" not in {w.rule for w in result.warnings}
