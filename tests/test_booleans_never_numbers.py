"""Issue 41: a boolean is never a number, whichever door a value comes in by. For each door a real document has one
of its numbers (any of them: the property draws the place) replaced by `true` or `false`, and the reader refuses it
with a message naming the file and the field (pydantic's lax mode used to read a saved report's `true` as 1, and an
overlay's `memory_gb = true` as 1 GB).

The doors: a saved JSON report (`report --from`), an answers file, a knowledge overlay (quotes are overlay entries
too), a model's config.json. The rule is `knowledge.bounds.booleans_as_numbers` for the lax models (reports,
answers) and pydantic's strict mode for the knowledge base; config.json's reader checks each field itself.

GPUADVISOR_FUZZ_CASES sets the generated examples per door (default 40).
"""

from __future__ import annotations

import copy
import json
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.bounds import booleans_as_numbers
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.hf_config import read_hf_config
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import load_answers
from gpuadvisor.tui.report.jsonfmt import parse_report

CASES = int(os.environ.get("GPUADVISOR_FUZZ_CASES", "40"))
SETTINGS = settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
ROOT = Path(__file__).resolve().parent
REPORT = json.loads((ROOT / "data" / "sample_result.json").read_text(encoding="utf-8"))
CONFIGS = [ROOT / "data" / "configs" / f"{name}.json" for name in ("gpt2", "llama-3.1-8b", "mixtral-8x7b",
                                                                     "deepseek-v3", "gemma-2-2b", "qwen3-32b")]
EXAMPLES = sorted((ROOT.parent / "examples").glob("*.toml"))
KNOWLEDGE = ROOT.parent / "knowledge" / "data"


def _numbers(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Where `value` holds a number (not a boolean)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _numbers(item, (*path, i))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path


def _with(doc: Any, path: tuple[str | int, ...], new: object) -> Any:
    doc = copy.deepcopy(doc)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = new
    return doc


def _named(message: str, where: str, path: tuple[str | int, ...]) -> bool:
    """The message names the file and the field (its key; a list entry by the key that holds the list)."""
    key = next(str(p) for p in reversed(path) if isinstance(p, str))
    return message.startswith(where) and key in message


# --- saved JSON reports ------------------------------------------------------------------------------------------

FREE_FORM = {("answers",), ("answers_effective",), ("knowledge", "files")}
REPORT_NUMBERS = [p for p in _numbers(REPORT) if p[:1] not in FREE_FORM and p[:2] not in FREE_FORM]
"""The report's numbers, less those in its free-form parts (typed `dict[str, Any]`, where any JSON value is the
schema's): the answers it embeds (checked by the answers door below when the report is rerun as an answers file) and
the knowledge files' descriptions (names, digests and entry counts, shown as written)."""


def test_the_sample_report_has_numbers_everywhere() -> None:
    assert len(REPORT_NUMBERS) > 200  # recommendations, runners-up, warnings, rule-outs, profile, knowledge


@SETTINGS
@given(path=st.sampled_from(REPORT_NUMBERS), value=st.booleans())
def test_a_report_refuses_a_boolean_for_any_of_its_numbers(path: tuple[str | int, ...], value: bool) -> None:
    text = json.dumps(_with(REPORT, path, value))
    with pytest.raises(AdvisorError) as info:
        parse_report(text, "saved.json")
    assert _named(str(info.value), "saved.json: ", path), str(info.value)


def test_a_report_names_the_path_of_the_boolean() -> None:
    """Hand-picked: the message is the field path itself, one line per boolean."""
    doc = _with(_with(REPORT, ("recommendations", 0, "count"), True), ("profile", "weights_gb"), False)
    with pytest.raises(AdvisorError) as info:
        parse_report(json.dumps(doc), "saved.json")
    assert sorted(str(info.value).splitlines()) == [
        "saved.json: profile.weights_gb: true/false where this field holds no boolean (booleans are never numbers)",
        "saved.json: recommendations.0.count: true/false where this field holds no boolean (booleans are never "
        "numbers)"]


def test_a_report_keeps_its_booleans() -> None:
    """The rule refuses booleans where numbers are, not booleans where booleans are: the sample's own `feasible`."""
    assert REPORT["feasible"] is True
    assert list(booleans_as_numbers(RecommendResult, REPORT)) == []


# --- answers files -------------------------------------------------------------------------------------------------

ANSWERS = [doc for doc in [*(tomllib.loads(path.read_text(encoding="utf-8")) for path in EXAMPLES),
                            *(case["answers"] for case in tomllib.loads(
                                (ROOT / "data" / "expert_cases.toml").read_text(encoding="utf-8"))["case"])]
           if "phase" not in doc]
"""The examples and our expert cases' answers (a lifecycle's phases are answers files of their own)."""
ANSWER_NUMBERS = [(i, p) for i, doc in enumerate(ANSWERS) for p in _numbers(doc)]


def test_the_answers_have_numbers() -> None:
    assert len({p for _, p in ANSWER_NUMBERS}) >= 15  # distinct fields


@SETTINGS
@given(place=st.sampled_from(ANSWER_NUMBERS), value=st.booleans())
def test_an_answers_file_refuses_a_boolean_for_any_of_its_numbers(tmp_path_factory: pytest.TempPathFactory,
                                                                   place: tuple[int, tuple[str | int, ...]],
                                                                   value: bool) -> None:
    index, path = place
    target = tmp_path_factory.mktemp("answers") / "a.toml"
    target.write_text(tomli_w.dumps(_with(ANSWERS[index], path, value)), encoding="utf-8")
    with pytest.raises(AdvisorError) as info:
        load_answers(target)
    assert _named(str(info.value), str(target), path), str(info.value)


# --- knowledge overlays and quotes ---------------------------------------------------------------------------------

ENTRIES = [(kind, entry) for name in ("accelerators.toml", "cloud_instances.toml", "models.toml", "systems.toml")
           for kind, rows in tomllib.loads((KNOWLEDGE / name).read_text(encoding="utf-8")).items()
           if isinstance(rows, list) for entry in rows[:6]]
ENTRY_NUMBERS = [(i, p) for i, (_, entry) in enumerate(ENTRIES) for p in _numbers(entry)]
QUOTE = {"id": "q1", "vendor": "Acme", "accelerator": "h100-sxm5-80gb", "usd": 25_000.0, "quoted_on": "2026-11-20",
         "valid_until": "2027-01-31"}


@SETTINGS
@given(place=st.sampled_from(ENTRY_NUMBERS), value=st.booleans())
def test_an_overlay_refuses_a_boolean_for_any_of_its_numbers(tmp_path_factory: pytest.TempPathFactory,
                                                             place: tuple[int, tuple[str | int, ...]],
                                                             value: bool) -> None:
    """A shipped entry written again in an overlay (it replaces the shipped one) with one number a boolean."""
    index, path = place
    kind, entry = ENTRIES[index]
    folder = tmp_path_factory.mktemp("overlay")
    (folder / "o.toml").write_text(tomli_w.dumps({kind: [_with(entry, path, value)]}), encoding="utf-8")
    with pytest.raises(AdvisorError) as info:
        load_catalog(user_dir=folder, refreshed=None)
    assert _named(str(info.value), str(folder / "o.toml"), path), str(info.value)


def test_a_quote_refuses_a_boolean_price(tmp_path: Path) -> None:
    (tmp_path / "quotes.toml").write_text(tomli_w.dumps({"quote": [{**QUOTE, "usd": True}]}), encoding="utf-8")
    with pytest.raises(AdvisorError) as info:
        load_catalog(user_dir=tmp_path, refreshed=None)
    assert str(info.value).startswith(f"{tmp_path / 'quotes.toml'}:") and "usd" in str(info.value)


# --- config.json -----------------------------------------------------------------------------------------------

CONFIG_NUMBERS = [(path, p) for path in CONFIGS
                  for p in _numbers(json.loads(path.read_text(encoding="utf-8")))
                  if len(p) == 1]  # top-level fields: the ones the reader maps


@SETTINGS
@given(place=st.sampled_from(CONFIG_NUMBERS), value=st.booleans())
def test_a_config_json_never_reads_a_boolean_as_a_number(tmp_path_factory: pytest.TempPathFactory,
                                                         place: tuple[Path, tuple[str | int, ...]],
                                                         value: bool) -> None:
    """A field the reader uses is refused by name; a field it ignores stays ignored (then the result is the same
    as the real file's, never a figure read from the boolean)."""
    source, path = place
    doc = json.loads(source.read_text(encoding="utf-8"))
    target = tmp_path_factory.mktemp("config") / "config.json"
    target.write_text(json.dumps(_with(doc, path, value)), encoding="utf-8")
    try:
        got = read_hf_config(target)
    except AdvisorError as exc:
        assert _named(str(exc), str(target), path), str(exc)
        return
    assert got == read_hf_config(source)
