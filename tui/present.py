"""One presenter: an option's figures with their labels and their printed form.

The results table, the option's detail, compare and every report (text, Markdown, HTML) read their figures from
here, so a quantity has one name and one figure everywhere: the table's "Capacity" is the detail's and the report's
"Capacity", and the planned batch's throughput is never printed under a name that could be taken for it.

    for f in figures(rec, SPEED):          # Figure(key, label, value, text, better)
        print(f.label, f.text)             # Capacity  13,659 tokens/s
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from gpuadvisor.rules.result import Recommendation
from gpuadvisor.rules.sizing.units import fixed, usd_text
from gpuadvisor.tui.widgets import format as fmt

Better = Literal["low", "high", ""]


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: float
    number: str
    """The figure without its unit (`13,659`): what a narrow column prints under a label that names the unit."""
    text: str
    """The figure as every screen and report prints it, with its unit (`13,659 tokens/s`)."""
    better: Better = ""
    """Which way is better when options are compared: 'low' (cost, time, latency), 'high' (speed), '' (neither:
    memory a plan holds per GPU says how it is split, not how good it is)."""


def tokens_number(value: float) -> str:
    """`13,659`, `43.1`: whole tokens from 100 up."""
    return fixed(value, 0 if value >= 100 else 1)


def gb_text(value: float) -> str:
    return f"{fixed(value, 1)} GB"


@dataclass(frozen=True)
class Spec:
    key: str
    label: str
    short: str
    """The label in a narrow column (compare), with the unit when the cells leave it out."""
    value: Callable[[Recommendation], float | None]
    number: Callable[[float], str]
    unit: str = ""
    better: Better = ""

    def text(self, value: float) -> str:
        return self.number(value) + self.unit


SPECS: tuple[Spec, ...] = (
    Spec("memory", "Memory per GPU", "Memory/GPU (GB)", lambda r: r.memory.total, lambda v: fixed(v, 1), " GB"),
    Spec("capacity", "Capacity (largest batch)", "Capacity (tok/s)", lambda r: r.capacity_tokens_per_s,
         tokens_number, " tokens/s", "high"),
    Spec("headroom", "Headroom (capacity ÷ demand)", "Headroom", lambda r: r.headroom, fmt.headroom, "", "high"),
    Spec("throughput", "Throughput at the planned batch", "Throughput (tok/s)", lambda r: r.tokens_per_s,
         tokens_number, " tokens/s", "high"),
    Spec("per_user", "Per user", "Per user (tok/s)", lambda r: r.tokens_per_s_per_user, tokens_number, " tokens/s",
         "high"),
    Spec("ttft", "Time to first token", "First token (s)", lambda r: r.ttft_s, lambda v: fixed(v, 2), " s", "low"),
    Spec("training_time", "Training time", "Training time", lambda r: r.training_days, fmt.duration_days, "", "low"),
    Spec("gpu_hours", "GPU-hours", "GPU-hours", lambda r: r.training_gpu_hours, lambda v: fixed(v, 0), "", "low"),
    Spec("usd_per_hour", "Per hour", "$/hour", lambda r: r.cost.usd_per_hour, usd_text, "", "low"),
    Spec("usd_per_run", "Per run", "$/run", lambda r: r.cost.usd_per_run, usd_text, "", "low"),
    Spec("usd_per_million_tokens", "Per million tokens", "$/1M tokens", lambda r: r.cost.usd_per_million_tokens,
         usd_text, "", "low"),
    Spec("usd_per_month", "Per month", "$/month", lambda r: r.cost.usd_per_month, usd_text, "", "low"),
    Spec("capex", "Purchase (capex)", "Purchase", lambda r: r.cost.capex_usd, usd_text, "", "low"),
    Spec("total", "Total", "Total", lambda r: r.decision_cost.usd, usd_text, "", "low"),
)
BY_KEY = {s.key: s for s in SPECS}
SPEED = ("capacity", "headroom", "throughput", "per_user", "ttft", "training_time", "gpu_hours")
"""The speed figures, in the order the detail and the reports list them."""


def figure(rec: Recommendation, key: str) -> Figure | None:
    """One figure of the option, or None when the option has none (a training run has no capacity)."""
    spec = BY_KEY[key]
    value = spec.value(rec)
    if value is None:
        return None
    return Figure(spec.key, spec.label, float(value), spec.number(float(value)), spec.text(float(value)),
                  spec.better)


def figures(rec: Recommendation, keys: Sequence[str]) -> list[Figure]:
    """The option's figures among `keys`, in that order, the ones it has."""
    return [f for f in (figure(rec, key) for key in keys) if f is not None]


def label(key: str) -> str:
    return BY_KEY[key].label


def better(key: str) -> Better:
    return BY_KEY[key].better


def text(rec: Recommendation, key: str) -> str:
    """The printed figure, or a dash when the option has none."""
    f = figure(rec, key)
    return f.text if f is not None else fmt.DASH
