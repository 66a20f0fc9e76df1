"""Changing answers (`Answers.with_changes`) and the defaults resolution chooses (`Resolved.chosen`): one way to
change validated answers, and each default with its reason as typed values, never a note string parsed back."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.hardware_probe import Detection, Device
from gpuadvisor.rules.inputs.answers import Answers, parse_answers, put_dotted
from gpuadvisor.rules.inputs.current_gpu import apply_detection
from gpuadvisor.rules.inputs.effective import effective_answers
from gpuadvisor.rules.inputs.resolve import Chosen, resolve
from gpuadvisor.rules.lifecycle.consult import Candidate, reuse_answers
from gpuadvisor.rules.planning.feasibility import _merged

H100 = Device(name="NVIDIA H100 80GB HBM3", memory_gb=79.6, vendor="nvidia", accelerator="nvidia-h100-sxm5")


def test_with_changes_sets_removes_and_validates() -> None:
    a = parse_answers({"workload": "inference", "budget": {"monthly_usd": 5000.0}, "inference": {"engine": "vllm"}})
    b = a.with_changes({"precision.context_tokens": 32768, "budget.monthly_usd": None})
    assert b.precision.context_tokens == 32768 and "precision.context_tokens" in b.given_keys()
    assert b.budget.monthly_usd is None and "budget" not in b.given()  # the emptied table goes with its last key
    assert b.inference.engine == "vllm" and a.budget.monthly_usd == 5000.0  # the rest kept; `a` untouched
    with pytest.raises(InputError, match=r"what-if.*precision\.context_tokens"):
        a.with_changes({"precision.context_tokens": 0}, "what-if")


def test_put_dotted_prunes_only_what_it_empties() -> None:
    d = {"budget": {"capex_usd": 1.0}, "inference": {"engine": "vllm", "failover": True}}
    put_dotted(d, "budget.capex_usd", None)
    put_dotted(d, "inference.failover", None)
    put_dotted(d, "constraints.max_gpus", None)  # absent: nothing to remove, no empty table made
    assert d == {"inference": {"engine": "vllm"}}


def test_detection_is_written_as_changes_and_the_users_count_wins() -> None:
    a = parse_answers({"workload": "inference", "current": {"gpu": "auto", "gpu_count": 2}})
    found = apply_detection(a, Detection(devices=(H100,) * 4, tool="nvidia-smi"))
    assert found.current.gpu == "nvidia-h100-sxm5" and found.current.gpu_count == 2  # 4 detected, 2 given: the user's
    assert found.current.gpu_name == H100.name and found.current.detection.startswith("detected by nvidia-smi")
    nothing = apply_detection(a, Detection(tried=("nvidia-smi: not found",)))
    assert nothing.current.gpu is None and nothing.current.gpu_count == 2 and nothing.current.detection


def test_a_lifecycle_reuses_a_purchase_as_the_hardware_owned() -> None:
    a = parse_answers({"workload": "inference", "stage": "prototyping",
                       "current": {"gpu": "nvidia-rtx-4090", "gpu_name": "RTX 4090", "pc_slots": 2}})
    bought = Candidate(choice="buy", title="8 × H100", option=None, accelerator="nvidia-h100-sxm5", count=8, machines=1,
                       per_machine=8, memory_gb=80.0, usd_per_run=None, usd_per_month=1.0, training_days=None)
    reused = reuse_answers(a, bought)
    assert reused.given()["current"] == {"gpu": "nvidia-h100-sxm5", "gpu_count": 8, "pc_slots": 2}
    assert reused.stage == "prototyping"


def test_a_feasibility_change_merges_its_tables() -> None:
    a = parse_answers({"workload": "inference", "budget": {"monthly_usd": 500.0, "capex_usd": 9000.0}})
    merged = _merged(a, {"budget": {"monthly_usd": 800.0}, "stage": "prototyping"})
    assert merged is not None and merged.budget.monthly_usd == 800.0 and merged.budget.capex_usd == 9000.0
    assert merged.stage == "prototyping"
    assert _merged(a, {"budget": {"monthly_usd": -1.0}}) is None  # an invalid change is no suggestion


def test_resolution_says_what_it_chose_and_why(catalog: Catalog) -> None:
    qlora = parse_answers({"workload": "finetune", "finetune": {"method": "qlora"}})
    r = resolve(qlora, catalog)
    assert r.chosen == {"model.name": Chosen("llama-3.1-8b", "no model given"),
                        "precision.weights": Chosen("nf4", "QLoRA default: 4-bit NormalFloat base")}
    assert not any(n.startswith(("model.name =", "precision.weights =")) for n in r.notes)
    _, defaults = effective_answers(qlora, r, None, {})
    assert "precision.weights = nf4 (QLoRA default: 4-bit NormalFloat base)" in defaults
    assert "model.name = llama-3.1-8b (no model given)" in defaults
    given = resolve(parse_answers({"workload": "finetune", "finetune": {"method": "qlora"},
                                   "model": {"name": "llama-3.1-8b"}, "precision": {"weights": "nf4"}}), catalog)
    assert given.chosen == {}


def test_answers_round_trip_unchanged() -> None:
    a = parse_answers({"workload": "training", "training": {"zero_stage": 2, "tokens_b": 3.0}})
    assert a.with_changes({}) == a and isinstance(a.with_changes({}), Answers)
