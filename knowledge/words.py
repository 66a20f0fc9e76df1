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


def counted(count: float, word: str, many: str | None = None) -> str:
    """`count` and `word` in the number the count takes; `many` for an irregular plural. Whole counts get thousands
    separators, others their shortest form ('2.5')."""
    shown = f"{int(count):,}" if float(count).is_integer() else f"{count:,g}"
    return f"{shown} {word if count == 1 else (many or plural(word))}"
