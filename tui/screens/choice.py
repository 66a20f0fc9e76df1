"""A question with a few named answers, as a modal: `dismiss(choice id)`, None on Escape.

For the questions navigation asks so that no work is lost: leaving the questionnaire from its first step (keep the
answers as a draft, or discard them), or starting a new consultation while a draft waits (resume it, or start blank).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpuadvisor.tui.screens import STYLES


@dataclass(frozen=True)
class Choice:
    id: str
    label: str
    key: str
    """The key that answers it (shown in the button: "Resume (u)")."""
    primary: bool = False


class ChoiceScreen(ModalScreen[str | None]):
    CSS_PATH = STYLES / "modals.tcss"

    BINDINGS = [Binding("escape", "choose(None)", "Cancel", id="choice.cancel", tooltip="Back where you were")]

    def __init__(self, title: str, text: str, choices: Sequence[Choice], *, dialog_id: str = "choice-dialog") -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.choices = tuple(choices)
        self.dialog_id = dialog_id

    def compose(self) -> ComposeResult:
        with Vertical(id=self.dialog_id, classes="dialog"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield Static(self.text, classes="choice-text", markup=False)  # answers are data: text, never markup
            with Horizontal(classes="dialog-buttons"):
                for c in self.choices:
                    yield Button(f"{c.label} ({c.key})", id=f"choice-{c.id}",
                                 variant="primary" if c.primary else "default", compact=True)
                yield Button("Cancel (Esc)", id="choice-cancel", compact=True)

    def on_mount(self) -> None:
        first = next((c for c in self.choices if c.primary), self.choices[0])
        self.query_one(f"#choice-{first.id}", Button).focus()

    def action_choose(self, choice: str | None) -> None:
        self.dismiss(choice)

    def on_key(self, event: events.Key) -> None:
        """A choice's key answers it (the keys are the dialog's own: they differ per question)."""
        chosen = next((c for c in self.choices if c.key == event.key), None)
        if chosen is not None:
            event.stop()
            self.dismiss(chosen.id)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        ident = (event.button.id or "").removeprefix("choice-")
        self.dismiss(ident if any(c.id == ident for c in self.choices) else None)
