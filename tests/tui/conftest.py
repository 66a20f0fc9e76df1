"""Fixtures for the TUI tests: isolated state directories, no cursor blink, one shared catalog, a fixed date."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.hardware_probe import Detection
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.tui.app import GpuAdvisorApp
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.save import SaveScreen

TODAY = date(2026, 1, 15)
"""Report names and headers carry a date: fixed so snapshots and file names are reproducible."""
THEME = "textual-dark"
NO_GPU = Detection(tried=("nvidia-smi: not found", "amd-smi: not found", "rocm-smi: not found"))
"""What detection finds on a machine without GPU tools: the same on every machine the tests run on."""


@pytest.fixture(autouse=True)
def _tui_isolation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Recent consultations and the theme go to the test's own directory; cursors do not blink."""
    monkeypatch.setenv("GPUADVISOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The shipped knowledge base without user overlays, loaded once for the session."""
    return load_catalog(user_dir=None)


def make_app(catalog: Catalog, answers: Any = None, **kwargs: Any) -> GpuAdvisorApp:
    """The real app on the shipped catalog, with a fixed theme and date."""
    kwargs.setdefault("theme", THEME)
    kwargs.setdefault("detect_fn", lambda _catalog: NO_GPU)  # the test machine's own GPUs must not show
    return GpuAdvisorApp(answers, catalog_fn=lambda: catalog, today=TODAY, **kwargs)


async def settle(pilot: Pilot[None]) -> None:
    """Let the knowledge base load (the welcome screen starts that shortly after it is painted), let workers finish
    and their messages reach the screens."""
    app = pilot.app
    assert isinstance(app, GpuAdvisorApp)
    await wait_until(pilot, lambda: app.catalog is not None or app.catalog_error is not None)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(pilot: Pilot[None], predicate: Callable[[], bool], tries: int = 200) -> None:
    """Poll (with pauses) until `predicate` holds; a failing assertion names what never happened."""
    for _ in range(tries):
        if predicate():
            return
        await pilot.pause(0.02)
    assert predicate(), "condition never became true"


Step = Callable[[Pilot[None]], Awaitable[None]]


async def open_save(pilot: Pilot[None]) -> SaveScreen:
    """Wait for the results, press `s`, and return the save dialog it opens."""
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen) and pilot.app.screen.result is not None)
    await pilot.press("s")
    screen = pilot.app.screen
    assert isinstance(screen, SaveScreen)
    return screen


async def what_if(pilot: Pilot[None], changes: dict[str, str], *, apply: bool = True) -> None:
    """From the results: `w`, then in each change's step (a tab of the form) replace the field's text, then Apply
    (Ctrl+N) — as a person would, with the keyboard."""
    from textual.widgets import TabbedContent, TabPane

    from gpuadvisor.tui.screens.whatif import WhatIfScreen

    if not isinstance(pilot.app.screen, WhatIfScreen):
        await pilot.press("w")
        await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, WhatIfScreen)
    for key, text in changes.items():
        field = screen.field(key)
        pane = next(a for a in field.ancestors if isinstance(a, TabPane))
        screen.query_one("#whatif-steps", TabbedContent).active = pane.id or ""
        await pilot.pause()
        field.focus_control()
        await pilot.pause()
        await pilot.press("end", "ctrl+u", *text)
        await pilot.pause()
    if apply:
        await pilot.press("ctrl+n")
        await pilot.pause()
