"""`gpuadvisor estimate` through the real command line entry point: output, JSON fields, and every bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.rules.estimate.consult import EstimateResult
from gpuadvisor.tui.cli import main

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


@pytest.fixture(autouse=True)
def _no_user_overlay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUADVISOR_CONFIG_DIR", str(tmp_path / "config"))


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["estimate", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    EstimateResult.model_validate(data)  # the output is what the published schema describes
    return data


def test_text_output_llama_8b_on_4090(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "llama-3.1-8b", "--gpu", "RTX 4090"]) == 0
    out = capsys.readouterr().out
    assert "Llama 3.1 8B on 1 × NVIDIA GeForce RTX 4090" in out
    assert "Memory per GPU (GB = 10^9 bytes)" in out
    # 8,030,261,248 parameters × 2 bytes = 16.06 GB of weights; GQA KV cache 2 × 32 × 8 × 128 × 2 = 131,072 B/token
    assert "16.06 GB" in out and "131,072 bytes/token" in out
    assert "fits" in out and "yes" in out
    assert "tokens/s" in out and "time to first token" in out
    # a GeForce card runs llama.cpp by default, with its calibrated profile instead of the engine-blind 0.75
    assert "Assumptions" in out and "engine.llama.cpp@nvidia-ada-gddr" in out
    assert "engine = llama.cpp (by deployment" in out


def test_json_inference_fields(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-3.1-8b", "--gpu", "nvidia-rtx-4090", "--context", "8192", "--batch", "2")
    # every byte is resident (total); 7,504,924,672 are multiplied (the 128,256 × 4,096 input table is a lookup)
    assert d["parameters"]["total"] == 8_030_261_248 and d["parameters"]["active"] == 7_504_924_672
    # one token multiplies through all but the untied 128,256 × 4,096 input table: 8,030,261,248 − 525,336,576
    assert d["parameters"]["active_per_token"] == 7_504_924_672
    assert d["kv_cache_bytes_per_token"] == 131_072
    # each of the 2 sequences holds its request, 500 prompt + 200 output tokens (capped by the 8,192 context)
    assert d["kv_cache_tokens_per_sequence"] == 700
    assert d["kv_cache_gb"] == pytest.approx(131_072 * 700 * 2 / 1e9)
    m = d["memory_gb"]
    assert m["weights"] == pytest.approx(16.06, abs=0.01) and m["kv_cache"] == pytest.approx(0.1835, abs=0.0001)
    assert m["total"] == pytest.approx(sum(m[k] for k in ("weights", "kv_cache", "activations", "gradients",
                                                          "optimizer_states", "runtime_overhead")))
    # an RTX 4090 holds 24 GiB (24,564 MiB in nvidia-smi): 25.77e9 bytes, sold as "24 GB" (issue 44)
    assert d["fits"] is True and m["capacity"] == pytest.approx(24 * 2**30 / 1e9) and m["capacity_as_sold"] == 24
    low, high = d["decode_tokens_per_s_range"]["low"], d["decode_tokens_per_s_range"]["high"]
    assert low < d["decode_tokens_per_s"] < high <= d["bandwidth_bound_tokens_per_s"]
    assert d["bound"] == "bandwidth" and d["ttft_s"] > 0 and d["prefill_tokens_per_s"] > 0
    assert set(d["error_band"]) == {"decode", "prefill"}
    ids = {a["id"]: a for a in d["assumptions"]}
    # the GeForce card gets llama.cpp (by deployment) and its calibrated profile, not the engine-blind factor
    assert d["setup"]["engine"] == "llama.cpp" and d["setup"]["engine_profile"] == "llama.cpp@nvidia-ada-gddr"
    assert "engine.llama.cpp@nvidia-ada-gddr" in ids and "decode_bandwidth_efficiency" not in ids
    assert d["error_band"]["decode"]["assumptions"] == ["engines.toml llama.cpp@nvidia-ada-gddr"]
    assert "headroom_fraction" in ids and "method.kv_cache" in ids
    assert d["costs"] and all(c["as_of"] for c in d["costs"])
    assert {"precision = bf16", "kv_precision = fp16"} <= set(d["defaults_applied"])


def test_cloud_offers_cheapest_first(capsys: pytest.CaptureFixture[str]) -> None:
    # the L4's offers: the cheapest GPU-hour heads the table (to the tenth of a cent); ties by provider, then sizes
    # as numbers (g2-standard-24 before 48 before 96)
    d = run_json(capsys, "--model", "qwen2.5-7b", "--gpu", "l4", "--batch", "32")
    keys = [(round(c["usd_per_gpu_hour"], 3), c["provider"], c["name"]) for c in d["costs"]]
    assert len(keys) > 5 and [k[0] for k in keys] == sorted(k[0] for k in keys)
    spot_g2 = [k[2] for k in keys if k[1] == "Google Cloud" and k[0] == 0.399]  # $0.80 / 2 GPUs, $1.60 / 4, …
    assert spot_g2 == ["g2-standard-24", "g2-standard-48", "g2-standard-96"]
    out = main(["estimate", "--model", "qwen2.5-7b", "--gpu", "l4"]), capsys.readouterr().out
    assert "7.62B total, 7.07B multiplied per token" in out[1]


def test_format_json_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    # `--format json` as `recommend` spells it prints what --json prints; asking for both text and JSON is refused
    assert main(["estimate", "--model", "qwen2.5-7b", "--gpu", "l4", "--format", "json"]) == 0
    as_format = json.loads(capsys.readouterr().out)
    assert as_format == run_json(capsys, "--model", "qwen2.5-7b", "--gpu", "l4")
    assert main(["estimate", "--model", "qwen2.5-7b", "--gpu", "l4", "--json", "--format", "text"]) == 2
    assert "--json and --format text: give one" in capsys.readouterr().err


def test_ambiguous_gpu_lists_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "llama-3.1-8b", "--gpu", "H100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuadvisor: error: --gpu:") and err.count("\n") == 1
    for candidate in ("nvidia-h100-sxm5", "nvidia-h100-pcie", "nvidia-h100-nvl"):
        assert candidate in err


def test_bare_params_are_synthesized(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--params", "70B")
    assert d["model"]["source"] == "synthesized"
    assert abs(d["parameters"]["total"] - 70e9) / 70e9 < 0.02
    assert d["fits"] is None and d["decode_tokens_per_s"] is None  # no GPU: memory only
    assert any("synthesized" in w for w in d["warnings"])
    assert any(a["id"] == "method.synthesized_shape" for a in d["assumptions"])


def test_model_config_file(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model-config", str(CONFIGS / "llama-3.1-8b.json"))
    assert d["parameters"]["total"] == 8_030_261_248
    assert d["model"]["source"] == "config.json"


@pytest.mark.parametrize(("name", "total"), [
    ("bloom-176b.json", 176_247_271_424),  # BLOOM: n_layer, n_head, ALiBi, word-embedding LayerNorm
    ("bloomz-560m.json", 559_214_592),  # BLOOM with n_embed / num_attention_heads
    ("opt-350m.json", 331_196_416),  # OPT: ffn_dim, 2 offset position rows, embedding projections
    ("gpt-j-6b.json", 6_050_882_784),  # GPT-J: n_embd, n_inner null, LM-head bias
    ("pythia-70m.json", 70_426_624),  # GPT-NeoX
    ("mpt-7b.json", 6_649_286_656),  # MPT: d_model, n_heads, n_layers, expansion_ratio, bias-free
    ("falcon-40b-refinedweb.json", 41_303_293_952),  # Falcon: n_head_kv, n_layer
    ("gpt2.json", 124_439_808),  # GPT-2: n_embd, n_positions
])
def test_config_option_on_every_family(capsys: pytest.CaptureFixture[str], name: str, total: int) -> None:
    d = run_json(capsys, "--config", str(CONFIGS / name))
    assert d["parameters"]["total"] == total


def test_config_with_unknown_type_notes_the_fields_read(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--config", str(CONFIGS / "unknown_aliases.json"))
    assert d["model"]["attention"] == "MQA"  # multi_query
    texts = " ".join(str(a) for a in d["assumptions"])
    assert "my_starcoder_fork" in texts and "n_layer" in texts


def test_config_missing_field_is_an_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--config", str(CONFIGS / "unknown_missing_heads.json")]) == 2
    err = capsys.readouterr().err
    assert "unknown_missing_heads.json" in err and "'num_attention_heads' is missing" in err
    assert "Traceback" not in err


def test_training_gpu_hours(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-3.1-8b", "--workload", "training", "--gpu", "nvidia-h100-sxm5",
                 "--gpus", "8", "--zero", "3", "--tokens", "1T")
    # The training step (rules/sizing/training.py). The H100's GEMMs: its achievable 794.5 BF16 TFLOPS (MAMF) × the
    # stack's 0.68 = 540.26 TFLOPS. The 4M-token batch is 1,024 sequences of 4,096: 128 micro-batches of one per
    # GPU, no recomputation needed with ZeRO-3 over 8. One micro-batch: GEMMs 6 × 4096 × 7,504,924,672 matmul
    # parameters × depth 1.10024 ÷ 540.26e12 = 0.37561 s; causal attention 6 × 32 × 4096 × 4096 FLOPs a token ×
    # 4096 × 2.6 ÷ 540.26e12 = 0.06350 s; elementwise 22 B × 4096 × 4096 × 32 ÷ 3,350 GB/s = 0.00352 s.
    # FSDP gathers twice and reduce-scatters once a micro-batch: (2 + 2 + 4) B × 8,030,261,248 × 7/8 ÷ 450 GB/s of
    # NVLink = 0.12492 s, of which 0.18 × 0.44264 s is hidden: 0.04524 s exposed.
    rate = 794.5e12 * 0.68
    gemm = 6 * 4096 * 7_504_924_672 * 1.1002385 / rate
    attention = 6 * 32 * 4096 * 4096 * 4096 * 2.6 / rate
    elementwise = 22 * 4096 * 4096 * 32 / 3350e9
    micro = gemm + attention + elementwise
    fsdp = 8 * 8_030_261_248 * 7 / 8 / 450e9 - 0.18 * micro
    step = d["training_step"]
    assert (micro, fsdp) == (pytest.approx(0.44264, rel=1e-4), pytest.approx(0.04524, rel=1e-3))
    assert step["compute"] == pytest.approx(128 * micro, rel=1e-5)
    assert step["exposed_data_parallel"] == pytest.approx(128 * fsdp, rel=1e-4)
    assert step["bubble"] == 0 and step["tokens"] == 1024 * 4096
    assert d["setup"]["gradient_accumulation"] == 128 and d["setup"]["recompute"] == "none"
    # the run: 1T tokens at the step's rate; interruptions take 8 GPUs × 1.97e-5 a GPU-hour × 0.3 h of the time
    wall = 1e12 / (step["tokens"] / step["seconds"])
    hours = wall * 8 / 3600 / (1 - 8 * 1.97e-5 * 0.3)
    assert d["training_gpu_hours"] == pytest.approx(hours)
    assert d["training_days"] == pytest.approx(hours / 8 / 24)
    assert d["setup"]["training_mfu"] == pytest.approx(6 * 7_504_924_672 * 1e12 / (wall * 8 * 989.4e12), rel=1e-4)
    assert d["training_gpu_hours_range"]["low"] < hours < d["training_gpu_hours_range"]["high"]
    m = d["memory_gb"]
    # ZeRO-3 over 8: (2 + 2 + 12) B × 8.03B ÷ 8 = 16.06 GB of weights, gradients and optimizer states per GPU
    assert m["weights"] + m["gradients"] + m["optimizer_states"] == pytest.approx(16 * 8.030261248 / 8)
    assert d["setup"]["data_parallel"] == 8 and d["setup"]["zero_stage"] == 3
    assert all(c["usd_per_run"] > 0 for c in d["costs"])


def test_qlora_7b_fits_a_4090(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-2-7b", "--workload", "finetune", "--method", "qlora", "--gpu", "4090",
                 "--context", "4096")
    assert d["fits"] is True
    assert d["precision"]["weights"] == "nf4"
    assert d["parameters"]["trainable"] == 39_976_960  # rank 16 on every projection


def test_full_adamw_7b_does_not_fit_an_80_gb_card(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-2-7b", "--workload", "training", "--gpu", "nvidia-a100-sxm-80gb")
    assert d["fits"] is False
    assert any(w.startswith("H1:") for w in d["warnings"])
    note = next(a for a in d["assumptions"] if a["id"] == "method.training_bytes")
    assert "16 bytes/param" in note["text"] and "18" in note["text"]


def test_serving_capacity_002_q4(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-3.1-70b", "--precision", "awq", "--gpu", "nvidia-a100-sxm-80gb",
                 "--batch", "32", "--requests-per-min", "1000", "--output-tokens", "200")
    s = d["serving"]
    assert s["tokens_per_s_needed"] == pytest.approx(1000 * 200 / 60)
    assert s["tokens_per_s_planned"] == pytest.approx(4000)
    assert s["replicas"] == -(-4000 // s["tokens_per_s_per_replica"])


def test_tensor_parallel_over_pcie_warns(capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM splits by tensor parallelism (llama.cpp, the desk-side default, splits by layers: no PCIe all-reduce)
    d = run_json(capsys, "--model", "llama-3.1-8b", "--gpu", "nvidia-rtx-4090", "--gpus", "2", "--engine", "vllm")
    assert d["setup"]["tensor_parallel"] == 2
    # the rule packs' verdicts on the layout (rules W3, H5 and H6), not copies of them
    for rule in ("W3: ", "H5: ", "H6: "):
        assert any(w.startswith(rule) for w in d["warnings"]), rule


def test_no_published_peak_means_no_prefill_figure(capsys: pytest.CaptureFixture[str]) -> None:
    # Apple publishes bandwidth (M2 Ultra 800 GB/s) but no dense FP16 rate: decode is estimated, TTFT is not.
    d = run_json(capsys, "--model", "llama-2-7b", "--gpu", "M2 Ultra")
    assert d["decode_tokens_per_s"] > 0 and d["ttft_s"] is None and "prefill" not in d["error_band"]
    assert any("no dense" in w for w in d["warnings"])


def test_precision_matched_loosely(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-3.1-8b", "--precision", "Q4_K_M", "--gpu", "4090")
    assert d["precision"]["weights"] == "q4_k_m" and d["precision"]["weights_bits"] == 4.85


BAD = [
    (["--params=-5B"], "--params"),
    (["--params", "-5B"], "--params"),
    (["--params", "0"], "--params"),
    (["--params", "seventy"], "--params"),
    (["--params", "7B", "--context", "0"], "--context"),
    (["--params", "7B", "--context", "abc"], "--context"),
    (["--params", "7B", "--batch=-2"], "--batch"),
    (["--params", "7B", "--gpus", "0"], "--gpus"),
    (["--params", "7B", "--tp", "3"], "--tp"),
    (["--params", "7B", "--gpus", "3", "--tp", "2"], "--gpus"),
    (["--params", "7B", "--pp", "500"], "--pp"),
    (["--params", "7B", "--workload", "training", "--zero", "4"], "--zero"),
    (["--params", "7B", "--workload", "training", "--tokens", "-1T"], "--tokens"),
    (["--params", "7B", "--workload", "serve"], "--workload"),
    (["--params", "7B", "--workload", "finetune", "--method", "dora"], "--method"),
    (["--params", "7B", "--workload", "training", "--optimizer", "adam"], "--optimizer"),
    (["--params", "7B", "--utilization", "1.5"], "--utilization"),
    (["--model", "no-such-model"], "--model"),
    (["--params", "7B", "--gpu", "no-such-gpu"], "--gpu"),
    (["--params", "7B", "--gpu", "H100"], "--gpu"),
    (["--params", "7B", "--precision", "fp7"], "--precision"),
    (["--params", "7B", "--kv-precision", "awq"], "--kv-precision"),
    (["--params", "7B", "--precision", "tf32"], "--precision"),
    (["--model-config", str(CONFIGS / "malformed.json")], "--model-config"),
    (["--model-config", str(CONFIGS / "missing-file.json")], "--model-config"),
    (["--params", "7B", "--workload", "finetune", "--method", "qlora", "--precision", "fp32"], "--method qlora"),
    (["--params", "7B", "--workload", "finetune", "--method", "lora", "--precision", "nf4"], "--method lora"),
    (["--params", "7B", "--workload", "training", "--method", "qlora"], "--method qlora"),
    (["--params", "7B", "--workload", "training", "--precision", "q4_k_m"], "--precision"),
    (["--params", "7B", "--tokens", "1T"], "--tokens"),
    (["--params", "7B", "--optimizer", "sgd"], "--optimizer"),
    (["--params", "7B", "--no-checkpointing"], "--no-checkpointing"),
    (["--params", "7B", "--workload", "training", "--kv-precision", "fp8"], "--kv-precision"),
    (["--params", "7B", "--model", "llama-3.1-8b"], "--model"),
    (["--params", "7B", "--context", "100", "--input-tokens", "200"], "--input-tokens"),
    ([], "--model"),
]


@pytest.mark.parametrize(("args", "flag"), BAD, ids=[" ".join(a) or "nothing" for a, _ in BAD])
def test_bad_input_is_one_line_naming_the_flag(args: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("gpuadvisor: error: ") and captured.err.count("\n") == 1, captured.err
    assert flag in captured.err
    assert "Traceback" not in captured.err


def test_estimate_path_does_not_import_textual() -> None:
    code = ("import sys; from gpuadvisor.tui.cli import main; "
            "rc = main(['estimate', '--params', '7B', '--gpu', 'nvidia-rtx-4090', '--json']); "
            "heavy = [m for m in ('textual', 'rich') if m in sys.modules]; "
            "print(rc, heavy, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "0 []"


def test_schema_describes_gb_and_core_fields() -> None:
    schema = EstimateResult.model_json_schema()
    assert "10^9 bytes" in schema["description"]
    for name in ("parameters", "kv_cache_bytes_per_token", "memory_gb", "fits", "decode_tokens_per_s",
                 "prefill_tokens_per_s", "ttft_s", "training_gpu_hours", "costs", "error_band", "assumptions"):
        assert name in schema["properties"], name


def test_gpt_oss_20b_on_4090_defaults_to_its_published_mxfp4(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "gpt-oss-20b", "--gpu", "RTX 4090"]) == 0
    out = capsys.readouterr().out
    # 19,110,297,600 expert-matrix parameters x 4.25/8 B + 1,804,459,584 others x 2 B = 13.76 GB (OpenAI: 12.8 GiB)
    assert "weights mxfp4" in out and "13.76 GB" in out and "precision = mxfp4" in out
    assert "12 local layers (window 128)" in out
    # a request of 500 + 200 tokens: 12 full layers x 2 x 8 x 64 x 2 B x 700 + 12 sliding layers x 2,048 B x 128
    # = 17,203,200 + 3,145,728 B = 0.0203 GB
    assert "0.0203 GB" in out
    d = run_json(capsys, "--model", "gpt-oss-20b", "--gpu", "RTX 4090", "--precision", "bf16")
    assert d["parameters"]["total"] == 20_914_757_184
    assert d["memory_gb"]["weights"] == pytest.approx(2 * 20_914_757_184 / 1e9)
    assert d["fits"] is False  # a dequantized bf16 copy (41.8 GB) does not fit 24 GB


def test_mfu_override(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "--model", "llama-3.1-8b", "--workload", "training", "--gpu", "nvidia-h100-sxm5",
                 "--gpus", "8", "--zero", "3", "--tokens", "1T", "--mfu", "0.2")
    # 6 × 7,504,924,672 (matmul parameters) × 1e12 ÷ (989.4 TFLOPS × 0.2) = 63,211 GPU-hours of progress ÷ goodput
    # 0.999953 (8 GPUs), no band: the user fixed the MFU
    assert d["training_gpu_hours"] == pytest.approx(6 * 7_504_924_672 * 1e12 / (989.4e12 * 0.2) / 3600
                                                    / (1 - 8 * 1.97e-5 * 0.3))
    assert d["setup"]["training_mfu"] == 0.2 and d["error_band"]["training"]["assumptions"] == ["--mfu"]


@pytest.mark.parametrize("flags,message", [
    (["--engine", "tgi"], "--engine: unknown engine 'tgi'"),
    (["--mfu", "1.5"], "--mfu must be at least 0.01 and at most 1 (got '1.5')"),
    (["--mfu", "0"], "--mfu must be greater than zero"),
    (["--mfu", "1e-300"], "--mfu must be at least 0.01 and at most 1 (got '1e-300')"),  # issue 41: was exit 70
    (["--mfu", "1e-320"], "--mfu must be at least 0.01 and at most 1 (got '1e-320')"),  # ... and a failed rule
])
def test_bad_engine_and_mfu(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    assert main(["estimate", "--model", "llama-3.1-8b", "--gpu", "nvidia-h100-sxm5", *flags]) == 2
    assert message in capsys.readouterr().err


def test_engine_choice_changes_decode(capsys: pytest.CaptureFixture[str]) -> None:
    """Ollama is llama.cpp; on an A100 it reaches far less of the bandwidth than vLLM (calibrated profiles)."""
    base = ["--model", "llama-3.1-8b", "--gpu", "nvidia-a100-sxm-80gb", "--batch", "1"]
    auto = run_json(capsys, *base)
    ollama = run_json(capsys, *base, "--engine", "Ollama")
    assert auto["setup"]["engine"] == "vllm" and ollama["setup"]["engine"] == "llama.cpp"
    assert ollama["setup"]["engine_profile"] == "llama.cpp@nvidia-ampere-hbm"
    assert ollama["decode_tokens_per_s"] < auto["decode_tokens_per_s"]


@pytest.mark.parametrize(("model", "active_b"), [("gpt-oss-120b", 5.13), ("gpt-oss-20b", 3.61)])
def test_json_active_per_token_leaves_out_the_embedding_lookup(capsys: pytest.CaptureFixture[str], model: str,
                                                               active_b: float) -> None:
    # The gpt-oss model card: 5.13B active for gpt-oss-120b and 3.61B for gpt-oss-20b, the 201,088 × 2,880 =
    # 579,133,440-parameter input table (a row lookup) left out; `active` is that figure (5.71B / 4.19B before).
    d = run_json(capsys, "--model", model, "--gpu", "nvidia-h100-sxm5")
    p = d["parameters"]
    assert round(p["active"] / 1e9, 2) == active_b and p["active_per_token"] == p["active"]
    assert p["total"] > p["active"] + 201_088 * 2_880  # memory counts every byte


def test_power_limit_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--model", "llama-2-70b", "--gpu", "nvidia-h200-sxm", "--gpus", "8", "--tp", "2", "--precision", "fp8",
            "--context", "1024", "--batch", "512", "--input-tokens", "222", "--engine", "trtllm-cpp"]
    full, capped = run_json(capsys, *args), run_json(capsys, *args, "--power-limit", "500")
    assert full["setup"]["power_limit_w"] is None and capped["setup"]["power_limit_w"] == 500
    assert capped["setup"]["engine"] == "tensorrt-llm-engine"
    assert capped["throughput_tokens_per_s"] < full["throughput_tokens_per_s"]
    assert main(["estimate", *args, "--power-limit", "five hundred"]) == 2
    assert "--power-limit must be a whole number" in capsys.readouterr().err
    assert main(["estimate", "--model", "llama-2-70b", "--gpu", "H100 SXM", "--power-limit", "450"]) == 2
    assert "--power-limit 450: NVIDIA H100 SXM5 80GB: no published result at a 450 W power limit" in \
        capsys.readouterr().err


def test_idle_figures_are_one_request_alone(capsys: pytest.CaptureFixture[str]) -> None:
    # tpot_idle_s, like ttft_idle_s, is one stream on an idle replica: the batch-1 decode step, whatever --batch is
    args = ("--model", "llama-3.1-8b", "--gpu", "nvidia-h100-sxm5", "--precision", "fp8", "--input-tokens", "200",
            "--output-tokens", "200")
    loaded = run_json(capsys, *args, "--batch", "50")
    alone = run_json(capsys, *args, "--batch", "1")
    assert loaded["tpot_idle_s"] == pytest.approx(1 / alone["decode_tokens_per_s_per_sequence"])
    assert loaded["tpot_idle_s"] < loaded["tpot_s"] and loaded["ttft_idle_s"] < loaded["ttft_s"]


def test_expert_parallel_setup_names_its_attention_groups(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "deepseek-v3", "--gpu", "nvidia-h200-sxm", "--gpus", "8", "--tp", "8",
                 "--ep", "8", "--batch", "64"]) == 0
    out = capsys.readouterr().out
    assert "EP 8: experts split over 8 GPUs, attention in 8 data-parallel groups of 1 GPU" in out
    assert "attention in 8 data-parallel group(s) of 1 GPU(s)" in out  # the method note says the same


def test_cost_tables_read_as_a_person_reads_them(capsys: pytest.CaptureFixture[str]) -> None:
    """The as-of column holds the date; a source's note on it goes under the table instead of widening every row.
    Money is printed as everywhere else (units.usd_text), and the KV line names the tokens it holds."""
    assert main(["estimate", "--model", "llama-3.1-8b", "--gpu", "nvidia-h100-sxm5", "--batch", "16"]) == 0
    out = capsys.readouterr().out
    nebius = next(line for line in out.splitlines() if line.strip().startswith("Nebius") and "on-demand" in line)
    assert nebius.rstrip().endswith("2026-10-01") and "nebius.com" not in nebius
    assert "as of 2026-10-01 (effective date printed on nebius.com/prices" in out
    # 131,072 B/token × (500 prompt + 200 output tokens) × 16 sequences = 1.468 GB
    assert "1.47 GB for 700 tokens a sequence × 16 sequences" in out
    busy = next(line for line in out.splitlines() if "per busy hour" in line)
    assert busy.split()[3].count(".") == 1 and len(busy.split()[3].split(".")[1]) == 2  # $25.68, not $25.684


def test_latencies_name_the_load_they_are_under(capsys: pytest.CaptureFixture[str]) -> None:
    """`--batch N` is N requests in flight: the text gives the median and p99 the JSON gives (`latency`) with the
    load and its arrival pattern named (a benchmark's closed loop, burst start: issue 43), the idle figures beside
    them (tpot_idle_s, ttft_idle_s) and the p95 a plan's first-token target is checked against (ttft_s), in ms."""
    args = ["--model", "llama-3.1-8b", "--gpu", "nvidia-h100-sxm5", "--precision", "fp8", "--batch", "150",
            "--input-tokens", "200", "--output-tokens", "200"]
    data = run_json(capsys, *args)
    lat = data["latency"]
    assert lat["arrival"] == "closed loop, burst start" and lat["clients"] == 150
    assert lat["tpot_p99_s"] >= lat["tpot_p50_s"] > data["tpot_idle_s"]
    assert lat["ttft_p99_s"] >= lat["ttft_p50_s"] > data["ttft_idle_s"]
    assert data["setup"]["engine_release"] and data["setup"]["engine_released"]
    assert main(["estimate", *args]) == 0
    out = capsys.readouterr().out
    lines = {line.split("  ")[1].strip(): line for line in out.splitlines() if line.startswith("  time ")}
    tpot, ttft = lines["time per token"], lines["time to first token"]

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.3g} ms"

    assert (f"{ms(lat['tpot_p50_s'])} median, {ms(lat['tpot_p99_s'])} p99 at 150 requests in flight (closed loop, "
            f"burst start); {ms(data['tpot_idle_s'])} alone on the replica") in tpot
    assert (f"{ms(lat['ttft_p50_s'])} median, {ms(lat['ttft_p99_s'])} p99 at 150 requests in flight (closed loop, "
            "burst start)") in ttft
    assert ttft.endswith(f"; {ms(data['ttft_idle_s'])} alone")
    assert f"{ms(data['ttft_s'])} p95 for independent users" in out
    assert f"measured on {data['setup']['engine_release']}, {data['setup']['engine_released']})" in out


def test_a_spot_run_is_stretched_by_its_reclaims_as_in_a_consultation(capsys: pytest.CaptureFixture[str]) -> None:
    # 8 B200s in one HGX box for 100B tokens: the spot row bills the run stretched by one reclaim a day per machine
    # at 0.3 h each (1 − 1 × 0.3 / 24 of the time progresses), plus the session's 0.25 h set-up; on demand unstretched
    d = run_json(capsys, "--model", "llama-3.1-8b", "--workload", "training", "--gpu", "nvidia-b200", "--gpus", "8",
                 "--tokens", "100B")
    wall = d["training_gpu_hours"] / 8
    rows = {(c["instance"], c["pricing"]): c for c in d["costs"] if c["instances"] == 1}
    spot = rows[("coreweave-hgx-b200", "spot")]
    demand = rows[("coreweave-hgx-b200", "on-demand")]
    assert spot["usd_per_run"] == pytest.approx(spot["usd_per_hour"] * (wall / (1 - 0.3 / 24) + 0.25), rel=1e-6)
    assert demand["usd_per_run"] == pytest.approx(demand["usd_per_hour"] * (wall + 0.25), rel=1e-6)


def test_one_request_in_flight_waits_for_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 44: Qwen3 14B AWQ on one A100 80GB with vLLM, a 16,000-token prompt at one request in flight (vLLM issue
    #20469: `--max-concurrency 1`, mean TTFT 3,345 ms, median 3,452, p99 3,697). A closed loop of one has no other
    prompt to queue behind, so every first-token figure is the idle one (it was 18.1 s at p95, 4.4 × the idle
    figure, from an M/D/1 queue of the request's own prompts); the prefill itself is 22 % above the measurement
    (the vLLM Ampere profile's compute efficiency, 0.44, is the pooled vLLM fit's)."""
    d = run_json(capsys, "--model", "qwen3-14b", "--gpu", "nvidia-a100-sxm-80gb", "--precision", "awq", "--engine",
                 "vllm", "--context", "16384", "--input-tokens", "16000", "--output-tokens", "200", "--batch", "1")
    lat = d["latency"]
    # the idle prompt in its two 8,000-token chunks (each also reading the weights) against one whole pass: 0.05 %
    assert lat["ttft_p50_s"] == lat["ttft_p99_s"] == pytest.approx(d["ttft_s"], rel=1e-9)
    assert d["ttft_s"] == pytest.approx(d["ttft_idle_s"], rel=1e-3)
    assert lat["tpot_p50_s"] == pytest.approx(d["tpot_idle_s"], rel=1e-9)
    assert 3.345 < d["ttft_s"] < 3.345 * 1.25


def test_a_training_estimate_says_the_global_batch_it_assumed(capsys: pytest.CaptureFixture[str]) -> None:
    # No batch given: Llama 3.1 70B (69.50e9 active parameters: 70.55e9 less the 1.05e9 input embedding) pretrains on
    # the practice default, 2^22 tokens grown by (69.50 / 30)^(ln 4 / ln 13.5) = 1.5644 to 6.56M tokens: 1,602
    # sequences of 4,096 (6.3 × 2^20 tokens), said as an assumption with what it rests on.
    d = run_json(capsys, "--model", "llama-3.1-70b", "--workload", "training", "--gpu", "nvidia-h100-sxm5",
                 "--gpus", "256", "--tokens", "2T")
    said = [x for x in d["defaults_applied"] if x.startswith("global batch = ")]
    assert d["setup"]["global_batch"] == 1602
    assert said == ["global batch = 1,602 sequences of 4,096 tokens = 6.3M tokens (assumed: the practice default "
                    "at 70B parameters, 4M tokens up to 30B (Llama 2 7B-70B) growing to 16M at 405B (Llama 3); "
                    "--global-batch or --global-batch-tokens to set)"]
    # a batch the user gives is not an assumption
    d = run_json(capsys, "--model", "llama-3.1-70b", "--workload", "training", "--gpu", "nvidia-h100-sxm5",
                 "--gpus", "256", "--tokens", "2T", "--global-batch", "1024")
    assert d["setup"]["global_batch"] == 1024
    assert not [x for x in d["defaults_applied"] if x.startswith("global batch")]
