"""Save dialog: a report (Markdown, HTML, JSON) or the answers (TOML), to a path; an existing file needs a yes.

Reports come from `gpuadvisor.tui.report` (`render` + atomic `save_report`), the same writers the CLI uses, so a file
saved here is identical to `gpuadvisor recommend --format …`. Answers files reopen with `gpuadvisor --answers FILE`.
In served mode (`gpuadvisor serve`, tui/served.py) nothing is written on the server: the text goes to the visitor's
browser as a download, under a file name the visitor may change.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioSet, Static

from gpuadvisor.tui import served as served_mode
from gpuadvisor.tui import settings
from gpuadvisor.tui.draft import clear_draft
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.widgets.toggles import ChoiceButton

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers

FORMATS: tuple[tuple[str, str], ...] = (
    ("md", "Markdown report (.md)"),
    ("html", "HTML report (.html)"),
    ("json", "JSON report (.json, reopens with --answers)"),
    ("toml", "Answers file (.toml, reopens with --answers)"),
)


def default_name(result: RecommendResult, fmt: str, today: date | None) -> str:
    from gpuadvisor.tui.report import default_filename

    if fmt == "toml":
        return default_filename(result, "json", today).removesuffix(".json") + "-answers.toml"
    return default_filename(result, fmt, today)


class SaveScreen(ModalScreen[Path | None]):
    """Choose a format and a path; dismisses with the path written (None when cancelled)."""

    CSS_PATH = STYLES / "modals.tcss"


    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="save.cancel", tooltip="Close without saving"),
        Binding("ctrl+s", "save", "Save", id="save.save", tooltip="Write the file"),
    ]
    HELP = """\
## Save

Pick a format with the arrow keys and Enter, edit the path (relative paths are in the current directory), then
**Ctrl+S** or the Save button. An existing file is only replaced after you confirm. **Escape** cancels.
"""

    def __init__(self, result: RecommendResult, answers: Answers | LifecycleAnswers, today: date | None = None,
                 phase: int | None = None, what_if: str | None = None) -> None:
        super().__init__()
        self.what_if = what_if
        """The what-if change the result answers, if any: its saved answers are listed under the what-if's title."""
        self.phase = phase
        """The lifecycle phase the user was looking at, if any: the dialog says the whole lifecycle is saved."""
        self.served = served_mode.current()
        self.result = result
        self.answers = answers
        self.today = today
        self.fmt = "md"
        self._auto_name = default_name(result, self.fmt, today)

    def compose(self) -> ComposeResult:
        with Vertical(id="save-dialog", classes="dialog"):
            yield Static("Save", classes="dialog-title")
            scope = self.scope()
            if scope:
                yield Static(scope, id="save-scope", classes="dialog-text")
            yield RadioSet(*(ChoiceButton(label, value=i == 0) for i, (_, label) in enumerate(FORMATS)),
                           id="save-format")
            served = self.served is not None
            yield Static("File name (sent to your browser as a download):" if served else "Path:",
                         classes="dialog-text")
            yield Input(self._auto_name, id="save-path", select_on_focus=False)
            yield Static("", id="save-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Download (ctrl+s)" if served else "Save (ctrl+s)", id="save", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def scope(self) -> str:
        """What is saved, when it is more than the screen shows: a phase is one part of its lifecycle."""
        phases = len(self.result.phases)
        if not phases:
            return ""
        if self.phase is not None:
            return (f"Phase {self.phase} is one of the lifecycle's {phases} phases: the whole lifecycle is saved "
                    "(its report covers every phase, its answers reopen them all).")
        return f"The whole lifecycle is saved: its {phases} phases, in one report or one answers file."

    def on_mount(self) -> None:
        self.query_one("#save-format", RadioSet).focus()

    @on(RadioSet.Changed, "#save-format")
    def _format(self, event: RadioSet.Changed) -> None:
        self.fmt = FORMATS[event.index][0]
        path_input = self.query_one("#save-path", Input)
        new_name = default_name(self.result, self.fmt, self.today)
        current = Path(path_input.value)
        if current.name == self._auto_name:  # only follow the format while the user has not typed a name
            path_input.value = str(current.with_name(new_name)) if current.parent != Path(".") else new_name
            path_input.cursor_position = len(path_input.value)
        self._auto_name = new_name

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted, "#save-path")
    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        self._save(force=False)

    def _text(self) -> str:
        if self.fmt == "toml":
            return self.answers.to_toml()
        from gpuadvisor.tui.report import render

        return render(self.result, self.fmt, today=self.today)

    def _save(self, force: bool) -> None:
        from gpuadvisor.knowledge.errors import AdvisorError
        from gpuadvisor.tui.report import ReportExistsError, save_report

        error = self.query_one("#save-error", Static)
        text = self.query_one("#save-path", Input).value.strip()
        if self.served is not None:
            self._deliver(text)
            return
        if not text:
            error.update("✖ give a file name")
            return
        path = Path(text).expanduser()
        # os.path never raises: a name over 255 bytes or with a NUL byte is then refused by save_report, in words
        if os.path.exists(path) and not os.path.isdir(path) and not force:
            self._confirm(path)
            return
        try:
            written = save_report(self._text(), path, force=force)
        except ReportExistsError:  # appeared since we looked
            self._confirm(path)
            return
        except AdvisorError as exc:
            error.update(f"✖ {exc}")
            return
        if self.fmt in {"toml", "json"}:
            from gpuadvisor.tui.titles import consultation_title

            clear_draft()  # the answers are in a file now
            try:
                settings.remember(written, consultation_title(self.answers, self.result, self.what_if))
            except OSError:
                pass  # the file is saved; only the recent list could not be updated
        self.app.notify(f"Saved {written.resolve()}", title="Save", markup=False)
        self.dismiss(written)

    def _deliver(self, typed: str) -> None:
        """Served mode: the report or answers to the visitor's browser, never to the server's disk."""
        from gpuadvisor.knowledge.errors import AdvisorError

        name = served_mode.download_name(typed, self._auto_name, self.fmt)
        try:
            text = self._text()
        except AdvisorError as exc:
            self.query_one("#save-error", Static).update(f"✖ {exc}")
            return
        problem = served_mode.deliver(self.app, text, name, self.fmt)
        if problem is not None:
            self.query_one("#save-error", Static).update(f"✖ {problem}")
            return
        if self.fmt in {"toml", "json"}:
            clear_draft()  # the session's own draft: the answers are with the visitor now
        self.app.notify(f"Sent {name} to your browser (see its downloads)", title="Download", markup=False)
        self.dismiss(None)

    def _confirm(self, path: Path) -> None:
        from gpuadvisor.tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self._save(force=True)
            else:
                self.query_one("#save-error", Static).update("Not saved: choose another name, or confirm overwrite.")

        self.app.push_screen(ConfirmScreen(f"{path} already exists.\nOverwrite it?", yes="Overwrite"), answered)


class ServedSaveScreen(SaveScreen):
    """The Save dialog of a visitor's session (`gpuadvisor serve`): the same dialog, sending a download."""

    HELP = """\
## Save

Pick a format with the arrow keys and Enter, edit the file name if you like, then **Ctrl+S** or the Download
button: the file goes to your browser as a download (nothing is written on the server). **Escape** cancels.
"""


def save_screen(result: RecommendResult, answers: Answers | LifecycleAnswers, today: date | None = None,
                phase: int | None = None, what_if: str | None = None) -> SaveScreen:
    """The Save dialog for this process: the browser's in served mode, else the terminal's."""
    cls = ServedSaveScreen if served_mode.current() is not None else SaveScreen
    return cls(result, answers, today, phase, what_if)
