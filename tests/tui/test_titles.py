"""A consultation's one-line title (recent list) tells two consultations of one model apart by what was given."""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.titles import consultation_title


@pytest.mark.parametrize(("answers", "title"), [
    ({"model": {"name": "llama-3.1-8b"}}, "inference · llama-3.1-8b · bf16"),
    ({"model": {"name": "llama-3.1-70b"}, "precision": {"context_tokens": 6144}},
     "inference · llama-3.1-70b · bf16 · context 6,144"),
    ({"model": {"name": "llama-3.1-70b"}, "inference": {"requests_per_minute": 1000},
      "deployment": {"where": "on_prem"}}, "inference · llama-3.1-70b · bf16 · 1,000 req/min · on-prem"),
    ({"model": {"name": "llama-3.1-70b"}, "inference": {"concurrent_requests": 32}},
     "inference · llama-3.1-70b · bf16 · 32 in flight"),
    ({"workload": "training", "model": {"params_b": 7}, "training": {"tokens_b": 140}},
     "training · 7B · bf16 · 140B tokens"),
])
def test_title_names_what_was_given(answers: dict[str, Any], title: str) -> None:
    assert consultation_title(parse_answers({"workload": "inference", **answers})) == title
