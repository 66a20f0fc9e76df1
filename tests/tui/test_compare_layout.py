"""Compare fits three options at 80 and 100 columns with its row labels fixed (issue 29: at 100 columns the third
option was about 40 → away and the labels scrolled off)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.screens.compare import OPTION_MAX, CompareScreen, option_width
from gpuadvisor.tui.screens.results import ResultsScreen

from .conftest import make_app, settle, wait_until


def test_option_width_shares_what_the_labels_leave() -> None:
    # 17-column labels ("Tokens/s per user"), 3 options: cell padding 2 x 4, scroll bar 2
    assert option_width(100, 17, 3) == (100 - 17 - 8 - 2) // 3 == 24
    assert option_width(80, 17, 3) == (80 - 17 - 8 - 2) // 3 == 17
    assert option_width(200, 17, 3) == OPTION_MAX == 52  # not 57: the options stay close on a wide terminal
    assert option_width(40, 17, 3) == 12  # the floor: then the table scrolls sideways, the labels stay


@pytest.mark.parametrize("width", [80, 100])
async def test_three_options_fit_with_the_labels_fixed(catalog: Catalog, width: int) -> None:
    given = {"workload": "inference", "model": {"name": "llama-3.1-70b"},
             "precision": {"weights": "int8", "context_tokens": 8192}, "inference": {"concurrent_requests": 16}}
    app = make_app(catalog, parse_answers(given))
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.result is not None)
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen) and len(screen.options) == 3
        table = screen.query_one("#compare", DataTable)
        assert table.fixed_columns == 1
        # every column (labels and three options, with their padding) within the table's width: nothing to scroll
        assert table.virtual_size.width <= table.scrollable_content_region.width
        names = [str(table.get_cell_at((0, i + 1))) for i in range(3)]  # the Accelerator row
        assert names == [r.accelerator.name for r in screen.options]  # wrapped in the cell, never cut
