"""Which consultation a screen shows: a single one, or one phase of a lifecycle (issue 29).

A phase's results, its compare and its what-if act on the phase *within* its lifecycle: the what-if form starts from
the phase's own answers (the lifecycle's shared answers merged in), a change goes back into the lifecycle (the
budget to the shared table, anything else to the phase's own), and the whole lifecycle is planned again, so a
what-if never replaces the lifecycle by an unrelated consultation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers

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


def changed_answers(before: Answers, after: Answers, keys: list[str]) -> dict[str, Any]:
    """The given value of each dotted key in `after` (None: no longer given), for the keys that differ."""
    from gpuadvisor.rules.inputs.answers import flatten_dotted

    old, new = dict(flatten_dotted(before.given())), dict(flatten_dotted(after.given()))
    return {k: new.get(k) for k in keys if old.get(k) != new.get(k)}


def is_shared(dotted: str) -> bool:
    """An answer the lifecycle's phases share (rules.lifecycle_answers.SHARED_SECTIONS: stage, budget, deployment,
    constraints, framework, current)."""
    from gpuadvisor.rules.lifecycle.answers import SHARED_SECTIONS

    return dotted.split(".")[0] in SHARED_SECTIONS


def with_shared_changes(lifecycle: LifecycleAnswers, changes: Mapping[str, Any]) -> LifecycleAnswers:
    """The lifecycle with the answers its phases share changed (`is_shared` keys only, in its top-level tables; a
    phase that gives its own value keeps it). Validated as a file is; InputError names the field."""
    from gpuadvisor.rules.inputs.answers import put_dotted
    from gpuadvisor.rules.lifecycle.answers import parse_lifecycle

    data = lifecycle.given()
    for dotted, value in changes.items():
        if is_shared(dotted):
            put_dotted(data, dotted, value)
    return parse_lifecycle(data, "what-if")
