"""The large-batch serving calibration (tests/data/serving_calibration.toml) as the planner uses it.

Each published row is labelled with the runtime its submitter ran, every in-sample row lies inside the band its
engine profile prints, and the round the fit never saw stays within issue 17's targets. The figures come from
tests/serving_calibration_model.py, the same code tests/benchmarks/bench_serving.py prints.
"""

from __future__ import annotations

import statistics

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.engine_names import canonical_engine
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.planning.serving import efficiency_of, engine_efficiency, profile_for
from tests.calibration_model import quantiles
from tests.serving_calibration_model import ROWS, error, load_latency, predict

OFFLINE = [r for r in ROWS if r.scenario == "Offline"]


def test_each_row_names_the_tensorrt_llm_runtime_its_submitter_ran() -> None:
    # NVIDIA's MLPerf harnesses: C++ executor on built engines for Llama 2 70B, Llama 3.1 8B/405B and Mixtral,
    # the PyTorch backend (trtllm-serve endpoint) for DeepSeek-R1; the perf overview's trtllm-bench --backend pytorch
    nvidia = [r for r in ROWS if r.engine.startswith("tensorrt-llm")]
    mlperf = [r for r in nvidia if r.round.startswith("mlperf-")]
    assert {r.engine for r in mlperf if r.model != "deepseek-r1"} == {"tensorrt-llm-engine"}
    assert {r.engine for r in mlperf if r.model == "deepseek-r1"} == {"tensorrt-llm"}
    assert {r.engine for r in nvidia if r.round == "trtllm-1.0"} == {"tensorrt-llm"}


def test_users_name_either_runtime() -> None:
    assert canonical_engine("TensorRT-LLM") == canonical_engine("trtllm-serve") == "tensorrt-llm"
    assert canonical_engine("trtllm engine") == canonical_engine("TensorRT-LLM-cpp") == "tensorrt-llm-engine"


@pytest.mark.parametrize("row", [r for r in OFFLINE if r.fitted], ids=lambda r: r.label)
def test_every_fitted_row_lies_in_its_profiles_band(row: object, catalog: Catalog) -> None:
    acc = catalog.accelerators[row.gpu]  # type: ignore[attr-defined]
    profile = profile_for(catalog, acc, row.engine)  # type: ignore[attr-defined]
    assert profile is not None
    slow, fast = (predict(row, catalog, efficiency=efficiency_of(profile, w))  # type: ignore[arg-type]
                  for w in ("slow", "fast"))
    assert slow <= row.measured * 1.001 and row.measured * 0.999 <= fast  # type: ignore[attr-defined]


def test_each_runtimes_profile_predicts_its_own_rows_and_not_the_others(catalog: Catalog) -> None:
    # H200 SXM, 70B-class Llama at FP8: MLPerf v5.1 Llama 2 70B ×8 (C++ executor) and the perf overview's Llama 3.3
    # 70B at 1,000/1,000 tokens (trtllm-bench, PyTorch backend). Each profile predicts its own runtime's row within
    # 15 %; the executor's profile is 10-60 % faster than the PyTorch backend's on both (12 % on the decode-heavy
    # MLPerf row, 28 % on the trtllm-bench one)
    acc = catalog.accelerators["nvidia-h200-sxm"]
    cpp, py = (engine_efficiency(catalog, acc, e) for e in ("tensorrt-llm-engine", "tensorrt-llm"))
    assert cpp is not None and py is not None
    mlperf = next(r for r in OFFLINE if r.fitted and r.gpu == acc.id and r.model == "llama-2-70b" and r.gpus == 8)
    bench = next(r for r in OFFLINE if r.round == "trtllm-1.0" and r.gpu == acc.id and r.model == "llama-3-70b"
                 and r.precision == "fp8" and (r.input, r.output) == (1000, 1000))
    assert (mlperf.engine, bench.engine) == ("tensorrt-llm-engine", "tensorrt-llm")
    for row, own, other in ((mlperf, cpp, py), (bench, py, cpp)):
        assert abs(error(predict(row, catalog, efficiency=own), row.measured)) < 0.15
        ratio = predict(row, catalog, efficiency=cpp) / predict(row, catalog, efficiency=py)
        assert 1.10 < ratio < 1.6, (row.label, ratio)
        assert own is not other


def test_the_held_out_round_stays_within_its_band(catalog: Catalog) -> None:
    # MLPerf v5.0, never fitted: issue 17's targets, median ≤ 10 %, p90 ≤ 25 % (9.0 % and 11.2 %: prompts
    # prefilled whole, GEMMs at their depth, the MI300X's sustained share; 14.5 % and 18.3 % before, when the
    # thin spread of prompts over every iteration and the depth-blind GEMM rate were fitted)
    errors = [abs(error(predict(r, catalog), r.measured)) for r in OFFLINE if r.held_out]
    assert len(errors) == 9
    median, p90, n = quantiles(errors)
    assert n == 9 and median <= 0.10 and p90 <= 0.25
    assert statistics.median(errors) == median


def test_published_sglang_rows_back_the_deepseek_finding(catalog: Catalog) -> None:
    # rule E.mla-moe-open-engines quotes these rows: 2025 SGLang at 256-2,400 prompts measured DeepSeek-V3/R1 at most
    # 3.4k tokens/s on 8 H200s and 1.1k on 8 MI300Xs, 1.8-10.1x below the model (1.7-10x before the routed experts
    # read at the rate 2026 SGLang measures, engines.toml expert_bandwidth_efficiency: the older stack falls further
    # behind the newer one); the same sources' dense Llama rows are within about 11 %
    reported = [r for r in ROWS if r.round == "sglang-published"]
    assert reported and {r.engine for r in reported} == {"sglang"} and not any(r.fitted for r in reported)
    deepseek = [r for r in reported if r.model == "deepseek-r1"]
    assert max(r.measured for r in deepseek if r.gpu == "nvidia-h200-sxm") < 3_450
    assert max(r.measured for r in deepseek if r.gpu == "amd-mi300x") < 1_100
    ratios = [predict(r, catalog) / r.measured for r in deepseek]
    assert 1.8 < min(ratios) and max(ratios) < 10.2
    dense = [abs(error(predict(r, catalog), r.measured)) for r in reported if r.model != "deepseek-r1"]
    assert len(dense) == 8 and statistics.median(dense) < 0.12


def test_current_sglang_at_moderate_concurrency_backs_the_finding_too(catalog: Catalog) -> None:
    # and 2026 SGLang (InferenceX) at 32-64 requests at once: within about 5 % median on 10 NVIDIA H200/B200/B300 rows
    # (to which SGLang's MoE terms are fitted: the routed experts' read rate, engines.toml expert_bandwidth_efficiency
    # 0.80-0.81, and no cost per MoE layer beyond the GEMM count), 12 % at most; MI325X's 32 and 64 request rows,
    # held out of its MoE fit, 1 % and 23 % above the model (were 7 % and 32 %)
    rows = [r for r in ROWS if r.round == "inferencex" and r.engine == "sglang" and 32 <= r.batch <= 64]
    assert rows and all(r.reported and not r.fitted for r in rows)
    nvidia = [error(predict(r, catalog), r.measured) for r in rows if r.gpu.startswith("nvidia-")]
    assert len(nvidia) == 10 and statistics.median(map(abs, nvidia)) < 0.05 and max(map(abs, nvidia)) < 0.12
    amd = [error(predict(r, catalog), r.measured) for r in rows if r.gpu == "amd-mi325x"]
    assert len(amd) == 2 and not any(r.moe_profile_fit for r in rows if r.gpu == "amd-mi325x")
    assert -0.02 < min(amd) and max(amd) < 0.25


def test_time_per_output_token_at_the_published_concurrency(catalog: Catalog) -> None:
    # latency under load against published figures: InferenceX's mean TPOT of DeepSeek-R1 on SGLang at 32-64
    # requests at once, on 8 H200, B200 or B300: within 4 % median, 20 % at most. The worst is 4 B300 at EP 4
    # (+19 %, was +9 %): an expert-parallel MoE layer now waits for its busiest rank (uniform routing's floor, 1.10
    # more distinct experts and 1.11 more token pairs than the mean rank at 32 requests over 4 ranks); the TTFT is
    # printed, not held: bench_serving.py prints both
    rows = [r for r in ROWS if r.round == "inferencex" and r.engine == "sglang" and r.gpu.startswith("nvidia-")]
    errors = [load_latency(r, catalog).tpot_p50_s * 1e3 / r.tpot_ms - 1 for r in rows]
    assert len(errors) == 10
    assert statistics.median(map(abs, errors)) < 0.04 and max(map(abs, errors)) < 0.20


def test_the_external_judges_stay_out_of_every_fit() -> None:
    # MLPerf v6.0 and later and NVIDIA NIM's tables judge the model from outside (tests/data/judges): no calibration
    # row may carry their rounds, and a judge row is never a fitted one even if it were handed to the fitter
    from tests.benchmarks.fit_engines import serving_rows
    from tests.serving_calibration_model import JUDGE_ROUNDS, Row, judge_rows

    assert not [r.label for r in ROWS if str(r.round).startswith(JUDGE_ROUNDS)]
    assert not any(r.judge for r in ROWS)
    judge = Row({"round": "mlperf-v6.0", "model": "llama-2-70b"})
    assert judge.judge and not judge.fitted
    assert all(r.judge and not r.fitted for r in judge_rows())
    assert not any(r.judge for r in serving_rows(load_catalog(user_dir=None)))


def test_moe_terms_are_fitted_to_their_engines_rows_and_hold_out_the_busier_amd_rows(catalog: Catalog) -> None:
    # SGLang and TensorRT-LLM run DeepSeek-R1's routed experts at a read rate and a cost per MoE layer their dense
    # profiles do not show (engines.toml expert_bandwidth_efficiency, overhead_per_moe_layer_us), fitted by
    # fit_engines.py to InferenceX's rows flagged moe_profile_fit: every NVIDIA row (32-128 requests) and MI325X's
    # 4-16 request rows; MI325X's 32 and 64 request rows stay out as the check. The MI325X rows come within 16 % on
    # throughput and 10 % on TPOT (fitted) and 23 % / 16 % (held out), where the carried-over vLLM profile without the
    # terms is 40-100 % off
    import dataclasses

    from gpuadvisor.rules.planning.serving import engine_efficiency

    fit_rows = [r for r in ROWS if r.moe_profile_fit]
    assert len(fit_rows) == 16 and all(r.round == "inferencex" and r.reported and not r.fitted for r in fit_rows)
    amd_fit = [r for r in fit_rows if r.gpu == "amd-mi325x"]
    assert sorted(r.batch for r in amd_fit) == [4, 8, 16]
    held = [r for r in ROWS if r.round == "inferencex" and r.gpu == "amd-mi325x" and not r.moe_profile_fit]
    assert sorted(r.batch for r in held) == [32, 64]
    eff = engine_efficiency(catalog, catalog.accelerators["amd-mi325x"], "sglang")
    assert eff is not None and eff.expert_bandwidth_efficiency is not None
    assert 20 < eff.overhead_per_moe_layer_us < 100
    bare = dataclasses.replace(eff, overhead_per_moe_layer_us=0.0, expert_bandwidth_efficiency=None)
    for rows, tput, tpot in ((amd_fit, 0.17, 0.10), (held, 0.24, 0.16)):
        for r in rows:
            after = abs(error(predict(r, catalog), r.measured))
            before = abs(error(predict(r, catalog, efficiency=bare), r.measured))
            assert after < tput and after < before, r.label
            assert abs(load_latency(r, catalog).tpot_p50_s * 1e3 / r.tpot_ms - 1) < tpot, r.label
    # on NVIDIA the experts read faster than the dense carry-over (0.80 of the bandwidth against vLLM's 0.65) and
    # no cost per MoE layer is left beyond the GEMM count (rules/sizing/kernels.py)
    nv = engine_efficiency(catalog, catalog.accelerators["nvidia-h200-sxm"], "sglang")
    assert nv is not None and nv.expert_bandwidth_efficiency is not None
    assert nv.expert_bandwidth_efficiency > nv.bandwidth_efficiency and nv.overhead_per_moe_layer_us < 1.0
