"""Deployable units and purchase bills, checked by hand against the figures in knowledge/data/*.toml.

The literals below are those of the shipped knowledge base (systems.toml, accelerators.toml); a change of a price
there should fail these tests, and the test then says which hand calculation to redo.
"""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.planning.units import (
    card_class,
    fabric_for,
    machines_for,
    purchase_units,
    rental_units,
    unit_table,
)
from gpuadvisor.rules.pricing.purchases import purchase_bill


def test_a_pcie_card_is_bought_in_a_server_and_priced_with_its_host(catalog: Catalog) -> None:
    # 64 L4 (msrp $2,345, accelerators.toml) in 8 × 4U 8-GPU PCIe servers (host $13,300 each, systems.toml):
    # 64 × 2,345 = 150,080; 8 × 13,300 = 106,400. The servers carry one 100 GbE NIC each (in the host price):
    # joined, their 8 ports fit one 32-port SN2700 ($18,990) with 8 DAC links × $60 = 19,470.
    # Capex 150,080 + 106,400 + 19,470 = 275,950. Power: 64 × 72 W + 8 × 2,000 W = 20,608 W.
    l4 = catalog.accelerators["nvidia-l4"]
    server = catalog.systems["pcie-4u-8gpu-server"]
    bill = purchase_bill(catalog, server, l4, machines=8, accelerators=64, joined=True)
    assert bill.accelerators_usd == pytest.approx(150_080)
    assert bill.host_usd == pytest.approx(106_400)
    assert bill.fabric_usd == pytest.approx(19_470)
    assert bill.capex_usd == pytest.approx(275_950)
    assert bill.beyond_usd == pytest.approx(125_870)
    assert bill.power_w == pytest.approx(20_608)
    assert "8 × $13,300" in bill.words
    assert "$19,470 100 GbE network (8 ports on one switch: 1 switch × $18,990 + 8 links × $60)" in bill.words
    # the same machines serving apart (independent replicas) need no cluster fabric, only a port each on the site's
    # front-end network: 8 × ($18,990 / 32 = $593.44 switch share + $60 link) = 5,227.50
    apart = purchase_bill(catalog, server, l4, machines=8, accelerators=64, joined=False)
    assert apart.fabric_usd == pytest.approx(5_227.5)
    assert apart.capex_usd == pytest.approx(256_480 + 5_227.5)
    assert "front-end ports" in apart.words


def test_gaudi_on_chip_roce_ports_are_priced_on_a_400g_ethernet_fabric(catalog: Catalog) -> None:
    # Gaudi 3: 6 × 800G OSFP scale-out per box (on the chips, no NICs bought), each split into two 400G ports of a
    # 128-port 51.2 Tb/s switch: 2 boxes = 24 ports on one switch ($46,800 estimate) + 24 links × $1,280 = $77,520.
    gaudi = catalog.accelerators["intel-gaudi3"]
    bill = purchase_bill(catalog, catalog.systems["intel-gaudi3-8oam-server"], gaudi, machines=2, accelerators=16,
                         joined=True)
    assert bill.fabric_usd == pytest.approx(46_800 + 24 * 1_280)
    assert "400G RoCE Ethernet fabric (24 ports on one switch" in bill.words
    # 8 × 900 W OAM + 4,300 W host (11.5 kW XE9680 − 8 × 900 W) per machine
    assert bill.power_w == pytest.approx(2 * (8 * 900 + 4_300))
    # Gaudi 2: 3 × 100 GbE scale-out per chip = 2,400 Gb/s a box, as six 400G ports: 20 boxes = 120 ports on one
    # 128-port switch: 46,800 + 120 × 1,280 = 200,400 on $1.8M of servers (11 %)
    g2 = catalog.accelerators["intel-gaudi2"]
    big = purchase_bill(catalog, catalog.systems["intel-gaudi2-8oam-server"], g2, machines=20, accelerators=160,
                        joined=True)
    assert big.fabric_usd == pytest.approx(200_400)
    assert big.capex_usd == pytest.approx(20 * 90_000 + 200_400)


def test_an_hgx_cluster_pays_for_its_infiniband_switches_and_links(catalog: Catalog) -> None:
    # 2 × HGX H100 servers: 16 × $30,000 + 2 × $45,000 host = 570,000; their 16 NDR ports fit one 64-port QM9700
    # ($36,000) with 16 links × $1,280 = 56,480 → $626,480; beyond the GPUs: 146,480.
    h100 = catalog.accelerators["nvidia-h100-sxm5"]
    hgx = catalog.systems["hgx-h100-8gpu-server"]
    joined = purchase_bill(catalog, hgx, h100, machines=2, accelerators=16, joined=True)
    assert joined.fabric_usd == pytest.approx(56_480)
    assert joined.capex_usd == pytest.approx(626_480)
    assert joined.beyond_usd == pytest.approx(146_480)
    # the H100 Freakonomics sheet's cluster, 128 nodes / 1,024 GPUs: 32 leaves + 16 spines = 48 switches × $36,000 =
    # $1,728,000 and 2,048 links × $1,280 = $2,621,440, the sheet's own two lines
    sheet = purchase_bill(catalog, hgx, h100, machines=128, accelerators=1_024, joined=True)
    assert sheet.fabric_usd == pytest.approx(1_728_000 + 2_621_440)
    assert "48 switches × $36,000 + 2,048 links × $1,280" in sheet.words


def test_every_multi_machine_purchase_prices_its_network(catalog: Catalog) -> None:
    # the purchases issue 26 found at $0: HGX B300 and GB300 NVL72 on XDR, Gaudi 3 on RoCE, and the servers that
    # could not scale out before (MI355X, MI350X, Gaudi 2)
    cases = [("hgx-b300-8gpu-server", "nvidia-b300", 8), ("gb300-nvl72-rack", "nvidia-gb300-per-gpu", 72),
             ("gb200-nvl72-rack", "nvidia-gb200-per-gpu", 72), ("intel-gaudi3-8oam-server", "intel-gaudi3", 8),
             ("intel-gaudi2-8oam-server", "intel-gaudi2", 8), ("amd-mi355x-8gpu-server", "amd-mi355x", 8),
             ("amd-mi350x-8gpu-server", "amd-mi350x", 8), ("hgx-b200-8gpu-server", "nvidia-b200", 8)]
    for system, acc, per in cases:
        for joined in (True, False):
            bill = purchase_bill(catalog, catalog.systems[system], catalog.accelerators[acc], machines=4,
                                 accelerators=4 * per, joined=joined)
            assert bill.fabric_usd > 0, (system, joined, bill.words)
            assert "not priced" not in bill.words
    # 20 HGX B300: 160 XDR ports in a two-tier tree of 144-port Q3400s: ⌈160 / 72⌉ = 3 leaves + ⌈160 / 144⌉ = 2
    # spines = 5 × $162,000 + 320 links × $2,560 = $1,629,200 (20 % of the $6.5M servers: XDR is priced at NDR's
    # cost per Gb/s, an estimate)
    b300 = purchase_bill(catalog, catalog.systems["hgx-b300-8gpu-server"], catalog.accelerators["nvidia-b300"],
                         machines=20, accelerators=160, joined=True)
    assert b300.fabric_usd == pytest.approx(5 * 162_000 + 320 * 2_560)
    # a rack states what its price includes, and its scale-out network is bought besides
    rack = purchase_bill(catalog, catalog.systems["gb300-nvl72-rack"], catalog.accelerators["nvidia-gb300-per-gpu"],
                         machines=2, accelerators=144, joined=True)
    assert "the rack price includes 72 B300 GPUs" in rack.words
    assert rack.fabric_usd == pytest.approx(162_000 + 144 * 2_560)


def test_a_nic_left_out_of_a_host_price_is_bought_with_the_network(catalog: Catalog) -> None:
    # 3 × 2U 4-GPU servers joined: one switch $18,990 + 3 links × $60 + 3 ConnectX-6 Dx × $1,550 = $23,820
    bill = purchase_bill(catalog, catalog.systems["pcie-2u-4gpu-server"], catalog.accelerators["nvidia-l4"],
                         machines=3, accelerators=12, joined=True)
    assert bill.fabric_usd == pytest.approx(18_990 + 3 * 60 + 3 * 1_550)
    assert "3 NICs × $1,550" in bill.words


def test_a_whole_system_price_is_split_by_its_published_host_share(catalog: Catalog) -> None:
    # DGX/HGX B300 is priced whole at $325,000 with a $45,000 host share: 2 machines → 650,000, of which 90,000 host
    # (plus two front-end ports, 2 × ($593.44 + $60) = $1,306.88, as independent replicas).
    b300 = catalog.accelerators["nvidia-b300"]
    system = catalog.systems["hgx-b300-8gpu-server"]
    bill = purchase_bill(catalog, system, b300, machines=2, accelerators=16, joined=False)
    assert bill.capex_usd - bill.fabric_usd == pytest.approx(650_000)
    assert bill.fabric_usd == pytest.approx(2 * (18_990 / 32 + 60))
    assert bill.host_usd == pytest.approx(90_000) and bill.accelerators_usd == pytest.approx(560_000)
    assert bill.known_split


def test_modules_come_only_on_their_board_and_cards_in_a_chassis_that_takes_them(catalog: Catalog) -> None:
    mi300x = catalog.accelerators["amd-mi300x"]
    assert card_class(mi300x) == "module"
    units = purchase_units(catalog, mi300x)
    assert [u.name for u in units] == ["MI300X 8-GPU OAM server"]
    assert units[0].fills == (8,)  # an OAM board is bought whole: no "1× MI300X for $180,000"
    l4_systems = {u.name for u in purchase_units(catalog, catalog.accelerators["nvidia-l4"])}
    assert "4U 8-GPU PCIe server" in l4_systems and "4-card workstation" not in l4_systems
    rtx = {u.kind for u in purchase_units(catalog, catalog.accelerators["nvidia-rtx-4090"])}
    assert rtx <= {"workstation", "desktop"}  # an actively cooled consumer card goes in a desk-side machine


def test_an_instance_is_rented_whole(catalog: Catalog) -> None:
    b200 = catalog.accelerators["nvidia-b200"]
    for unit in rental_units(catalog, b200):
        inst = catalog.instances[unit.id.removeprefix("inst:")]
        assert unit.fills == (inst.accelerator_count,)
        assert unit.counts(64, joined=False) == [(1, inst.accelerator_count)]
    assert machines_for(rental_units(catalog, b200)[0], 9) == 2


def test_a_server_fabric_is_the_fastest_of_its_nic_kind_no_faster_than_its_nics(catalog: Catalog) -> None:
    assert fabric_for(catalog, catalog.systems["hgx-h100-8gpu-server"]).id == "ib-ndr-400"  # type: ignore[union-attr]
    assert fabric_for(catalog, catalog.systems["pcie-4u-8gpu-server"]).id == "eth-100"  # type: ignore[union-attr]
    assert fabric_for(catalog, catalog.systems["workstation-threadripper-4gpu"]) is None
    # on-chip RoCE: Gaudi 3's 800G cages and Gaudi 2's bundled ports land on the 400G RoCE fabric
    assert fabric_for(catalog, catalog.systems["intel-gaudi3-8oam-server"]).id == "roce-400"  # type: ignore[union-attr]
    assert fabric_for(catalog, catalog.systems["hgx-b300-8gpu-server"]).id == "ib-xdr-800"  # type: ignore[union-attr]


def test_unit_shapes_group_units_planned_alike(catalog: Catalog) -> None:
    table = unit_table(catalog)
    assert table is unit_table(catalog)  # built once per catalog
    for sid, unit in table.by_shape.items():
        assert sid.startswith(unit.accelerator + "~")
    p5 = table.units["inst:aws-p5.48xlarge"]
    assert table.shape_id(p5) in table.by_shape
    assert p5.describe(2, 16) == "2 × AWS p5.48xlarge (16 GPUs)"
    hgx = table.units["inst:coreweave-hgx-h200"]  # an instance named for what it holds is not told twice
    assert hgx.describe(2, 16) == "2 × CoreWeave HGX H200 (8 GPUs), 16 GPUs in all"
    assert hgx.describe(1, 8) == "CoreWeave HGX H200 (8 GPUs)"
    pcie = table.units["sys:pcie-4u-8gpu-server:nvidia-l4"]
    assert pcie.describe(8, 32) == "8 × 4U 8-GPU PCIe server (4 of 8 slots filled, 32 GPUs)"
