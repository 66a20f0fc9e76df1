"""A phase of a lifecycle, opened from the lifecycle screen, acts on the phase within its lifecycle (issue 29 item 1).

What-if starts from the phase's own answers (the shared budget included), changes the lifecycle and plans it again;
compare, Escape and saving stay with the phase and come back to the lifecycle; Recent lists the lifecycle, never a
consultation of one phase. The lifecycle is the one a user reopens with `gpuadvisor --answers FILE`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers, load_any, parse_lifecycle
from gpuadvisor.tui import settings
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.screens.compare import CompareScreen
from gpuadvisor.tui.screens.lifecycle import LifecycleScreen, timeline_cells, timeline_widths
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.save import SaveScreen
from gpuadvisor.tui.screens.whatif import WhatIfScreen
from gpuadvisor.tui.widgets.question_field import QuestionField

from .conftest import make_app, settle, wait_until, what_if

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lifecycle-13b-train-then-serve.toml"
"""Seed 002's case: train a 13B model from scratch, then serve it to 50,000 daily users, one $2M budget."""


def example() -> LifecycleAnswers:
    loaded = load_any(EXAMPLE)
    assert isinstance(loaded, LifecycleAnswers)
    return loaded


async def lifecycle_screen(pilot: Pilot[None]) -> LifecycleScreen:
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LifecycleScreen), tries=1500)
    screen = pilot.app.screen
    assert isinstance(screen, LifecycleScreen)
    return screen


async def open_phase(pilot: Pilot[None], n: int) -> ResultsScreen:
    await pilot.press(str(n))
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ResultsScreen) and screen.phase is not None and screen.phase.index == n
    return screen


async def type_into(pilot: Pilot[None], key: str, text: str) -> None:
    await what_if(pilot, {key: text}, apply=False)


def test_a_what_if_change_goes_into_the_lifecycle() -> None:
    """The budget is the lifecycle's (its shared table); anything else is the phase's own (its keys win)."""
    lc = example()
    capped = lc.with_changes(2, {"constraints.max_gpus": 48, "budget.capex_usd": 500_000.0})
    assert capped.data["budget"] == {"capex_usd": 500_000.0}
    assert capped.data["phase"][1]["constraints"] == {"max_gpus": 48}
    assert "budget" not in capped.data["phase"][1] and "constraints" not in capped.data["phase"][0]
    assert capped.phases[1].answers.constraints.max_gpus == 48 and capped.phases[0].answers.constraints.max_gpus is None
    assert capped.phases[0].answers.budget.capex_usd == 500_000.0  # one budget for every phase
    assert capped.data["phase"][1]["model"] == "phase:1"  # still the model phase 1 trains
    assert capped.phases[1].answers.model.params_b == 13
    unset = capped.with_changes(1, {"budget.capex_usd": None})
    assert "budget" not in unset.data and unset.phases[1].answers.budget.capex_usd is None
    with pytest.raises(InputError, match=r"phase\[2\].*max_gpus"):
        lc.with_changes(2, {"constraints.max_gpus": 0})


def test_the_timeline_fits_its_cost_at_80_columns(catalog: Catalog) -> None:
    """The report's Cost cell (`$43,334 ($62,667 to buy, $10,423 site, $3,224 power, −$32,980 resale)`) as the
    total over one line per part, before the long machine title, which takes the width left."""
    from gpuadvisor.rules.consult import get_advisor

    result = get_advisor(catalog).consult_lifecycle(example())
    rows = timeline_cells(result)
    assert [r[0].split("\n") for r in rows] == [["1. pretrain", "training from scratch"], ["2. serve", "inference"]]
    plans = result.lifecycle.plan if result.lifecycle else []
    for row, plan in zip(rows, plans, strict=True):
        total, *parts = row[2].split("\n")
        assert total.startswith("$") and " " not in total
        assert bool(plan.capex_usd) == any(p.endswith(" to buy") for p in parts)
    bought = next(r for r, p in zip(rows, plans, strict=True) if p.capex_usd)
    report_cost = c.timeline_rows(result)[1][5]  # `$43,334 ($62,667 to buy, $10,423 site, …)`
    assert bought[2].split("\n") == report_cost.removesuffix(")").replace(" (", ", ").split(", ")
    for width in (80, 100, 200):
        widths = timeline_widths(rows, width)
        assert sum(widths) + 2 * len(widths) + 4 <= width  # every column on screen, none scrolled away
        assert widths[2] >= max(len(line) for r in rows for line in r[2].split("\n"))  # no cost line wraps


async def test_what_if_in_a_reopened_lifecycle_replans_the_lifecycle(catalog: Catalog) -> None:
    app = make_app(catalog, example())
    async with app.run_test(size=(100, 30)) as pilot:
        life = await lifecycle_screen(pilot)
        first = life.result
        screen = await open_phase(pilot, 1)
        assert screen.result is first.phases[0] and screen.answers is not None
        assert screen.answers.workload == "training" and screen.answers.model.params_b == 13
        assert "Phase 1 of 2 (pretrain)" in str(screen.query_one("#results-phase", Static).render())
        await pilot.press("w")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, WhatIfScreen) and dialog.phase is screen.phase
        # the form starts from the phase's answers, the shared budget included (was empty: issue 29)
        assert dialog.trial.raw["budget.capex_usd"] == "2000000"
        assert dialog.trial.raw["model"] == "13" and dialog.trial.raw["workload"] == "training"
        await type_into(pilot, "constraints.max_gpus", "12")
        await pilot.press("ctrl+n")
        await pilot.pause()
        await wait_until(pilot, lambda: life.lifecycle is not None and life.result is not first, tries=1500)
        await settle(pilot)
        assert app.screen is screen  # the phase is shown again, replanned; no single consultation replaced it
        assert app.answers is None and app.result is None
        assert life.lifecycle.data["phase"][0]["constraints"] == {"max_gpus": 12}
        assert life.lifecycle.data["budget"] == {"capex_usd": 2_000_000}
        assert screen.phase is not None and screen.phase.result is life.result
        assert screen.result is life.result.phases[0]
        assert screen.result.answers["model"] == {"params_b": 13.0}  # the 13B model, not another one
        options = [*screen.result.recommendations, *screen.result.runners_up]
        assert options and all(r.count <= 12 for r in options)
        assert screen.previous is first.phases[0] and screen.what_if == "At most this many GPUs not set → 12 GPUs"
        banner = str(screen.query_one("#results-banner", Static).render())
        assert "What-if: At most this many GPUs not set → 12 GPUs" in banner
        # Recent lists the lifecycle (as reopened, the change under it: one entry, issue 42): never a consultation
        # of one phase
        recent = settings.load_recent()
        assert len(recent) == 1 and recent[0].title.startswith("lifecycle · pretrain → serve")
        changed = recent[0].what_ifs[0]
        assert changed.title.startswith("lifecycle · pretrain → serve")
        assert changed.title.endswith("what-if: phase 1: At most this many GPUs not set → 12 GPUs")
        assert "max_gpus = 12" in Path(changed.path).read_text()
        reopened = load_any(Path(changed.path))
        assert isinstance(reopened, LifecycleAnswers) and reopened.phases[0].answers.constraints.max_gpus == 12
        await pilot.press("escape")  # back to the lifecycle, which shows the replan
        await pilot.pause()
        assert app.screen is life
        banner = str(life.query_one("#lifecycle-banner", Static).render())
        assert "phase 1: At most this many GPUs not set → 12 GPUs" in banner


async def test_compare_escape_and_save_stay_with_the_phase(catalog: Catalog) -> None:
    app = make_app(catalog, example())
    async with app.run_test(size=(100, 30)) as pilot:
        life = await lifecycle_screen(pilot)
        screen = await open_phase(pilot, 2)
        assert screen.answers is not None and screen.answers.workload == "inference"
        # the banner gives the phase's place and cost in the lifecycle's plan: its own results price it alone
        plan = life.result.lifecycle.plan[1] if life.result.lifecycle else None
        assert plan is not None and plan.start_month > 0
        banner = str(screen.query_one("#results-phase", Static).render())
        assert f"planned {c.phase_when(plan)}, {c.usd(c.phase_spend(plan))}" in banner
        await pilot.press("c")
        await pilot.pause()
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.result is life.result.phases[1]
        assert str(compare.query_one("#compare-title", Static).render()).startswith("Phase 2 of 2 (serve)")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("s")  # the lifecycle's report or answers file, which reopens the whole
        await pilot.pause()
        assert isinstance(app.screen, SaveScreen)
        assert app.screen.answers is life.lifecycle and app.screen.result is life.result
        # ... and the dialog says so: the phase on screen is one part of what is written
        assert str(app.screen.query_one("#save-scope", Static).render()).startswith(
            "Phase 2 is one of the lifecycle's 2 phases: the whole lifecycle is saved")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("e")  # no questionnaire for one phase: edit is not offered
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is life
        # the app's own compare (command palette) acts on the lifecycle's phase too, never on a stale consultation
        await pilot.press("2")
        await pilot.pause()
        await app.run_action("compare")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen) and app.screen.phase == "Phase 2 of 2 (serve)"


async def test_a_phase_what_if_with_a_lifecycle_entered_in_the_questionnaire(catalog: Catalog) -> None:
    """The and-then path: a lifecycle entered phase by phase, a what-if on its phase 2 keeps both phases."""
    lifecycle = parse_lifecycle({"deployment": {"where": "cloud"}, "phase": [
        {"workload": "training", "model": {"params_b": 1.3}, "training": {"tokens_b": 26.0, "deadline_days": 20.0}},
        {"workload": "inference", "model": "phase:1", "months": 6}]})
    app = make_app(catalog, lifecycle)
    async with app.run_test(size=(120, 36)) as pilot:
        life = await lifecycle_screen(pilot)
        await open_phase(pilot, 2)
        await pilot.press("w")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, WhatIfScreen)
        assert dialog.trial.raw["deployment.where"] == "cloud"  # the shared answer, not the default (either)
        await type_into(pilot, "precision.context_tokens", "16384")
        await pilot.press("ctrl+n")
        await pilot.pause()
        await wait_until(pilot, lambda: life.lifecycle is not lifecycle, tries=1500)
        await settle(pilot)
        assert [p.name for p in life.result.phases] == ["training", "inference"]
        assert life.lifecycle.data["phase"][1]["precision"] == {"context_tokens": 16384}
        assert life.lifecycle.phases[1].answers.precision.context_tokens == 16384
        assert life.lifecycle.phases[0].answers.precision.context_tokens != 16384
        assert life.lifecycle.data["phase"][1]["months"] == 6


async def test_what_if_on_the_lifecycle_changes_what_every_phase_shares(catalog: Catalog) -> None:
    """Issue 42: w on the lifecycle screen asks the answers its phases share (stage, budget, deployment,
    constraints, framework, current hardware) and plans the whole again with them changed in its shared tables."""
    app = make_app(catalog, example())
    async with app.run_test(size=(100, 30)) as pilot:
        life = await lifecycle_screen(pilot)
        first = life.result
        await pilot.press("w")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, WhatIfScreen) and form.shared is life.lifecycle
        asked = {f.question.key for f in form.query(QuestionField)}
        assert {"stage", "budget.capex_usd", "deployment.where", "constraints.vendors"} <= asked
        assert not asked & {"workload", "model", "training.tokens_b", "inference.daily_active_users"}
        await what_if(pilot, {"budget.capex_usd": "1M"})
        await wait_until(pilot, lambda: life.result is not first, tries=1500)
        await settle(pilot)
        assert app.screen is life
        assert life.lifecycle.data["budget"] == {"capex_usd": 1_000_000}
        assert all(p.answers.budget.capex_usd == 1_000_000 for p in life.lifecycle.phases)
        assert "every phase: Purchase budget 2,000,000 → 1,000,000 USD" in str(
            life.query_one("#lifecycle-banner", Static).render())


INFRA_LEAD = {"stage": "production", "budget": {"capex_usd": 2_000_000}, "deployment": {"where": "on_prem"},
              "phase": [{"name": "pretrain", "workload": "training", "model": {"params_b": 13},
                         "training": {"tokens_b": 1000, "deadline_days": 60}},
                        {"name": "serve", "workload": "inference", "model": "phase:1",
                         "inference": {"daily_active_users": 50_000}}]}
"""The infra lead of issue 42: $2M on premises, a 13B pretrained on 1T tokens in 60 days, then served; its
timeline's On column read "3 ×", "OAM", "(ai" at 80 columns (How took "reuse (bought in phase 1)" whole)."""


def test_the_infra_leads_timeline_cuts_no_word_at_80_columns(catalog: Catalog) -> None:
    from gpuadvisor.rules.consult import get_advisor

    result = get_advisor(catalog).consult_lifecycle(parse_lifecycle(INFRA_LEAD, "infra.toml"))
    planned = timeline_cells(result)
    # the plan as issue 42 saw it (phase 2 reusing phase 1's purchase) besides the plan as it now is
    reused = [planned[0], [*planned[1][:3], "reuse (bought in phase 1)", "2 of the 24 × AMD Instinct MI350X bought"]]
    for rows in (planned, reused):
        check_words_fit(rows)


def check_words_fit(rows: list[list[str]]) -> None:
    for width in (80, 100, 200):
        widths = timeline_widths(rows, width)
        assert sum(widths) + 2 * len(widths) + 4 <= width, (width, widths)
        for i in (3, 4):  # How and On wrap by words: each word fits its column
            assert widths[i] >= max(len(w) for r in rows for w in r[i].split()), (width, i, widths)
