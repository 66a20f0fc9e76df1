"""The fat-tree sizing of rules/pricing/fabric.py, checked by hand."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.pricing.fabric import cluster_bill, fat_tree, frontend_bill


def test_fat_tree_tiers_switches_and_links() -> None:
    assert fat_tree(0, 64) == (0, 0, 0)
    assert fat_tree(16, 64) == (1, 1, 16)  # one switch, one link per port
    assert fat_tree(64, 64) == (1, 1, 64)
    # 65 ports: ⌈65 / 32⌉ = 3 leaves + ⌈65 / 64⌉ = 2 spines; NIC-to-leaf and leaf-to-spine links
    assert fat_tree(65, 64) == (2, 5, 130)
    # the H100 Freakonomics sheet's 1,024-GPU cluster: 32 leaves + 16 spines, 2,048 links
    assert fat_tree(1_024, 64) == (2, 48, 2_048)
    assert fat_tree(2_048, 64) == (2, 96, 4_096)  # R²/2 = 2,048: the largest two-tier tree
    # three tiers: 2 × ⌈2,049 / 32⌉ = 130 leaf and aggregation switches + ⌈2,049 / 64⌉ = 33 core; 3 links per port
    assert fat_tree(2_049, 64) == (3, 163, 6_147)


def test_cluster_and_front_end_bills() -> None:
    fabric = load_catalog(user_dir=None).fabrics["ib-ndr-400"]
    bill = cluster_bill(fabric, machines=4, ports_per_machine=8, nics_per_machine=8)
    # 32 ports on one switch: 36,000 + 32 × 1,280 + 32 ConnectX-7 × 1,894
    assert (bill.switches, bill.links, bill.nics) == (1, 32, 32)
    assert bill.usd == pytest.approx(36_000 + 32 * 1_280 + 32 * 1_894)
    front = frontend_bill(fabric, machines=3)
    assert front.usd == pytest.approx(3 * (36_000 / 64 + 1_280))
    assert front.frontend and "front-end ports" in front.words()
