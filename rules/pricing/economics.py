"""What owning hardware and changing software stacks cost, in dollars (issue 26: the decision in dollars).

Two facts of the world a price list does not show:
- **Resale.** A used accelerator fetches a share of its price new that falls with the part's AGE, counted from its
  launch (accelerators.toml `release_year`), by class (data-centre parts, GeForce cards, workstation cards, Apple
  machines): an MI210 launched in 2022 and sold in 2029 is a seven-year-old part, whoever bought it when. The curves
  (`resale_share_*`) are held to a sourced used-price series by generation (assumptions.toml `[[used_price]]`);
  a part sells used at most at its one-year share however young it is. A part whose OWN used price the knowledge
  base has observed on several dates (a series of `[[used_price]]` rows) resells by that observed trend instead
  (`PartTrend`): the class curve is what a part of that age usually fetches, the part's own sold prices are what it
  does fetch (a used RTX 3090 has held about $700 through 2026 for its 24 GB, while the GeForce curve has a part of
  its age losing a quarter a year). Hosts, switches and cables have no used market series: they fetch scrap value
  (`resale_share_host`). The seller keeps the price less its selling costs.
- **Porting.** A team whose code runs on one stack (PyTorch on CUDA) pays engineer-weeks to train or serve on
  another (ROCm, TPU, Neuron, Gaudi, Apple): weeks × a loaded weekly cost, added by rule H10.port as a cost part, so a
  port wins only where the hardware saving repays it. A team that names its serving engine and owns hardware that
  engine runs on already serves on that hardware's stack (Ollama or MLX on its own Mac: Metal): nothing to port there.

Every value is an assumption of knowledge/data/assumptions.toml (resale_share_*, resale_decline_*, port_weeks_*,
ml_engineer_loaded_usd_per_week), with its sources and range; an overlay changes them. Pure functions with typed
inputs (`PartAge`, `Economics`): the pricing of an option and of a lifecycle call the same ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.engine_names import canonical_engine
from gpuadvisor.knowledge.schema import Accelerator, UsedPrice, parse_as_of
from gpuadvisor.knowledge.words import counted
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.inputs.workload import workload_of

RESALE_CLASSES = ("datacenter", "consumer", "workstation", "apple")
RESALE_YEARS = (1, 2, 3, 5)
STACK_PORTS = {"rocm": "rocm", "xla": "tpu", "neuron": "neuron", "synapseai": "gaudi", "metal": "apple"}
"""The accelerators' software stacks (accelerators.toml) by the port_weeks_* name of moving to them."""
STACK_NAMES = {"rocm": "ROCm (AMD)", "xla": "XLA on TPU", "neuron": "AWS Neuron", "synapseai": "Intel Gaudi "
               "(SynapseAI)", "metal": "Apple silicon (Metal/MLX)"}
NATIVE_STACKS = {
    "pytorch": frozenset({"cuda", "cpu"}),
    "jax": frozenset({"cuda", "xla", "cpu"}),
    "tensorflow": frozenset({"cuda", "xla", "cpu"}),
}
"""The stacks a team of each framework already runs: nothing to port there (`framework.name = "other"`: unknown,
so no porting is charged and a note says so)."""


LAUNCH_MONTH = 0.5
"""A part's launch within its `release_year` when the month is not recorded: mid-year (ages are ± 6 months)."""
USED_KINDS = frozenset({"used"})
"""Purchase price kinds that are already a used-market price: their resale is the curve's fall from today's age."""


@dataclass(frozen=True)
class PartAge:
    """What a part's resale depends on: its resale class, how old it is when bought (years since launch), and whether
    its price is already a used one."""

    cls: str
    """datacenter | consumer | workstation | apple (`resale_class_of`)."""
    age_years: float
    """Years from the part's launch to its purchase (0 when the launch is unknown: priced as a new part)."""
    bought_used: bool = False
    launch_known: bool = True
    part: str | None = None
    """The accelerator's id: the key of its own observed used-price trend, where the knowledge base has one."""

    def older(self, years: float) -> PartAge:
        """The same part bought `years` later (a lifecycle phase that buys at month 12 buys a year-older part)."""
        return PartAge(self.cls, self.age_years + years, self.bought_used, self.launch_known, self.part)

    def words(self, held_years: float) -> str:
        """'a 2.4-year-old part sold at 5.4 years' for the resale's label."""
        if not self.launch_known:
            return f"launch date unknown: sold after {held_years:,.1f} years as a new part's"
        return (f"{self.age_years:,.1f} years from launch when bought{' used' if self.bought_used else ''}, "
                f"{self.age_years + held_years:,.1f} when sold")


def decimal_year(day: date) -> float:
    return day.year + (day.timetuple().tm_yday - 1) / 365.25


def part_age(release_year: float | None, price_kind: str | None, cls: str, today: date,
             part: str | None = None) -> PartAge:
    """A part's age when bought today: years from mid-launch-year (LAUNCH_MONTH) to `today`."""
    used = price_kind in USED_KINDS
    if release_year is None:
        return PartAge(cls, 0.0, used, launch_known=False, part=part)
    return PartAge(cls, max(0.0, decimal_year(today) - (release_year + LAUNCH_MONTH)), used, part=part)


@dataclass(frozen=True)
class PartTrend:
    """One part's own used market, observed: its used price as a share of its price new at `age_years` from launch
    (the fit's centre), falling `decline` a year — a least-squares fit of log(used price ÷ price new) on the age at
    each observation, over `observations` sold-price figures on distinct dates spanning `span_years`. A rising fit
    is held flat (no appreciation is forecast)."""

    age_years: float
    share: float
    decline: float
    observations: int
    span_years: float
    ids: tuple[str, ...]

    def share_at(self, years: float) -> float:
        """The share of its price new the part fetches used at `years` from launch, on its own trend."""
        return min(1.0, float(self.share * (1.0 - self.decline) ** (years - self.age_years)))


def fit_trend(rows: list[UsedPrice], launch: float) -> PartTrend | None:
    """A part's observed used-price trend from its `[[used_price]]` rows (age from `launch`, a decimal year); None
    with fewer than two distinct observation dates: one figure is a level, not a trend."""
    points = sorted((decimal_year(parse_as_of(u.as_of)) - launch, math.log(u.usd / u.new_usd), u.id) for u in rows)
    if len({round(x, 4) for x, _, _ in points}) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _, _ in points) / n
    my = sum(y for _, y, _ in points) / n
    slope = (sum((x - mx) * (y - my) for x, y, _ in points) / sum((x - mx) ** 2 for x, _, _ in points))
    return PartTrend(age_years=mx, share=math.exp(my), decline=max(0.0, 1.0 - math.exp(slope)), observations=n,
                     span_years=points[-1][0] - points[0][0], ids=tuple(i for _, _, i in points))


@dataclass(frozen=True)
class Economics:
    """The resale curves and porting effort of a catalog."""

    resale: Mapping[str, tuple[tuple[float, float], ...]]
    """Resale class → (years since launch, share of the price new) knots, youngest first."""
    late_decline: float
    """Yearly decline beyond the last knot (data-centre parts' late-life rate, used for every class)."""
    port_weeks: Mapping[tuple[str, str], float]
    """(train | serve, port name) → engineer-weeks."""
    usd_per_engineer_week: float
    host_share: float
    """Share of a host's or a network's price it fetches used, at any age: scrap (resale_share_host)."""
    selling_cost: float = 0.0
    """Share of the market price a seller does not receive (resale_selling_cost_share)."""
    trends: Mapping[str, PartTrend] = field(default_factory=dict)
    """Accelerator id → its own observed used-price trend (`fit_trend`), which replaces its class curve."""

    def share_of(self, part: PartAge, years: float) -> float:
        """Share of its price new `part` fetches used at `years` from launch: on its own observed trend where the
        knowledge base has one, else its class curve (`resale_share`)."""
        trend = self.trends.get(part.part or "") if part.launch_known else None
        return trend.share_at(years) if trend is not None else self.resale_share(part.cls, years)

    def own_trend_words(self, part: PartAge) -> str:
        """The part's own observed market a resale was read from, for its label (the WHY of the resale part); ''
        when it follows its class curve."""
        trend = self.trends.get(part.part or "") if part.launch_known else None
        if trend is None:
            return ""
        return (f"this part's own used-price trend, {-trend.decline:+.1%} a year over {trend.observations} "
                f"sold-price figures, {trend.ids[0]} to {trend.ids[-1]}, in place of the {part.cls} curve")

    def resale_shares(self, part: PartAge, held_years: float) -> tuple[float, float]:
        """(accelerators' share, hosts' and network's share) of their price a purchase of `part` nets when sold after
        `held_years`: the accelerators at the used price of a part of their age then (the curve's share of the
        price new; for a part bought used, the curve's fall since it was bought), hosts and network at scrap
        value, never above the accelerators' share; both less the selling cost. The one rule the ranking and the
        lifecycle both price resale by."""
        sold_at = self.share_of(part, part.age_years + held_years)
        if part.bought_used:
            sold_at = min(1.0, sold_at / max(self.share_of(part, part.age_years), 1e-9))
        net = 1.0 - self.selling_cost
        return sold_at * net, min(sold_at, self.host_share) * net

    def resale_share(self, cls: str, years: float) -> float:
        """Share of its price new a part of `cls` fetches used at `years` from its launch: at most the first knot's
        share (a used part, however young), interpolated between knots, declining `late_decline` a year past the
        last."""
        knots = self.resale.get(cls) or self.resale["datacenter"]
        first_years, first_share = knots[0]
        if years <= first_years:
            return first_share
        for (y0, s0), (y1, s1) in zip(knots, knots[1:], strict=False):
            if years <= y1:
                return s0 + (s1 - s0) * (years - y0) / (y1 - y0)
        last_years, last_share = knots[-1]
        return float(last_share * (1.0 - self.late_decline) ** (years - last_years))

    port_weeks_high: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """(train | serve, port name) → the high end of the estimate: a port whose format the part has no tensor cores
    for (the notes of port_weeks_*: an FP8 or new checkpoint on an older part)."""

    def porting_weeks(self, framework: str, workload: str, stack: str, *, native_format: bool = True) -> float:
        """Engineer-weeks for a team on `framework` to run `workload` on `stack` (0 on a stack it already runs);
        the high end of the estimate when the weights' format is not native to the part (`format_native`)."""
        if framework not in NATIVE_STACKS or stack in NATIVE_STACKS[framework] or stack not in STACK_PORTS:
            return 0.0
        mode = "serve" if workload == "inference" else "train"
        key = (mode, STACK_PORTS[stack])
        if not native_format and key in self.port_weeks_high:
            return self.port_weeks_high[key]
        return self.port_weeks.get(key, 0.0)


FLOAT4_FORMATS = frozenset({"mxfp4", "nvfp4", "fp4"})
"""4-bit floating-point weight formats: native on parts with FP4 tensor cores, emulated (dequantized by kernels
someone must bring up) elsewhere."""


def format_native(weights: str, acc: Accelerator) -> bool:
    """Whether `acc` runs weights in `weights` on its own tensor cores (or the format needs none): False for a 4-bit
    float format on a part without FP4 and for FP8 on a part without FP8. On a stack the team does not run yet,
    such a port takes the high end of its porting estimate (rule H10.port-format)."""
    if weights in FLOAT4_FORMATS:
        return bool(acc.fp4_support)
    if weights == "fp8":
        return bool(acc.fp8_support)
    return True


def resale_class(acc: Accelerator) -> str:
    """The resale curve a part follows: Apple machines, GeForce, workstation cards, or data-centre parts."""
    return resale_class_of(acc.vendor, acc.market)


def resale_class_of(vendor: str, market: str | None) -> str:
    if vendor == "apple":
        return "apple"
    if market in ("consumer", "workstation"):
        return str(market)
    return "datacenter"


def resale_usd(e: Economics, part: PartAge, accelerators_usd: float, rest_usd: float, years: float) -> float:
    """What a purchase sells for after `years`: its accelerators and its hosts and network (`rest_usd`) at
    `Economics.resale_shares`."""
    cards, rest = e.resale_shares(part, years)
    return accelerators_usd * cards + rest_usd * rest


def accelerator_age(acc: Accelerator, today: date, price_kind: str | None = None) -> PartAge:
    """The age of `acc` bought today at a price of `price_kind` (default: its catalog price's kind), which says
    whether that price is already a used one."""
    release = acc.release_year.value if acc.release_year is not None else None
    if price_kind is None and acc.purchase_price_usd is not None:
        price_kind = acc.purchase_price_usd.kind
    return part_age(release, price_kind, resale_class(acc), today, acc.id)


def economics(catalog: Catalog) -> Economics:
    """The catalog's resale curves and porting effort (assumptions.toml; an overlay changes them)."""
    a = catalog.assumptions
    resale: dict[str, tuple[tuple[float, float], ...]] = {}
    for cls in RESALE_CLASSES:
        knots = tuple((float(y), a[f"resale_share_{cls}_{y}y"].value) for y in RESALE_YEARS
                      if f"resale_share_{cls}_{y}y" in a)
        if knots:
            resale[cls] = knots
    ports = {(mode, name): a[f"port_weeks_{mode}_{name}"].value for mode in ("train", "serve")
             for name in STACK_PORTS.values() if f"port_weeks_{mode}_{name}" in a}
    highs = {(mode, name): float(a[f"port_weeks_{mode}_{name}"].high or a[f"port_weeks_{mode}_{name}"].value)
             for mode, name in ports}
    rows: dict[str, list[UsedPrice]] = {}
    for u in catalog.used_prices.values():
        rows.setdefault(u.accelerator, []).append(u)
    trends = {}
    for part, observed in rows.items():
        acc = catalog.accelerators.get(part)
        if acc is not None and acc.release_year is not None:
            trend = fit_trend(observed, acc.release_year.value + LAUNCH_MONTH)
            if trend is not None:
                trends[part] = trend
    return Economics(resale=resale, late_decline=a["resale_decline_datacenter_late_per_year"].value,
                     port_weeks=ports, usd_per_engineer_week=a["ml_engineer_loaded_usd_per_week"].value,
                     host_share=a["resale_share_host"].value, port_weeks_high=highs,
                     selling_cost=a["resale_selling_cost_share"].value, trends=trends)


class EconomicsRules:
    """The callback of rule P.porting: what moving to each stack the team does not run would cost it."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.values = economics(catalog)

    def table(self) -> dict[str, Callback]:
        return {"porting": self.porting}

    def porting(self, ctx: RuleContext, work: Mapping[str, Any]) -> None:
        """One `porting` fact per stack the team would have to port to; the answers framework.port_weeks and
        framework.engineer_usd_per_week replace the knowledge base's figures (and the text says whose they are)."""
        w = workload_of(ctx)
        framework, workload = w.framework, w.workload
        given_rate, given_weeks = w.engineer_usd_per_week_given, w.port_weeks_given
        rate = float(given_rate) if given_rate is not None else self.values.usd_per_engineer_week
        rate_from = "framework.engineer_usd_per_week" if given_rate is not None else "ml_engineer_loaded_usd_per_week"
        doing = "serve the model" if workload == "inference" else "train"
        mode = "serve" if workload == "inference" else "train"
        served = self.served_stack(ctx, work)
        for stack, name in STACK_PORTS.items():
            weeks = self.values.porting_weeks(framework, workload, stack)
            if weeks <= 0 or stack == served:
                continue  # the team runs this stack already
            weeks_from = f"port_weeks_{mode}_{name}"
            high = self.values.porting_weeks(framework, workload, stack, native_format=False)
            high_from = f"the high end of port_weeks_{mode}_{name}"
            if given_weeks is not None:
                weeks, weeks_from = float(given_weeks), "framework.port_weeks"
                high, high_from = weeks, weeks_from
            usd = round(weeks * rate, 2)
            usd_format = round(high * rate, 2)
            # `words` and `words_format` are the findings' sentences; `text` is the WHY's, with the assumptions'
            # ids and the other format's figure (issue 42: internal ids and caveats go to the detail, not the top)
            ctx.conclude({
                "kind": "porting", "ref": f"port:{stack}", "stack": stack, "stack_name": STACK_NAMES[stack],
                "weeks": weeks, "usd_per_week": rate, "usd": usd, "weeks_format": high, "usd_format": usd_format,
                "words": f"{counted(weeks, 'engineer-week')} of porting × ${rate:,.0f} a week = ${usd:,.0f}",
                "words_format": f"{counted(high, 'engineer-week')} of porting (the high end of the estimate: "
                                f"kernels to bring up) × ${rate:,.0f} a week = ${usd_format:,.0f}",
                "text": f"A {framework} team moving to {STACK_NAMES[stack]} to {doing}: "
                        f"{counted(weeks, 'engineer-week')} ({weeks_from}) × ${rate:,.0f} a week ({rate_from}) "
                        f"= ${usd:,.0f}; in a weights format the part has no tensor cores for (kernels to bring up): "
                        f"{counted(high, 'engineer-week')} ({high_from}) = ${usd_format:,.0f}",
            })

    def served_stack(self, ctx: RuleContext, work: Mapping[str, Any]) -> str | None:
        """The stack the team already serves on: its own hardware's, when it names a serving engine that runs there
        (inference.engine = "ollama" with current.gpu an Apple Mac: Metal). The owned fact becomes a premise."""
        engine = canonical_engine(str(work.get("engine") or "auto"))
        if work["workload"] != "inference" or engine == "auto" or engine not in self.catalog.engines:
            return None
        for _, own in ctx.read("owned"):
            acc = self.catalog.accelerators.get(str(own["accelerator"]))
            if acc is not None and acc.software_stack in self.catalog.engines[engine].software:
                return acc.software_stack
        return None
