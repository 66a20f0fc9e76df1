"""Where an option sits on the roofline: a small text diagram with the ridge point of its accelerator.

The ridge point (peak dense FLOPS ÷ memory bandwidth, 002 S7) comes from the knowledge base; the side of it the
workload falls on is the engine's verdict (`bound`), so the diagram never contradicts the numbers it illustrates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widget import Widget

from gpuadvisor.rules.sizing.peak import peak_tflops


@dataclass(frozen=True)
class Ridge:
    tflops: float
    precision: str
    bandwidth_gbs: float

    @property
    def flop_per_byte(self) -> float:
        return self.tflops * 1e12 / (self.bandwidth_gbs * 1e9)


def ridge_for(catalog: Any | None, accelerator_id: str, compute: str | None) -> Ridge | None:
    """The accelerator's ridge point at the precision the math runs in (`Formats.compute`; None: unknown)."""
    if catalog is None or compute is None:
        return None
    acc = catalog.accelerators.get(accelerator_id)
    if acc is None:
        return None
    # the peak the speed model runs this format at (rules.sizing.peak, falling back as it does on a part without
    # it), so the diagram shows the figure used
    tflops, name = peak_tflops(acc, compute)
    return Ridge(tflops, name, acc.memory_bandwidth_gbs.value) if tflops else None


def diagram(bound: str, ridge: Ridge | None, width: int = 56) -> list[str]:
    """Five lines: the bandwidth slope up to the ridge, the compute roof after it, and `●` where the workload sits."""
    width = max(width, 30)
    knee = width // 3
    height = 4
    rows = [[" "] * width for _ in range(height)]
    for row in range(height):
        col = round(knee * (height - row) / height) - 1
        if 0 <= col < width:
            rows[row][col] = "╱"
    for col in range(knee, width):
        rows[0][col] = "─"
    if bound == "bandwidth":
        rows[2][max(knee // 2 - 2, 0)] = "●"
    else:
        rows[0][knee + (width - knee) // 2] = "●"
    roof = f" {ridge.tflops:,.0f} TFLOPS ({ridge.precision.upper()} dense)" if ridge else " compute roof"
    slope = f" {ridge.bandwidth_gbs:,.0f} GB/s" if ridge else " bandwidth roof"
    lines = ["│" + "".join(r) for r in rows]
    lines[0] = lines[0][: width + 1] + roof
    lines[2] = lines[2] + slope
    lines.append("└" + "─" * width + " FLOP per byte →")
    ridge_text = f"ridge {ridge.flop_per_byte:,.0f} FLOP/byte" if ridge else "ridge"
    lines.append(" " * max(knee - 1, 0) + "▲ " + ridge_text)
    return lines


class Roofline(Widget):
    def __init__(self, bound: str, ridge: Ridge | None, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.bound = bound
        self.ridge = ridge

    def render(self) -> Text:
        width = min(max(self.size.width - 40, 30), 60)
        return Text("\n".join(diagram(self.bound, self.ridge, width)))
