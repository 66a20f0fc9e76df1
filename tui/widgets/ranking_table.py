"""The ranked options table: one row per option, the columns the workload needs, what-if moves and compare marks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from gpuadvisor.rules.consultation.result import Recommendation, RecommendResult
from gpuadvisor.rules.sizing.units import fixed
from gpuadvisor.tui.present import tokens_number
from gpuadvisor.tui.widgets import format as fmt

MAX_MARKS = 3
MIN_OPTION = 14
LABEL_ROOM = 22
"""Columns an option's label needs to name the part and how it comes ("MI300X · TensorWave", "H100 NVL · buy (2U)");
below it, at 80 columns, the Price column (the price's age, also in the detail and the legend's reports) gives way."""
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


_MEMORY_TOKEN = re.compile(r"\s+\d+\s?GB\b")


def brief_label(rec: Recommendation, level: int) -> str:
    """The option's label at a level of detail: 0 the part and how it comes (`short_title`), 1 without the machines
    × accelerators, 2 the part without its memory size too (`H100 NVL · buy`)."""
    text = short_title(rec)
    if level >= 1:
        text = re.sub(r" \d+×\d+", "", text)
    if level >= 2:
        text = _MEMORY_TOKEN.sub("", text)
    return text


def differences(group: Sequence[Recommendation], brief: bool = False) -> list[str]:
    """What tells options with one label apart, per option: how it comes (the provider, or buy), the GPU count, the
    rental's term, the machine (server), the instance's own name — each only when it differs within the group;
    `brief`: each in a word (`6×`, `2U`, `3-yr`)."""
    def server(r: Recommendation) -> str:
        name = r.unit.name.split(" (")[0].removesuffix(" server").strip() if r.purchase else ""
        return name.split(" ")[0] if brief else name

    def term(r: Recommendation) -> str:
        return TERMS.get(r.instance.pricing, " on demand").strip() if r.instance is not None else ""

    def where(r: Recommendation) -> str:
        return "buy" if r.purchase else r.instance.provider if r.instance is not None else ""

    def count(r: Recommendation) -> str:
        return f"{r.count}×" if brief else f"{r.count} GPU{'s' if r.count != 1 else ''}"

    aspects = (where, count, term, server, lambda r: r.instance.name if r.instance else "",
               lambda r: f"#{r.rank}")
    out: list[list[str]] = [[] for _ in group]
    for aspect in aspects:
        values = [aspect(r) for r in group]
        if len(set(values)) > 1:
            for extra, value in zip(out, values, strict=True):
                if value:
                    extra.append(value)
            if len({tuple(x) for x in out}) == len(group):
                break
    return [", ".join(x) for x in out]


def option_labels(recs: Sequence[Recommendation], width: int) -> dict[str, str]:
    """Labels for the option column, unique across the ranking (two options both reading "H100 NVL 94GB · buy 2×1"
    say what differs: count, term, server) and fitted to `width` by rule, never cut mid-word: each at the most
    detailed level of `brief_label` that fits; options that would still read alike say in brackets what differs (in a
    word each when the column is narrow), their common part shortened by whole words to leave it room."""
    def detailed(r: Recommendation) -> str:
        return next((t for lv in range(3) if len(t := brief_label(r, lv)) <= width), brief_label(r, 2))

    base = {r.option: detailed(r) for r in recs}
    labels = {k: fit_words(v, width) or v[:width] for k, v in base.items()}
    groups: dict[str, list[Recommendation]] = {}
    for r in recs:
        groups.setdefault(labels[r.option], []).append(r)
    for group in (g for g in groups.values() if len(g) > 1):
        diffs = differences(group)
        if any(width - len(d) - 3 < 6 for d in diffs):
            diffs = differences(group, brief=True)
        for r, diff in zip(group, diffs, strict=True):
            room = width - len(diff) - 3
            head = fit_words(base[r.option], room) if room >= 4 else ""
            labels[r.option] = (f"{head} ({diff})" if head else fit_words(diff, width) or diff[:width]) \
                if diff else labels[r.option]
    return labels


def fit_words(text: str, width: int) -> str:
    """`text` within `width`, cut at a word boundary with "…" when it does not fit (a word or a figure is never cut
    in two: "MI300X · Tenso…" read as a provider's name); "" when not even its first word fits."""
    if len(text) <= width:
        return text
    keep = max(width - 1, 1)
    cut = text[:keep]
    if text[keep] != " ":  # the cut falls inside a word: back to the space before it
        space = cut.rfind(" ")
        if space <= 0:
            return ""  # not even the first word fits: the caller shows something else
        cut = cut[:space]
    return cut.rstrip(" ·(,") + "…"


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
        if self.compact and room - sum(widths.values()) < LABEL_ROOM:  # 80 columns: the price's age gives way
            cols = [c for c in cols if c.key != "price"]
            widths.pop("price", None)
        option_width = max(MIN_OPTION, min(MAX_OPTION, room - sum(widths.values())))
        row_key = self.cursor_row
        self.clear(columns=True)
        for c in cols:
            label = Text(c.label, justify="right") if c.key in RIGHT else Text(f" {c.label}" if c.label else "")
            self.add_column(label, width=widths.get(c.key, option_width), key=c.key)
        # one naming style for the whole column: the full titles when they fit (they are unique), else the labels
        full = all(len(rec.title) < option_width for rec, _ in rows) and \
            len({rec.title for rec, _ in rows}) == len(rows)
        short = option_labels([rec for rec, _ in rows], option_width - 1)
        for rec, values in rows:
            title = rec.title if full else short[rec.option]
            values["option"] = " " + title
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
