"""Results: the headline, what was asked, the ranked options, the findings, the ruled-out list and the assumptions.

The screen reads top-down like the reports: the recommendation in one sentence, the requirements (with the demand,
the same for every option), then the ranking with a line saying what Total and the speed column mean. Narrow
terminals stack the table over the panels and abbreviate the table's figures; wide ones (≥130 columns) put them side
by side, the table as wide as its content and the panel taking the rest. After a what-if, the rows that moved are
marked (▲/▼/new in the Δ column, in bold) and a banner says what changed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.state.advisor_state import AdvisorScreenMixin
from gpuadvisor.tui.widgets import format as fmt
from gpuadvisor.tui.widgets.findings import (
    Explain,
    FindingList,
    assumption_entries,
    ruled_out_entries,
    shown_findings,
    warning_entries,
)
from gpuadvisor.tui.widgets.ranking_table import RankingTable, dropped

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.tui.state.phase import PhaseOf


PANEL_MIN = 48
"""Columns the findings panel keeps on a wide terminal; the table takes the rest, up to its natural width."""


def wide_from(app: App[object]) -> int:
    """Terminal width from which the table and the panels sit side by side (the app's `-wide` breakpoint)."""
    return next(width for width, name in app.HORIZONTAL_BREAKPOINTS or [] if name == "-wide")


def asked_line(result: RecommendResult) -> str:
    """What was asked, in a line or two: the requirements the reports list under "What you asked", abbreviated."""
    from gpuadvisor.tui.report.common import requirements

    short = {"Load": "", "Demand": "demand ", "Concurrency": "", "Service level": "", "Training": "",
             "Deadline": "deadline ", "Budget": "budget ", "At most": "at most ", "You have": "you have "}
    parts = [short.get(label, "") + (value.split(": ", 1)[0] if "assumed" in value else value)  # what, not how
             for label, value in requirements(result) if label != "Workload"]
    text = "Asked: " + " · ".join(parts)
    for long, brief in ((" out tokens a request", " out a request"), (" requests a minute of ", " req/min ("),
                        (" in + ", " in/"), (" out tokens", " out)"),
                        (" to generate", ""), ("p95 latency", "p95"), (" requests in flight", " in flight")):
        text = text.replace(long, brief)
    # the context's unit goes (a window is in tokens), never a training count's: "500M" alone read as nothing
    return re.sub(r", context ([\d,]+) tokens\b", r" · context \1", text)


ASKED_LINES = 2
"""Lines the asked line takes at most (the ranking needs the rest of a 24-line terminal)."""


def fit_parts(text: str, width: int, lines: int = ASKED_LINES) -> str:
    """`text` (parts joined by " · ") in at most `lines` lines of `width`, whole parts only: the last ones give way
    to "· …" (at 80 columns "Asked: … you have" was cut mid-phrase by the line limit)."""
    import textwrap

    parts = text.split(" · ")
    for keep in range(len(parts), 0, -1):
        candidate = " · ".join(parts[:keep]) + ("" if keep == len(parts) else " · …")
        if len(textwrap.wrap(candidate, max(width, 20))) <= lines:
            return candidate
    return parts[0]


def legend(result: RecommendResult, compact: bool) -> str:
    """What the speed and Total columns mean (the demand itself is in the asked line)."""
    workload = str(result.answers_effective.get("workload", "inference"))
    demand = bool(result.profile.required_tokens_per_s)
    first = result.recommendations[0].decision_cost if result.recommendations else None
    horizon = first.horizon if first is not None else ("one run" if workload != "inference" else "over the horizon")
    if compact:
        speed = ("Tok/s: capacity" + (" ×demand" if demand else "")) if workload == "inference" else "Time: one run"
        # one line at 80 columns (78 characters inside the padding): ranked by Total says cheapest first
        return f"{speed} · $/h or buy price · ranked by Total {fmt.horizon(horizon)}"
    speed = ("Tok/s: the most the option serves" + (" (× the demand)" if demand else "")
             if workload == "inference" else "Time: one run, wall clock")
    return f"{speed} · Total: all the option costs {fmt.horizon(horizon)}, cheapest first"


class ResultsScreen(AdvisorScreenMixin, Screen[None]):
    """Ranked options with warnings and rule-outs; Enter explains, Space marks, c compares, w runs a what-if."""

    CSS_PATH = STYLES / "results.tcss"


    BINDINGS = [
        Binding("enter", "explain", "Explain", id="results.explain", tooltip="Detail and WHY of the selected option"),
        Binding("space", "mark", "Mark", id="results.mark", tooltip="Mark the option for comparison (up to 3)"),
        Binding("c", "compare", "Compare", id="results.compare", tooltip="Marked options (or the top 3) side by side"),
        Binding("w", "what_if", "What-if", id="results.what_if", tooltip="Change an answer and see the ranking move"),
        Binding("s", "save", "Save", id="results.save", tooltip="Save a report or the answers"),
        Binding("e", "edit", "Edit", id="results.edit", tooltip="Back to the answers (review step)"),
        Binding("escape", "back", "Back", show=False, id="results.back",
                tooltip="Back to the answers, or to the lifecycle from one of its phases"),
        Binding("n", "app.new_consultation", "New", show=False, id="results.new",
                tooltip="Start a new consultation"),
        Binding("f", "all_findings", "All findings", show=False, id="results.findings",
                tooltip="Show every finding, or only the few that matter most"),
    ]
    HELP = """\
## Results

The headline says what to do; the line under it what you asked (with the demand every option must serve).
The table ranks the options that meet your answers by what each costs over the horizon (Total: one run for
training, the hardware's life for serving; `k` in the detail shows it part by part). For serving, the speed
column is each option's capacity and its headroom over the demand.
Dimmed rows are runners-up. The panel lists the findings (severity spelled out: ⚠ RISK, ➜ ADVICE, ℹ NOTE),
the few that matter first, the options that were ruled out and why, and the assumptions behind the estimates.

- **Enter** on an option opens its detail: memory chart, speed (roofline), cost and the WHY tree.
- **Enter** on a warning or a ruled-out entry shows its WHY chain.
- **f** shows every finding, or again only the few that matter.
- **Space** marks up to three options, **c** compares them (or the top three) side by side.
- **w** what-if: change precision, budget, context, GPU count or cloud/on-prem and see what moves (Δ column).
- **s** saves a report (Markdown, HTML, JSON) or the answers (TOML), **e** / **Escape** edits the answers,
  **n** starts a new consultation, **Tab** moves between the table and the panel.

A phase of a lifecycle (opened with 1-9 on the lifecycle screen) says so above the headline. There, what-if changes
the phase within the lifecycle (the budget is the lifecycle's, shared by every phase) and plans the whole again;
**s** saves the lifecycle's report or answers file; **Escape** goes back to the lifecycle.
"""

    def __init__(self, phase: PhaseOf | None = None) -> None:
        """`phase`: the lifecycle phase this screen shows (None: a single consultation, set by the app)."""
        super().__init__()
        self.phase = phase
        self.answers: Answers | None = phase.answers if phase is not None else None
        self.result: RecommendResult | None = phase.phase_result if phase is not None else None
        self.previous: RecommendResult | None = None
        self.what_if: str | None = None
        self.all_findings = False


    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="results-phase", markup=False)
        yield Static(id="results-headline", markup=False)  # data (model names): text, never markup
        yield Static(id="results-asked", markup=False)
        yield Static(id="results-banner", markup=False)
        with Container(id="results-body"):
            with Vertical(id="ranking-column"):
                yield RankingTable(id="ranking")
                yield Static(id="results-legend", markup=False)
            with TabbedContent(id="findings"):
                with TabPane("Findings", id="tab-warnings"):
                    yield FindingList(id="warnings")
                with TabPane("Ruled out", id="tab-ruled-out"):
                    yield FindingList(id="ruled-out")
                with TabPane("Assumptions", id="tab-assumptions"):
                    yield FindingList(id="assumptions")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        if self.result is not None:
            self._render_result()
        else:
            self.query_one("#results-body").loading = True

    # --- state down (called by the app) -----------------------------------------------------------------------------
    def waiting(self, what_if: str | None) -> None:
        """A consultation is running for this screen."""
        if self.is_mounted:
            self.query_one("#results-body").loading = True
            self._banner(f"What-if: {what_if} — consulting…" if what_if else "")

    def failed(self, error: str) -> None:
        if self.is_mounted:
            self.query_one("#results-body").loading = False
            self._banner(f"✖ The consultation failed: {error}", error=True)

    def show(self, result: RecommendResult, answers: Answers, previous: RecommendResult | None = None,
             what_if: str | None = None, *, phase: PhaseOf | None = None) -> None:
        """Show a result and the answers it ran on; `previous` and `what_if` after a what-if; `phase` when a
        what-if replanned the lifecycle this screen's phase belongs to."""
        self.result, self.answers, self.previous, self.what_if = result, answers, previous, what_if
        if phase is not None:
            self.phase = phase
        if self.is_mounted:
            self._render_result()

    # --- rendering --------------------------------------------------------------------------------------------------
    def _banner(self, text: str, error: bool = False) -> None:
        banner = self.query_one("#results-banner", Static)
        banner.update(text)
        banner.set_class(bool(text), "-shown")
        banner.set_class(error, "-error")

    def _render_result(self) -> None:
        result = self.result
        assert result is not None
        self.query_one("#results-body").loading = False
        from gpuadvisor.tui.report.common import headline

        self.query_one("#results-headline", Static).update(headline(result))
        phase = self.query_one("#results-phase", Static)
        phase.set_class(self.phase is not None, "-shown")
        if self.phase is not None:
            plan = self.phase.in_plan
            phase.update(f"{self.phase.label} of the lifecycle" + (f", planned {plan}" if plan else "")
                         + " · the figures below: the phase alone · Esc: back to the lifecycle")
        self._render_asked()
        theme = self.app.current_theme
        table = self.query_one("#ranking", RankingTable)
        self._fit_table()
        table.show(result, self.previous, highlight=f"bold {theme.accent or theme.primary}")
        self._fit_table()
        self._label_findings(result)
        tabs = self.query_one("#findings", TabbedContent)
        tabs.get_tab("tab-ruled-out").label = f"Ruled out ({len(result.ruled_out)})"
        tabs.get_tab("tab-assumptions").label = f"Assumptions ({len(result.assumptions)})"
        self.call_after_refresh(self._fill_findings, result)  # the ranking first; the lists one frame later
        self._banner(self._banner_text(result))
        if not result.recommendations and not result.runners_up:
            self._banner("✖ No option meets every requirement. " + " ".join(result.to_make_feasible), error=True)
        table.focus()

    def _label_findings(self, result: RecommendResult) -> None:
        shown, total = len(shown_findings(result, self.all_findings)), len(result.warnings)
        label = f"Findings ({total})" if shown == total else f"Findings ({shown} of {total}, f: all)"
        self.query_one("#findings", TabbedContent).get_tab("tab-warnings").label = label

    def _fit_table(self) -> None:
        """On a wide terminal the table is as wide as its content (up to what leaves the panel PANEL_MIN columns);
        the panel takes the rest. On a narrow one it takes the full width and abbreviates."""
        table = self.query_one("#ranking", RankingTable)
        column = self.query_one("#ranking-column")
        wide = self.app.size.width >= wide_from(self.app)
        if wide:  # the panel keeps PANEL_MIN columns, and a third of a very wide screen
            room = min(self.app.size.width - PANEL_MIN, int(self.app.size.width * 0.66))
            table.max_width = room
            column.styles.width = min(room, max(60, table.natural_width() + 2))
        else:
            table.max_width = None
            column.styles.width = "1fr"
        compact = not wide and self.app.size.width < 110
        if self.result is not None:
            self.query_one("#results-legend", Static).update(legend(self.result, compact))

    def _render_asked(self) -> None:
        if self.result is not None:
            width = (self.size.width or self.app.size.width) - 2  # the line's padding
            self.query_one("#results-asked", Static).update(fit_parts(asked_line(self.result), width))

    def on_resize(self) -> None:
        if self.result is not None:
            self._fit_table()
            self._render_asked()

    def action_all_findings(self) -> None:
        """Every finding, or again only the few that matter most."""
        if self.result is None:
            return
        self.all_findings = not self.all_findings
        self._label_findings(self.result)
        self._fill_findings(self.result)

    def _fill_findings(self, result: RecommendResult) -> None:
        if result is not self.result:
            return
        theme = self.app.current_theme
        styles = {"risk": f"bold {theme.error}", "advice": f"bold {theme.warning}", "note": f"bold {theme.primary}"}
        self.query_one("#warnings", FindingList).set_entries(warning_entries(result, styles, self.all_findings),
                                                             "No findings.")
        self.query_one("#ruled-out", FindingList).set_entries(ruled_out_entries(result), "Nothing was ruled out.")
        self.query_one("#assumptions", FindingList).set_entries(assumption_entries(result), "No assumptions.")

    def _banner_text(self, result: RecommendResult) -> str:
        notes = []
        if not result.feasible:
            fix = " ".join(result.to_make_feasible)
            notes.append(f"✖ No plan meets every requirement; the closest options are shown. {fix}".strip())
        if self.what_if:
            table = self.query_one("#ranking", RankingTable)
            moved = [m for m in table.moved.values() if m]
            gone = dropped(self.previous, result) if self.previous is not None else []
            change = f"{len(moved)} moved (Δ)" if moved else "the ranking did not change"
            if gone:
                change += f", {len(gone)} dropped"
            notes.append(f"What-if: {self.what_if} — {change}.")
        return "  ".join(notes)

    # --- messages up ------------------------------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#ranking")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_explain()

    @on(Explain)
    def _explain_finding(self, message: Explain) -> None:
        from gpuadvisor.tui.screens.why import WhyScreen

        if message.why:
            self.app.push_screen(WhyScreen(message.title, message.why))
        else:
            self.notify("No explanation chain for this entry.", severity="information")

    # --- actions ----------------------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit" and self.phase is not None:
            return False  # a phase's answers are edited in its lifecycle (what-if), not in a new questionnaire
        return True

    async def action_back(self) -> None:
        """A phase goes back to its lifecycle; a single consultation to its answers."""
        if self.phase is not None:
            self.dismiss()
        else:
            await self.app.run_action("edit_answers")

    async def action_edit(self) -> None:
        await self.app.run_action("edit_answers")

    def action_explain(self) -> None:
        from gpuadvisor.tui.screens.detail import DetailScreen

        rec = self.query_one("#ranking", RankingTable).selected
        if rec is not None and self.result is not None:
            self.app.push_screen(DetailScreen(rec, self.result, self.advisor.catalog))

    def action_mark(self) -> None:
        problem = self.query_one("#ranking", RankingTable).toggle_mark()
        if problem:
            self.notify(problem, severity="warning", markup=False)

    def action_compare(self) -> None:
        from gpuadvisor.tui.screens.compare import CompareScreen

        if self.result is None:
            return
        options = self.query_one("#ranking", RankingTable).for_compare()
        if len(options) < 2:
            self.notify("Only one option: nothing to compare it with.", severity="warning")
            return
        self.app.push_screen(CompareScreen(options, self.result,
                                           self.phase.label if self.phase is not None else None))

    def action_what_if(self) -> None:
        from gpuadvisor.tui.questionnaire.answers_state import AnswerState
        from gpuadvisor.tui.screens.whatif import WhatIfScreen

        if self.result is None or self.answers is None:
            return
        state = AnswerState.from_answers(self.answers).with_model_format(self.advisor.catalog)
        self.app.push_screen(WhatIfScreen(state, self.answers, self.phase))

    def action_save(self) -> None:
        """A single consultation's report or answers; from a phase, the lifecycle's (the phase is one of its parts,
        and its answers file reopens the whole)."""
        from gpuadvisor.tui.screens.save import save_screen

        today = self.advisor.today
        if self.phase is not None:
            self.app.push_screen(save_screen(self.phase.result, self.phase.lifecycle, today, self.phase.index))
        elif self.result is not None and self.answers is not None:
            self.app.push_screen(save_screen(self.result, self.answers, today, what_if=self.what_if))
