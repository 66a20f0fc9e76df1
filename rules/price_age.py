"""How old a price is, in whole months: ranking on a stale price deserves a warning, an undated one says so.

"Today" is the machine's date unless `GPUADVISOR_TODAY` (YYYY-MM-DD) is set, so tests and recorded consultations
can fix it.
"""

from __future__ import annotations

import os
from datetime import date

from gpuadvisor.knowledge.schema import parse_as_of

STALE_MONTHS = 12
"""A price older than this is flagged where it decides a ranking (issue: prices move within a year)."""


def today() -> date:
    fixed = os.environ.get("GPUADVISOR_TODAY")
    return date.fromisoformat(fixed) if fixed else date.today()


def age_months(as_of: str | None, now: date | None = None) -> int | None:
    """Whole months from a price's date to today; None for an undated price."""
    if not as_of:
        return None
    then = parse_as_of(as_of)
    now = now or today()
    return max(0, (now.year - then.year) * 12 + now.month - then.month - (1 if now.day < then.day else 0))


def as_of_label(as_of: str | None) -> str:
    return as_of or "undated"
