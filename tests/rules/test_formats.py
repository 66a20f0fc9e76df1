"""The formats record (rules/inputs/formats.py): chosen once by resolution, carried to the Workload, the searches and
the result as the same object, with its bytes, its compute format and its fallback in one place."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.rules.inputs.resolve import resolve
from gpuadvisor.rules.inputs.workload import Workload


def _formats(catalog: Catalog, data: dict[str, object]) -> Formats:
    return resolve(parse_answers(data), catalog).formats


def test_a_default_format_falls_back_where_the_part_cannot_run_it(catalog: Catalog) -> None:
    production = _formats(catalog, {"workload": "inference", "stage": "production"})
    assert production.weights.id == "fp8" and not production.weights_given
    a = catalog.accelerators
    assert production.served_on(a["nvidia-h100-sxm5"]).id == "fp8"
    assert production.served_on(a["nvidia-a100-sxm-80gb"]).id == "bf16"  # no FP8 tensor cores: BF16
    assert production.served_on(a["nvidia-t4"]).id == "fp16"  # no BF16 either: FP16
    chosen = _formats(catalog, {"workload": "inference", "precision": {"weights": "fp8"}})
    assert chosen.weights_given and chosen.served_on(a["nvidia-a100-sxm-80gb"]).id == "fp8"  # the user's, kept


def test_bytes_and_compute_come_with_the_format(catalog: Catalog) -> None:
    serving = _formats(catalog, {"workload": "inference", "precision": {"weights": "awq", "kv_cache": "fp8"}})
    assert serving.kv_bytes == 1.0 and serving.weight_bytes == pytest.approx(serving.weights.bits_per_weight / 8)
    assert serving.compute == "fp16"  # AWQ dequantizes into FP16 matmuls (precisions.toml)
    fp32 = _formats(catalog, {"workload": "training", "precision": {"weights": "fp32"}})
    assert fp32.weight_bytes == 4.0 and fp32.compute == "tf32"  # FP32 weights train in TF32 (topology)
    assert _formats(catalog, {"workload": "training", "precision": {"weights": "fp8"}}).compute == "fp8"
    assert _formats(catalog, {"workload": "training"}).compute == "bf16"


def test_one_record_crosses_the_floors(catalog: Catalog) -> None:
    advisor = Advisor(catalog, include_user_packs=False)
    answers = parse_answers({"workload": "finetune", "finetune": {"method": "qlora"}})
    cons, resolved = advisor.run(answers)
    [(fid, _)] = cons.of_kind("workload")
    work = cons.attachment(fid)
    assert isinstance(work, Workload) and work.formats is resolved.formats  # the same object, not a lookup
    assert work.weights_precision == "nf4" and work.fact()["weights_precision"] == "nf4"
    result = advisor.consult(answers)
    assert Formats.of_answers(result.answers_effective, result.answers, catalog.precisions) == resolved.formats
