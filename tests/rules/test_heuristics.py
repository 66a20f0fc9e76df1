"""Every item of HEURISTICS.md is a rule that fires on its example and stays quiet on its counter-example.

The examples live next to the rules in the packs (`[[rule.example]]`, answers in the answers-file format), so a rule
and the proof that it works are read together. The checklist is read from ../shared/seeds when it is beside the
repository (as in CI) and from the copy in tests/data otherwise; a coverage test fails if an id has no rule.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.engine import Consultation, Rule
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.lifecycle.answers import is_lifecycle, parse_lifecycle
from gpuadvisor.rules.lifecycle.consult import plan_lifecycle

HERE = Path(__file__).resolve().parent
CHECKLISTS = [HERE.parents[2] / "shared" / "seeds" / "HEURISTICS.md", HERE.parent / "data" / "HEURISTICS.md"]


def checklist_ids() -> list[str]:
    text = next(p for p in CHECKLISTS if p.exists()).read_text(encoding="utf-8")
    return re.findall(r"^- ([SHW]\d+) ", text, flags=re.MULTILINE)


@cache
def advisor() -> Advisor:
    return Advisor(load_catalog(user_dir=None), include_user_packs=False)


@cache
def run(answers_json: str) -> Consultation:
    """The consultation the rules see: one workload's, or for lifecycle answers (with `phase`) the lifecycle
    rules' own consultation over the phases and the chosen fleet (rules/lifecycle/consult.py)."""
    data = json.loads(answers_json)
    if is_lifecycle(data):
        return plan_lifecycle(advisor(), parse_lifecycle(data)).cons
    cons, _ = advisor().run(parse_answers(data))
    return cons


def fired_rules(cons: Consultation) -> set[str]:
    return {rule_id for rule_id, _ in cons.fired}


RULES = advisor().rules
EXAMPLES = [(r, i, ex.expect) for r in RULES for i, ex in enumerate(r.examples)]


def test_checklist_is_complete() -> None:
    ids = checklist_ids()
    assert len(ids) == 12 + 21 + 13
    assert ids[0] == "S1" and ids[-1] == "W13"


@pytest.mark.parametrize("heuristic", checklist_ids())
def test_every_heuristic_has_a_rule_with_a_firing_and_a_quiet_example(heuristic: str) -> None:
    rules = [r for r in RULES if r.heuristic == heuristic]
    assert rules, f"{heuristic} has no rule"
    expects = {ex.expect for r in rules for ex in r.examples}
    assert expects == {"fire", "quiet"}, f"{heuristic}: examples {expects}"
    for r in rules:
        assert r.source is not None and r.source.document.startswith("doc-"), f"{r.id} cites no document"


def test_every_rule_names_an_existing_document_and_has_examples() -> None:
    docs = load_catalog(user_dir=None).documents
    for r in RULES:
        assert r.source is not None and r.source.document in docs, r.id
        assert any(ex.expect == "fire" for ex in r.examples), f"{r.id} has no firing example"


@cache
def run_with_overlay(answers_json: str, overlay: str) -> Consultation:
    """`run` on the shipped knowledge base plus an overlay the example gives (a part a user adds, e.g. one without
    a price, which the shipped base no longer has)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "example.toml"
        path.write_text(overlay, encoding="utf-8")
        catalog = load_catalog(user_dir=None, extra_files=[path])
    cons, _ = Advisor(catalog, include_user_packs=False).run(parse_answers(json.loads(answers_json)))
    return cons


@pytest.mark.parametrize(("rule", "index", "expect"), EXAMPLES,
                         ids=[f"{r.id}-{i}-{e}" for r, i, e in EXAMPLES])
def test_rule_example(rule: Rule, index: int, expect: str) -> None:
    answers = dict(rule.examples[index].data["answers"])
    overlay = rule.examples[index].data.get("overlay")
    cons = (run_with_overlay(json.dumps(answers, sort_keys=True), overlay) if overlay else
            run(json.dumps(answers, sort_keys=True)))
    fired = rule.id in fired_rules(cons)
    if expect == "fire":
        assert fired, f"{rule.id} did not fire on {answers}"
        produced = [fid for fid, derivs in cons.derivations.items() if any(d.rule_id == rule.id for d in derivs)]
        assert produced, f"{rule.id} fired but concluded nothing on {answers}"
    else:
        assert not fired, f"{rule.id} fired on its quiet example {answers}"
