"""Instance topology: accelerators per node, the fast-interconnect domain a tensor-parallel group must fit in, and
whether the provider rents multi-node clusters. Figures are the providers' published shapes (see topology_sources)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Instance

_BASE = {"id": "x", "provider": "p", "provider_name": "P", "provider_kind": "specialist", "instance": "x",
         "accelerator": "nvidia-h100-sxm5", "accelerator_count": 8,
         "price": [{"type": "on-demand", "usd_per_hour": 1.0, "sources": ["s"]}]}


def test_fast_domain_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="fast_domain"):
        Instance.model_validate({**_BASE, "fast_domain": 0})


def test_internode_bandwidth_needs_a_cluster() -> None:
    with pytest.raises(ValidationError, match="internode_gbs"):
        Instance.model_validate({**_BASE, "internode_gbs": 400})


@pytest.mark.parametrize(("count", "acc", "expected"), [
    (8, "nvidia-h100-sxm5", 8),  # HGX board: interconnect_domain 8
    (4, "nvidia-h100-sxm5", 4),  # fewer GPUs than the board's domain: the instance's count bounds it
    (8, "nvidia-l40s", 1),  # PCIe only (interconnect_domain None) -> 1
    (4, "nvidia-a100-pcie-80gb", 2),  # NVLink-bridged pairs: min(4, 2)
    (4, "nvidia-gb200-per-gpu", 4),  # no explicit fast_domain: a 4-GPU tray derives only its own 4
])
def test_domain_derivation(shipped: Catalog, count: int, acc: str, expected: int) -> None:
    inst = Instance.model_validate({**_BASE, "accelerator": acc, "accelerator_count": count})
    assert inst.fast_domain is None
    assert inst.domain(shipped.accelerators[acc]) == expected


def test_explicit_fast_domain_wins(shipped: Catalog) -> None:
    tray = Instance.model_validate({**_BASE, "accelerator": "nvidia-gb200-per-gpu", "accelerator_count": 4,
                                    "fast_domain": 72, "cluster": True})
    assert tray.domain(shipped.accelerators["nvidia-gb200-per-gpu"]) == 72


def test_every_instance_states_its_topology(shipped: Catalog) -> None:
    for inst in shipped.instances.values():
        assert inst.fast_domain is not None, inst.id
        assert inst.topology_sources, inst.id
        assert inst.domain(shipped.accelerators[inst.accelerator]) == inst.fast_domain


def test_single_gpu_and_per_gpu_offers_have_domain_one(shipped: Catalog) -> None:
    """A 1-GPU VM or a per-GPU listing can never be glued into a tensor-parallel group (except NVL72 trays)."""
    for inst in shipped.instances.values():
        acc = shipped.accelerators[inst.accelerator]
        if inst.accelerator_count == 1 and (acc.interconnect_domain or 1) < 72:
            assert inst.domain(acc) == 1, inst.id
            assert not inst.cluster, inst.id
        if inst.provider_kind == "marketplace":
            assert inst.domain(acc) == 1 and not inst.cluster, inst.id


@pytest.mark.parametrize("inst_id", [
    "aws-p4d.24xlarge", "aws-p4de.24xlarge", "aws-p5.48xlarge", "aws-p5en.48xlarge", "aws-p6-b200.48xlarge",
    "gcp-a3-highgpu-8g", "gcp-a3-megagpu-8g", "gcp-a3-ultragpu-8g", "gcp-a2-highgpu-8g", "gcp-a2-ultragpu-8g",
    "lambda-8x-h100-sxm", "lambda-8x-a100-sxm-80gb",
])
def test_hgx_nodes_have_domain_eight(shipped: Catalog, inst_id: str) -> None:
    inst = shipped.instances[inst_id]
    assert inst.accelerator_count == 8
    assert inst.domain(shipped.accelerators[inst.accelerator]) == 8


def test_pcie_multi_gpu_instances_have_domain_one(shipped: Catalog) -> None:
    for inst_id in ("aws-g5.48xlarge", "aws-g6.48xlarge", "aws-g6e.48xlarge", "azure-standard_nc96ads_a100_v4"):
        inst = shipped.instances[inst_id]
        assert inst.accelerator_count > 1 and inst.domain(shipped.accelerators[inst.accelerator]) == 1


@pytest.mark.parametrize(("inst_id", "gbs"), [
    ("aws-p4d.24xlarge", 400 / 8),  # 400 Gbps EFA
    ("aws-p5.48xlarge", 3200 / 8),  # 3,200 Gbps EFAv2
    ("aws-trn1n.32xlarge", 1600 / 8),  # 16 x 100 Gbps EFA
    ("gcp-a3-highgpu-8g", 1000 / 8),  # up to 1,000 Gbps
    ("gcp-a3-ultragpu-8g", 3200 / 8),  # 8 CX-7 NICs, 3,200 Gbps GPU-to-GPU
])
def test_cluster_bandwidth(shipped: Catalog, inst_id: str, gbs: float) -> None:
    inst = shipped.instances[inst_id]
    assert inst.cluster and inst.internode_gbs == gbs


def test_clusters_are_multi_accelerator_nodes(shipped: Catalog) -> None:
    clusters = [i for i in shipped.instances.values() if i.cluster]
    assert len(clusters) >= 9
    assert all(i.accelerator_count >= 4 for i in clusters)


def test_instance_memory_matches_the_accelerator(shipped: Catalog) -> None:
    """Sizing uses the accelerator's memory, so an instance must not name a part with a different memory size
    (e.g. a 16 GB V100 listing on the 32 GB nvidia-v100-sxm2 entry)."""
    for inst in shipped.instances.values():
        if inst.accelerator_memory_gb_each is not None:
            kb = shipped.accelerators[inst.accelerator].memory_gb.value
            assert inst.accelerator_memory_gb_each == pytest.approx(kb, abs=0.5), inst.id
