"""Inline SVG charts for the HTML report: memory breakdown per option and a cost comparison.

Plain SVG elements only (no scripts, no external fonts or images). Every bar carries a text label and a <title>, and
the figures are written out, so a chart still reads when printed in grey or heard through a screen reader. All text is
escaped here: option titles come from the knowledge base and model names from the user.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from html import escape

from gpuadvisor.rules.consultation.result import LifecycleOut, Recommendation
from gpuadvisor.tui.report import common as c

WIDTH = 760
X0 = 4
"""Bars start at the left edge: each option's whole name is written on its own line above its bar."""
VALUE_W = 170
BAR_W = WIDTH - X0 - VALUE_W - 10
LABEL_H = 16
BAR_H = 22
ROW_H = LABEL_H + BAR_H + 14
FONT = 12

# (field, legend name, short label, fill, text colour). Fills differ in lightness as well as hue, for grey printing.
SEGMENTS = (
    ("weights", "Weights", "W", "#1f3b5c", "#ffffff"),
    ("kv_cache", "KV cache", "KV", "#e69f00", "#000000"),
    ("activations", "Activations", "Act", "#5d9c45", "#ffffff"),
    ("gradients", "Gradients", "Grad", "#b9a8e0", "#000000"),
    ("optimizer_states", "Optimizer states", "Opt", "#9c3a36", "#ffffff"),
    ("runtime_overhead", "Runtime overhead", "Ovh", "#9a9a9a", "#000000"),
)


def _e(text: str) -> str:
    """Escaped for an SVG text node or attribute, control characters removed first (`one_line`)."""
    return escape(c.one_line(text), quote=True)


def _label(x: int, y: float, text: str) -> str:
    """An option's name, whole, on the line above its bar."""
    return f'<text x="{x}" y="{y - 5:.1f}" fill="#222">{_e(c.one_line(text))}</text>'


NICE_STEPS = ((1, 5), (2, 4), (2.5, 5), (4, 4), (5, 5), (8, 4), (10, 5))  # (axis end / 10^n, tick intervals)


def nice_axis(value: float) -> tuple[float, int]:
    """The axis end (the next 1, 2, 2.5, 4, 5 or 8 × 10^n at or above `value`) and a tick count that keeps the
    tick labels round."""
    if value <= 0:
        return 1.0, 5
    power = 10 ** math.floor(math.log10(value))
    for step, ticks in NICE_STEPS:
        if step * power >= value * (1 - 1e-12):
            return float(step * power), ticks
    return float(10 * power), 5


def nice_ceiling(value: float) -> float:
    return nice_axis(value)[0]


def _open(chart_id: str, height: int, title: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-labelledby="{chart_id}-title {chart_id}-desc" '
        f'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" font-size="{FONT}">',
        f'<title id="{chart_id}-title">{_e(title)}</title>',
        f'<desc id="{chart_id}-desc">{_e(desc)}</desc>',
    ]


def _axis(x0: int, y: int, scale: float, top: float, unit: str, fmt: str = "{:,.0f}") -> list[str]:
    """Tick marks and labels under the bars."""
    ticks = nice_axis(top)[1]
    out = [f'<line x1="{x0}" y1="{y}" x2="{x0 + BAR_W}" y2="{y}" stroke="#555" stroke-width="1"/>']
    for i in range(ticks + 1):
        value = top * i / ticks
        x = x0 + value * scale
        out.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#555"/>')
        anchor = "start" if i == 0 else "middle"  # the first label starts at the axis: centred, it was cut ("$.00")
        out.append(f'<text x="{x:.1f}" y="{y + 16}" text-anchor="{anchor}" fill="#333">{_e(fmt.format(value))}</text>')
    out.append(f'<text x="{x0 + BAR_W}" y="{y + 30}" text-anchor="end" fill="#333">{_e(unit)}</text>')
    return out


def _legend(fields: Collection[str] | None = None) -> tuple[list[str], int]:
    """Colour keys with names (of `fields` only, when given: no KV cache key for a training job), wrapped onto as
    many lines as the width needs; returns the elements and height."""
    out, x, y = [], 0, 6
    for field, name, short, fill, _ink in SEGMENTS:
        if fields is not None and field not in fields:
            continue
        text = f"{name} ({short})"
        width = 16 + int(6.5 * len(text)) + 18
        if x and x + width > WIDTH:
            x, y = 0, y + 20
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{fill}" stroke="#333" stroke-width="0.5"/>')
        out.append(f'<text x="{x + 16}" y="{y + 10}" fill="#222">{_e(text)}</text>')
        x += width
    return out, y + 26


def memory_chart(recs: Sequence[Recommendation], chart_id: str = "memory-chart") -> str:
    """Stacked bars of per-GPU memory for each option, with its capacity and the keep-free limit marked."""
    if not recs:
        return ""
    top = nice_ceiling(max(max(r.memory.capacity, r.memory.total) for r in recs))
    scale = BAR_W / top
    legend, legend_h = _legend({f for r in recs for f, _ in c.memory_parts(r)})
    height = legend_h + ROW_H * len(recs) + 44
    out = _open(chart_id, height, "Memory per GPU by option",
                "Stacked bars of weights, KV cache, activations, gradients, optimizer states and runtime overhead "
                "per GPU, in GB; a solid line marks the GPU's capacity and a dashed line the keep-free limit.")
    out += legend
    x0 = X0
    for i, r in enumerate(recs):
        y = legend_h + i * ROW_H + LABEL_H + 6
        m = r.memory
        out.append(f'<g class="row"><title>{_e(f"{r.title}: {c.gb(m.total)} of {c.gb(m.capacity)}")}</title>')
        out.append(_label(x0, y, f"{r.rank}. {r.title}"))
        cursor = float(x0)
        for field, name, short, fill, ink in SEGMENTS:
            value = float(getattr(m, field))
            if value <= 0:
                continue
            w = value * scale
            out.append(f'<rect x="{cursor:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{fill}" '
                       f'stroke="#fff" stroke-width="0.5"><title>{_e(f"{name}: {c.gb(value)}")}</title></rect>')
            label = f"{short} {c.fixed(value, 1)}" if w >= 9 * len(f"{short} {c.fixed(value, 1)}") else (
                short if w >= 8 * len(short) + 4 else "")
            if label:
                out.append(f'<text x="{cursor + w / 2:.1f}" y="{y + BAR_H / 2 + 4:.1f}" text-anchor="middle" '
                           f'fill="{ink}">{_e(label)}</text>')
            cursor += w
        cap_x = x0 + m.capacity * scale
        limit = m.capacity - m.headroom_required
        limit_x = x0 + limit * scale
        out.append(f'<line x1="{limit_x:.1f}" y1="{y - 3}" x2="{limit_x:.1f}" y2="{y + BAR_H + 3}" stroke="#000" '
                   f'stroke-width="1.5" stroke-dasharray="3 2"><title>keep-free limit {_e(c.gb(limit))}</title></line>')
        out.append(f'<line x1="{cap_x:.1f}" y1="{y - 5}" x2="{cap_x:.1f}" y2="{y + BAR_H + 5}" stroke="#000" '
                   f'stroke-width="2.5"><title>capacity {_e(c.gb(m.capacity))}</title></line>')
        out.append(f'<text x="{x0 + BAR_W + 10}" y="{y + BAR_H / 2 + 4:.1f}" fill="#222">'
                   f"{_e(f'{c.fixed(m.total, 1)} / {c.fixed(m.capacity, 0)} GB ({c.pct(m.utilization)})')}</text>")
        out.append("</g>")
    out += _axis(x0, legend_h + ROW_H * len(recs) + 4, scale, top,
                 "GB per GPU (solid line: capacity, dashed: keep-free limit)")
    out.append("</svg>")
    return "\n".join(out)


def cost_chart(recs: Sequence[Recommendation], chart_id: str = "cost-chart") -> str:
    """Horizontal bars of the figure the options are ranked by — what each decision costs over the horizon (the
    Total column) — each bar's tooltip its parts (hardware, power, site, network, less resale; or the rental)."""
    if not recs:
        return ""
    label = c.total_label(recs)
    values = [r.decision_cost.usd for r in recs]
    top = nice_ceiling(max(max(values), 1.0))
    scale = BAR_W / top
    height = ROW_H * len(recs) + 54
    out = _open(chart_id, height, f"{label} by option",
                f"{label} in US dollars for each ranked option, the figure they are ranked by; shorter is cheaper.")
    x0 = X0
    for i, (r, value) in enumerate(zip(recs, values, strict=True)):
        y = 8 + i * ROW_H + LABEL_H
        fill = "#2f6f4f" if not r.purchase else "#4a6fa5"
        pricing = "buy" if r.purchase else (r.instance.pricing if r.instance else "")
        out.append(f'<g class="row"><title>{_e(f"{r.title}: {c.decision_line(r)}")}</title>')
        out.append(_label(x0, y, f"{r.rank}. {r.title}"))
        w = max(value * scale, 1.0)
        out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{fill}"/>')
        out.append(f'<text x="{x0 + w + 6:.1f}" y="{y + BAR_H / 2 + 4:.1f}" fill="#222">'
                   f"{_e(f'{c.usd(value)} ({pricing})' if pricing else c.usd(value))}</text>")
        out.append("</g>")
    money = "${:,.2f}" if top < 10 else "${:,.0f}"
    out += _axis(x0, 8 + ROW_H * len(recs) + 4, scale, top, f"{label}, USD", money)
    out.append("</svg>")
    return "\n".join(out)


CHOICE_FILL = {"rent": "#2f6f4f", "buy": "#4a6fa5", "reuse": "#9fb8d9", "own": "#7a7a7a", "free": "#7a7a7a"}
"""Rented work green, a purchase dark blue, work on what an earlier phase bought light blue (differ in lightness)."""


def timeline_chart(life: LifecycleOut, chart_id: str = "timeline-chart") -> str:
    """The phases as a timeline over the horizon: one bar per phase from its start month for its months (a training
    run of days is drawn at least 3 px wide), labelled with what it runs on and its cost; a purchase's holding to
    the end of the horizon is a thin line after its bar."""
    if not life.plan:
        return ""
    top = max(life.horizon_months, max(p.start_month + p.months for p in life.plan))
    axis_end, _ = nice_axis(top)
    scale = BAR_W / axis_end
    height = ROW_H * len(life.plan) + 54
    out = _open(chart_id, height, "The phases on a timeline",
                f"One bar per phase over {c.number(life.horizon_months)} months, from its start for its duration, "
                "labelled with what it runs on and its cost; rented green, bought dark blue, reused light blue.")
    x0 = X0
    for i, p in enumerate(life.plan):
        y = 8 + i * ROW_H + LABEL_H
        spend = c.phase_spend(p)
        label = f"{p.phase}. {p.name}: {c.CHOICE_VERB.get(p.choice, p.choice)} {p.title.removeprefix('Buy ')}"
        out.append(f'<g class="row"><title>{_e(f"{label}: {c.phase_when(p)}, {c.usd(spend)}")}</title>')
        out.append(_label(x0, y, label))
        bx = x0 + p.start_month * scale
        w = max(p.months * scale, 3.0)
        fill = CHOICE_FILL.get(p.choice, "#555")
        out.append(f'<rect x="{bx:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{fill}"/>')
        tx = bx + w + 6
        if p.choice == "buy":
            hold_x = x0 + life.horizon_months * scale
            mid = y + BAR_H / 2
            out.append(f'<line x1="{bx + w:.1f}" y1="{mid:.1f}" x2="{hold_x:.1f}" y2="{mid:.1f}" stroke="{fill}" '
                       f'stroke-width="2" stroke-dasharray="4 3"><title>held to month '
                       f'{_e(c.number(life.horizon_months))}</title></line>')
            tx = max(tx, hold_x + 6)  # the cost after the holding line, not over it
        out.append(f'<text x="{tx:.1f}" y="{y + BAR_H / 2 + 4:.1f}" fill="#222">{_e(c.usd(spend))}</text>')
        out.append("</g>")
    out += _axis(x0, 8 + ROW_H * len(life.plan) + 4, scale, axis_end, "months from the start")
    out.append("</svg>")
    return "\n".join(out)
