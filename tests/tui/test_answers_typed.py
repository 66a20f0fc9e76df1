"""Answers travel typed and the form is derived from them (issue 30): a what-if sends the app validated answers, and
the questionnaire opened afterwards shows them, exactly, without a second copy kept as text."""

from __future__ import annotations

from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.messages import ResultsRequested
from gpuadvisor.tui.questionnaire.answers_state import AnswerState
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.screens.results import ResultsScreen

from .conftest import make_app, settle, wait_until, what_if

DETECTED: dict[str, Any] = {"current.gpu": "nvidia-rtx-3090", "current.gpu_count": 2,
                            "current.gpu_name": "NVIDIA GeForce RTX 3090", "current.detection": "nvidia-smi: 2 GPUs"}


def test_the_form_derived_from_answers_gives_them_back() -> None:
    given = {"workload": "finetune", "finetune": {"method": "qlora"}, "model": {"name": "llama-3.1-8b"},
             "training": {"tokens_b": 0.05, "deadline_days": 2.0}, "budget": {"hourly_usd": 3.0},
             "deployment": {"where": "cloud"}, "constraints": {"max_gpus": 8}}
    answers = parse_answers(given)
    state = AnswerState.from_answers(answers)
    assert state.raw["training.tokens_b"] == "0.05" and state.raw["constraints.max_gpus"] == "8"
    assert state.validate()[0] == answers


def test_detected_gpus_stay_the_default_of_a_derived_form() -> None:
    """Entered with the current-GPU field empty (the detected 2 x RTX 3090 apply), then derived again from the
    answers: the field is empty again, not typed in as if the user had, and the answers are the same."""
    entered = AnswerState(raw={"workload": "inference", "model": "llama-3.1-8b"}, detected=dict(DETECTED))
    answers, errors = entered.validate()
    assert answers is not None, errors
    assert answers.current.gpu == "nvidia-rtx-3090" and answers.current.gpu_count == 2
    derived = AnswerState.from_answers(answers, DETECTED)
    assert "current.gpu" not in derived.raw and "current.gpu_count" not in derived.raw
    assert derived.uses_detection() and derived.validate()[0] == answers
    typed = AnswerState.from_answers(parse_answers({**answers.given(), "current": {"gpu": "nvidia-a100-sxm4-80gb",
                                                                                   "gpu_count": 4}}), DETECTED)
    assert typed.raw["current.gpu"] == "nvidia-a100-sxm4-80gb"  # another GPU than detected: the user's entry


async def test_edit_after_a_what_if_shows_the_answers_of_the_results(catalog: Catalog) -> None:
    given = {"workload": "inference", "model": {"name": "llama-3.1-70b"}, "precision": {"context_tokens": 8192}}
    seen: list[object] = []
    app = make_app(catalog, parse_answers(given))
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.result is not None)
        before = app.result
        await what_if(pilot, {"precision.context_tokens": "32768"})
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not before)
        sent = [m for m in seen if isinstance(m, ResultsRequested)]
        assert len(sent) == 1 and sent[0].answers.precision.context_tokens == 32768  # typed, validated once
        assert app.answers is sent[0].answers
        await pilot.press("e")
        await pilot.pause()
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionnaireScreen) and app.screen.step.review)
        form = app.screen
        assert isinstance(form, QuestionnaireScreen)
        assert form.state.raw["precision.context_tokens"] == "32768"
        assert form.answers == app.answers
