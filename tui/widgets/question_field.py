"""One question on screen: label, the control its kind needs, the "why this matters" line and the inline error.

The field is driven by a `Question` spec and posts `QuestionField.Changed` with the raw entry; the screen validates
and sets `error` back ("attributes down, messages up"). Model questions also show what is known about the model
(parameters, layers, KV heads) and a list of knowledge-base matches to pick from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, OptionList, RadioSet, Select, Static
from textual.widgets.option_list import Option

from gpuadvisor.tui.questionnaire.answers_state import default_text, default_value, empty_entry
from gpuadvisor.tui.questionnaire.questions import Question
from gpuadvisor.tui.widgets.toggles import ChoiceButton, MultiChoice, Tick


def split_example(text: str) -> tuple[str, str]:
    """`e.g. 2 or 500M (empty: 20 per parameter from scratch, 0.1 fine-tuning)` → (`e.g. 2 or 500M`, `20 per
    parameter from scratch, 0.1 fine-tuning`); text without an "(empty: …)" part is kept whole."""
    head, sep, rest = text.partition(" (empty: ")
    return (head, rest.removesuffix(")")) if sep else (text, "")


class QuestionField(Vertical):
    """A question with its control, why-line and error line."""

    BINDINGS = [
        Binding("down", "down", "Down", show=False, id="field.down",
                tooltip="Next field (on the model: into the list of knowledge-base matches)"),
        Binding("up", "app.focus_previous", "Up", show=False, id="field.up", tooltip="Previous field"),
    ]

    error: reactive[str] = reactive("")
    info: reactive[str] = reactive("")

    @dataclass
    class Changed(Message):
        """The user changed the entry of `key` (text as typed for number fields)."""

        field: QuestionField
        key: str
        value: object

    def __init__(self, question: Question, value: object, why: str, raw: Mapping[str, Any] | None = None,
                 native: str | None = None) -> None:
        """`raw`: the entries so far and `native` the model's own weight format, for the defaults they imply."""
        super().__init__(classes=f"question kind-{question.kind}", id=f"field-{question.input_id}")
        self._raw = raw or {}
        self._native = native
        self.question = question
        self._initial_value = value
        self._why = why
        self._last: object = self._shown_value(question, value)

    def _default(self, key: str) -> Any:
        return default_value(key, self._raw, self._native)

    def _shown_value(self, q: Question, value: object) -> object:
        """What the control shows at first: the entry, else the default (choices) or empty text."""
        if value is not None:
            return value
        if q.kind in {"int", "float", "model", "text"}:
            return ""
        if q.kind == "multi":
            return list(self._default(q.key) or [])
        return self._default(q.key)

    # --- composition ----------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        q = self.question
        with Horizontal(classes="question-row"):
            yield Label(q.label, classes="question-label")
            yield self._control()
            if q.unit and q.kind in {"int", "float"}:
                yield Label(q.unit, classes="question-unit")
        yield Static("", classes="question-error", markup=False)  # messages echo the entry: text, never markup
        if q.kind == "model":
            yield Static("", classes="model-info", id="model-info", markup=False)
            yield OptionList(id="model-matches", classes="model-matches", compact=True, markup=False)
        yield Static(self._why_line(), classes="question-why")

    def _why_line(self) -> str:
        """`why: …`, and what an empty entry means when the example says it (the placeholder keeps only the
        example: a long one was cut mid-phrase in the input, "(empty: 20 per parameter from" at 80 columns)."""
        empty = empty_entry(self.question, self._raw, self._native) if self.question.kind != "model" else ""
        return f"why: {self._why}" + (f" Empty: {empty}." if empty else "")

    def _control(self) -> Widget:
        q, v, cid = self.question, self._initial_value, self.question.input_id
        if q.kind == "radio":
            current = v if v is not None else self._default(q.key)
            return RadioSet(*(ChoiceButton(c.label, value=c.value == current) for c in q.choices),
                            id=cid, classes="question-control", compact=True)
        if q.kind == "select":
            current = str(v if v is not None else self._default(q.key))
            options: list[tuple[str, str]] = [(c.label, str(c.value)) for c in q.choices]
            if current not in [value for _, value in options]:
                options.append((current, current))  # a precision from a loaded file that the list does not offer
            return Select(options, value=current, allow_blank=False, id=cid, classes="question-control",
                          compact=True)
        if q.kind == "bool":
            current = v if isinstance(v, bool) else bool(self._default(q.key))
            return Tick("yes", value=current, id=cid, classes="question-control", compact=True)
        if q.kind == "multi":
            chosen = [str(x) for x in v] if isinstance(v, list) else list(self._default(q.key) or [])
            return MultiChoice([(str(c.value), c.label) for c in q.choices], chosen, id=cid,
                               classes="question-control")
        placeholder = q.example if q.kind == "model" else split_example(default_text(q, self._raw, self._native))[0]
        return Input("" if v is None else str(v), placeholder=placeholder, id=cid, classes="question-control",
                     compact=True, select_on_focus=False)

    def on_mount(self) -> None:
        if self.question.kind == "radio":
            self.call_after_refresh(self._highlight_pressed)

    def _highlight_pressed(self) -> None:
        """Start the keyboard highlight on the chosen button (Textual starts it on the first one). Runs after a
        refresh, by when a quick Next may have left the step and removed the buttons: RadioSet.pressed_index then
        raises, so the pressed button is looked for among the buttons still there."""
        radio = self.query_one(RadioSet)
        pressed = radio.pressed_button
        if pressed is not None and pressed in radio.children:
            radio._selected = radio.children.index(pressed)

    # --- state down -----------------------------------------------------------------------------------------------
    def watch_error(self, error: str) -> None:
        widget = self.query_one(".question-error", Static)
        widget.update(f"✖ {error}" if error else "")
        self.set_class(bool(error), "-invalid")

    def watch_info(self, info: str) -> None:
        if self.question.kind == "model":
            widget = self.query_one("#model-info", Static)
            widget.update(info)
            widget.display = bool(info)

    def set_matches(self, matches: list[tuple[str, str]]) -> None:
        """Knowledge-base models matching the entry, as (id, display name); hidden when empty."""
        if self.question.kind != "model":
            return
        option_list = self.query_one("#model-matches", OptionList)
        option_list.clear_options()
        option_list.add_options([Option(f"{name}  ({mid})", id=mid) for mid, name in matches])
        option_list.set_class(bool(matches), "-shown")

    def set_value(self, text: str) -> None:
        """Replace a text entry (used when a match is picked)."""
        control = self.query_one(f"#{self.question.input_id}")
        if isinstance(control, Input):
            control.value = text
            control.cursor_position = len(text)

    def set_hint(self, placeholder: str | None, why: str) -> None:
        """Show another default (placeholder) and why-line, e.g. once the machine's GPUs are detected."""
        control = self.query_one(f"#{self.question.input_id}")
        if placeholder is not None and isinstance(control, Input):
            control.placeholder = placeholder
        self._why = why
        self.query_one(".question-why", Static).update(self._why_line())

    def focus_control(self) -> None:
        self.query_one(f"#{self.question.input_id}").focus()

    # --- messages up ----------------------------------------------------------------------------------------------
    def _changed(self, value: object) -> None:
        if value == self._last:  # e.g. a Select announcing its initial value: not an answer
            return
        self._last = value
        self.post_message(self.Changed(self, self.question.key, value))

    @on(Input.Changed, ".question-control")
    def _input(self, event: Input.Changed) -> None:
        event.stop()
        self._changed(event.value)

    @on(RadioSet.Changed)
    def _radio(self, event: RadioSet.Changed) -> None:
        event.stop()
        self._changed(self.question.choices[event.index].value)

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        event.stop()
        self._changed(event.value)

    @on(Checkbox.Changed)
    def _checkbox(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._changed(event.value)

    @on(MultiChoice.Changed)
    def _multi(self, event: MultiChoice.Changed) -> None:
        event.stop()
        self._changed(event.values)

    @on(OptionList.OptionSelected, "#model-matches")
    def _pick(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.set_value(event.option.id)
            self.focus_control()

    def action_down(self) -> None:
        if self.question.kind == "model":
            option_list = self.query_one("#model-matches", OptionList)
            if option_list.option_count and option_list.display:
                option_list.highlighted = 0
                option_list.focus()
                return
        self.screen.focus_next()
