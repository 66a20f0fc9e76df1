"""The gpuadvisor Textual app: welcome → questionnaire → results, with detail, compare, what-if and save.

The app owns the consultation's state (the answers, typed and validated where they were entered, the last result,
the lifecycle being entered) and passes it down to screens; screens report back with messages (tui/messages.py:
"attributes down, messages up"). A screen showing a lifecycle phase carries it (`PhaseOf`): its what-if replans the
lifecycle, never a consultation of its own.
Start-up stays light: the knowledge base and the rules engine are imported and loaded in thread workers after the
welcome screen is on screen, and every consultation runs in a thread worker so the UI never freezes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import events, on, work
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import get_current_worker

from gpuadvisor.tui import served as served_mode
from gpuadvisor.tui import settings
from gpuadvisor.tui.commands_palette import AdvisorCommands
from gpuadvisor.tui.messages import (
    AnswersLoaded,
    CatalogFailed,
    CatalogLoaded,
    CatalogReloadRequested,
    ConsultationFailed,
    ConsultationReady,
    DraftDiscarded,
    HardwareDetected,
    LifecycleFailed,
    LifecycleReady,
    LifecycleRequested,
    NextPhaseRequested,
    PhaseDropped,
    PhaseWhatIf,
    PrefetchRequested,
    ResultsRequested,
    WarmUpRequested,
)
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.screens.welcome import WelcomeScreen
from gpuadvisor.tui.titles import consultation_title

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers
    from gpuadvisor.tui.questionnaire.answers_state import AnswerState
    from gpuadvisor.tui.screens.results import ResultsScreen

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"

ConsultFn = Callable[["Answers", Any], "RecommendResult"]
CatalogFn = Callable[[], Any]
DetectFn = Callable[[Any], Any]
"""catalog → knowledge.hardware_probe.Detection (a seam: tests pass a fixed detection)."""


def _engine_consult(answers: Answers, catalog: Any) -> RecommendResult:
    from gpuadvisor.rules.consult import consult

    return consult(answers, catalog)


def _machine_detection(catalog: Any) -> Any:
    from gpuadvisor.rules.inputs.current_gpu import detect_for

    return detect_for(catalog)


def _no_detection(catalog: Any) -> Any:
    """Served mode: the machine is the server, whose GPUs are not the visitor's."""
    from gpuadvisor.knowledge.hardware_probe import Detection

    return Detection(tried=("not detected in the shared app: this machine is the server, not yours",))


def _shipped_catalog() -> Any:
    from gpuadvisor.knowledge.loader import load_catalog

    return load_catalog()


def answers_key(answers: Answers) -> str:
    """Identity of a consultation's input (every answer, defaults included)."""
    return json.dumps(answers.model_dump(mode="json"), sort_keys=True)


def _answer_state() -> type[AnswerState]:
    """The form-state class, imported when first needed (see GpuAdvisorApp.state)."""
    from gpuadvisor.tui.questionnaire.answers_state import AnswerState

    return AnswerState


class GpuAdvisorApp(App[None]):
    """Guided GPU hardware consultation."""

    TITLE = "gpuadvisor"
    SUB_TITLE = "which GPUs to buy or rent"
    # The first screen's styles only; the others are parsed by `warm_up` once the welcome screen is on screen (a
    # stylesheet added when its screen is first shown makes Textual re-parse every source: ~100 ms at that moment).
    CSS_PATH = [STYLES / "app.tcss", STYLES / "welcome.tcss"]
    LATER_CSS = [STYLES / name for name in ("questionnaire.tcss", "results.tcss", "detail.tcss", "modals.tcss",
                                            "lifecycle.tcss")]
    # side by side from 130 columns: the ranking table's abbreviated columns (~80) beside the findings panel (48)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (130, "-wide")]
    COMMANDS = App.COMMANDS | {AdvisorCommands}
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [
        Binding("f1", "help", "Help", id="app.help", tooltip="What this screen does, and every key"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False, id="app.theme",
                tooltip="Switch between the light and the dark theme"),
    ]

    def __init__(self, answers: Answers | LifecycleAnswers | None = None, *, theme: str | None = None,
                 consult_fn: ConsultFn | None = None, catalog_fn: CatalogFn | None = None,
                 today: date | None = None, detect_fn: DetectFn | None = None) -> None:
        """`consult_fn`, `catalog_fn`, `detect_fn` (this machine's GPUs) and `today` (the date in report names and
        headers) are seams for tests."""
        super().__init__()
        self.served = served_mode.current()
        """Served mode (`gpuadvisor serve`, tui/served.py): downloads instead of files, no server path read."""
        self.terminated_by: int | None = None
        """The signal that ended the app (SIGTERM, SIGHUP), None when the user quit."""
        self.today = today
        lifecycle = hasattr(answers, "phases")  # a LifecycleAnswers (not imported here: start-up stays light)
        self._initial_lifecycle = answers if lifecycle else None
        """A lifecycle file given at start (`gpuadvisor --answers FILE` with [[phase]] tables): planned at once."""
        single = None if lifecycle else cast("Answers | None", answers)
        self._state: AnswerState | None = None
        if single is not None:
            self.state = _answer_state().from_answers(single)
        self._initial = single
        self._wanted_theme = theme
        self._consult_fn = consult_fn or _engine_consult
        self._catalog_fn = catalog_fn or _shipped_catalog
        self.catalog: Any | None = None
        self._detect_fn = detect_fn or (_no_detection if self.served else _machine_detection)
        self.detection: Any | None = None
        """What hardware detection found (knowledge.hardware_probe.Detection), once its worker reported."""
        self._detected: dict[str, Any] = {}
        self._detect_into_state = answers is None
        """Detected GPUs are the default of a new questionnaire, never added to answers loaded from a file."""
        self.catalog_error: str | None = None
        self._catalog_lock = threading.Lock()
        self._loaded_catalog: Any | None = None
        self.answers: Answers | None = None
        self.result: RecommendResult | None = None
        self.previous: RecommendResult | None = None
        self.what_if: str | None = None
        self.last_elapsed_s: float | None = None
        self._cache: dict[str, RecommendResult] = {}
        self._consult_running: str | None = None
        self._wanted: str | None = None
        self.lifecycle_phases: list[tuple[dict[str, Any], int | None]] = []
        """Earlier phases of a lifecycle being entered ("and then?"): each one's given answers and the phase whose
        model it uses (None: its own model)."""
        self.lifecycle_result: RecommendResult | None = None
        self._recent_base: Path | None = None
        """The answers file of this consultation's first result in the recent list: what-ifs and edits of it are
        listed under it (one entry per consultation). None when a new one starts (n, open, resume)."""
        self._theme_ready = False
        self._loading_started = False
        wanted = theme or settings.load_theme() or DARK_THEME
        self.theme = wanted if wanted in self.available_themes else DARK_THEME  # before start: no restyle
    # --- start ------------------------------------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return WelcomeScreen()

    def on_key(self, event: events.Key) -> None:
        """A key that was on its way through the screen below when a form opened over it (w on the results) was
        typed for the form: the app had sent it to the ranking table before the binding opened the form, and it
        reaches the app once the form is on top. It goes to the form's queue, replayed to its first field once that
        has focus (issue 42: "2000" typed at once on a busy machine was lost; Apply ran "requests/min 1000 →
        none")."""
        from gpuadvisor.tui.screens.whatif import WhatIfScreen

        form = self.screen
        if isinstance(form, WhatIfScreen) and form.taking_focus:
            form.type_ahead(event.key, event.character)
            event.stop()
            event.prevent_default()

    def on_mount(self) -> None:
        self._theme_ready = True
        if self._initial is not None:
            self.warm_up()
            self.show_results(self._initial)
        elif self._initial_lifecycle is not None:
            self.warm_up()
            self._consult_lifecycle(self._initial_lifecycle)
        # Otherwise the welcome screen starts the loading once it has been painted: the loader's thread competes
        # for the GIL, and the first screen must not wait for it.

    def request_termination(self, signum: int) -> None:
        """SIGTERM or SIGHUP arrived (`launch` installs the handler): quit through the app's own shutdown, which
        restores the terminal (normal screen, no raw mode, mouse reporting off); the default action used to kill
        the process at once and leave the terminal raw, on the alternate screen, reporting the mouse. Called from a
        signal handler in the main thread, so it only schedules the exit on the event loop (`call_soon_threadsafe`
        is safe there); with no loop running the terminal is not the app's, and a second signal while the app shuts
        down is the sender insisting: either way the signal's default action ends the process at once."""
        import os
        import signal

        loop = self._loop
        if self.terminated_by is None and loop is not None and loop.is_running():
            self.terminated_by = signum
            try:
                loop.call_soon_threadsafe(self.exit)
                _watchdog(signum)
                return
            except RuntimeError:  # the loop is closing
                pass
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def watch_theme(self, theme: str) -> None:
        if self._theme_ready and self._wanted_theme is None:
            try:
                settings.save_theme(theme)
            except OSError as exc:
                self.notify(f"could not save the theme: {exc}", severity="warning", markup=False)

    # --- knowledge base ---------------------------------------------------------------------------------------------
    def get_catalog(self) -> Any:
        """The catalog, loading it on first use (thread-safe: the start-up worker and a consultation may race)."""
        with self._catalog_lock:
            if self._loaded_catalog is None:
                self._loaded_catalog = self._catalog_fn()
            return self._loaded_catalog

    def reload_catalog(self) -> None:
        """Load the knowledge base again in a worker (after `kb refresh` wrote new prices); screens hear
        `catalog_ready` when it is in."""
        with self._catalog_lock:
            self._loaded_catalog = None
        self._load_catalog()

    def warm_up(self) -> None:
        """Once the first screen is up: parse the other screens' styles, load the knowledge base in a worker."""
        self._preload_styles()
        self.start_background_loading()

    def _preload_styles(self) -> None:
        added = False
        for path in self.LATER_CSS:
            if not self.stylesheet.has_source(str(path), ""):
                self.stylesheet.read(path)
                added = True
        if added:
            self.stylesheet.reparse()
            self.stylesheet.update(self)

    def start_background_loading(self) -> None:
        """Load the knowledge base (and warm the engine's imports) in a worker, once."""
        if not self._loading_started:
            self._loading_started = True
            self._load_catalog()
            self._detect_hardware()

    @work(thread=True, exit_on_error=False, group="detect", description="Detecting this machine's GPUs")
    def _detect_hardware(self) -> None:
        """Ask the machine for its GPUs (each tool has a 2 s timeout); a failure only means "not detected"."""
        try:
            detection = self._detect_fn(self.get_catalog())
        except Exception as exc:  # detection must never take the app down
            self.log.warning(f"hardware detection failed: {exc!r}")
            return
        self.post_message(HardwareDetected(detection))

    @on(HardwareDetected)
    def _hardware_detected(self, message: HardwareDetected) -> None:
        from gpuadvisor.rules.inputs.current_gpu import detected_answers

        self.detection = message.detection
        self._detected = detected_answers(message.detection)
        if self._detect_into_state:
            self.state.detected = dict(self._detected)
        self._notify_screens("hardware_ready")

    @work(thread=True, exit_on_error=False, group="catalog", description="Loading the knowledge base")
    def _load_catalog(self) -> None:
        from gpuadvisor.knowledge.errors import AdvisorError

        try:
            catalog = self.get_catalog()
        except AdvisorError as exc:
            self.post_message(CatalogFailed(str(exc)))
            return
        self.post_message(CatalogLoaded(catalog))
        # Warm the imports the first consultation and its results need (module imports are thread-safe; no widget
        # is created here), so that "Get results" only has to lay out and paint.
        import gpuadvisor.rules.consult  # noqa: F401
        import gpuadvisor.tui.screens.detail  # noqa: F401
        import gpuadvisor.tui.screens.questionnaire  # noqa: F401
        import gpuadvisor.tui.screens.results  # noqa: F401

    @on(CatalogLoaded)
    def _catalog_loaded(self, message: CatalogLoaded) -> None:
        self.catalog = message.catalog
        self._notify_screens("catalog_ready")

    @on(CatalogFailed)
    def _catalog_failed(self, message: CatalogFailed) -> None:
        self.catalog_error = message.error
        self.notify(message.error, title="Knowledge base", severity="error", timeout=10, markup=False)
        self._notify_screens("catalog_ready")

    def _notify_screens(self, method: str) -> None:
        for screen in self.screen_stack:
            callback = getattr(screen, method, None)
            if callable(callback):
                callback()

    # --- messages up: what the screens ask ---------------------------------------------------------------------------
    @on(WarmUpRequested)
    def _warm_up_requested(self) -> None:
        self.warm_up()

    @on(CatalogReloadRequested)
    def _reload_requested(self) -> None:
        self.reload_catalog()

    @on(PrefetchRequested)
    def _prefetch_requested(self, message: PrefetchRequested) -> None:
        self.prefetch(message.answers)

    @on(ResultsRequested)
    def _results_requested(self, message: ResultsRequested) -> None:
        self.show_results(message.answers, message.what_if)

    @on(NextPhaseRequested)
    def _next_phase_requested(self, message: NextPhaseRequested) -> None:
        self.and_then(message.state, message.answers, message.workload)

    @on(PhaseDropped)
    def _phase_dropped(self, message: PhaseDropped) -> None:
        if self.lifecycle_phases:
            self.lifecycle_phases.pop()
        self.state = message.state

    @on(DraftDiscarded)
    def _draft_discarded(self) -> None:
        from gpuadvisor.tui.draft import clear_draft

        clear_draft()
        self.state = _answer_state()(detected=dict(self._detected))
        self._notify_screens("draft_changed")

    @on(LifecycleRequested)
    def _lifecycle_requested(self, message: LifecycleRequested) -> None:
        self.show_lifecycle(message.state, message.answers)

    @on(PhaseWhatIf)
    def _phase_what_if(self, message: PhaseWhatIf) -> None:
        from gpuadvisor.tui.screens.results import ResultsScreen

        if (refused := self.refusal(message.lifecycle)) is not None:
            self.notify(refused, title="Answers to fix", severity="error", timeout=10, markup=False)
            return
        screen = next((s for s in reversed(self.screen_stack)
                       if isinstance(s, ResultsScreen) and s.phase is not None and s.phase.index == message.phase),
                      None)
        if screen is not None:
            screen.waiting(message.what_if)
        self._consult_lifecycle(message.lifecycle, message.phase, message.what_if)

    @on(AnswersLoaded)
    def _answers_loaded(self, message: AnswersLoaded) -> None:
        problem = self._open_loaded(message.answers)
        if problem:
            self.notify(problem, title="Cannot open", severity="error", timeout=10, markup=False)

    # --- consultations ----------------------------------------------------------------------------------------------
    def prefetch(self, answers: Answers) -> None:
        """Start the consultation of valid answers before they are confirmed (so results appear at once)."""
        if self.refusal(answers) is not None:
            return
        key = answers_key(answers)
        if key not in self._cache and self._consult_running != key:
            self._start(answers, key, None)

    def cached_result(self, answers: Answers | None) -> RecommendResult | None:
        """The result of these answers if a consultation (a prefetch) already finished, else None."""
        return self._cache.get(answers_key(answers)) if answers is not None else None

    def show_results(self, answers: Answers, what_if: str | None = None) -> None:
        """Show the results of these (validated) answers: at once when known, else after the worker reports."""
        if (refused := self.refusal(answers)) is not None:
            self.notify(refused, title="Answers to fix", severity="error", timeout=10, markup=False)
            return
        key = answers_key(answers)
        self._wanted = key
        screen = self._results_screen()
        if key in self._cache:
            self._present(answers, self._cache[key], what_if)
            return
        screen.waiting(what_if)
        if self._consult_running != key or what_if:
            self._start(answers, key, what_if)

    def _start(self, answers: Answers, key: str, what_if: str | None) -> None:
        self._consult_running = key
        self._consult(answers, key, what_if)

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine", description="Consultation")
    def _consult(self, answers: Answers, key: str, what_if: str | None) -> None:
        from gpuadvisor.knowledge.errors import AdvisorError

        worker = get_current_worker()
        started = perf_counter()
        try:
            result = self._consult_fn(answers, self.get_catalog())
        except AdvisorError as exc:
            if not worker.is_cancelled:
                self.post_message(ConsultationFailed(str(exc), what_if))
            return
        except Exception as exc:  # an engine bug must not take the UI down: say what happened instead
            self.log.error(f"consultation failed: {exc!r}")
            if not worker.is_cancelled:
                self.post_message(ConsultationFailed(f"internal error in the consultation: {exc!r}", what_if))
            return
        if not worker.is_cancelled:
            self.post_message(ConsultationReady(answers, result, perf_counter() - started, what_if))

    @on(ConsultationReady)
    def _consultation_ready(self, message: ConsultationReady) -> None:
        key = answers_key(message.answers)
        if self._consult_running == key:
            self._consult_running = None
        self._cache[key] = message.result
        self.last_elapsed_s = message.elapsed_s
        if key == self._wanted:
            self._present(message.answers, message.result, message.what_if)
        else:
            self._notify_screens("result_cached")  # the review shows the values the consultation assumed

    @on(ConsultationFailed)
    def _consultation_failed(self, message: ConsultationFailed) -> None:
        self._consult_running = None
        if self._wanted is None:
            return
        self._wanted = None
        screen = self._find_results()
        from gpuadvisor.knowledge.sanitize import safe_text

        error = safe_text(message.error, keep_newlines=True)
        if screen is not None:
            screen.failed(error)
        self.notify(error, title="The consultation failed", severity="error", timeout=10, markup=False)

    def _present(self, answers: Answers, result: RecommendResult, what_if: str | None) -> None:
        from gpuadvisor.knowledge.sanitize import clean_strings

        result = clean_strings(result)  # names from overlays, configs, model ids: no escape sequence reaches the screen
        self._wanted = None
        self.previous = self.result if what_if else None
        self.what_if = what_if
        self.answers, self.result = answers, result
        self._record(answers, consultation_title(answers, result, what_if), variant=True)
        self._results_screen().show(result, answers, self.previous, what_if)
        self._notify_screens("recent_changed")

    def _record(self, answers: Answers | LifecycleAnswers, title: str, variant: bool) -> None:
        """Add the consultation to the recent list (a lifecycle as a whole: a phase is never listed on its own); a
        what-if or an edit of the consultation shown (`variant`) is listed under it. Its answers are safe there, so
        the questionnaire's draft of them is no longer needed."""
        from gpuadvisor.tui.draft import clear_draft

        try:
            path = settings.record_consultation(answers.to_toml(), title,
                                                self._recent_base if variant else None)
            if self._recent_base is None or not variant:
                self._recent_base = path
        except OSError as exc:
            self.notify(f"could not record the consultation in the recent list: {exc}", severity="warning",
                        markup=False)
            return
        clear_draft()
        self._notify_screens("draft_changed")

    # --- lifecycles: "and then?" --------------------------------------------------------------------------------
    @property
    def state(self) -> AnswerState:
        """The questionnaire's answers. Built on first use: the form's model (rules.answers, through the questions)
        costs about a tenth of a second to import, which the first screen need not pay (issue 30)."""
        if self._state is None:
            self._state = _answer_state()()
        return self._state

    @state.setter
    def state(self, value: AnswerState) -> None:
        self._state = value

    def and_then(self, state: AnswerState, answers: Answers, workload: str) -> None:
        """The phase just reviewed is kept; the questionnaire opens again for the next one (serve or fine-tune the
        model it trains), starting from the shared answers (rules.lifecycle_answers.SHARED_SECTIONS: one list of
        them) and that model."""
        from gpuadvisor.rules.lifecycle.answers import SHARED_SECTIONS
        from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen

        def shared(key: str) -> bool:  # the lifecycle's shared answers: `stage`, and the keys of its shared tables
            return key.split(".")[0] in SHARED_SECTIONS

        self.lifecycle_phases.append((answers.given(), state.model_from))
        nxt = _answer_state()(detected=dict(state.detected))
        nxt.raw = {k: v for k, v in state.raw.items() if shared(k) or k == "model"}
        nxt.extra = {k: v for k, v in state.extra.items() if shared(k)}
        nxt.model_from = len(self.lifecycle_phases)
        nxt.raw["workload"] = workload
        nxt.model_id, nxt.native_weights = state.model_id, state.native_weights
        self.state = nxt
        self.push_screen(QuestionnaireScreen(nxt, phase=len(self.lifecycle_phases) + 1))

    def lifecycle_data(self, state: AnswerState, answers: Answers) -> dict[str, Any]:
        """The lifecycle answers file the entered phases make: the first phase's shared tables at the top level,
        each phase's own fields, a served or fine-tuned model as `model = "phase:N"`."""
        from gpuadvisor.rules.lifecycle.answers import SHARED_SECTIONS

        phases = [*self.lifecycle_phases, (answers.given(), state.model_from)]
        first = phases[0][0]
        data: dict[str, Any] = {k: first[k] for k in SHARED_SECTIONS if k in first}
        data["phase"] = []
        for given, model_from in phases:
            phase = {k: v for k, v in given.items() if k != "budget"}
            if model_from:
                phase["model"] = f"phase:{model_from}"
            data["phase"].append(phase)
        return data

    def show_lifecycle(self, state: AnswerState, answers: Answers) -> None:
        """Plan the entered phases as one consultation and show the lifecycle results."""
        from gpuadvisor.knowledge.errors import AdvisorError
        from gpuadvisor.rules.lifecycle.answers import parse_lifecycle

        try:
            lifecycle = parse_lifecycle(self.lifecycle_data(state, answers), "questionnaire")
        except AdvisorError as exc:
            self.notify(str(exc), title="Answers to fix", severity="error", timeout=10, markup=False)
            return
        if (refused := self.refusal(lifecycle)) is not None:
            self.notify(refused, title="Answers to fix", severity="error", timeout=10, markup=False)
            return
        self.notify("Planning every phase and the fleet for the whole…", timeout=3)
        self._consult_lifecycle(lifecycle)

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine", description="Lifecycle")
    def _consult_lifecycle(self, lifecycle: Any, phase: int | None = None, what_if: str | None = None) -> None:
        from gpuadvisor.rules.consult import get_advisor

        try:
            result = get_advisor(self.get_catalog()).consult_lifecycle(lifecycle)
        except Exception as exc:  # an engine bug must not take the UI down: say what happened instead
            self.post_message(LifecycleFailed(f"the lifecycle consultation failed: {exc}", phase))
            return
        self.post_message(LifecycleReady(lifecycle, result, phase, what_if))

    @on(LifecycleReady)
    def _lifecycle_ready(self, message: LifecycleReady) -> None:
        from gpuadvisor.knowledge.sanitize import clean_strings
        from gpuadvisor.tui.screens.lifecycle import LifecycleScreen
        from gpuadvisor.tui.screens.results import ResultsScreen
        from gpuadvisor.tui.state.phase import PhaseOf

        result = clean_strings(message.result)
        self.lifecycle_result = result
        what_if = None if message.phase is None else \
            f"{f'phase {message.phase}' if message.phase else 'every phase'}: {message.what_if}"
        self._record(message.lifecycle, consultation_title(message.lifecycle, what_if=what_if),
                     variant=message.phase is not None)
        below = next((s for s in reversed(self.screen_stack) if isinstance(s, LifecycleScreen)), None)
        if message.phase is None or below is None:
            self.push_screen(LifecycleScreen(result, message.lifecycle))
        else:  # a what-if on a phase: the lifecycle below and the phase on top both show the replan
            below.replan(result, message.lifecycle, what_if or "")
            screen = next((s for s in reversed(self.screen_stack)
                           if isinstance(s, ResultsScreen) and s.phase is not None), None)
            if screen is not None and screen.phase is not None:
                before = screen.phase.phase_result
                phase = PhaseOf(message.lifecycle, result, message.phase)
                screen.show(phase.phase_result, phase.answers, before, message.what_if, phase=phase)
        self._notify_screens("recent_changed")

    @on(LifecycleFailed)
    def _lifecycle_failed(self, message: LifecycleFailed) -> None:
        from gpuadvisor.tui.screens.results import ResultsScreen

        if message.phase is not None:
            screen = next((s for s in reversed(self.screen_stack)
                           if isinstance(s, ResultsScreen) and s.phase is not None), None)
            if screen is not None:
                screen.failed(message.error)
        self.notify(message.error, title="The consultation failed", severity="error", timeout=10, markup=False)

    # --- screens ----------------------------------------------------------------------------------------------------
    def _find_results(self) -> ResultsScreen | None:
        """The results screen of the single consultation (a lifecycle phase's is never replaced by one)."""
        from gpuadvisor.tui.screens.results import ResultsScreen

        return next((s for s in reversed(self.screen_stack) if isinstance(s, ResultsScreen) and s.phase is None),
                    None)

    def _pop_to(self, screen: Screen[Any]) -> None:
        while self.screen is not screen and len(self.screen_stack) > 1:
            self.pop_screen()

    def _results_screen(self) -> ResultsScreen:
        """The results screen, brought to the top (pushed if there is none yet)."""
        from gpuadvisor.tui.screens.results import ResultsScreen

        screen = self._find_results()
        if screen is None:
            screen = ResultsScreen()
            self.push_screen(screen)
        else:
            self._pop_to(screen)
        return screen

    def refusal(self, answers: Answers | LifecycleAnswers) -> str | None:
        """Served mode: why these answers cannot run in the shared app (a server path, detection on the server)."""
        return served_mode.refusal(answers) if self.served is not None else None

    def open_answers(self, path: Path) -> str | None:
        """Load an answers file (TOML or a JSON report) and show its results; the problem text on failure."""
        from gpuadvisor.tui.screens.open_answers import read_path

        return self._open_read(read_path, path)

    def open_shared(self, name: str) -> str | None:
        """Served mode: open an answers file by its name in the operator's shared folder (`--data-dir`), confined
        to it; the problem text on failure."""
        from gpuadvisor.tui.screens.open_answers import read_shared

        return self._open_read(read_shared, name)

    def open_pasted(self, text: str) -> str | None:
        """Open answers pasted as text (TOML, or a JSON report); the problem text on failure."""
        from gpuadvisor.tui.screens.open_answers import read_pasted

        return self._open_read(read_pasted, text)

    def _open_read(self, read: Callable[[Any], Answers | LifecycleAnswers], source: Any) -> str | None:
        from gpuadvisor.knowledge.errors import AdvisorError

        try:
            loaded = read(source)
        except AdvisorError as exc:
            return str(exc)
        return self._open_loaded(loaded)

    def _open_loaded(self, loaded: Answers | LifecycleAnswers) -> str | None:
        from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers

        if (refused := self.refusal(loaded)) is not None:
            return refused
        self.lifecycle_phases = []
        self._recent_base = None
        if isinstance(loaded, LifecycleAnswers):  # several phases: planned as one, shown on the lifecycle screen
            self._pop_to(self.screen_stack[0])
            self._consult_lifecycle(loaded)
            return None
        answers = loaded
        self.state = _answer_state().from_answers(answers)
        self._detect_into_state = False
        self.result = None
        self._pop_to(self.screen_stack[0])
        self.show_results(answers)
        return None

    # --- actions (keys, buttons and the command palette) ------------------------------------------------------------
    def action_new_consultation(self, blank: bool = False) -> None:
        """A blank questionnaire; while answers not yet run wait in the draft, first ask: resume them or start blank
        (`blank`: answered, discard them)."""
        from gpuadvisor.tui.draft import draft_summary, load_draft
        from gpuadvisor.tui.screens.choice import Choice, ChoiceScreen
        from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen

        raw = None if blank else load_draft()
        if raw is not None:
            def chosen(choice: str | None) -> None:
                if choice == "resume":
                    self.action_resume_draft()
                elif choice == "blank":
                    self.post_message(DraftDiscarded())
                    self.call_later(self.action_new_consultation, True)

            self.push_screen(ChoiceScreen(
                "Answers not yet run", f"You have answers you have not run yet ({draft_summary(raw)}). Resume them, "
                "or start blank and discard them?",
                [Choice("resume", "Resume them", "u", primary=True), Choice("blank", "Start blank", "n")],
                dialog_id="draft-dialog"), chosen)
            return
        self.lifecycle_phases = []
        self._recent_base = None
        self.state = _answer_state()(detected=dict(self._detected))
        self._detect_into_state = True
        self.result = self.previous = self.answers = None
        self._pop_to(self.screen_stack[0])
        self.push_screen(QuestionnaireScreen(self.state))

    def action_resume_draft(self) -> None:
        """Back to the questionnaire's review with the entries of the draft a crash or a kill left behind."""
        from gpuadvisor.tui.draft import load_draft
        from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen

        raw = load_draft()
        if raw is None:
            self.notify("No unsaved answers to resume.", title="Resume")
            return
        self.lifecycle_phases = []
        self._recent_base = None
        self.state = _answer_state()(raw=dict(raw), detected=dict(self._detected))
        self._detect_into_state = True
        self.result = self.previous = self.answers = None
        self._pop_to(self.screen_stack[0])
        self.push_screen(QuestionnaireScreen(self.state, start="review"))

    def action_edit_answers(self) -> None:
        """Back to the questionnaire's review with the answers of the results shown (what-if changes included): the
        form is derived from them, unless it already holds exactly these answers (then it keeps the text as typed)."""
        from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen

        screen = next((s for s in self.screen_stack if isinstance(s, QuestionnaireScreen)), None)
        if self.answers is not None and self.state.validate()[0] != self.answers:
            self.state = _answer_state().from_answers(self.answers, self._detected if self._detect_into_state else None)
        if screen is None:
            self._pop_to(self.screen_stack[0])
            self.push_screen(QuestionnaireScreen(self.state, start="review"))
            return
        self._pop_to(screen)
        self.call_later(screen.edit, self.state)

    def action_open_answers(self) -> None:
        from gpuadvisor.tui.screens.open_answers import open_answers_screen

        self.push_screen(open_answers_screen())

    def _on_results(self, action: str) -> None:
        """Run a results action (save, compare, explain, what-if) on the results on top: a lifecycle phase's, the
        lifecycle's (save) or the single consultation's."""
        from gpuadvisor.tui.screens.lifecycle import LifecycleScreen
        from gpuadvisor.tui.screens.results import ResultsScreen

        screen = next((s for s in reversed(self.screen_stack)
                       if isinstance(s, ResultsScreen | LifecycleScreen) and s.result is not None), None)
        if screen is None:
            self.notify("Run a consultation first (n: new consultation).", severity="warning")
            return
        if isinstance(screen, LifecycleScreen) and action != "save":
            self.notify("Open a phase's results first (1-9).", severity="warning")
            return
        self._pop_to(screen)
        self.call_later(screen.run_action, action)

    def action_save(self) -> None:
        self._on_results("save")

    def action_compare(self) -> None:
        self._on_results("compare")

    def action_explain(self) -> None:
        self._on_results("explain")

    def action_what_if(self) -> None:
        self._on_results("what_if")

    def action_help(self) -> None:
        from gpuadvisor.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_theme(self) -> None:
        self.theme = DARK_THEME if self.theme == LIGHT_THEME else LIGHT_THEME


SHUTDOWN_GRACE_S = 5.0
"""How long an app asked to end by SIGTERM or SIGHUP may take to shut down before it is ended regardless."""


def _watchdog(signum: int) -> None:
    """End the process if the orderly exit has not ended it within SHUTDOWN_GRACE_S: a hung-up terminal (a closed
    tmux session) can leave the exit waiting on a terminal that is gone, or the exit can be asked for while the app
    is still starting, and the app then lived on after its terminal (5 of 5 starts killed as the title appeared).
    A thread cannot re-raise the signal with its default action (only the main thread sets handlers), so it puts
    the terminal's modes back if it still can and exits with the status a shell gives a signal's death (128 + n)."""
    import os
    import threading

    def end() -> None:
        try:
            import termios

            for fd in (0, 1):
                if os.isatty(fd):
                    attrs = termios.tcgetattr(fd)
                    attrs[3] |= termios.ECHO | termios.ICANON
                    termios.tcsetattr(fd, termios.TCSANOW, attrs)
        except (ImportError, OSError, termios_error()):
            pass
        os._exit(128 + signum)

    timer = threading.Timer(SHUTDOWN_GRACE_S, end)
    timer.daemon = True
    timer.start()


def termios_error() -> type[BaseException]:
    try:
        import termios

        return termios.error
    except ImportError:  # pragma: no cover - Windows
        return OSError


if TYPE_CHECKING:
    from gpuadvisor.tui.state.advisor_state import AdvisorState

    _STATE_CHECK: type[AdvisorState] = GpuAdvisorApp
    """mypy holds the app to the state its screens read (tui/state/advisor_state.py)."""
