"""Plain data of the engine layer: rules, inputs, derivations and explanation trees."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

DEFAULT_STRATUM = 10

# then(ctx, **facts_by_alias): facts are copies of the stored facts; the return value is ignored.
Callback = Callable[..., object]


@dataclass(frozen=True)
class Source:
    """Where a rule comes from: a document id of the knowledge base and a section inside it."""

    document: str
    section: str = ""


@dataclass(frozen=True)
class Example:
    """A rule-pack example: `expect` is "fire" or "quiet"; `data` holds the other keys, interpreted by the caller."""

    expect: Literal["fire", "quiet"]
    data: Mapping[str, Any]
    line: int | None = None


@dataclass(frozen=True, eq=False)
class Rule:
    """One rule: engine-JSON patterns (`when`) and the Python callable run when they match (`then`).

    `when` is durable-rules' "all" list, one single-key dict per alias: `[{"opt": {"kind": "option"}}, ...]`.
    Several aliases are a join of several distinct facts. `stratum` becomes the engine priority: lower runs first.
    Everything after `stratum` is descriptive (explanations, lint messages, example tests).
    """

    id: str
    when: Sequence[Mapping[str, Any]]
    then: Callback
    stratum: int = DEFAULT_STRATUM
    heuristic: str = ""
    title: str = ""
    explain: str = ""
    source: Source | None = None
    pack: str = ""
    file: str = ""
    line: int | None = None
    examples: tuple[Example, ...] = ()
    action: str = "call"
    severity: str = ""
    message: str = ""

    @property
    def aliases(self) -> tuple[str, ...]:
        """The pattern aliases in `when` order; a callback gets its facts under these names."""
        return tuple(next(iter(p)) for p in self.when)


class InputFact(NamedTuple):
    """A fact handed to `consult`, with where it came from ("answer: precision.weights", "knowledge: ...")."""

    fact: Mapping[str, Any]
    origin: str
    attachment: Any = None
    """Kept beside the stored fact (`Consultation.attachment`), out of the engine's sight: the typed value the fact
    flattens (e.g. the formats record beside a `precision` fact)."""


class Derivation(NamedTuple):
    """One justification of a fact: the rule and premise fact ids that concluded it, or the origin of an input.
    (A named tuple: one is built per conclusion, and a tuple is the cheapest immutable record to build.)"""

    rule_id: str | None
    premises: tuple[int, ...] = ()
    origin: str | None = None

    @property
    def is_input(self) -> bool:
        return self.rule_id is None


@dataclass(frozen=True)
class WhyNode:
    """Why a fact holds: its derivations and, as children, the premises of all of them (first-seen order).

    Shared premises appear under every fact that uses them. `cut` marks a fact already on the path from the root
    (a derivation cycle, possible only through repeated conclusions); such a node has no children.
    """

    fact_id: int
    fact: Mapping[str, Any]
    derivations: tuple[Derivation, ...]
    children: tuple[WhyNode, ...] = field(default=())
    cut: bool = False

    def children_of(self, derivation: Derivation) -> tuple[WhyNode, ...]:
        """The child nodes that are premises of one of this node's derivations, in premise order."""
        by_id = {c.fact_id: c for c in self.children}
        return tuple(by_id[p] for p in derivation.premises if p in by_id)

    def render(self, indent: str = "  ") -> list[str]:
        """A plain-text tree, one line per node: `#id {fact} <- rule(s) or origin(s)`."""
        return _render(self, indent, 0)


def _render(node: WhyNode, indent: str, depth: int) -> list[str]:
    reasons = ", ".join(d.rule_id if d.rule_id is not None else f"input ({d.origin})" for d in node.derivations)
    text = json.dumps(dict(node.fact), sort_keys=True, ensure_ascii=False)
    lines = [f"{indent * depth}#{node.fact_id} {text} <- {reasons}{' (cycle)' if node.cut else ''}"]
    for child in node.children:
        lines.extend(_render(child, indent, depth + 1))
    return lines
