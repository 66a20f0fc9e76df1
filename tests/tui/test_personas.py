"""Three people use the app end to end with the keyboard, as issue 29 tried them, and each leaves with a saved report.

- A student fine-tunes Llama 3.1 8B with QLoRA on a few dollars an hour in the cloud, and saves Markdown.
- A startup engineer serves Llama 3.1 70B to 1,000 requests a minute in production, tries a longer context with a
  what-if, and saves HTML.
- An infra lead pretrains a 13B model on premises under a $2M budget and then serves it to 50,000 daily users ("and
  then?"), looks at the serving phase, comes back to the lifecycle and saves the lifecycle's report.

Every answer is typed or chosen in the questionnaire (no answers file), the way a person would.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, RadioSet

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.tui import settings
from gpuadvisor.tui.report import render
from gpuadvisor.tui.screens.and_then import AndThenScreen
from gpuadvisor.tui.screens.lifecycle import LifecycleScreen
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.save import SaveScreen
from gpuadvisor.tui.screens.whatif import WhatIfScreen
from gpuadvisor.tui.widgets.question_field import QuestionField

from .conftest import TODAY, make_app, settle, wait_until, what_if

Entries = dict[str, str]


async def answer_step(pilot: Pilot[None], entries: Entries) -> None:
    """Answer the current step's questions named in `entries` (text typed, a choice picked with the arrow keys and
    Enter), then Next."""
    screen = pilot.app.screen
    assert isinstance(screen, QuestionnaireScreen)
    for key, value in entries.items():
        field = next((f for f in screen.query(QuestionField) if f.question.key == key), None)
        if field is None:
            continue  # asked on another step
        field.focus_control()
        await pilot.pause()
        if field.question.kind == "radio":
            radio = field.query_one(RadioSet)
            values = [c.value for c in field.question.choices]
            delta = values.index(value) - max(radio.pressed_index, 0)
            await pilot.press(*(["down"] * delta if delta > 0 else ["up"] * -delta), "enter")
        else:
            await pilot.press("end", "ctrl+u", *value)
        await pilot.pause()
    await pilot.press("ctrl+n")
    await pilot.pause()


async def questionnaire(pilot: Pilot[None], entries: Entries) -> QuestionnaireScreen:
    """From the welcome screen (n) through every step to the review, answering `entries` where they are asked."""
    await settle(pilot)
    await pilot.press("n")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, QuestionnaireScreen)
    for _ in range(8):
        if screen.step.review:
            assert not screen.errors, screen.errors
            return screen
        step = screen.step_id
        await answer_step(pilot, entries)
        assert screen.step_id != step, f"stuck at {step}: {screen.errors}"
    raise AssertionError("never reached the review")


async def results(pilot: Pilot[None]) -> ResultsScreen:
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen) and pilot.app.screen.result is not None
                     and not pilot.app.screen.query_one("#results-body").loading, tries=1500)
    screen = pilot.app.screen
    assert isinstance(screen, ResultsScreen)
    return screen


async def save(pilot: Pilot[None], path: Path, downs: int = 0) -> SaveScreen:
    """s, the format `downs` below Markdown, the path, Ctrl+S."""
    await pilot.press("s")
    await pilot.pause()
    dialog = pilot.app.screen
    assert isinstance(dialog, SaveScreen)
    if downs:
        await pilot.press(*["down"] * downs, "enter")
    dialog.query_one("#save-path", Input).focus()
    await pilot.press("end", "ctrl+u", *str(path), "ctrl+s")
    await pilot.pause()
    assert path.is_file(), f"{path} not written"
    return dialog


async def test_student_fine_tunes_with_qlora_and_saves_markdown(catalog: Catalog, tmp_path: Path) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await questionnaire(pilot, {
            "workload": "finetune", "finetune.method": "qlora", "model": "llama-3.1-8b",
            "training.tokens_b": "0.05", "training.deadline_days": "2", "budget.hourly_usd": "3",
            "deployment.where": "cloud"})
        answers = review.answers
        assert answers is not None and answers.workload == "finetune" and answers.finetune.method == "qlora"
        assert answers.budget.hourly_usd == 3 and answers.deployment.where == "cloud"
        await pilot.press("ctrl+n")  # Get results
        screen = await results(pilot)
        result = screen.result
        assert result is not None and result.recommendations
        assert result.answers_effective["precision"]["weights"] == "nf4"  # QLoRA's 4-bit base, as sized
        assert all(r.cost.usd_per_hour is None or r.cost.usd_per_hour <= 3 for r in result.recommendations)
        target = tmp_path / "student.md"
        await save(pilot, target)
        assert isinstance(app.screen, ResultsScreen)
        text = target.read_text(encoding="utf-8")
        assert text == render(result, "md", today=TODAY)
        assert "Llama 3.1 8B" in text and result.recommendations[0].accelerator.name in text
        assert settings.load_recent()[0].title == "finetune · llama-3.1-8b · nf4 · 0.05B tokens · cloud"


async def test_startup_engineer_serves_70b_tries_a_what_if_and_saves_html(catalog: Catalog, tmp_path: Path) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await questionnaire(pilot, {
            "workload": "inference", "stage": "production", "model": "llama-3.1-70b",
            "inference.requests_per_minute": "1000", "budget.monthly_usd": "60000", "deployment.where": "cloud"})
        await pilot.press("ctrl+n")
        screen = await results(pilot)
        first = screen.result
        assert first is not None and first.recommendations
        assert first.profile.required_tokens_per_s  # the demand of 1,000 requests a minute
        assert all(r.instance is not None for r in first.recommendations)  # cloud: rented
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WhatIfScreen)
        await what_if(pilot, {"precision.context_tokens": "16384"})  # context: 16,384 tokens
        await pilot.pause()
        screen = await results(pilot)
        await wait_until(pilot, lambda: screen.result is not first, tries=1500)
        assert screen.what_if == "Context length 4,096 → 16,384 tokens"  # the question and its unit
        assert screen.previous is first and screen.answers is not None
        assert screen.answers.precision.context_tokens == 16384
        assert screen.result is not None and screen.result.answers_effective["precision"]["context_tokens"] == 16384
        target = tmp_path / "startup.html"
        await save(pilot, target, downs=1)
        html = target.read_text(encoding="utf-8")
        assert html.lstrip().lower().startswith("<!doctype html") and "Llama 3.1 70B" in html
        assert html == render(screen.result, "html", today=TODAY)


async def test_infra_lead_plans_pretraining_then_serving_and_saves_the_lifecycle(catalog: Catalog,
                                                                                tmp_path: Path) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        first = await questionnaire(pilot, {
            "workload": "training", "stage": "production", "model": "13", "training.tokens_b": "260",
            "training.deadline_days": "30", "budget.capex_usd": "2000000", "deployment.where": "on_prem"})
        await pilot.press("ctrl+e")  # and then?
        await pilot.pause()
        assert isinstance(app.screen, AndThenScreen)
        await pilot.press("s")  # serve it
        await pilot.pause()
        second = app.screen
        assert isinstance(second, QuestionnaireScreen) and second is not first and second.phase == 2
        for _ in range(8):
            if second.step.review:
                break
            await answer_step(pilot, {"inference.daily_active_users": "50000"})
        assert second.step.review and not second.errors
        await pilot.press("ctrl+n")  # Get results: both phases as one plan
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, LifecycleScreen), tries=1500)
        life = app.screen
        assert isinstance(life, LifecycleScreen) and life.lifecycle is not None
        assert [p.answers.workload for p in life.lifecycle.phases] == ["training", "inference"]
        assert life.lifecycle.phases[1].answers.model.params_b == 13  # the model phase 1 trains
        assert life.lifecycle.data["budget"] == {"capex_usd": 2_000_000}
        assert life.lifecycle.phases[1].answers.deployment.where == "on_prem"  # shared with the first phase
        phase = life.result.phases[1]
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen) and app.screen.result is phase
        assert all(r.purchase for r in phase.recommendations)  # on premises: bought
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is life
        target = tmp_path / "lifecycle.md"
        await save(pilot, target)
        text = target.read_text(encoding="utf-8")
        assert text == render(life.result, "md", today=TODAY)
        assert "Timeline" in text and "13B" in text
        assert settings.load_recent()[0].title.startswith("lifecycle · training → inference")
