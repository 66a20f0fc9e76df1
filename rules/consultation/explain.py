"""Turn the engine's justification records into readable WHY chains (`WhyStep` lines) with source citations.

A chain is flattened depth-first from the fact being explained down to the answers and knowledge-base entries. A fact
already explained higher up in the same chain is shown once more, marked `repeated`, and not expanded again; the
default answers under one fact are folded into one line (they are all listed under "defaults applied"), so chains stay
readable however many rules share the profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consultation.result import WhyStep
from gpuadvisor.rules.engine import Consultation, Rule

MAX_DEPTH = 12
PYTHON_RULES: dict[str, tuple[str, str]] = {
    "RANK": ("Ranking: by the Total, what the option costs over your horizon in dollars, cheapest first",
             "002_b9a26b66ce9b897d.txt › Summary (match the hardware to the bottleneck, at the least cost)"),
}
"""Rules of the final Python stratum (ranking), which the engine does not know: id → (title, source). The words are
the README's (*How options are ranked*); tests/rules/test_ranking_words.py holds them together."""
RULE_KINDS = {"rule_out": "constraint", "warn": "advice", "advise": "advice"}
"""What a rule is, by its action: constraints rule out, advice warns or explains, the rest derive figures or add a
cost in dollars (`add_cost`)."""


def describe(fact: Mapping[str, Any]) -> str:
    """The words of a fact: its `text` if a rule wrote one, else a compact rendering of its fields."""
    text = fact.get("text")
    if isinstance(text, str) and text:
        return text
    for key in ("message", "reason"):
        if isinstance(fact.get(key), str) and fact[key]:
            return str(fact[key])
    fields = ", ".join(f"{k}={v}" for k, v in fact.items()
                       if k not in {"kind", "ref"} and not isinstance(v, dict | list))
    return f"{fact.get('kind', 'fact')}: {fields}"


def cite(rule: Rule, catalog: Catalog) -> str:
    """'002_….txt › Common Mistakes' for a rule's source document and section."""
    if rule.source is None:
        return rule.pack or ""
    doc = catalog.documents.get(rule.source.document)
    name = doc.file if doc else rule.source.document
    return f"{name} › {rule.source.section}" if rule.source.section else name


def origin_source(origin: str | None, fact: Mapping[str, Any], catalog: Catalog) -> str:
    """Where an input fact came from: 'your answer', 'default answer', or a knowledge-base file and its sources."""
    kind = fact.get("kind")
    if kind == "answer":
        return "your answer" if fact.get("given") else "default answer"
    if kind == "accelerator":
        acc = catalog.accelerators.get(str(fact.get("key")))
        if acc is not None:
            return f"{origin} [sources: {', '.join(acc.sources)}]"
    if kind == "instance":
        inst = catalog.instances.get(str(fact.get("key")))
        if inst is not None:
            return f"{origin} [sources: {', '.join(sorted({s for p in inst.price for s in p.sources}))}]"
    return origin or "input"


class _Line(NamedTuple):
    fields: dict[str, Any]
    """WhyStep fields of the fact: kind, text, rule, rule_title, heuristic, source."""
    premises: tuple[int, ...]
    """Premises to expand, in first-seen order (default answers left out when they are folded)."""
    folded: dict[str, Any] | None
    """The one line standing for more than two default answers, or None."""


class Explainer:
    """Flattens WHY chains of one consultation; rule citations are computed once per rule."""

    def __init__(self, cons: Consultation, catalog: Catalog) -> None:
        self.cons = cons
        self.catalog = catalog
        self._rule_info: dict[str, tuple[str | None, str | None, str | None, str | None]] = {}
        self._lines: dict[int, _Line] = {}
        self._steps: dict[tuple[int, int, bool | None], WhyStep] = {}  # equal lines are one (immutable) object

    def _info(self, rule_id: str) -> tuple[str | None, str | None, str | None, str | None]:
        """(title, heuristic, source, kind) of a rule, engine or Python stratum."""
        if rule_id not in self._rule_info:
            rule = self.cons.rules.get(rule_id)
            if rule is not None:
                self._rule_info[rule_id] = (rule.title, rule.heuristic or None, cite(rule, self.catalog) or None,
                                            RULE_KINDS.get(rule.action, "derivation"))
            elif rule_id in PYTHON_RULES:
                title, source = PYTHON_RULES[rule_id]
                self._rule_info[rule_id] = (title, None, source, "ranking")
            else:
                self._rule_info[rule_id] = (None, None, None, None)
        return self._rule_info[rule_id]

    def chain(self, fid: int, explained: frozenset[int] = frozenset()) -> list[WhyStep]:
        """The WHY chain of fact `fid` as lines; the first line is the fact itself. Facts in `explained` (shown in
        a chain the reader has already, such as the profile) appear once, marked `repeated`, without their own
        premises."""
        steps: list[WhyStep] = []
        self._walk(fid, 0, steps, set(explained))
        return steps

    def _line(self, f: int) -> _Line:
        """What every WhyStep of fact `f` shows besides depth and `repeated`, and its premises (computed once)."""
        line = self._lines.get(f)
        if line is not None:
            return line
        peek = self.cons.peek
        fact = peek(f)
        derivs = self.cons.derivation_records(f)
        deriv = derivs[0]
        kind = str(fact.get("kind", ""))
        if deriv.rule_id is not None:
            title, heuristic, source, rule_kind = self._info(deriv.rule_id)
            if kind == "ruled_out":  # a configuration search that found nothing that fits: impossible
                rule_kind = "constraint"
            fields = {"kind": kind, "text": describe(fact), "rule": deriv.rule_id, "rule_title": title,
                      "heuristic": heuristic, "source": source, "rule_kind": rule_kind}
        else:
            fields = {"kind": kind, "text": describe(fact), "rule": None, "rule_title": None, "heuristic": None,
                      "source": origin_source(deriv.origin, fact, self.catalog)}
        premises = tuple(dict.fromkeys(p for d in derivs for p in d.premises))
        defaults = tuple(p for p in premises if peek(p).get("kind") == "answer" and not peek(p).get("given"))
        folded = None
        if len(defaults) > 2:
            keys = ", ".join(str(peek(p)["key"]) for p in defaults[:4])
            folded = {"fact": defaults[0], "kind": "answer",
                      "text": f"{len(defaults)} default answers ({keys}, …; see defaults applied)", "rule": None,
                      "rule_title": None, "heuristic": None, "source": "default answers", "repeated": False}
            premises = tuple(p for p in premises if p not in defaults)
        line = _Line(fields, premises, folded)
        self._lines[f] = line
        return line

    def _walk(self, f: int, depth: int, steps: list[WhyStep], seen: set[int]) -> None:
        """Append fact `f` and (unless already seen or too deep) its premises, depth-first.

        A method rather than a nested recursive function: a closure that calls itself is a reference cycle, which
        would keep the whole consultation alive until the cyclic garbage collector runs."""
        line = self._line(f)
        repeated = f in seen
        key: tuple[int, int, bool | None] = (f, depth, repeated)
        step = self._steps.get(key)
        if step is None:  # the same line recurs across chains (the profile under every option): built once
            step = self._steps[key] = WhyStep(depth=depth, fact=f, repeated=repeated, **line.fields)
        steps.append(step)
        if repeated or depth >= MAX_DEPTH:
            return
        seen.add(f)
        for p in line.premises:
            self._walk(p, depth + 1, steps, seen)
        if line.folded is not None:
            key = (f, depth, None)
            step = self._steps.get(key)
            if step is None:
                step = self._steps[key] = WhyStep(depth=depth + 1, **line.folded)
            steps.append(step)

    def chains(self, fids: list[int]) -> list[WhyStep]:
        """Several chains as one, each fact explained once: what `profile_why` holds."""
        steps: list[WhyStep] = []
        done: set[int] = set()
        for f in fids:
            part = self.chain(f, frozenset(done))
            steps += part
            done.update(s.fact for s in part)
        return steps


def flatten(cons: Consultation, fid: int, catalog: Catalog) -> list[WhyStep]:
    """The WHY chain of one fact (convenience for a single explanation)."""
    return Explainer(cons, catalog).chain(fid)
