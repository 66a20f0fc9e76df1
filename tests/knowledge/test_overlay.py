"""User overlays: a negotiated price replaces the shipped one, an in-house GPU is added, and both are marked."""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.lookup import find_accelerator

PRICE = """
[[instance]]
id = "aws-p5.48xlarge"
price = [
  { type = "on-demand", usd_per_hour = 41.5, as_of = "2026-10-01", sources = ["our-aws-contract"] },
]

[[source]]
id = "our-aws-contract"
title = "Our negotiated AWS enterprise discount"
kind = "contract"
"""

IN_HOUSE = """
[[accelerator]]
id = "acme-x1"
name = "ACME X1 in-house accelerator"
aliases = ["X1"]
vendor = "other"
architecture = "ACME 1"
market = "datacenter"
form_factor = "PCIe card"
memory_type = "HBM3"
memory_gb = { value = 64, sources = ["acme-spec"] }
memory_bandwidth_gbs = { value = 2000, sources = ["acme-spec"] }
bf16_tflops = { value = 400, sources = ["acme-spec"] }
interconnect = "none"
interconnect_kind = "pcie"
ecc = true
bf16_support = true
fp8_support = false
fp4_support = false
flash_attention_2 = "n/a"
software_stack = "other"
sources = ["acme-spec"]

[[instance]]
id = "onprem-acme-x1-4"
provider = "onprem"
provider_name = "Our data center"
provider_kind = "user"
instance = "4x X1 box"
accelerator = "acme-x1"
accelerator_count = 4

[[instance.price]]
type = "on-demand-equivalent"
usd_per_hour = 6.0
as_of = "2026-11-01"
sources = ["acme-spec"]

[[source]]
id = "acme-spec"
title = "ACME X1 internal spec sheet"
kind = "vendor-datasheet"
"""


def test_overlay_overrides_price(overlay_dir: Path) -> None:
    (overlay_dir / "prices.toml").write_text(PRICE)
    catalog = load_catalog()
    p5 = catalog.instances["aws-p5.48xlarge"]
    price = p5.current_price("on-demand")
    assert price is not None and price.usd_per_hour == 41.5 and price.sources == ["our-aws-contract"]
    assert [p.usd_per_hour for p in p5.price] == [41.5]  # `price` replaced as a whole (shallow merge)
    assert p5.accelerator == "nvidia-h100-sxm5" and p5.accelerator_count == 8  # other keys kept
    assert catalog.overlay_status("instance", "aws-p5.48xlarge") == "overridden"
    assert catalog.overlay_status("instance", "aws-p4d.24xlarge") is None
    assert catalog.overlay_status("source", "our-aws-contract") == "added"
    assert [f.path.name for f in catalog.files if f.overlay] == ["prices.toml"]


def test_overlay_adds_in_house_gpu(overlay_dir: Path) -> None:
    (overlay_dir / "inhouse.toml").write_text(IN_HOUSE)
    catalog = load_catalog()
    acc = catalog.accelerators["acme-x1"]
    assert acc.dense_tflops("bf16") == 400 and acc.max_per_node == 8  # schema default
    assert catalog.overlay_status("accelerator", "acme-x1") == "added"
    assert find_accelerator(catalog, "x1") is acc
    assert catalog.instances["onprem-acme-x1-4"].accelerator_count == 4
    assert len(catalog.accelerators) == 64


def test_shipped_catalog_untouched_by_overlay(overlay_dir: Path) -> None:
    (overlay_dir / "prices.toml").write_text(PRICE)
    with_overlay = load_catalog()
    without = load_catalog(user_dir=None)
    price = without.instances["aws-p5.48xlarge"].current_price("on-demand")
    assert price is not None and price.usd_per_hour == 55.04
    assert with_overlay.version != without.version  # the overlay's hash is part of the version
    assert not without.overridden and not without.has_overlay


def test_extra_files_and_explicit_dir(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "a.toml").write_text(PRICE)
    assert load_catalog(user_dir=other).instances["aws-p5.48xlarge"].price[0].usd_per_hour == 41.5
    extra = tmp_path / "inhouse.toml"
    extra.write_text(IN_HOUSE)
    catalog = load_catalog(user_dir=None, extra_files=[extra])
    assert "acme-x1" in catalog.accelerators and "aws-p5.48xlarge" not in catalog.overridden.get("instance", ())


def test_counts_and_hashes_of_files() -> None:
    catalog = load_catalog(user_dir=None)
    by_name = {f.path.name: f for f in catalog.files}
    assert by_name["accelerators.toml"].counts["accelerator"] == 63
    assert len(by_name["accelerators.toml"].sha256) == 12 and not by_name["accelerators.toml"].overlay
    assert catalog.version.count("+kb.") == 1


def test_bare_toml_date_is_accepted(overlay_dir: Path) -> None:
    (overlay_dir / "p.toml").write_text(PRICE.replace('as_of = "2026-10-01"', "as_of = 2026-10-01"))
    price = load_catalog().instances["aws-p5.48xlarge"].current_price("on-demand")
    assert price is not None and price.as_of == "2026-10-01"
