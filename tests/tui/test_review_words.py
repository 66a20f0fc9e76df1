"""The review and the questions in a reader's words (issue 42, items 3 and 5): a count in the number it takes ("1
sequence"), a share as a percentage ("2.7%", not "0.0274"), and one source for what an empty entry means (the box's
"default: 32" and the line under it said different things)."""

from __future__ import annotations

from textual.widgets import Input, Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.tui.widgets.question_field import QuestionField
from gpuadvisor.tui.widgets.review import ReviewTable

from .conftest import make_app, wait_until
from .test_app_questionnaire import field, start, wizard


async def test_a_learners_review_says_counts_and_shares_as_people_do(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 40)) as pilot:
        await start(pilot)
        # fine-tune (up from inference), then the stage: up twice from production to learning
        await pilot.press("up", "enter", "tab", "up", "up", "enter", "ctrl+n", *"llama-3.1-8b", "ctrl+n")
        for _ in range(6):
            if wizard(pilot).step.review:
                break
            await pilot.press("ctrl+n")
        assert wizard(pilot).step.review
        table = wizard(pilot).query_one(ReviewTable)
        await wait_until(pilot, lambda: bool(table.assumed))  # the prefetched consultation's assumed values
        answers = {str(table.get_row(r.key)[1].plain): table.get_row(r.key)[2].plain for r in table.ordered_rows}
        assert answers["Stage"] == "Learning"
        assert answers["Batch size"] == "1 sequence  (default)"  # was "1 sequences"
        # 20 hours a month while learning / 730 hours in a month = 0.0274 = 2.7 % (was "0.0274 (typical …)")
        assert answers["Expected utilization"] == "2.7% (typical while learning)  (default)"
        assert answers["Hours a month in use"] == "20 h/month (typical while learning)  (default)"


async def test_an_empty_entry_means_what_its_box_says(catalog: Catalog) -> None:
    # production serving with no load stated is sized for 32 requests in flight (rules/inputs/answers.py
    # PRODUCTION_CONCURRENCY, seed 002's sizing example): the box said "default: 32", the line under it "Empty: the
    # batch size"
    app = make_app(catalog)
    async with app.run_test(size=(100, 40)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n")
        for _ in range(6):
            if any(f.question.key == "inference.concurrent_requests" for f in wizard(pilot).query(QuestionField)):
                break
            await pilot.press("ctrl+n")
        concurrency = field(pilot, "inference.concurrent_requests")
        box = concurrency.query_one(Input)
        why = str(concurrency.query_one(".question-why", Static).render())
        assert box.value == "" and box.placeholder == "default: 32"
        assert why.endswith(" Empty: 32 (assumed: production with no stated load, seed 002's sizing example)."), why
        assert "batch size" not in why
