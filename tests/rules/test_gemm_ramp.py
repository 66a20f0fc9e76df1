"""The weight GEMMs' fixed ramp in a weight-bound decode step (issue 27: NIM's time per output token at 1-100 clients).

Each weight-reading GEMM kernel pays a fixed time beyond its bytes at the streaming rate (pipeline fill, last wave,
epilogue): vLLM's FP8 GEMMs on H100 take t = 4.40 µs + bytes ÷ (93 % of 3.35 TB/s) at batch 1-64 (vLLM PR #49363;
tests/benchmarks/fit_engines.GEMM_RAMP_US). The step model adds it to the weights' read, so it is paid while the step
is bound by that read and hidden once compute binds. It is set only on the profile fitted on compute-bound rows
(tensorrt-llm-engine on Hopper): a profile fitted at batch 1 already holds it in its per-layer overhead.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.planning.serving import efficiency_of
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import DecodeCurve, Device, EngineEfficiency, weight_gemm_kernels

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.benchmarks.fit_engines import GEMM_RAMP_SOURCE, GEMM_RAMP_US  # noqa: E402

CATALOG = load_catalog(user_dir=None)


@pytest.mark.parametrize(("model", "kernels"), [
    # 32 layers × (fused QKV, output, fused gate-up, down) + the LM head
    ("llama-3.1-8b", 32 * 4 + 1),
    ("llama-3.3-70b", 80 * 4 + 1),
    # 32 layers × (QKV, output; router, grouped gate-up, grouped down) + LM head
    ("mixtral-8x7b", 32 * 2 + 32 * 3 + 1),
    # 61 layers × 5 MLA projections (q down, q up, latent down, absorbed up, output), 3 dense FFNs × 2,
    # 58 MoE layers × (router, 2 grouped, 2 shared) + LM head
    ("deepseek-v3", 61 * 5 + 3 * 2 + 58 * 5 + 1),
])
def test_weight_gemm_kernels_as_engines_fuse_them(model: str, kernels: int) -> None:
    arch = CATALOG.models[model].architecture
    params = count_parameters(arch)
    assert weight_gemm_kernels(arch, params.dense_layers, params.moe_layers) == kernels


def _curve(ramp_us: float, peak_tflops: float) -> DecodeCurve:
    arch = CATALOG.models["llama-3.1-8b"].architecture
    eff = EngineEfficiency("test", 0.9, 0.9, 30.0, compute_efficiency=0.5, gemm_ramp_us=ramp_us)
    device = Device(bandwidth_gbs=3350.0, peak_tflops=peak_tflops, efficiency=eff)
    return DecodeCurve(arch, count_parameters(arch), device, bytes_per_weight=1.0, kv_bytes_per_value=1.0,
                       context=300)


def test_ramp_is_paid_while_the_weight_read_binds() -> None:
    """Batch 1 on an H100-like part: the step is its weight read, so 129 kernels × 4.4 µs = 567.6 µs more."""
    with_ramp, without = _curve(4.4, 1979.0), _curve(0.0, 1979.0)
    assert with_ramp.bound(1) == "bandwidth"
    assert with_ramp.seconds(1) - without.seconds(1) == pytest.approx(129 * 4.4e-6, rel=1e-9)
    # the weights' share of the step carries it (a chunked-prefill pass re-reads the weights and pays it again)
    assert with_ramp.parts(1).weights - without.parts(1).weights == pytest.approx(129 * 4.4e-6, rel=1e-9)


def test_ramp_is_hidden_once_compute_binds() -> None:
    """A slow-compute part at batch 2,048: the matmuls take longer than the weight read plus its ramps, so the step
    is unchanged."""
    with_ramp, without = _curve(4.4, 50.0), _curve(0.0, 50.0)
    assert with_ramp.bound(2048) == "compute"
    assert with_ramp.seconds(2048) == without.seconds(2048)


def test_profile_band_ends() -> None:
    """The pessimistic end takes the band's high ramp, the optimistic its low one; a profile without one, none."""
    profile = CATALOG.engine_profiles["tensorrt-llm-engine@nvidia-hopper-hbm"]
    assert efficiency_of(profile).gemm_ramp_us == pytest.approx(4.40)
    assert efficiency_of(profile, "slow").gemm_ramp_us == pytest.approx(5.39)
    assert efficiency_of(profile, "fast").gemm_ramp_us == pytest.approx(1.64)
    assert efficiency_of(CATALOG.engine_profiles["llama.cpp@nvidia-hopper-hbm"]).gemm_ramp_us == 0.0


def test_the_fitter_writes_back_the_ramps_engines_toml_has() -> None:
    """fit_engines.py regenerates the profiles: it fits and writes the same ramps, with their source, so a refit
    cannot drop them; and only the profiles it names carry one."""
    carried = {p.id: p for p in CATALOG.engine_profiles.values() if p.gemm_ramp_us is not None}
    assert set(carried) == {f"{engine}@{family}" for engine, family in GEMM_RAMP_US}
    for (engine, family), (value, low, high) in GEMM_RAMP_US.items():
        profile = carried[f"{engine}@{family}"]
        assert profile.gemm_ramp_us is not None
        assert (profile.gemm_ramp_us.value, profile.gemm_ramp_us.low, profile.gemm_ramp_us.high) == (value, low, high)
        assert GEMM_RAMP_SOURCE in profile.sources


# vLLM PR #49363 on H100 (benchmarks/kernels/bench_fp8_gemm.py, gemma-4-31B-it shapes): TFLOP/s at batch 1, 16, 64
PR49363 = {(12288, 5376): {1: (2.870333, 5.162899), 16: (46.541434, 83.053145), 64: (182.588263, 318.410871)},
           (43008, 5376): {1: (3.072025, 6.077129), 16: (48.328807, 93.962340), 64: (187.994464, 356.667172)}}
"""(BF16 torch, FP8 per-tensor without quantisation) per (N, K) and batch."""


def _ramp_fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least squares t = t0 + bytes × s over (MB, µs) points: (t0 in µs, streaming rate in TB/s)."""
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - slope * mx, 1.0 / slope


def _points(fp8: bool, batches: tuple[int, ...] = (1, 16, 64)) -> list[tuple[float, float]]:
    """(MB moved, µs) of each GEMM: weights N×K, activations M×K at the weights' width, output M×N in 16 bits."""
    width = 1.0 if fp8 else 2.0
    out = []
    for (n, k), rows in PR49363.items():
        for m in batches:
            tflops = rows[m][1 if fp8 else 0]
            out.append(((n * k + m * k) * width / 1e6 + m * n * 2 / 1e6, 2.0 * m * n * k / (tflops * 1e12) * 1e6))
    return out


def test_the_ramp_is_the_microbenchmarks_least_squares() -> None:
    """The profile's 4.40 µs and its band are what the cited table gives: FP8 over all six GEMMs t0 = 4.40 µs at
    3.12 TB/s (93 % of the H100's 3.35); each batch alone 3.87-5.39 µs; BF16 down to 1.64 µs (the optimistic end)."""
    t0, rate = _ramp_fit(_points(True))
    assert t0 == pytest.approx(4.40, abs=0.005)
    assert rate / 3.35 == pytest.approx(0.93, abs=0.005)
    fp8 = [_ramp_fit(_points(True, (m,)))[0] for m in (1, 16, 64)]
    bf16 = [_ramp_fit(_points(False, (m,)))[0] for m in (1, 16, 64)]
    assert max(fp8) == pytest.approx(GEMM_RAMP_US[("tensorrt-llm-engine", "nvidia-hopper-hbm")][2], abs=0.005)
    assert min(bf16) == pytest.approx(GEMM_RAMP_US[("tensorrt-llm-engine", "nvidia-hopper-hbm")][1], abs=0.005)
    assert min(fp8) == pytest.approx(3.87, abs=0.005)


def test_negative_ramp_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        dataclasses.replace(EngineEfficiency("test", 0.9, 0.9, 30.0), gemm_ramp_us=-1.0)
