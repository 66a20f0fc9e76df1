"""Counts in words: '1 engineer-week', '2.5 engineer-weeks', '1 sequence', '32 sequences'.

One function so every sentence the tool writes puts a noun in the number its count takes (issue 42: "1
engineer-weeks", "Batch size 1 sequences"): English uses the singular for exactly one and the plural otherwise,
fractions and zero included ("0.5 engineer-weeks", "0 links").
"""

from __future__ import annotations

SIBILANT_ENDINGS = ("ch", "sh", "s", "x", "z")
"""Endings whose plural takes -es (switch → switches)."""


def plural(word: str) -> str:
    """The regular plural of a noun (the last word of a compound: engineer-week → engineer-weeks)."""
    return word + ("es" if word.endswith(SIBILANT_ENDINGS) else "s")


def singular(word: str) -> str:
    """The singular of a regular plural (`sequences` → `sequence`, `switches` → `switch`): a unit a count is in."""
    if word.endswith("es") and word[:-2].endswith(SIBILANT_ENDINGS):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def in_number(count: float, word: str) -> str:
    """A plural noun (a unit: `sequences`, `tokens`) in the number `count` takes: `sequence` for exactly one."""
    return singular(word) if count == 1 else word


def counted(count: float, word: str, many: str | None = None) -> str:
    """`count` and `word` in the number the count takes; `many` for an irregular plural. Whole counts get thousands
    separators, others their shortest form ('2.5')."""
    shown = f"{int(count):,}" if float(count).is_integer() else f"{count:,g}"
    return f"{shown} {word if count == 1 else (many or plural(word))}"
