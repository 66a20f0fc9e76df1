"""What-if: change a few answers from the results and rerun; the results screen marks what moved.

The fields are the questionnaire's own (`QuestionField` on the same specs), validated the same way, on entries
derived from the answers the results ran on: nothing changes until Apply succeeds. Apply sends the app the changed
answers, typed: for a single consultation the new `Answers`; for a lifecycle phase the lifecycle with the change
(the budget in its shared table, the rest in the phase's own), which is planned again as a whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from gpuadvisor.tui.messages import PhaseWhatIf, ResultsRequested
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.screens.answers_state import GLOBAL, AnswerState, default_value, native_weights_of
from gpuadvisor.tui.screens.base import AdvisorScreenMixin
from gpuadvisor.tui.screens.questions import QUESTIONS, Question
from gpuadvisor.tui.widgets.question_field import QuestionField

if TYPE_CHECKING:
    from gpuadvisor.rules.answers import Answers
    from gpuadvisor.tui.screens.phase import PhaseOf

WHAT_IF_KEYS = ("precision.weights", "precision.context_tokens", "budget.hourly_usd", "budget.capex_usd",
                "constraints.max_gpus", "deployment.where")


def _short(q: Question, state: AnswerState) -> str:
    """An entry in a few characters: the choice id rather than its label, numbers without their unit."""
    value = state.raw.get(q.key)
    if value is None or (isinstance(value, str) and not value.strip()):
        value = default_value(q.key, state.raw, state.native_weights)
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def change_note(before: AnswerState, after: AnswerState, keys: list[str]) -> str:
    """`precision.weights bf16 → int4, precision.context_tokens 4096 → 32768`: short enough for one line."""
    return ", ".join(f"{key} {_short(QUESTIONS[key], before)} → {_short(QUESTIONS[key], after)}" for key in keys)


class WhatIfScreen(AdvisorScreenMixin, ModalScreen[None]):
    CSS_PATH = [STYLES / "questionnaire.tcss", STYLES / "modals.tcss"]

    BINDINGS = [
        Binding("escape", "dismiss", "Cancel", id="whatif.cancel", tooltip="Close without changing anything"),
        Binding("ctrl+n", "apply", "Apply", id="whatif.apply", tooltip="Rerun the consultation with these changes"),
    ]
    HELP = """\
## What-if

Change precision, context, budget, GPU count or cloud/on-prem and press **Ctrl+N** (or Enter in the last field):
the consultation reruns and the results mark the options that moved (Δ column, bold rows). **Escape** cancels.
"""

    def __init__(self, state: AnswerState, answers: Answers, phase: PhaseOf | None = None) -> None:
        """`state`: entries derived from `answers`, the answers the results ran on; `phase`: the lifecycle phase
        they belong to (None: a single consultation)."""
        super().__init__()
        self.original = state
        self.trial = state.copy()
        self.answers = answers
        self.phase = phase

    @property
    def questions(self) -> list[Question]:
        return [QUESTIONS[k] for k in WHAT_IF_KEYS]

    def compose(self) -> ComposeResult:
        if self.trial.native_weights is None:  # reopened from a file or Recent: the model's own format, not BF16
            self.trial.native_weights = native_weights_of(self.trial, self.advisor.catalog)
            self.original.native_weights = self.trial.native_weights
        with Vertical(id="whatif-dialog", classes="dialog"):
            title = "What if…" if self.phase is None else f"What if… in {self.phase.label}"
            yield Static(title, classes="dialog-title", markup=False)
            if self.phase is not None:
                yield Static("The lifecycle is planned again with the change; its budget is shared by every phase.",
                             classes="dialog-text", id="whatif-phase")
            with VerticalScroll(id="whatif-fields"):
                for q in self.questions:
                    why = q.why_for(self.trial.raw, self.advisor.catalog)
                    yield QuestionField(q, self.trial.raw.get(q.key), why, self.trial.raw, self.trial.native_weights)
            yield Static("", id="whatif-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (ctrl+n)", id="apply", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self._show_applicable()
        self.query(QuestionField).first().focus_control()

    def _show_applicable(self) -> None:
        """The skip logic holds here too: no purchase budget while renting, no hourly budget when buying."""
        for field in self.query(QuestionField):
            field.display = field.question.applies(self.trial.raw)

    def changed_keys(self) -> list[str]:
        """Entries changed in this dialog whose question applies (a hidden field's change would be ignored)."""
        return [k for k in WHAT_IF_KEYS
                if self.trial.raw.get(k) != self.original.raw.get(k) and QUESTIONS[k].applies(self.trial.raw)]

    @on(QuestionField.Changed)
    def _changed(self, event: QuestionField.Changed) -> None:
        event.stop()
        self.trial.raw[event.key] = event.value
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
        keys = self.changed_keys()
        error = self.query_one("#whatif-error", Static)
        if not keys:
            error.update("Nothing changed yet: edit a field first.")
            return
        answers, errors = self.trial.validate()
        if answers is None:
            error.update("✖ " + "; ".join(errors.values()))
            return
        note = change_note(self.original, self.trial, keys)
        from gpuadvisor.knowledge.errors import AdvisorError
        from gpuadvisor.tui.screens.phase import changed_answers

        changes = changed_answers(self.answers, answers, keys)  # only what was edited moves
        try:
            if self.phase is None:
                self.app.post_message(ResultsRequested(self.answers.with_changes(changes, "what-if"), note))
            else:
                lifecycle = self.phase.lifecycle.with_changes(self.phase.index, changes)
                self.app.post_message(PhaseWhatIf(lifecycle, self.phase.index, note))
        except AdvisorError as exc:
            error.update(f"✖ {exc}")
            return
        if self.is_attached and self.app.screen is self:
            self.dismiss()
