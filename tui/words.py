"""The words of a finding for its reader, by stage: a learner reads what to do, a practitioner the rule behind it.

A finding's message is written once, by its rule, for anyone. At the top of the results and of a report a learner
(stage = learning) sees it without what only a practitioner uses (issue 42): no rule id in front ("H1", "A.free-
sessions"), no rule id in brackets ("(H10.port)"), and no modelling caveat quoted from the engine (a finding that
quotes why an option was ruled out — "no published dense training throughput to size the run with" — says its
conclusion; the quote is the option's). All of it stays one keystroke away: the finding's WHY (Enter, or "Why?" in a
report) is titled with the whole message and its id, and the JSON keeps the message as the rule wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuadvisor.rules.consultation.result import RecommendResult, Warning

LEARNER_STAGES = frozenset({"learning"})
RULE_ID = r"[A-Z][A-Za-z0-9]*\.[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*)*"
"""A rule id as the packs write them (`H10.port`, `SW.dropped-production`, `A.own-no-fit`)."""
_BRACKETED_ID = re.compile(rf"\s*\((?:[^()]*?:\s*)?{RULE_ID}\)")
"""A bracket that ends with a rule id: "(H10.port)", "(a production purchase of it is ruled out: SW.dropped-…)"."""


def for_learner(result: RecommendResult) -> bool:
    return str(result.answers_effective.get("stage", "")) in LEARNER_STAGES


@dataclass(frozen=True)
class FindingWords:
    label: str
    """What names the finding in front of its message: its id, or nothing for a learner."""
    message: str
    """The message as its reader reads it at the top."""
    whole: str
    """The message as the rule wrote it, with its id: the title of its WHY."""


def finding_words(w: Warning, result: RecommendResult) -> FindingWords:
    whole = f"{w.id}: {w.message}"
    if not for_learner(result):
        return FindingWords(w.id, w.message, whole)
    return FindingWords("", learner_message(w.message, [o.reason for o in result.ruled_out]), whole)


def learner_message(message: str, quoted: list[str]) -> str:
    """`message` without bracketed rule ids and without a rule-out's reason it quotes (`quoted`)."""
    text = message
    for reason in sorted({r for r in quoted if r}, key=len, reverse=True):
        if reason in text:
            text = re.sub(rf"\s*:?\s*{re.escape(reason)}", "", text, count=1)
    text = _BRACKETED_ID.sub("", text)
    text = re.sub(r"\s+([.,;:])", r"\1", text).strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."
