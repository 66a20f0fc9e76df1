"""The questionnaire offers the GPUs detected on this machine (stub nvidia-smi on PATH) as the current-GPU default."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.current_gpu import detect_for
from gpuadvisor.tui.app import GpuAdvisorApp
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.widgets.question_field import QuestionField

from .conftest import make_app, settle, wait_until


@pytest.fixture
def two_3090s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH holds only a stub nvidia-smi printing what the real one prints for two RTX 3090s."""
    folder = tmp_path / "bin"
    folder.mkdir()
    data = folder / "out.csv"
    data.write_text("NVIDIA GeForce RTX 3090, 24576\nNVIDIA GeForce RTX 3090, 24576\n", encoding="utf-8")
    tool = folder / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\nexec /bin/cat '{data}'\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(folder))


def field(pilot: Pilot[None], key: str) -> QuestionField:
    screen = pilot.app.screen
    assert isinstance(screen, QuestionnaireScreen)
    return next(f for f in screen.query(QuestionField) if f.question.key == key)


async def to_deployment(pilot: Pilot[None]) -> QuestionnaireScreen:
    await settle(pilot)
    await pilot.press("n")  # welcome → questionnaire
    await pilot.pause()
    await pilot.press("ctrl+n", *"7", "ctrl+n", "ctrl+n", "ctrl+n", "ctrl+n")  # workload, model, …, budget
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, QuestionnaireScreen) and screen.step_id == "deployment"
    return screen


async def test_the_detected_gpus_are_the_current_gpu_default(catalog: Catalog, two_3090s: None) -> None:
    app = make_app(catalog, detect_fn=detect_for)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await to_deployment(pilot)
        await wait_until(pilot, lambda: app.detection is not None)
        await pilot.pause()
        gpu = field(pilot, "current.gpu")
        assert gpu.query_one(Input).placeholder == "detected: nvidia-rtx-3090"
        assert field(pilot, "current.gpu_count").query_one(Input).placeholder == "detected: 2"
        why = str(gpu.query_one(".question-why", Static).render())
        assert "detected by nvidia-smi: 2 × NVIDIA GeForce RTX 3090, 24 GB each" in why
        answers, errors = screen.state.validate()
        assert errors == {} and answers is not None
        assert (answers.current.gpu, answers.current.gpu_count) == ("nvidia-rtx-3090", 2)
        # typing "none" means no GPU of one's own: the detected default no longer applies
        gpu.focus_control()
        await pilot.press(*"none")
        answers, _ = screen.state.validate()
        assert answers is not None and answers.current.gpu is None and answers.current.gpu_count is None


async def test_without_gpu_tools_the_question_says_none_was_detected(catalog: Catalog, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    app = make_app(catalog, detect_fn=detect_for)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await to_deployment(pilot)
        await wait_until(pilot, lambda: app.detection is not None)
        await pilot.pause()
        assert field(pilot, "current.gpu").query_one(Input).placeholder == "none detected (empty: none)"
        answers, _ = screen.state.validate()
        assert answers is not None and answers.current.gpu is None and answers.current.detection is None


async def test_answers_loaded_from_a_file_get_no_detected_gpu(catalog: Catalog, two_3090s: None) -> None:
    from gpuadvisor.rules.inputs.answers import Answers

    app = make_app(catalog, Answers.model_validate({"model": {"name": "llama-3.1-8b"}}), detect_fn=detect_for)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.detection is not None)
        await pilot.pause()
        assert isinstance(app, GpuAdvisorApp)
        answers, _ = app.state.validate()
        assert answers is not None and answers.current.gpu is None
