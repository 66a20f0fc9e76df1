"""The results of a lifecycle (several phases under one budget): the phases as a timeline with the cost of each, the
whole plan's total and the budget left, the fleet chosen and the findings about how the phases interact. A phase's
own results open in the usual results screen (keys 1-9), which knows it shows a phase of this lifecycle: its what-if
replans the lifecycle, and Escape comes back here.

The timeline puts each phase's cost before what it runs on (a long machine title), and the cost's parts last, so the
total stays on screen at 80 columns."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.screens import STYLES

TIMELINE_COLUMNS = ("Phase", "When", "Cost", "How", "On")
"""The report's timeline (`common.TIMELINE_HEADER`) for a terminal: the workload under the phase's name, the cost's
parts under its total, and the long machine title last, wrapped in the width left."""


def timeline_cells(result: RecommendResult) -> list[list[str]]:
    """The report's timeline rows in TIMELINE_COLUMNS order, each cell's lines apart (a cell wraps on screen)."""
    out = []
    for phase, workload, when, how, on, cost in c.timeline_rows(result):
        total, _, parts = cost.partition(" (")
        lines = [total, *(p for p in parts.removesuffix(")").split(", ") if p)]
        name = phase.partition(" ")[2]
        out.append([phase if workload.startswith(name) else f"{phase}\n{workload}", when, "\n".join(lines), how, on])
    return out


def timeline_widths(cells: list[list[str]], screen_width: int) -> list[int]:
    """Column widths: Phase and When as wide as their first line (at most 15 for When; Phase at most a sixth of the
    screen, 14 at 80 columns, so a phase's name is not broken mid-word where there is room), Cost as its widest
    line (a part: `−$32,980 resale`), How as wide as it needs unless On needs the room (How then wraps by words),
    On the width left (at least its longest word), so the table fits 80 columns without cutting a word."""
    def widest(i: int, first_only: bool = False) -> int:
        lines = [ln for row in cells for ln in (row[i].split("\n")[:1] if first_only else row[i].split("\n"))]
        return max([len(TIMELINE_COLUMNS[i])] + [len(ln) for ln in lines])

    def longest_word(i: int) -> int:
        return max([len(TIMELINE_COLUMNS[i])] + [len(w) for row in cells for w in row[i].split()])

    widths = [min(widest(0, True), max(14, screen_width // 6)), min(widest(1, True), 15), min(widest(2), 18)]
    padding = 2 * len(TIMELINE_COLUMNS) + 4  # a cell's padding, the screen's and the scroll bar
    rest = screen_width - sum(widths) - padding
    # How gives way to On (wrapped by words: "reuse (bought in phase 1)"), never below its longest word; On keeps
    # at least its longest word ("(air-cooled)"), so no word is cut at 80 columns ("3 ×", "OAM", "(ai": issue 42)
    on_min = max(longest_word(4), 16 if rest >= 16 + widest(3) else longest_word(4))
    how = max(longest_word(3), min(widest(3), rest - on_min))
    return [*widths, how, max(longest_word(4), rest - how)]


class LifecycleScreen(Screen[None]):
    """Timeline, totals, fleet and lifecycle findings; 1-9 opens a phase's own results."""

    CSS_PATH = STYLES / "lifecycle.tcss"

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="lifecycle.back",
                tooltip="Back to the questionnaire, or to the start when the lifecycle was opened from a file"),
        Binding("s", "save", "Save", id="lifecycle.save", tooltip="Save the report (Markdown, HTML, JSON) or the "
                                                                   "answers file with its [[phase]] tables"),
        Binding("w", "what_if", "What-if", id="lifecycle.what_if",
                tooltip="Change what every phase shares (stage, budget, deployment, constraints) and plan again"),
        *[Binding(str(n), f"phase({n})", f"Phase {n}", show=n <= 3, id=f"lifecycle.phase{n}",
                  tooltip=f"Phase {n}'s own results") for n in range(1, 10)],
    ]
    HELP = """\
## Lifecycle results

The phases of one plan under one budget: when each runs, on what (rented, bought, or reused from an earlier phase)
and what it costs; the total over the horizon and the budget left; the fleet chosen among the ways weighed; and the
findings about how the phases interact (L1-L4).

- **1-9** open a phase's own results (its ranking, findings and WHY chains). There, **w** (what-if) changes the
  phase within this lifecycle and plans the whole again; **Escape** comes back here.
- **w** (what-if) changes what every phase shares (stage, budget, deployment, constraints, framework, the hardware
  you have) and plans the whole again.
- **s** saves the report (Markdown, HTML with the timeline chart, JSON) or the answers file.
- **Escape** goes back.
"""

    def __init__(self, result: RecommendResult, lifecycle: Any = None) -> None:
        """`lifecycle`: the LifecycleAnswers planned (a phase's what-if changes it; saving writes it)."""
        super().__init__()
        self.result = result
        self.lifecycle = lifecycle
        self.note = ""
        """What a what-if on a phase changed, shown above the timeline."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="lifecycle-headline")
        yield Static(id="lifecycle-banner", markup=False)
        yield DataTable(id="timeline", cursor_type="row", zebra_stripes=True)
        yield Static(id="lifecycle-totals")
        with VerticalScroll(id="lifecycle-body"):
            yield Static(id="lifecycle-fleet")
            yield Static(id="lifecycle-findings")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._show_plan()
        self.query_one("#timeline", DataTable).focus()

    def replan(self, result: RecommendResult, lifecycle: Any, note: str) -> None:
        """A what-if on a phase planned the lifecycle again: show the new plan and what changed."""
        self.result, self.lifecycle, self.note = result, lifecycle, note
        if self.is_mounted:
            self._show_plan()

    def on_resize(self) -> None:
        self._fill_timeline()

    def _fill_timeline(self) -> None:
        table = self.query_one("#timeline", DataTable)
        cells = timeline_cells(self.result)
        table.clear(columns=True)
        for name, width in zip(TIMELINE_COLUMNS, timeline_widths(cells, self.app.size.width), strict=True):
            table.add_column(name, width=width)
        for row in cells:
            table.add_row(*(Text(cell, style="bold" if i == 2 else "") for i, cell in enumerate(row)), height=None)

    def _show_plan(self) -> None:
        r = self.result
        self.query_one("#lifecycle-headline", Static).update(c.headline(r))
        banner = self.query_one("#lifecycle-banner", Static)
        banner.update(f"What-if: {self.note}" if self.note else "")
        banner.display = bool(self.note)
        self._fill_timeline()
        self.query_one("#lifecycle-totals", Static).update(c.lifecycle_totals(r))
        life = r.lifecycle
        fleet = Text.assemble(("Fleet: ", "bold"), life.description if life else "")
        if life is not None and len(life.alternatives) > 1:
            others = len(life.alternatives) - 1
            fleet.append(f"\nWeighed against {others} other way{'s' if others != 1 else ''}; "
                         f"the next: {life.alternatives[1].description} — {c.usd(life.alternatives[1].total_cost_usd)}")
        self.query_one("#lifecycle-fleet", Static).update(fleet)
        lines = Text("How the phases interact\n", style="bold")
        if not r.warnings:
            lines.append("No finding about the phases together; each phase's own findings are in its results.",
                         style="")
        from gpuadvisor.tui.words import finding_words

        for w in r.warnings:
            words = finding_words(w, r)
            label = f"{words.label}: " if words.label else ""
            lines.append(f"[{w.severity.upper()}] {label}{words.message}\n", style="")
        lines.append("\n" + "  ".join(f"{p.phase}: {p.name}" for p in r.phases)
                     + " — press the number for a phase's own results", style="italic")
        self.query_one("#lifecycle-findings", Static).update(lines)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "phase":
            return bool(parameters) and int(str(parameters[0])) <= len(self.result.phases)
        return True

    def action_save(self) -> None:
        from gpuadvisor.tui.screens.save import save_screen

        if self.lifecycle is not None:
            self.app.push_screen(save_screen(self.result, self.lifecycle, getattr(self.app, "today", None)))

    def action_what_if(self) -> None:
        """What-if on the answers every phase shares, from the first phase's answers (the shared ones merged in)."""
        from gpuadvisor.tui.questionnaire.answers_state import AnswerState
        from gpuadvisor.tui.screens.whatif import WhatIfScreen

        if self.lifecycle is None:
            return
        answers = self.lifecycle.phases[0].answers
        state = AnswerState.from_answers(answers).with_model_format(getattr(self.app, "catalog", None))
        self.app.push_screen(WhatIfScreen(state, answers, shared=self.lifecycle))

    def action_phase(self, n: int) -> None:
        """Phase n's own results, in a results screen that knows it shows a phase of this lifecycle."""
        from gpuadvisor.tui.screens.results import ResultsScreen
        from gpuadvisor.tui.state.phase import PhaseOf

        if self.lifecycle is not None and n <= len(self.result.phases):
            self.app.push_screen(ResultsScreen(PhaseOf(self.lifecycle, self.result, n)))
