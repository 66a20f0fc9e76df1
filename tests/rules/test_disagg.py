"""Disaggregated serving (issue 17): the pool arithmetic of rules/sizing/disagg.py against hand calculations, the
planner's pools for a large long-prompt deployment on AWS p5 (H100) checked step by step, a small deployment where
the split is only considered, and the JSON the CLI writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.planning.search import Disaggregation, InferenceSearch, Plan, ServingTargets
from gpuadvisor.rules.planning.serving import engine_efficiency, engine_memory
from gpuadvisor.rules.planning.topology import device_for
from gpuadvisor.rules.planning.units import unit_table
from gpuadvisor.rules.pricing.economics import accelerator_age, economics
from gpuadvisor.rules.pricing.price_age import today
from gpuadvisor.rules.sizing.disagg import decode_batch, decode_pool, kv_transfer, prefill_pool
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.serving_load import erlang_c, wait_quantile
from gpuadvisor.tui.cli import main

# --- the pool arithmetic -----------------------------------------------------------------------------------------


def test_kv_transfer_is_bytes_over_the_effective_link() -> None:
    # 1 GB over 100 GB/s at 50 % = 50 GB/s: 20 ms
    t = kv_transfer(1e9, 100.0, 0.5)
    assert t.gbs == 50.0
    assert t.seconds == pytest.approx(0.020)


def test_prefill_pool_without_a_target_is_the_first_that_keeps_up() -> None:
    # λ = 10 prompts/s of 0.5 s each: a = 5 busy on average; 5 replicas would be saturated (a = c), so 6
    pool = prefill_pool(0.5, 1, 10.0, None, 0.0)
    assert pool is not None
    assert pool.replicas == 6
    assert pool.utilization == pytest.approx(5 / 6)


def test_prefill_pool_grows_until_the_p95_first_token_meets_the_target() -> None:
    # λ = 2/s, S = 0.5 s: a = 1. Target 0.6 s, transfer 0.05 s, so the wait may be at most 0.05 s.
    # c = 2: Erlang B(1) = 1/2, B(2) = 0.5/2.5 = 0.2, C = 0.2 / (1 − 0.5 × 0.8) = 1/3 > 5 %:
    #        wait95 = ln((1/3) / 0.05) ÷ ((2 − 1) / 0.5) = 0.949 s → TTFT 1.50 s, too slow
    # c = 3: B(3) = 0.2/3.2 = 0.0625, C = 0.0625 / (1 − 0.9375/3) = 0.0909: wait95 = ln(1.818)/4 = 0.149 s → 0.70 s
    # c = 4: B(4) = 0.0625/4.0625 = 0.01538, C = 0.01538 / (1 − 0.25 × 0.98462) = 0.0204 ≤ 5 %: no wait → 0.55 s
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert erlang_c(3, 1.0) == pytest.approx(1 / 11)
    pool = prefill_pool(0.5, 1, 2.0, 0.6, 0.05)
    assert pool is not None
    assert pool.replicas == 4
    assert pool.wait_p95_s == 0.0
    assert pool.ttft_p95_s == pytest.approx(0.55)


def test_prefill_pool_cannot_beat_its_own_pass() -> None:
    assert prefill_pool(0.5, 1, 2.0, 0.52, 0.05) is None  # 0.5 s pass + 0.05 s transfer > 0.52 s


def test_decode_batch_is_the_largest_at_the_speed_floor_and_the_latency_target() -> None:
    def step(b: int) -> float:  # 10 ms + 1 ms per sequence
        return 0.010 + 0.001 * b

    # 50 tokens/s per user: step ≤ 20 ms → b ≤ 10
    assert decode_batch(step, 64, 50.0, 1.0, 101, None) == 10
    # and p95 latency 2.5 s with a 1.0 s first token and 100 more tokens: step ≤ 15 ms → b ≤ 5
    assert decode_batch(step, 64, 50.0, 1.0, 101, 2.5) == 5
    # memory holds only 3
    assert decode_batch(step, 3, 50.0, 1.0, 101, None) == 3
    # 100 tokens/s per user is beyond even batch 1 (11 ms)
    assert decode_batch(step, 64, 100.0, 1.0, 101, None) is None


def test_decode_pool_covers_the_tokens_and_the_requests_in_flight() -> None:
    # batch 10 at a 20 ms step: 500 tokens/s a replica; 2,600 tokens/s → ⌈5.2⌉ = 6; 70 in flight → ⌈70/10⌉ = 7
    pool = decode_pool(0.020, 10, 2600.0, 70)
    assert pool.replicas == 7
    assert pool.tokens_per_s_per_user == pytest.approx(50.0)
    assert decode_pool(0.020, 10, 2600.0, 1).replicas == 6


# --- the planner: Llama 3.1 70B FP8 on AWS p5 (8 × H100 SXM), 8k prompts --------------------------------------


def _search(catalog: Catalog, rpm: float, prompt: int, out: int, min_tps: float | None,
            ttft: float | None, model: str = "llama-3.1-70b", weights: str = "fp8") -> InferenceSearch:
    arch = catalog.models[model].architecture
    factors = Factors.from_values({a.id: a.value for a in catalog.assumptions.values()})
    t = ServingTargets(concurrency=1, tokens_per_s=rpm / 60 * out * (1 + factors.burst_headroom),
                       input_tokens=prompt, output_tokens=out, context=16384, min_tokens_per_s_per_user=min_tps,
                       ttft_max_s=ttft, latency_p95_s=None, max_gpus=None, failover=True, requests_per_s=rpm / 60)
    return InferenceSearch(arch, count_parameters(arch), catalog.precisions[weights], catalog.precisions["fp16"], t,
                           factors, lambda a: engine_efficiency(catalog, a, "auto"),
                           lambda a: engine_memory(catalog, a, "auto"))


def test_long_prompts_at_400_requests_a_second_split_into_fewer_p5s(catalog: Catalog) -> None:
    """24,000 requests a minute of 8,192 prompt + 256 output tokens, first token ≤ 2 s, 100 tokens/s per user.

    Prefill: λ = 400/s × 1.2 burst = 480 prompts/s. One 8,192-token prompt of Llama 3.1 70B is 1.2095e15 FLOPs
    (2 × matmul parameters × 8,192 + causal attention, 8.796e13 of it); on a TP 8 replica of H100 (1,979 dense FP8
    TFLOPS, vLLM's calibrated 44.05 % of it) the GEMMs take 1.1215e15 × 1.1153 (their depth at TP 8:
    gemm_depth_factor) ÷ (8 × 1,979e12 × 0.4405) = 0.1794 s and the attention 8.796e13 ÷ the same rate = 0.0126 s,
    plus 80 layers × 30.18 µs and 160 all-reduces of 8,192 × 8,192 × 2 B = 134 MB (2 × 7/8 × 134 MB ÷ 450 GB/s + 8 µs
    = 0.53 ms each, 84.7 ms): S_p = 0.2791 s (unrounded 0.27917). a = 480 × 0.27917 = 134.002 busy; 134
    cannot hold them; 135 run at 99.26 % with a p95 wait of 0.81 s, so TTFT p95 = 0.81 + 0.279 + 0.0096 = 1.10 s ≤ 2 s
    (before the MoE refit of vLLM's profile, 0.4401 and 30.25 µs: S_p 0.27935, a 134.09, wait 0.89 s, TTFT 1.18 s;
    a p95 wait at 99 % busy moves 10 % with 0.06 % of the pass time): 135 replicas, one
    per p5, + 1 spare machine = 136.
    KV transfer: 80 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 327,680 B a token × 8,192 = 2.684 GB, over the p5's
    400 GB/s of EFA (8 NICs, all the replica's) × 0.7 = 280 GB/s: 9.6 ms.
    Decode: a decode-only step at batch b (no prompt chunks) must stay ≤ 10 ms for 100 tokens/s. Each sequence
    adds its 8,320-token KV read (8,320 × 327,680 B ÷ 8 GPUs ÷ (3,350 GB/s × 0.8699) = 0.117 ms), its share of the
    160 all-reduces (2 × 7/8 × 8,192 × 2 B ÷ 450 GB/s each, 10.2 µs) and vLLM's 18.73 µs of host work a step:
    0.146 ms. The FP8 checkpoint keeps its LM head in BF16 (128,256 × 8,192 = 1.05e9 parameters at 2 B, one more
    byte each than FP8: 131 MB a GPU); 9.96 ms at 15, 10.11 ms at 16, so b = 15, 15 ÷ 9.96 ms = 1,506 tokens/s a
    replica; 480 × 256 = 122,880 tokens/s needed → ⌈81.6⌉ = 82 replicas + 1 spare = 83 machines. 136 + 83 = 219
    p5s against the colocated 1,313: a colocated replica prefills each prompt whole (two 4,096-token chunks,
    compute-bound) between its streams' decode steps, so at 2 streams one iteration in 128 carries the other's
    chunk and the mean step passes 10 ms; the colocated plan runs 1 stream a replica (83 % fewer machines split).
    (The engine profile figures are engines.toml's vllm@nvidia-hopper-hbm as fitted.)
    """
    search = _search(catalog, 24_000, 8192, 256, 100.0, 2.0)
    acc = catalog.accelerators["nvidia-h100-sxm5"]
    unit = unit_table(catalog).units["inst:aws-p5.48xlarge"]
    plan = search.plan(acc, unit)
    assert isinstance(plan, Plan)
    assert (plan.machines, plan.tensor_parallel, plan.batch_per_replica) == (1313, 8, 1)
    split = search.disaggregated(acc, unit, plan)
    assert isinstance(split, Disaggregation)
    rate = 8 * 1979e12 * 0.4405
    assert split.prefill.pass_seconds == pytest.approx((1.2095e15 - 8.796e13) * 1.1153 / rate + 8.796e13 / rate
                                                       + 80 * 30.18e-6 + 0.0847, abs=5e-4)
    assert split.prefill.replicas == 135
    a = 480 * split.prefill.pass_seconds
    assert 134 < a < 135 and math.isinf(wait_quantile(134, a, split.prefill.pass_seconds, 0.95))  # 134 cannot
    assert split.prefill.ttft_p95_s == pytest.approx(1.10, abs=0.01)
    assert split.transfer.bytes_per_request == 327_680 * 8192
    assert split.transfer.seconds == pytest.approx(2.684e9 / 280e9, rel=1e-3)
    device = device_for(acc, "fp8", unit.topology.link(8), engine_efficiency(catalog, acc, "auto"))
    curve, _ = search.curve(device, 8, 1)
    assert curve.seconds(15) <= 0.010 < curve.seconds(16)
    assert curve.seconds(16) - curve.seconds(15) == pytest.approx(
        8320 * 327_680 / 8 / (3350e9 * 0.8699) + 160 * 2 * 7 / 8 * 8192 * 2 / 450e9 + 18.73e-6, rel=0.01)
    assert split.decode.batch == 15
    assert split.decode.replicas == math.ceil(122_880 / (15 / curve.seconds(15))) == 82
    assert (split.prefill_machines, split.decode_machines, split.machines) == (136, 83, 219)
    assert split.network == "efa"
    assert split.offered
    assert split.reason.startswith("136 prefill + 83 decode machines (135 + 82 replicas of TP 8), 219 in all "
                                   "instead of 1313 colocated")


def test_a_unit_without_rdma_fabric_is_not_split(catalog: Catalog) -> None:
    search = _search(catalog, 24_000, 8192, 256, 100.0, 2.0)
    acc = catalog.accelerators["nvidia-h100-sxm5"]
    # an 8-GPU H100 machine no cluster network joins (Lambda's 8x H100 SXM)
    unit = next(u for u in unit_table(catalog).units.values() if u.accelerator == acc.id
                and u.topology.scale_out is None and not u.single and u.node == 8)
    plan = search.plan(acc, unit)
    assert isinstance(plan, Plan)
    split = search.disaggregated(acc, unit, plan)
    assert isinstance(split, str)
    assert "RDMA-class fabric" in split


# --- a consultation: offered, and only considered ----------------------------------------------------------------

LARGE = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-70b"},
         "precision": {"weights": "fp8", "context_tokens": 16384},
         "inference": {"requests_per_minute": 24000, "input_tokens": 8192, "output_tokens": 256, "ttft_max_s": 2.0,
                       "min_tokens_per_s_per_user": 100},
         "deployment": {"where": "cloud", "providers": ["aws"], "reservations": False},
         "constraints": {"vendors": ["nvidia"]}}
# on-demand only (no 3-year reservation): AWS publishes a p5 reservation but none for p6-b200, so with them
# the H100 plan would win on its rate, not on the B200's capacity this case checks
SMALL = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-8b"},
         "inference": {"requests_per_minute": 60, "input_tokens": 500, "output_tokens": 200},
         "deployment": {"where": "cloud", "providers": ["aws"]}}


def test_the_split_is_offered_with_its_pools_and_cost(advisor: Advisor) -> None:
    result = advisor.consult(parse_answers(LARGE))
    p5 = next(r for r in [*result.recommendations, *result.runners_up]
              if r.instance is not None and r.instance.id == "aws-p5.48xlarge")
    d = p5.disaggregated
    assert d is not None and d.offered
    assert (d.prefill_machines, d.decode_machines, d.machines, d.colocated_machines) == (136, 83, 219, 1313)
    assert d.usd_per_month == pytest.approx(p5.cost.usd_per_month * 219 / 1313, abs=0.01)
    found = next(w for w in result.warnings if w.rule == "PD.split")
    assert found.severity == "advice"
    text = " ".join([found.message, *found.details])
    assert "136 prefill + 83 decode machines" in text
    assert f"${d.usd_per_month:,.0f} a month instead of ${p5.cost.usd_per_month:,.0f}" in text


def test_the_headline_states_the_recommended_options_split(advisor: Advisor) -> None:
    # the ranking prices the colocated plan (198 p6-b200 machines: each sequence holds its own prompt and output of
    # KV cache, not the full context; its steps carry the other streams' whole prompt chunks); the split of the same
    # unit, 79 prefill + 21 decode = 100 machines, is said where it is read first, at the same price per machine.
    # (172 and 68 + 21 = 89 before the B200 ran its FP8 matmuls at 0.80 of the datasheet rate, accelerators.toml:
    # the 8k-token prompts are compute-bound, the decode side is not)
    result = advisor.consult(parse_answers(LARGE))
    top = result.recommendations[0]
    d = top.disaggregated
    assert top.instance is not None and top.instance.id == "aws-p6-b200.48xlarge"
    assert d is not None and d.offered and (d.prefill_machines, d.decode_machines, d.machines,
                                            d.colocated_machines) == (79, 21, 100, 198)
    assert top.cost.usd_per_month is not None and d.usd_per_month is not None
    assert d.usd_per_month == pytest.approx(top.cost.usd_per_month * 100 / 198, abs=0.01)
    assert result.headline is not None
    assert result.headline.endswith(f"Served disaggregated, the same unit needs 100 machines instead of 198 (79 "
                                     f"prefill + 21 decode) for ${d.usd_per_month:,.0f} a month: see PD.split.")
    # an option whose split is only considered adds nothing to the headline
    small = advisor.consult(parse_answers(SMALL))
    assert small.headline is not None and "disaggregated" not in small.headline


def test_a_small_deployment_only_notes_the_split(advisor: Advisor) -> None:
    # 1 request/s of 500 + 200 tokens: one 8B replica carries it; failover makes the colocated plan 2 machines,
    # below the 4 where a split is weighed (1 + 1 spare prefill and 1 + 1 spare decode would be 4)
    result = advisor.consult(parse_answers(SMALL), top=30)
    p5 = next(r for r in [*result.recommendations, *result.runners_up]
              if r.instance is not None and r.instance.id == "aws-p5.48xlarge")
    d = p5.disaggregated
    assert d is not None and not d.offered
    assert d.colocated_machines == p5.unit.machines == 2
    assert d.machines == 4
    assert "below the 4 where a split pays" in d.reason
    note = next(w for w in result.warnings if w.rule == "PD.considered")
    assert note.severity == "note"
    assert not any(w.rule == "PD.split" for w in result.warnings)


def test_without_a_request_rate_nothing_is_weighed(advisor: Advisor) -> None:
    result = advisor.consult(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"}}))
    assert all(r.disaggregated is None for r in result.recommendations)
    assert not any(w.rule.startswith("PD.") for w in result.warnings)


def test_the_cli_json_carries_the_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "answers.toml"
    path.write_text('workload = "inference"\nstage = "production"\n[model]\nname = "llama-3.1-8b"\n'
                    '[inference]\nrequests_per_minute = 60\ninput_tokens = 500\noutput_tokens = 200\n'
                    '[deployment]\nwhere = "cloud"\nproviders = ["aws"]\n', encoding="utf-8")
    assert main(["recommend", "--answers", str(path), "--format", "json", "--top", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    d = out["recommendations"][0]["disaggregated"]
    assert d["offered"] is False
    assert d["reason"].startswith("no network joins this unit's machines")  # the cheapest: single-chip inf2
    assert main(["schema", "recommend"]) == 0
    schema = capsys.readouterr().out
    assert "Disaggregated" in schema and "kv_transfer_ms" in schema


def test_a_prefill_pool_beyond_the_search_bound_is_said_not_crashed(advisor: Advisor) -> None:
    # found by the answers fuzz: 1,853,511 requests a minute and no first-token target. On some units (P100
    # servers) the prefill pool would pass MAX_POOL_REPLICAS, prefill_pool returns None without a target to
    # blame, and the reason used to format the missing target (TypeError inside rule H1.inference)
    assert prefill_pool(1.0, 1, 1e9, None, 0.0) is None  # 1e9 busy replicas: beyond the bound
    result = advisor.consult(parse_answers({"inference": {"requests_per_minute": 1853511.0}}))
    assert result.feasible and result.recommendations


def test_a_bought_split_is_priced_as_its_colocated_purchase(advisor: Advisor, catalog: Catalog) -> None:
    # LARGE on premises: 1,313 HGX H100 servers colocated, 136 prefill + 83 decode = 219 split. Each server: 8 ×
    # H100 SXM5 80GB (catalog price) and its host, 10.2 kW; the split is joined by fabric (pd_capex_usd − 219 servers).
    # It is priced as the colocated purchase (issue 40): price + fabric − resale (the same shares: H100s at their age
    # after 3 years, hosts and network at scrap) + site (kW × $184.06 a month × 36) + power (kW × 1.3 PUE × $0.12/kWh
    # × 26,280 h × the usage profile's 0.5 busy share, 13,140 h), over 36 months. Before, the resale was left out.
    answers = {**LARGE, "deployment": {"where": "on_prem"}}
    result = advisor.consult(parse_answers(answers), top=30)
    h100 = next(r for r in [*result.recommendations, *result.runners_up]
                if r.purchase and r.accelerator.id == "nvidia-h100-sxm5")
    d = h100.disaggregated
    assert d is not None and d.offered and d.capex_usd is not None and d.usd_per_month is not None
    assert (h100.unit.machines, d.machines) == (1313, 219)
    acc = catalog.accelerators["nvidia-h100-sxm5"]
    assert acc.purchase_price_usd is not None
    cards = 219 * 8 * acc.purchase_price_usd.value  # 219 × 8 × $30,000 = $52,560,000
    assert cards == 52_560_000
    assert h100.cost.capex_usd is not None
    servers = 219 * (h100.cost.capex_usd - (h100.cost.fabric_usd or 0.0)) / 1313  # $285,000 a server
    assert servers == pytest.approx(219 * 285_000)
    fabric = d.capex_usd - servers
    share, host_share = economics(catalog).resale_shares(accelerator_age(acc, today(), h100.cost.price_kind), 3.0)
    resale = cards * share + (servers - cards + fabric) * host_share
    kw = 219 * 10.2
    assert h100.cost.power_kw == pytest.approx(1313 * 10.2)
    site = kw * 184.06 * 36
    power = kw * 1.3 * 0.12 * 26_280 * 0.5
    assert d.usd_per_month == pytest.approx((servers + fabric - resale + site + power) / 36, abs=0.01)
    # the colocated figure carries the same shares of its own parts
    colocated = -sum(p.usd for p in h100.decision_cost.parts if p.part == "resale")
    assert colocated == pytest.approx(1313 * 8 * 30_000 * share + (h100.cost.capex_usd - 1313 * 8 * 30_000)
                                      * host_share, rel=1e-9)
    # before (issue 40) the split left its resale out: the month cost resale ÷ 36 more than this
    assert resale / 36 > 100_000
