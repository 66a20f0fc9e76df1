"""Every number bounded where it enters (issue 41): one table (`knowledge.bounds`) shared by answers, their flags,
`estimate`'s flags, knowledge files and overlays, quotes and saved reports. The properties: any number at any door —
huge integers, floats up to 1.8e308 and down to 5e-324, infinities, NaN, booleans — is either taken and inside the
quantity's bound, or refused with one line naming the field; never Python's 4,300-digit ValueError, an overflow or
a decimal.InvalidOperation later; and a boolean is never a number in any file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.bounds import BOUNDS, bound
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.sizing.units import fixed, usd_text
from gpuadvisor.tui.cli import main

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
NUMBERS = st.one_of(st.integers(-(10**400), 10**400).map(str), st.floats().map(repr),
                    st.sampled_from(["true", "false"]),
                    st.sampled_from(["0", "-0.0", "1e-320", "5e-324", "1e-300", "1e30", "1e308", "9" * 5000,
                                     str(2**63), "0.005", "inf", "-inf", "nan", "1_000"]))
"""Numbers as TOML writes them (the texts reach each reader as a user's file or flag would)."""


def _toml(text: str) -> str:
    return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(text, text)
ROOT = Path(__file__).resolve().parent


@SETTINGS
@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 6))
def test_printing_a_figure_never_fails(value: float, places: int) -> None:
    text = fixed(value, places)
    assert text and (not math.isfinite(value) or text.replace(",", "").lstrip("-").replace(".", "").isdigit())
    assert usd_text(value)


def test_a_price_of_1e30_prints_every_digit() -> None:  # decimal.InvalidOperation before issue 41
    assert usd_text(1e30) == "$1," + ",".join(["000"] * 10)


ANSWER_FIELDS = {("precision", "context_tokens"): "context_tokens", ("precision", "batch_size"): "batch",
                 ("inference", "requests_per_minute"): "requests_per_minute",
                 ("inference", "output_tokens"): "request_tokens", ("budget", "capex_usd"): "budget_usd",
                 ("deployment", "utilization"): "utilization", ("constraints", "max_gpus"): "gpus",
                 ("finetune", "lora_rank"): "lora_rank", ("current", "gpu_memory_gb"): "memory_gb"}


@SETTINGS
@given(st.sampled_from(sorted(ANSWER_FIELDS)), NUMBERS)
def test_an_answer_is_inside_its_bound_or_refused_by_name(tmp_path_factory: pytest.TempPathFactory,
                                                          field: tuple[str, str], value: str) -> None:
    from gpuadvisor.rules.inputs.answers import load_answers

    table, key = field
    path = tmp_path_factory.mktemp("a") / "a.toml"
    path.write_text(f"[{table}]\n{key} = {_toml(value)}\n", encoding="utf-8")
    try:
        answers = load_answers(path)
    except AdvisorError as exc:
        assert str(exc).startswith(str(path)) and (key in str(exc) or "digits" in str(exc)), str(exc)
        return
    taken = getattr(getattr(answers, table), key)
    assert value not in ("true", "false") and bound(ANSWER_FIELDS[field]).holds(taken)


KNOWLEDGE_NUMBERS = [
    ("memory_gb = {{ value = {}, sources = ['doc-002'] }}", "memory_gb", lambda a: a.memory_gb.value),
    ("purchase_price_usd = {{ value = {}, kind = 'msrp', sources = ['doc-002'] }}", "purchase_usd",
     lambda a: a.purchase_price_usd.value),
    ("max_per_node = {}", None, lambda a: a.max_per_node),
]


@SETTINGS
@given(st.sampled_from(range(len(KNOWLEDGE_NUMBERS))), NUMBERS)
def test_an_overlay_number_is_inside_its_bound_or_refused_by_name(tmp_path_factory: pytest.TempPathFactory,
                                                                   which: int, value: str) -> None:
    line, quantity, read = KNOWLEDGE_NUMBERS[which]
    path = tmp_path_factory.mktemp("o") / "o.toml"
    path.write_text(f'[[accelerator]]\nid = "nvidia-l4"\n{line.format(_toml(value))}\n', encoding="utf-8")
    try:
        catalog = load_catalog(user_dir=None, extra_files=[path], refreshed=None)
    except AdvisorError as exc:
        assert str(exc).startswith(f"{path}:3: ") and len(str(exc)) < 2000, str(exc)
        return
    taken = read(catalog.accelerators["nvidia-l4"])
    assert value not in ("true", "false"), "a boolean taken as a number"
    assert quantity is None or bound(quantity).holds(taken)
    assert math.isfinite(taken) and abs(taken) <= bound("measure").high


@pytest.mark.parametrize("text", ['memory_gb = { value = true, sources = ["doc-002"] }', "max_per_node = true",
                                  'purchase_price_usd = { value = true, kind = "msrp", sources = ["doc-002"] }',
                                  'memory_gb = { value = "80", sources = ["doc-002"] }', "max_per_node = 8.0"])
def test_a_boolean_or_a_string_is_never_a_number_in_a_knowledge_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "o.toml"
    path.write_text(f'[[accelerator]]\nid = "nvidia-l4"\n{text}\n', encoding="utf-8")
    with pytest.raises(AdvisorError, match=rf"^{path}:3: accelerator 'nvidia-l4': .*Input should be a valid"):
        load_catalog(user_dir=None, extra_files=[path], refreshed=None)


FLAGS = {"--context": "context_tokens", "--batch": "batch", "--gpus": "gpus", "--mfu": "mfu",
         "--utilization": "utilization", "--requests-per-min": "requests_per_minute", "--lora-rank": "lora_rank"}


@SETTINGS
@given(st.sampled_from(sorted(FLAGS)), NUMBERS)
def test_an_estimate_flag_is_inside_the_same_bound_or_refused(capsys: pytest.CaptureFixture[str], flag: str,
                                                              text: str) -> None:
    capsys.readouterr()  # hypothesis runs every example in one test call
    code = main(["estimate", "--model", "gpt2", "--gpu", "nvidia-h100-sxm5", "--workload", "training",
                 "--tokens", "1B", flag, text, "--json"])
    err = capsys.readouterr().err
    if code == 0:
        assert bound(FLAGS[flag]).holds(float(text))
    else:
        assert code == 2 and err.startswith(f"gpuadvisor: error: {flag}") and err.count("\n") == 1, err


def test_the_table_is_the_one_the_answers_and_flags_read() -> None:
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.tui.commands.estimate import BOUNDS as FLAG_QUANTITIES

    assert set(FLAG_QUANTITIES.values()) <= set(BOUNDS)
    context = Answers.model_fields["precision"].annotation.model_fields["context_tokens"]  # type: ignore[union-attr]
    metadata = {type(m).__name__: m for m in context.metadata}
    assert metadata["Ge"].ge == bound("context_tokens").low and metadata["Le"].le == bound("context_tokens").high


@pytest.mark.parametrize("usd", ["1e30", "9" * 5000, "1e-300", "nan", "-5"])
def test_a_quote_is_bounded_as_a_price_in_a_file_is(capsys: pytest.CaptureFixture[str], usd: str) -> None:
    capsys.readouterr()
    assert main(["kb", "quote", "add", "--vendor", "V", "--accelerator", "nvidia-l4", "--usd", usd,
                 "--valid-days", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuadvisor: error: kb quote --usd: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("number", ["1e300", "9" * 5000, "-1e31", "1e400"])
def test_a_report_number_beyond_any_figure_is_refused_by_its_path(tmp_path: Path, number: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "data" / "sample_result.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    key = next(k for k, v in doc["recommendations"][0].items() if isinstance(v, float))
    path = tmp_path / "r.json"
    path.write_text(text.replace(json.dumps(doc["recommendations"][0][key]), number, 1), encoding="utf-8")
    assert main(["report", "--from", str(path), "--format", "md"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpuadvisor: error: {path}") and err.count("\n") == 1, err
