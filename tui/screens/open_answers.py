"""Open saved answers: a path to an answers TOML file or a JSON report; problems are shown in the dialog.

In served mode (`gpuadvisor serve`, tui/served.py) the visitor's browser is not a shell on the server: the answers
are pasted into the dialog, or named inside the one folder the operator shared (`--data-dir`), and completion lists
only that folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Button, Input, Static, TextArea

from gpuadvisor.tui import served as served_mode
from gpuadvisor.tui.messages import AnswersLoaded
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.state.advisor_state import AdvisorScreenMixin

if TYPE_CHECKING:
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers


# --- reading and validating, once, at the edge (AdvisorError names the file, field and line) ---------------------
def read_path(path: Path) -> Answers | LifecycleAnswers:
    """An answers file (TOML), a JSON report or a lifecycle file, validated; refused in served mode when it names a
    path on the server."""
    from gpuadvisor.rules.lifecycle.answers import load_any

    return _allowed(load_any(path))


def read_shared(name: str) -> Answers | LifecycleAnswers:
    """Served mode: an answers file by its name in the operator's shared folder (`--data-dir`), confined to it."""
    from gpuadvisor.knowledge.errors import InputError

    served = served_mode.current()
    if served is None or served.data_dir is None:
        raise InputError("no shared folder: paste the answers instead")
    return read_path(served_mode.confined(served.data_dir, name))


def read_pasted(text: str) -> Answers | LifecycleAnswers:
    """Answers pasted as text (TOML, or a JSON report), validated."""
    from gpuadvisor.knowledge.paths import user_data_dir

    return _allowed(served_mode.parse_pasted(text, user_data_dir() / "scratch"))


def _allowed(loaded: Answers | LifecycleAnswers) -> Answers | LifecycleAnswers:
    from gpuadvisor.knowledge.errors import InputError

    if served_mode.current() is not None and (refused := served_mode.refusal(loaded)) is not None:
        raise InputError(refused)
    return loaded


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
        """Read and validate the answers here (problems stay in the dialog); the app gets them typed."""
        from gpuadvisor.knowledge.errors import AdvisorError

        error = self.query_one("#open-error", Static)
        typed = self.query_one("#open-path", Input).value.strip() if self.query("#open-path") else ""
        try:
            if self.served is None:
                if not typed:
                    error.update("✖ give the path of an answers file")
                    return
                loaded = read_path(Path(typed).expanduser())
            else:
                pasted = self.query_one("#open-paste", TextArea).text
                if typed and pasted.strip():
                    error.update("✖ give a name or paste answers, not both")
                    return
                loaded = read_shared(typed) if typed else read_pasted(pasted)
        except AdvisorError as exc:
            error.update(f"✖ {exc}")
            return
        self.app.post_message(AnswersLoaded(loaded))


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
