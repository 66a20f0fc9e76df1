"""The review step: every answer that applies, with the defaults marked, grouped by step; Enter edits a row's step."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from gpuadvisor.knowledge.words import in_number
from gpuadvisor.tui.present import pct
from gpuadvisor.tui.questionnaire.answers_state import AnswerState, default_value, empty_meaning
from gpuadvisor.tui.questionnaire.questions import TEXT_KINDS, Question, applicable_steps

EMPTY = re.compile(r"\(empty: ([^)]*)\)")
STEP_WIDTH, QUESTION_WIDTH, MIN_ANSWER_WIDTH = 10, 26, 24
ANSWER_INSET = STEP_WIDTH + QUESTION_WIDTH + 3 * 2 + 6
"""Screen columns beside the answer column: the two other columns, each column's padding (one a side), the
form's margins and the scroll bar."""


def assumed_values(defaults_applied: Sequence[str] | None) -> dict[str, str]:
    """`key = value (why)` lines of a consultation's defaults (rules/inputs/effective.py) by key: what it assumed."""
    out = {}
    for line in defaults_applied or ():
        key, sep, rest = line.partition(" = ")
        if sep and rest != "not set":
            out[key] = rest
    return out


def answer_text(q: Question, state: AnswerState, assumed: Mapping[str, str] | None = None) -> Text:
    """The entry as the user sees it; when nothing was entered, the value the consultation assumes (dimmed,
    marked "default"): from the prefetched consultation's effective answers when it has finished (`assumed`),
    else the default, else what the question's example says an empty entry means."""
    value = state.raw.get(q.key)
    given = value is not None and not ((q.kind in TEXT_KINDS or q.kind == "text") and not str(value).strip())
    if not given:
        value = default_value(q.key, state.raw, state.native_weights)
        if state.uses_detection() and q.key in state.detected:
            return Text(f"{state.detected[q.key]}  (detected)", style="dim")
        key = "model.name" if q.key == "model" else q.key
        if assumed and key in assumed and (value is None or "(" in assumed[key]):
            figure, sep, why = assumed[key].partition(" (")
            return Text(f"{number_text(q, _number(figure))}{sep}{why}  (default)", style="dim")
        empty = EMPTY.search(q.example)
        if value is None and empty:
            return Text(f"{empty_meaning(empty.group(1), state.raw.get('workload'))}  (default)", style="dim")
    if q.choices and not isinstance(value, list):
        labels = {c.value: c.label for c in q.choices}
        shown = labels.get(value, str(value)) if isinstance(value, str | int) else str(value)
    elif isinstance(value, list):
        labels = {str(c.value): c.label for c in q.choices}
        shown = ", ".join(labels.get(str(v), str(v)) for v in value) or "none"
    elif isinstance(value, bool):
        shown = "yes" if value else "no"
    elif value is None:
        shown = "—"
    elif q.count:
        shown = count_text(value)
    else:
        shown = number_text(q, value)
    if given:
        return Text(shown)
    return Text(f"{shown}  (default)" if value is not None else "— (none)", style="dim")


SHARE_UNIT = "0–1"
"""The unit of a share (utilization): shown as a percentage, as every screen shows a share."""
COUNT_UNIT = re.compile(r"[a-z]+s")
"""A unit that is a plural noun (`sequences`, `tokens`): said in the number its count takes."""


def number_text(q: Question, value: object) -> str:
    """A number answer as a person reads it: a share as a percentage (`2.7%`, never `0.0274`), a count in a noun
    unit in the number it takes (`1 sequence`, `8 sequences`), else the number and its unit. An entry as typed
    (`2,048`) keeps its digits; an assumed figure with words is shown as it is."""
    typed = value.strip() if isinstance(value, str) else None
    if typed is not None:
        value = _number(typed.replace(",", ""))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return typed if typed is not None else str(value)
    if q.unit == SHARE_UNIT:
        return pct(value)
    number = typed if typed is not None else f"{value:g}" if isinstance(value, float) else str(value)
    if not q.unit:
        return number
    unit = in_number(value, q.unit) if COUNT_UNIT.fullmatch(q.unit) else q.unit
    return f"{number} {unit}"


def _number(text: str) -> object:
    """A figure as the consultation wrote it (`0.0274`, `1`), a number when it is one, else the text."""
    try:
        return int(text) if text.lstrip("-").isdigit() else float(text)
    except ValueError:
        return text


def count_text(value: object) -> str:
    """A count in billions as typed (`1T`, `500M`, `0.02`) or stored (2.0) printed with the suffix the units module
    prints every count with (`1T`, `500M`, `20M`): never `1T billion`."""
    from gpuadvisor.rules.sizing.units import billions_text, parse_billions

    try:
        return billions_text(parse_billions(str(value)))
    except ValueError:
        return str(value)


class ReviewTable(DataTable[Text]):
    """Answers by step; Enter on a row jumps back to that step."""

    @dataclass
    class Edit(Message):
        step_id: str

    def __init__(self, state: AnswerState, defaults_applied: Sequence[str] | None = None, *,
                 id: str | None = None) -> None:  # noqa: A002 - Textual's name
        """`defaults_applied`: the prefetched consultation's, when it has finished (what it assumed)."""
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._state = state
        self.assumed = assumed_values(defaults_applied)

    def on_mount(self) -> None:
        self.add_column("Step", width=STEP_WIDTH)
        self.add_column("Question", width=QUESTION_WIDTH)
        # the answer column takes the rest of the screen and a long answer (a default and why it was assumed)
        # wraps onto more lines of its row instead of running off the screen's edge
        self.add_column("Answer", width=max(MIN_ANSWER_WIDTH, self.screen.size.width - ANSWER_INSET))
        raw = self._state.raw
        for step in applicable_steps(raw):
            for i, q in enumerate(step.visible(raw)):
                # a long question wraps in its cell like a long answer ("Global batch (sequences p…" was cut)
                self.add_row(Text(step.short if i == 0 else "", style="bold"), Text(q.label),
                             answer_text(q, self._state, self.assumed), key=f"{step.id}:{q.key}", height=None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event.row_key.value or ""
        self.post_message(self.Edit(key.split(":", 1)[0]))
