"""A choice's label wraps by words where it does not fit (issue 42: at 80 columns the what-if form and the
questionnaire read 'Automatic (today if the run coul…' for training.deadline_from's first choice)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import RadioSet

from gpuadvisor.tui.questionnaire.questions import QUESTIONS
from gpuadvisor.tui.widgets.toggles import ChoiceButton

LABEL = next(c.label for c in QUESTIONS["training.deadline_from"].choices if c.value == "auto")


class Form(App[None]):
    CSS = "RadioSet { width: 34; }"  # about the what-if form's control column at 80 columns (38)

    def compose(self) -> ComposeResult:
        yield RadioSet(ChoiceButton(LABEL, value=True), ChoiceButton("Today (delivery counts)"))


async def test_a_long_choice_wraps_by_words() -> None:
    assert LABEL == "Automatic (today if the run could be rented)"
    app = Form()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        long, short = app.query(ChoiceButton)
        assert long.size.height == 2 and short.size.height == 1
        lines = [str(line).strip() for line in long.render().wrap(long.content_region.width)]
        assert lines == ["▐●▌ Automatic (today if the", "run could be rented)"]  # whole words, nothing cut
        assert short.region.y == long.region.y + 2  # the next choice below both lines
