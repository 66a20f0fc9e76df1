"""Which consultation a screen shows: a single one, or one phase of a lifecycle (issue 29).

A phase's results, its compare and its what-if act on the phase *within* its lifecycle: the what-if form starts from
the phase's own answers (the lifecycle's shared answers merged in), a change goes back into the lifecycle (the
budget to the shared table, anything else to the phase's own), and the whole lifecycle is planned again, so a
what-if never replaces the lifecycle by an unrelated consultation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuadvisor.rules.answers import Answers
    from gpuadvisor.rules.lifecycle_answers import LifecycleAnswers
    from gpuadvisor.rules.result import RecommendResult

SHARED_ONLY = ("budget",)
"""Answers a lifecycle holds only at its top level (one budget for the whole): a what-if changes them there."""


def is_shared(dotted: str) -> bool:
    """An answer the lifecycle's phases share (rules.lifecycle_answers.SHARED_SECTIONS: stage, budget, deployment,
    constraints, framework, current)."""
    from gpuadvisor.rules.lifecycle_answers import SHARED_SECTIONS

    return dotted.split(".")[0] in SHARED_SECTIONS


@dataclass(frozen=True)
class PhaseOf:
    """Phase `index` (1-based) of a planned lifecycle: its answers, the lifecycle's result and the phase's."""

    lifecycle: LifecycleAnswers
    result: RecommendResult
    """The lifecycle's result (its `phases` hold each phase's own)."""
    index: int

    @property
    def answers(self) -> Answers:
        """The phase's answers, the shared ones merged in (what its consultation ran on)."""
        return self.lifecycle.phases[self.index - 1].answers

    @property
    def phase_result(self) -> RecommendResult:
        return self.result.phases[self.index - 1]

    @property
    def in_plan(self) -> str:
        """When the lifecycle runs the phase and what it costs there (`months 0.6–36.0 (35.4 months), $43,334`):
        the phase's own results price it alone, over the whole horizon."""
        from gpuadvisor.tui.report import common as c

        life = self.result.lifecycle
        if life is None or len(life.plan) < self.index:
            return ""
        p = life.plan[self.index - 1]
        return f"{c.phase_when(p)}, {c.usd(c.phase_spend(p))}"

    @property
    def label(self) -> str:
        """`Phase 2 of 2 (serve)`."""
        return f"Phase {self.index} of {len(self.lifecycle.phases)} ({self.lifecycle.phases[self.index - 1].name})"


def _flat(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _set(d: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        nxt = d.get(p)
        if not isinstance(nxt, dict):
            nxt = d[p] = {}
        d = nxt
    if value is None:
        d.pop(leaf, None)
    else:
        d[leaf] = value


def _prune(d: dict[str, Any]) -> None:
    """Drop the tables a removal left empty (an empty [budget] is not an answer)."""
    for k in [k for k, v in d.items() if isinstance(v, dict)]:
        _prune(d[k])
        if not d[k]:
            del d[k]


def changed_answers(before: Answers, after: Answers) -> dict[str, Any]:
    """The given value of each dotted key in `after` (None: no longer given), for the keys whose given value
    differs. The one place a what-if's change is merged into answers (issue 40's Answers.with_changes can take its
    place)."""
    old, new = _flat(before.given()), _flat(after.given())
    return {k: new.get(k) for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)}


def with_changes(lifecycle: LifecycleAnswers, index: int, changes: Mapping[str, Any]) -> LifecycleAnswers:
    """The lifecycle with phase `index`'s answers changed (dotted key → value, None to remove): the budget in the
    shared table, the rest in the phase's own table (a phase's keys win over the shared ones). Validated as a file
    is; InputError names the phase and field. The lifecycle's shared answers change with `with_shared_changes`."""
    from gpuadvisor.rules.lifecycle_answers import parse_lifecycle

    data = copy.deepcopy(dict(lifecycle.data))
    phase = data["phase"][index - 1]
    for dotted, value in changes.items():
        target = data if dotted.split(".")[0] in SHARED_ONLY else phase
        _set(target, dotted, value)
        if value is None and target is phase and dotted.split(".")[0] in data:
            _set(data, dotted, None)  # removed from the phase: the shared value would come back through the merge
    _prune(data)
    return parse_lifecycle(data, "what-if")


def with_shared_changes(lifecycle: LifecycleAnswers, changes: Mapping[str, Any]) -> LifecycleAnswers:
    """The lifecycle with the answers its phases share changed (`is_shared` keys only, in its top-level tables; a
    phase that gives its own value keeps it). Validated as a file is."""
    from gpuadvisor.rules.lifecycle_answers import parse_lifecycle

    data = copy.deepcopy(dict(lifecycle.data))
    for dotted, value in changes.items():
        if is_shared(dotted):
            _set(data, dotted, value)
    _prune(data)
    return parse_lifecycle(data, "what-if")
