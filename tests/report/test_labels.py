"""One label, one figure (issue 29): the same quantity prints the same figure in the results table, the detail,
compare, Markdown, HTML and JSON, over the golden consultations; and each label the issue found untrue is checked
here by a test that failed before it was fixed.

Before: the detail's "Throughput 4,051 tokens/s" was the planned batch's figure while the table's 13,659 was the
capacity; the summary said "4.1 GB of weights" against 5.9 GB in the breakdown; the T4 was described with "65 dense
BF16 TFLOPS" (it has no BF16); a step titled "≈ 6 × parameters" used 4× and printed "(0.0 PFLOP/s-days)"; the review
said "1T billion"; `--capex 2M` was refused; "Peak concurrent requests 1 (the batch size)" was assumed when 1,000
requests a minute were asked; compare starred the smaller memory per GPU as the better.
"""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.planning.profile import pflop_days_text
from gpuadvisor.tui import present
from gpuadvisor.tui.report import common as c
from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.jsonfmt import parse_report
from gpuadvisor.tui.report.markdown import md
from gpuadvisor.tui.screens.compare import compare_rows
from gpuadvisor.tui.screens.detail import cost_pairs, speed_pairs, total_text
from gpuadvisor.tui.widgets.ranking_table import cells
from tests.report import TODAY
from tests.rules.test_consult_golden import CASES

FIGURES = ("memory", *present.SPEED, "usd_per_hour", "usd_per_run", "usd_per_month", "total")


@pytest.fixture(scope="module")
def golden() -> dict[str, RecommendResult]:
    return {name: consult(parse_answers(answers)) for name, answers in CASES.items()}


def test_every_figure_is_printed_the_same_everywhere(golden: dict[str, RecommendResult]) -> None:
    checked = 0
    for name, result in golden.items():
        recs = result.recommendations[:3]
        if not recs:
            continue
        work = c.workload(result)
        full_md = render(result, "md", today=TODAY, full=True)
        html = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", render(result, "html", today=TODAY))))
        back = parse_report(render(result, "json", today=TODAY), f"{name}.json")
        compared = dict(compare_rows(recs))
        for i, rec in enumerate(recs):
            detail = dict(speed_pairs(rec)) | dict(cost_pairs(rec))
            row = cells(rec, work)
            for f in present.figures(rec, FIGURES):
                where = f"{name} option {rec.rank} {f.key}"
                # JSON: the figure a re-rendered report prints is this one
                again = present.figure(back.recommendations[i], f.key)
                assert again is not None and again.text == f.text, where
                # compare: the short label's row, the figure without its unit
                assert compared[present.BY_KEY[f.key].short][i].removeprefix("★ ") == f.number, where
                # Markdown and HTML: the option's table row, label then figure
                if f.key not in ("memory", "total"):
                    assert f"| {f.label} | {md(f.text)} |" in full_md, where
                    assert f"{f.label} {f.text}" in html, where
                # the detail: the speed and cost tabs
                if f.key in present.SPEED or f.key.startswith("usd_"):
                    assert detail[f.label] == f.text, where
                checked += 1
            total = present.figure(rec, "total")
            memory = present.figure(rec, "memory")
            assert total is not None and memory is not None
            assert row["score"] == total.text and total.text in [c.plain for c in total_text(rec).columns[0].cells]
            assert row["memory"] == memory.number
            assert f"| {rec.rank} | {md(rec.title)} | {md(memory.number)} / " in full_md
            speed = present.figure(rec, "capacity" if work == "inference" else "training_time")
            if speed is not None:
                assert row["speed"].startswith(speed.number), f"{name} {rec.rank}"
    assert checked > 100


def test_the_table_capacity_is_not_called_throughput_in_the_detail(golden: dict[str, RecommendResult]) -> None:
    rec = next(r for r in golden["inference-70b-latency"].recommendations if r.capacity_tokens_per_s != r.tokens_per_s)
    pairs = dict(speed_pairs(rec))
    capacity, throughput = present.figure(rec, "capacity"), present.figure(rec, "throughput")
    assert capacity is not None and throughput is not None and capacity.text != throughput.text
    assert pairs["Capacity (largest batch)"] == capacity.text  # the table's figure, under the same name
    assert pairs["Throughput at the planned batch"] == throughput.text
    assert "Throughput" not in pairs


def test_summary_weights_are_the_breakdown_weights() -> None:
    result = consult(parse_answers({"workload": "finetune", "model": {"name": "llama-3.1-8b"},
                                    "finetune": {"method": "qlora"}}))
    top = result.recommendations[0]
    assert top.tensor_parallel * top.pipeline_parallel == 1
    # QLoRA: the 4-bit base plus 16-bit embeddings and head, 5.9 GB; the profile's all-4-bit estimate is 5.7 GB
    assert c.gb(top.memory.weights) == "5.9 GB" and c.gb(result.profile.weights_gb) == "5.7 GB"
    assert "needs 5.9 GB of weights" in c.summary(result)
    out = render(result, "md", today=TODAY)
    assert "| Weights | 5.9 GB |" in out and "5.7 GB" not in out


def test_dense_peaks_only_for_precisions_the_part_has() -> None:
    from gpuadvisor.rules.consultation.facts import accelerator_fact

    catalog = load_catalog(user_dir=None)
    t4 = accelerator_fact(catalog.accelerators["nvidia-t4"])["text"]
    assert "65 dense FP16 TFLOPS" in t4 and "BF16" not in t4  # Turing has no BF16
    h100 = accelerator_fact(catalog.accelerators["nvidia-h100-sxm5"])["text"]
    assert "989.4 dense BF16, 1,979 FP8 TFLOPS" in h100


def test_training_compute_step_says_what_it_multiplies() -> None:
    result = consult(parse_answers({"workload": "finetune", "model": {"name": "llama-3.1-8b"},
                                    "finetune": {"method": "qlora"}, "training": {"tokens_b": 0.02}}))
    step = next(s for s in result.profile_why if s.kind == "compute_need")
    # 4 × 7,504,924,672 × 2e7 = 6.0e17 FLOPs = 6.0e17 / 1e15 / 86,400 = 0.00695 PFLOP/s-days
    assert step.text == ("Compute = 4 × 7,504,924,672 active parameters × 20M tokens = 600 petaFLOPs "
                         "(0.00695 PFLOP/s-days)")
    assert step.rule_title is not None and "4 × for LoRA/QLoRA" in step.rule_title
    assert pflop_days_text(6.9e24) == "79,861 PFLOP/s-days"  # 6.9e24 / 1e15 / 86,400 = 79,861
    assert pflop_days_text(6.9e21) == "79.9 PFLOP/s-days"
    assert pflop_days_text(1.2e20) == "1.39 PFLOP/s-days"


def test_counts_are_printed_with_their_suffix() -> None:
    from gpuadvisor.rules.sizing.units import billions_text, count_text, parse_amount
    from gpuadvisor.tui.widgets.review import count_text as review_count

    assert review_count("1T") == "1T" and review_count("0.02") == "20M" and review_count(70.0) == "70B"
    assert billions_text(1000) == "1T" and count_text(2e7) == "20M"
    assert parse_amount("2M") == 2_000_000 and parse_amount("$250,000") == 250_000 and parse_amount("1.5k") == 1500


def test_capex_takes_the_suffix_tokens_take(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuadvisor.tui.cli import main

    code = main(["recommend", "--model", "llama-3.1-8b", "--capex", "2M", "--tokens", "1B", "--workload",
                 "training", "--format", "json", "--top", "1"])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code in (0, 3) and doc["answers"]["budget"]["capex_usd"] == 2_000_000
    assert doc["answers"]["training"]["tokens_b"] == 1.0


def test_no_batch_size_concurrency_when_a_rate_was_asked() -> None:
    result = consult(parse_answers({"workload": "inference", "model": {"name": "llama-3.1-8b"},
                                    "inference": {"requests_per_minute": 1000}}))
    assert result.answers_effective["inference"]["concurrent_requests"] is None
    line = next(d for d in result.defaults_applied if d.startswith("inference.concurrent_requests"))
    assert "the batch size" not in line and "request rate" in line


def test_compare_stars_no_memory_row(golden: dict[str, RecommendResult]) -> None:
    recs = golden["inference-70b-latency"].recommendations[:3]
    rows = dict(compare_rows(recs))
    assert len({r.memory.total for r in recs}) > 1  # the options hold different amounts per GPU
    assert not any(cell.startswith("★") for cell in rows["Memory/GPU (GB)"] + rows["GPU memory (GB)"])
    assert any(cell.startswith("★") for cell in rows["Total"])


def test_what_if_of_a_reopened_gpt_oss_defaults_to_its_mxfp4() -> None:
    from gpuadvisor.tui.questionnaire.answers_state import AnswerState, default_value, native_weights_of

    state = AnswerState.from_answers(parse_answers({"workload": "inference", "model": {"name": "gpt-oss-120b"}}))
    assert state.native_weights is None  # a file or Recent does not carry it
    assert default_value("precision.weights", state.raw, state.native_weights) == "bf16"  # what the form showed
    native = native_weights_of(state, load_catalog(user_dir=None))
    assert native == "mxfp4" and default_value("precision.weights", state.raw, native) == "mxfp4"


def test_summary_never_says_a_part_is_zero_gb() -> None:
    # one prototyping stream of 700 tokens of Llama 3.2 1B holds 2 x 16 layers x 8 KV heads x 64 x 2 B = 32 KB a token,
    # 22 MB in all, well under 0.05 GB of KV cache: "under 0.1 GB", never "0.0 GB" (Llama 3.1 8B's 0.09 GB held it
    # only while its top plan, Kaggle's free T4 x2, split the stream over two PCIe cards: a last resort since issue 37)
    result = consult(parse_answers({"workload": "inference", "stage": "prototyping",
                                    "model": {"name": "llama-3.2-1b"}}))
    assert 0 < result.recommendations[0].memory.kv_cache < 0.05
    said = c.summary(result)
    assert "under 0.1 GB of KV cache per GPU" in said and "0.0 GB" not in said
