"""The callables behind a rule pack's generic actions (warn, advise, rule_out, add_cost, derive).

Each builds one conclusion from the matched facts and hands it to `ctx.conclude`. Conclusion shapes:

- warn / advise: {"kind": "warning", "rule", "heuristic", "category": "warning" | "advice", "severity", "message",
  "target"}
- rule_out: {"kind": "veto", "rule", "heuristic", "target", "reason"}
- add_cost: {"kind": "cost_part", "rule", "heuristic", "target", "part", "usd", "reason"}: a cost in dollars the
  option pays over the consultation's horizon (engineering effort to port, …), added to its ranked figure
- derive: the rendered `fact` table

`target` is the `ref` field of the fact matched by the target alias ("" for a warning without target). A template
field or `ref` missing at fire time raises TemplateError, which the engine reports as a RuleError naming the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from gpuadvisor.rules.engine.errors import TemplateError
from gpuadvisor.rules.engine.model import Callback
from gpuadvisor.rules.engine.templates import Template
from gpuadvisor.rules.engine.values import json_copy

F = TypeVar("F", bound=Callable[..., object])

GENERIC_ACTIONS = ("warn", "advise", "rule_out", "add_cost", "derive")
READS_ONLY = "__gpuadvisor_reads_only__"
"""Attribute set on the callbacks built here (and on others with `reads_only`): they never modify the facts they
are given, so the engine may hand them the stored facts instead of copies."""


def reads_only(fn: F) -> F:
    """Mark a callback that never modifies the facts it is given (it gets the stored facts, not copies)."""
    setattr(fn, READS_ONLY, True)
    return fn
ACTIONS = (*GENERIC_ACTIONS, "call")
SEVERITIES = ("info", "warning", "critical")

# Fields of the conclusions built here, for callers that add them to their fact schemas.
CONCLUSION_FIELDS: Mapping[str, frozenset[str]] = {
    "warning": frozenset({"kind", "rule", "heuristic", "category", "severity", "message", "target"}),
    "veto": frozenset({"kind", "rule", "heuristic", "target", "reason"}),
    "cost_part": frozenset({"kind", "rule", "heuristic", "target", "part", "usd", "reason"}),
}


@dataclass(frozen=True)
class ActionSpec:
    """A linted `[rule.then]` table of a generic action."""

    rule_id: str
    heuristic: str
    action: str
    severity: str = ""
    target: str | None = None
    part: str = ""
    usd: Template | float | None = None
    message: Template | None = None
    fact: Mapping[str, Any] | None = None  # derive: values are Templates (strings) or literal values


def _target(spec: ActionSpec, facts: Mapping[str, Mapping[str, Any]]) -> str:
    if spec.target is None:
        return ""
    ref = facts[spec.target].get("ref")
    if ref is None:
        kind = facts[spec.target].get("kind")
        raise TemplateError(f"target {spec.target}.ref: the {kind!r} fact has no `ref` field")
    return str(ref)


def _message(spec: ActionSpec, facts: Mapping[str, Mapping[str, Any]]) -> str:
    return spec.message.render(facts) if spec.message is not None else ""


def build_then(spec: ActionSpec) -> Callback:
    """The callback of a generic action; `then(ctx, **facts_by_alias)`, marked `READS_ONLY`."""
    then = _build_then(spec)
    setattr(then, READS_ONLY, True)
    return then


def _build_then(spec: ActionSpec) -> Callback:
    base = {"rule": spec.rule_id, "heuristic": spec.heuristic}

    if spec.action in ("warn", "advise"):
        category = "warning" if spec.action == "warn" else "advice"

        def warn(ctx: Any, **facts: Mapping[str, Any]) -> None:
            ctx.conclude(
                {
                    "kind": "warning",
                    **base,
                    "category": category,
                    "severity": spec.severity,
                    "message": _message(spec, facts),
                    "target": _target(spec, facts),
                }
            )

        return warn
    if spec.action == "rule_out":

        def rule_out(ctx: Any, **facts: Mapping[str, Any]) -> None:
            ctx.conclude({"kind": "veto", **base, "target": _target(spec, facts), "reason": _message(spec, facts)})

        return rule_out
    if spec.action == "add_cost":

        def add_cost(ctx: Any, **facts: Mapping[str, Any]) -> None:
            usd = spec.usd.value(facts) if isinstance(spec.usd, Template) else spec.usd
            if isinstance(usd, bool) or not isinstance(usd, int | float):
                raise TemplateError(f"then.usd: {usd!r} is not a number of dollars")
            ctx.conclude(
                {
                    "kind": "cost_part",
                    **base,
                    "target": _target(spec, facts),
                    "part": spec.part,
                    "usd": float(usd),
                    "reason": _message(spec, facts),
                }
            )

        return add_cost
    if spec.action == "derive" and spec.fact is not None:
        table = spec.fact

        def derive(ctx: Any, **facts: Mapping[str, Any]) -> None:
            ctx.conclude({k: (v.value(facts) if isinstance(v, Template) else json_copy(v)) for k, v in table.items()})

        return derive
    raise ValueError(f"rule {spec.rule_id!r}: no generic action {spec.action!r}")
