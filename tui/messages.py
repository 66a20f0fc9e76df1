"""Messages the app's workers post back to the UI thread ("attributes down, messages up")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from gpuadvisor.rules.answers import Answers
    from gpuadvisor.rules.result import RecommendResult


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


@dataclass
class LifecycleFailed(Message):
    error: str
