"""The JSON report is the full consultation: it validates against the published model, re-renders every format
identically, and its embedded answers rerun the consultation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.consultation.result import RecommendResult
from gpuadvisor.rules.inputs.answers import load_answers, parse_answers
from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.jsonfmt import load_report, parse_report
from tests.report import TODAY, sample


def test_json_is_the_whole_result_plus_the_report_header() -> None:
    out = render(sample(), "json", today=TODAY)
    back = parse_report(out, "report.json")
    assert back.report is not None
    assert back.report.title == "GPU recommendation: Llama 3.1 70B, inference"
    assert back.report.date == "2026-11-20"
    assert back.report.generator.startswith("gpuadvisor")
    assert back.model_copy(update={"report": None}) == sample()


def test_json_matches_the_published_schema_keys() -> None:
    doc = json.loads(render(sample(), "json", today=TODAY))
    schema = RecommendResult.model_json_schema()
    # plus the tables the chains and notes reference (tui/report/whyjson.py)
    assert set(doc) == set(schema["properties"]) | {"why_facts", "why_rules", "why_sources", "option_notes"}
    assert set(schema["required"]) <= set(doc)


def test_rerendering_from_json_is_identical(tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(render(sample(), "json", today=TODAY))
    loaded = load_report(saved)
    for fmt in ("md", "html", "text"):
        # the date comes from the saved header, not from the day of re-rendering
        assert render(loaded, fmt) == render(sample(), fmt, today=TODAY), fmt
    assert render(loaded, "json") == saved.read_text()


def test_embedded_answers_rerun_the_consultation(tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(render(sample(), "json", today=TODAY))
    answers = load_answers(saved)  # what `gpuadvisor recommend --answers report.json` reads
    assert answers == parse_answers(sample().answers)
    assert answers.model.name == "llama-3.1-70b" and answers.precision.weights == "int8"
    # the sample was saved before issue 21 added the daily-users answers: a rerun lists them unset as well
    added = {"inference.daily_active_users", "inference.sessions_per_user_per_day", "inference.requests_per_session",
             "inference.peak_to_average", "deployment.reservations", "framework.porting", "framework.port_weeks",
             "framework.engineer_usd_per_week",  # and issue 26's reservations and porting answers
             "training.recompute", "training.global_batch", "training.global_batch_tokens",
             "training.context_parallel",  # and issue 38's training answers
             "deployment.after_run", "training.deadline_from"}  # and issue 39's keep-or-sell and deadline start
    assert sorted(set(answers.defaults_applied()) - added) == sample().defaults_applied


def test_bad_json_names_line_and_column() -> None:
    # a missing colon: Python 3.13 words a trailing comma differently from 3.11, this message is the same
    with pytest.raises(InputError, match=r"^report\.json:3:5: not valid JSON: Expecting ':' delimiter"):
        parse_report('{\n"a": 1,\n"b" 2}', "report.json")


def test_bad_field_names_its_path() -> None:
    doc = json.loads(sample().model_dump_json())
    del doc["recommendations"][0]["memory"]["weights"]
    doc["warnings"][1]["severity"] = "catastrophic"
    doc["surprise"] = 1
    with pytest.raises(InputError) as info:
        parse_report(json.dumps(doc), "report.json")
    lines = str(info.value).splitlines()
    assert "report.json: recommendations.0.memory.weights: Field required" in lines
    assert any(line.startswith("report.json: warnings.1.severity: Input should be 'risk', 'advice' or 'note'")
               for line in lines)
    assert "report.json: surprise: unknown field (not part of the report schema)" in lines


def test_not_a_report() -> None:
    with pytest.raises(InputError, match="not a gpuadvisor JSON report"):
        parse_report('{"workload": "inference"}', "answers.json")
    with pytest.raises(InputError, match="not a gpuadvisor JSON report"):
        parse_report("[1, 2]", "list.json")


def test_newer_schema_version() -> None:
    doc = json.loads(sample().model_dump_json())
    doc["schema_version"] = 99
    with pytest.raises(InputError, match="schema_version 99 was written by a newer gpuadvisor"):
        parse_report(json.dumps(doc), "r.json")


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such report file"):
        load_report(tmp_path / "absent.json")
    with pytest.raises(InputError, match="is a directory"):
        load_report(tmp_path)
    (tmp_path / "latin1.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(InputError, match="cannot read report"):
        load_report(tmp_path / "latin1.json")


def test_a_report_of_the_previous_format_still_reads() -> None:
    # tests/data/sample_result.json spells out every step (schema_version 2, before the chains were written once)
    from tests.report import SAMPLE

    assert parse_report(SAMPLE.read_text(encoding="utf-8"), "old.json") == sample()


def test_chains_share_facts_and_sub_trees() -> None:
    result = sample()
    first = result.recommendations[0]
    # option 2 rests on the memory profile (fact 20 and its 6 premises) that option 1's chain derives
    memory = [s.model_copy(update={"depth": s.depth - 1}) for s in first.why[2:9]]
    second = result.recommendations[1].model_copy(update={"why": [*result.recommendations[1].why[:2], *memory]})
    shared = result.model_copy(update={"recommendations": [first, second, *result.recommendations[2:]]})
    doc = json.loads(render(shared, "json", today=TODAY))
    assert doc["recommendations"][1]["why"] == [[0, 40], [1, 41], [1, 20, "s"]]  # one step for the sub-tree
    assert all(isinstance(step, list) for step in doc["recommendations"][0]["why"])
    assert doc["why_facts"]["21"][1] == "Weights: 70.55 B parameters × 1 byte = 70.55 GB"
    back = parse_report(json.dumps(doc), "report.json")
    assert back.model_copy(update={"report": None}) == shared


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["why_facts"].clear(), "is not in why_facts"),
    (lambda d: d["recommendations"][0]["why"].insert(0, [0, 99999, "s"]), "no earlier sub-tree to share"),
    (lambda d: d["recommendations"][0]["why"].insert(0, [0, 1, "x"]), "unknown step mark"),
    (lambda d: d["recommendations"][0]["why"].insert(0, ["0", 1]), "a step is"),
    (lambda d: d.update(why_rules=[]), "must be objects"),
    (lambda d: d["recommendations"][0].update(notes=[999]), "past the end of option_notes"),
])
def test_a_broken_chain_table_is_named(change: Any, message: str) -> None:
    doc = json.loads(render(sample(), "json", today=TODAY))
    change(doc)
    with pytest.raises(InputError, match=message):
        parse_report(json.dumps(doc), "report.json")
