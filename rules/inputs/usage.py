"""How the hardware will be used: hours a month, the busy fraction of owned hardware, and rental sessions.

Costs follow usage, not the calendar. A student who works a few hours a week pays for those hours, not for 730; a
service that is always on pays for all of them. Renting also costs time that does no work: every session starts an
instance, installs the environment and loads the model, and some providers bill a minimum. That fixed cost is why a
10-minute job does not belong on the most expensive GPU, so it is part of every rental's price here.

The defaults (hours by stage, session length and overhead) are assumptions of `knowledge/data/assumptions.toml`,
each with a range; answers given by the user always win.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.inputs.workload import workload_of
from gpuadvisor.rules.sizing.units import HOURS_PER_MONTH

DEFAULTS = {
    "usage_hours_learning": 20.0,
    "usage_hours_prototyping": 60.0,
    "interactive_session_hours": 3.0,
    "rental_session_overhead_hours": 0.25,
    "owned_utilization_production": 0.5,
}
"""Fallbacks equal to assumptions.toml, for callers without a catalog (a test keeps them equal)."""


@dataclass(frozen=True)
class Usage:
    """The usage a consultation is costed for."""

    hours_per_month: float
    """Hours a month the hardware is in use: rented hours, or busy hours of owned hardware (serving and
    interactive work). Training and fine-tuning are costed per run instead."""
    utilization: float
    """Busy fraction of owned hardware (hours_per_month ÷ 730 unless given)."""
    sessions_per_month: float
    """Rental sessions a month (each pays the session overhead once); 1 for an always-on service."""
    session_overhead_hours: float
    """Billed hours per session that do no work: instance start, setup, model load, minimum billing."""
    per_run: bool
    """Training and fine-tuning: costs are per run, one session per run."""
    basis: str
    """How the figures were obtained, for the WHY chain."""

    @property
    def overhead_hours_per_month(self) -> float:
        return self.sessions_per_month * self.session_overhead_hours

    def rented_hours_per_month(self) -> float:
        """Billed hours a month of an interactive or serving rental: use plus the sessions' overhead."""
        return min(HOURS_PER_MONTH, self.hours_per_month + self.overhead_hours_per_month)

    def rented_hours_per_run(self, wall_hours: float) -> float:
        """Billed hours of one training run: its wall time plus one session's overhead."""
        return wall_hours + self.session_overhead_hours


def usage_profile(workload: str, stage: str, hours_given: float | None, utilization_given: float | None,
                  values: Mapping[str, float] | None = None) -> Usage:
    """The usage implied by the answers; what is not given comes from the other answer, or from the stage."""
    v = {**DEFAULTS, **(values or {})}
    overhead = float(v["rental_session_overhead_hours"])
    per_run = workload != "inference"
    if hours_given is not None:
        hours = float(hours_given)
        basis = f"{hours:g} h a month (your answer)"
    elif utilization_given is not None:
        hours = float(utilization_given) * HOURS_PER_MONTH
        basis = f"utilization {utilization_given:.0%} of 730 h = {hours:,.0f} h a month"
    elif stage in ("learning", "prototyping"):
        hours = float(v[f"usage_hours_{stage}"])
        basis = f"{hours:g} h a month, typical while {stage} (assumption usage_hours_{stage}; set " \
                "deployment.hours_per_month)"
    else:
        hours = HOURS_PER_MONTH
        basis = "always on, 730 h a month (production; set deployment.hours_per_month)"
    if utilization_given is not None:
        util = float(utilization_given)
    elif hours_given is not None or stage in ("learning", "prototyping"):
        util = max(0.01, min(1.0, hours / HOURS_PER_MONTH))
    else:
        util = float(v["owned_utilization_production"])
    if per_run:
        sessions = 1.0
    elif hours >= HOURS_PER_MONTH - 1e-9:
        sessions = 1.0
    else:
        sessions = max(1.0, math.ceil(hours / float(v["interactive_session_hours"])))
    return Usage(hours_per_month=hours, utilization=util, sessions_per_month=sessions,
                 session_overhead_hours=overhead, per_run=per_run, basis=basis)


def spot_hours(catalog: Catalog) -> float:
    """Hours a spot machine can expect to run before it is reclaimed (assumption spot_uninterrupted_hours)."""
    found = catalog.assumptions.get("spot_uninterrupted_hours")
    return found.value if found is not None else 24.0


def usage_values(catalog: Catalog) -> dict[str, float]:
    """The usage assumptions of a catalog (an overlay can change them)."""
    return {k: catalog.assumptions[k].value if k in catalog.assumptions else d for k, d in DEFAULTS.items()}


class UsageRules:
    """The callback of rule U.usage: the usage fact every price stands on."""

    def __init__(self, catalog: Catalog) -> None:
        self.values = usage_values(catalog)

    def table(self) -> dict[str, Callback]:
        return {"usage": self.usage}

    def usage(self, ctx: RuleContext, work: Mapping[str, Any]) -> None:
        w = workload_of(ctx)
        u = usage_profile(w.workload, w.stage, w.hours_per_month_given, w.utilization_given, self.values)
        if u.per_run:
            sessions = (f"each run is one rental session with {u.session_overhead_hours:g} h of start-up and set-up "
                        "billed on top")
        else:
            sessions = (f"{u.sessions_per_month:g} rental session(s) a month × {u.session_overhead_hours:g} h of "
                        f"start-up and set-up = {u.overhead_hours_per_month:g} h billed on top")
        ctx.conclude({
            "kind": "usage", "ref": "usage", "hours_per_month": round(u.hours_per_month, 3),
            "utilization": round(u.utilization, 4), "sessions_per_month": u.sessions_per_month,
            "session_overhead_h": u.session_overhead_hours, "per_run": u.per_run,
            "rented_hours_per_month": round(u.rented_hours_per_month(), 3),
            "text": f"Usage: {u.basis}; owned hardware busy {u.utilization:.0%} of the time; {sessions}",
        })


def read_usage(ctx: RuleContext) -> Usage:
    """The consultation's usage, read as a premise of the calling rule (every price depends on it)."""
    return usage_of(ctx.read("usage")[0][1])


def usage_of(fact: Mapping[str, Any]) -> Usage:
    """The Usage a `usage` fact stands for (pricing callbacks read the fact, so it is a premise of each price)."""
    return Usage(hours_per_month=float(fact["hours_per_month"]), utilization=float(fact["utilization"]),
                 sessions_per_month=float(fact["sessions_per_month"]),
                 session_overhead_hours=float(fact["session_overhead_h"]), per_run=bool(fact["per_run"]),
                 basis=str(fact.get("text", "")))
