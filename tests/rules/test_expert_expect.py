"""The expert-case expectation checker: each key passes on a result that satisfies it and fails on one that does not."""

from __future__ import annotations

from typing import Any

import pytest

from tests.expert_expect import CHECKS, check, describe, heuristic_matches, top3_summary


def rec(rank: int, acc: str, count: int = 1, *, memory_gb: float = 80.0, rental: bool = True,
        tokens_per_s: float | None = 100.0, title: str = "", score: float = 1.0, provider: str = "cloud",
        pricing: str = "on-demand", paid: int | None = None, replicas: int = 1, user_tps: float | None = 20.0,
        beyond: float | None = 50_000.0) -> dict[str, Any]:
    return {
        "rank": rank, "title": title or f"{count}× {acc}", "count": count, "score": score,
        "accelerator": {"id": acc, "memory_gb": memory_gb},
        "instance": {"id": f"{provider}-{acc}", "provider": provider.title(), "count": 1, "pricing": pricing}
        if rental else None,
        "purchase": not rental, "tokens_per_s": tokens_per_s, "accelerators_paid": count if paid is None else paid,
        "replicas": replicas, "tokens_per_s_per_user": user_tps,
        "cost": {"capex_beyond_accelerators_usd": None if rental else beyond},
    }


def result(*recs: dict[str, Any], feasible: bool = True, warnings: list[tuple[str, str]] | None = None
           ) -> dict[str, Any]:
    return {"feasible": feasible, "recommendations": list(recs),
            "warnings": [{"id": i, "message": m} for i, m in (warnings or [])]}


THREE = result(rec(1, "nvidia-l4", 1, memory_gb=24, replicas=2),
               rec(2, "nvidia-a10g", 2, memory_gb=24, provider="runpod", user_tps=12.5),
               rec(3, "nvidia-h100-sxm5", 8, memory_gb=80, rental=False), rec(4, "nvidia-rtx-4090", 1, memory_gb=24))

# key -> (value that THREE satisfies, value that THREE violates)
CASES: dict[str, tuple[Any, Any]] = {
    "feasible": (True, False),
    "top_any": ("h100", "mi300"),
    "top1_not": ("h100|a100", "l4$"),
    "top3_none": ("mi300|rtx-", "a10g"),           # rtx-4090 is rank 4: outside the top 3
    "top1_rental": (True, False),
    "top1_purchase": (False, True),
    "top1_max_count": (1, 0),
    "top3_max_count": (8, 2),
    "min_count": (1, 2),
    "min_total_memory_gb": (24, 48),                # 1 × 24 GB is the smallest total
    "min_tokens_per_s": (100, 101),
    "warnings_any": (["H13"], ["H15", "H16"]),
    "message_any": ("FREE NOTEBOOK", "colab"),
    "top3_instance_none": ("vast|lambda", "RUNPOD"),  # matched against instance id and provider, any case
    "top3_no_spot": (True, False),
    "paid_equals_used": (True, False),              # every option uses what it pays for
    "top1_min_replicas": (2, 3),
    "min_user_tps": (12.5, 13),                     # the a10g pair streams 12.5 tok/s to each user
    "warnings_none": ("infiniband", "free notebook"),
    "first_warning_not": ("W5", "H13"),
    "max_warnings": (1, 0),                         # one finding (H13) is a warning, W5 is info
    "purchase_has_host": (True, False),              # checked on the rank-3 purchase below
    "top1_max_tensor_parallel": (1, 0),             # rank 1 (no tensor_parallel field) is one GPU per replica
}
LIFECYCLE_KEYS = {"lifecycle_within_budget", "lifecycle_max_total_usd", "lifecycle_choice_any", "lifecycle_plan",
                  "lifecycle_warnings_any", "lifecycle_warnings_none"}
UNIT_KEYS = {"fabric_priced", "top3_max_replica_count", "top3_unit_kind_not", "top1_acquisition",
             "precision_default", "deadline_slack", "top1_pricing"}
"""Keys of the newest shared cases (issue 26): checked on results built for them below."""
OWN_TEST = {"min_pflops"} | LIFECYCLE_KEYS | UNIT_KEYS  # min_pflops: read from the knowledge base; the rest below


def test_every_documented_key_has_a_unit_test() -> None:
    assert set(CASES) | OWN_TEST == set(CHECKS)


def test_min_pflops_reads_dense_bf16_from_the_knowledge_base() -> None:
    # 1 × L4 = 121 dense BF16 TFLOPS (0.121 PFLOPS), 8 × H100 SXM = 8 × 989.4 = 7.915 PFLOPS
    data = result(rec(1, "nvidia-h100-sxm5", 8), rec(2, "nvidia-l4", 1, memory_gb=24))
    assert check(data, {"min_pflops": 0.121}) == []
    failures = check(data, {"min_pflops": 0.122})
    assert len(failures) == 1 and "nvidia-l4" in failures[0] and "nvidia-h100" not in failures[0]
    assert check(result(rec(1, "nvidia-h100-sxm5", 8)), {"min_pflops": 7.92}) != []


@pytest.mark.parametrize("key", sorted(CASES))
def test_key_passes_and_fails(key: str) -> None:
    good, bad = CASES[key]
    data = dict(THREE, warnings=[{"id": "H13", "message": "Use a free notebook first", "severity": "warning"},
                                 {"id": "W5", "message": "x", "severity": "info"}])
    if key == "purchase_has_host" and good is True:
        data_bad = dict(data, recommendations=[dict(r, cost={"capex_beyond_accelerators_usd": None})
                                               for r in data["recommendations"]])
        assert check(data, {key: True}) == []
        failures = check(data_bad, {key: True})
        assert len(failures) == 1 and failures[0].startswith(key)
        return
    if key == "paid_equals_used":
        data_bad = dict(data, recommendations=[*data["recommendations"][:1],
                                               dict(data["recommendations"][1], accelerators_paid=8),
                                               *data["recommendations"][2:]])
        assert check(data, {key: True}) == [] and check(data_bad, {key: False}) == []
        assert check(data, {key: False})[0].startswith(key) and check(data_bad, {key: True})[0].startswith(key)
        return
    assert check(data, {key: good}) == []
    failures = check(data, {key: bad})
    assert len(failures) == 1 and failures[0].startswith(key)


@pytest.mark.parametrize("key", sorted(set(CASES) - {"feasible", "warnings_any", "message_any", "warnings_none",
                                                     "first_warning_not", "max_warnings", "purchase_has_host"}))
def test_keys_about_recommendations_fail_without_any(key: str) -> None:
    good, _ = CASES[key]
    assert check(result(feasible=False), {key: good}) == [f"{key}: no recommendations"]


def test_message_matches_option_titles_case_insensitively() -> None:
    data = result(rec(1, "cpu", title="Free notebook GPU (Colab T4)"))
    assert check(data, {"message_any": "colab|kaggle"}) == []
    assert check(data, {"message_any": "FREE NOTEBOOK"}) == []
    assert check(data, {"message_any": "kaggle"}) != []


def test_tokens_per_s_missing_counts_as_failure() -> None:
    assert check(result(rec(1, "nvidia-l4", tokens_per_s=None)), {"min_tokens_per_s": 1}) != []


def test_memory_is_count_times_memory() -> None:
    data = result(rec(1, "nvidia-h100-sxm5", 8, memory_gb=80))      # 640 GB
    assert check(data, {"min_total_memory_gb": 640}) == []
    assert check(data, {"min_total_memory_gb": 641}) != []
    # the device memory a result reports (an "80 GB" H100 holds 80 GiB = 85.9 GB) is what is counted (issue 44)
    measured = result({**rec(1, "nvidia-h100-sxm5", 8, memory_gb=80), "memory": {"capacity": 85.899}})
    assert check(measured, {"min_total_memory_gb": 687}) == []
    assert check(measured, {"min_total_memory_gb": 688}) != []


@pytest.mark.parametrize(("wid", "heuristic", "matches"), [
    ("H13", "H13", True), ("H13a", "H13", True), ("H13-prototype", "H13", True),
    ("H13", "H1", False), ("H130", "H13", False), ("W5", "H13", False), ("H1", "H13", False),
])
def test_heuristic_id_prefix(wid: str, heuristic: str, matches: bool) -> None:
    assert heuristic_matches(wid, heuristic) is matches


def test_unknown_key_fails() -> None:
    assert check(THREE, {"top_one": "h100"}) == ["unknown expectation key 'top_one'"]


def test_failures_are_all_reported() -> None:
    assert len(check(THREE, {"feasible": False, "top1_purchase": True, "min_count": 2})) == 3


def test_description_names_case_source_and_top3() -> None:
    text = describe("case-x", "a model card", THREE, ["top_any: ..."])
    assert "case-x" in text and "a model card" in text
    assert "1. nvidia-l4 count=1 instance=cloud-nvidia-l4 ×1 (on-demand) score=1" in text
    assert "3. nvidia-h100-sxm5 count=8 instance=purchase" in text
    assert "nvidia-rtx-4090" not in text
    assert top3_summary(result(feasible=False)) == ["(no recommendations)"]


def test_spot_keys() -> None:
    spot = result(rec(1, "nvidia-h100-sxm5"), rec(2, "nvidia-a100-sxm-80gb", pricing="spot"))
    assert check(spot, {"top3_no_spot": False}) == []
    assert check(spot, {"top3_no_spot": True}) != []
    assert check(spot, {"top3_instance_none": "vast"}) == []


def test_instance_provider_is_matched_as_well_as_id() -> None:
    data = result(rec(1, "nvidia-h100-sxm", provider="vast"))
    assert check(data, {"top3_instance_none": "vast"}) != []
    bought = result(rec(1, "nvidia-rtx-4090", rental=False))
    assert check(bought, {"top3_instance_none": ".*"}) == []  # purchases have no instance


def lifecycle_result() -> dict[str, Any]:
    """Two phases: rent a training run, then serve on THREE's options; $120,000 of $2M spent."""
    plan = [{"phase": 1, "choice": "rent"}, {"phase": 2, "choice": "buy"}]
    return {"feasible": True, "recommendations": [], "warnings": [{"id": "L3", "message": "x"}],
            "lifecycle": {"fleet_choice": "split", "description": "Split", "total_cost_usd": 120_000.0,
                          "within_budget": True, "plan": plan},
            "phases": [result(rec(1, "nvidia-h100-sxm5", 64)), THREE]}


@pytest.mark.parametrize(("key", "good", "bad"), [
    ("lifecycle_within_budget", True, False),
    ("lifecycle_max_total_usd", 120_000, 119_999),
    ("lifecycle_choice_any", ["split", "rent"], ["one-fleet"]),
    ("lifecycle_plan", ["rent", "buy|reuse"], ["rent", "reuse"]),
    ("lifecycle_warnings_any", ["L3"], ["L1"]),
    ("lifecycle_warnings_none", ["L1", "L4"], ["L3"]),
])
def test_lifecycle_keys_pass_and_fail(key: str, good: Any, bad: Any) -> None:
    data = lifecycle_result()
    assert check(data, {key: good}) == []
    failures = check(data, {key: bad})
    assert len(failures) == 1 and failures[0].startswith(key)
    assert check(THREE, {key: good}) != [] or key == "lifecycle_warnings_none"  # not a lifecycle result


def test_phase_expectations_are_checked_on_each_phase() -> None:
    data = lifecycle_result()
    assert check(data, {"phase": [{"min_count": 64}, {"top_any": "h100"}]}) == []
    assert check(data, {"phase": [{}, {"min_count": 2}]}) == ["phase[2]: min_count: options use fewer than 2: "
                                                             "['#1 1× nvidia-l4 (cloud-nvidia-l4×1)', "
                                                             "'#4 1× nvidia-rtx-4090 (cloud-nvidia-rtx-4090×1)']"]
    assert check(data, {"phase": [{}, {}, {"feasible": True}]}) == ["phase[3]: the result has 2 phase(s)"]
    assert check(data, {"phase": [{"top_one": "x"}]}) == ["unknown expectation key 'phase[1].top_one'"]


def _unit_rec(rank: int, acc: str, count: int, *, kind: str, machines: int = 1, fabric: float | None = None,
              acquisition: str = "buy", replicas: int = 1, days: float | None = None) -> dict[str, Any]:
    r = rec(rank, acc, count, rental=acquisition == "rent", replicas=replicas)
    r.update(unit={"kind": kind, "machines": machines}, acquisition=acquisition, training_days=days)
    r["cost"] = dict(r["cost"], fabric_usd=fabric)
    return r


def _with_answers(recs: list[dict[str, Any]], *, weights: str = "fp8", deadline: float = 75.0) -> dict[str, Any]:
    return dict(result(*recs), answers_effective={"precision": {"weights": weights},
                                                  "training": {"deadline_days": deadline}})


def test_fabric_priced_asks_only_multi_machine_purchases() -> None:
    one = _unit_rec(1, "nvidia-h100-sxm5", 8, kind="server", fabric=0.0)  # one server: no cluster network
    joined = _unit_rec(2, "intel-gaudi3", 72, kind="server", machines=9, fabric=0.0)
    rented = _unit_rec(3, "nvidia-h100-sxm5", 64, kind="instance", machines=8, acquisition="rent")
    assert check(_with_answers([one, rented]), {"fabric_priced": True}) == []
    failures = check(_with_answers([one, joined, rented]), {"fabric_priced": True})
    assert len(failures) == 1 and "intel-gaudi3" in failures[0] and "h100" not in failures[0]
    joined["cost"]["fabric_usd"] = 180_000.0
    assert check(_with_answers([one, joined]), {"fabric_priced": True}) == []


def test_top3_max_replica_count_divides_by_replicas() -> None:
    data = _with_answers([_unit_rec(1, "nvidia-h100-sxm5", 2, kind="own", replicas=2, acquisition="own"),
                          _unit_rec(2, "nvidia-l40s", 8, kind="server", replicas=4),
                          _unit_rec(3, "nvidia-a100-sxm-80gb", 8, kind="server", replicas=2)])
    assert check(data, {"top3_max_replica_count": 4}) == []  # 1, 2 and 4 per replica
    failures = check(data, {"top3_max_replica_count": 2})
    assert len(failures) == 1 and "a100" in failures[0] and "4 per replica" in failures[0]


def test_top3_unit_kind_not_and_top1_acquisition() -> None:
    data = _with_answers([_unit_rec(1, "nvidia-h100-sxm5", 2, kind="own", acquisition="own"),
                          _unit_rec(2, "nvidia-l40s", 2, kind="server"),
                          _unit_rec(3, "nvidia-rtx-pro-6000-blackwell", 2, kind="workstation"),
                          _unit_rec(4, "nvidia-rtx-4090", 1, kind="desktop")])  # rank 4: outside the top 3
    assert check(data, {"top3_unit_kind_not": "desktop|appliance"}) == []
    failures = check(data, {"top3_unit_kind_not": "desktop|appliance|workstation"})
    assert len(failures) == 1 and "rtx-pro-6000" in failures[0] and "rtx-4090" not in failures[0]
    assert check(data, {"top1_acquisition": "own"}) == []
    assert check(data, {"top1_acquisition": "buy|rent"})[0].startswith("top1_acquisition")


def test_top1_pricing() -> None:
    reserved = _unit_rec(1, "nvidia-l4", 2, kind="instance", acquisition="rent")
    reserved["instance"] = {"id": "aws-g6.xlarge", "count": 2, "provider": "aws", "name": "g6.xlarge",
                           "pricing": "reserved-3y"}
    data = _with_answers([reserved, _unit_rec(2, "nvidia-l40s", 2, kind="server")])
    assert check(data, {"top1_pricing": "reserved-(1y|3y)"}) == []
    assert check(data, {"top1_pricing": "on-demand"})[0].startswith("top1_pricing")
    bought = _with_answers([_unit_rec(1, "nvidia-l40s", 2, kind="server")])
    assert "as no rental" in check(bought, {"top1_pricing": "reserved-3y"})[0]


def test_precision_default_reads_the_effective_answers() -> None:
    assert check(_with_answers([], weights="q4_k_m"), {"precision_default": "q4|nf4"}) == []
    assert check(_with_answers([], weights="bf16"), {"precision_default": "q4|nf4"}) == [
        "precision_default: weights assumed 'bf16', not /q4|nf4/"]


def test_deadline_slack_is_a_share_of_the_deadline() -> None:
    # 75 days with a 5 % margin: every plan must finish by 71.25 days
    on_time = _unit_rec(1, "nvidia-b200", 64, kind="server", machines=8, days=71.2)
    late = _unit_rec(2, "intel-gaudi3", 72, kind="server", machines=9, days=73.0)
    assert check(_with_answers([on_time]), {"deadline_slack": 0.05}) == []
    failures = check(_with_answers([on_time, late]), {"deadline_slack": 0.05})
    assert len(failures) == 1 and "intel-gaudi3" in failures[0] and "71.2 of 75 days" in failures[0]
    assert check(_with_answers([on_time]), {"deadline_slack": 0.06}) != []  # 75 × 0.94 = 70.5 < 71.2


def test_purchase_has_host_exempts_units_priced_whole() -> None:
    rack = _unit_rec(1, "nvidia-gb200-per-gpu", 72, kind="rack")
    rack["cost"]["capex_beyond_accelerators_usd"] = None
    server = _unit_rec(2, "nvidia-b200", 8, kind="server")
    server["cost"]["capex_beyond_accelerators_usd"] = None
    assert check(_with_answers([rack]), {"purchase_has_host": True}) == []
    failures = check(_with_answers([rack, server]), {"purchase_has_host": True})
    assert len(failures) == 1 and "nvidia-b200" in failures[0] and "gb200" not in failures[0]
