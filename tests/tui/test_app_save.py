"""The save dialog writes the report or answers file it says, asks before overwriting, and names write errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import load_answers, parse_answers
from gpuadvisor.tui import settings
from gpuadvisor.tui.report import render
from gpuadvisor.tui.screens.confirm import ConfirmScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.save import SaveScreen

from .conftest import TODAY, make_app, open_save, settle, wait_until, what_if

GIVEN: dict[str, Any] = {"workload": "inference", "model": {"name": "llama-3.1-8b"}, "budget": {"hourly_usd": 20.0}}


async def type_path(pilot: Pilot[None], screen: SaveScreen, path: Path) -> None:
    screen.query_one("#save-path", Input).focus()
    await pilot.press("end", "ctrl+u", *str(path))  # ctrl+u: delete to the start of the line


async def test_save_markdown_report(catalog: Catalog, tmp_path: Path) -> None:
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_save(pilot)
        # The default name follows the reports' naming, dated with the app's (fixed) date.
        assert screen.query_one("#save-path", Input).value == "gpuadvisor-inference-llama-3.1-8b-2026-01-15.md"
        target = tmp_path / "plan.md"
        await type_path(pilot, screen, target)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert app.result is not None
        assert target.read_text(encoding="utf-8") == render(app.result, "md", today=TODAY)


async def test_format_choice_changes_the_default_name(catalog: Catalog) -> None:
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_save(pilot)
        await pilot.press("down", "enter")  # HTML
        assert screen.fmt == "html"
        assert screen.query_one("#save-path", Input).value == "gpuadvisor-inference-llama-3.1-8b-2026-01-15.html"


async def test_overwrite_needs_confirmation(catalog: Catalog, tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("old", encoding="utf-8")
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_save(pilot)
        await pilot.press("down", "down", "enter")  # JSON
        await type_path(pilot, screen, target)
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.screen is screen
        assert target.read_text(encoding="utf-8") == "old"
        assert "Not saved" in str(screen.query_one("#save-error", Static).render())
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert app.result is not None
        assert target.read_text(encoding="utf-8") == render(app.result, "json", today=TODAY)


async def test_answers_file_reopens_the_same_consultation(catalog: Catalog, tmp_path: Path) -> None:
    target = tmp_path / "serve.toml"
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_save(pilot)
        await pilot.press("down", "down", "down", "enter")  # answers (TOML)
        await type_path(pilot, screen, target)
        await pilot.press("ctrl+s")
        await pilot.pause()
        first = app.result
    reopened = load_answers(target)
    assert reopened.given() == GIVEN
    assert settings.load_recent()[0].path == str(target.resolve())
    again = make_app(catalog, reopened)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: again.result is not None)
        assert first is not None and again.result is not None
        assert again.result.model_dump() == first.model_dump()


async def test_answers_saved_from_a_what_if_are_listed_under_its_title(catalog: Catalog, tmp_path: Path) -> None:
    # the recent list names a saved answers file as it names the consultation on screen: a what-if's change included
    target = tmp_path / "what-if.toml"
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_save(pilot)
        await pilot.press("escape")
        before = app.result
        await what_if(pilot, {"precision.context_tokens": "32768"})  # the what-if: context 4,096 → 32,768
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not before)
        recorded = settings.load_recent()[0].what_ifs[0].title
        screen = await open_save(pilot)
        await pilot.press("down", "down", "down", "enter")  # answers (TOML)
        await type_path(pilot, screen, target)
        await pilot.press("ctrl+s")
        await pilot.pause()
    saved = settings.load_recent()[0]
    assert saved.path == str(target.resolve())
    assert recorded.endswith(" · context 32,768 · what-if: Context length 4,096 → 32,768 tokens")
    assert saved.title == recorded


async def test_write_error_is_shown_in_the_dialog(catalog: Catalog, tmp_path: Path) -> None:
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_save(pilot)
        missing = tmp_path / "no-such-dir" / "plan.md"
        await type_path(pilot, screen, missing)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen
        error = str(screen.query_one("#save-error", Static).render())
        assert error.startswith(f"✖ {missing}: directory") and "does not exist" in error
        assert not missing.exists()
