"""Keys typed while the what-if form opens (issue 42): on a loaded machine the form takes ~1.5 s to appear, and a
tester's "2000" typed at once was lost (Apply then ran "requests/min 1000 → none")."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import Input

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.screens.whatif import WhatIfScreen

from .conftest import make_app, wait_until
from .test_app_results import opened

GIVEN: dict[str, Any] = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-8b"},
                         "inference": {"requests_per_minute": 1000}}


async def test_keys_typed_before_the_form_is_shown_reach_its_first_field(catalog: Catalog) -> None:
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot)
        # the keys arrive in one burst, as from a person typing while the machine is busy: no pause between them
        for key, char in [("w", "w"), ("end", None), ("ctrl+u", None), ("2", "2"), ("0", "0"), ("0", "0"),
                          ("0", "0")]:
            app.post_message(events.Key(key, char))
        await wait_until(pilot, lambda: isinstance(app.screen, WhatIfScreen) and not app.screen.taking_focus)
        await app.workers.wait_for_complete()
        await pilot.pause()
        form = app.screen
        assert isinstance(form, WhatIfScreen)
        rate = form.field("inference.requests_per_minute").query_one(Input)
        assert app.focused is rate
        # before: "1000" (the keys went to the ranking table below the form); with only the digits queued, ""
        # (the digits ran before the ctrl+u typed ahead of them, the tester's "requests/min 1000 → none")
        assert rate.value == "2000"
