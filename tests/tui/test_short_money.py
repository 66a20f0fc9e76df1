"""Totals in narrow cells (`short_money`): three significant figures under $1,000, one decimal of thousands under
$10k, whole thousands above, and a figure that rounds up to the next step reads as that step ($9,951 read '$10.0k'
at 80 columns beside '$9.9k' and '$13k': issue 42)."""

from __future__ import annotations

import pytest

from gpuadvisor.tui.widgets.format import short_money


@pytest.mark.parametrize(("usd", "text"), [
    (5.27, "$5.27"), (5.69, "$5.69"), (5.73, "$5.73"),  # the student's totals, once "$5 / $6 / $6"
    (0.462, "$0.462"), (99.4, "$99.4"), (99.96, "$100"), (950, "$950"),
    (999.6, "$1.0k"), (9_945, "$9.9k"), (9_951, "$10k"), (12_508, "$13k"),
    (999_499, "$999k"), (999_500, "$1.0M"), (1_260_000, "$1.3M"),
    (0, "$0"), (None, "—"),
])
def test_short_money(usd: float | None, text: str) -> None:
    assert short_money(usd) == text
