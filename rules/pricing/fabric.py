"""One fabric model: what the network joining bought machines costs — switches, links (optics and cables), NICs.

A cluster's machines each bring `ports` NIC ports to a fabric of `Fabric.switch_ports`-port switches. The fabric is
a non-blocking fat tree, sized as a buyer sizes one (NVIDIA's SuperPOD reference designs; the H100 Freakonomics
sheet's 1,024-GPU cluster of 32 leaf + 16 spine QM9700 switches and 2,048 links):

- up to one switch's ports: one switch, one link per port;
- up to R²/2 ports (R = ports per switch): two tiers, ⌈E / (R/2)⌉ leaves with half their ports down, ⌈E / R⌉
  spines, two links per port (NIC to leaf, leaf to spine);
- beyond: three tiers, ⌈E / (R/2)⌉ leaves and as many aggregation switches, ⌈E / R⌉ core switches, three links.

Whole switches are bought: two machines on a 64-port switch pay for the switch, not for 16/64 of it. Machines that
serve independently (separate replicas) need no cluster fabric, only a port each on the site's front-end network:
their share of a switch's price per port plus one link (`frontend_bill`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuadvisor.knowledge.schema import Fabric
from gpuadvisor.knowledge.words import counted


@dataclass(frozen=True)
class FabricBill:
    """The network bought for a cluster: its switches, links and NICs, and what they cost."""

    fabric: Fabric
    endpoints: int
    """NIC ports joined (machines × ports per machine)."""
    tiers: int
    switches: int
    links: int
    nics: int
    """Adapters bought with the fabric (machines whose price leaves them out); 0 when the machines ship with them."""
    switches_usd: float
    links_usd: float
    nics_usd: float
    frontend: bool = False
    """A share of the site's front-end network (independent machines), not a cluster fabric."""

    @property
    def usd(self) -> float:
        return self.switches_usd + self.links_usd + self.nics_usd

    def words(self) -> str:
        """'$56,480 InfiniBand NDR 400G fabric (16 ports on one switch: 1 switch × $36,000 + 16 links × $1,280)'."""
        f = self.fabric
        if self.frontend:
            head = f"${self.usd:,.0f} {f.name} front-end ports"
            items = [f"{_n(self.endpoints, 'port')} × ${f.switch_usd.value / f.switch_ports:,.0f} switch share"]
        else:
            layout = "on one switch" if self.tiers == 1 else f"in a {self.tiers}-tier fat tree"
            head = f"${self.usd:,.0f} {f.name} ({_n(self.endpoints, 'port')} {layout}"
            items = [f"{_n(self.switches, 'switch')} × ${f.switch_usd.value:,.0f}"]
        items.append(f"{_n(self.links, 'link')} × ${f.link_usd.value:,.0f}")
        if self.nics and f.nic_usd is not None:
            items.append(f"{_n(self.nics, 'NIC')} × ${f.nic_usd.value:,.0f}")
        return f"{head} ({' + '.join(items)})" if self.frontend else f"{head}: {' + '.join(items)})"


def _n(count: int, word: str) -> str:
    return counted(count, word)


def fat_tree(endpoints: int, radix: int) -> tuple[int, int, int]:
    """(tiers, switches, links) of a non-blocking fat tree of `radix`-port switches joining `endpoints` ports."""
    if endpoints <= 0:
        return 0, 0, 0
    if endpoints <= radix:
        return 1, 1, endpoints
    half = radix // 2
    leaves = math.ceil(endpoints / half)
    if endpoints <= radix * half:
        return 2, leaves + math.ceil(endpoints / radix), 2 * endpoints
    return 3, 2 * leaves + math.ceil(endpoints / radix), 3 * endpoints


def cluster_bill(fabric: Fabric, machines: int, ports_per_machine: int, *, nics_per_machine: int = 0) -> FabricBill:
    """The fabric joining `machines` machines of `ports_per_machine` ports each, with `nics_per_machine` adapters
    bought for each (0 when the machines' price includes them)."""
    endpoints = machines * ports_per_machine
    tiers, switches, links = fat_tree(endpoints, fabric.switch_ports)
    nics = machines * nics_per_machine if fabric.nic_usd is not None else 0
    return FabricBill(fabric, endpoints, tiers, switches, links, nics,
                      switches_usd=switches * fabric.switch_usd.value, links_usd=links * fabric.link_usd.value,
                      nics_usd=nics * (fabric.nic_usd.value if fabric.nic_usd is not None else 0.0))


def frontend_bill(fabric: Fabric, machines: int, *, nics_per_machine: int = 0) -> FabricBill:
    """Independent machines on the site's front-end network: per machine, one port's share of a switch (its price
    over its ports) and one link, and its adapter when its price leaves it out."""
    nics = machines * nics_per_machine if fabric.nic_usd is not None else 0
    return FabricBill(fabric, machines, 1, 0, machines, nics,
                      switches_usd=machines * fabric.switch_usd.value / fabric.switch_ports,
                      links_usd=machines * fabric.link_usd.value,
                      nics_usd=nics * (fabric.nic_usd.value if fabric.nic_usd is not None else 0.0), frontend=True)
