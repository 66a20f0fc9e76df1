"""Words by stage (issue 42): a learner reads a finding's conclusion, without rule ids or the engine's caveats; a
practitioner reads the rule. The student of issue 42 (QLoRA of Llama 3.1 8B, $20 a month, a laptop) saw first
"⚠ RISK H1 … no published dense training throughput to size the run with"."""

from __future__ import annotations

import pytest

from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.report import render
from gpuadvisor.tui.widgets.findings import warning_entries
from gpuadvisor.tui.words import finding_words, learner_message
from tests.report import TODAY

STUDENT = {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
           "finetune": {"method": "qlora"}, "budget": {"monthly_usd": 20}, "current": {"gpu": "laptop"}}
CAVEAT = "no published dense training throughput to size the run with"


@pytest.fixture(scope="module")
def student() -> RecommendResult:
    return consult(parse_answers(STUDENT))


def test_a_learner_reads_what_the_laptop_cannot_do_not_how_the_model_failed(student: RecommendResult) -> None:
    own = next(w for w in student.warnings if w.rule == "A.own-no-fit")
    assert CAVEAT in own.message  # the rule's words, kept in the result (and the JSON) as written
    words = finding_words(own, student)
    assert words.label == ""
    assert words.message == "Your 1× Laptop CPU (16 GB DDR5, dual channel) cannot run this."
    assert words.whole == f"H1: {own.message}"  # the WHY's title: every word, with the id
    entries = {title: prompt.plain for _, prompt, title, _ in warning_entries(student)}
    assert f"⚠ RISK {words.whole}" in entries
    assert entries[f"⚠ RISK {words.whole}"].startswith("⚠ RISK Your 1× Laptop CPU")


def test_a_learners_report_has_no_rule_ids_at_the_top(student: RecommendResult) -> None:
    text = render(student, "text", today=TODAY)
    findings = text[text.index("Findings\n"):text.index("\n1. ", text.index("Findings\n") + 200)]
    assert "[RISK] Your 1× Laptop CPU (16 GB DDR5, dual channel) cannot run this." in findings
    assert CAVEAT not in findings and "H10.port" not in findings and "[RISK] H1:" not in findings
    md = render(student, "md", today=TODAY)
    assert "### 1. RISK\n" in md and "### 1. RISK · H1" not in md
    full = render(student, "md", today=TODAY, full=True)
    assert CAVEAT in full  # the whole message opens the finding's WHY


def test_a_practitioner_reads_the_rule() -> None:
    result = consult(parse_answers({**STUDENT, "stage": "production"}))
    own = next(w for w in result.warnings if w.rule == "A.own-no-fit")
    words = finding_words(own, result)
    assert (words.label, words.message) == ("H1", own.message)
    assert "[RISK] H1: Your 1× Laptop CPU" in render(result, "text", today=TODAY)


@pytest.mark.parametrize(("message", "learner"), [
    ("PyTorch: NVIDIA (CUDA) options carry the least software risk; AMD ROCm options carry the engineer-weeks of "
     "porting as a cost (H10.port).",
     "PyTorch: NVIDIA (CUDA) options carry the least software risk; AMD ROCm options carry the engineer-weeks of "
     "porting as a cost."),
    ("P100: dropped in CUDA 13.0 (2025-08; last supported: CUDA 12.9); it runs only older toolkits (a production "
     "purchase of it is ruled out: SW.dropped-production).",
     "P100: dropped in CUDA 13.0 (2025-08; last supported: CUDA 12.9); it runs only older toolkits."),
    ("Busy about 3% of the time (20 h a month): renting costs less.", "Busy about 3% of the time (20 h a month): "
     "renting costs less."),
])
def test_rule_ids_in_brackets_go_and_the_rest_stays(message: str, learner: str) -> None:
    assert learner_message(message, []) == learner
