"""Compare fits three options at 80 and 100 columns with its row labels fixed (issue 29: at 100 columns the third
option was about 40 → away and the labels scrolled off)."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.screens.compare import OPTION_MAX, CompareScreen, option_width
from gpuadvisor.tui.screens.results import ResultsScreen
from gpuadvisor.tui.widgets.ranking_table import short_title

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


async def test_headers_cut_by_whole_words_and_stay_unique(catalog: Catalog) -> None:
    """At 80×24 the headers read "#3 GeForce RTX 5…" (cut inside "5090") and "#1 RTX PRO 6000 …" twice: each is now
    two lines fitted by whole words (fit_words), the rank and part, then how it comes and what tells it apart
    from options of the ranking whose first line reads alike (the desktop PC and the 4-card workstation)."""
    given = {"workload": "inference", "model": {"name": "llama-3.1-70b"},
             "precision": {"weights": "int8", "context_tokens": 8192},
             "inference": {"concurrent_requests": 16, "latency_p95_s": 30.0}}
    app = make_app(catalog, parse_answers(given))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.result is not None)
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        table = screen.query_one("#compare", DataTable)
        width = option_width(80, table.columns[table.ordered_columns[0].key].width, len(screen.options))
        heads = [str(c.label) for c in table.ordered_columns[1:]]
        assert len(set(heads)) == len(heads) == 3
        words = {w for r in screen.options for w in f"#{r.rank} {r.title} {short_title(r)}".replace("·", " ").split()}
        assert [h.split("\n")[0] for h in heads] == ["#1 RTX PRO 6000…", "#2 RTX PRO 6000…", "#3 RTX 5090"]
        assert [h.split("\n")[1] for h in heads] == ["buy, desktop", "buy, 4-card", "buy 1×3"]
        for head in heads:
            assert all(len(line) <= width for line in head.split("\n"))
            # every word shown is whole (a word of the option's name, its rank or a bracketed difference)
            shown = re.sub(r"[·(),…]", " ", head).split()
            assert all(w in words or w.endswith("×") or w in {"buy", "spot", "1-yr", "3-yr"} for w in shown), head


def test_where_says_a_term_once(catalog: Catalog) -> None:
    """The student's compare read "Google Colab (free) (free)": a term the instance's label already says is not
    repeated; a rental's term its label does not say still is ("RunPod RTX 4090 (per GPU) (on-demand)")."""
    from gpuadvisor.rules.consult import consult
    from gpuadvisor.tui.screens.compare import compare_rows

    given = {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
             "finetune": {"method": "qlora"}, "budget": {"monthly_usd": 20}}
    recs = consult(parse_answers(given), catalog).recommendations
    where = dict(compare_rows(recs))["Where"]
    free = [w for r, w in zip(recs, where, strict=True) if r.instance is not None and r.instance.pricing == "free"]
    rented = [w for r, w in zip(recs, where, strict=True) if r.instance is not None and r.instance.pricing != "free"]
    assert free and all(w.count("(free)") == 1 for w in free), free
    assert rented and all(w.endswith(")") and w.count("(") >= 1 for w in rented), rented
