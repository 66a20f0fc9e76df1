"""Errors of the rule engine layer: one base class, so callers can catch everything the engine raises."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.errors import AdvisorError, bounded
from gpuadvisor.knowledge.sanitize import shorten


class EngineError(AdvisorError):
    """Base of every error raised by `gpuadvisor.rules.engine`.

    An AdvisorError, so the command line prints it as one message (a broken rule pack names its file, rule and
    field) instead of a traceback.
    """


class FactError(EngineError, ValueError):
    """A fact cannot be stored or sent to the engine (reserved key, NaN, unsupported type, ...)."""


class TemplateError(EngineError, ValueError):
    """A message template is malformed (at load) or cannot be rendered (at fire time)."""


class RuleDefinitionError(EngineError, ValueError):
    """A rule handed to `RuleEngine` is unsafe or malformed for durable-rules (checked before compiling)."""


def _short(fact: Mapping[str, Any] | None, limit: int = 240) -> str:
    if fact is None:
        return "<unknown>"
    text = json.dumps(fact, sort_keys=True, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RuleError(EngineError):
    """A rule failed while a consultation ran: its callback raised, or the engine reported an error.

    Exit code 1: unlike a bad answer or a malformed pack, this is a fault in a rule (ours or a user's).

    Carries the rule id (None when the engine itself failed), the ids of the facts the rule matched and those facts,
    so the message says which rule broke on which input.
    """

    exit_code = 1

    def __init__(
        self,
        rule_id: str | None,
        premises: Sequence[int],
        facts: Sequence[Mapping[str, Any] | None],
        detail: str,
    ) -> None:
        self.rule_id = rule_id
        self.premises = tuple(premises)
        self.facts = tuple(facts)
        self.detail = detail
        self.consultation: Any = None  # the partial Consultation, when a callback failed (for debugging)
        who = f"rule {rule_id!r}" if rule_id is not None else "the rule engine"
        if self.premises:
            on = "; ".join(f"#{fid} {_short(f)}" for fid, f in zip(self.premises, self.facts, strict=True))
            msg = f"{who} failed on facts {on}: {detail}"
        else:
            msg = f"{who} failed: {detail}"
        super().__init__(msg)


@dataclass(frozen=True)
class PackProblem:
    """One lint finding in a rule pack: where it is and what is wrong."""

    file: str
    line: int | None
    rule_id: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        parts = [where]
        if self.rule_id is not None:
            parts.append(f"rule {shorten(repr(self.rule_id))}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


class PackError(EngineError, ValueError):
    """A rule pack failed to load or lint. `problems` lists every finding; the message shows them one per line."""

    def __init__(self, problems: Sequence[PackProblem]) -> None:
        if not problems:
            raise ValueError("PackError needs at least one problem")
        self.problems = tuple(problems)
        first = self.problems[0]
        self.file = first.file
        self.line = first.line
        self.rule_id = first.rule_id
        self.field = first.field
        super().__init__(bounded([str(p) for p in self.problems]))
