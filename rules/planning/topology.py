"""One interconnect model: where accelerators sit and what links a group of them talks over.

A plan runs on machines (nodes). Inside a node, a *scale-up domain* of accelerators shares a fast link — NVLink /
NVSwitch (8 on an HGX board, 72 in a GB200 NVL72 rack), AMD Infinity Fabric (xGMI), Intel Gaudi's on-chip RoCE ports,
Google TPU ICI (a whole slice), AWS NeuronLink — while the other accelerators of the node reach each other over PCIe.
Between nodes, a *scale-out fabric* (InfiniBand, RoCE, AWS EFA, Ethernet, TPU data-centre network) carries what
leaves the node, at the node's aggregate NIC bandwidth; a node with no cluster network cannot be joined to another.

A tensor-parallel group exchanges activations after every layer, so it must live inside one fast domain (or, slowly,
inside one node over PCIe); pipeline stages and data parallelism cross nodes only where a fabric joins them.
Consumer and workstation cards live in a desk-side machine: at most the cards one workstation holds, over PCIe.

Every path — `estimate`, the configuration search, the pricing callbacks, the rules' facts and their warnings — asks
this module: `Topology.link(group)` says what a group of accelerators talks over, `device_for` turns an accelerator and
a link into the speed model's `Device`, and `peak_tflops` picks the dense peak a computation runs at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuadvisor.knowledge.schema import Accelerator, Instance, Precision, System
from gpuadvisor.rules.inputs.formats import training_compute
from gpuadvisor.rules.inputs.owned_parts import OWN_SUFFIX
from gpuadvisor.rules.sizing.peak import peak_tflops
from gpuadvisor.rules.sizing.speed import PCIE_GBS_PER_DIRECTION, Device, EngineEfficiency, LinkKind

SCALE_UP_KINDS = frozenset({"nvlink", "infinity-fabric", "roce", "ici", "neuronlink"})
"""Accelerator links that join a scale-up domain (`Accelerator.interconnect_kind`; Gaudi's is on-chip RoCE)."""
SCALE_UP_NAMES = {"nvlink": "NVLink", "infinity-fabric": "Infinity Fabric (xGMI)", "roce": "on-chip RoCE",
                  "ici": "TPU ICI", "neuronlink": "NeuronLink", "pcie": "PCIe", "unified": "one chip", "none": "none"}
FABRIC_NAMES = {"infiniband": "InfiniBand", "roce": "RoCE", "efa": "AWS EFA", "ethernet": "Ethernet (TCP)",
                "ici": "TPU ICI", "dcn": "TPU data-centre network", "none": "none", "unknown": "a cluster network"}
DESK_SIDE_MARKETS = frozenset({"consumer", "workstation"})
UNLIMITED = 1 << 20
LinkClass = Literal["scale-up", "pcie", "network", "local"]


@dataclass(frozen=True)
class ScaleUp:
    """The fast domain of a node: its link kind, per-accelerator bandwidth per direction and size."""

    kind: str
    gbs_per_direction: float
    domain: int


@dataclass(frozen=True)
class ScaleOut:
    """The network between nodes: its kind and the node's aggregate bandwidth per direction (GB/s), None when
    not published (the `training_network_gbs` assumption then stands in)."""

    kind: str
    gbs_per_node: float | None


@dataclass(frozen=True)
class Link:
    """What a group of accelerators talks over: the slowest link the group crosses."""

    cls: LinkClass
    kind: str
    """scale-up kind (nvlink ...), 'pcie', a fabric kind (infiniband ...), or 'local' for one accelerator."""
    gbs_per_direction: float | None
    """Per accelerator, per direction; None = not published (network)."""

    @property
    def name(self) -> str:
        if self.cls == "network":
            return FABRIC_NAMES.get(self.kind, self.kind)
        return SCALE_UP_NAMES.get(self.kind, self.kind)

    @property
    def fast(self) -> bool:
        """Inside a scale-up domain (or one accelerator): no PCIe or network hop."""
        return self.cls in ("scale-up", "local")


@dataclass(frozen=True)
class Topology:
    """Where a plan's accelerators sit: machines of `node` accelerators, a fast domain, PCIe, and the network."""

    node: int
    scale_up: ScaleUp
    pcie_gbs_per_direction: float
    scale_out: ScaleOut | None
    """None: machines cannot be joined (no cluster network); independent serving replicas still can."""

    @property
    def joinable(self) -> bool:
        return self.scale_out is not None

    def link(self, group: int) -> Link:
        """The link a group of `group` accelerators placed together talks over (the slowest it crosses)."""
        if group <= 1:
            return Link("local", "local", None)
        if group <= self.scale_up.domain and self.scale_up.kind in SCALE_UP_KINDS:
            return Link("scale-up", self.scale_up.kind, self.scale_up.gbs_per_direction)
        if group <= self.node:
            return Link("pcie", "pcie", self.pcie_gbs_per_direction)
        if self.scale_out is None:
            raise ValueError(f"a group of {group} spans several {self.node}-accelerator nodes with no network between "
                             "them")
        per = None if self.scale_out.gbs_per_node is None else self.scale_out.gbs_per_node / self.node
        return Link("network", self.scale_out.kind, per)

    def network_gbs(self) -> float | None:
        """The nodes' aggregate NIC bandwidth per direction (GB/s), None when unpublished or absent."""
        return None if self.scale_out is None else self.scale_out.gbs_per_node

    @property
    def tcp_network(self) -> bool:
        """Nodes joined over plain Ethernet (no RDMA): collectives reach a smaller share of the line rate, and a
        shrinking one as nodes are added (`sizing.speed.network_efficiency`)."""
        return self.scale_out is not None and self.scale_out.kind == "ethernet"

    def describe(self) -> str:
        """'8 per node, NVLink domain of 8, InfiniBand 400 GB/s per node' — for texts and WHY chains."""
        up = self.scale_up
        inside = (f"{SCALE_UP_NAMES.get(up.kind, up.kind)} domain of {up.domain:,}" if up.kind in SCALE_UP_KINDS
                  and up.domain > 1 else "PCIe between accelerators" if self.node > 1 else "one accelerator")
        if self.scale_out is None:
            out = "no cluster network"
        else:
            bw = self.scale_out.gbs_per_node
            out = FABRIC_NAMES.get(self.scale_out.kind, self.scale_out.kind) + (
                f" {bw * 8:,.0f} Gb/s per node" if bw else " (bandwidth not published)")
        return f"{self.node} per node, {inside}, {out}"


def _pcie(acc: Accelerator) -> float:
    gen = int(acc.pcie_gen.value) if acc.pcie_gen is not None else 4
    return PCIE_GBS_PER_DIRECTION.get(gen, PCIE_GBS_PER_DIRECTION[4])


def scale_up_of(acc: Accelerator, domain: int | None = None) -> ScaleUp:
    """The accelerator's own fast link (datasheet bandwidth is bidirectional: halved per direction); `domain`
    overrides its size (an offer's `fast_domain`, a rack's 72)."""
    if acc.interconnect_kind in SCALE_UP_KINDS and acc.interconnect_gbs is not None:
        size = domain if domain is not None else (acc.interconnect_domain or acc.max_per_node)
        return ScaleUp(acc.interconnect_kind, acc.interconnect_gbs.value / 2.0, max(1, size))
    kind = "unified" if acc.interconnect_kind == "unified" else "pcie"
    return ScaleUp(kind, _pcie(acc), 1)


def accelerator_topology(acc: Accelerator, node: int | None = None) -> Topology:
    """The part on its own (`estimate` without an offer): its board's domain, no network between nodes. A rack-scale
    part (GB200/GB300 NVL72: 4 GPUs per compute tray, 72 in one NVLink domain) keeps its whole domain, so a group of
    8 of them talks over NVLink as on an HGX board, not over PCIe."""
    n = node or acc.max_per_node
    up = scale_up_of(acc)
    domain = up.domain if node is None and up.kind in SCALE_UP_KINDS else min(up.domain, n)
    return Topology(n, ScaleUp(up.kind, up.gbs_per_direction, domain) if up.domain > 1 else up, _pcie(acc), None)


def instance_topology(inst: Instance, acc: Accelerator) -> Topology:
    """A cloud offer: the instance is the node (a per-GPU listing is cut from a node of `max_per_node`); its
    `fast_domain` bounds the scale-up domain; `cluster` / `fabric` / `internode_gbs` describe the network."""
    node = inst.accelerator_count if inst.accelerator_count > 1 else acc.max_per_node
    domain = inst.domain(acc)
    up = scale_up_of(acc, domain) if domain > 1 else ScaleUp("pcie", _pcie(acc), 1)
    out = None
    if inst.cluster:
        kind = inst.fabric or ("ici" if acc.interconnect_kind == "ici" else "unknown")
        out = ScaleOut(kind, inst.internode_gbs)
    return Topology(node, up, _pcie(acc), out)


def system_topology(system: System, acc: Accelerator, fabric_kind: str | None, fabric_gbs: float | None,
                    node: int | None = None) -> Topology:
    """A purchased machine: its slots (or the most of this card it holds) are the node; a rack's scale-up domain
    spans its machines; a network exists when a fabric is bought for it (never for a desk-side machine)."""
    n = node or system.slots
    up = scale_up_of(acc, system.scale_up_domain)
    if up.domain > 1:
        up = ScaleUp(up.kind, up.gbs_per_direction, min(up.domain, max(n, system.scale_up_domain or 0)))
    out = None if system.desk_side or fabric_kind is None else ScaleOut(fabric_kind, fabric_gbs)
    return Topology(n, up, _pcie(acc), out)


def desk_side(acc: Accelerator) -> bool:
    """Consumer and workstation cards: bought for a desk-side machine, not for an HGX server."""
    return acc.market in DESK_SIDE_MARKETS


def own_only(acc: Accelerator) -> bool:
    """A computer's CPU, or a part in the memory size the user has (rules/inputs/owned_parts.py): nobody buys or rents
    it for this, so it is planned only as the user's own hardware."""
    return acc.software_stack == "cpu" or acc.id.endswith(OWN_SUFFIX)


def module_part(acc: Accelerator) -> bool:
    """An SXM/OAM module or a superchip board: usable only on its baseboard inside a server, not as a card."""
    form = acc.form_factor.upper()
    return acc.market == "datacenter" and any(k in form for k in ("SXM", "OAM", "SUPERCHIP", "GB200", "GB300"))


# ---- speed-model views: one device, one peak -----------------------------------------------------------------

def training_peak(acc: Accelerator, weights: Precision) -> float | None:
    """Dense peak a training run on `acc` is sized with (FP8 only on parts with FP8 tensor cores)."""
    compute = training_compute(weights)
    if compute == "fp4" and not acc.fp4_support:
        compute = "fp8"
    if compute == "fp8" and not acc.fp8_support:
        compute = "bf16"
    return peak_tflops(acc, compute)[0]


def device_for(acc: Accelerator, compute: str, link: Link | None = None,
               efficiency: EngineEfficiency | None = None) -> Device:
    """The speed model's view of `acc` at a compute precision, its group talking over `link` (default: the part's
    own fast link), with the serving engine's calibrated efficiencies (None = engine-blind)."""
    peak, _ = peak_tflops(acc, compute)
    if link is None:
        up = scale_up_of(acc)
        link = Link("scale-up", up.kind, up.gbs_per_direction) if up.kind in SCALE_UP_KINDS else \
            Link("pcie", "pcie", up.gbs_per_direction)
    gbs = link.gbs_per_direction if link.gbs_per_direction else _pcie(acc)
    # all-reduce latency class: NVLink's (NVSwitch, measured ~8 µs); other fast links keep their bandwidth but the
    # PCIe-class latency the engine calibration was fitted with (AMD Infinity Fabric rows, engines.toml)
    kind: LinkKind = "nvlink" if link.kind == "nvlink" else ("other" if link.fast else "pcie")
    # 4-bit weights attend in FP8 (the FP8 KV cache and FP8 attention kernels): the attention math runs at FP8's peak
    attention = peak_tflops(acc, "fp8")[0] if peak_tflops(acc, compute)[1] == "fp4" else None
    return Device(acc.memory_bandwidth_gbs.value, peak, gbs, kind, efficiency, acc.sustained_share(compute),
                  attention_tflops=attention, attention_sustained=acc.sustained_share("fp8") if attention else None)

