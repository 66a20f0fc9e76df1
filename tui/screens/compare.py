"""Two or three options side by side: one row per figure, the best value of each row starred."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.tui import present
from gpuadvisor.tui.present import split_short
from gpuadvisor.tui.screens import STYLES
from gpuadvisor.tui.widgets import format as fmt
from gpuadvisor.tui.widgets.ranking_table import brief_label, differences, fit_words, short_title


@dataclass(frozen=True)
class Metric:
    label: str
    value: Callable[[Recommendation], float | str | None]
    shown: Callable[[float], str] = fmt.number
    better: str = ""
    """'low' or 'high' to star the best value; empty for descriptive rows (the memory a plan holds per GPU says
    how it is split, not how good it is)."""


def figure_metric(key: str) -> Metric:
    """A row of the presenter's figure `key`: its short label (with the unit the cells leave out), its figure and
    which way is better."""
    spec = present.BY_KEY[key]
    return Metric(spec.short, spec.value, spec.number, spec.better)


def _where(r: Recommendation) -> str:
    if r.purchase:
        return "buy (on premises)"
    if r.instance is not None:  # a term its label already says is not said twice ("Google Colab (free) (free)")
        term = f"({r.instance.pricing})"
        return r.instance.label if term in r.instance.label else f"{r.instance.label} {term}"
    return fmt.DASH


METRICS: tuple[Metric, ...] = (
    Metric("Accelerator", lambda r: r.accelerator.name),
    Metric("Where", _where),
    Metric("GPUs", lambda r: float(r.count), lambda v: f"{v:.0f}"),
    Metric("Layout", lambda r: f"{split_short(r)} × {r.replicas} rep."),
    Metric("Fits", lambda r: fmt.yes_no(r.fits)),
    figure_metric("memory"),
    Metric("GPU memory (GB)", lambda r: r.memory.capacity, lambda v: present.gb_text(v).removesuffix(" GB")),
    Metric("Bound", lambda r: f"{r.bound}-bound"),
    *(figure_metric(key) for key in present.SPEED),
    figure_metric("usd_per_hour"),
    figure_metric("usd_per_run"),
    figure_metric("usd_per_million_tokens"),
    figure_metric("usd_per_month"),
    figure_metric("capex"),
    Metric("Price as of", lambda r: r.cost.price_as_of),
    figure_metric("total"),
    Metric("Findings", lambda r: ", ".join(r.warnings) or fmt.DASH),
)


def _part_usd(part: str) -> Callable[[Recommendation], float | None]:
    return lambda r: next((p.usd for p in r.decision_cost.parts if p.part == part), None)


def part_metrics(options: list[Recommendation]) -> list[Metric]:
    """One row per part of the total (hardware, power, resale, porting …) that some option has, in first-seen order."""
    names = list(dict.fromkeys(p.part for r in options for p in r.decision_cost.parts))
    return [Metric(f"  {name}", _part_usd(name), present.BY_KEY["total"].number, "low") for name in names]


def compare_rows(options: list[Recommendation]) -> list[tuple[str, list[str]]]:
    """(label, one cell per option) for every metric that some option has; ★ marks the best numeric value; the
    Total row follows its parts."""
    out: list[tuple[str, list[str]]] = []
    metrics = [*METRICS]
    at = next(i for i, m in enumerate(metrics) if m.label == "Total")
    metrics[at:at] = part_metrics(options)
    for m in metrics:
        values = [m.value(r) for r in options]
        if all(v is None for v in values):
            continue
        numbers = [v for v in values if isinstance(v, int | float)]
        best = None
        if m.better and len(numbers) > 1 and len(set(numbers)) > 1:
            best = min(numbers) if m.better == "low" else max(numbers)
        cells = []
        for v in values:
            if v is None:
                cells.append(fmt.DASH)
            elif isinstance(v, int | float):
                cells.append(("★ " if v == best else "") + m.shown(float(v)))
            else:
                cells.append(str(v))
        out.append((m.label, cells))
    return out


class CompareScreen(Screen[None]):
    """Options side by side."""

    CSS_PATH = STYLES / "detail.tcss"

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="compare.back", tooltip="Back to the results")]
    HELP = """\
## Compare

The marked options (Space on the results) or the top three, side by side. ★ marks the best value of a row
(lowest cost, time and latency; highest speed); memory per GPU is not starred: it says how a plan is split,
not how good it is. The Total each option is ranked by follows its parts. **Escape** goes back.
"""

    def __init__(self, options: list[Recommendation], result: RecommendResult, phase: str | None = None) -> None:
        """`phase`: the lifecycle phase the options belong to (`Phase 2 of 2 (serve)`), None for one consultation."""
        super().__init__()
        self.options = options
        self.result = result
        self.phase = phase

    def compose(self) -> ComposeResult:
        yield Header()
        where = f"{self.phase} of the lifecycle · " if self.phase else ""
        yield Static(f"{where}Comparing {len(self.options)} options (★ best of a row)", id="compare-title",
                     markup=False)
        yield DataTable[Text](id="compare", cursor_type="row", zebra_stripes=True, fixed_columns=1, header_height=2)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._fill()
        self.query_one("#compare", DataTable).focus()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """The options' columns share the width left of the row labels (which stay put when scrolling sideways):
        long names wrap in their cell, and the header names each option in a line."""
        table = self.query_one("#compare", DataTable)
        rows = compare_rows(self.options)
        label_width = max((len(label) for label, _ in rows), default=0)
        width = option_width(self.app.size.width, label_width, len(self.options))
        row = table.cursor_row
        table.clear(columns=True)
        table.add_column("", key="metric", width=label_width)
        heads = headers(self.options, [*self.result.recommendations, *self.result.runners_up], width)
        for r in self.options:
            table.add_column(Text(heads[r.option], style="bold"), key=r.option, width=width)
        for label, cells in rows:
            table.add_row(Text(label, style="bold"), *(Text(c, style="bold" if c.startswith("★") else "")
                                                       for c in cells), height=None)
        if row:
            table.move_cursor(row=row)


def option_width(screen_width: int, label_width: int, options: int) -> int:
    """Columns each option's cells get: the width left of the labels, the cells' padding (1 a side) and the
    scroll bar (2) shared out; never under 12 (then the table scrolls sideways, the labels fixed), never over
    OPTION_MAX (a wide terminal keeps the options close enough to read across)."""
    room = screen_width - label_width - 2 * (options + 1) - 2
    return min(OPTION_MAX, max(12, room // max(options, 1)))


OPTION_MAX = 52
"""The widest an option's column gets: an accelerator's full name (`NVIDIA RTX PRO 6000 Blackwell Workstation
Edition`, 49) in one line."""


def headers(options: list[Recommendation], ranking: list[Recommendation], width: int) -> dict[str, str]:
    """Each compared option's column header, two lines of `width` columns fitted by whole words (`fit_words`, never
    "#3 GeForce RTX 5…"): its rank and part, then how it comes (`buy`, `RunPod 3×1`) or, when other options of the
    ranking read alike on the first line, what tells them apart (`differences`: count, term, server; the rank
    last), so no two options of the ranking share a header; the Accelerator and Where rows name it whole."""
    every = [*ranking, *(o for o in options if all(o.option != r.option for r in ranking))]
    rank_room = max(len(f"#{r.rank} ") for r in every)

    def part(r: Recommendation) -> str:
        name = short_title(r).partition(" · ")[0]
        return fit_words(name, width - rank_room) or name[: width - rank_room]

    groups: dict[str, list[Recommendation]] = {}
    for r in every:
        groups.setdefault(part(r), []).append(r)
    second: dict[str, str] = {}
    for group in groups.values():
        if len(group) == 1:
            how = (brief_label(group[0], lv).partition(" · ")[2] for lv in (0, 1))
            second[group[0].option] = next((fit for h in how if (fit := fit_words(h, width))), "")
            continue
        diffs = differences(group)
        if any(len(d) > width for d in diffs):
            diffs = differences(group, brief=True)
        for r, diff in zip(group, diffs, strict=True):
            where = "buy" if r.purchase else "yours" if r.acquisition == "own" else \
                r.instance.provider if r.instance is not None else ""
            lead = "" if not where or diff.startswith(where) else where + (", " if diff else "")
            second[r.option] = fit_words(lead + diff, width)
    return {o.option: f"#{o.rank} {part(o)}\n{second[o.option]}" for o in options}
