"""Snapshots of every screen at 80×24 (the floor) and 140×40 (wide), on real consultations; results, compare, the
lifecycle timeline and a lifecycle phase also at 100×30 and 200×50 (test_layout).

Deterministic: fixed theme and date, no cursor blink (conftest), state in a temporary directory, no clock on screen,
notifications cleared before the shot. The results come from the shipped knowledge base, so a change to its data
or to the ranking rules changes these pictures: review the report, then `pytest --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import Answers, parse_answers
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.widgets.findings import FindingList

from .conftest import make_app, settle, wait_until, what_if

SIZES = {"80x24": (80, 24), "140x40": (140, 40)}
INFERENCE: dict[str, Any] = {"workload": "inference", "model": {"name": "llama-3.1-70b"},
                             "precision": {"weights": "int8", "context_tokens": 8192},
                             "inference": {"concurrent_requests": 16, "latency_p95_s": 30.0}}
TRAINING: dict[str, Any] = {"workload": "training", "model": {"name": "llama-3.1-8b"},
                            "training": {"tokens_b": 100.0, "deadline_days": 30.0}}

ON_PREM_QLORA: dict[str, Any] = {"workload": "finetune", "finetune": {"method": "qlora"},
                                 "model": {"name": "llama-3.1-70b"}, "deployment": {"where": "on_prem"}}
"""Dozens of warnings before triage (issue 19): the panel shows a handful, the header NF4 as sized."""

Drive = Callable[[Pilot[None]], Awaitable[None]]


async def _results(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen) and pilot.app.screen.result is not None)


def _quiet(app: Any) -> bool:
    """No consultation pending and no (animated) loading indicator on the results screen."""
    screen = app.screen
    busy = any(not w.is_finished for w in app.workers)
    if isinstance(screen, ResultsScreen):
        return not busy and screen.result is app.result and not screen.query_one("#results-body").loading
    return not busy


async def _steady(pilot: Pilot[None]) -> None:
    """The findings are listed one frame after the ranking: on a loaded machine the shot could come before the
    list's height (and so its scroll bar's thumb) settled (seen on results-finetune-80x24). Wait until the list's
    height is the same over two frames."""
    if not isinstance(pilot.app.screen, ResultsScreen):
        return
    lists = list(pilot.app.screen.query(FindingList))
    last: list[int] = []
    for _ in range(50):
        await pilot.pause(0.02)
        now = [f.virtual_size.height for f in lists]
        if now == last and all(now):
            break
        last = now


def keys(*presses: str, results: bool = False, then_settle: bool = False) -> Drive:
    """A drive: wait for start-up (and the results), press keys, optionally wait for workers again."""

    async def drive(pilot: Pilot[None]) -> None:
        if results:
            await _results(pilot)
        else:
            await settle(pilot)
        await pilot.press(*presses)
        if then_settle:
            await settle(pilot)
            await wait_until(pilot, lambda: _quiet(pilot.app))
            await pilot.pause()
        pilot.app.clear_notifications()
        await _steady(pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    return drive


async def _warning_why(pilot: Pilot[None]) -> None:
    await _results(pilot)
    pilot.app.screen.query_one("#warnings", FindingList).focus()
    await pilot.press("enter")


async def _what_if_applied(pilot: Pilot[None]) -> None:
    await _results(pilot)
    await what_if(pilot, {"precision.context_tokens": "32768"})
    await keys(then_settle=True)(pilot)


MODEL = ("n", "ctrl+n", *"llama-3.1-70b")
TO_PRECISION = (*MODEL, "ctrl+n")

# name → (answers the app opens with, how to get to the screen)
SCENARIOS: dict[str, tuple[dict[str, Any] | None, Drive]] = {
    "welcome": (None, keys()),
    "open-answers": (None, keys("o")),
    "q-workload": (None, keys("n")),
    "q-workload-finetune": (None, keys("n", "up", "enter")),
    "q-model": (None, keys(*MODEL)),
    "q-model-ambiguous": (None, keys("n", "ctrl+n", *"llama 3")),
    "q-precision-error": (None, keys(*TO_PRECISION, "tab", "tab", *"lots")),
    "q-targets": (None, keys(*TO_PRECISION, "ctrl+n")),
    "q-budget": (None, keys(*TO_PRECISION, "ctrl+n", "ctrl+n")),
    "q-deployment": (None, keys(*TO_PRECISION, "ctrl+n", "ctrl+n", "ctrl+n")),
    "q-review": (None, keys(*TO_PRECISION, "ctrl+n", "ctrl+n", "ctrl+n", "ctrl+n", then_settle=True)),
    "results": (INFERENCE, keys(results=True)),
    "results-training": (TRAINING, keys(results=True)),
    "results-ruled-out": (INFERENCE, keys("tab", "right", results=True)),
    "results-all-findings": (INFERENCE, keys("f", results=True)),
    "results-finetune": (ON_PREM_QLORA, keys(results=True)),
    "detail-memory": (INFERENCE, keys("enter", results=True)),
    "detail-speed": (INFERENCE, keys("enter", "p", results=True)),
    "detail-cost": (INFERENCE, keys("enter", "d", results=True)),
    "detail-total": (INFERENCE, keys("enter", "k", results=True)),
    "detail-assumptions": (INFERENCE, keys("enter", "a", results=True)),
    "detail-why": (INFERENCE, keys("enter", "y", results=True)),
    "warning-why": (INFERENCE, _warning_why),
    "compare": (INFERENCE, keys("space", "down", "space", "down", "space", "c", results=True)),
    "what-if": (INFERENCE, keys("w", results=True)),
    "what-if-applied": (INFERENCE, _what_if_applied),
    "save": (INFERENCE, keys("s", results=True)),
    "save-overwrite": (INFERENCE, keys("s", "ctrl+s", results=True)),
    "help": (INFERENCE, keys("f1", results=True)),
}


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
@pytest.mark.parametrize("name", list(SCENARIOS), ids=list(SCENARIOS))
def test_screen(name: str, size: str, snap_compare: Any, catalog: Catalog, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the save dialog's default path is relative: keep it (and its file) here
    if name == "save-overwrite":
        (tmp_path / "gpuadvisor-inference-llama-3.1-70b-2026-01-15.md").write_text("old", encoding="utf-8")
    given, drive = SCENARIOS[name]
    answers: Answers | None = parse_answers(given) if given is not None else None
    assert snap_compare(make_app(catalog, answers), terminal_size=SIZES[size], run_before=drive)


@pytest.mark.parametrize("name", ["results", "results-training", "results-finetune"])
def test_wide_screen(name: str, snap_compare: Any, catalog: Catalog, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A 200-column terminal: the table as wide as its content, the findings panel taking the rest."""
    monkeypatch.chdir(tmp_path)
    given, drive = SCENARIOS[name]
    assert snap_compare(make_app(catalog, parse_answers(given) if given else None), terminal_size=(200, 50),
                        run_before=drive)


@pytest.mark.parametrize("name", ["welcome", "q-precision-error", "results", "detail-memory"])
def test_light_theme(name: str, snap_compare: Any, catalog: Catalog, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The light theme at 80×24: styles use theme variables only, so every screen follows the theme."""
    monkeypatch.chdir(tmp_path)
    given, drive = SCENARIOS[name]
    answers = parse_answers(given) if given is not None else None
    assert snap_compare(make_app(catalog, answers, theme="textual-light"), terminal_size=SIZES["80x24"],
                        run_before=drive)


# --- layout at the three sizes a person uses (issue 29): results, compare, the lifecycle timeline and a phase -----
LAYOUT_SIZES = {"80x24": (80, 24), "100x30": (100, 30), "200x50": (200, 50)}
LIFECYCLE_FILE = Path(__file__).resolve().parents[2] / "examples" / "lifecycle-13b-train-then-serve.toml"


def _lifecycle(*presses: str) -> Drive:
    async def drive(pilot: Pilot[None]) -> None:
        from gpuadvisor.tui.screens.lifecycle import LifecycleScreen

        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, LifecycleScreen), tries=1500)
        await pilot.press(*presses)
        await pilot.pause()
        pilot.app.clear_notifications()

    return drive


LAYOUT: dict[str, tuple[dict[str, Any] | None, Drive]] = {
    "results": SCENARIOS["results"],
    "compare": SCENARIOS["compare"],
    "lifecycle": (None, _lifecycle()),
    "lifecycle-phase": (None, _lifecycle("2")),
    "lifecycle-phase-compare": (None, _lifecycle("2", "c")),
}
COVERED = {("results", "80x24"), ("results", "200x50"), ("compare", "80x24")}
"""Taken by test_screen (80x24) and test_wide_screen (200x50) already."""


@pytest.mark.parametrize(("name", "size"), [(n, s) for n in LAYOUT for s in LAYOUT_SIZES if (n, s) not in COVERED],
                         ids=[f"{n}-{s}" for n in LAYOUT for s in LAYOUT_SIZES if (n, s) not in COVERED])
def test_layout(name: str, size: str, snap_compare: Any, catalog: Catalog, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare fits three options with its labels fixed, the findings panel lists four at 100x30, the timeline's
    Cost column is whole; a lifecycle phase (opened with 2) says which it is."""
    from gpuadvisor.rules.lifecycle.answers import load_any

    monkeypatch.chdir(tmp_path)
    given, drive = LAYOUT[name]
    answers: Any = load_any(LIFECYCLE_FILE) if name.startswith("lifecycle") else parse_answers(given or {})
    assert snap_compare(make_app(catalog, answers), terminal_size=LAYOUT_SIZES[size], run_before=drive)


# --- the three personas of issue 42, each screen they read at 80×24, 100×30 and 200×50 ---------------------------
STUDENT: dict[str, Any] = {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                           "finetune": {"method": "qlora"}, "budget": {"monthly_usd": 20},
                           "current": {"gpu": "laptop"}}
"""A student: QLoRA of an 8B, $20 a month, a laptop (findings in a learner's words, totals of a few dollars)."""
STARTUP: dict[str, Any] = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-70b"},
                           "inference": {"requests_per_minute": 1000}}
"""A startup engineer: a 70B at 1,000 requests a minute (labels that say what differs, the what-if form)."""
INFRA_LEAD: dict[str, Any] = {
    "stage": "production", "budget": {"capex_usd": 2_000_000}, "deployment": {"where": "on_prem"},
    "phase": [{"name": "pretrain", "workload": "training", "model": {"params_b": 13},
               "training": {"tokens_b": 1000, "deadline_days": 60}},
              {"name": "serve", "workload": "inference", "model": "phase:1",
               "inference": {"daily_active_users": 50_000}}]}
"""An infra lead: $2M on premises, pretrain a 13B on 1T tokens in 60 days, then serve (the timeline's On column)."""


async def _startup_what_if(pilot: Pilot[None]) -> None:
    await _results(pilot)
    await what_if(pilot, {"inference.requests_per_minute": "2000"}, apply=False)
    await keys()(pilot)


PERSONAS: dict[str, tuple[dict[str, Any], Drive]] = {
    "student-results": (STUDENT, keys(results=True)),
    "startup-results": (STARTUP, keys(results=True)),
    "startup-what-if": (STARTUP, _startup_what_if),
    "infra-lifecycle": (INFRA_LEAD, _lifecycle()),
}
PERSONA_SIZES = [("student-results", s) for s in LAYOUT_SIZES] + [("startup-results", "80x24"),
                                                                   ("startup-what-if", "80x24")] + \
    [("infra-lifecycle", s) for s in LAYOUT_SIZES]


@pytest.mark.parametrize(("name", "size"), PERSONA_SIZES, ids=[f"{n}-{s}" for n, s in PERSONA_SIZES])
def test_persona(name: str, size: str, snap_compare: Any, catalog: Catalog, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure readable at 80×24: no word or figure cut, labels unique, findings in the reader's words."""
    from gpuadvisor.rules.lifecycle.answers import parse_lifecycle

    monkeypatch.chdir(tmp_path)
    given, drive = PERSONAS[name]
    answers: Any = parse_lifecycle(given, "infra.toml") if "phase" in given else parse_answers(given)
    assert snap_compare(make_app(catalog, answers), terminal_size=LAYOUT_SIZES[size], run_before=drive)
