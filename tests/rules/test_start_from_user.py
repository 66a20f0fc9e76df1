"""Issue 37: start from where the user is — what they own, what they did not say, and the findings about the pick.

Each test runs the real consultation (or the pure function behind a mechanism) and checks figures worked out by hand
in its comments: the owned machine first and tried in a smaller format before anything is bought, an owned part's
memory variant, splits over PCIe or Ethernet as last resorts, production without a load, findings ordered by their
bearing on the pick, one serving runtime per model process, capacity within the service level.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.consultation.findings import triage
from gpuadvisor.rules.consultation.preference import LAST_RESORT, OWN, SOUND, tier
from gpuadvisor.rules.consultation.result import Warning, WhyStep
from gpuadvisor.rules.inputs.answers import PRODUCTION_CONCURRENCY, Answers, assumed_load, parse_answers
from gpuadvisor.rules.inputs.owned_parts import memory_variant
from gpuadvisor.rules.planning.search import ServingTargets, _capacity
from gpuadvisor.rules.planning.splits import slow_split
from gpuadvisor.rules.sizing.memory import InferenceMemoryCurve
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.units import GB
from tests.report import sample


@pytest.fixture(scope="module")
def advisor() -> Advisor:
    return Advisor(load_catalog())


def _consult(advisor: Advisor, data: dict[str, Any], top: int = 5) -> Any:
    return advisor.consult(parse_answers(data), top=top)


# ---- what you have is the baseline ----------------------------------------------------------------------------------

def test_own_first_then_sound_then_last_resort() -> None:
    assert tier("own", True) == OWN  # your cards are what you have, whatever links them
    assert tier("free", False) == SOUND and tier("buy", True) == LAST_RESORT


def test_owned_card_beats_free_notebook(advisor: Advisor) -> None:
    # issue 37's reproduction: an owned RTX 3090, learning, Llama 3.1 8B at 4-bit; on main Colab (free) was #1 and the
    # card #5 because its power over 36 months (350 W x 1.3 PUE x $0.12/kWh x 720 busy hours = $39) beat $0
    r = _consult(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                           "precision": {"weights": "int4"}, "current": {"gpu": "nvidia-rtx-3090", "gpu_count": 1}})
    top = r.recommendations[0]
    assert top.acquisition == "own" and top.accelerator.id == "nvidia-rtx-3090"
    assert top.decision_cost.usd == pytest.approx(350 * 1.3 * 0.12 / 1000 * 720, abs=0.05)  # $39.31
    assert any(x.acquisition == "free" for x in r.recommendations[1:])  # still listed, weighed against it
    assert r.headline.startswith("Use your own 1× NVIDIA GeForce RTX 3090")
    assert r.ranking_reason.startswith("#1 is the hardware you have")


def test_owned_cards_tried_at_4bit_before_buying(advisor: Advisor) -> None:
    # two owned RTX 4090s, Llama 3.1 70B, no format given: BF16 is 141 GB, FP8 and INT8 ~70 GB, none fits 2 x 24 GB;
    # AWQ (4.16 bits a weight, 16-bit embeddings) is about 38 GB of weights, which fits 2 x 21.6 GB usable in TP2
    r = _consult(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-70b"},
                           "precision": {"context_tokens": 4096},
                           "current": {"gpu": "nvidia-rtx-4090", "gpu_count": 2}})
    top = r.recommendations[0]
    assert top.acquisition == "own" and top.count == 2 and top.weights_precision == "awq"
    assert r.answers_effective["precision"]["weights"] == "awq"
    assert "with AWQ 4-bit weights, which fit them where BF16 does not" in r.headline
    assert [d for d in r.defaults_applied if d.startswith("precision.weights")] == [
        "precision.weights = awq (your own 2× NVIDIA GeForce RTX 4090 run Llama 3.1 70B in AWQ 4-bit, group size "
        "128, where BF16 (bfloat16) does not fit them)"]
    assert 36 < r.profile.weights_gb < 40
    assert all(x.weights_precision in ("awq", "bf16") for x in r.recommendations)  # compared like for like


def test_a_typed_format_is_never_replaced(advisor: Advisor) -> None:
    # the user asked for BF16: the owned cards are not quietly moved to 4-bit; they are ruled out with the lever
    r = _consult(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-70b"},
                           "precision": {"weights": "bf16", "context_tokens": 4096},
                           "current": {"gpu": "nvidia-rtx-4090", "gpu_count": 2}})
    assert r.answers_effective["precision"]["weights"] == "bf16"
    assert all(x.acquisition != "own" for x in r.recommendations)
    out = [o for o in r.ruled_out if o.family.startswith("own:")]
    assert out and "AWQ 4-bit" in out[0].reason


def test_owned_part_in_the_memory_size_the_user_has(advisor: Advisor) -> None:
    catalog = load_catalog()
    v100 = catalog.accelerators["nvidia-v100-sxm2"]
    assert memory_variant(v100, 32) is None  # the entry's own size: nothing to change
    small = memory_variant(v100, 16)
    assert small is not None and small.memory_gb.value == 16
    assert small.memory_bandwidth_gbs.value == v100.memory_bandwidth_gbs.value == 900
    # Llama 3.1 8B in FP16 on the V100 (no BF16): 16.1 GB of weights do not fit 16 GiB less 10 % (15.5 GB); 4-bit
    # Q4_K_M (4.9 GB) does
    r = _consult(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                           "precision": {"weights": "fp16"},
                           "current": {"gpu": "nvidia-v100-sxm2", "gpu_memory_gb": 16}})
    assert all(x.acquisition != "own" for x in r.recommendations)
    own = [o for o in r.ruled_out if o.family.startswith("own:")]
    assert own and "(16 GB, yours)" in own[0].name
    fits = _consult(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                              "current": {"gpu": "nvidia-v100-sxm2", "gpu_memory_gb": 16}})
    top = fits.recommendations[0]
    # 16 GB sold = 16 GiB of device memory (17.18e9 bytes, issue 44's binary units), 10 % kept free: 15.5 GB usable
    assert top.acquisition == "own" and top.memory.capacity == pytest.approx(16 * 2**30 / 1e9, abs=0.01)
    assert top.memory.total < 0.9 * top.memory.capacity


def test_unknown_owned_part_is_sized_by_its_memory(advisor: Advisor) -> None:
    # Llama 3.1 8B at Q4_K_M on one GPU: 4.9 GB of weights + 0.5 GB KV (4,096 tokens x 128 KB) + activations + 0.5-1
    # GB runtime ~ 6 GB, within 8 GB less 10 % headroom = 7.2 GB
    r = _consult(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                           "current": {"gpu_name": "Some Laptop GPU", "gpu_memory_gb": 8}})
    found = [w for w in r.warnings if w.rule == "OWN.unknown"]
    assert len(found) == 1 and "by its memory it holds this job" in found[0].message and "7.2 GB usable" in \
        found[0].message
    assert r.headline.startswith("Try your own 1× Some Laptop GPU (8 GB) first")
    small = _consult(advisor, {"workload": "inference", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                               "current": {"gpu_name": "Some Laptop GPU", "gpu_memory_gb": 4}})
    risk = [w for w in small.warnings if w.rule == "OWN.unknown"]
    assert risk and risk[0].severity == "risk" and "does not hold this job" in risk[0].message
    assert not small.headline.startswith("Try your own")
    assert small.headline.startswith("Your own 1× Some Laptop GPU (4 GB) does not hold this job by its memory")


def test_unknown_owned_part_too_small_to_fine_tune_is_said_not_dropped(advisor: Advisor) -> None:
    # QLoRA of Llama 3.1 8B on an 8 GB laptop GPU: 4-bit base weights 5.9 GB (with the fp32 adapters), gradients and
    # Adam states of the adapters 0.2 + 0.3 GB, runtime 1.0 GB = 7.4 GB before activations, above the 7.2 GB usable
    # (the 8 GB given, 10 % kept free); with 4.9 GB of activations 12.3 GB. No shorter sequence fits, so the finding
    # says so, first, and the headline starts there.
    r = _consult(advisor, {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                           "finetune": {"method": "qlora"},
                           "current": {"gpu_name": "NVIDIA GeForce RTX 4060 Laptop GPU", "gpu_memory_gb": 8}})
    found = [w for w in r.warnings if w.rule == "OWN.unknown"]
    assert len(found) == 1 and found[0].severity == "risk"
    assert "12.3 GB a GPU against 7.2 GB usable" in found[0].message
    assert "alone take 7.4 GB, so no shorter sequence fits" in found[0].message
    assert r.warnings[0].rule == "OWN.unknown"  # about the user's own hardware: first
    assert r.headline.startswith("Your own 1× NVIDIA GeForce RTX 4060 Laptop GPU (8 GB) does not hold this job")
    # 16 GB of it would hold the adapters' training: 12.3 GB within 14.4 GB usable, so it is tried first
    big = _consult(advisor, {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
                             "finetune": {"method": "qlora"},
                             "current": {"gpu_name": "Some Workstation GPU", "gpu_memory_gb": 16}})
    assert big.headline.startswith("Try your own 1× Some Workstation GPU (16 GB) first")


def test_team_serving_with_ollama_on_its_own_mac_ports_nothing(advisor: Advisor) -> None:
    r = _consult(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-70b"},
                           "precision": {"weights": "q4_k_m", "context_tokens": 4096},
                           "inference": {"engine": "ollama"}, "current": {"gpu": "apple-m3-max", "gpu_count": 1}})
    top = r.recommendations[0]
    assert top.acquisition == "own" and not [p for p in top.decision_cost.parts if p.part == "engineering"]
    # the same team with no engine named is a PyTorch team moving to Metal: 0.2 engineer-weeks are charged
    auto = _consult(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-70b"},
                              "precision": {"weights": "q4_k_m", "context_tokens": 4096},
                              "current": {"gpu": "apple-m3-max", "gpu_count": 1}})
    own = next(x for x in [*auto.recommendations, *auto.runners_up] if x.acquisition == "own")
    assert [p.part for p in own.decision_cost.parts].count("engineering") == 1


# ---- topology as practitioners choose it --------------------------------------------------------------------------

def test_slow_split_words() -> None:
    kw = {"pipeline_parallel": 1, "expert_parallel": 1, "per_machine": 4, "scale_out_kind": "ethernet"}
    assert slow_split(tensor_parallel=4, link="pcie", **kw) == "tensor parallel 4 over PCIe"
    assert slow_split(tensor_parallel=2, link="nvlink", **kw) == ""
    assert slow_split(tensor_parallel=1, link="local", **kw) == ""
    # TP4 inside an NVLink board, two pipeline stages on two machines over TCP: the replica crosses Ethernet
    assert slow_split(tensor_parallel=4, pipeline_parallel=2, expert_parallel=1, link="nvlink", per_machine=4,
                      scale_out_kind="ethernet") == "one replica over 2 machines on Ethernet (TCP)"
    assert slow_split(tensor_parallel=4, pipeline_parallel=2, expert_parallel=1, link="nvlink", per_machine=4,
                      scale_out_kind="infiniband") == ""


def test_pcie_splits_rank_after_every_sound_plan(advisor: Advisor) -> None:
    # Llama 3.3 70B BF16 in production (issue 37): on main, 2 x 2U servers of RTX PRO 6000 in TP2 over PCIe were #1
    r = _consult(advisor, {"workload": "inference", "stage": "production", "model": {"name": "llama-3.3-70b"},
                           "precision": {"weights": "bf16"}, "deployment": {"where": "either"}}, top=80)
    listed = [*r.recommendations, *r.runners_up]
    flags = [x.last_resort is not None for x in listed]
    assert flags == sorted(flags)  # every last resort after every sound plan
    assert not flags[0] and "rtx" not in listed[0].accelerator.id
    last = next(x for x in listed if x.last_resort)
    assert last.last_resort.endswith("over PCIe")


# ---- demand nobody stated -----------------------------------------------------------------------------------------

def test_production_without_a_load_assumes_requests_in_flight(advisor: Advisor) -> None:
    given = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-8b"},
             "deployment": {"where": "cloud"}}
    assert assumed_load(given) == PRODUCTION_CONCURRENCY == 32
    r = _consult(advisor, given)
    assert r.answers_effective["inference"]["concurrent_requests"] == 32
    assert any(d.startswith("inference.concurrent_requests = 32 (assumed: production with no stated load")
               for d in r.defaults_applied)
    assert "32 requests in flight (assumed: no load stated)" in r.headline
    assert any(w.rule == "W5.load" for w in r.warnings)
    # a typed load wins, even one request; a stage left unstated imposes no production load either
    for other in ({**given, "inference": {"concurrent_requests": 1}}, {**given, "precision": {"batch_size": 4}},
                  {k: v for k, v in given.items() if k != "stage"}):
        assert assumed_load(other) is None
        assert Answers.model_validate(other).effective()["inference.concurrent_requests"] is None or \
            "inference.concurrent_requests" in Answers.model_validate(other).given_keys()


def test_long_context_says_what_requests_were_assumed(advisor: Advisor) -> None:
    r = _consult(advisor, {"workload": "inference", "stage": "prototyping", "model": {"name": "llama-3.1-8b"},
                           "precision": {"context_tokens": 131072}, "deployment": {"where": "cloud"}})
    found = [w for w in r.warnings if w.rule == "W5.lengths"]
    # 500 + 200 = 700 tokens a request, against the 131,072-token window the user typed (which is kept)
    assert found and "KV cache holds 700 tokens a request, not the 131,072-token context" in found[0].message
    assert r.answers_effective["precision"]["context_tokens"] == 131072


# ---- findings about the pick first --------------------------------------------------------------------------------

def _w(rule: str, severity: str, options: list[str]) -> Warning:
    return Warning(id=rule.split(".")[0], rule=rule, category="advice", severity=severity, message=rule,
                   options=options, why=[WhyStep(depth=0, fact=1, kind="warning", text=rule)])


def test_findings_bearing_on_the_pick_lead() -> None:
    recs = [*sample().recommendations, *sample().runners_up]
    first, second = recs[0].option, recs[1].option
    found = triage([_w("H10.cuda-first", "advice", []), _w("W3", "risk", [second]), _w("H13", "note", []),
                    _w("W6", "advice", [first]), _w("OWN.remedy-advice", "note", []), _w("W5", "risk", [])], recs)
    # about the pick (W6), the user's own hardware (OWN.*) and plan-wide risks (W5) first, by severity; then plan-wide
    # advice (H10) and notes (H13); then the other options' (W3)
    assert [w.rule for w in found] == ["W5", "W6", "OWN.remedy-advice", "H10.cuda-first", "H13", "W3"]


def test_w1_reads_the_requests_in_flight(advisor: Advisor) -> None:
    # issue 37: W1 said "batch 1" with 10 requests in flight; 10 > 8 so the small-batch warning is quiet
    r = _consult(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"},
                           "inference": {"concurrent_requests": 10}})
    assert not [w for w in r.warnings if w.id == "W1"]
    r = _consult(advisor, {"workload": "inference", "model": {"name": "llama-3.1-8b"},
                           "inference": {"concurrent_requests": 4}})
    assert any("with 4 request(s) in flight" in w.message for w in r.warnings if w.id == "W1")


# ---- the plan's own values ----------------------------------------------------------------------------------------

def test_capacity_within_the_per_user_floor() -> None:
    # a step of 10 ms + 1 ms a sequence: 20 tokens/s a user needs a step <= 50 ms, so batch <= 40 although 100 fit;
    # two replicas: 2 x 40 / 0.050 s = 1,600 tokens/s (not 2 x 100 / 0.110 s = 1,818)
    def seconds(b: int) -> float:
        return 0.010 + 0.001 * b

    t = ServingTargets(concurrency=10, tokens_per_s=0.0, input_tokens=500, output_tokens=200, context=4096,
                       min_tokens_per_s_per_user=20.0, ttft_max_s=None, latency_p95_s=None, max_gpus=None)
    c = SimpleNamespace(fit=100, batch=5, throttle=1.0, replicas=2)
    assert _capacity(c, t, seconds) == pytest.approx(1600.0)  # type: ignore[arg-type]
    free = ServingTargets(concurrency=10, tokens_per_s=0.0, input_tokens=500, output_tokens=200, context=4096,
                          min_tokens_per_s_per_user=None, ttft_max_s=None, latency_p95_s=None, max_gpus=None)
    assert _capacity(c, free, seconds) == pytest.approx(2 * 100 / 0.110)  # type: ignore[arg-type]


def test_one_runtime_per_model_process() -> None:
    catalog = load_catalog()
    arch = catalog.models["llama-3.2-1b"].architecture
    params = count_parameters(arch)

    def curve(models: int) -> InferenceMemoryCurve:
        return InferenceMemoryCurve(arch, params, weight_bytes_per_param=2.0, kv_bytes_per_value=2.0, context=4096,
                                    models=models)
    one, twenty = curve(1).breakdown(1, False), curve(20).breakdown(1, False)
    # 1 GB of CUDA context and workspaces per process (assumptions.toml runtime_overhead_gb): 20 processes, 20 GB
    assert one.runtime_overhead == pytest.approx(1.0 * GB)
    assert twenty.runtime_overhead == pytest.approx(20.0 * GB)
    assert twenty.weights == pytest.approx(20 * one.weights)
