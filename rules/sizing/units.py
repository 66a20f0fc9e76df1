"""Units used by every sizing function, and the one place numbers are parsed from and printed for people.

GB means 10^9 bytes everywhere (the vendors' convention for HBM/GDDR capacity and bandwidth), never GiB. Every figure
a person types may carry a K/M/B/T suffix (`--tokens 1T`, `--capex 2M`, `--dau 50k`), and every count printed for
people uses the same suffixes (`20M tokens`, `1T tokens`), never scientific notation: `parse_count`,
`parse_billions` and `parse_amount` read them, `count_text` and `billions_text` write them.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

GB = 1e9
"""Bytes in a gigabyte (decimal, as printed on datasheets)."""
TB = 1e12
TFLOPS = 1e12
SECONDS_PER_HOUR = 3600.0
HOURS_PER_YEAR = 365.0 * 24.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
"""A month of wall-clock time: 730 h."""

_SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_COUNT = re.compile(r"^\s*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:[eE]([+-]?[0-9]+))?\s*([KMBGTkmbgt]?)\s*$")


def parse_count(text: str) -> float:
    """A positive count written plainly or with a K/M/B/T suffix: "7e9", "70B", "1.5T", "500k", "15_000_000".

    Raises ValueError with a message that says what was wrong (the CLI adds the flag name).
    """
    return _count_and_suffix(text)[0]


def parse_billions(text: str) -> float:
    """A count in billions as the answers' count flags take it: a suffix says the unit ("70B" → 70, "500M" → 0.5,
    "61k" → 0.000061), a bare number is billions ("70", "0.02") unless it is a whole count written out ("7e9",
    "15_000_000": from a million up)."""
    value, suffix = _count_and_suffix(text)
    return value / 1e9 if suffix or value >= 1e6 else value


def parse_amount(text: str) -> float:
    """A plain figure (dollars, requests a minute, users) written plainly or with a K/M/B/T suffix: "2M" → 2,000,000,
    "1.5k" → 1,500, "$250,000" → 250,000, "0" → 0. The range is the answers model's to check; raises ValueError
    naming what was typed when it is not a number."""
    cleaned = text.strip().removeprefix("$").replace("_", "").replace(",", "")
    m = _COUNT.match(cleaned)
    if not m:
        raise ValueError(f"{_shown(text)} is not a number (use digits, optionally with K, M, B or T: 2M, 250k)")
    value = float(f"{m[1]}e{m[2] or 0}") * _SUFFIX[m[3].upper()]
    if not math.isfinite(value):
        raise ValueError(f"{_shown(text)} is not a finite number")
    return value


def count_text(value: float) -> str:
    """A count as people write it, with the suffix `parse_count` reads from a million up: `20M`, `1T`, `7.5B`;
    below, written out: `61,035`, `950` (never `2e+07`)."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:,.4g}{suffix}" if value / scale < 1000 else f"{value / scale:,.0f}{suffix}"
    return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 1 else f"{value:.3g}"


def billions_text(billions: float) -> str:
    """A count given in billions (the answers' `tokens_b`, `params_b`) printed as `count_text` does: 0.02 → `20M`,
    1000 → `1T`, 70 → `70B`."""
    return count_text(billions * 1e9)


def _count_and_suffix(text: str) -> tuple[float, str]:
    """`parse_count`'s value and the suffix it was written with ("" for none)."""
    cleaned = text.replace("_", "").replace(",", "")
    m = _COUNT.match(cleaned)
    if not m:
        raise ValueError(f"{_shown(text)} is not a count (use a number, optionally with K, M, B or T: 70B, 1.5T, 500M)")
    value = float(f"{m[1]}e{m[2] or 0}") * _SUFFIX[m[3].upper()]
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{_shown(text)} must be greater than zero")
    return value, m[3]


def _shown(text: str) -> str:
    """What was typed, quoted and cut (a 5,000-digit number is not echoed whole)."""
    from gpuadvisor.knowledge.sanitize import shorten

    return shorten(repr(text), 40)


def to_gb(n_bytes: float) -> float:
    """Bytes → GB (10^9)."""
    return n_bytes / GB


_WIDE = Context(prec=400, Emax=999_999, Emin=-999_999)
"""Room for every digit of the largest float (1.8e308) before the decimal point."""


def fixed(value: float, places: int) -> str:
    """Rounded half away from zero on the decimal digits a person reads (70.55 → 70.6, where `f"{:.1f}"` gives
    70.5 because 70.55 is stored as 70.5499...), with thousands separators: the one rounding every printed figure
    uses."""
    value = float(value)
    if not math.isfinite(value):
        return "∞" if value > 0 else "−∞" if value < 0 else "n/a"  # never reached by a bounded input; never a crash
    quantum = Decimal(1).scaleb(-places)
    with localcontext(_WIDE):  # 1e30 has 31 digits: the default context (28) would raise InvalidOperation
        return f"{Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP):,}"


def usd_text(value: float) -> str:
    """Dollars as a person reads them, never in scientific notation, the same in every screen and report: `$44,864`,
    `$3.59`, `$0.738`, `$0` (free), `−$560` (a resale credit)."""
    if value == 0:
        return "$0"
    sign, size = ("−" if value < 0 else ""), abs(value)
    return f"{sign}${fixed(size, 0 if size >= 100 else 2 if size >= 1 else 3)}"


FLOP_PREFIXES = ((1e24, "yotta"), (1e21, "zetta"), (1e18, "exa"), (1e15, "peta"), (1e12, "tera"), (1e9, "giga"))


def flops_text(value: float) -> str:
    """A FLOP count with an SI prefix: `642 petaFLOPs`, `28.2 exaFLOPs` (never `6.42e+17`)."""
    for scale, prefix in FLOP_PREFIXES:
        if abs(value) >= scale:
            scaled = value / scale
            return f"{scaled:,.0f} {prefix}FLOPs" if scaled >= 100 else f"{scaled:.3g} {prefix}FLOPs"
    return f"{value:,.0f} FLOPs"
