"""The accelerators added for issue 10, each key figure against the document it was read from (table-driven).

A figure marked `derived` is checked against the arithmetic that derives it from the vendor's printed total."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog

# (accelerator, field, value, source that prints it)
FIGURES = [
    # HGX B300 (AceCloud/Glenn Lockwood; Verda's per-GPU table from the Blackwell Ultra datasheet)
    ("nvidia-b300", "memory_gb", 288, "press-hgx-b300"),
    ("nvidia-b300", "memory_bandwidth_gbs", 8000, "press-hgx-b300"),
    ("nvidia-b300", "bf16_tflops", 2250, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-b300", "fp8_tflops", 4500, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-b300", "fp4_tflops", 14000, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-b300", "tdp_w", 1100, "nv-blackwell-ultra-per-gpu"),
    # GB300 NVL72 per GPU: rack 1,080 PF FP4 / 360 PF FP8 / 180 PF BF16 dense, 576 TB/s, over 72 GPUs
    ("nvidia-gb300-per-gpu", "fp4_tflops", 1_080_000 / 72, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-gb300-per-gpu", "fp8_tflops", 360_000 / 72, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-gb300-per-gpu", "bf16_tflops", 180_000 / 72, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-gb300-per-gpu", "memory_bandwidth_gbs", 576_000 / 72, "nv-blackwell-ultra-per-gpu"),
    ("nvidia-gb300-per-gpu", "tdp_w", 1400, "nv-blackwell-ultra-per-gpu"),
    # RTX PRO 6000 Blackwell Workstation datasheet: 96 GB, 1,792 GB/s, 125 TFLOPS FP32, 4000 AI TOPS sparse FP4, 600 W
    ("nvidia-rtx-pro-6000-blackwell", "memory_gb", 96, "nv-rtx-pro-6000-datasheet"),
    ("nvidia-rtx-pro-6000-blackwell", "memory_bandwidth_gbs", 1792, "nv-rtx-pro-6000-datasheet"),
    ("nvidia-rtx-pro-6000-blackwell", "fp32_tflops", 125, "nv-rtx-pro-6000-datasheet"),
    ("nvidia-rtx-pro-6000-blackwell", "fp4_tflops", 4000 / 2, "nv-rtx-pro-6000-datasheet"),
    ("nvidia-rtx-pro-6000-blackwell", "tdp_w", 600, "nv-rtx-pro-6000-datasheet"),
    ("nvidia-rtx-pro-6000-blackwell-server", "memory_gb", 96, "press-rtx-pro-6000"),
    # GeForce: AI TOPS are sparse FP4; dense FP8 / BF16 with FP32 accumulate = TOPS / 8 / 16 (RTX 5090: 3,352 / 16
    # = 209.5, the whitepaper's BF16 figure)
    ("nvidia-rtx-5080", "memory_bandwidth_gbs", 960, "gpumap-rtx50-table"),
    ("nvidia-rtx-5080", "fp4_tflops", 1801 / 2, "press-rtx50-lineup-2025"),
    ("nvidia-rtx-5080", "bf16_tflops", round(1801 / 16, 1), "press-rtx50-lineup-2025"),
    ("nvidia-rtx-5080", "tdp_w", 360, "gpumap-rtx50-table"),
    ("nvidia-rtx-5070-ti", "memory_bandwidth_gbs", 896, "gpumap-rtx50-table"),
    ("nvidia-rtx-5070-ti", "fp8_tflops", round(1406 / 8, 1), "press-rtx50-lineup-2025"),
    ("nvidia-rtx-5060-ti-16gb", "memory_gb", 16, "press-rtx5060ti-2025"),
    ("nvidia-rtx-5060-ti-16gb", "memory_bandwidth_gbs", 28 * 128 / 8, "press-rtx5060ti-2025"),  # 28 Gbps x 128-bit
    ("nvidia-rtx-5060-ti-16gb", "fp4_tflops", 759 / 2, "press-rtx5060ti-2025"),
    # DGX Spark: 128 GB unified at 273 GB/s, 1 PFLOP FP4 with sparsity
    ("nvidia-dgx-spark", "memory_gb", 128, "nv-dgx-spark"),
    ("nvidia-dgx-spark", "memory_bandwidth_gbs", 273, "nv-dgx-spark"),
    ("nvidia-dgx-spark", "fp4_tflops", 1000 / 2, "nv-dgx-spark"),
    # AMD Instinct MI350 series: 288 GB HBM3E, 8 TB/s, 1,400 W / 1,000 W
    ("amd-mi355x", "memory_gb", 288, "press-mi350-2025"),
    ("amd-mi355x", "memory_bandwidth_gbs", 8000, "press-mi350-2025"),
    ("amd-mi355x", "tdp_w", 1400, "press-mi350-2025"),
    ("amd-mi350x", "tdp_w", 1000, "press-mi350-2025"),
    ("amd-radeon-pro-w7900", "memory_bandwidth_gbs", 864, "reseller-w7900"),
    # Apple Mac Studio (March 2025)
    ("apple-m3-ultra-96gb", "memory_bandwidth_gbs", 819, "press-mac-studio-2025"),
    ("apple-m3-ultra-512gb", "memory_gb", 512, "press-mac-studio-2025"),
    ("apple-m4-max-36gb", "memory_bandwidth_gbs", 410, "press-mac-studio-2025"),
    # TPU7x: 192 GiB = 206.2 GB, 2,307 BF16 / 4,614 FP8 TFLOPs per chip
    ("google-tpu7x", "memory_gb", round(192 * 2**30 / 1e9, 1), "gcp-tpu7x"),
    ("google-tpu7x", "bf16_tflops", 2307, "gcp-tpu7x"),
    ("google-tpu7x", "fp8_tflops", 4614, "gcp-tpu7x"),
]


@pytest.mark.parametrize(("acc", "field", "value", "source"), FIGURES)
def test_key_figures(shipped: Catalog, acc: str, field: str, value: float, source: str) -> None:
    measure = getattr(shipped.accelerators[acc], field)
    assert measure is not None, (acc, field)
    assert measure.value == pytest.approx(value, abs=0.051), (acc, field)
    assert source in measure.sources and source in shipped.sources


@pytest.mark.parametrize(("acc", "kind", "domain", "per_node"), [
    ("nvidia-b300", "nvlink", 8, 8),
    ("nvidia-gb300-per-gpu", "nvlink", 72, 4),  # 72-GPU NVLink domain, 4 GPUs per compute tray
    ("nvidia-rtx-pro-6000-blackwell", "pcie", None, 2),  # 600 W flow-through cards: two per workstation
    ("nvidia-rtx-pro-6000-blackwell-server", "pcie", None, 8),
    ("nvidia-rtx-5080", "pcie", None, 4),
    ("nvidia-dgx-spark", "roce", 2, 1),  # one box; two pair over ConnectX-7 RoCE with a cable (issue 44)
    ("amd-mi355x", "infinity-fabric", 8, 8),
    ("google-tpu7x", "ici", 9216, 4),  # 9,216 chips per pod, 4 chips per VM
])
def test_interconnect_and_node_size(shipped: Catalog, acc: str, kind: str, domain: int | None, per_node: int) -> None:
    a = shipped.accelerators[acc]
    assert (a.interconnect_kind, a.interconnect_domain, a.max_per_node) == (kind, domain, per_node)


@pytest.mark.parametrize(("acc", "cc"), [
    ("nvidia-b300", 10.3), ("nvidia-gb300-per-gpu", 10.3), ("nvidia-rtx-pro-6000-blackwell", 12.0),
    ("nvidia-rtx-5080", 12.0), ("nvidia-rtx-5060-ti-16gb", 12.0), ("nvidia-dgx-spark", 12.1),
])
def test_blackwell_parts_support_fp4_with_their_compute_capability(shipped: Catalog, acc: str, cc: float) -> None:
    a = shipped.accelerators[acc]
    assert a.cc == cc and a.fp4_support and a.fp8_support and a.bf16_support


def test_new_prices(shipped: Catalog) -> None:
    a = shipped.accelerators
    expected = {  # id: (kind, value, as_of)
        "nvidia-rtx-5080": ("msrp", 999, "2025-01"), "nvidia-rtx-5070-ti": ("msrp", 749, "2025-01"),
        "nvidia-rtx-5060-ti-16gb": ("msrp", 429, "2025-04"), "nvidia-rtx-pro-6000-blackwell": ("msrp", 8565, "2025-03"),
        "apple-m3-ultra-96gb": ("msrp", 3999, "2025-03"), "apple-m4-max-36gb": ("msrp", 1999, "2025-03"),
        "nvidia-dgx-spark": ("msrp", 3999, None),
    }
    for acc_id, (kind, value, as_of) in expected.items():
        p = a[acc_id].purchase_price_usd
        assert p is not None and (p.kind, p.value, p.as_of) == (kind, value, as_of), acc_id
    # parts sold only in whole systems carry the system's price (systems.toml), not a per-GPU share of it
    whole = {s.accelerator: s.price for s in shipped.systems.values() if s.price and s.price.includes_accelerators}
    assert a["nvidia-b300"].purchase_price_usd is None
    assert whole["nvidia-b300"] is not None and whole["nvidia-b300"].value == (300_000 + 350_000) / 2  # DGX B300
    assert whole["nvidia-gb300-per-gpu"] is not None and whole["nvidia-gb300-per-gpu"].value == 3_500_000  # $3-4M
    assert not a["google-tpu7x"].purchasable and a["google-tpu7x"].purchase_price_usd is None
