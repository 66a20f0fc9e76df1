"""A modal with the WHY chain of a warning or a ruled-out option."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from gpuadvisor.rules.consultation.result import WhyStep
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.widgets.why_tree import WhyTree, WhyView


class WhyScreen(ModalScreen[None]):
    CSS_PATH = [STYLES / "modals.tcss", STYLES / "detail.tcss"]

    BINDINGS = [Binding("escape", "dismiss", "Close", id="why.close", tooltip="Back to the results")]
    HELP = """\
## Why

The chain of reasons behind one finding: each line is explained by the lines under it, down to your answers,
the knowledge-base entries and the source documents. **Enter**/**Space** opens a node, **x** expands all,
**z** collapses, **Escape** closes.
"""

    def __init__(self, title: str, why: list[WhyStep]) -> None:
        super().__init__()
        self.heading = title
        self.why = why

    def compose(self) -> ComposeResult:
        with Vertical(id="why-dialog", classes="dialog"):
            yield Static(self.heading, classes="dialog-title", markup=False)  # an option's title: data
            yield WhyView("Why?", self.why, tree_id="finding-why")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(WhyTree).focus()
