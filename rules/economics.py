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
    if acc.vendor == "apple":
        return "apple"
    if acc.market in ("consumer", "workstation"):
        return acc.market
    return "datacenter"


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
                     port_weeks=ports, usd_per_engineer_week=a["ml_engineer_loaded_usd_per_week"].value)


class EconomicsRules:
    """The callback of rule P.porting: what moving to each stack the team does not run would cost it."""

    def __init__(self, catalog: Catalog) -> None:
        self.values = economics(catalog)

    def table(self) -> dict[str, Callback]:
        return {"porting": self.porting}

    def porting(self, ctx: RuleContext, work: Mapping[str, Any]) -> None:
        framework, workload = str(work["framework"]), str(work["workload"])
        rate = self.values.usd_per_engineer_week
        doing = "serve the model" if workload == "inference" else "train"
        for stack, name in STACK_PORTS.items():
            weeks = self.values.porting_weeks(framework, workload, stack)
            if weeks <= 0:
                continue
            mode = "serve" if workload == "inference" else "train"
            usd = round(weeks * rate, 2)
            ctx.conclude({
                "kind": "porting", "ref": f"port:{stack}", "stack": stack, "stack_name": STACK_NAMES[stack],
                "weeks": weeks, "usd_per_week": rate, "usd": usd,
                "text": f"A {framework} team moving to {STACK_NAMES[stack]} to {doing}: {weeks:g} engineer-weeks "
                        f"(port_weeks_{mode}_{name}) × ${rate:,.0f} a week (ml_engineer_loaded_usd_per_week) = "
                        f"${usd:,.0f}",
            })
