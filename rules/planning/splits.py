"""Model splits practitioners avoid: tensor parallel over PCIe, or one replica spread over machines on plain Ethernet.

Serving engines' own recipes keep a replica's tensor-parallel group inside one fast domain — NVLink/NVSwitch on an
HGX board, AMD Infinity Fabric (xGMI), TPU ICI — and spread larger models with pipeline stages over an RDMA fabric
(vLLM's distributed-serving guide: tensor parallel inside a node, pipeline parallel across nodes; SGLang's DeepSeek-V3
recipe: TP8 on one 8-GPU node). A tensor-parallel group on PCIe-only cards all-reduces after every layer over the
host bus (seed 002 W3: 10-20× slower than NVLink), and a replica whose stages cross machines over TCP Ethernet pays
the network on every token. Such a split is a last resort: rule W3.last-resort marks it, and the ranking weighs it
only after every plan that keeps each replica inside a fast domain (rules/consultation/preference.py).
"""

from __future__ import annotations

SLOW_FABRICS = frozenset({"ethernet"})
"""Scale-out networks without RDMA (`topology.FABRIC_NAMES`): a replica split over them is a last resort."""


def slow_split(*, tensor_parallel: int, pipeline_parallel: int, expert_parallel: int, link: str,
               per_machine: int, scale_out_kind: str) -> str:
    """What makes a replica's split a last resort, in words ('' when it stays inside a fast domain or one GPU):
    'tensor parallel 4 over PCIe', 'one replica over 2 machines on Ethernet (TCP)'."""
    group = max(tensor_parallel, expert_parallel)
    if group > 1 and link == "pcie":
        return f"tensor parallel {group} over PCIe"
    if group > 1 and link in SLOW_FABRICS:
        return f"tensor parallel {group} over Ethernet (TCP) between machines"
    replica = group * max(1, pipeline_parallel)
    if per_machine > 0 and replica > per_machine and scale_out_kind in SLOW_FABRICS:
        machines = -(-replica // per_machine)
        return f"one replica over {machines:,} machines on Ethernet (TCP)"
    return ""
