"""The rentals added for late 2026 (TPU v6e, Trn2, Inf2, G6/G6e, Lambda/Nebius/CoreWeave nodes, Crusoe MI300X): each
price as its source prints it, dated as the source dates it, and listed by `gpuadvisor kb list instances`."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Instance
from gpuadvisor.tui.cli import main

# id, whole-instance on-demand $/h, date, accelerators per instance, fast domain
NEW = [
    ("aws-trn2.48xlarge", 35.76, "2025-11-30", 16, 16),  # us-east-2, instances.vantage.sh snapshot
    ("aws-inf2.xlarge", 0.7582, "2026-01-21", 1, 1),
    ("aws-inf2.8xlarge", 1.96786, "2026-01-21", 1, 1),
    ("aws-inf2.24xlarge", 6.49063, "2026-01-21", 6, 6),
    ("aws-g6.xlarge", 0.8048, "2026-01-21", 1, 1),
    ("aws-g6e.xlarge", 1.861, "2026-01-21", 1, 1),
    ("aws-g6e.12xlarge", 10.49264, "2026-01-21", 4, 1),  # PCIe L40S
    ("aws-p5.4xlarge", 6.88, "2026-01-21", 1, 1),
    ("gcp-tpu-v6e-1", 2.70, "2024-12", 1, 1),  # "starting at $2.7000 per chip-hour"
    ("gcp-tpu-v6e-8", 8 * 2.70, "2024-12", 8, 256),  # slices up to 256 chips on ICI
    ("lambda-8x-b200-sxm6", 8 * 6.69, "2026-09-20", 8, 8),
    ("lambda-4x-h100-sxm", 4 * 4.09, "2026-09-20", 4, 4),
    ("lambda-8x-a100-sxm-40gb", 8 * 1.99, "2026-09-20", 8, 8),
    ("lambda-4x-a6000", 4 * 1.09, "2026-09-20", 4, 1),
    ("nebius-8x-hgx-h100", 8 * 4.50, "2026-10-01", 8, 8),  # the price effective 2026-10-01
    ("nebius-8x-hgx-h200", 8 * 5.40, "2026-10-01", 8, 8),
    ("nebius-8x-hgx-b200", 8 * 8.50, "2026-10-01", 8, 8),
    ("coreweave-hgx-h100", 49.24, "2026-09-20", 8, 8),
    ("coreweave-hgx-h200", 50.44, "2026-09-20", 8, 8),
    ("coreweave-hgx-b200", 68.80, "2026-09-20", 8, 8),
    ("coreweave-l40s-8x", 18.00, "2026-09-20", 8, 1),
    ("coreweave-gb200-nvl72", 42.00, "2026-09-20", 4, 72),  # a 4-GPU tray of a 72-GPU NVLink rack
    ("crusoe-mi300x", 3.45, "2026-09-20", 1, 1),
    ("azure-standard_nd96isr_mi300x_v5", 8 * 6.0, "2026-05-18", 8, 8),  # "$6/hr" per GPU, 8-GPU VM
    ("oci-bm.gpu.mi300x.8", 8 * 6.0, "2026-05-18", 8, 8),
    ("tensorwave-mi300x", 1.50, "2026-05-18", 1, 1),
    ("tensorwave-mi325x", 1.95, "2026-05-18", 1, 1),
    ("vultr-mi300x", 1.85, "2026-05-18", 1, 1),
]


@pytest.mark.parametrize(("inst_id", "usd", "as_of", "count", "domain"), NEW)
def test_new_rental(shipped: Catalog, inst_id: str, usd: float, as_of: str, count: int, domain: int) -> None:
    inst = shipped.instances[inst_id]
    price = inst.current_price("on-demand")
    assert price is not None and price.usd_per_hour == pytest.approx(usd, abs=1e-6)
    assert price.as_of is not None and price.as_of.startswith(as_of)
    assert inst.accelerator_count == count
    assert inst.domain(shipped.accelerators[inst.accelerator]) == domain


def test_nebius_keeps_the_september_price_as_history(shipped: Catalog) -> None:
    h100 = shipped.instances["nebius-hgx-h100"]
    assert sorted(p.usd_per_hour for p in h100.price) == [3.85, 4.50]
    current = h100.current_price("on-demand")
    assert current is not None and current.usd_per_hour == 4.50


def test_coreweave_spot(shipped: Catalog) -> None:
    spot = shipped.instances["coreweave-hgx-h100"].current_price("spot")
    assert spot is not None and spot.usd_per_hour == 19.71 and spot.as_of == "2026-09-20"


def test_instance_providers(shipped: Catalog) -> None:
    kinds = {i.provider: i.provider_kind for i in shipped.instances.values()}
    assert kinds == {"aws": "hyperscaler", "gcp": "hyperscaler", "azure": "hyperscaler", "lambda": "specialist",
                     "runpod": "specialist", "nebius": "specialist", "coreweave": "specialist",
                     "crusoe": "specialist", "oracle": "hyperscaler", "tensorwave": "specialist",
                     "vultr": "specialist", "vast": "marketplace"}


def test_tpu_and_amd_rentals_exist(shipped: Catalog) -> None:
    """A JAX user on Google Cloud sees a TPU; an AMD-only user sees a priced MI300X-class rental, including a whole
    8-GPU Infinity Fabric node (DeepSeek-V3 FP8 class serving needs one)."""
    accs = {i.accelerator for i in shipped.instances.values() if i.current_price("on-demand") is not None}
    assert {"google-tpu-v6e", "google-tpu-v5e", "aws-trainium2", "amd-mi300x", "amd-mi325x"} <= accs
    amd_nodes = [i for i in shipped.instances.values()
                 if i.accelerator == "amd-mi300x" and i.domain(shipped.accelerators[i.accelerator]) == 8]
    assert len(amd_nodes) >= 2


def test_no_documents_sourced_instance_price_is_dated(shipped: Catalog) -> None:
    """The seed documents are undated: a price taken from them must keep as_of empty."""
    for inst in shipped.instances.values():
        for p in inst.price:
            if any(s.startswith("doc-") for s in p.sources):
                assert p.as_of is None, inst.id


def test_undated_prices_load_and_rank_oldest() -> None:
    inst = Instance.model_validate({
        "id": "x", "provider": "p", "provider_name": "P", "provider_kind": "user", "instance": "x",
        "accelerator": "nvidia-l4", "accelerator_count": 1,
        "price": [{"type": "on-demand", "usd_per_hour": 2.0, "sources": ["doc-002"]},
                  {"type": "on-demand", "usd_per_hour": 1.0, "as_of": "2025-01", "sources": ["s"]}]})
    assert inst.price[0].as_of is None and inst.price[0].as_of_date is None
    assert inst.price[0].as_of_text == "undated"
    current = inst.current_price("on-demand")
    assert current is not None and current.usd_per_hour == 1.0


def test_new_rentals_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "list", "instances", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["entries"]}
    for inst_id, usd, as_of, _count, _domain in NEW:
        prices = [p for p in rows[inst_id]["price"] if p["type"] == "on-demand"]
        assert any(p["usd_per_hour"] == pytest.approx(usd) and p["as_of"].startswith(as_of) for p in prices), inst_id
    assert main(["kb", "list", "instances"]) == 0
    table = capsys.readouterr().out
    line = next(x for x in table.splitlines() if x.startswith("gcp-tpu-v6e-8 "))
    assert "21.60 (2024-12)" in line


def test_b300_and_rtx_pro_offers_are_shipped(shipped: Catalog) -> None:
    """The offers on accelerators added in late 2026 (B300, RTX PRO 6000 Server) load, with known sources."""
    b300 = shipped.instances["aws-p6-b300.48xlarge"]
    assert b300.accelerator == "nvidia-b300" and b300.fast_domain == 8 and b300.price[0].usd_per_hour == 142.416
    for inst in shipped.instances.values():
        if inst.accelerator in {"nvidia-b300", "nvidia-rtx-pro-6000-blackwell-server"}:
            refs = [*inst.memory_sources, *inst.topology_sources, *(s for p in inst.price for s in p.sources)]
            assert set(refs) <= set(shipped.sources), inst.id


@pytest.mark.parametrize(("inst_id", "kind", "usd", "per_chip"), [
    ("gcp-tpu-v5e-8", "on-demand", 8 * 1.20, 1.20),  # v5litepod-64 row: 76.80 $/h / 64 chips
    ("gcp-tpu-v5e-8", "spot", 8 * 13.63066 / 64, 13.63066 / 64),
    ("gcp-tpu-v5p-8", "on-demand", 16.80, 16.80 / 4),  # 'v5p-8' = 8 TensorCores = 4 chips
    ("gcp-tpu-v5p-8", "spot", 6.72, 6.72 / 4),
    ("gcp-tpu-v6e-8", "spot", 8.64, 1.08),  # us-east5
    ("gcp-g2-standard-8", "on-demand", 0.29358 + 1.12008 / 2, 0.29358 + 1.12008 / 2),  # host + one L4
    ("gcp-g2-standard-96", "on-demand", 3.52301 + 4.48032, (3.52301 + 4.48032) / 8),  # host + eight L4
])
def test_undated_catalog_prices(shipped: Catalog, inst_id: str, kind: str, usd: float, per_chip: float) -> None:
    """The SkyPilot catalog snapshot gives no date: these prices are recorded undated, never stamped."""
    price = shipped.instances[inst_id].current_price(kind)
    assert price is not None and price.as_of is None and price.as_of_text == "undated"
    assert price.usd_per_hour == pytest.approx(usd, rel=1e-5)
    assert price.usd_per_accelerator_hour == pytest.approx(per_chip, rel=1e-5)


def test_tpu_slices_span_the_pod(shipped: Catalog) -> None:
    for inst_id, domain in (("gcp-tpu-v5e-8", 256), ("gcp-tpu-v5p-8", 8960), ("gcp-tpu-v6e-8", 256)):
        inst = shipped.instances[inst_id]
        assert inst.cluster and inst.domain(shipped.accelerators[inst.accelerator]) == domain
        assert domain <= (shipped.accelerators[inst.accelerator].interconnect_domain or 0)
