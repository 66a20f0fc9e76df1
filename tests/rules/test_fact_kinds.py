"""The fact vocabulary is the typed declaration in rules/inputs/fact_kinds.py: every fact the golden and expert
consultations store has a declared kind, only declared fields, every required one, and values of the declared
types (an int is a float, a bool is neither); and the packs are linted against exactly those fields."""

from __future__ import annotations

import tomllib
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.consultation.facts import FACT_FIELDS
from gpuadvisor.rules.engine import consultation as consultation_module
from gpuadvisor.rules.engine.actions import CONCLUSION_FIELDS
from gpuadvisor.rules.inputs import fact_kinds
from gpuadvisor.rules.inputs.fact_kinds import FACT_KINDS, OptionFact, field_names
from gpuadvisor.rules.lifecycle.answers import parse_any
from gpuadvisor.rules.sizing.cost import COST_PARTS
from tests.rules.test_consult_golden import CASES

OWN_CASES = Path(__file__).parent.parent / "data" / "expert_cases.toml"


def _matches(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if hint is Any:
        return True
    if hint is type(None) or hint is None:
        return value is None
    if origin is not None:
        return isinstance(value, origin)  # list[...] / dict[...]: the container's type
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _stored_facts(monkeypatch: pytest.MonkeyPatch, answers: list[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    store = consultation_module.Consultation.store

    def spy(self: Any, prepared: Any, derivation: Any) -> Any:
        seen.append(prepared.stored)
        return store(self, prepared, derivation)

    monkeypatch.setattr(consultation_module.Consultation, "store", spy)
    for data in answers:
        consult(parse_any(dict(data), "case"), top=10)
    return iter(seen)


def _cases() -> list[Mapping[str, Any]]:
    own = tomllib.loads(OWN_CASES.read_text(encoding="utf-8"))["case"]
    lifecycles = [c["answers"] for c in own if "phase" in c["answers"]][:2]
    return [*CASES.values(), *[c["answers"] for c in own[::6]], *lifecycles]


def test_every_stored_fact_is_of_a_declared_kind_with_declared_typed_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    hints = {kind: typing.get_type_hints(declared, vars(fact_kinds)) for kind, declared in FACT_KINDS.items()}
    problems: set[str] = set()
    kinds_seen: set[str] = set()
    for fact in _stored_facts(monkeypatch, _cases()):
        kind = fact["kind"]
        kinds_seen.add(kind)
        if kind in CONCLUSION_FIELDS:
            problems |= {f"{kind}.{k}: not a field of the conclusion" for k in set(fact) - CONCLUSION_FIELDS[kind]
                         - {"ref", "text"}}
            continue
        declared = FACT_KINDS.get(kind)
        if declared is None:
            problems.add(f"{kind}: undeclared kind")
            continue
        problems |= {f"{kind}.{k}: missing" for k in declared.__required_keys__ - set(fact)}
        for key, value in fact.items():
            if key not in hints[kind]:
                problems.add(f"{kind}.{key}: undeclared field")
            elif not _matches(value, hints[kind][key]):
                problems.add(f"{kind}.{key}: {type(value).__name__} where {hints[kind][key]} is declared")
    assert not problems, "\n".join(sorted(problems))
    # the cases reach the kinds that matter: inputs, profile, configurations, options, conclusions, a lifecycle
    assert {"answer", "accelerator", "workload", "config", "option", "warning", "veto", "ranked", "fleet"} <= kinds_seen


def test_the_packs_vocabulary_is_the_declaration() -> None:
    for kind, declared in FACT_KINDS.items():
        assert FACT_FIELDS[kind] == field_names(declared)
    assert set(FACT_FIELDS) == set(FACT_KINDS) | set(CONCLUSION_FIELDS)


def test_every_decision_cost_part_has_its_option_field() -> None:
    assert {f"cost_{part}_usd" for part in COST_PARTS} <= set(OptionFact.__annotations__)
