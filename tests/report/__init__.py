"""Tests of the report writers. `sample()` is the hand-built consultation in tests/data/sample_result.json."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from gpuadvisor.rules.consultation.result import RecommendResult

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_result.json"
TODAY = date(2026, 11, 20)


def sample() -> RecommendResult:
    """Llama 3.1 70B INT8 inference: 3 recommendations (on-demand, spot, purchase), 1 runner-up, W5/W6/H11."""
    return RecommendResult.model_validate_json(SAMPLE.read_text(encoding="utf-8"))
