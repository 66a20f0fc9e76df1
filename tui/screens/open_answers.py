"""Open saved answers: a path to an answers TOML file or a JSON report; problems are shown in the dialog.

In served mode (`gpuadvisor serve`, tui/served.py) the visitor's browser is not a shell on the server: the answers
are pasted into the dialog, or named inside the one folder the operator shared (`--data-dir`), and completion lists
only that folder.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Button, Input, Static, TextArea

from gpuadvisor.tui import served as served_mode
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.screens.base import AdvisorScreenMixin


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


class SharedFolderSuggester(Suggester):
    """Served mode: completes a name inside the operator's shared folder, and nothing outside it."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.data_dir = data_dir

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        names = served_mode.completions(self.data_dir, value)
        return names[0] if names else None


class OpenAnswersScreen(AdvisorScreenMixin, ModalScreen[None]):
    CSS_PATH = STYLES / "modals.tcss"

    BINDINGS = [Binding("escape", "dismiss", "Cancel", id="open.cancel", tooltip="Close without opening"),
                Binding("ctrl+o", "open", "Open", id="open.open", tooltip="Open what was typed or pasted")]
    HELP = """\
## Open answers

Type the path of an answers file (TOML) or a gpuadvisor JSON report (→ completes), then **Enter** or Open.
"""

    def __init__(self) -> None:
        super().__init__()
        self.served = served_mode.current()

    def compose(self) -> ComposeResult:
        with Vertical(id="open-dialog", classes="dialog"):
            yield Static("Open saved answers", classes="dialog-title")
            if self.served is None:
                yield Static("An answers file (.toml) or a gpuadvisor JSON report (.json):", classes="dialog-text")
                yield Input(placeholder="path, e.g. ~/plans/serve-70b.toml (→ completes)", id="open-path",
                            suggester=PathSuggester())
            else:
                shared = self.served.data_dir
                if shared is not None:
                    yield Static("A file in the shared folder (→ completes):", classes="dialog-text")
                    yield Input(placeholder="name, e.g. serve-70b.toml", id="open-path",
                                suggester=SharedFolderSuggester(shared))
                yield Static(("Or paste" if shared is not None else "Paste")
                             + " an answers file (TOML) or a JSON report here:", classes="dialog-text")
                yield TextArea(id="open-paste", soft_wrap=False, show_line_numbers=False)
            yield Static("", id="open-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Open", id="open", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        first = self.query("#open-path") or self.query("#open-paste")
        first.first().focus()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss()

    @on(Input.Submitted, "#open-path")
    @on(Button.Pressed, "#open")
    def action_open(self) -> None:
        error = self.query_one("#open-error", Static)
        typed = self.query_one("#open-path", Input).value.strip() if self.query("#open-path") else ""
        if self.served is None:
            if not typed:
                error.update("✖ give the path of an answers file")
                return
            problem = self.advisor.open_answers(Path(typed).expanduser())
        else:
            pasted = self.query_one("#open-paste", TextArea).text
            if typed and pasted.strip():
                error.update("✖ give a name or paste answers, not both")
                return
            problem = self.advisor.open_shared(typed) if typed else self.advisor.open_pasted(pasted)
        if problem:
            error.update(f"✖ {problem}")


class ServedOpenAnswersScreen(OpenAnswersScreen):
    """The Open dialog of a visitor's session (`gpuadvisor serve`): paste, or a name in the shared folder."""

    HELP = """\
## Open answers

Paste an answers file (TOML) or a gpuadvisor JSON report into the box (your browser's paste), or type the name of
one in the folder the server shares, then **Ctrl+O** or Open. Nothing else on the server can be opened.
"""


def open_answers_screen() -> OpenAnswersScreen:
    """The Open dialog for this process: the browser's in served mode, else the terminal's."""
    return ServedOpenAnswersScreen() if served_mode.current() is not None else OpenAnswersScreen()
