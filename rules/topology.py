"""Where accelerators can work together: fast-interconnect domains, nodes, clusters and workstations.

A tensor-parallel group exchanges activations after every layer, so it must live inside one fast domain (NVLink /
NVSwitch, Infinity Fabric, TPU ICI, NeuronLink). Across nodes only pipeline stages and data parallelism work, and
only where the provider joins the nodes with a cluster network. Consumer and workstation cards live in a desk-side
machine: at most the GPUs one workstation holds, over PCIe.

These are facts of the hardware and of the offers; the planner and the pricing callbacks ask this module instead of
guessing from the accelerator alone.
"""

from __future__ import annotations

from gpuadvisor.knowledge.schema import Accelerator, Instance

FAST_LINKS = frozenset({"nvlink", "infinity-fabric", "ici", "neuronlink", "unified"})
DESK_SIDE_MARKETS = frozenset({"consumer", "workstation"})
UNLIMITED = 1 << 20


def link_domain(acc: Accelerator) -> int:
    """How many of these accelerators share the fast interconnect (1 when there is none)."""
    if acc.interconnect_kind not in FAST_LINKS:
        return 1
    return acc.interconnect_domain or acc.max_per_node


def desk_side(acc: Accelerator) -> bool:
    """Consumer and workstation cards: bought for a desk-side machine, not for an HGX server."""
    return acc.market in DESK_SIDE_MARKETS


def own_only(acc: Accelerator) -> bool:
    """A computer's CPU: nobody buys or rents it for this, so it is planned only as the user's own hardware."""
    return acc.software_stack == "cpu"


def module_part(acc: Accelerator) -> bool:
    """An SXM/OAM module or a superchip board: usable only on its baseboard inside a server, not as a card."""
    form = acc.form_factor.upper()
    return acc.market == "datacenter" and any(k in form for k in ("SXM", "OAM", "SUPERCHIP", "GB200", "GB300"))


def replica_limit(acc: Accelerator) -> int:
    """Most GPUs one model replica may span: one workstation for desk-side cards, else a multi-node pipeline."""
    return acc.max_per_node if desk_side(acc) else UNLIMITED


def cluster_limit(acc: Accelerator) -> int:
    """Most GPUs one training job may use: desk-side cards train inside one workstation (no cluster network)."""
    return acc.max_per_node if desk_side(acc) else UNLIMITED


def instance_domain(inst: Instance, acc: Accelerator) -> int:
    """Accelerators of an offer that can form one fast domain (the offer's `fast_domain`, else derived from the
    instance size and the accelerator's domain: see `Instance.domain`)."""
    return inst.domain(acc) if acc.interconnect_kind in FAST_LINKS else 1


def per_gpu_offer(inst: Instance) -> bool:
    """Billed per GPU (a 1-GPU listing), as opposed to whole multi-GPU instances."""
    return inst.accelerator_count == 1


def node_gpus(inst: Instance, acc: Accelerator) -> int:
    """GPUs of one node behind an offer: the instance itself, or the NVLinked board a per-GPU offer is cut from."""
    return max(inst.accelerator_count, min(instance_domain(inst, acc), acc.max_per_node))


def clustered(inst: Instance) -> bool:
    """Whether the provider joins several of these instances with a cluster network (multi-node jobs)."""
    return inst.cluster


def unsupported(inst: Instance, acc: Accelerator, *, tensor_parallel: int, pipeline_parallel: int, count: int,
                training: bool) -> str | None:
    """Why a plan cannot run on an offer, or None when it can.

    A tensor-parallel group must fit the offer's fast domain; a replica larger than one node, or data-parallel
    training over several nodes, needs a cluster network. Serving replicas are independent and need none.
    """
    domain = instance_domain(inst, acc)
    if tensor_parallel > domain:
        link = "no fast interconnect" if domain == 1 else f"a fast domain of {domain}"
        return (f"{inst.provider_name} {inst.instance} has {link}; tensor parallelism over {tensor_parallel} GPUs "
                "needs them on one NVLink/xGMI board")
    node = node_gpus(inst, acc)
    spans_nodes = tensor_parallel * pipeline_parallel > node or (training and count > node)
    if spans_nodes and not clustered(inst):
        return (f"{inst.provider_name} {inst.instance}: the plan spans several nodes ({count} GPUs, {node} per "
                "node) but this offer has no cluster network between machines")
    return None
