"""The detail screen's roofline is drawn at the format the speed model ran the math in (rules/inputs/formats.py
`Formats.compute`): a training run's, not its weights' serving format."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.tui.widgets.roofline import ridge_for


@pytest.mark.parametrize(("data", "name", "tflops"), [
    # H100 SXM5 datasheet: TF32 494.5 dense (989 with sparsity), FP32 67: FP32 weights train in TF32
    ({"workload": "training", "model": {"name": "gpt2"}, "precision": {"weights": "fp32"}}, "tf32", 494.5),
    # QLoRA's NF4 base: the adapters train in BF16 (989.4 dense), not NF4's serving FP16
    ({"workload": "finetune", "finetune": {"method": "qlora"}}, "bf16", 989.4),
    # serving AWQ: dequantized into FP16 matmuls
    ({"workload": "inference", "precision": {"weights": "awq"}}, "fp16", 989.4),
])
def test_the_ridge_is_at_the_compute_format_used(data: dict[str, object], name: str, tflops: float) -> None:
    catalog = load_catalog(user_dir=None)
    result = Advisor(catalog, include_user_packs=False).consult(parse_answers(data))
    # as the detail screen reads it
    formats = Formats.of_answers(result.answers_effective, result.answers, catalog.precisions)
    assert formats is not None
    ridge = ridge_for(catalog, "nvidia-h100-sxm5", formats.compute)
    assert ridge is not None and ridge.precision == name and ridge.tflops == pytest.approx(tflops)
    # 494.5 TFLOPS ÷ 3,350 GB/s = 147.6 FLOP/byte; 989.4 ÷ 3,350 = 295.3
    assert ridge.flop_per_byte == pytest.approx(tflops * 1e3 / 3350.0)
    assert ridge_for(catalog, "nvidia-h100-sxm5", None) is None
