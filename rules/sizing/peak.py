"""Peak dense FLOPS of an accelerator at a compute precision: the one place that chooses it.

A part's spec lists dense peaks for the formats it has (knowledge.schema.Accelerator.dense_tflops). Which peak a
computation runs at is a policy: FP8/FP4/INT8 math on a part without those units runs in FP16/BF16, BF16 and FP16
stand in for each other, TF32 falls back to FP32. The speed model, the roofline diagram, the workload's intensity
verdict and the accelerator facts rules test all take their peak from here (issue 30: it was chosen in four places).
"""

from __future__ import annotations

from gpuadvisor.knowledge.schema import Accelerator

PEAK_FALLBACKS: dict[str, tuple[str, ...]] = {
    "fp4": ("fp4", "fp8", "bf16", "fp16"), "fp8": ("fp8", "bf16", "fp16"), "int8": ("int8", "fp16", "bf16"),
    "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16"), "tf32": ("tf32", "fp32"), "fp32": ("fp32",),
}


def peak_tflops(acc: Accelerator, compute: str) -> tuple[float | None, str]:
    """Dense peak at `compute` precision, falling back to the next format the part has (fp8/fp4/int8 → fp16/bf16;
    bf16 ↔ fp16; tf32 → fp32). Returns (TFLOPS or None, the precision actually used)."""
    for name in PEAK_FALLBACKS.get(compute, (compute, "fp16", "bf16")):
        value = acc.dense_tflops(name)
        if value:
            return value, name
    return None, compute


def half_precision_tflops(acc: Accelerator) -> float:
    """The 16-bit dense peak (BF16, else FP16), 0 when the part publishes neither: the yardstick of the flagship
    rule and the ridge points the intensity verdict compares against."""
    return peak_tflops(acc, "bf16")[0] or 0.0
