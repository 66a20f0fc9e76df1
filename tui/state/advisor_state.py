"""What every screen of the app shares: typed access to the state the app hands down.

Screens post messages up (tui/messages.py) and read what the app holds through `AdvisorState`, a Protocol named
here: a screen module never imports app.py, so the app imports its screens and not the other way round (no circle).
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.tui.served import Served


class AdvisorState(Protocol):
    """What the app hands down to its screens (tui/app.py's GpuAdvisorApp is the one implementation)."""

    catalog: Any | None
    """The knowledge base, once loaded in the background (None until then)."""
    catalog_error: str | None
    """Why the knowledge base could not be loaded, if it could not."""
    served: Served | None
    """Served mode (`gpuadvisor serve`): downloads instead of files, no server path read."""
    today: date | None
    """The date in report names and headers (a seam for tests; None: the real date)."""

    def cached_result(self, answers: Answers | None) -> RecommendResult | None: ...


class AdvisorScreenMixin:
    """Mixed into the app's screens (before `Screen`): `self.advisor` is the app's state, typed."""

    @property
    def advisor(self) -> AdvisorState:
        """The running app, as the state it hands down (screens are only ever pushed by it)."""
        return cast("AdvisorState", cast(DOMNode, self).app)
