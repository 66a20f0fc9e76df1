"""Open saved answers: a path to an answers TOML file or a JSON report; problems are shown in the dialog."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Button, Input, Static

from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.screens.base import AdvisorScreenMixin

if TYPE_CHECKING:
    pass


class PathSuggester(Suggester):
    """Completes a path with the first matching folder, answers file (.toml) or report (.json); → accepts."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        typed = Path(value).expanduser()
        folder, stem = (typed, "") if value.endswith(("/", "\\")) else (typed.parent, typed.name)
        try:
            names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()
                           if p.name.startswith(stem) and not p.name.startswith(".")
                           and (p.is_dir() or p.suffix.lower() in {".toml", ".json"}))
        except (OSError, ValueError):  # unreadable, over-long, or a NUL byte typed or pasted
            return None
        return value + names[0][len(stem):] if names else None


class OpenAnswersScreen(AdvisorScreenMixin, ModalScreen[None]):
    CSS_PATH = STYLES / "modals.tcss"

    BINDINGS = [Binding("escape", "dismiss", "Cancel", id="open.cancel", tooltip="Close without opening")]


    def compose(self) -> ComposeResult:
        with Vertical(id="open-dialog", classes="dialog"):
            yield Static("Open saved answers", classes="dialog-title")
            yield Static("An answers file (.toml) or a gpuadvisor JSON report (.json):", classes="dialog-text")
            yield Input(placeholder="path, e.g. ~/plans/serve-70b.toml (→ completes)", id="open-path",
                        suggester=PathSuggester())
            yield Static("", id="open-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Open", id="open", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#open-path", Input).focus()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss()

    @on(Input.Submitted, "#open-path")
    @on(Button.Pressed, "#open")
    def _open(self) -> None:
        text = self.query_one("#open-path", Input).value.strip()
        error = self.query_one("#open-error", Static)
        if not text:
            error.update("✖ give the path of an answers file")
            return
        problem = self.advisor.open_answers(Path(text).expanduser())
        if problem:
            error.update(f"✖ {problem}")
