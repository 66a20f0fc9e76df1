"""Golden consultations: compact fingerprints of eight varied consultations on the shipped knowledge base.

Speed work on the engine wrapper, the configuration search, the sizing fast paths, ranking and the WHY chains must
not change what a consultation concludes. Each fingerprint keeps what a reader of the result sees: the top ten
options with what they cost over the horizon (whole dollars), GPU counts and tokens/s or training days
(3 significant figures), the warning ids, the ruled-out families with their rules, the counts of each section,
the number of WHY lines and of rule firings.

The expected values are data, not hand calculations: they were produced by the code as it stood before the speed
work (`tests/data/golden_consultations.json`). A deliberate change of behaviour (a corrected formula, a knowledge-base
update, a search that now finds a strictly better configuration) is recorded by regenerating the file:

    GPUADVISOR_REGENERATE_GOLDEN=1 python -m pytest tests/rules/test_consult_golden.py

and saying why in the commit message; the diff of the JSON file shows exactly which figures moved.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers

GOLDEN = Path(__file__).parent.parent / "data" / "golden_consultations.json"
REGENERATE = os.environ.get("GPUADVISOR_REGENERATE_GOLDEN") == "1"

CASES: dict[str, dict[str, Any]] = {
    # serving with per-user speed and first-token SLAs
    "inference-8b-sla": {"workload": "inference", "model": {"name": "llama-3.1-8b"},
                         "inference": {"requests_per_minute": 300, "min_tokens_per_s_per_user": 30,
                                       "ttft_max_s": 1.0}},
    # the benchmark's serving case, with a latency SLA
    "inference-70b-latency": {"workload": "inference", "model": {"name": "llama-3.1-70b"},
                              "inference": {"requests_per_minute": 1000, "concurrent_requests": 32,
                                            "latency_p95_s": 20}},
    # mixture of experts in FP8
    "inference-mixtral-fp8": {"workload": "inference", "model": {"name": "mixtral-8x7b"},
                              "precision": {"weights": "fp8"},
                              "inference": {"requests_per_minute": 600, "min_tokens_per_s_per_user": 20,
                                            "ttft_max_s": 2.0}},
    "training-8b": {"workload": "training", "model": {"name": "llama-3.1-8b"}},
    "training-70b-deadline": {"workload": "training", "model": {"name": "llama-3.1-70b"},
                              "training": {"tokens_b": 200, "deadline_days": 60}},
    "qlora-8b": {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "qlora"}},
    # hourly and capital budgets veto many options
    "lora-8b-budget": {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "lora"},
                       "budget": {"hourly_usd": 2.0, "capex_usd": 5000}},
    # 405B on at most two NVIDIA GPUs at AWS: nothing fits
    "inference-405b-infeasible": {"workload": "inference", "model": {"name": "llama-3.1-405b"},
                                  "constraints": {"max_gpus": 2, "vendors": ["nvidia"]},
                                  "deployment": {"where": "cloud", "providers": ["aws"]}},
}


def _sig(x: float | None, digits: int = 3) -> float | None:
    """`x` to `digits` significant figures (None stays None)."""
    if x is None or x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def _option(r: Recommendation) -> list[Any]:
    return [r.option, round(r.decision_cost.usd), r.count, _sig(r.tokens_per_s), _sig(r.training_days)]


def fingerprint(result: RecommendResult) -> dict[str, Any]:
    """What a reader sees of a consultation, rounded so that only real changes show."""
    shown = [*result.recommendations, *result.runners_up]
    why_lines = (len(result.profile_why) + sum(len(r.why) for r in shown) + sum(len(w.why) for w in result.warnings)
                 + sum(len(o.why) for o in result.ruled_out))
    return {
        "feasible": result.feasible,
        "counts": {"recommendations": len(result.recommendations), "runners_up": len(result.runners_up),
                   "warnings": len(result.warnings), "ruled_out": len(result.ruled_out),
                   "to_make_feasible": len(result.to_make_feasible)},
        "top10": [_option(r) for r in shown[:10]],
        "warnings": [w.id for w in result.warnings],
        "ruled_out": [[o.family, o.rule] for o in result.ruled_out],
        "required_tokens_per_s": _sig(result.profile.required_tokens_per_s),
        "training_memory_gb": _sig(result.profile.training_memory_gb),
        "why_lines": why_lines,
        "rules_fired": result.rules_fired,
    }


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


def _regenerate(advisor: Advisor) -> None:
    """Write the fingerprints, one line per section (so a diff names the section that moved)."""
    cases = []
    for name, answers in CASES.items():
        fp = fingerprint(advisor.consult(parse_answers(answers)))
        lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in fp.items())
        cases.append(f" {json.dumps(name)}: {{\n{lines}\n }}")
    GOLDEN.write_text("{\n" + ",\n".join(cases) + "\n}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def golden(advisor: Advisor) -> dict[str, Any]:
    if REGENERATE:
        _regenerate(advisor)
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def test_golden_file_covers_every_case(golden: dict[str, Any]) -> None:
    assert sorted(golden) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_consultation_matches_golden(name: str, advisor: Advisor, golden: dict[str, Any]) -> None:
    got = json.loads(json.dumps(fingerprint(advisor.consult(parse_answers(CASES[name])))))
    expected = golden[name]
    for key in expected:  # one assertion per section, so a failure names what moved
        assert got[key] == expected[key], f"{name}: {key} changed"
    assert got == expected


def test_infeasible_case_is_infeasible(golden: dict[str, Any]) -> None:
    """The golden set keeps one consultation without any feasible option (and tips to make one feasible)."""
    fp = golden["inference-405b-infeasible"]
    assert fp["feasible"] is False and fp["top10"] == [] and fp["counts"]["to_make_feasible"] >= 1


def test_significant_figures() -> None:
    assert _sig(4027.8444) == 4030.0
    assert _sig(0.012345) == 0.0123
    assert _sig(None) is None
