"""How old a price is, today: ranking on a stale price deserves a warning, an undated one says so.

The arithmetic is the knowledge base's (`schema.age_months`, `schema.as_of_label`); this module only fixes what
"today" is: the machine's date unless `GPUADVISOR_TODAY` (YYYY-MM-DD) is set, so tests and recorded consultations
can pin it.
"""

from __future__ import annotations

import os
from datetime import date

from gpuadvisor.knowledge.schema import age_months as _age_months
from gpuadvisor.knowledge.schema import as_of_label

__all__ = ["STALE_MONTHS", "age_months", "as_of_label", "today"]

STALE_MONTHS = 12
"""A price older than this is flagged where it decides a ranking (rule P.stale-price)."""


def today() -> date:
    fixed = os.environ.get("GPUADVISOR_TODAY")
    return date.fromisoformat(fixed) if fixed else date.today()


def age_months(as_of: str | None) -> int | None:
    """Whole months from a price's date to today; None for an undated price."""
    return _age_months(as_of, today())
