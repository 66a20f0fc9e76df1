"""Text reports in a terminal fit its width; in a file or a pipe every table row stays one line (grep, diff)."""

from __future__ import annotations

import re

import pytest

from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.text import MIN_COLUMN, WIDTH, table
from tests.report import TODAY, sample

TITLE = "Buy 2 × 2U 4-GPU PCIe server (1 of 4 slots filled, 2 GPUs) — NVIDIA RTX PRO 6000 Blackwell Server Edition"


def test_without_a_terminal_a_row_is_one_line() -> None:
    lines = table(["#", "Option", "Total"], [["1", TITLE, "$37,314"]], right=(0, 2))
    assert lines[2] == f"1  {TITLE}  $37,314"


def test_in_a_terminal_the_widest_column_wraps_and_figures_keep_their_width() -> None:
    lines = table(["#", "Option", "Total"], [["1", TITLE, "$37,314"]], right=(0, 2), columns=60)
    assert max(len(line) for line in lines) <= 60
    body = lines[2:-1]
    assert body[0].startswith("1  ") and body[0].endswith("$37,314")  # the figure on the row's first line, whole
    # the title's words, in order, over the continuation lines (indented under its column)
    words = body[0][3:].removesuffix("$37,314").split() + [w for line in body[1:] for w in line.split()]
    assert words == TITLE.split()
    assert all(line.startswith("   ") for line in body[1:])


def test_a_table_that_cannot_fit_stops_at_the_narrowest_column() -> None:
    lines = table(["a", "b", "c"], [["x" * 30, "y" * 30, "z" * 30]], columns=20)
    assert lines[1] == "  ".join(["-" * MIN_COLUMN] * 3)


@pytest.mark.parametrize("columns", [72, 80, 100, 140])
def test_a_whole_report_fits_the_terminal(columns: int) -> None:
    text = render(sample(), "text", today=TODAY, full=True, columns=columns)
    # tables fit the terminal, prose and headings wrap at its width (at most WIDTH): the terminal folds no line
    assert max(len(line) for line in text.splitlines()) <= columns
    assert "$94,345" in text and "$838,858" in text  # figures are never split


def test_prose_wraps_at_the_terminal_width_and_at_width_in_a_file() -> None:
    narrow = render(sample(), "text", today=TODAY, columns=72)
    wide = render(sample(), "text", today=TODAY)
    headline = wide.split("\n\n")[2]  # title and rule, the date line, then the headline paragraph
    assert max(len(line) for line in headline.splitlines()) <= WIDTH
    assert max(len(line) for line in headline.splitlines()) > 72
    assert max(len(line) for line in narrow.splitlines()) <= 72
    assert narrow.split("\n\n")[2].split() == headline.split()  # the same words, broken at another width


def test_a_file_keeps_each_option_on_one_line() -> None:
    text = render(sample(), "text", today=TODAY, full=True)
    assert re.search(r"^ ?1  1× NVIDIA H200 SXM on RunPod \(on-demand\) .*\$94,345$", text, re.M)
