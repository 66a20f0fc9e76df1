"""Messages the app's workers post back to the UI thread ("attributes down, messages up")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers


@dataclass
class CatalogLoaded(Message):
    """The knowledge base finished loading in its worker thread."""

    catalog: Any


@dataclass
class HardwareDetected(Message):
    """Hardware detection finished (knowledge.hardware_probe.Detection), found something or not."""

    detection: Any


@dataclass
class CatalogFailed(Message):
    error: str


@dataclass
class ConsultationReady(Message):
    """A consultation finished: `what_if` names the change when it was a what-if rerun."""

    answers: Answers
    result: RecommendResult
    elapsed_s: float
    what_if: str | None = None


@dataclass
class ConsultationFailed(Message):
    error: str
    what_if: str | None = None


@dataclass
class LifecycleReady(Message):
    """A lifecycle consultation (several phases) finished: its answers (LifecycleAnswers) and result."""

    lifecycle: Any
    result: RecommendResult
    phase: int | None = None
    """A what-if on this phase (1-based) asked for the replan: the phase's results are shown again."""
    what_if: str | None = None


@dataclass
class LifecycleFailed(Message):
    error: str
    phase: int | None = None


# --- screens → app ("messages up"): what a screen asks the app, which owns the consultation's state ---------------
@dataclass
class ResultsRequested(Message):
    """Show the results of these answers (validated once, where they were entered); `what_if` names a what-if's
    change (the results then mark what moved)."""

    answers: Answers
    what_if: str | None = None


@dataclass
class PrefetchRequested(Message):
    """The review shows valid answers: start their consultation before they are confirmed."""

    answers: Answers


@dataclass
class LifecycleRequested(Message):
    """Plan the phases entered with "and then?" and this last one (its entries and validated answers) as one
    lifecycle."""

    state: Any
    """The last phase's AnswerState (which earlier phase's model it uses)."""
    answers: Answers


@dataclass
class NextPhaseRequested(Message):
    """"And then?": keep this phase and open the questionnaire for the next (`workload`) on the model it trains."""

    state: Any
    answers: Answers
    workload: str


@dataclass
class PhaseDropped(Message):
    """Back from phase N's first step: phase N-1 is being edited again (its entries are the current form)."""

    state: Any


@dataclass
class PhaseWhatIf(Message):
    """A what-if on a phase of a lifecycle: the lifecycle with the change (validated), replanned as a whole, and the
    phase shown again with what moved."""

    lifecycle: Any
    """The changed LifecycleAnswers."""
    phase: int
    """1-based; 0: the answers every phase shares (a what-if on the lifecycle screen)."""
    what_if: str


@dataclass
class DraftDiscarded(Message):
    """The user discarded the questionnaire's answers (leaving it, or starting blank): the draft is gone."""


@dataclass
class AnswersLoaded(Message):
    """An answers file (or pasted answers) was read and validated: show its results (a lifecycle's on the lifecycle
    screen)."""

    answers: Any
    """Answers or LifecycleAnswers."""


@dataclass
class WarmUpRequested(Message):
    """The first screen is painted: parse the other styles and load the knowledge base."""


@dataclass
class CatalogReloadRequested(Message):
    """New prices were written (`kb refresh`): load the knowledge base again."""
