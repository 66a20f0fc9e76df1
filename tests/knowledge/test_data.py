"""The shipped data: counts, reference values (shared/reference, whose README corrects the seed documents), prices
and the effective bits of the quantized formats, each checked against its published figure or hand arithmetic."""

from __future__ import annotations

from datetime import date

import pytest

from gpuadvisor.knowledge.catalog import Catalog


def test_counts(shipped: Catalog) -> None:
    # the 45 devices of the reference table + 15 added for issue 10 (B300, GB300, RTX PRO 6000, RTX 50, DGX Spark,
    # MI355X/MI350X, W7900, Apple M3 Ultra/M4 Max configurations, TPU7x) + GH200 (issue 17)
    assert len(shipped.accelerators) == 63  # 61 parts and two CPUs (your own computer)
    assert len(shipped.instances) >= 40
    assert {"doc-000", "doc-001", "doc-002", "doc-003", "doc-004", "doc-reference"} <= set(shipped.documents)
    assert {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "gptq", "awq", "nf4", "bnb-int8",
            "q4_0", "q4_k_m", "q5_k_m", "q6_k", "q8_0", "mxfp4", "nvfp4"} <= set(shipped.precisions)


@pytest.mark.parametrize(("acc", "field", "value"), [
    # README correction 1: 989.4 is H100 SXM5's DENSE BF16 (1,978.9 with sparsity), not 312.
    ("nvidia-h100-sxm5", "bf16_tflops", 989.4),
    ("nvidia-h100-sxm5", "fp8_tflops", 1979),  # correction 16: exactly 2x BF16, not 3x
    ("nvidia-l40s", "bf16_tflops", 362.05),  # correction 4: not 91.6 (FP32)
    ("nvidia-rtx-4090", "bf16_tflops", 165.2),  # correction 2: FP32-accumulate dense, not 82.6 or 330
    ("nvidia-rtx-3090", "bf16_tflops", 71),  # correction 3: not 35.6 (FP32)
    ("amd-mi300x", "fp16_tflops", 1307.4),  # correction 7
    ("google-tpu-v4", "bf16_tflops", 275),  # correction 9a: not 400
    ("google-tpu-v5p", "bf16_tflops", 459),  # correction 9b
    ("nvidia-b200", "bf16_tflops", 2250),  # correction 8: 4.5 PF is with sparsity
    ("nvidia-b200", "fp4_tflops", 9000),
    ("nvidia-h100-nvl", "bf16_tflops", 835.5),  # README: per-GPU NVL, not 1,979
])
def test_dense_tflops(shipped: Catalog, acc: str, field: str, value: float) -> None:
    measure = getattr(shipped.accelerators[acc], field)
    assert measure.value == value
    assert measure.sources


@pytest.mark.parametrize(("acc", "bandwidth"), [
    ("nvidia-a100-sxm-40gb", 1555),  # correction 5: not 1.6 TB/s
    ("nvidia-a100-sxm-80gb", 2039),
    ("nvidia-a100-pcie-80gb", 1935),
    ("nvidia-rtx-6000-ada", 960),  # not the A40's 696
    ("nvidia-h100-sxm5", 3350),
])
def test_bandwidth(shipped: Catalog, acc: str, bandwidth: float) -> None:
    assert shipped.accelerators[acc].memory_bandwidth_gbs.value == bandwidth


def test_sparse_figures_are_halved(shipped: Catalog) -> None:
    """Every value stored with `halved_from_sparse` is half the printed sparse figure (vendor rounding < 0.1%)."""
    checked = 0
    for acc in shipped.accelerators.values():
        for field in ("tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops", "int8_tops"):
            m = getattr(acc, field)
            if m is not None and m.halved_from_sparse is not None:
                assert m.value == pytest.approx(m.halved_from_sparse / 2, rel=1e-3), (acc.id, field)
                checked += 1
    assert checked > 40


def test_support_flags_follow_generations(shipped: Catalog) -> None:
    a = shipped.accelerators
    # H8: BF16/TF32 from Ampere, FP8 from Hopper/Ada, FP4 from Blackwell, INT8 tensor cores from Turing.
    assert not a["nvidia-t4"].bf16_support and not a["nvidia-t4"].tf32_support and a["nvidia-t4"].int8_support
    assert a["nvidia-a100-sxm-40gb"].bf16_support and a["nvidia-a100-sxm-40gb"].tf32_support
    assert not a["nvidia-a100-sxm-40gb"].fp8_support
    assert a["nvidia-rtx-4090"].fp8_support and not a["nvidia-rtx-4090"].fp4_support
    assert a["nvidia-b200"].fp4_support and a["nvidia-rtx-5090"].fp4_support
    assert not a["nvidia-p100"].int8_support and not a["nvidia-v100-sxm2"].int8_support
    assert a["nvidia-t4"].cc == 7.5 and a["nvidia-h100-sxm5"].cc == 9.0


def test_interconnect_fields_are_consistent(shipped: Catalog) -> None:
    for acc in shipped.accelerators.values():
        if acc.interconnect_kind in ("pcie", "unified", "none"):
            assert acc.interconnect_domain is None, acc.id
        else:
            assert acc.interconnect_domain is not None and acc.interconnect_domain >= 2, acc.id
    a = shipped.accelerators
    assert (a["nvidia-h100-sxm5"].interconnect_domain, a["nvidia-h100-sxm5"].max_per_node) == (8, 8)
    assert a["nvidia-h100-pcie"].interconnect_domain == 2  # NVLink bridge pairs only
    assert a["nvidia-gb200-per-gpu"].interconnect_domain == 72
    assert a["nvidia-rtx-4090"].interconnect_kind == "pcie" and a["nvidia-rtx-4090"].max_per_node == 4
    assert a["amd-mi300x"].interconnect_kind == "infinity-fabric"
    assert a["google-tpu-v5e"].interconnect_kind == "ici" and a["google-tpu-v5e"].software_stack == "xla"
    assert a["intel-gaudi3"].interconnect_kind == "roce"


def test_cloud_only_parts_cannot_be_bought(shipped: Catalog) -> None:
    cloud_only = {a.id for a in shipped.accelerators.values() if a.market == "cloud-only"}
    assert {"google-tpu-v4", "google-tpu-v5e", "google-tpu-v5p", "google-tpu-v6e", "aws-trainium",
            "aws-trainium2", "aws-inferentia2", "nvidia-a10g", "google-tpu7x"} == cloud_only
    assert all(not shipped.accelerators[i].purchasable for i in cloud_only)


def test_every_part_that_can_be_bought_draws_power(shipped: Catalog) -> None:
    # a purchase is costed with its power and server-room space: a part without a TDP (and no whole-system rating,
    # as a Mac Studio's) was priced as if its cards drew nothing, and ranked first for it (RTX PRO 6000 Server).
    # Left out: Apple laptops and the M4 Max Mac Studio, appliances with no published wall rating (a few hundred
    # watts at most), and the CPU-only machines
    bought = [a for a in shipped.accelerators.values() if a.purchasable and a.market != "cloud-only"]
    rated = {s.accelerator for s in shipped.systems.values() if s.system_power_w is not None}
    silent = [a.id for a in bought if a.tdp_w is None and a.id not in rated and a.vendor not in ("apple", "other")]
    assert silent == []


def test_purchase_prices(shipped: Catalog) -> None:
    a = shipped.accelerators
    msrp = a["nvidia-rtx-4090"].purchase_price_usd
    assert msrp is not None
    assert (msrp.value, msrp.kind, msrp.as_of, msrp.approximate) == (1599, "msrp", "2022-10", False)
    street = a["nvidia-h100-sxm5"].purchase_price_usd
    assert street is not None and street.value == 30000 and street.approximate and street.kind == "street"
    # doc-002 gives '$30,000 per card' and a $25k-35k range, and no date: undated, never stamped.
    assert "doc-002" in street.sources and street.as_of is None and (street.low, street.high) == (25000, 35000)
    assert a["nvidia-a100-sxm-80gb"].purchase_price_usd is not None
    assert a["nvidia-a100-sxm-80gb"].purchase_price_usd.value == 12000
    assert a["nvidia-l40s"].purchase_price_usd is not None and a["nvidia-l40s"].purchase_price_usd.value == 9000
    # No list price exists for these: documented estimates with their range, never a bare figure.
    b200 = a["nvidia-b200"].purchase_price_usd
    assert b200 is not None and (b200.kind, b200.low, b200.high, b200.as_of) == ("estimate", 35000, 40000, "2026-04")
    gaudi3 = a["intel-gaudi3"].purchase_price_usd  # Intel's $125,000 list price for an 8-card kit, no host
    assert gaudi3 is not None and gaudi3.kind == "msrp" and gaudi3.value == 125000 / 8 and gaudi3.derived
    # The five parts issue 28 found unpriced: estimates with their range and the figure they rest on.
    expected = {"nvidia-b100": (30000, 30000, 40000), "amd-mi325x": (20000, 15000, 20000),
                "amd-mi250x": (10000, 8000, 10000), "amd-mi350x": (18076, 12500, 18076),
                "nvidia-rtx-pro-6000-blackwell-server": (8565, 8000, 15000)}
    for acc, (value, low, high) in expected.items():
        price = a[acc].purchase_price_usd
        assert price is not None and price.kind == "estimate", acc
        assert (price.value, price.low, price.high) == (value, low, high), acc
    # MI350X: the MI355X server's $189,607 (SemiAnalysis) less the $45,000 host estimate, per GPU
    assert a["amd-mi350x"].purchase_price_usd.value == pytest.approx((189_607 - 45_000) / 8, abs=1)  # type: ignore[union-attr]


def test_p5_price_history(shipped: Catalog) -> None:
    p5 = shipped.instances["aws-p5.48xlarge"]
    current = p5.current_price("on-demand")
    # README correction 18: $98.32 (2025-03-14) -> $55.04 (AWS Price List 2026-07-28).
    assert current is not None and current.usd_per_hour == 55.04 and current.as_of == "2026-07-28"
    assert current.as_of_date == date(2026, 7, 28)
    assert 98.32 in [p.usd_per_hour for p in p5.price]  # the historical price is kept
    assert p5.current_price("spot") is None  # AWS publishes no static spot price
    assert (p5.accelerator, p5.accelerator_count, p5.provider_kind) == ("nvidia-h100-sxm5", 8, "hyperscaler")


@pytest.mark.parametrize(("inst", "kind", "usd"), [
    ("aws-p4d.24xlarge", "on-demand", 21.957642),  # correction 17
    ("aws-g5.48xlarge", "on-demand", 16.288),  # correction 20
    ("gcp-a2-highgpu-1g", "on-demand", 3.673385),  # correction 21
    ("gcp-a2-highgpu-1g", "spot", 1.293355),
    ("lambda-8x-h100-sxm", "on-demand", 31.92),  # correction 23: 8 x $3.99, not $26.80
    ("runpod-h100-pcie", "on-demand", 1.99),  # Community Cloud (both tiers dated 2026-09-25; first listed)
    ("gcp-a2-megagpu-16g", "on-demand", 55.739504),  # seed document 000 says $55.74
])
def test_instance_prices(shipped: Catalog, inst: str, kind: str, usd: float) -> None:
    price = shipped.instances[inst].current_price(kind)
    assert price is not None and price.usd_per_hour == usd and price.sources


def test_derived_totals_are_per_gpu_times_count(shipped: Catalog) -> None:
    for inst in shipped.instances.values():
        for p in inst.price:
            if p.derived:
                assert p.usd_per_accelerator_hour is not None
                assert p.usd_per_hour == pytest.approx(p.usd_per_accelerator_hour * inst.accelerator_count), inst.id


def test_instance_providers(shipped: Catalog) -> None:
    kinds = {i.provider: i.provider_kind for i in shipped.instances.values()}
    assert kinds["aws"] == "hyperscaler" and kinds["vast"] == "marketplace"  # the full set: test_rentals.py
    assert shipped.instances["azure-standard_nc40ads_h100_v5"].accelerator == "nvidia-h100-nvl"  # not H100 80GB


def test_price_dates(shipped: Catalog) -> None:
    dates = shipped.price_dates()
    assert dates is not None
    assert dates.newest >= date(2026, 10, 7)  # the Vast.ai marketplace median
    assert dates.oldest <= date(2025, 3, 6)  # GCP catalog snapshot still the newest for a2/a3 shapes


@pytest.mark.parametrize(("precision", "bits"), [
    ("q4_0", (16 + 32 * 4) / 32),  # FP16 scale + 32 x 4-bit per block of 32 = 4.5
    ("q8_0", (16 + 32 * 8) / 32),  # = 8.5
    ("q6_k", 210 * 8 / 256),  # 210 bytes per super-block of 256 = 6.5625
    ("gptq", 4 + (16 + 4) / 128),  # FP16 scale + packed 4-bit zero per group of 128 = 4.15625
    ("awq", 4 + (16 + 4) / 128),
    ("mxfp4", (32 * 4 + 8) / 32),  # E8M0 scale per 32 = 4.25
    ("nvfp4", (16 * 4 + 8) / 16),  # E4M3 scale per 16 = 4.5
    ("mxfp6", (32 * 6 + 8) / 32),  # E3M2/E2M3 elements, E8M0 scale per 32 = 6.25
    ("mxfp8", (32 * 8 + 8) / 32),  # = 8.25
    ("bf16", 16), ("fp8", 8), ("int4", 4),
])
def test_effective_bits(shipped: Catalog, precision: str, bits: float) -> None:
    assert shipped.precisions[precision].bits_per_weight == bits


def test_nf4_double_quantization(shipped: Catalog) -> None:
    # QLoRA: 4 + 8/64 + 32/(64*256) = 4.12695... (the paper rounds the overhead to 0.127)
    assert shipped.precisions["nf4"].bits_per_weight == pytest.approx(4 + 8 / 64 + 32 / (64 * 256), abs=5e-4)
    assert shipped.precisions["nf4"].bytes_per_weight == pytest.approx(4.127 / 8)


def test_k_quant_mixtures_match_llama_cpp(shipped: Catalog) -> None:
    # llama.cpp tools/quantize/README: Q4_K_M 4.84 (Llama-2-7B) .. 4.8944 (Llama-3.1-8B); Q5_K_M 5.68 .. 5.7036.
    assert 4.84 <= shipped.precisions["q4_k_m"].bits_per_weight <= 4.8944
    assert 5.68 <= shipped.precisions["q5_k_m"].bits_per_weight <= 5.7036


def test_precision_requirements(shipped: Catalog) -> None:
    p = shipped.precisions
    assert p["bf16"].requires == ["bf16_support"] and p["fp8"].requires == ["fp8_support"]
    assert p["fp4"].requires == ["fp4_support"] and p["int8"].requires == ["int8_support"]
    assert p["tf32"].requires == ["tf32_support"]
    assert p["bnb-int8"].min_compute_capability == 7.5  # bitsandbytes: LLM.int8() needs CC 7.5+
    assert p["nf4"].min_compute_capability == 6.0  # bitsandbytes guide: NF4 needs 6.0+ (document 002 says 7.5)
    for weight_only in ("gptq", "awq", "nf4", "q4_0", "q4_k_m", "int4"):
        assert p[weight_only].compute == "fp16" and p[weight_only].uses[0] == "weights"
    # every requirement names an accelerator flag that exists
    from gpuadvisor.knowledge.schema import Accelerator

    assert {r for prec in p.values() for r in prec.requires} <= set(Accelerator.model_fields)


def test_block_scaled_formats_need_the_hardware(shipped: Catalog) -> None:
    p = shipped.precisions
    # NVFP4 and MXFP6 run on FP4-capable tensor cores (Blackwell, MI350); MXFP4 is also served dequantized (Hopper,
    # Ada, Ampere kernels for gpt-oss), so it requires nothing.
    assert p["nvfp4"].requires == ["fp4_support"] and p["mxfp6"].requires == ["fp4_support"]
    assert p["mxfp8"].requires == ["fp8_support"] and p["mxfp4"].requires == []
    assert p["mxfp4"].compute == "fp16" and p["nvfp4"].compute == "fp4"


def test_published_checkpoint_formats_are_weight_formats(shipped: Catalog) -> None:
    """A model served as published (models.toml `published_weights`, `expert_weights_format`) names a precision
    that stores weights; DeepSeek-V3 and Kimi K2 are released in FP8 (their model cards), gpt-oss's experts in MXFP4."""
    named = {m.id: m.published_weights or m.architecture.expert_weights_format for m in shipped.models.values()}
    for model, fmt in named.items():
        if fmt is not None:
            assert "weights" in shipped.precisions[fmt].uses, model
    assert named["deepseek-v3"] == named["kimi-k2"] == "fp8"
    assert named["gpt-oss-120b"] == "mxfp4" and named["llama-3.1-70b"] is None
