"""Per-GPU memory as bars drawn with block characters (no plotting dependency), sized to the widget's width.

Every bar is labelled and the stacked bar uses a different character per part, so the chart reads without colour.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from gpuadvisor.rules.consultation.result import MemoryBreakdown
from gpuadvisor.tui.present import holds

PARTS: tuple[tuple[str, str, str], ...] = (
    ("weights", "Weights", "█"),
    ("kv_cache", "KV cache", "▓"),
    ("activations", "Activations", "▒"),
    ("gradients", "Gradients", "▚"),
    ("optimizer_states", "Optimizer states", "▞"),
    ("runtime_overhead", "Runtime overhead", "░"),
)
EIGHTHS = " ▏▎▍▌▋▊▉"
LABEL_W = 18
VALUE_W = 10


def bar(value: float, scale: float, width: int) -> str:
    """A horizontal bar of `value / scale × width` cells, with eighth-cell resolution."""
    if scale <= 0 or value <= 0:
        return ""
    cells = min(value / scale, 1.0) * width
    full = int(cells)
    rest = EIGHTHS[int((cells - full) * 8)] if full < width else ""
    return ("█" * full + rest.strip()) or "▏"


def stacked(memory: MemoryBreakdown, width: int) -> str:
    """One line: each part with its own character, free space as `·`, the headroom limit `┆` and capacity `│`."""
    scale = max(memory.capacity, memory.total)
    line: list[str] = []
    for key, _, char in PARTS:
        line.extend(char * round(getattr(memory, key) / scale * width))
    line = line[:width]
    line.extend("·" * (width - len(line)))
    limit = round((memory.capacity - memory.headroom_required) / scale * width) - 1
    if 0 <= limit < width and line[limit] == "·":
        line[limit] = "┆"
    cap = round(memory.capacity / scale * width) - 1
    if 0 <= cap < width:
        line[cap] = "│"
    return "".join(line)


class MemoryChart(Widget):
    """Memory breakdown of one option, per GPU, in GB (10^9 bytes)."""

    def __init__(self, memory: MemoryBreakdown, fits: bool, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.memory = memory
        self.fits = fits

    def render(self) -> Text:
        m = self.memory
        width = max(self.size.width - LABEL_W - VALUE_W - 2, 10)
        scale = max(m.capacity, m.total)
        theme = self.app.current_theme
        colours = [theme.primary, theme.secondary or theme.primary, theme.accent or theme.primary,
                   theme.warning or theme.primary, theme.error or theme.primary, theme.success or theme.primary]
        text = Text()
        for (key, label, _), colour in zip(PARTS, colours, strict=True):
            if not holds(m, key):  # serving holds no gradients, training no KV cache: no empty rows
                continue
            value = float(getattr(m, key))
            text.append(f"{label:<{LABEL_W}}")
            text.append(f"{bar(value, scale, width):<{width}}", style=colour)
            text.append(f"  {value:>7,.1f} GB\n", style="" if value else "dim")
        text.append(f"{'Total':<{LABEL_W}}", style="bold")
        text.append(f"{bar(m.total, scale, width):<{width}}", style="bold")
        text.append(f"  {m.total:>7,.1f} GB\n", style="bold")
        text.append(f"{'Capacity':<{LABEL_W}}")
        text.append(f"{bar(m.capacity, scale, width):<{width}}", style="dim")
        text.append(f"  {m.capacity:>7,.1f} GB\n\n")
        text.append(f"{'Stacked':<{LABEL_W}}")
        text.append(stacked(m, width) + "\n")
        items = [f"{char} {label.lower()}" for key, label, char in PARTS if getattr(m, key) > 0]
        items += ["· free", "┆ headroom limit", "│ capacity"]
        line = ""
        for item in items:
            if line and len(line) + 2 + len(item) > width:
                text.append(" " * LABEL_W + line + "\n", style="dim")
                line = ""
            line = f"{line}  {item}" if line else item
        text.append(" " * LABEL_W + line + "\n", style="dim")
        verdict = "✔ fits" if self.fits else "✖ does not fit"
        text.append(f"\n{verdict}: {m.total:,.1f} of {m.capacity:,.1f} GB ({m.utilization:.0%}); "
                    f"{m.headroom_required:,.1f} GB kept free against allocator fragmentation (W6).",
                    style="bold")
        return text
