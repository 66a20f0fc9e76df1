"""What every screen of the app shares: typed access to the running GpuAdvisorApp."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from gpuadvisor.tui.app import GpuAdvisorApp


class AdvisorScreenMixin:
    """Mixed into the app's screens (before `Screen`): `self.advisor` is the app with its state and workers."""

    @property
    def advisor(self) -> GpuAdvisorApp:
        """The running app, typed (screens are only ever pushed by it). Named for the type checker alone: a screen
        module never imports app.py at run time, so the app imports its screens and not the other way round."""
        return cast("GpuAdvisorApp", cast(DOMNode, self).app)
