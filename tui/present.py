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
    text: str
    """The figure as every screen and report prints it, with its unit."""
    better: Better = ""
    """Which way is better when options are compared: 'low' (cost, time, latency), 'high' (speed), '' (neither:
    memory a plan holds per GPU says how it is split, not how good it is)."""


def tokens_number(value: float) -> str:
    """`13,659`, `43.1`: whole tokens from 100 up."""
    return fixed(value, 0 if value >= 100 else 1)


def tokens_per_s(value: float) -> str:
    return f"{tokens_number(value)} tokens/s"


def gb_text(value: float) -> str:
    return f"{fixed(value, 1)} GB"


def seconds_text(value: float) -> str:
    """A latency in seconds with two decimals: `0.42 s`, `1.35 s`."""
    return f"{fixed(value, 2)} s"


def headroom_text(value: float) -> str:
    return fmt.headroom(value)


@dataclass(frozen=True)
class _Spec:
    key: str
    label: str
    value: Callable[[Recommendation], float | None]
    text: Callable[[float], str]
    better: Better = ""


SPECS: tuple[_Spec, ...] = (
    _Spec("memory", "Memory per GPU", lambda r: r.memory.total, gb_text),
    _Spec("capacity", "Capacity (largest batch)", lambda r: r.capacity_tokens_per_s, tokens_per_s, "high"),
    _Spec("headroom", "Headroom (capacity ÷ demand)", lambda r: r.headroom, headroom_text, "high"),
    _Spec("throughput", "Throughput at the planned batch", lambda r: r.tokens_per_s, tokens_per_s, "high"),
    _Spec("per_user", "Per user", lambda r: r.tokens_per_s_per_user, tokens_per_s, "high"),
    _Spec("ttft", "Time to first token", lambda r: r.ttft_s, seconds_text, "low"),
    _Spec("training_time", "Training time", lambda r: r.training_days, fmt.duration_days, "low"),
    _Spec("gpu_hours", "GPU-hours", lambda r: r.training_gpu_hours, lambda v: fixed(v, 0), "low"),
    _Spec("usd_per_hour", "Per hour", lambda r: r.cost.usd_per_hour, usd_text, "low"),
    _Spec("usd_per_run", "Per run", lambda r: r.cost.usd_per_run, usd_text, "low"),
    _Spec("usd_per_million_tokens", "Per million tokens", lambda r: r.cost.usd_per_million_tokens, usd_text, "low"),
    _Spec("usd_per_month", "Per month", lambda r: r.cost.usd_per_month, usd_text, "low"),
    _Spec("capex", "Purchase (capex)", lambda r: r.cost.capex_usd, usd_text, "low"),
    _Spec("total", "Total", lambda r: r.decision_cost.usd, usd_text, "low"),
)
BY_KEY = {s.key: s for s in SPECS}
SPEED = ("capacity", "headroom", "throughput", "per_user", "ttft", "training_time", "gpu_hours")
"""The speed figures, in the order the detail and the reports list them."""
COST = ("usd_per_hour", "usd_per_month", "usd_per_run", "usd_per_million_tokens", "capex")


def figure(rec: Recommendation, key: str) -> Figure | None:
    """One figure of the option, or None when the option has none (a training run has no capacity)."""
    spec = BY_KEY[key]
    value = spec.value(rec)
    if value is None:
        return None
    return Figure(spec.key, spec.label, float(value), spec.text(float(value)), spec.better)


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
