"""Welcome screen, recent consultations, opening saved answers, and the `launch` entry point's errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui import settings
from gpuadvisor.tui.launch import launch
from gpuadvisor.tui.screens.open_answers import OpenAnswersScreen
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.welcome import WelcomeScreen

from .conftest import make_app, settle, wait_until


async def test_welcome_starts_a_consultation(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert str(app.screen.query_one("#kb-status", Static).render()) == "✔ Knowledge base ready."
        assert str(app.screen.query_one("#recent-empty", Static).render()).startswith("None yet")
        await pilot.press("n")
        assert isinstance(app.screen, QuestionnaireScreen)
        assert app.screen.step_id == "workload"


async def test_finished_consultation_is_listed_and_reopens(catalog: Catalog) -> None:
    given = {"workload": "inference", "model": {"name": "qwen2.5-7b"}}
    app = make_app(catalog, parse_answers(given))
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not None)
    recent = settings.load_recent()
    assert [r.title for r in recent] == ["inference · qwen2.5-7b · bf16"]
    second = make_app(catalog)
    async with second.run_test() as pilot:
        await settle(pilot)
        listed = second.screen.query_one("#recent", OptionList)
        assert listed.option_count == 1
        listed.focus()
        listed.highlighted = 0
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: second.result is not None)
        assert isinstance(second.screen, ResultsScreen)
        assert second.answers is not None and second.answers.given() == given


async def test_open_answers_dialog_names_the_problem(catalog: Catalog, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[precision]\ncontext_tokens = "long"\n', encoding="utf-8")
    good = tmp_path / "good.toml"
    good.write_text(parse_answers({"model": {"params_b": 13.0}}).to_toml(), encoding="utf-8")
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        assert isinstance(app.screen, OpenAnswersScreen)
        await pilot.press(*str(bad), "enter")
        error = str(app.screen.query_one("#open-error", Static).render())
        assert error == f"✖ {bad}:2: precision.context_tokens: Input should be a valid integer, unable to parse " \
                        "string as an integer"  # the line of the key (issue 20)
        app.screen.query_one("#open-path", Input).value = str(good)
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not None)
        assert isinstance(app.screen, ResultsScreen)
        assert app.answers is not None and app.answers.model.params_b == 13.0


def test_settings_ignore_a_damaged_state_file() -> None:
    state = settings.data_dir() / "tui.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("{not json", encoding="utf-8")
    assert settings.load_recent() == []
    assert settings.load_theme() is None
    settings.save_theme("textual-light")  # and it is repaired on the next write
    assert settings.load_theme() == "textual-light"


def test_launch_refuses_a_bad_answers_file_before_starting(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such answers file"):
        launch(str(tmp_path / "missing.toml"), None)


def test_launch_refuses_an_unknown_theme(tmp_path: Path) -> None:
    good = tmp_path / "a.toml"
    good.write_text("workload = \"inference\"\n", encoding="utf-8")
    with pytest.raises(InputError, match="--theme: unknown theme 'neon'; choose one of .*textual-light"):
        launch(str(good), "neon")


async def test_recent_lists_one_entry_per_consultation_with_its_what_ifs_under_it(catalog: Catalog) -> None:
    """Issue 42: a consultation, two what-ifs and an edit of it were four entries; now one, the rest under it, each
    saying what differs, and each reopens."""
    base = settings.record_consultation('[model]\nname = "qwen2.5-7b"\n', "inference · qwen2.5-7b · bf16")
    for toml, title in (('[model]\nname = "qwen2.5-7b"\n[precision]\nweights = "int4"\n',
                         "inference · qwen2.5-7b · int4 · what-if: precision.weights bf16 → int4"),
                        ('[model]\nname = "qwen2.5-7b"\n[precision]\ncontext_tokens = 32768\n',
                         "inference · qwen2.5-7b · bf16 · context 32,768"),
                        ('[model]\nname = "qwen2.5-7b"\n[precision]\nweights = "int4"\n',  # tried again: moved up
                         "inference · qwen2.5-7b · int4 · what-if: precision.weights bf16 → int4")):
        settings.record_consultation(toml, title, under=base)
    other = settings.record_consultation('[model]\nname = "gpt2"\n', "inference · gpt2 · bf16")
    recent = settings.load_recent()
    assert [r.path for r in recent] == [str(other), str(base)]
    assert [w.title for w in recent[1].what_ifs] == [
        "inference · qwen2.5-7b · int4 · what-if: precision.weights bf16 → int4",
        "inference · qwen2.5-7b · bf16 · context 32,768"]
    app = make_app(catalog)
    async with app.run_test() as pilot:
        await settle(pilot)
        listed = app.screen.query_one("#recent", OptionList)
        prompts = [str(listed.get_option_at_index(i).prompt).split("\n")[0] for i in range(listed.option_count)]
        assert prompts == ["inference · gpt2 · bf16", "inference · qwen2.5-7b · bf16",
                           "  ↳ what-if: precision.weights bf16 → int4", "  ↳ edited: context 32,768"]
        listed.focus()
        listed.highlighted = 2
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not None)
        assert app.answers is not None and app.answers.precision.weights == "int4"
