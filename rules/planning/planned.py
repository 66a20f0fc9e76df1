"""One configuration's plan, kept beside its `config` fact: what ranking, the result and the reports read of it.

The configuration search (rules/consultation/derivations.py, rule H1) plans every unit shape once, without the
explanatory notes
(writing them for hundreds of shapes would cost more than the search). The `Plan` it found is attached to the
`config` fact it concluded (`Consultation.attachment`, a side table by fact id), with the search that found it:
the result reads the plan's figures from there, and the notes of the few options it lists are written from the
plan's own layout (`InferenceSearch.explain`, `TrainingSearch.explain`), never by searching again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from gpuadvisor.knowledge.schema import Accelerator
from gpuadvisor.rules.planning.search import InferenceSearch, Plan, TrainingSearch
from gpuadvisor.rules.planning.units import Unit
from gpuadvisor.rules.sizing.memory import MemoryBreakdown


@dataclass(frozen=True, eq=False)
class Planned:
    """A configuration's plan on its accelerator and unit, and the search that found it (for its notes)."""

    plan: Plan
    accelerator: Accelerator
    unit: Unit
    search: InferenceSearch | TrainingSearch = field(repr=False)

    @property
    def memory(self) -> MemoryBreakdown:
        """The plan's memory per GPU, line by line (bytes): the one breakdown every output is made from."""
        return self.plan.memory

    @cached_property
    def notes(self) -> tuple[str, ...]:
        """The plan's notes (memory, decode, prefill or the run's time), distinct and sorted; written on first read
        from the plan's own layout."""
        return tuple(sorted({n.text for n in self.search.explain(self.accelerator, self.unit, self.plan)}))
