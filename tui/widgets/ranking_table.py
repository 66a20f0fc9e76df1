"""The ranked options table: one row per option, the columns the workload needs, what-if moves and compare marks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from gpuadvisor.rules.result import Recommendation, RecommendResult
from gpuadvisor.rules.sizing.units import fixed
from gpuadvisor.tui.present import tokens_number
from gpuadvisor.tui.widgets import format as fmt

MAX_MARKS = 3
MIN_OPTION = 14
MAX_OPTION = 72
RIGHT = frozenset({"rank", "count", "memory", "speed", "cost", "unit", "score"})


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int


def columns_for(workload: str, compact: bool = False, moved: bool = True) -> list[Column]:
    """Serving shows each option's capacity (× the demand) and $/month; training and fine-tuning show the run's
    time and $/run. `compact` (a narrow terminal) abbreviates labels so every column stays; `moved`: the Δ column
    of a what-if needs room for `▲12`.

    Widths are minimums including the one-space gap before the column (the table has no cell padding, to fit 80
    columns); `RankingTable.rebuild` widens a column to its widest cell.
    """
    common = [Column("mark", "", 1), Column("rank", "#", 3), Column("option", "Option", 0),
              Column("count", "GPUs", 5), Column("fits", "Fit" if compact else "Fits", 4),
              Column("memory", "GB/GPU" if compact else "Mem/GPU", 7)]
    if workload == "inference":
        extra = [Column("speed", "Tok/s" if compact else "Capacity tok/s", 6),
                 Column("cost", "$/mo" if compact else "$/month", 7), Column("unit", "$/h", 7)]
    else:
        extra = [Column("speed", "Time", 6), Column("cost", "$/run", 7), Column("unit", "$/h", 7)]
    return [*common, *extra, Column("price", "Price", 6), Column("score", "Total", 7),
            Column("move", "Δ", 4 if moved else 2)]


TERMS = {"spot": " spot", "reserved-1y": " 1-yr", "reserved-3y": " 3-yr", "capacity-block": " reserved"}
"""How a rental is paid, when not on demand: three offers of one instance (on demand, 1- and 3-year reserved) read
as three rows, not one row thrice."""

VENDOR_PREFIXES = ("NVIDIA GeForce ", "NVIDIA ", "AMD Instinct ", "AMD Radeon ", "AMD ", "Google ", "AWS ", "Intel ",
                   "Apple ")


def short_title(rec: Recommendation) -> str:
    """`H200 SXM · RunPod`, `H100 SXM5 · AWS 2×8 3-yr`, `MI300X · buy 2×8`: the part and how it comes, machines ×
    the accelerators in each, a rental's term unless on demand (the vendor is implied by the part; the detail and
    the headline name the unit in full)."""
    name = rec.accelerator.name.split(" (")[0]  # "GB200 (per Blackwell GPU in GB200 NVL72)": the part's name
    for prefix in VENDOR_PREFIXES:
        name = name.removeprefix(prefix)
    machines, per = rec.unit.machines, rec.unit.per_machine
    if rec.acquisition == "own":
        where = "yours"
    elif rec.purchase or rec.instance is not None:
        layout = f" {machines}×{per}" if machines * per > 1 else ""  # machines × accelerators in each
        if rec.purchase:
            where = "buy" + layout
        else:
            assert rec.instance is not None
            where = rec.instance.provider + layout + TERMS.get(rec.instance.pricing, "")
    else:
        where = ""
    return f"{name} · {where}" if where else name


def cells(rec: Recommendation, workload: str, compact: bool = False) -> dict[str, str]:
    """The text of each column for one option (purchases show their price where rentals show $/h); `compact`
    abbreviates figures for a narrow terminal."""
    cost = rec.cost
    buy = None
    if rec.purchase and cost.capex_usd is not None:  # compact: the option's name already says "buy"
        buy = fmt.short_money(cost.capex_usd) if compact else f"buy {fmt.short_money(cost.capex_usd)}"
    if workload == "inference":  # ranked by the cost of the month at the hours used
        capacity = rec.capacity_tokens_per_s if rec.capacity_tokens_per_s is not None else rec.tokens_per_s
        speed = tokens_number(capacity) if capacity is not None else fmt.DASH
        if rec.headroom is not None:
            speed += f" {fmt.headroom(rec.headroom)}" if compact else f" ({fmt.headroom(rec.headroom)})"
        main = fmt.short_money(cost.usd_per_month) if compact else fmt.money(cost.usd_per_month)
        unit = buy or fmt.money(cost.usd_per_hour)
    else:
        speed = fmt.duration_days(rec.training_days)
        main = fmt.money(cost.usd_per_run) if cost.usd_per_run is not None else (buy or fmt.DASH)
        unit = buy if cost.usd_per_run is not None and buy else fmt.money(cost.usd_per_hour)
    return {
        "rank": str(rec.rank), "count": str(rec.count), "fits": "✔" if rec.fits else "✖",
        "memory": fixed(rec.memory.total, 1), "speed": speed, "cost": main, "unit": unit,
        "price": (fmt.price_age(cost.price_kind, cost.price_as_of, cost.price_age_months) if compact
                  else fmt.price_label(cost.price_kind, cost.price_as_of, cost.price_age_months)),
        "score": fmt.short_money(rec.decision_cost.usd) if compact else fmt.money(rec.decision_cost.usd),
    }


def ellipsize(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


class RankingTable(DataTable[Text]):
    """Ranked options; row keys are option ids. `marked` holds the options picked for comparison."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Explain", id="ranking.explain",
                tooltip="Detail and WHY of the selected option"),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, cursor_type="row", zebra_stripes=True, cell_padding=0)
        self.marked: list[str] = []
        self._result: RecommendResult | None = None
        self._previous: RecommendResult | None = None
        self.moved: dict[str, str] = {}
        self._highlight = "bold"
        self._built_width = -1
        self._runners: set[str] = set()
        self.max_width: int | None = None
        self.compact = False
        """The figures are abbreviated (`cells(..., compact=True)`) because the terminal is narrow."""
        """Set by the results screen on a wide terminal, where the table is as wide as its content up to this."""

    @property
    def options(self) -> list[Recommendation]:
        if self._result is None:
            return []
        return [*self._result.recommendations, *self._result.runners_up]

    def show(self, result: RecommendResult, previous: RecommendResult | None, highlight: str = "bold") -> None:
        self._result, self._previous, self._highlight = result, previous, highlight
        self.marked = [m for m in self.marked if any(r.option == m for r in self.options)]
        self.moved = moves(previous, result) if previous is not None else {}
        self._built_width = -1  # new content: build at the next chance
        if self.size.width:  # before the first layout the width is unknown: `on_resize` builds the table then
            self.rebuild()

    def rebuild(self) -> None:
        """(Re)fill the table: each column as wide as its widest cell plus a gap, the option column the rest. When
        the columns do not leave the option names room (a narrow terminal), labels and figures are abbreviated
        rather than a column dropped."""
        if self._result is None:
            return
        workload = str(self._result.answers_effective.get("workload", "inference"))
        room = self.room()
        self._built_width = self.size.width
        self.compact = False
        cols, rows, widths = self._layout(workload, False)
        if room - sum(widths.values()) < MIN_OPTION + 6:
            self.compact = True
            cols, rows, widths = self._layout(workload, True)
        option_width = max(MIN_OPTION, min(MAX_OPTION, room - sum(widths.values())))
        row_key = self.cursor_row
        self.clear(columns=True)
        for c in cols:
            label = Text(c.label, justify="right") if c.key in RIGHT else Text(f" {c.label}" if c.label else "")
            self.add_column(label, width=widths.get(c.key, option_width), key=c.key)
        full = all(len(rec.title) < option_width for rec, _ in rows)  # one naming style for the whole column
        short = {rec.option: short_title(rec) for rec, _ in rows}
        seen = Counter(short.values())
        for rec, _ in rows:  # two offers of one part at one provider: name the instance too
            if seen[short[rec.option]] > 1 and rec.instance is not None:
                short[rec.option] = short[rec.option].replace(" · ", f" · {rec.instance.name} · ", 1)
        for rec, values in rows:
            title = rec.title if full else short[rec.option]
            values["option"] = " " + ellipsize(title, option_width - 1)
            style = "dim" if rec.option in self._runners else ""
            if values["move"].strip():
                style = self._highlight
            self.add_row(*(Text(values[c.key], style=style, justify="right" if c.key in RIGHT else "left",
                                no_wrap=True) for c in cols), key=rec.option)
        if self.row_count:
            self.move_cursor(row=min(row_key, self.row_count - 1))

    def room(self) -> int:
        """Columns the table may use: its own width, or `max_width` when its width follows its content, less the
        vertical scrollbar (kept so that no row is hidden behind a horizontal one)."""
        return (self.max_width or self.size.width or 80) - self.styles.scrollbar_size_vertical

    def natural_width(self) -> int:
        """Columns the table needs without abbreviating (the widest option title included, up to MAX_OPTION)."""
        if self._result is None:
            return 0
        workload = str(self._result.answers_effective.get("workload", "inference"))
        _, rows, widths = self._layout(workload, False)
        longest = max((len(rec.title) for rec, _ in rows), default=MIN_OPTION) + 2
        return sum(widths.values()) + min(MAX_OPTION, longest) + self.styles.scrollbar_size_vertical

    def _layout(self, workload: str, compact: bool,
                ) -> tuple[list[Column], list[tuple[Recommendation, dict[str, str]]], dict[str, int]]:
        cols = columns_for(workload, compact, moved=bool(self.moved))
        self._runners = {r.option for r in self._result.runners_up} if self._result is not None else set()
        rows = []
        for rec in self.options:
            values = cells(rec, workload, compact)
            values["mark"] = "●" if rec.option in self.marked else ""
            values["fits"] = " " + values["fits"]
            values["price"] = " " + values["price"]
            values["move"] = " " + self.moved.get(rec.option, "")
            rows.append((rec, values))
        widths = {c.key: max([c.width, len(c.label) + 1, *(len(v[c.key]) + 1 for _, v in rows)])
                  for c in cols if c.key != "option"}
        return cols, rows, widths

    def on_resize(self) -> None:
        if self.size.width != self._built_width:
            self.rebuild()

    @property
    def selected(self) -> Recommendation | None:
        options = self.options
        if not options or self.cursor_row < 0 or self.cursor_row >= len(options):
            return None
        return options[self.cursor_row]

    def toggle_mark(self) -> str | None:
        """Mark or unmark the selected option; returns a problem text when a fourth would be marked."""
        rec = self.selected
        if rec is None:
            return None
        if rec.option in self.marked:
            self.marked.remove(rec.option)
        elif len(self.marked) >= MAX_MARKS:
            return f"at most {MAX_MARKS} options can be compared: unmark one first"
        else:
            self.marked.append(rec.option)
        self.update_cell(rec.option, "mark", Text("●" if rec.option in self.marked else ""))
        return None

    def for_compare(self) -> list[Recommendation]:
        """The marked options, or the top three when fewer than two are marked."""
        by_id = {r.option: r for r in self.options}
        marked = [by_id[m] for m in self.marked if m in by_id]
        return marked if len(marked) >= 2 else self.options[:MAX_MARKS]


def moves(previous: RecommendResult, current: RecommendResult) -> dict[str, str]:
    """Rank changes between two results, per option id of the current one (`▲2`, `▼1`, `new`)."""
    old = {r.option: r.rank for r in [*previous.recommendations, *previous.runners_up]}
    out: dict[str, str] = {}
    for rec in [*current.recommendations, *current.runners_up]:
        move = fmt.ordinal_move(old.get(rec.option), rec.rank)
        if move:
            out[rec.option] = move
    return out


def dropped(previous: RecommendResult, current: RecommendResult) -> Sequence[Recommendation]:
    """Options of the previous result that are no longer ranked."""
    now = {r.option for r in [*current.recommendations, *current.runners_up]}
    return [r for r in [*previous.recommendations, *previous.runners_up] if r.option not in now]
