"""What-if: change any answer from the results and rerun; the results screen marks what moved.

The form is the questionnaire's own: its steps as tabs, each holding the same `QuestionField`s on the same specs,
with their defaults and "why" lines, validated the same way, on entries derived from the answers the results ran on;
nothing changes until Apply succeeds. A change that leaves the answers as they were (2M typed for the 2,000,000
given, a field typed and erased) says so and runs nothing. Apply sends the app the changed answers, typed: for a
single consultation the new `Answers`; for a lifecycle phase the lifecycle with the change (`phase.with_changes`:
an answer the lifecycle shares goes to its shared table, the rest to the phase's own), planned again as a whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TabbedContent, TabPane

from gpuadvisor.tui.messages import PhaseWhatIf, ResultsRequested
from gpuadvisor.tui.questionnaire.answers_state import GLOBAL, AnswerState, native_weights_of
from gpuadvisor.tui.questionnaire.questions import STEPS, Question, Step
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.state.advisor_state import AdvisorScreenMixin
from gpuadvisor.tui.widgets.question_field import QuestionField

if TYPE_CHECKING:
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.tui.state.phase import PhaseOf

FIRST_STEP = "targets"
"""The step the form opens on: where most of what people are unsure of lives (the load, the latency target, the
training tokens, the deadline); the other steps are a tab away."""


def _short(value: Any) -> str:
    """An answer in a few characters: the choice id rather than its label, numbers without their unit."""
    if value is None or value == []:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _value(answers: Answers, key: str) -> Any:
    if key == "model":
        m = answers.model
        return m.name or (f"{m.params_b:g}B" if m.params_b else m.config)
    return _flat(answers).get(key)


def change_note(before: Answers, after: Answers, keys: list[str]) -> str:
    """`Weights precision bf16 → int4, Context length 4,096 → 32,768 tokens`: each change under its question's name
    and in its unit, short enough for one line (the student read "training.tokens_b none → 0.5" for 100M → 500M
    tokens); the values as the consultation read them (2M typed is 2,000,000)."""
    asked = {q.key: q for step in STEPS for q in step.questions}
    parts = []
    for key in keys:
        q = asked.get(key)
        old, new = _value(before, key), _value(after, key)
        if q is None:
            parts.append(f"{key} {_short(old)} → {_short(new)}")
            continue
        unit = f" {q.unit}" if q.unit and q.unit != "0–1" and not q.count and _given(new) else ""
        parts.append(f"{q.label} {_shown(q, old)} → {_shown(q, new)}{unit}")
    return ", ".join(parts)


def _given(value: Any) -> bool:
    return value is not None and value != []


def _shown(q: Question, value: Any) -> str:
    """A value of the note: "not set" (the consultation's default applies), a count as people write it (500M), a
    number with its thousands, a choice by its id."""
    if not _given(value):
        return "not set"
    if q.count:
        from gpuadvisor.tui.widgets.review import count_text

        return count_text(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"
    return _short(value)


def _flat(answers: Answers) -> dict[str, Any]:
    """The answers as the consultation applies them, by dotted key (defaults included, those implied by the other
    answers too: QLoRA's NF4): what a change is measured on."""
    return dict(answers.effective())


def question_key(key: str) -> str:
    """The question a dotted answers key belongs to (`model.name` → `model`)."""
    return "model" if key.split(".")[0] == "model" else key


def changed_questions(before: Answers, after: Answers) -> list[str]:
    """The questions whose answer differs between two validated answers, in the questionnaire's order."""
    old, new = _flat(before), _flat(after)
    moved = {question_key(k) for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    return [q.key for step in STEPS for q in step.questions if q.key in moved]


def form_steps() -> list[Step]:
    return [s for s in STEPS if not s.review and s.questions]


class WhatIfScreen(AdvisorScreenMixin, ModalScreen[None]):
    CSS_PATH = [STYLES / "questionnaire.tcss", STYLES / "modals.tcss"]

    BINDINGS = [
        Binding("escape", "dismiss", "Cancel", id="whatif.cancel", tooltip="Close without changing anything"),
        Binding("ctrl+n", "apply", "Apply", id="whatif.apply", tooltip="Rerun the consultation with these changes"),
    ]
    HELP = """\
## What-if

Any answer of the questionnaire, step by step as tabs (Shift+Tab reaches the tabs, ←/→ moves between them), each
with its default and why it matters. Change what you are unsure of — the load, the latency target, the training
tokens, the deadline, the hours a month, the vendors, the budget — and press **Ctrl+N** (or Enter in a field): the
consultation reruns and the results mark the options that moved (Δ column, bold rows). A change that leaves the
answers as they were runs nothing. **Escape** cancels.
"""

    def __init__(self, state: AnswerState, answers: Answers, phase: PhaseOf | None = None,
                 step: str = FIRST_STEP, *, shared: Any = None) -> None:
        """`state`: entries derived from `answers`, the answers the results ran on; `phase`: the lifecycle phase
        they belong to (None: a single consultation); `shared`: a lifecycle (LifecycleAnswers) whose shared answers
        the form changes (only those are asked); `step`: the tab the form opens on."""
        super().__init__()
        self.original = state
        self.trial = state.copy()
        self.answers = answers
        self.phase = phase
        self.shared = shared
        self.first_step = step
        self._typed_ahead: list[tuple[str, str | None]] | None = []
        """Keys that reached the form before its first field had focus, replayed to it once it has (None after):
        on a busy machine the form takes a second or two to appear, and a tester's "2000" typed at once was lost
        (issue 42)."""

    @property
    def taking_focus(self) -> bool:
        """The form is open but its first field has not taken focus yet: keys typed now are kept for it."""
        return self._typed_ahead is not None

    def type_ahead(self, key: str, character: str | None) -> None:
        """A key typed for the form before it could take it: kept while the form takes focus, else sent on."""
        if self._typed_ahead is not None:
            self._typed_ahead.append((key, character))
        else:
            self._send(key, character)

    def _send(self, key: str, character: str | None) -> None:
        """A key sent to the app as the terminal sends it: from the app, so it bubbles back up to the app's
        bindings (a key sent from this screen stops bubbling at it, and `end` or `ctrl+u` would do nothing)."""
        event = events.Key(key, character)
        event.set_sender(self.app)
        self.app.post_message(event)

    def on_key(self, event: events.Key) -> None:
        """While the form is still taking focus, keep what is typed (the field gets it then), in order."""
        if self._typed_ahead is not None:
            self.type_ahead(event.key, event.character)
            event.stop()
            event.prevent_default()

    def _replay_typed_ahead(self) -> None:
        """Send the keys kept while the form opened to the app again, now that a field has focus."""
        keys, self._typed_ahead = self._typed_ahead or [], None
        if keys:
            self.run_worker(self._type(keys), group="type-ahead")

    async def _type(self, keys: list[tuple[str, str | None]]) -> None:
        """One key at a time, each handled before the next, as Textual's own key simulation does: a field takes a
        character at once but a binding (`ctrl+u`) only when the key has bubbled back to the app, so keys sent
        together would run the digits before the `ctrl+u` typed ahead of them (the field then ends empty)."""
        from textual._wait import wait_for_idle  # what Pilot.press waits with between keys

        for key, character in keys:
            self._send(key, character)
            await wait_for_idle(0)

    def asks(self, q: Question) -> bool:
        """Every question, or on a lifecycle only those its phases share."""
        if self.shared is None:
            return True
        from gpuadvisor.tui.state.phase import is_shared

        return is_shared(q.key)

    def steps(self) -> list[Step]:
        return [s for s in form_steps() if any(self.asks(q) for q in s.questions)]

    @property
    def questions(self) -> list[Question]:
        return [q for s in self.steps() for q in s.questions if self.asks(q)]

    def compose(self) -> ComposeResult:
        if self.trial.native_weights is None:  # reopened from a file or Recent: the model's own format, not BF16
            self.trial.native_weights = native_weights_of(self.trial, self.advisor.catalog)
            self.original.native_weights = self.trial.native_weights
        steps = self.steps()
        first = next((s.id for s in steps if s.id == self.first_step and s.applies(self.trial.raw)
                      and s.visible(self.trial.raw)), steps[0].id)
        with Vertical(id="whatif-dialog", classes="dialog"):
            title = "What if… in the whole lifecycle" if self.shared is not None else \
                "What if…" if self.phase is None else f"What if… in {self.phase.label}"
            yield Static(title, classes="dialog-title", markup=False)
            if self.phase is not None:
                yield Static("The lifecycle is planned again with the change; its budget is shared by every phase "
                             "(w on the lifecycle changes what every phase shares).",
                             classes="dialog-text", id="whatif-phase")
            with TabbedContent(id="whatif-steps", initial=f"whatif-{first}"):
                for step in steps:
                    with TabPane(step.short, id=f"whatif-{step.id}"), VerticalScroll(classes="whatif-fields"):
                        for q in filter(self.asks, step.questions):
                            why = q.why_for(self.trial.raw, self.advisor.catalog)
                            yield QuestionField(q, self.trial.raw.get(q.key), why, self.trial.raw,
                                                self.trial.native_weights)
            yield Static("", id="whatif-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (ctrl+n)", id="apply", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)

    def on_mount(self) -> None:
        self._show_applicable()
        self._focus_tab()
        self.call_after_refresh(self._replay_typed_ahead)  # after the focus the line above asks for is given

    def _focus_tab(self) -> None:
        tabs = self.query_one("#whatif-steps", TabbedContent)
        pane = tabs.get_pane(tabs.active) if tabs.active else None
        field = next((f for f in (pane.query(QuestionField) if pane else []) if f.display), None)
        if field is not None:
            field.focus_control()

    def show_step(self, step_id: str) -> None:
        """Open the tab of a step (its first field focused)."""
        self.query_one("#whatif-steps", TabbedContent).active = f"whatif-{step_id}"
        self.call_after_refresh(self._focus_tab)

    def _show_applicable(self) -> None:
        """The skip logic holds here too: no purchase budget while renting, no training tokens when serving; a step
        with nothing to ask has no tab."""
        raw = self.trial.raw
        for field in self.query(QuestionField):
            field.display = field.question.applies(raw)
        tabs = self.query_one("#whatif-steps", TabbedContent)
        for step in self.steps():
            shown = step.applies(raw) and any(self.asks(q) for q in step.visible(raw))
            (tabs.show_tab if shown else tabs.hide_tab)(f"whatif-{step.id}")

    def field(self, key: str) -> QuestionField:
        return next(f for f in self.query(QuestionField) if f.question.key == key)

    @on(QuestionField.Changed)
    def _changed(self, event: QuestionField.Changed) -> None:
        event.stop()
        self.trial.raw[event.key] = event.value
        if event.key == "model":  # another model: resolved again by its name, in its own weight format
            self.trial.model_id = None
            self.trial.native_weights = native_weights_of(self.trial, self.advisor.catalog)
        self._show_applicable()
        _, errors = self.trial.validate()
        for field in self.query(QuestionField):
            field.error = errors.get(field.question.key, "")
        self.query_one("#whatif-error", Static).update(f"✖ {errors[GLOBAL]}" if GLOBAL in errors else "")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss()

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        error = self.query_one("#whatif-error", Static)
        answers, errors = self.trial.validate()
        if answers is None:
            error.update("✖ " + "; ".join(errors.values()))
            return
        keys = changed_questions(self.answers, answers)
        if not keys:
            typed = [k for k, v in self.trial.raw.items() if v != self.original.raw.get(k)]
            error.update("Nothing changed: the answers are the ones the results ran on"
                         + (f" ({', '.join(typed)} read as before)" if typed else "") + "; nothing was run.")
            return
        note = change_note(self.answers, answers, keys)
        from gpuadvisor.knowledge.errors import AdvisorError
        from gpuadvisor.rules.inputs.answers import flatten_dotted
        from gpuadvisor.tui.state.phase import changed_answers, with_shared_changes

        given = {k for a in (self.answers, answers) for k, _ in flatten_dotted(a.given())}
        dotted = [k for k in sorted(given) if question_key(k) in keys]
        changes = changed_answers(self.answers, answers, dotted)  # only what was edited moves
        try:
            if self.shared is not None:
                self.app.post_message(PhaseWhatIf(with_shared_changes(self.shared, changes), 0, note))
            elif self.phase is None:
                self.app.post_message(ResultsRequested(self.answers.with_changes(changes, "what-if"), note))
            else:
                lifecycle = self.phase.lifecycle.with_changes(self.phase.index, changes)
                self.app.post_message(PhaseWhatIf(lifecycle, self.phase.index, note))
        except AdvisorError as exc:
            error.update(f"✖ {exc}")
            return
        if self.is_attached and self.app.screen is self:
            self.dismiss()
