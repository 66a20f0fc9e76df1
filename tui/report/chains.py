"""Why chains as a report prints them: each fact explained once per report, later mentions pointing to it.

A consultation's chains share most of their facts (every warning about an option re-derives that option's memory
and speed), so printing each chain in full repeats the same derivation dozens of times. The chains are walked in
order of importance (the workload profile, recommendations, findings in their triaged order, rule-outs): the first
time a fact appears its whole sub-chain is printed; in a later chain the fact's own line is kept, its sub-chain
dropped, and the line names the chain that explains it ("see option 1"). A fact met again within the same chain is
not printed again: the reader has just read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuadvisor.rules.consultation.result import RecommendResult, WhyStep
from gpuadvisor.tui.report.common import findings, one_line

CITED_ELSEWHERE = {"your answer", "default", "default answers"}


PROFILE = "the workload profile"
"""Where the facts of `profile_why` are explained (the other chains mark them `repeated`)."""


@dataclass(frozen=True)
class ChainLine:
    step: WhyStep
    depth: int
    see: str | None = None  # the chain that explains the fact ("option 1"), when its sub-chain is not here


def clamp_depths(steps: Sequence[WhyStep]) -> list[int]:
    """Depths that never jump by more than one level (a nested list cannot skip a level)."""
    depths, previous = [], -1
    for step in steps:
        depth = min(step.depth, previous + 1)
        depths.append(depth)
        previous = depth
    return depths


def walk(steps: Sequence[WhyStep], label: str, home: dict[int, str]) -> list[ChainLine]:
    """The lines of one chain; `home` maps fact ids already explained to the chain that explains them, and is
    updated.

    A fact already printed in this chain is left out with its sub-chain. A fact explained by another chain keeps its
    line, which names that chain, and drops its sub-chain only when every fact in it is explained somewhere, so
    nothing a chain cites is lost even if two chains derive the same fact differently.
    """
    depths = clamp_depths(steps)
    out: list[ChainLine] = []
    here: set[int] = set()
    i = 0
    while i < len(steps):
        step, depth = steps[i], depths[i]
        end = i + 1
        while end < len(steps) and depths[end] > depth:
            end += 1
        if step.fact in here:
            i = end
            continue
        where = home.get(step.fact)
        if where is not None and where != label and all(s.fact in home for s in steps[i + 1:end]):
            out.append(ChainLine(step, depth, where if end > i + 1 or step.repeated else None))
            here.add(step.fact)
            i = end
            continue
        home.setdefault(step.fact, label)
        here.add(step.fact)
        out.append(ChainLine(step, depth))
        i += 1
    return out


def lines_of(steps: Sequence[WhyStep]) -> list[ChainLine]:
    """One chain on its own (repeats within it left out)."""
    return walk(steps, "", {})


class ChainBook:
    """The printed lines of every chain of a report, keyed by ("profile", 0), ("option", i), ("warning", i),
    ("ruled_out", i)."""

    def __init__(self, result: RecommendResult, all_findings: bool = False) -> None:
        """`all_findings`: the report prints every finding (else only those shown by default get chains)."""
        home: dict[int, str] = {}
        self._lines: dict[tuple[str, int], list[ChainLine]] = {}
        self._lines[("profile", 0)] = walk(result.profile_why, PROFILE, home)
        for i, rec in enumerate(result.recommendations):
            self._lines[("option", i)] = walk(rec.why, f"option {rec.rank}", home)
        for n, (i, w) in enumerate(findings(result, all_findings), start=1):
            self._lines[("warning", i)] = walk(w.why, f"finding {n} ({w.id})", home)
        for i, o in enumerate(result.ruled_out):
            self._lines[("ruled_out", i)] = walk(o.why, f"ruled out: {o.name}", home)

    def lines(self, kind: str, index: int) -> list[ChainLine]:
        return self._lines.get((kind, index), [])


def why_parts(line: ChainLine) -> tuple[str, str]:
    """A chain line as (what it says, where it comes from): rule title with its heuristic id, the source, and where
    the rest of its explanation is when it is not repeated here."""
    step = line.step
    origin = []
    if step.rule_title or step.rule:
        rule = step.rule_title or step.rule or ""
        origin.append(f"{rule} ({step.heuristic})" if step.heuristic else rule)
        if step.rule_kind in ("constraint", "advice"):
            origin.append(step.rule_kind)
    elif step.heuristic:
        origin.append(step.heuristic)
    if step.source:
        origin.append(f"source: {step.source}")
    if line.see:
        origin.append(f"see {line.see}")
    elif step.repeated:
        origin.append(f"see {PROFILE}")
    return one_line(step.text), one_line(" · ".join(origin))


def sources(steps: Sequence[WhyStep]) -> list[str]:
    """The distinct documents and datasheets a chain cites, in order of first appearance."""
    seen: dict[str, None] = {}
    for step in steps:
        if step.source and step.source not in CITED_ELSEWHERE:
            seen.setdefault(one_line(step.source), None)
    return list(seen)
