"""Whole consultations typed with the keyboard, checked against the engine's own output for the same answers."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.pilot import Pilot

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.app import GpuAdvisorApp
from gpuadvisor.tui.screens.questionnaire import QuestionnaireScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.widgets.ranking_table import RankingTable, cells, columns_for

from .conftest import make_app, settle, wait_until


def table_rows(app: GpuAdvisorApp) -> list[tuple[str, dict[str, str]]]:
    """(option id, column key → text) for every row of the results table, top to bottom."""
    table = app.screen.query_one("#ranking", RankingTable)
    keys = [str(c.key.value) for c in table.ordered_columns]
    out = []
    for row in table.ordered_rows:
        values = table.get_row(row.key)
        out.append((str(row.key.value), {k: v.plain.strip() if isinstance(v, Text) else str(v)
                                         for k, v in zip(keys, values, strict=True)}))
    return out


def assert_table_is(app: GpuAdvisorApp, expected: RecommendResult) -> None:
    """The table shows exactly the engine's options, in its order, with its figures."""
    workload = str(expected.answers_effective["workload"])
    options = [*expected.recommendations, *expected.runners_up]
    rows = table_rows(app)
    assert [option for option, _ in rows] == [r.option for r in options]
    compact = app.screen.query_one("#ranking", RankingTable).compact
    numeric = [c.key for c in columns_for(workload) if c.key in {"rank", "count", "memory", "speed", "cost", "unit",
                                                                   "score"}]
    for (_, shown), rec in zip(rows, options, strict=True):
        want = cells(rec, workload, compact)
        assert {k: shown[k] for k in numeric} == {k: want[k] for k in numeric}
        assert shown["fits"] == want["fits"]


async def run_to_results(pilot: Pilot[None]) -> None:
    """From any step: Next until the review, then Get results, and wait for the worker."""
    screen = pilot.app.screen
    assert isinstance(screen, QuestionnaireScreen)
    for _ in range(8):
        if screen.step.review:
            break
        await pilot.press("ctrl+n")
        await pilot.pause()
    assert screen.step.review, f"stuck at step {screen.step_id}: {screen.errors}"
    await pilot.press("ctrl+n")
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen) and pilot.app.screen.result is not None)


async def check(app: GpuAdvisorApp, catalog: Catalog, given: dict[str, Any]) -> None:
    expected = consult(parse_answers(given), catalog)
    assert app.answers is not None
    assert app.answers.given() == given
    assert app.result is not None
    assert app.result.model_dump() == expected.model_dump()
    assert_table_is(app, expected)


async def test_inference_consultation(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        assert isinstance(app.screen, QuestionnaireScreen)
        await pilot.press("ctrl+n")  # workload: inference is the default, confirmed by Next
        await pilot.press(*"llama-3.1-8b", "ctrl+n")
        assert app.screen.step_id == "precision"
        await pilot.press("tab", "tab", *"8192", "ctrl+n")  # weights, KV cache, then context
        assert app.screen.step_id == "targets"
        await pilot.press(*"120", "tab", "tab", "tab", *"16")  # requests/min, then peak concurrency
        await run_to_results(pilot)
        await check(app, catalog, {
            "workload": "inference",
            "stage": "production",  # a radio shown chosen is answered by moving on (and brings its service level)
            "model": {"name": "llama-3.1-8b"},
            "precision": {"context_tokens": 8192},
            "inference": {"requests_per_minute": 120.0, "concurrent_requests": 16, "engine": "auto"},
            "deployment": {"where": "either"},
            "framework": {"name": "pytorch"},
        })
        top = app.result.recommendations[0]  # type: ignore[union-attr]
        assert top.failover and top.unit.machines >= 2  # production serving: N+1 machines


async def test_training_consultation(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.press("up", "up", "enter")  # Serve → Fine-tune → Train from scratch
        await pilot.pause()
        await pilot.press("ctrl+n")
        await pilot.press(*"1.3", "ctrl+n")  # a bare size in billions
        assert app.screen.step_id == "precision"
        await pilot.press("ctrl+n")
        assert app.screen.step_id == "targets"
        await pilot.press(*"26", "tab", *"20")  # 26 B tokens, 20 days
        await run_to_results(pilot)
        await check(app, catalog, {
            "workload": "training",
            "stage": "production",
            "model": {"params_b": 1.3},
            "training": {"tokens_b": 26.0, "deadline_days": 20.0, "deadline_from": "auto", "optimizer": "adamw"},
            "deployment": {"where": "either", "after_run": "keep"},  # issue 39: asked when buying for a run
            "framework": {"name": "pytorch"},
        })
        assert all(r.training_days is not None for r in app.result.recommendations)  # type: ignore[union-attr]


async def test_finetune_consultation(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.press("up", "enter")  # Fine-tune
        await pilot.pause()
        await pilot.press("tab", "tab")  # stage → fine-tuning method (asked only when fine-tuning)
        assert app.focused is not None and app.focused.id == "q-finetune-method"
        await pilot.press("down", "enter")  # LoRA → QLoRA
        await pilot.pause()
        await pilot.press("ctrl+n")
        await pilot.press(*"mistral-7b", "ctrl+n")
        assert app.screen.step_id == "precision"
        await pilot.press("ctrl+n")
        await pilot.press(*"0.2", "ctrl+n")  # 200 M tokens of fine-tuning data
        await run_to_results(pilot)
        await check(app, catalog, {
            "workload": "finetune",
            "model": {"name": "mistral-7b-v0.1"},  # the loose name is stored as the knowledge-base id it matched
            "stage": "production",
            "finetune": {"method": "qlora"},
            "training": {"tokens_b": 0.2, "deadline_from": "auto", "optimizer": "adamw"},
            "deployment": {"where": "either", "after_run": "keep"},
            "framework": {"name": "pytorch"},
        })


async def test_answers_file_opens_at_the_results(catalog: Catalog, tmp_path: Any) -> None:
    given = {"workload": "inference", "model": {"name": "llama-3.1-70b"}, "precision": {"weights": "int4"}}
    path = tmp_path / "serve.toml"
    path.write_text(parse_answers(given).to_toml(), encoding="utf-8")
    from gpuadvisor.rules.inputs.answers import load_answers

    app = make_app(catalog, load_answers(path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        await check(app, catalog, given)
