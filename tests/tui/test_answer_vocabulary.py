"""One vocabulary of answers: every answer field's flag, question and schema entry come from its one declaration
(rules/inputs/answers.py `ask`), and the front ends use exactly those."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.rules.inputs.answers import AnswerField, Answers, answer_fields, parse_answers
from gpuadvisor.tui.commands import recommend
from gpuadvisor.tui.questionnaire.questions import KINDS, QUESTIONS

FIELDS = answer_fields()
SET_BY_DETECTION = {"current.gpu_name", "current.detection"}
"""The only answers without a flag: detection writes them (current.gpu = "auto")."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    recommend.register(p)
    return p


def _schema_leaf(key: str) -> dict[str, Any]:
    schema = Answers.model_json_schema()
    node: dict[str, Any] = schema
    for part in key.split("."):
        prop = node["properties"][part]
        ref = prop.get("$ref") or next((a["$ref"] for a in prop.get("anyOf", []) if "$ref" in a), None)
        node = schema["$defs"][ref.rsplit("/", 1)[-1]] if ref and part != key.split(".")[-1] else prop
    return node


def _value(f: AnswerField) -> str:
    """A valid text for the field's flag."""
    if f.values:
        return str(f.values[-1])
    if f.kind == "list":
        return ",".join(list(f.choices)[:2])
    if f.key in ("precision.weights", "precision.kv_cache"):
        return "fp8"
    if f.key in ("deployment.pue", "inference.peak_to_average"):
        return "1.2"
    return {"int": "3", "float": "0.5"}.get(f.kind, "llama-3.1-8b" if f.key == "model.name" else "x")


def test_every_field_is_declared_once_with_a_description() -> None:
    leaves = {k for k in Answers().flat()}
    assert {f.key for f in FIELDS} == leaves
    assert all(f.description for f in FIELDS)
    flags = [f.flag for f in FIELDS if f.flag]
    assert len(flags) == len(set(flags))  # no two answers share a flag
    assert {f.key for f in FIELDS if not f.flag} == SET_BY_DETECTION


@pytest.mark.parametrize("field", FIELDS, ids=[f.key for f in FIELDS])
def test_flag_question_and_schema_agree(field: AnswerField) -> None:
    # the JSON Schema of the answers file carries the same words
    leaf = _schema_leaf(field.key)
    assert leaf["description"] == field.description
    assert leaf.get("flag") == field.flag
    assert leaf.get("question") == field.question
    # the command line: the flag exists, says which answer it sets, and sets it
    if field.flag:
        action = next(a for a in parser()._actions if field.option in a.option_strings)
        assert action.help is not None and f"[{field.key}]" in action.help
        assert field.description.replace("%", "%%") in action.help
        argv = [field.option] if field.kind == "bool" else [field.option, _value(field)]
        if field.key.startswith("inference."):
            argv += ["--workload", "inference"]
        elif field.key.startswith(("training.", "finetune.")):
            argv += ["--workload", "finetune"]
        args = parser().parse_args(argv)
        given = recommend.answers_from(args).given()
        node: Any = given
        for part in field.key.split("."):
            node = node[part]
        assert node is not None
    # the questionnaire: the question is asked in the field's words, with its choices
    key = "model" if field.key == "model.name" else field.key
    if field.question is None:
        assert key not in QUESTIONS
        return
    q = QUESTIONS[key]
    assert q.label == field.question and q.why == field.hint and q.unit == field.unit
    assert q.kind == (field.widget or KINDS[field.kind])
    assert [c.value for c in q.choices] == list(field.choices)
    if field.kind == "choice":
        assert set(field.choices) <= set(field.values)  # every choice offered is a value the model accepts


def test_every_question_is_an_answer_field() -> None:
    asked = {("model.name" if k == "model" else k) for k in QUESTIONS}
    assert asked == {f.key for f in FIELDS if f.question}


def test_new_flags_reach_the_consultation() -> None:
    args = parser().parse_args(["--vendors", "nvidia,amd", "--providers", "aws, lambda", "--models-per-gpu", "4",
                                "--no-spot", "--datacenter-only", "--tokens", "2T", "--workload", "training"])
    answers = recommend.answers_from(args)
    assert answers.constraints.vendors == ["nvidia", "amd"] and answers.deployment.providers == ["aws", "lambda"]
    assert answers.inference.models_per_gpu == 4 and answers.deployment.spot is False
    assert answers.constraints.datacenter_only is True and answers.training.tokens_b == 2000


@pytest.mark.parametrize(("flag", "billions"), [("2T", 2000), ("500M", 0.5), ("61k", 6.1e-5), ("0.02", 0.02)])
def test_token_flags_read_their_suffix(flag: str, billions: float) -> None:
    args = parser().parse_args(["--workload", "finetune", "--model", "llama-3.1-8b", "--tokens", flag])
    assert recommend.answers_from(args).training.tokens_b == pytest.approx(billions)


def test_derivations_read_only_answer_fields() -> None:
    """The workload profile reads answers by their dotted keys: every key it reads is a declared field."""
    import gpuadvisor.rules.planning.profile as profile

    source = Path(profile.__file__).read_text(encoding="utf-8")
    read = set(re.findall(r'\ba\("([a-z_.]+)"\)', source))
    assert read and read <= {f.key for f in FIELDS}


def test_bad_flag_value_names_the_flag() -> None:
    from gpuadvisor.knowledge.errors import InputError

    with pytest.raises(InputError, match=r"--models-per-gpu"):
        recommend.answers_from(parser().parse_args(["--models-per-gpu", "0"]))
    assert parse_answers({"inference": {"models_per_gpu": 2}}).inference.models_per_gpu == 2
