"""Detail of one option: memory chart, speed and roofline position, cost, its total part by part, assumptions
and the WHY tree."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.tui import present
from gpuadvisor.tui.present import decision_rows, split_text
from gpuadvisor.tui.report.common import assumption_applies
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.widgets import format as fmt
from gpuadvisor.tui.widgets.memory_chart import MemoryChart
from gpuadvisor.tui.widgets.roofline import Roofline, ridge_for
from gpuadvisor.tui.widgets.why_tree import WhyTree, WhyView

BOUND_TEXT = {
    "bandwidth": ("bandwidth-bound: each generated token reads every weight from memory, so memory bandwidth, not "
                  "TFLOPS, sets the speed (002, S6/S7)."),
    "compute": ("compute-bound: enough work per byte read (training, large batches, prefill) that tensor "
                "throughput sets the speed (002, S7/H4)."),
}


def rows(pairs: list[tuple[str, str]]) -> Table:
    """`label  value` rows; long values wrap under themselves, not under the label."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for label, value in pairs:
        grid.add_row(Text(label), Text(value))  # values hold data (instance names): text, never Rich markup
    return grid


def title_line(rec: Recommendation, result: RecommendResult) -> Text:
    """Rank, option, its total, and the findings about it: ⚠ only for a risk, the rest by id."""
    text = Text.assemble((f"#{rec.rank} ", "bold"), (rec.title, "bold"),
                         f"  ·  {fmt.money(rec.decision_cost.usd)} {fmt.horizon(rec.decision_cost.horizon)}")
    severity = {w.id: w.severity for w in result.warnings}
    risks = [i for i in rec.warnings if severity.get(i) == "risk"]
    others = [i for i in rec.warnings if i not in risks]
    if risks:
        text.append(f"  ·  ⚠ {', '.join(risks)}", style="bold")
    if others:
        text.append(f"  ·  findings {', '.join(others)}")
    return text


def speed_pairs(rec: Recommendation) -> list[tuple[str, str]]:
    """What bounds the option, its speed figures (the presenter's: the table's capacity, the reports' labels) and
    its layout."""
    pairs = [("Bound", BOUND_TEXT.get(rec.bound, rec.bound))]
    pairs += [(f.label, f.text) for f in present.figures(rec, present.SPEED)]
    first = (f"expert parallel {rec.expert_parallel} (attention data-parallel)" if rec.expert_parallel > 1
             else f"tensor parallel {rec.tensor_parallel}")
    layout = (f"{rec.count} × {rec.accelerator.name} on {rec.nodes} node{'s' if rec.nodes != 1 else ''}: {first} "
              f"× pipeline {rec.pipeline_parallel} × {rec.replicas} replica{'s' if rec.replicas != 1 else ''}")
    pairs.append(("Layout", layout))
    split = split_text(rec)
    if split is not None:
        pairs.append(("Disaggregated", split))
    return pairs


def cost_pairs(rec: Recommendation) -> list[tuple[str, str]]:
    """What is rented or bought, then the cost rows every report shows (the presenter's labels and figures)."""
    pairs: list[tuple[str, str]] = []
    if rec.instance is not None:
        i = rec.instance
        when = f"price of {i.as_of}" if i.as_of else "price undated"
        on = "" if i.name.lower().startswith(i.provider.lower()) else f" on {i.provider}"
        pairs.append(("Instance", f"{i.count} × {i.name}{on} ({i.pricing}, {when})"))
    if rec.acquisition == "own":
        pairs.append(("Hardware", f"yours: {rec.count} × {rec.accelerator.name} (already paid for; power only)"))
    if rec.purchase:
        pairs.append(("Bought", f"{rec.unit.machines} × {rec.unit.name} holding {rec.count} × "
                                f"{rec.accelerator.name}"))
    return pairs + present.cost_items(rec.cost)


def total_text(rec: Recommendation) -> Table:
    """What the option costs over the horizon, part by part: the figure it is ranked by. A grid, so a part's long
    arithmetic wraps under itself, not under the dollars."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(justify="right", style="bold", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(style="dim")
    for part, dollars, how in decision_rows(rec):
        grid.add_row(Text(dollars), Text(part, style="bold" if part == "total" else ""), Text(how))
    return grid


def assumptions_text(result: RecommendResult) -> Text:
    """The assumptions the workload reads (no serving figures for a fine-tuning job: the reports' choice), then the
    defaults applied."""
    text = Text()
    used = [a for a in result.assumptions if assumption_applies(a.id, result)]
    for a in used:
        value = f"{a.value:g}" if isinstance(a.value, float) else str(a.value)
        text.append(f"{a.title}: ", style="bold")
        text.append(f"{value} {a.unit}".rstrip())
        text.append(f"  — {a.source}\n", style="dim")
    if len(used) < len(result.assumptions):
        text.append(f"({len(result.assumptions) - len(used)} more this workload does not read are in the HTML "
                    "report)\n", style="dim")
    if result.defaults_applied:
        text.append("\nDefaults applied (answers you did not give): ", style="bold")
        text.append(", ".join(result.defaults_applied) + "\n", style="dim")
    return text


class DetailScreen(Screen[None]):
    """Everything about one option, with the reasons behind it."""

    CSS_PATH = STYLES / "detail.tcss"


    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="detail.back", tooltip="Back to the results"),
        # The tab keys are shown in the tab labels ("m Memory"), so the footer keeps room for the tree's keys.
        Binding("m", "tab('tab-memory')", "Memory", show=False, id="detail.memory", tooltip="Memory breakdown per GPU"),
        Binding("p", "tab('tab-speed')", "Speed", show=False, id="detail.speed", tooltip="Speed and roofline position"),
        Binding("d", "tab('tab-cost')", "Cost", show=False, id="detail.cost", tooltip="Cost (dollars)"),
        Binding("k", "tab('tab-total')", "Total", show=False, id="detail.total",
                tooltip="What the option costs over the horizon, part by part"),
        Binding("a", "tab('tab-assumptions')", "Assumptions", show=False, id="detail.assumptions",
                tooltip="Assumptions and defaults behind the estimates"),
        Binding("y", "tab('tab-why')", "Why", show=False, id="detail.why",
                tooltip="The chain of reasons, down to the documents"),
    ]
    HELP = """\
## Option detail

- **m** memory breakdown per GPU (bars; the stacked bar uses one character per part, `┆` is the headroom limit).
- **p** speed: throughput, latency and where the option sits on the roofline (compute- or bandwidth-bound).
- **d** cost, **k** the total it is ranked by (part by part), **a** assumptions and defaults applied.
- **y** WHY: the explanation tree, down to your answers, the knowledge-base entries and the source documents.
  In the tree, **Enter** or **Space** opens a node, **x** expands everything, **z** collapses.
- **Escape** goes back to the results.
"""

    def __init__(self, rec: Recommendation, result: RecommendResult, catalog: Any | None,
                 start: str = "tab-memory") -> None:
        super().__init__()
        self.rec, self.result, self.catalog, self.start = rec, result, catalog, start

    def compose(self) -> ComposeResult:
        rec = self.rec
        result = self.result
        formats = (Formats.of_answers(result.answers_effective, result.answers, self.catalog.precisions)
                   if self.catalog is not None else None)
        ridge = ridge_for(self.catalog, rec.accelerator.id, formats.compute if formats is not None else None)
        yield Header()
        yield Static(title_line(rec, self.result), id="detail-title")
        with TabbedContent(initial=self.start, id="detail-tabs"):
            with TabPane("m Memory", id="tab-memory"), VerticalScroll():
                yield MemoryChart(rec.memory, rec.fits, id="memory-chart")
            with TabPane("p Speed", id="tab-speed"), VerticalScroll():
                yield Static(rows(speed_pairs(rec)), id="speed")
                yield Static("Roofline position (● this workload):", classes="section-title")
                yield Roofline(rec.bound, ridge, id="roofline")
            with TabPane("d Cost", id="tab-cost"), VerticalScroll():
                yield Static(rows(cost_pairs(rec)), id="cost")
            with TabPane("k Total", id="tab-total"), VerticalScroll():
                yield Static(total_text(rec), id="total")
            with TabPane("a Assumptions", id="tab-assumptions"), VerticalScroll():
                yield Static(assumptions_text(self.result), id="assumptions-text")
            with TabPane("y Why", id="tab-why"):
                yield WhyView(f"Why {rec.title}?", rec.why, tree_id="why-tree")
        yield Footer(compact=True)

    def action_tab(self, tab: str) -> None:
        self.query_one("#detail-tabs", TabbedContent).active = tab
        if tab == "tab-why":
            self.query_one("#why-tree", WhyTree).focus()
