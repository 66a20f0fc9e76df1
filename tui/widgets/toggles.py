"""Radio buttons and checkboxes whose state reads without colour: `●` / blank and `✔` / blank.

Textual draws the same glyph for on and off and tells them apart by colour only; these subclasses change the glyph.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Checkbox, RadioButton


class ChoiceButton(RadioButton):
    """A radio button marked `●` when chosen, whose label wraps by words where it does not fit (at 80 columns
    'Automatic (today if the run could be rented)' read 'Automatic (today if the run coul…': issue 42)."""

    DEFAULT_CSS = """
    ChoiceButton {
        height: auto;
        text-wrap: wrap;
    }
    """

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(self.render().wrap(width)))

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = "●" if self.value else " "
        return super()._button


class Tick(Checkbox):
    """A checkbox marked `✔` when on."""

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = "✔" if self.value else " "
        return super()._button


class MultiChoice(Vertical, can_focus=False):
    """Several options that can each be on or off (a column of `Tick`s); posts `Changed` with the chosen values."""

    @dataclass
    class Changed(Message):
        multi: MultiChoice
        values: list[str]

    def __init__(self, choices: list[tuple[str, str]], chosen: list[str], *, id: str | None = None,  # noqa: A002
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._choices = choices
        self._chosen = set(chosen)

    def compose(self) -> ComposeResult:
        for value, label in self._choices:
            yield Tick(label, value=value in self._chosen, name=value, compact=True)

    @property
    def values(self) -> list[str]:
        return [str(box.name) for box in self.query(Tick) if box.value]

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self, self.values))

    def focus(self, scroll_visible: bool = True) -> MultiChoice:
        self.query(Tick).first().focus(scroll_visible)
        return self
