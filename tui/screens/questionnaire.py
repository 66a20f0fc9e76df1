"""The guided questionnaire: one generic screen that renders the step specs of `questions.py`.

Entries live in the app's `AnswerState`, so Back and Next (and leaving for the welcome screen) never lose one, even
an invalid one. Every change is validated at once by the `Answers` model and the message is shown under the field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Static

from gpuadvisor.tui.draft import save_draft
from gpuadvisor.tui.messages import (
    DraftDiscarded,
    LifecycleRequested,
    NextPhaseRequested,
    PhaseDropped,
    PrefetchRequested,
    ResultsRequested,
)
from gpuadvisor.tui.questionnaire.answers_state import GLOBAL, AnswerState, default_value, detected_hint
from gpuadvisor.tui.questionnaire.model_lookup import ModelLookup, lookup_model
from gpuadvisor.tui.questionnaire.questions import PRICE, Step, applicable_steps
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.state.advisor_state import AdvisorScreenMixin
from gpuadvisor.tui.widgets.question_field import QuestionField
from gpuadvisor.tui.widgets.review import ReviewTable

if TYPE_CHECKING:
    from gpuadvisor.rules.inputs.answers import Answers

MODEL_REQUIRED = "give a model: a knowledge-base name (llama-3.1-8b), a size in billions (70) or a path to config.json"


def progress_text(steps: list[Step], current: str, width: int) -> Text:
    """`Step 3/7  ✔ Workload › ✔ Model › ▸ Precision › Targets …`, tightened when the terminal is narrow."""
    index = next(i for i, s in enumerate(steps) if s.id == current)
    variants = ((f"Step {index + 1}/{len(steps)}  ", " › ", " "), (f"{index + 1}/{len(steps)}  ", " › ", ""),
                (f"{index + 1}/{len(steps)} ", "›", ""))
    for head, sep, mark in variants:
        text = Text(head, style="bold")
        for i, s in enumerate(steps):
            if i:
                text.append(sep, style="dim")
            if i < index:
                text.append(f"✔{mark}{s.short}")
            elif i == index:
                text.append(f"▸{mark}{s.short}", style="bold reverse")
            else:
                text.append(s.short, style="dim")
        if text.cell_len <= width - 2:
            break
    return text


class QuestionnaireScreen(AdvisorScreenMixin, Screen[None]):
    """Step-by-step questions with a progress line, inline validation and a review before the results."""

    CSS_PATH = STYLES / "questionnaire.tcss"


    BINDINGS = [
        Binding("ctrl+n", "next", "Next", id="wizard.next", tooltip="Check this step and go to the next one"),
        Binding("ctrl+b", "back", "Back", id="wizard.back", tooltip="Previous step (answers are kept)"),
        Binding("escape", "back", "Back", show=False, id="wizard.escape"),
        Binding("ctrl+e", "and_then", "And then?", id="wizard.and-then",
                tooltip="After training or fine-tuning: plan serving or fine-tuning the trained model next, as one "
                        "consultation"),
    ]
    HELP = """\
## Questionnaire

One topic per step. Only the questions that matter for your workload are asked; empty number fields use the
default shown in grey. Each answer is checked as you type and a problem is named under the field.

- **Tab / Shift+Tab** move between fields, **Enter** goes to the next field (or the next step).
- **Ctrl+N** next step, **Ctrl+B** or **Escape** previous step: nothing you entered is lost.
- On the model step, type to search the knowledge base and press **Down** to pick a match.
- On the review, **Enter** on a row edits that step; **Ctrl+N** gets the results.
- After a training or fine-tuning workload the review asks **and then?**: **Ctrl+E** plans serving (or fine-tuning)
  the trained model as the next phase of one consultation — one budget, one fleet or a split.
"""

    def __init__(self, state: AnswerState, start: str | None = None, phase: int | None = None) -> None:
        """`phase`: the number of the lifecycle phase these answers are for ("and then?"), None for one workload."""
        super().__init__()
        self.state = state
        self.phase = phase
        self.step_id = start or "workload"
        self.errors: dict[str, str] = {}
        self.answers: Answers | None = None
        """The entries validated (None while some is wrong): what the app is sent, typed."""
        self.lookup = ModelLookup()
        self._shown_keys: list[str] = []


    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="progress")
        yield Static(id="step-title")
        yield VerticalScroll(id="fields")
        yield Static(id="step-error", markup=False)
        with Horizontal(id="nav"):
            yield Button("◀ Back", id="back", compact=True)
            yield Button("Next ▶", id="next", variant="primary", compact=True)
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        self._relookup()
        await self.show_step(self.step_id)

    async def edit(self, state: AnswerState) -> None:
        """Back from the results to the review, the form holding `state` (derived from the answers shown there)."""
        if state is not self.state:
            self.state = state
            self._relookup()
        await self.show_step("review")

    # --- steps ------------------------------------------------------------------------------------------------------
    @property
    def steps(self) -> list[Step]:
        return applicable_steps(self.state.raw)

    @property
    def step(self) -> Step:
        steps = self.steps
        return next((s for s in steps if s.id == self.step_id), steps[0])

    async def show_step(self, step_id: str, focus_key: str | None = None) -> None:
        """Render a step's fields from the specs (also after a skip-logic change on the same step)."""
        self.step_id = step_id
        step = self.step
        self._validate()
        self._render_progress()
        phase = (f"Phase {self.phase} · ", "bold reverse") if self.phase else ""
        self.query_one("#step-title", Static).update(Text.assemble(phase, (step.title, "bold"), "  ", step.intro))
        self.query_one("#next", Button).label = "Get results ▶" if step.review else "Next ▶"
        fields = self.query_one("#fields", VerticalScroll)
        await fields.remove_children()
        if step.review:
            self._shown_keys = []
            cached = self.advisor.cached_result(self.answers)
            await fields.mount(ReviewTable(self.state, cached.defaults_applied if cached else None, id="review"))
            if self._trains():
                await fields.mount(Static(Text.assemble(
                    ("And then? ", "bold"), "Ctrl+E plans what the model this run trains does next — serve it or "
                    "fine-tune it — as the next phase of one consultation (one budget; one fleet or a split). "
                    "Get results: this run alone" + (", with the earlier phases." if self.phase else ".")),
                    id="and-then-hint"))
            self.query_one("#review", ReviewTable).focus()
            self._render_errors()
            if self.answers is not None:
                self.app.post_message(PrefetchRequested(self.answers))
            return
        visible = step.visible(self.state.raw)
        self._shown_keys = [q.key for q in visible]
        raw = self.state.raw
        catalog = self.advisor.catalog
        widgets = [QuestionField(q, raw.get(q.key), q.why_for(raw, catalog), raw, self.state.native_weights)
                   for q in visible]
        await fields.mount_all(widgets)
        self._render_detection()
        self._render_errors()
        self._render_lookup()
        target = next((w for w in widgets if w.question.key == focus_key), widgets[0] if widgets else None)
        if target is not None:
            target.focus_control()
        fields.scroll_home(animate=False)
        if target is not None and focus_key:
            target.scroll_visible(animate=False)

    def _render_progress(self) -> None:
        widget = self.query_one("#progress", Static)
        widget.update(progress_text(self.steps, self.step_id, widget.size.width or self.app.size.width))

    def on_resize(self) -> None:
        self._render_progress()

    # --- validation -------------------------------------------------------------------------------------------------
    def _validate(self) -> None:
        self.answers, self.errors = self.state.validate()
        if self.lookup.error:
            self.errors.setdefault("model", self.lookup.error)

    def _render_errors(self) -> None:
        for field in self.query(QuestionField):
            field.error = self.errors.get(field.question.key, "")
        problem = self.errors.get(GLOBAL, "")
        if self.step.review and not problem and self.errors:
            problem = "; ".join(self.errors.values())
        self.query_one("#step-error", Static).update(f"✖ {problem}" if problem else "")
        self.query_one("#step-error", Static).set_class(bool(problem), "-shown")

    def _relookup(self) -> None:
        text = self.state.raw.get("model")
        catalog = self.advisor.catalog
        self.lookup = lookup_model(str(text), catalog) if text else ModelLookup()
        self.state.model_id = self.lookup.model_id
        model = catalog.models.get(self.lookup.model_id) if catalog is not None and self.lookup.model_id else None
        self.state.native_weights = model.checkpoint_format if model is not None else None

    def _render_lookup(self) -> None:
        for field in self.query(QuestionField):
            if field.question.kind == "model":
                field.info = self.lookup.info
                field.set_matches(self.lookup.matches)

    def catalog_ready(self) -> None:
        """The knowledge base arrived: resolve a model entry typed while it was loading, fill in prices."""
        if any(PRICE.search(str(q.why)) for q in self.step.visible(self.state.raw)):
            self.call_later(self.show_step, self.step_id)
        if self.state.raw.get("model"):
            self._relookup()
            self._validate()
            self._render_lookup()
            self._render_errors()

    def result_cached(self) -> None:
        """A prefetched consultation finished: the review shows the values it assumed for empty answers."""
        if self.step.review and not self.query("#review").first(ReviewTable).assumed:
            self.call_later(self.show_step, self.step_id)

    def hardware_ready(self) -> None:
        """The machine's GPUs were detected: show them as the current-GPU default (the state already holds them)."""
        self._render_detection()
        if self.step.review:
            self.call_later(self.show_step, self.step_id)

    def _render_detection(self) -> None:
        detected = self.state.detected
        summary = detected.get("current.detection")
        for field in self.query(QuestionField):
            hint = detected_hint(field.question.key, detected)
            if hint is None:
                continue
            why = field.question.why_for(self.state.raw, self.advisor.catalog)
            field.set_hint(hint, f"{why} · {summary}" if summary and field.question.key == "current.gpu" else why)

    def step_errors(self, step: Step) -> dict[str, str]:
        """Problems that block leaving `step` (its own fields and contradictions between answers)."""
        keys = {q.key for q in step.visible(self.state.raw)}
        found = {k: v for k, v in self.errors.items() if k in keys or k == GLOBAL}
        if "model" in keys and not str(self.state.raw.get("model", "")).strip():
            found["model"] = MODEL_REQUIRED
        return found

    # --- messages up ------------------------------------------------------------------------------------------------
    @on(QuestionField.Changed)
    async def _changed(self, event: QuestionField.Changed) -> None:
        self.state.raw[event.key] = event.value
        save_draft(self.state.raw)  # every entry survives a crash or a kill (offered back on the welcome screen)
        if event.key == "model":
            self._relookup()
            self._render_lookup()
        self._validate()
        visible = [q.key for q in self.step.visible(self.state.raw)]
        if visible != self._shown_keys:
            await self.show_step(self.step_id, focus_key=event.key)
        else:
            self._render_progress()
            self._render_errors()

    @on(Input.Submitted)
    async def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        fields = list(self.query(QuestionField))
        index = next((i for i, f in enumerate(fields) if event.input in f.walk_children()), len(fields) - 1)
        if index + 1 < len(fields):
            fields[index + 1].focus_control()
        else:
            await self.action_next()

    @on(ReviewTable.Edit)
    async def _edit(self, event: ReviewTable.Edit) -> None:
        await self.show_step(event.step_id)

    @on(Button.Pressed, "#next")
    async def _next_button(self) -> None:
        await self.action_next()

    @on(Button.Pressed, "#back")
    async def _back_button(self) -> None:
        await self.action_back()

    # --- actions ----------------------------------------------------------------------------------------------------
    async def action_next(self) -> None:
        step = self.step
        self._validate()
        problems = self.step_errors(step)
        if problems:
            self.errors.update(problems)
            self._render_errors()
            first = next((f for f in self.query(QuestionField) if f.question.key in problems), None)
            if first is not None:
                first.focus_control()
                first.scroll_visible(animate=False)
            count = len(problems)
            self.notify(f"{count} answer{'s' if count > 1 else ''} to fix before going on", severity="error",
                        timeout=3)
            return
        # a radio shows its default as chosen: leaving the step with it chosen answers it (stage = production then
        # brings production's service level, shown as the defaults of the questions that follow)
        for q in step.visible(self.state.raw):
            if q.kind == "radio":
                self.state.raw.setdefault(q.key, default_value(q.key, self.state.raw, self.state.native_weights))
        if step.review:
            answers = self.answers
            if answers is not None and self.phase:  # the earlier phases and this one, as one plan
                self.app.post_message(LifecycleRequested(self.state, answers))
            elif answers is not None:
                self.app.post_message(ResultsRequested(answers))
            return
        steps = self.steps
        index = next(i for i, s in enumerate(steps) if s.id == step.id)
        await self.show_step(steps[min(index + 1, len(steps) - 1)].id)

    def _trains(self) -> bool:
        return str(self.state.raw.get("workload", "inference")) in ("training", "finetune")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "and_then":  # asked only on the review of a training or fine-tuning workload
            return self.step.review and self._trains()
        return True

    def action_and_then(self) -> None:
        """"And then?": keep this phase, and open the questionnaire for the next one on the model it trains."""
        answers, errors = self.state.validate()
        if answers is None:
            self.notify("; ".join(errors.values()), title="Answers to fix", severity="error")
            return
        from gpuadvisor.tui.screens.and_then import AndThenScreen

        what = "trains a model from scratch" if answers.workload == "training" else "fine-tunes a model"

        def chosen(workload: str | None) -> None:
            if workload:
                self.app.post_message(NextPhaseRequested(self.state, answers, workload))

        self.app.push_screen(AndThenScreen(self.phase or 1, what), chosen)

    def _ask_leave(self) -> None:
        """Back from the first step with answers entered: stay, leave with them kept as a draft (Resume on the
        welcome screen), or leave and discard them."""
        from gpuadvisor.tui.draft import draft_summary
        from gpuadvisor.tui.screens.choice import Choice, ChoiceScreen

        def chosen(choice: str | None) -> None:
            if choice is None:
                return
            if choice == "discard":
                self.app.post_message(DraftDiscarded())
            else:
                save_draft(self.state.raw)
            if self.app.screen is self:
                self.app.pop_screen()

        self.app.push_screen(ChoiceScreen(
            "Leave the questionnaire?", f"Your answers ({draft_summary(self.state.raw)}) are kept as a draft: "
            "Resume (u) on the welcome screen brings them back. Or discard them.",
            [Choice("keep", "Leave, keep them", "k", primary=True), Choice("discard", "Discard them", "d")],
            dialog_id="leave-dialog"), chosen)

    async def action_back(self) -> None:
        steps = self.steps
        index = next(i for i, s in enumerate(steps) if s.id == self.step_id)
        if index == 0:
            if not self.phase and any(v not in ("", [], None) for v in self.state.raw.values()):
                self._ask_leave()  # answers entered: keep them for later, or discard them — never lost silently
                return
            self.app.pop_screen()
            below = self.app.screen
            if self.phase and isinstance(below, QuestionnaireScreen):  # back from phase N to phase N-1's review
                self.app.post_message(PhaseDropped(below.state))
            return
        await self.show_step(steps[index - 1].id)
