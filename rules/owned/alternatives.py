"""Options that are not a GPU purchase or a GPU-hour: free notebook GPUs and the hardware the user already owns.

A free notebook (Colab, Kaggle, SageMaker Studio Lab) costs nothing but has limits measured in hours: a session ends
after a few hours, a week or a day has a quota, and a GPU may not be available at all. Hardware the user owns costs
only its power: its price is spent already. Both are priced here as options like any other, so the same ranking,
constraints and WHY chains apply; what they cannot do (serve a production endpoint from a notebook, run longer than
the quota) is a constraint with its numbers, and what they do less well is advice.
"""

from __future__ import annotations

import math
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import FreeTier
from gpuadvisor.rules.consultation.derivations import conclude_option, option_fact
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.engine.actions import reads_only
from gpuadvisor.rules.inputs.fact_kinds import Fact, FreeTierFact, OwnedFact
from gpuadvisor.rules.inputs.usage import read_usage
from gpuadvisor.rules.inputs.workload import Workload, workload_of
from gpuadvisor.rules.planning.profile import catalog_factors, consultation_factors
from gpuadvisor.rules.pricing.price import Free, Own, Run, for_life, price
from gpuadvisor.rules.sizing.cost import power_usd_per_hour
from gpuadvisor.rules.sizing.factors import Factors

WEEKS_PER_MONTH = 52.0 / 12.0


def free_tier_fact(t: FreeTier, shape: str) -> FreeTierFact:
    """The scalar view of a free notebook tier that rules test."""
    quota = monthly_quota_hours(t)
    limits = [f"{t.session_hours:g} h per session"]
    if t.weekly_hours:
        limits.append(f"{t.weekly_hours:g} h a week")
    if t.daily_hours:
        limits.append(f"{t.daily_hours:g} h a day")
    if quota is None:
        limits.append("quota unpublished")
    if t.idle_minutes:
        limits.append(f"disconnected after about {t.idle_minutes:g} idle minutes")
    return {
        "kind": "free_tier", "ref": f"free:{t.id}", "key": t.id, "provider": t.provider,
        "accelerator": t.accelerator, "count": t.accelerator_count, "session_hours": t.session_hours,
        "monthly_quota_hours": quota if quota is not None else 0.0, "quota_published": quota is not None,
        "guaranteed": t.guaranteed, "shape": shape, "idle_minutes": t.idle_minutes or 0.0,
        "text": f"{t.name}: {t.accelerator_count}× {t.accelerator} free, {', '.join(limits)}"
                + ("" if t.guaranteed else ", a GPU is not guaranteed"),
    }


def monthly_quota_hours(t: FreeTier) -> float | None:
    """GPU hours a month the tier allows: the weekly quota, else the daily one; None when unpublished."""
    if t.weekly_hours:
        return t.weekly_hours * WEEKS_PER_MONTH
    if t.daily_hours:
        return t.daily_hours * 30.0
    return None


def owned_fact(accelerator: str, name: str, count: int, shape: str) -> OwnedFact:
    """The hardware the user already has (answers current.gpu / current.gpu_count), as an input fact."""
    return {"kind": "owned", "ref": f"owned:{accelerator}", "accelerator": accelerator, "count": count,
            "acc_ref": f"acc:{accelerator}", "name": name, "shape": shape,
            "text": f"You already have {count}× {name} (current.gpu)"}


class AlternativeRules:
    """The callbacks of rules S9.free and S9.own."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._base_factors = catalog_factors(catalog)

    def table(self) -> dict[str, Callback]:
        return {"price_free_tier": self.price_free_tier, "price_owned": self.price_owned}

    @reads_only
    def price_free_tier(self, ctx: RuleContext, config: Fact, tier: Fact, work: Fact) -> None:
        t = self.catalog.free_tiers[str(tier["key"])]
        usage = read_usage(ctx)
        w = workload_of(ctx)
        training = w.training
        quota = monthly_quota_hours(t)
        limit = ""
        if training:
            hours = float(config.get("training_days") or 0) * 24
            sessions = max(1, math.ceil(hours / t.session_hours))
            if quota is not None and hours > quota:
                limit = (f"the run takes {hours:,.1f} GPU-hours; {t.name} allows about {quota:,.0f} a month")
            elif sessions > 1 and not w.checkpointing:
                limit = (f"the run takes {hours:,.1f} h but a session ends after {t.session_hours:g} h, and the job "
                         "does not checkpoint to resume (training.checkpointing)")
            use = f"one run of {hours:,.1f} h in {sessions} session(s) of at most {t.session_hours:g} h"
        else:
            hours = usage.hours_per_month
            sessions = max(1, math.ceil(hours / t.session_hours))
            if w.stage == "production":
                limit = (f"a notebook session is not a server: it ends after {t.session_hours:g} h and has no "
                         "service endpoint, so production serving cannot run on it")
            elif quota is not None and hours > quota:
                limit = f"you plan {hours:,.0f} h a month; {t.name} allows about {quota:,.0f}"
            use = f"{hours:,.0f} h a month in sessions of at most {t.session_hours:g} h"
        a = self.catalog.accelerators[str(config["accelerator"])]
        f = self._factors(w)
        paid = price(Free(), Run(hours, hours) if training else for_life(f, usage.utilization, hours), f)
        assert paid is not None
        cost = paid.cost
        conclude_option(ctx, option_fact(config, a, w, f"free:{t.id}", {
            "large_cluster": False, "gpu_hours": None, "title": f"{t.name} (free)" if "free" not in t.name.lower()
            else t.name, "unit_name": t.name, "unit_kind": "notebook",
            "purchase": False, "acquisition": "free", "instance": t.name, "instance_id": t.id,
            "provider_name": t.provider_name, "instance_name": t.name, "instances": 1, "provider": t.provider,
            "provider_kind": "free", "pricing": "free", "usd_per_hour": 0.0, "usd_per_month": 0.0,
            **({"usd_per_run": 0.0} if training else {"usd_per_million_tokens": 0.0}),
            "usage_hours": round(hours, 3), "price_known": True, "price_kind": "free", "provider_allowed": True,
            "within_free_limits": not limit, "free_limit": limit, "guaranteed": t.guaranteed,
            "quota_published": quota is not None, "multi_session": training and sessions > 1,
            "price_as_of": t.as_of,
        }, "", text=f"{t.name}: free; {use}" + (f" — {limit}" if limit else ""), cost=cost), cost)

    @reads_only
    def price_owned(self, ctx: RuleContext, config: Fact, own: Fact, work: Fact) -> None:
        a = self.catalog.accelerators[str(config["accelerator"])]
        need = int(config["count"])
        usage = read_usage(ctx)
        watts = a.tdp_w.value if a.tdp_w else 0.0
        w = workload_of(ctx)
        pue, usd_per_kwh = w.pue, w.power_usd_per_kwh
        power = power_usd_per_hour(watts, need, pue=pue, usd_per_kwh=usd_per_kwh)
        training = w.training
        what = (f"{watts * need:,.0f} W × {pue:g} PUE × ${usd_per_kwh:g}/kWh = ${power:,.3f}/h (already paid for: "
                "power only)")
        f = self._factors(w)
        mine = Own(watts * need, what)
        if training:
            hours = float(config.get("training_days") or 0) * 24
            paid = price(mine, Run(hours, hours), f)
            assert paid is not None
            costs: dict[str, Any] = {"usd_per_run": round(paid.cost.total, 4),
                                     "usd_per_month": round(paid.option.usd_per_month, 2)}
        else:
            hours = usage.hours_per_month
            paid = price(mine, for_life(f, usage.utilization, hours), f)
            assert paid is not None
            costs = {"usd_per_month": round(paid.option.usd_per_month, 2)}
        cost = paid.cost
        conclude_option(ctx, option_fact(config, a, w, "own", {
            "large_cluster": False, "gpu_hours": None, "title": f"Your own {need}× {a.name}",
            "unit_name": "your own hardware", "unit_kind": "own",
            "purchase": False, "acquisition": "own", "instance": "your own hardware", "instance_id": "own",
            "instances": 1, "provider": "own", "provider_kind": "owned", "pricing": "owned",
            "usd_per_hour": round(power, 4), **costs, "usage_hours": round(hours, 3), "price_known": True,
            "price_kind": "owned", "provider_allowed": True,
            "over_monthly": w.monthly_usd is not None and costs["usd_per_month"] > w.monthly_usd,
        }, "", text=f"Your own {need}× {a.name}: already paid for; power only, {watts * need:,.0f} W × {pue:g} PUE "
                    f"× ${usd_per_kwh:g}/kWh = ${power:,.3f}/h", cost=cost), cost)

    def _factors(self, work: Workload) -> Factors:
        """The catalog's factors with the consultation's lifetime (the serving horizon), PUE and power price."""
        return consultation_factors(self._base_factors, work)
