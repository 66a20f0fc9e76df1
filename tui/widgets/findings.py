"""Findings, ruled-out options and assumptions as selectable lists; Enter on an entry explains it.

Severity is spelled out ("⚠ RISK", "➜ ADVICE", "ℹ NOTE"): colour only repeats what the text says. Findings come
triaged (rules/consultation/findings.py): the few shown by default, or all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from gpuadvisor.rules.consultation.result import RecommendResult, WhyStep
from gpuadvisor.tui.widgets.format import severity
from gpuadvisor.tui.words import finding_words

MAX_NAMED = 3
"""Options named in a finding's "concerns" line before "and N more"."""


@dataclass
class Explain(Message):
    """Show the WHY chain of a finding."""

    title: str
    why: list[WhyStep]


class FindingList(OptionList):
    """An OptionList whose entries each carry a title and a WHY chain."""

    BINDINGS = [
        Binding("enter", "select", "Why", id="findings.why", tooltip="The chain of reasons behind this entry"),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._why: dict[str, tuple[str, list[WhyStep]]] = {}

    def set_entries(self, entries: list[tuple[str, Text, str, list[WhyStep]]], empty: str) -> None:
        """Entries as (id, prompt, title, why); `empty` is shown (disabled) when there are none."""
        self.clear_options()
        self._why = {eid: (title, why) for eid, _, title, why in entries}
        if entries:
            self.add_options([Option(prompt, id=eid) for eid, prompt, _, _ in entries])
            self.highlighted = 0
        else:
            self.add_option(Option(Text(empty, style="dim"), disabled=True))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id in self._why:
            title, why = self._why[event.option.id]
            self.post_message(Explain(title, why))


def shown_findings(result: RecommendResult, all_findings: bool = False) -> list[int]:
    """Indexes of the findings to list: those shown by default (triage), or every one."""
    every = all_findings or not any(w.shown for w in result.warnings)
    return [i for i, w in enumerate(result.warnings) if every or w.shown]


def warning_entries(result: RecommendResult, styles: dict[str, str] | None = None, all_findings: bool = False,
                    ) -> list[tuple[str, Text, str, list[WhyStep]]]:
    """Findings in their triaged order (about the recommended option first, then by severity); `styles` maps a
    severity to a Rich style (theme colours, set by the screen)."""
    styles = styles or {}
    titles = {r.option: r.title for r in [*result.recommendations, *result.runners_up]}
    out = []
    for i in shown_findings(result, all_findings):
        w = result.warnings[i]
        words = finding_words(w, result)  # a learner's: no id, no practitioner's asides (tui/words.py)
        label = ((words.label, "bold"), "  ") if words.label else ()
        prompt = Text.assemble((severity(w.severity), styles.get(w.severity, "bold")), " ", *label, words.message)
        if w.options:
            names = ", ".join(titles.get(o, o) for o in w.options[:MAX_NAMED])
            more = len(w.options) - MAX_NAMED
            prompt.append(f"\n  concerns: {names}" + (f" and {more} more" if more > 0 else ""), style="dim")
        out.append((f"w{i}", prompt, f"{severity(w.severity)} {words.whole}", w.why))
    return out


def ruled_out_entries(result: RecommendResult) -> list[tuple[str, Text, str, list[WhyStep]]]:
    out = []
    for i, r in enumerate(result.ruled_out):
        tag = f"  ({r.heuristic})" if r.heuristic else ""
        reason = r.reason.removeprefix(f"{r.name}: ")  # the name is already in front
        prompt = Text.assemble(("✖ ", "bold"), (r.name, "bold"), " — ", reason, (tag, "dim"))
        out.append((f"r{i}", prompt, f"Ruled out: {r.name} — {r.reason}", r.why))
    return out


def assumption_entries(result: RecommendResult) -> list[tuple[str, Text, str, list[WhyStep]]]:
    out: list[tuple[str, Text, str, list[WhyStep]]] = []
    for a in result.assumptions:
        value = f"{a.value:g}" if isinstance(a.value, float) else str(a.value)
        prompt = Text.assemble((a.title, "bold"), f": {value} {a.unit}".rstrip(), (f"  — {a.source}", "dim"))
        out.append((f"a-{a.id}", prompt, a.title, []))
    return out
