"""What owning hardware and changing software stacks cost, in dollars (issue 26: the decision in dollars).

Two facts of the world a price list does not show:
- **Resale.** Owned accelerators keep a share of their price on the used market, falling with age and by class
  (data-centre parts, GeForce cards, workstation cards, Apple machines). A purchase is charged its price less what it
  resells for at the end of the horizon; a part sells used at most at its one-year share however young it is.
- **Porting.** A team whose code runs on one stack (PyTorch on CUDA) pays engineer-weeks to train or serve on
  another (ROCm, TPU, Neuron, Gaudi, Apple): weeks × a loaded weekly cost, added by rule H10.port as a cost part, so a
  port wins only where the hardware saving repays it.

Every value is an assumption of knowledge/data/assumptions.toml (resale_share_*, resale_decline_*, port_weeks_*,
ml_engineer_loaded_usd_per_week), with its sources and range; an overlay changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.workload import workload_of

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


@dataclass(frozen=True)
class Economics:
    """The resale curves and porting effort of a catalog."""

    resale: Mapping[str, tuple[tuple[float, float], ...]]
    """Resale class → (years, share of the price) knots, youngest first."""
    late_decline: float
    """Yearly decline beyond the last knot (data-centre parts' late-life rate, used for every class)."""
    port_weeks: Mapping[tuple[str, str], float]
    """(train | serve, port name) → engineer-weeks."""
    usd_per_engineer_week: float
    host_life_years: float
    """Hosts and cluster networks lose their value straight-line over this life (server_accounting_life_years)."""
    selling_cost: float = 0.0
    """Share of the market price a seller does not receive (resale_selling_cost_share)."""

    def resale_shares(self, cls: str, years: float) -> tuple[float, float]:
        """(accelerators' share, hosts' and network's share) of their price a purchase nets when sold after `years`:
        the accelerators on their class's curve, the rest at book value, never above the accelerators' share (no
        market series for used hosts was found), both less the selling cost. The one rule the ranking and the
        lifecycle both price resale by."""
        cards = self.resale_share(cls, years)
        net = 1.0 - self.selling_cost
        return cards * net, min(cards, self.host_resale_share(years)) * net

    def host_resale_share(self, years: float) -> float:
        """Share of a host's or a network's price left after `years`: its book value, 1 - years / life."""
        return max(0.0, 1.0 - years / self.host_life_years)

    def resale_share(self, cls: str, years: float) -> float:
        """Share of the price a part of `cls` resells for after `years`: at most the first knot's share (a used
        part, however young), interpolated between knots, declining `late_decline` a year past the last."""
        knots = self.resale.get(cls) or self.resale["datacenter"]
        first_years, first_share = knots[0]
        if years <= first_years:
            return first_share
        for (y0, s0), (y1, s1) in zip(knots, knots[1:], strict=False):
            if years <= y1:
                return s0 + (s1 - s0) * (years - y0) / (y1 - y0)
        last_years, last_share = knots[-1]
        return float(last_share * (1.0 - self.late_decline) ** (years - last_years))

    def porting_weeks(self, framework: str, workload: str, stack: str) -> float:
        """Engineer-weeks for a team on `framework` to run `workload` on `stack` (0 on a stack it already runs)."""
        if framework not in NATIVE_STACKS or stack in NATIVE_STACKS[framework] or stack not in STACK_PORTS:
            return 0.0
        mode = "serve" if workload == "inference" else "train"
        return self.port_weeks.get((mode, STACK_PORTS[stack]), 0.0)


def resale_class(acc: Accelerator) -> str:
    """The resale curve a part follows: Apple machines, GeForce, workstation cards, or data-centre parts."""
    return resale_class_of(acc.vendor, acc.market)


def resale_class_of(vendor: str, market: str | None) -> str:
    if vendor == "apple":
        return "apple"
    if market in ("consumer", "workstation"):
        return str(market)
    return "datacenter"


def resale_usd(e: Economics, cls: str, accelerators_usd: float, rest_usd: float, years: float) -> float:
    """What a purchase sells for after `years`: its accelerators and its hosts and network (`rest_usd`) at
    `Economics.resale_shares`."""
    cards, rest = e.resale_shares(cls, years)
    return accelerators_usd * cards + rest_usd * rest


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
    return Economics(resale=resale, late_decline=a["resale_decline_datacenter_late_per_year"].value,
                     port_weeks=ports, usd_per_engineer_week=a["ml_engineer_loaded_usd_per_week"].value,
                     host_life_years=a["server_accounting_life_years"].value,
                     selling_cost=a["resale_selling_cost_share"].value)


class EconomicsRules:
    """The callback of rule P.porting: what moving to each stack the team does not run would cost it."""

    def __init__(self, catalog: Catalog) -> None:
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
        for stack, name in STACK_PORTS.items():
            weeks = self.values.porting_weeks(framework, workload, stack)
            if weeks <= 0:
                continue  # the team runs this stack already
            weeks_from = f"port_weeks_{mode}_{name}"
            if given_weeks is not None:
                weeks, weeks_from = float(given_weeks), "framework.port_weeks"
            usd = round(weeks * rate, 2)
            ctx.conclude({
                "kind": "porting", "ref": f"port:{stack}", "stack": stack, "stack_name": STACK_NAMES[stack],
                "weeks": weeks, "usd_per_week": rate, "usd": usd,
                "text": f"A {framework} team moving to {STACK_NAMES[stack]} to {doing}: {weeks:g} engineer-weeks "
                        f"({weeks_from}) × ${rate:,.0f} a week ({rate_from}) = ${usd:,.0f}",
            })
