""""And then?" — asked after a training or fine-tuning workload: what the trained model does next (issue 21).

Serving it, or fine-tuning it, becomes the next phase of one lifecycle consultation ([[phase]] answers): the
questionnaire opens again for that phase with the model and the shared answers (stage, budget, deployment,
constraints) filled in. `dismiss("inference" | "finetune" | None)`.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpuadvisor.tui.screens import STYLES


class AndThenScreen(ModalScreen[str | None]):
    """The next phase of the trained model: serve it, fine-tune it, or nothing more."""

    CSS_PATH = STYLES / "modals.tcss"

    BINDINGS = [
        Binding("s", "answer('inference')", "Serve it", id="and-then.serve", tooltip="Plan serving the trained model"),
        Binding("f", "answer('finetune')", "Fine-tune it", id="and-then.finetune",
                tooltip="Plan fine-tuning the trained model"),
        Binding("escape", "answer(None)", "Cancel", id="and-then.cancel", tooltip="Back to the review"),
    ]

    def __init__(self, phase: int, what: str) -> None:
        super().__init__()
        self.phase = phase
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="and-then-dialog", classes="dialog"):
            yield Static("And then?", classes="dialog-title")
            yield Static(f"Phase {self.phase} {self.what}. What does the model it trains do next? The next phase is "
                         "planned with it as one consultation: one budget, and one fleet reused across the phases "
                         "or a split (buy for training, rent for serving).", id="and-then-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Serve it (s)", id="inference", variant="primary")
                yield Button("Fine-tune it (f)", id="finetune")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#inference", Button).focus()

    def action_answer(self, value: str | None) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id if event.button.id in ("inference", "finetune") else None)
