""""And then?": after a training run the questionnaire plans the next phase, and both are one consultation."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import get_advisor
from gpuadvisor.rules.lifecycle.answers import parse_lifecycle
from gpuadvisor.tui.screens.and_then import AndThenScreen
from gpuadvisor.tui.screens.lifecycle import LifecycleScreen
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.save import SaveScreen

from .conftest import make_app, settle, wait_until


async def to_review(pilot, screen: QuestionnaireScreen) -> None:  # type: ignore[no-untyped-def]
    for _ in range(8):
        if screen.step.review:
            return
        await pilot.press("ctrl+n")
        await pilot.pause()
    raise AssertionError(f"stuck at step {screen.step_id}: {screen.errors}")


async def test_and_then_serve_plans_both_phases_as_one_consultation(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.press("up", "up", "enter")  # Serve → Fine-tune → Train from scratch
        await pilot.pause()
        await pilot.press("ctrl+n")
        await pilot.press(*"1.3", "ctrl+n")  # a 1.3B model from scratch
        await pilot.press("ctrl+n")
        await pilot.press(*"26", "tab", *"20")  # 26B tokens in 20 days
        first = app.screen
        assert isinstance(first, QuestionnaireScreen)
        await to_review(pilot, first)
        hint = first.query_one("#and-then-hint", Static)
        assert "And then?" in str(hint.render())
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert isinstance(app.screen, AndThenScreen)
        await pilot.press("s")  # serve it
        await pilot.pause()
        second = app.screen
        assert isinstance(second, QuestionnaireScreen) and second is not first and second.phase == 2
        assert second.state.raw["workload"] == "inference" and second.state.raw["model"] == "1.3"
        # radios shown chosen are answered by moving on (stage, optimizer, where, after_run, framework)
        first_answers = {"workload": "training", "stage": "production", "model": {"params_b": 1.3},
                         "training": {"tokens_b": 26.0, "deadline_days": 20.0, "deadline_from": "auto",
                                      "optimizer": "adamw"},
                         "deployment": {"where": "either", "after_run": "keep"}, "framework": {"name": "pytorch"}}
        assert app.lifecycle_phases == [(first_answers, None)]
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")  # workload (set), model (carried over), precision
        assert second.step_id == "targets"
        await pilot.press("tab", "tab", "tab", "tab", *"50000")  # past rpm, tokens in/out, concurrency: daily users
        await to_review(pilot, second)
        assert not second.query("#and-then-hint")  # serving is the end of the line
        await pilot.press("ctrl+n")
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, LifecycleScreen))
        screen = app.screen
        assert isinstance(screen, LifecycleScreen)
        expected = get_advisor(catalog).consult_lifecycle(parse_lifecycle(app.lifecycle_data(
            second.state, second.state.validate()[0])))  # type: ignore[arg-type]
        phases = app.lifecycle_data(second.state, second.state.validate()[0])["phase"]  # type: ignore[arg-type]
        assert phases[0] == first_answers
        assert phases[1]["model"] == "phase:1" and phases[1]["inference"]["daily_active_users"] == 50000
        assert phases[1]["workload"] == "inference" and phases[1]["stage"] == "production"
        assert screen.result.model_dump() == expected.model_dump()
        table = screen.query_one("#timeline", DataTable)
        assert table.row_count == 2
        assert str(table.get_row_at(1)[0]) == "2. inference" and str(table.get_row_at(0)[0]) == "1. training"
        assert "Total $" in str(screen.query_one("#lifecycle-totals", Static).render())
        await pilot.press("2")  # phase 2's own results
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen) and app.screen.result is not None
        assert app.screen.result.model_dump() == expected.phases[1].model_dump()


async def test_a_lifecycle_file_given_at_start_opens_on_the_lifecycle_screen(catalog: Catalog) -> None:
    lifecycle = parse_lifecycle({"deployment": {"where": "cloud"}, "phase": [
        {"workload": "training", "model": {"params_b": 1.3}, "training": {"tokens_b": 26.0, "deadline_days": 20.0}},
        {"workload": "inference", "model": "phase:1", "months": 6}]})
    app = make_app(catalog, lifecycle)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, LifecycleScreen))
        assert isinstance(app.screen, LifecycleScreen)
        assert [p.name for p in app.screen.result.phases] == ["training", "inference"]
        assert app.screen.result.lifecycle is not None and app.screen.result.lifecycle.plan[1].months == 6
        await pilot.press("s")  # save the lifecycle's report or its answers file
        await pilot.pause()
        assert isinstance(app.screen, SaveScreen)
        assert app.screen.answers is lifecycle
        assert app.screen.fmt == "md" and "lifecycle" in app.screen._auto_name
