"""Every format carries the whole consultation (Markdown and text with --full; the HTML always, folded): header,
answers with defaults marked, prices with dates, options with their figures, warnings, rule-outs, why chains with
sources, assumptions. Figures are those of tests/data/sample_result.json, formatted by hand here."""

from __future__ import annotations

import re
from html import unescape

import pytest

from gpuadvisor.tui.report import render
from tests.report import TODAY, sample

READABLE = ["md", "html", "text"]


def plain(fmt: str) -> str:
    """The whole report with markup stripped enough to search for text: tags removed and entities/escapes undone."""
    out = render(sample(), fmt, today=TODAY, full=True)
    if fmt == "html":
        out = unescape(re.sub(r"<[^>]+>", " ", out))
    if fmt == "md":
        out = re.sub(r"\\(.)", r"\1", out)
    if fmt == "text":
        out = re.sub(r"\n +", " ", out)  # undo the wrapping of long lines (continuations are indented)
    return re.sub(r"[ \t]+", " ", out)


@pytest.mark.parametrize("fmt", READABLE)
def test_title_date_generator_and_knowledge_version(fmt: str) -> None:
    text = plain(fmt)
    assert "GPU recommendation: Llama 3.1 70B, inference" in text
    assert "2026-11-20" in text
    assert "gpuadvisor" in text
    assert "2026.11.20" in text  # knowledge.version


@pytest.mark.parametrize("fmt", READABLE)
def test_every_price_date_appears_with_its_price(fmt: str) -> None:
    text = plain(fmt)
    result = sample()
    for instance_id, as_of in result.knowledge.price_dates.items():
        assert re.search(rf"{re.escape(instance_id)}\W*{as_of}", text), instance_id
    # named after the option that uses it
    assert re.search(r"RunPod H200 \(per GPU\) \(on-demand\)\W+runpod-h200\W+2026-09-25", text)
    # the purchase price is not in knowledge.price_dates: its date comes from the option's cost
    assert re.search(r"AMD Instinct MI300X, purchase\W+purchase:amd-mi300x\W+2026-06-30", text)


def test_price_span_and_dedup() -> None:
    out = render(sample(), "md", today=TODAY, full=True)
    assert "Prices were read between 2026-06-30 and 2026-10-07." in out
    assert out.count("`runpod-h200`") == 1  # one row per price even though an option also carries it


@pytest.mark.parametrize("fmt", READABLE)
def test_key_figures_are_formatted(fmt: str) -> None:
    text = plain(fmt)
    # H200 option: 70.55 + 42.95 + 1.2 + 3.0 = 117.70 GB of 141 GB = 83.48% used
    assert "117.7 GB" in text and "83.5%" in text
    # 70.55 GB of INT8 weights rounds half-up to 70.6 (not 70.5 as binary float formatting would give)
    assert "70.6 GB" in text and "70.5 GB" not in text
    # A100 pair per GPU: 35.28 + 21.48 + 0.62 + 2.5 = 59.88 GB of 80 GB = 74.85% → 74.9%
    assert "59.9 GB" in text and "74.9%" in text
    for money in ("$3.59", "$1.45", "$1.36", "$0.738", "$145,000", "$0.508", "$31.92", "$2,621"):
        assert money in text, money  # 2,620.7 $/month → $2,621
    assert "690 tokens/s" in text and "43.1 tokens/s" in text and "2,400 tokens/s" in text
    assert "19.0% utilization" in text  # break-even utilization 0.19 of the purchase


@pytest.mark.parametrize("fmt", READABLE)
def test_ranked_options_and_runner_up(fmt: str) -> None:
    text = plain(fmt)
    positions = [text.index(t) for t in ("1× NVIDIA H200 SXM on RunPod (on-demand)",
                                         "2× NVIDIA A100 PCIe 80GB on Azure Standard_NC48ads_A100_v4 (spot)",
                                         "Buy 1 × AMD Instinct MI300X 8-OAM server (8 GPUs)",
                                         "8× NVIDIA H100 SXM5 80GB on Lambda (on-demand)")]
    assert positions == sorted(positions)
    for total in ("$94,345", "$35,741", "$107,717", "$838,858"):  # the ranked figure, over 36 months
        assert total in text


@pytest.mark.parametrize("fmt", READABLE)
def test_top_options_have_memory_speed_cost_and_what_they_cost_by_part(fmt: str) -> None:
    text = plain(fmt)
    assert text.count("Runtime overhead") >= 3  # one memory table per recommendation (runner-up has none)
    assert text.count("Time to first token") == 3
    assert "0.42 s" in text and "0.71 s" in text and "0.39 s" in text
    # the decision cost of each option, part by part: a rental, and a purchase less its resale plus a port
    assert "$3.59/h × 730 h a month × 36 months" in text
    assert "−$98,600" in text and "resold at 68% of $145,000" in text
    assert "$9,260" in text and "H10.port" in text
    assert "TP 2 × PP 1, 1 replica, 1 node" in text


@pytest.mark.parametrize("fmt", READABLE)
def test_findings_with_severity(fmt: str) -> None:
    text = plain(fmt)
    assert re.search(r"RISK\W+W6", text)
    assert re.search(r"RISK\W+W5", text)
    assert re.search(r"ADVICE\W+H11", text)
    assert "3 findings (2 risks, 1 advice), about the recommended option first, then by severity." in text
    # in the order triage gave them (rules/consultation/findings.py): the plan-wide risk, the risk about option 1, the
    # advice
    assert (text.index("The KV cache (42.95 GB) is 61%") < text.index("would run at 83% of its 141 GB")
            < text.index("A 141 GB H200 or 192 GB MI300X"))
    assert "cap max_num_seqs at 14 or the context at 7,168 tokens" in text


@pytest.mark.parametrize("fmt", READABLE)
def test_ruled_out_with_reasons(fmt: str) -> None:
    text = plain(fmt)
    assert "NVIDIA GeForce RTX 4090" in text
    assert "117.7 GB would need at least 6 cards of 24 GB with tensor parallelism over PCIe (no NVLink)" in text
    assert "framework = pytorch: TPUs suit JAX/TensorFlow at scale" in text
    assert "rule_out.tp_without_nvlink (H5)" in text or "rule_out.tp_without_nvlink, H5" in text


@pytest.mark.parametrize("fmt", READABLE)
def test_why_chains_cite_sources(fmt: str) -> None:
    text = plain(fmt)
    assert "Underestimating KV-cache growth (W5) · source: doc-002 §Common Mistakes" in text
    assert "source: doc-002 §Inference Memory: Weights Plus KV Cache" in text
    assert "source: NVIDIA H200 datasheet" in text
    assert "source: meta-llama/Llama-3.1-70B config.json" in text
    # option 2's chain needs the memory profile that option 1's chain already derived: it points there
    assert ("Inference memory = weights + KV cache + overhead (S2) · source: doc-003 §VRAM rule of thumb · "
            "see option 1") in text
    assert "Buying beats renting above 19% utilization over 3 years" in text


@pytest.mark.parametrize("fmt", READABLE)
def test_assumptions_and_error_bands(fmt: str) -> None:
    text = plain(fmt)
    assert "Assumptions and error bands" in text
    assert "Error band of speed estimates" in text and "±25%" in text
    assert "CUDA context and framework overhead per GPU" in text and "3 GB" in text


def test_answers_in_full_with_defaults_marked_markdown() -> None:
    out = render(sample(), "md", today=TODAY, full=True)
    result = sample()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w.]+)` \|.*$", out, re.M)}
    assert len(rows) == 54  # every effective answer (12 sections flattened), not only the given ones
    for key in result.defaults_applied:
        assert rows[key].endswith("| *default* |"), key
    for key in ("workload", "model.name", "precision.weights", "precision.context_tokens", "deployment.utilization"):
        assert rows[key].endswith("| your answer |"), key
    assert rows["precision.weights"] == "| `precision.weights` | int8 | your answer |"
    assert rows["deployment.providers"].startswith("| `deployment.providers` | aws, gcp, azure, lambda")
    assert rows["model.params_b"] == "| `model.params_b` | not set | *default* |"


def test_defaults_spelled_with_their_value_are_recognised() -> None:
    # the consultation may list defaults as "name = value"; the marking must not depend on the spelling
    result = sample()
    spelled = [f"{key} = {value}" for key, value in [("deployment.pue", 1.3), ("stage", "production")]]
    out = render(result.model_copy(update={"defaults_applied": spelled}), "md", today=TODAY, full=True)
    assert "| `deployment.pue` | 1.3 | *default* |" in out
    assert "| `stage` | production | *default* |" in out
    # neither given nor listed as a default: not an answer this consultation used, and never "your answer"
    assert "`framework.name`" not in out
    assert "2 defaults)" in out


def test_answers_defaults_marked_html_and_text() -> None:
    html = render(sample(), "html", today=TODAY)
    assert re.search(r"<code>deployment\.pue</code></td>\s*<td>1\.3</td>\s*<td><em>default</em></td>", html)
    assert re.search(r"<code>precision\.weights</code></td>\s*<td>int8</td>\s*<td>your answer</td>", html)
    text = render(sample(), "text", today=TODAY, full=True)
    assert re.search(r"^deployment\.pue\s+1\.3\s+default$", text, re.M)
    assert re.search(r"^precision\.weights\s+int8\s+you$", text, re.M)


def test_infeasible_result_says_so_and_lists_what_would_help() -> None:
    result = sample().model_copy(update={"feasible": False, "recommendations": [], "runners_up": [],
                                         "to_make_feasible": ["quantize the weights to INT4 (H7)"]})
    for fmt in READABLE:
        out = render(result, fmt, today=TODAY)
        assert re.search(r"no option meets every requirement", out, re.I), fmt
        assert "INT4 (H7)" in out, fmt
        assert "No option was recommended." in out, fmt
