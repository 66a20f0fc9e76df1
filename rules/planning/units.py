"""Deployable units: what one actually rents or buys, used in full.

People do not rent "3 H100s"; they rent an instance type (AWS p5.48xlarge: 8 H100 on NVSwitch, EFA between nodes) or
a per-GPU listing, and they buy a server (an HGX H100 board in its host, a 4U PCIe server with 8 L40S), a workstation,
a rack (GB200 NVL72) or a whole machine (a Mac Studio). A `Unit` is one such thing: the machine (node) and how many
accelerators it is taken with (`fills`), its topology (scale-up domain, PCIe, scale-out network), and how its cost
grows (per machine, per accelerator). The planner sizes a job in whole units and uses every accelerator paid for.

Units are built from the catalog: every instance type, every purchasable system × the cards it takes, every free
notebook tier, and the user's own GPUs. Units that would be planned identically share a `shape` (the configuration
search runs once per shape).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, CardClass, Fabric, FreeTier, Instance, System
from gpuadvisor.rules.planning import topology
from gpuadvisor.rules.planning.topology import Topology

Acquisition = Literal["rent", "buy", "free", "own"]
POWERS = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class Unit:
    """One deployable unit: a rented instance type, a bought system (with the cards it holds), a free notebook tier
    or the user's own machine."""

    id: str
    """'inst:<instance id>', 'sys:<system id>:<accelerator id>', 'free:<tier id>' or 'own'."""
    acquisition: Acquisition
    accelerator: str
    name: str
    """What the user rents or buys: 'AWS p5.48xlarge', 'HGX H100 8-GPU server', '4U 8-GPU PCIe server'."""
    kind: str
    """instance, server, workstation, desktop, rack, appliance, notebook or own."""
    topology: Topology
    fills: tuple[int, ...]
    """Accelerators one machine is taken with (a fixed instance or board: its size; a chassis: its fill options).
    A plan over several machines uses full machines."""
    machine_cost: float
    """Relative cost of one machine beyond its accelerators (the instance price, a host server); 0 when free."""
    accelerator_cost: float
    """Relative cost of one accelerator in it (a card bought for a chassis); 0 for fixed instances and boards."""
    desk_side: bool
    fabric: str | None = None
    """Purchases: the fabric id (systems.toml) bought to join machines into a cluster; None = none fits or needed."""
    single: bool = False
    """Exactly one machine exists (your own hardware, a free notebook, the desktop you already have)."""

    @property
    def node(self) -> int:
        return self.topology.node

    @property
    def shape(self) -> str:
        """Units with equal shape get the same plan: same part, machines, topology and cost structure."""
        t = self.topology
        out = "none" if t.scale_out is None else f"{t.scale_out.kind}:{t.scale_out.gbs_per_node}"
        ratio = "machine" if self.accelerator_cost == 0 else f"{self.machine_cost / self.accelerator_cost:.3g}"
        return (f"{self.accelerator}|{t.node}|{','.join(map(str, self.fills))}|{t.scale_up.kind}:"
                f"{t.scale_up.domain}|{out}|{ratio}|{int(self.desk_side)}|{int(self.single)}")

    def cost(self, machines: int, accelerators: int) -> float:
        """Relative cost of `machines` machines holding `accelerators` in all (ranks layouts inside the planner)."""
        return machines * self.machine_cost + accelerators * self.accelerator_cost

    def counts(self, limit: int, *, joined: bool) -> list[tuple[int, int]]:
        """(machines, accelerators) this unit can be deployed as, smallest first, up to `limit` accelerators:
        one machine at each fill, then whole machines; more than one machine only when `joined` allows it (a
        cluster network for a job spanning machines; independent serving replicas need none)."""
        out = [(1, f) for f in self.fills if f <= limit]
        if joined:
            k = 2
            while k * self.node <= limit:
                out.append((k, k * self.node))
                k = k * 2 if k >= 8 else k + 1
        return out

    def describe(self, machines: int, accelerators: int) -> str:
        """'2 × AWS p5.48xlarge (16 GPUs)', 'AWS g6.xlarge', '4U 8-GPU PCIe server (4 of 8 slots filled)'."""
        word = "GPU" if self.accelerator.startswith(("nvidia", "amd")) else "chip"
        if self.kind in ("notebook", "own"):
            return self.name
        if self.single:
            return f"{accelerators} card{'s' if accelerators > 1 else ''} for {self.name}"
        per = accelerators // max(1, machines)
        if self.name.endswith(f"({per} {word}s)"):  # 'CoreWeave HGX H200 (8 GPUs)' already says what it holds
            return f"{machines:,} × {self.name}, {accelerators:,} {word}s in all" if machines > 1 else self.name
        if self.acquisition == "buy" and per < self.node:
            holds = f"{per} of {self.node} slots filled" + (f", {accelerators:,} {word}s" if machines > 1 else "")
        elif accelerators == 1:
            return self.name
        else:
            holds = f"{accelerators:,} {word}s"
        lead = f"{machines:,} × " if machines > 1 else ""
        return f"{lead}{self.name} ({holds})"


def card_class(acc: Accelerator) -> CardClass | None:
    """The chassis a part goes in: SXM/OAM modules on the baseboard of an HGX-class server, passively cooled
    data-centre PCIe cards in a server, actively cooled workstation and consumer cards in a desk-side machine; None
    for cloud-only parts and CPUs."""
    if topology.own_only(acc) or acc.market == "cloud-only":
        return None
    if topology.module_part(acc):
        return "module"
    return "pcie-desk" if topology.desk_side(acc) else "pcie-datacenter"


def instance_unit(inst: Instance, acc: Accelerator) -> Unit:
    """A cloud instance type: one machine of `accelerator_count` (a single-GPU VM or listing is a machine of one)."""
    topo = topology.instance_topology(inst, acc)
    if inst.accelerator_count == 1:
        topo = Topology(1, topology.ScaleUp(topo.scale_up.kind if topo.scale_up.domain == 1 else "pcie",
                                            topo.pcie_gbs_per_direction, 1), topo.pcie_gbs_per_direction,
                        topo.scale_out)
    price = inst.current_price("on-demand") or inst.current_price("spot") or inst.price[0]
    return Unit(id=f"inst:{inst.id}", acquisition="rent", accelerator=acc.id,
                name=f"{inst.provider_name} {inst.instance}", kind="instance", topology=topo,
                fills=(inst.accelerator_count,), machine_cost=price.usd_per_hour, accelerator_cost=0.0,
                desk_side=False)


def system_unit(system: System, acc: Accelerator, card_price: float, fabric: Fabric | None) -> Unit:
    """A purchasable system holding `acc`: the host (or whole system) per machine, the cards per accelerator. A
    chassis holds at most `max_per_node` of a card (a three-slot consumer card fills a workstation sooner)."""
    fixed = system.accelerator is not None
    fills = system.fills() if fixed else tuple(f for f in system.fills() if f <= acc.max_per_node)
    if fabric is not None and not system.desk_side:
        nic_gbps = system.nics.count * system.nics.gbps_each if system.nics is not None else fabric.gbps_per_port
        gbs = min(nic_gbps, fabric_ports(system, fabric) * fabric.gbps_per_port) / 8.0
        kind = system.nics.kind if system.nics is not None else fabric.kind
        topo = topology.system_topology(system, acc, kind, gbs, node=max(fills))
    else:
        topo = topology.system_topology(system, acc, None, None, node=max(fills))
    host = system.price.value if system.price is not None else 0.0
    return Unit(id=f"sys:{system.id}:{acc.id}", acquisition="buy", accelerator=acc.id, name=system.name,
                kind=system.kind, topology=topo, fills=fills,
                machine_cost=host + (system.slots * card_price if fixed else 0.0),
                accelerator_cost=0.0 if fixed else card_price, desk_side=system.desk_side,
                fabric=fabric.id if fabric is not None and not system.desk_side else None, single=system.existing)


def free_unit(tier: FreeTier, acc: Accelerator) -> Unit:
    topo = topology.accelerator_topology(acc, node=tier.accelerator_count)
    fills = tuple(sorted({*(n for n in POWERS if n < tier.accelerator_count), tier.accelerator_count}))
    return Unit(id=f"free:{tier.id}", acquisition="free", accelerator=acc.id, name=tier.name, kind="notebook",
                topology=topo, fills=fills, machine_cost=0.0, accelerator_cost=0.0, desk_side=False, single=True)


def own_unit(acc: Accelerator, count: int) -> Unit:
    """The user's own machine: any part of it may be used (it is paid for already)."""
    topo = topology.accelerator_topology(acc, node=count)
    fills = tuple(sorted({*(n for n in POWERS if n < count), count}))
    return Unit(id="own", acquisition="own", accelerator=acc.id, name=f"your own {count}× {acc.name}", kind="own",
                topology=topo, fills=fills, machine_cost=0.0, accelerator_cost=0.0, desk_side=topology.desk_side(acc),
                single=True)


def bare_unit(acc: Accelerator) -> Unit:
    """The part alone, bought or rented by the accelerator (estimates and tests without an offer): machines of
    `max_per_node` at any power-of-two fill, joined by a cluster network of unpublished bandwidth unless desk-side."""
    node = acc.max_per_node
    topo = topology.accelerator_topology(acc)
    if not topology.desk_side(acc):
        topo = Topology(topo.node, topo.scale_up, topo.pcie_gbs_per_direction, topology.ScaleOut("unknown", None))
    fills = tuple(sorted({*(n for n in POWERS if n < node), node}))
    return Unit(id=f"acc:{acc.id}", acquisition="buy", accelerator=acc.id, name=acc.name, kind="part", topology=topo,
                fills=fills, machine_cost=0.0, accelerator_cost=1.0, desk_side=topology.desk_side(acc))


FABRIC_CARRIES: dict[str, tuple[str, ...]] = {"roce": ("roce", "ethernet"), "ethernet": ("ethernet", "roce")}
"""Fabric kinds a NIC kind can join besides its own: RoCE is RDMA over an Ethernet switch, and an RDMA Ethernet
switch carries plain Ethernet (the same 100 GbE Spectrum switch serves both)."""


def fabric_for(catalog: Catalog, system: System) -> Fabric | None:
    """The fabric bought to join machines of this system: the kind its NICs speak (or one that carries it), the
    fastest such fabric whose ports are no faster than the NICs (a 100 GbE server gets 100 GbE ports, an HGX server
    400G InfiniBand, an 800G OSFP cage two 400G ports)."""
    if system.desk_side or system.nics is None:
        return None
    nics = system.nics
    kinds = FABRIC_CARRIES.get(nics.kind, (nics.kind,))
    for fits in (lambda f: f.gbps_per_port <= nics.gbps_each, lambda f: True):
        for kind in kinds:
            same = [f for f in catalog.fabrics.values() if f.kind == kind and fits(f)]
            if same:
                return max(same, key=lambda f: (f.gbps_per_port, f.id))
    return None


def fabric_ports(system: System, fabric: Fabric) -> int:
    """Fabric ports one machine takes: each NIC port split into ports of the fabric's speed (an 800G cage on a 400G
    fabric is two ports; a slower port than the fabric's is still one)."""
    if system.nics is None:
        return 1
    return system.nics.count * max(1, int(system.nics.gbps_each // fabric.gbps_per_port))


def frontend_fabric(catalog: Catalog) -> Fabric | None:
    """The site network independent machines plug into: the slowest Ethernet fabric (a 100 GbE top-of-rack switch)."""
    eth = [f for f in catalog.fabrics.values() if f.kind == "ethernet"]
    return min(eth, key=lambda f: (f.gbps_per_port, f.id)) if eth else None


def fixed_systems(catalog: Catalog) -> dict[str, list[System]]:
    """Per accelerator, the systems built around it (boards, racks, appliances): such a part is bought in them."""
    out: dict[str, list[System]] = {}
    for s in catalog.systems.values():
        if s.accelerator is not None:
            out.setdefault(s.accelerator, []).append(s)
    return out


def purchase_units(catalog: Catalog, acc: Accelerator) -> list[Unit]:
    """Every system one can buy `acc` in: the boards, racks and appliances built around it, else every chassis that
    takes its card class. A part with no known price still gets its units (the plan is sized; the option says the
    price is unknown, rule C.price-unknown)."""
    if not acc.purchasable or topology.own_only(acc):
        return []
    card = acc.purchase_price_usd.value if acc.purchase_price_usd is not None else 0.0
    fixed = fixed_systems(catalog).get(acc.id, [])
    if fixed:
        return [system_unit(s, acc, 0.0 if s.price is not None and s.price.includes_accelerators else card,
                            fabric_for(catalog, s)) for s in fixed]
    cls = card_class(acc)
    return [system_unit(s, acc, card, fabric_for(catalog, s)) for s in catalog.systems.values()
            if s.accelerator is None and cls is not None and cls in s.takes and min(s.fills()) <= acc.max_per_node]


def rental_units(catalog: Catalog, acc: Accelerator) -> list[Unit]:
    return [instance_unit(i, acc) for i in catalog.instances.values() if i.accelerator == acc.id]


def machines_for(unit: Unit, accelerators: int) -> int:
    """Machines a count of accelerators takes on this unit."""
    return max(1, math.ceil(accelerators / unit.node))


@dataclass(frozen=True)
class UnitTable:
    """Every deployable unit of a catalog, and the shapes the configuration search runs once for."""

    units: dict[str, Unit]
    """By unit id."""
    shape_ids: dict[str, str]
    """Shape string → its short id (`<accelerator>~<n>`), stable for a catalog."""
    by_shape: dict[str, Unit]
    """Short shape id → a representative unit (every unit of a shape is planned alike)."""

    def shape_id(self, unit: Unit) -> str:
        return self.shape_ids[unit.shape]


def build_unit_table(catalog: Catalog) -> UnitTable:
    """Rentals, purchases and free tiers of every accelerator (CPUs are planned only as the user's own)."""
    units: dict[str, Unit] = {}
    for acc in catalog.accelerators.values():
        if topology.own_only(acc):
            continue
        for u in (*rental_units(catalog, acc), *purchase_units(catalog, acc)):
            units[u.id] = u
    for tier in catalog.free_tiers.values():
        u = free_unit(tier, catalog.accelerators[tier.accelerator])
        units[u.id] = u
    shape_ids: dict[str, str] = {}
    by_shape: dict[str, Unit] = {}
    counters: dict[str, int] = {}
    for u in sorted(units.values(), key=lambda u: u.id):
        if u.shape not in shape_ids:
            counters[u.accelerator] = counters.get(u.accelerator, 0) + 1
            sid = f"{u.accelerator}~{counters[u.accelerator]}"
            shape_ids[u.shape] = sid
            by_shape[sid] = u
    return UnitTable(units, shape_ids, by_shape)


_tables: dict[int, tuple[Catalog, UnitTable]] = {}


def unit_table(catalog: Catalog) -> UnitTable:
    """`build_unit_table`, once per (immutable) catalog."""
    found = _tables.get(id(catalog))
    if found is not None and found[0] is catalog:
        return found[1]
    table = build_unit_table(catalog)
    if len(_tables) > 8:
        _tables.clear()
    _tables[id(catalog)] = (catalog, table)
    return table


def own_shape_id(acc: Accelerator, count: int) -> str:
    return f"own:{acc.id}:{count}"
