"""Which options are weighed first, before their cost: what the user has, then sound plans, then last resorts.

Dollars rank options within a tier (rules/consultation/ranking.py). Two things come before dollars, because a person in
the user's place weighs them first:

- **What you have is the baseline** (seed 003, "start with what you have"). Hardware the user owns that runs the job
  — it survived every constraint and service level — is the first option and the one every other is compared
  against: buying or renting anything is a change to justify against it. A free notebook tier is a session with
  quotas and idle limits, not a machine, so it never ranks above an owned machine that runs the job.
- **Last resorts come last** (rules/planning/splits.py, rule W3.last-resort): a plan that splits a replica over PCIe or
plain
  Ethernet is weighed only when no plan that keeps each replica inside a fast domain meets the budget and targets;
  among themselves last resorts are ranked by what they cost.
"""

from __future__ import annotations

from typing import Literal

Tier = Literal[0, 1, 2]
OWN: Tier = 0
SOUND: Tier = 1
LAST_RESORT: Tier = 2
TIER_WORDS = {OWN: "the hardware you have, which runs the job: every other option is weighed against it",
              SOUND: "", LAST_RESORT: "a last resort, weighed after every plan that keeps each replica inside one "
                                      "fast domain"}
"""How the ranking explains a tier (its WHY line and the ranking reason)."""


def tier(acquisition: str, last_resort: bool) -> Tier:
    """The option's tier: your own hardware first (whatever its layout: it is what you have), then plans without a
    slow split, then the last resorts."""
    if acquisition == "own":
        return OWN
    return LAST_RESORT if last_resort else SOUND
