"""One presenter: an option's figures and rows, with their labels and their printed form.

The results table, the option's detail, compare and every report (text, Markdown, HTML) read an option's figures and
rows (speed, cost, memory, what it costs part by part, its layout) from here, so a quantity has one name and one
figure everywhere: the table's "Capacity" is the detail's and the report's "Capacity", and the planned batch's
throughput is never printed under a name that could be taken for it.

    for f in figures(rec, SPEED):          # Figure(key, label, value, text, better)
        print(f.label, f.text)             # Capacity  13,659 tokens/s
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from gpuadvisor.rules.consultation.result import Cost, MemoryBreakdown, Recommendation
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


NA = "n/a"


def pct(fraction: float) -> str:
    """A 0-1 fraction as a percentage: `83.5%`."""
    return f"{fixed(fraction * 100, 1)}%"


def gb(value: float) -> str:
    return gb_text(value)


def usd(value: float) -> str:
    return usd_text(value)


def decision_rows(rec: Recommendation) -> list[tuple[str, str, str]]:
    """(part, dollars, how) for each part of the option's decision cost, and the total: one presenter for the
    table, the detail, the compare screen and every report."""
    d = rec.decision_cost
    rows: list[tuple[str, str, str]] = [(p.part, signed_usd(p.usd), f"{p.label} ({p.rule})") for p in d.parts]
    rows.append(("total", signed_usd(d.usd), d.horizon))
    return rows


def signed_usd(value: float) -> str:
    """'$1,234', '−$560' (a resale credit), '$0.42'."""
    return usd_text(value)


def where(rec: Recommendation) -> str:
    """How the option is obtained: bought, or which instance on which cloud at which price type."""
    if rec.acquisition == "own":
        return "your own hardware"
    if rec.purchase or rec.instance is None:
        return "buy"
    inst = rec.instance
    count = f"{inst.count}× " if inst.count != 1 else ""
    return f"{count}{inst.label} ({inst.pricing})"


def hardware(rec: Recommendation) -> str:
    return f"{rec.count}× {rec.accelerator.name}"


def split_short(rec: Recommendation) -> str:
    """How one replica is split: `TP 2 × PP 1`, or `EP 8 × PP 1` when the experts are split over its GPUs and
    attention runs data-parallel."""
    first = f"EP {rec.expert_parallel}" if rec.expert_parallel > 1 else f"TP {rec.tensor_parallel}"
    return f"{first} × PP {rec.pipeline_parallel}"


def layout(rec: Recommendation) -> str:
    """Parallelism in words: `TP 2 × PP 1, 4 replicas, 1 node`."""
    parts = [split_short(rec)]
    parts.append(f"{rec.replicas} replica{'s' if rec.replicas != 1 else ''}")
    parts.append(f"{rec.nodes} node{'s' if rec.nodes != 1 else ''}")
    return ", ".join(parts)


def speed(rec: Recommendation) -> str:
    """The headline speed figure: for serving the option's capacity and its headroom over the demand (the demand
    itself is the same for every option and is printed once, above the table); the run's time for training (the
    presenter's figures, as the screens print them)."""
    for key in ("training_time", "capacity", "throughput"):
        f = figure(rec, key)
        if f is not None:
            headroom = figure(rec, "headroom") if key == "capacity" else None
            return f.text + (f" ({headroom.text})" if headroom is not None else "")
    return NA


def speed_items(rec: Recommendation) -> list[tuple[str, str]]:
    """What bounds the option and its speed figures, labelled and printed by the presenter (the detail's Speed tab
    shows the same)."""
    items: list[tuple[str, str]] = [("Bound by", f"memory {rec.bound}" if rec.bound == "bandwidth" else "compute")]
    items += [(f.label, f.text) for f in figures(rec, SPEED)]
    split = split_text(rec)
    if split is not None:
        items.append(("Disaggregated (PD.split)", split))
    return items


def split_text(rec: Recommendation) -> str | None:
    """The prefill/decode pools when rule PD.split offers them (a considered-only split stays in the findings)."""
    d = rec.disaggregated
    if d is None or not d.offered or d.machines is None:
        return None
    cost = f", {usd(d.usd_per_month)}/month" if d.usd_per_month is not None else ""
    return (f"{d.prefill_machines} prefill + {d.decode_machines} decode = {d.machines} machines "
            f"(colocated {d.colocated_machines}){cost}")


def cost_items(cost: Cost) -> list[tuple[str, str]]:
    """Every cost figure present, labelled, with the price date last (a price never travels without it)."""
    items: list[tuple[str, str]] = []
    for key, value in (("capex", cost.capex_usd), ("usd_per_hour", cost.usd_per_hour),
                       ("usd_per_month", cost.usd_per_month), ("usd_per_run", cost.usd_per_run),
                       ("usd_per_million_tokens", cost.usd_per_million_tokens)):
        if value is not None:
            items.append((label(key), usd(value)))
    if cost.usage_hours is not None:
        items.append(("Hours billed", f"{cost.usage_hours:,.1f} h (set-up included)"))
    items += purchase_items(cost)
    if cost.break_even_utilization is not None:
        items.append(("Buying beats renting above", f"{pct(cost.break_even_utilization)} utilization"))
    if cost.price_kind:
        items.append(("Price kind", fmt.price_kind_text(cost.price_kind, cost.price_as_of)))
    age = f" ({cost.price_age_months} months old)" if cost.price_age_months is not None else ""
    items.append(("Price as of", (cost.price_as_of or "undated") + age))
    if cost.price_source:
        items.append(("Price source", cost.price_source))
    return items


def purchase_items(cost: Cost) -> list[tuple[str, str]]:
    """What a purchase pays beyond its accelerators, what it draws and what it costs over its horizon (the TUI's
    detail and every report show the same lines)."""
    items: list[tuple[str, str]] = []
    if cost.capex_usd is None:
        return items
    if cost.capex_beyond_accelerators_usd is not None:
        fabric = f", fabric {usd(cost.fabric_usd)}" if cost.fabric_usd else ""
        items.append(("Beyond the accelerators", f"{usd(cost.capex_beyond_accelerators_usd)} (hosts{fabric})"))
    elif cost.capex_usd:
        items.append(("Beyond the accelerators", "not split in the published price"))
    if cost.power_kw is not None:
        items.append(("Power at load", f"{cost.power_kw:,.1f} kW"))
    if cost.tco_usd is not None and cost.horizon_years is not None:
        items.append(("Before resale", f"{usd(cost.tco_usd)} over {cost.horizon_years:g} years "
                                       "(purchase, power and site; the Total takes the resale off)"))
    return items


def headline_cost(cost: Cost) -> str:
    """The one cost figure for the ranking table."""
    parts = []
    if cost.capex_usd is not None:
        parts.append(f"{usd(cost.capex_usd)} to buy")
    if cost.usd_per_hour is not None:
        parts.append(f"{usd(cost.usd_per_hour)}/h")
    if cost.usd_per_run is not None:
        parts.append(f"{usd(cost.usd_per_run)}/run")
    elif cost.usd_per_month is not None:
        parts.append(f"{usd(cost.usd_per_month)}/month")
    if cost.price_kind:
        parts.append(fmt.price_label(cost.price_kind, cost.price_as_of, cost.price_age_months))
    return ", ".join(parts) or NA


MEMORY_PARTS = (
    ("weights", "Weights"),
    ("kv_cache", "KV cache"),
    ("activations", "Activations"),
    ("gradients", "Gradients"),
    ("optimizer_states", "Optimizer states"),
    ("runtime_overhead", "Runtime overhead"),
)


def memory_parts(rec: Recommendation) -> list[tuple[str, str]]:
    """(field, label) of the memory parts the option holds: no KV cache row for training, no gradients or optimizer
    states for serving (a part under 0.05 GB prints as 0.0 and says nothing)."""
    return [(f, label) for f, label in MEMORY_PARTS if holds(rec.memory, f)]


def holds(memory: MemoryBreakdown, part: str) -> bool:
    """Whether a memory part is worth a row: the weights always, another part from 0.05 GB (what prints as 0.1)."""
    return part == "weights" or getattr(memory, part) >= 0.05


def memory_line(rec: Recommendation) -> str:
    """`13.4 of 16.0 GB (83.5%): weights 5.9, activations 6.0, …, runtime overhead 1.0; 1.6 GB kept free`."""
    m = rec.memory
    parts = ", ".join(f"{label if label.startswith('KV') else label.lower()} {fixed(getattr(m, f), 1)}"
                      for f, label in memory_parts(rec))
    return (f"{fixed(m.total, 1)} of {gb(m.capacity)} ({pct(m.utilization)}): {parts}; "
            f"{gb(m.headroom_required)} kept free")


COST_DETAIL_ONLY = frozenset({"Price source", "Beyond the accelerators", "Before resale"})
"""Cost lines the short report leaves to --full and the HTML (the price's sources, a purchase's split)."""


def decision_line(rec: Recommendation) -> str:
    """`$1,234 = hardware $1,500 + power $80 − resale $346`: the decision cost and its parts, in one line."""
    parts = " ".join(("− " if p.usd < 0 else "+ ") + f"{p.part} {usd(abs(p.usd))}"
                     for p in rec.decision_cost.parts).removeprefix("+ ")
    return f"{signed_usd(rec.decision_cost.usd)} = {parts}"

