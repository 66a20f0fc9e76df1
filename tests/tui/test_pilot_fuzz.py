"""Issue 20: no field content can crash the TUI. Random keys and long pastes (escape sequences, markup brackets, a
300-byte path, NUL bytes, 20,000 characters) go into every question of every workload's questionnaire; the app keeps
running, shows the questionnaire, and the draft on disk holds what was typed, ready to be offered back."""

from __future__ import annotations

import random
from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.draft import MAX_ENTRY_CHARS, load_draft, save_draft
from gpuadvisor.tui.questionnaire.answers_state import AnswerState
from gpuadvisor.tui.questionnaire.questions import applicable_steps
from gpuadvisor.tui.screens.detail import DetailScreen
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.welcome import WelcomeScreen
from gpuadvisor.tui.widgets.question_field import QuestionField

from .conftest import make_app, settle, wait_until

KEYS = [*"abcxyz019.,-_/[]{}()=:;'\"\\%$#@!?~", "space", "backspace", "delete", "left", "right", "home", "end",
        "up", "down", "tab", "shift+tab"]
"""Everything but Enter, Escape and the Ctrl shortcuts (those leave the step; the step's own tests cover them)."""
PASTES = [
    "\x1b]52;c;ZWNobyBoaQ==\x07" * 50,
    "[bold red]not markup[/] [/nope] [link=x]" * 20,
    "/tmp/" + "a" * 300 + "/config.json",
    "a" * 300,
    "nul\x00byte\x00" * 10,
    "é🙂\u202e\u200b" * 500,
    "9" * 400,
    "x" * 20_000,
]
WORKLOADS = [{"workload": "inference"}, {"workload": "training"},
             {"workload": "finetune", "finetune.method": "lora", "deployment.where": "either"}]


async def _fuzz_field(pilot: Pilot[None], field: QuestionField, rng: random.Random) -> None:
    field.focus_control()
    await pilot.pause()
    await pilot.press(*rng.sample(KEYS, 6))
    focused = pilot.app.focused
    if focused is not None:
        focused.post_message(events.Paste(rng.choice(PASTES)))
    await pilot.pause()
    await pilot.press(*rng.sample(KEYS, 3))
    await pilot.pause()


async def test_random_keys_and_long_pastes_into_every_question(catalog: Catalog) -> None:
    rng = random.Random(20)
    app = make_app(catalog)
    asked: set[str] = set()
    async with app.run_test(size=(110, 40)) as pilot:
        await settle(pilot)
        for raw in WORKLOADS:
            for step in applicable_steps(dict(raw)):
                if step.review or all(q.key in asked for q in step.visible(dict(raw))):
                    continue
                state = AnswerState(raw=dict(raw))
                await app.push_screen(QuestionnaireScreen(state, start=step.id))
                await pilot.pause()
                for field in list(app.screen.query(QuestionField)):
                    if not field.is_attached or field.question.key in asked:
                        continue  # skip logic removed it after an earlier entry, or another workload fuzzed it
                    asked.add(field.question.key)
                    await _fuzz_field(pilot, field, rng)
                    assert isinstance(app.screen, QuestionnaireScreen), f"left the step at {field.question.key}"
                app.pop_screen()
                await pilot.pause()
        assert app.is_running
        draft = load_draft()
    every = {q.key for raw in WORKLOADS for s in applicable_steps(dict(raw)) for q in s.visible(dict(raw))}
    assert every - asked == set()  # every question was fuzzed
    assert draft is not None and all(len(v) <= MAX_ENTRY_CHARS for v in draft.values() if isinstance(v, str))


async def test_the_draft_is_offered_back_after_a_crash(catalog: Catalog) -> None:
    first = make_app(catalog)
    async with first.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("ctrl+n", *"llama-3.1-8b")
        await pilot.pause()
        # the process dies here: nothing is saved on exit, only what the questionnaire wrote as it went
    draft = load_draft()
    assert draft is not None and draft["model"] == "llama-3.1-8b"
    second = make_app(catalog)
    async with second.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(second.screen, WelcomeScreen)
        assert second.screen.query_one("#resume").display
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(second.screen, QuestionnaireScreen) and second.screen.step_id == "review"
        assert second.state.raw["model"] == "llama-3.1-8b"


async def test_no_draft_no_resume_button(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#resume").display


def test_a_foreign_or_damaged_draft_is_ignored() -> None:
    from gpuadvisor.tui.draft import draft_path

    assert save_draft({"model": "gpt2", "bad": object(), "deployment.providers": ["aws", 3]})  # type: ignore[dict-item]
    assert load_draft() == {"model": "gpt2"}  # entries of the wrong shape are not kept
    path = draft_path()
    for text in ("{", '{"format": "other", "version": 1, "raw": {"model": "x"}}', "[" * 10_000, "\x00\xff"):
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        assert load_draft() is None


EVIL_NAME = "GPT [/x] [@click=app.quit]q[/] \\u001b]52;c;aGk=\\u0007"
"""A model name from an overlay that is both Textual markup (a stray closing tag, a click action) and an OSC 52
clipboard write (as TOML escapes)."""


async def test_markup_and_escape_sequences_in_data_are_shown_as_text(tmp_path: Path) -> None:
    overlay = tmp_path / "evil.toml"
    overlay.write_text(f'[[model]]\nid = "gpt2"\nname = "{EVIL_NAME}"\n', encoding="utf-8")
    catalog = load_catalog(user_dir=None, extra_files=[overlay])
    app = make_app(catalog, parse_answers({"model": {"name": "gpt2"}, "workload": "inference"}))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.result is not None)
        screen = app.screen
        asked = str(screen.query_one("#results-asked", Static).render())
        headline = str(screen.query_one("#results-headline", Static).render())
        assert "GPT [/x] [@click=app.quit]q[/] ]52;c;aGk=" in asked  # as text: no tag eaten, no ESC
        assert "\x1b" not in asked + headline
        await pilot.press("enter")  # the detail screen of the first option
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("y")  # its why tree
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is screen
