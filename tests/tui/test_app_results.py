"""Results: detail with the WHY tree, finding explanations, compare, what-if with moves, help, palette, theme."""

from __future__ import annotations

import json
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TabbedContent

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.inputs.answers import Answers, parse_answers
from gpuadvisor.tui import settings
from gpuadvisor.tui.app import GpuAdvisorApp
from gpuadvisor.tui.screens.compare import CompareScreen, compare_rows
from gpuadvisor.tui.screens.detail import DetailScreen
from gpuadvisor.tui.screens.help import HelpScreen
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.screens.whatif import WhatIfScreen
from gpuadvisor.tui.screens.why import WhyScreen
from gpuadvisor.tui.widgets.findings import FindingList
from gpuadvisor.tui.widgets.question_field import QuestionField
from gpuadvisor.tui.widgets.ranking_table import RankingTable, moves
from gpuadvisor.tui.widgets.why_tree import WhyTree

from .conftest import make_app, settle, wait_until, what_if

GIVEN: dict[str, Any] = {"workload": "inference", "model": {"name": "llama-3.1-70b"},
                         "precision": {"context_tokens": 8192}, "inference": {"concurrent_requests": 16}}


def answers() -> Answers:
    return parse_answers(GIVEN)


async def opened(pilot: Pilot[None]) -> ResultsScreen:
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen) and pilot.app.screen.result is not None)
    screen = pilot.app.screen
    assert isinstance(screen, ResultsScreen)
    return screen


async def test_detail_shows_the_selected_option_and_its_why_tree(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        await pilot.press("down", "enter")  # the second option
        detail = app.screen
        assert isinstance(detail, DetailScreen)
        assert screen.result is not None
        second = screen.result.recommendations[1]
        assert detail.rec == second
        assert str(detail.query_one("#detail-title", Static).render()).startswith(f"#2 {second.title}")
        # the memory chart lists what a served model holds: no gradient or optimizer-state rows of 0.0 GB
        chart = str(detail.query_one("#memory-chart").render())
        assert "Weights" in chart and "Runtime overhead" in chart
        assert "Gradients" not in chart and "Optimizer states" not in chart
        await pilot.press("y")
        assert detail.query_one("#detail-tabs", TabbedContent).active == "tab-why"
        tree = detail.query_one("#why-tree", WhyTree)
        nodes = [n for n in tree.root.children]
        steps = [n.data for n in _walk(tree.root) if n.data is not None]
        assert steps == second.why  # every step of the chain is in the tree, in order
        assert len(nodes) == sum(1 for s in second.why if s.depth == 0)
        sources = [str(n.label) for n in _walk(tree.root) if str(n.label).startswith("source: ")]
        assert sources, "the tree reaches source documents"
        await pilot.press("escape")
        assert app.screen is screen


def _walk(node: Any) -> list[Any]:
    out = []
    for child in node.children:
        out.append(child)
        out.extend(_walk(child))
    return out


async def test_a_warning_explains_itself(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        assert screen.result is not None and screen.result.warnings
        warnings = screen.query_one("#warnings", FindingList)
        warnings.focus()
        await pilot.press("enter")
        assert isinstance(app.screen, WhyScreen)
        first = screen.result.warnings[0]  # in the triaged order: about the recommended option first
        assert app.screen.why == first.why
        labels = [o.prompt for o in warnings._options]  # severity is spelled out, not colour alone
        assert all(str(p).startswith(("⚠ RISK", "➜ ADVICE", "ℹ NOTE")) for p in labels)
        assert len(labels) == sum(w.shown for w in screen.result.warnings) < len(screen.result.warnings)


async def test_show_all_findings_and_back(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        assert screen.result is not None
        findings = screen.query_one("#warnings", FindingList)
        total, shown = len(screen.result.warnings), sum(w.shown for w in screen.result.warnings)
        tabs = screen.query_one("#findings", TabbedContent)
        assert str(tabs.get_tab("tab-warnings").label) == f"Findings ({shown} of {total}, f: all)"
        await pilot.press("f")
        await pilot.pause()
        assert findings.option_count == total and str(tabs.get_tab("tab-warnings").label) == f"Findings ({total})"
        await pilot.press("f")
        await pilot.pause()
        assert findings.option_count == shown


async def test_compare_marked_options(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        assert screen.result is not None
        recs = screen.result.recommendations
        await pilot.press("space", "down", "down", "space", "c")
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert compare.options == [recs[0], recs[2]]
        table = compare.query_one("#compare", DataTable)
        assert len(table.columns) == 3
        shown = {table.get_row(r.key)[0].plain: [c.plain for c in table.get_row(r.key)[1:]] for r in table.ordered_rows}
        assert shown == dict(compare_rows([recs[0], recs[2]]))
        total = shown["Total"]  # the ranked figure: the lower, the better
        best = 0 if recs[0].decision_cost.usd < recs[2].decision_cost.usd else 1
        assert total[best].startswith("★")


async def test_no_more_than_three_marks(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        await pilot.press("space", "down", "space", "down", "space", "down", "space")
        table = screen.query_one("#ranking", RankingTable)
        assert len(table.marked) == 3
        assert screen.result is not None
        assert table.marked == [r.option for r in screen.result.recommendations[:3]]


async def test_what_if_reruns_and_marks_what_moved(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        before = app.result
        assert before is not None
        await pilot.press("w")
        assert isinstance(app.screen, WhatIfScreen)
        await what_if(pilot, {"precision.context_tokens": "32768"})
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not before)
        assert app.screen is screen
        expected = consult(parse_answers({**GIVEN, "precision": {"context_tokens": 32768}}), catalog)
        assert app.result is not None and app.result.model_dump() == expected.model_dump()
        table = screen.query_one("#ranking", RankingTable)
        assert table.moved == moves(before, expected)
        banner = str(screen.query_one("#results-banner", Static).render())
        assert banner.startswith("What-if: Context length 8,192 → 32,768 tokens")
        for option, move in table.moved.items():
            assert table.get_row(option)[-1].plain.strip() == move
        # the recent list tells the what-if from the consultation it came from, and lists it under it: one entry per
        # consultation (issue 42)
        recent = settings.load_recent()
        assert len(recent) == 1 and recent[0].title.endswith(" · context 8,192")
        assert [w.title for w in recent[0].what_ifs] == [
            recent[0].title.replace("8,192", "32,768") + " · what-if: Context length 8,192 → 32,768 tokens"]


async def test_what_if_rejects_an_invalid_change(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot)
        before = app.result
        await what_if(pilot, {"precision.context_tokens": "0"})
        assert isinstance(app.screen, WhatIfScreen)
        error = str(app.screen.query_one("#whatif-error", Static).render())
        assert "precision.context_tokens: Input should be greater than or equal to 1" in error
        assert app.result is before
        assert app.state.raw["precision.context_tokens"] == "8192"  # nothing changed


async def test_help_lists_the_screen_and_its_keys(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert "## Results" in app.screen.text
        for key, text in (("`c`", "side by side"), ("`w`", "Change an answer"), ("`s`", "Save a report")):
            assert any(line.startswith(f"| {key} |") and text in line for line in app.screen.text.splitlines())
        await pilot.press("escape")
        assert isinstance(app.screen, ResultsScreen)


async def test_palette_runs_the_main_actions(catalog: Catalog) -> None:
    app = make_app(catalog, answers())
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot)
        await pilot.press("ctrl+p", *"compare")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))


async def test_theme_toggles_and_is_remembered(catalog: Catalog) -> None:
    app = GpuAdvisorApp(catalog_fn=lambda: catalog)  # no theme forced: the saved one is used and updated
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
    state = json.loads((settings.data_dir() / "tui.json").read_text())
    assert state["theme"] == "textual-light"
    again = GpuAdvisorApp(catalog_fn=lambda: catalog)
    async with again.run_test(size=(100, 30)) as pilot:
        assert again.theme == "textual-light"


async def test_a_long_why_line_is_shown_whole(catalog: Catalog) -> None:
    """The tree cuts a line at its width; the line under it shows the highlighted one whole, wrapped."""
    app = make_app(catalog, answers())
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(pilot)
        await pilot.press("enter", "y")
        detail = app.screen
        assert isinstance(detail, DetailScreen)
        tree = detail.query_one("#why-tree", WhyTree)
        step = None
        for _ in range(12):  # down to the first line longer than the terminal is wide
            await pilot.press("down")
            await pilot.pause()
            step = tree.cursor_node.data if tree.cursor_node is not None else None
            if step is not None and len(step.text) > 80:
                break
        assert step is not None and len(step.text) > 80
        shown = str(detail.query_one(".why-detail", Static).render())
        assert step.text.split()[-1] in shown.replace("\n", " ")


async def test_many_findings_show_a_handful(catalog: Catalog) -> None:
    """The on-prem QLoRA consultation of issue 19 (dozens of warnings before triage): at most five by default,
    the recommended option's first, and the header says NF4, the format it was sized in."""
    given = {"workload": "finetune", "finetune": {"method": "qlora"}, "model": {"name": "llama-3.1-70b"},
             "deployment": {"where": "on_prem"}}
    app = make_app(catalog, parse_answers(given))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        assert screen.result is not None
        findings = screen.query_one("#warnings", FindingList)
        await pilot.pause()
        assert 0 < findings.option_count <= 5 < len(screen.result.warnings)
        assert "NF4" in str(screen.query_one("#results-asked", Static).render())



async def test_what_if_asks_any_question_and_a_change_that_changes_nothing_runs_nothing(catalog: Catalog) -> None:
    """Issue 42: the what-if offered six answers (none of training tokens, hours, deadline, requests a minute,
    latency or vendors), and a change that changed nothing reran and reported "budget.capex_usd 2000000 →
    2000000". The form holds every question of the questionnaire, in its steps, with its default and why line."""
    app = make_app(catalog, answers())
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(pilot)
        before = app.result
        await pilot.press("w")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, WhatIfScreen)
        asked = {f.question.key for f in form.query(QuestionField) if f.display}
        for key in ("inference.requests_per_minute", "inference.latency_p95_s", "constraints.vendors",
                    "deployment.hours_per_month", "inference.engine", "model", "workload", "stage"):
            assert key in asked, key
        assert "training.tokens_b" not in asked  # serving: the skip logic holds
        why = str(form.field("inference.requests_per_minute").query_one(".question-why", Static).render())
        assert why.startswith("why: Requests/min") and "Empty: no throughput target" in why
        # typed differently, the same answer: nothing runs
        await what_if(pilot, {"inference.concurrent_requests": "16.0"})
        assert isinstance(app.screen, WhatIfScreen)
        error = str(form.query_one("#whatif-error", Static).render())
        assert error.startswith("Nothing changed") and "nothing was run" in error
        assert app.result is before and not any(w.group == "engine" and not w.is_finished for w in app.workers)
        # a change in another step: the skip logic shows the training questions once the workload trains
        await what_if(pilot, {"inference.concurrent_requests": "16", "inference.requests_per_minute": "600"})
        await settle(pilot)
        await wait_until(pilot, lambda: app.result is not before, tries=1500)
        assert app.answers is not None and app.answers.inference.requests_per_minute == 600
        assert app.what_if == "Requests per minute not set → 600 req/min"


async def test_the_headline_is_whole_at_80x24(catalog: Catalog) -> None:
    """Issue 42: at 80×24 nothing is cut. The startup engineer's headline (a 70B at 1,000 requests a minute, first
    an MI325X rented at an aggregator's per-GPU figure) takes five lines with its price's basis and the node it
    lacks; the headline held at most four and read '… the node it comes in (GPUs per node, fabric) is not in'."""
    from gpuadvisor.tui.report.common import headline

    answers = parse_answers({"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-70b"},
                             "inference": {"requests_per_minute": 1000}})
    app = make_app(catalog, answers)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.screen.result is not None,
                         tries=1500)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ResultsScreen) and screen.result is not None
        assert headline(screen.result).endswith("(GPUs per node, fabric) is not in the source).")
        head = screen.query_one("#results-headline", Static)
        width = head.content_region.width
        needed = head.get_content_height(head.content_region.size, app.size, width)
        assert needed == 5 and head.content_region.height == needed
        table = screen.query_one(RankingTable)
        assert table.size.height >= 5  # the ranking still shows its first options


def test_a_what_if_note_names_the_question_in_its_unit() -> None:
    """The student's what-if of 100M → 500M training tokens read "training.tokens_b none → 0.5": each change is now
    under its question's name, a count as people write it, a number with its unit and thousands."""
    from gpuadvisor.rules.inputs.answers import parse_answers
    from gpuadvisor.tui.screens.whatif import change_note, changed_questions

    base = {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "qlora"}}
    before = parse_answers(base)
    after = parse_answers({**base, "training": {"tokens_b": 0.5, "deadline_days": 45},
                           "budget": {"capex_usd": 2_000_000}})
    assert change_note(before, after, changed_questions(before, after)) == (
        "Training tokens not set → 500M, Deadline 30 → 45 days, Purchase budget not set → 2,000,000 USD")
