"""Deployable units and purchase bills, checked by hand against the figures in knowledge/data/*.toml.

The literals below are those of the shipped knowledge base (systems.toml, accelerators.toml); a change of a price
there should fail these tests, and the test then says which hand calculation to redo.
"""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.purchases import purchase_bill
from gpuadvisor.rules.units import card_class, fabric_for, machines_for, purchase_units, rental_units, unit_table


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(user_dir=None)


def test_a_pcie_card_is_bought_in_a_server_and_priced_with_its_host(catalog: Catalog) -> None:
    # 64 L4 (msrp $2,345, accelerators.toml) in 8 × 4U 8-GPU PCIe servers (host $13,300 each, systems.toml):
    # 64 × 2,345 = 150,080; 8 × 13,300 = 106,400. The servers carry one 100 GbE NIC each: joined, they take 8
    # ports of the 100 GbE fabric at $1,780 (3 switch ports of a two-tier fat tree × $593) = 14,240.
    # Capex 150,080 + 106,400 + 14,240 = 270,720. Power: 64 × 72 W + 8 × 2,000 W = 20,608 W.
    l4 = catalog.accelerators["nvidia-l4"]
    server = catalog.systems["pcie-4u-8gpu-server"]
    bill = purchase_bill(catalog, server, l4, machines=8, accelerators=64, joined=True)
    assert bill.accelerators_usd == pytest.approx(150_080)
    assert bill.host_usd == pytest.approx(106_400)
    assert bill.fabric_usd == pytest.approx(14_240)
    assert bill.capex_usd == pytest.approx(270_720)
    assert bill.beyond_usd == pytest.approx(120_640)
    assert bill.power_w == pytest.approx(20_608)
    assert "8 × $13,300" in bill.words and "8 100 GbE network ports × $1,780" in bill.words
    # the same machines serving apart (independent replicas) need no cluster fabric
    apart = purchase_bill(catalog, server, l4, machines=8, accelerators=64, joined=False)
    assert apart.capex_usd == pytest.approx(256_480) and apart.fabric_usd == 0


def test_a_fabric_without_a_switch_price_says_so(catalog: Catalog) -> None:
    # Gaudi 3 servers join over their on-chip 400G RoCE ports; no RoCE switch price was found (systems.toml)
    gaudi = catalog.accelerators["intel-gaudi3"]
    bill = purchase_bill(catalog, catalog.systems["intel-gaudi3-8oam-server"], gaudi, machines=2, accelerators=16,
                         joined=True)
    assert bill.fabric_usd == 0 and "switches not priced" in bill.words
    # 8 × 900 W OAM + 4,300 W host (11.5 kW XE9680 − 8 × 900 W) per machine
    assert bill.power_w == pytest.approx(2 * (8 * 900 + 4_300))


def test_an_hgx_cluster_pays_for_its_infiniband_ports(catalog: Catalog) -> None:
    # 2 × HGX H100 servers: 16 × $30,000 + 2 × $45,000 host + 2 machines × 8 NICs × $4,250 per NDR port = 480,000 +
    # 90,000 + 68,000 = $638,000; beyond the GPUs: 158,000. Not joined (independent replicas): no fabric.
    h100 = catalog.accelerators["nvidia-h100-sxm5"]
    hgx = catalog.systems["hgx-h100-8gpu-server"]
    joined = purchase_bill(catalog, hgx, h100, machines=2, accelerators=16, joined=True)
    assert joined.fabric_usd == pytest.approx(68_000)
    assert joined.capex_usd == pytest.approx(638_000)
    assert joined.beyond_usd == pytest.approx(158_000)
    apart = purchase_bill(catalog, hgx, h100, machines=2, accelerators=16, joined=False)
    assert apart.capex_usd == pytest.approx(570_000) and apart.fabric_usd == 0


def test_a_whole_system_price_is_split_by_its_published_host_share(catalog: Catalog) -> None:
    # DGX/HGX B300 is priced whole at $325,000 with a $45,000 host share: 2 machines → 650,000, of which 90,000 host.
    b300 = catalog.accelerators["nvidia-b300"]
    system = catalog.systems["hgx-b300-8gpu-server"]
    bill = purchase_bill(catalog, system, b300, machines=2, accelerators=16, joined=False)
    assert bill.capex_usd == pytest.approx(650_000)
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
