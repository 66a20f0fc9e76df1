"""What would make the hardware you own work (issue 29): the levers behind a ruled-out `current.gpu`.

Nothing a user states may vanish: GPUs they own are either an option, or listed as ruled out with the reason and
what would change that. When a constraint, a service level or memory rules them out, rule OWN.remedy (stratum 7,
after every constraint) asks the planner what would make them work, each lever checked by planning the same job on
them again: more of the same GPU ("1 more H100 gives failover"), a smaller weights format ("FP8 weights fit where
BF16 does not"), LoRA or QLoRA instead of full fine-tuning, or the answer that rules them out relaxed to the figure
they reach ("declare failover off", a later deadline). A constraint of the user's own (vendors, ECC, data-centre
parts, cloud only) is named with the answer that sets it. The conclusion is a `remedy` fact whose premises are the
facts that ruled the GPUs out, so `why` explains it like any other line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Precision
from gpuadvisor.rules.consultation.derivations import arch_of, params_of
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.engine.actions import reads_only
from gpuadvisor.rules.inputs.workload import Workload, workload_of
from gpuadvisor.rules.planning.profile import (
    catalog_factors,
    consultation_factors,
    inference_search,
    runs_on,
    serving_targets,
    training_search,
    training_targets,
)
from gpuadvisor.rules.planning.search import Plan, ServingTargets, TrainingSearch, TrainingTargets
from gpuadvisor.rules.planning.topology import training_peak
from gpuadvisor.rules.planning.units import own_unit
from gpuadvisor.rules.sizing.factors import Factors

Fact = Mapping[str, Any]

MAX_LEVERS = 3
"""Levers listed per ruled-out machine (the cheapest to act on first: an answer, a format, then more GPUs)."""
MAX_OWN_GPUS = 256
"""The most GPUs "N more" is ever searched up to (answers.current.gpu_count's own limit)."""
SMALLER_FORMATS = ("fp8", "int8", "awq", "q4_k_m")
"""Weights formats tried, largest first, where the part runs them (`profile.runs_on`): FP8 on FP8 parts, INT8
where it has INT8 tensor cores, a 4-bit AWQ checkpoint on CUDA/ROCm, a 4-bit GGUF K-quant anywhere llama.cpp runs."""
NOT_EVEN = "not even a full machine of"
SLA_RULES = frozenset({"SLA.per-user", "SLA.ttft", "SLA.latency"})
FORMAT_RULES = frozenset({"H8.fp8", "H8.fp4", "H8.int8", "H9.library", "C.tp-over-pcie"})
ANSWER_LEVERS: Mapping[str, str] = {
    "C.own-where": 'set deployment.where = "either" (or "on_prem") so your own GPUs are weighed',
    "C.vendor": "allow vendor {vendor} (constraints.vendors)",
    "C.datacenter-only": "allow {market} cards (constraints.datacenter_only = false)",
    "C.ecc": "accept memory without ECC (constraints.ecc_required = false)",
    "C.max-gpus": "allow {count} GPUs (constraints.max_gpus)",
    "C.no-porting": "allow porting to its software stack (framework.porting = true)",
}
"""Constraints the user set, and the answer that lifts each (the fact's fields fill the braces)."""


class OwnedRules:
    """The callback of rule OWN.remedy."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.base_factors = catalog_factors(catalog)

    def table(self) -> dict[str, Callback]:
        return {"own_remedy": self.own_remedy}

    @reads_only
    def own_remedy(self, ctx: RuleContext, own: Fact, work: Fact) -> None:
        shape = str(own["shape"])
        acc = self.catalog.accelerators[str(own["accelerator"])]
        configs = {str(f["ref"]): (fid, f) for fid, f in ctx.read("config", as_premises=False)
                   if f.get("shape") == shape}
        outs = [(fid, f) for fid, f in ctx.read("ruled_out", as_premises=False) if f.get("shape") == shape]
        options = [(fid, f) for fid, f in ctx.read("option", as_premises=False)
                   if f.get("acquisition") == "own" and str(f.get("config")) in configs]
        targets = {*configs, f"acc:{acc.id}", *(str(o["ref"]) for _, o in options)}
        vetoes = [(fid, v) for fid, v in ctx.read("veto", as_premises=False) if str(v["target"]) in targets]
        if (options and not vetoes) or (not outs and not vetoes):
            return  # an option nothing rules out is ranked like any other
        config = next(iter(configs.values()))[1] if configs else {}
        option = options[0][1] if options else {}
        job = _Job(self, ctx, workload_of(ctx), acc, int(own["count"]))
        levers = job.levers({str(v["rule"]) for _, v in vetoes}, bool(outs), config, option)
        if not levers:
            return
        blocked = [fid for fid, _ in outs] + [fid for fid, _ in vetoes]
        name = f"{own['count']}× {own['name']}"
        ctx.conclude({"kind": "remedy", "ref": f"remedy:{shape}", "target": f"owned:{acc.id}", "shape": shape,
                      "rule": ctx.rule.id, "reason": "; or ".join(levers[:MAX_LEVERS]),
                      "text": f"What would make your {name} work: " + "; or ".join(levers[:MAX_LEVERS])},
                     also_from=blocked)


class _Job:
    """The consultation's job re-planned on the user's own GPUs with one thing changed at a time."""

    def __init__(self, rules: OwnedRules, ctx: RuleContext, work: Workload, acc: Accelerator, count: int) -> None:
        self.catalog, self.work, self.acc, self.count = rules.catalog, work, acc, count
        self.factors: Factors = consultation_factors(rules.base_factors, work)
        model = ctx.read("model", as_premises=False)[0][1]
        self.arch, self.params = arch_of(model), params_of(model)
        self.training = work.training
        self.demand = (ctx.read("demand", as_premises=False) or [(0, {})])[0][1]
        self.compute = (ctx.read("compute_need", as_premises=False) or [(0, {})])[0][1]
        self.name = acc.name

    # --- planning ------------------------------------------------------------------------------------------------
    def _serve(self, n: int, weights: Precision | None = None, targets: ServingTargets | None = None) -> bool:
        t = targets or serving_targets(self.work, self.demand)
        w = weights or self.work.formats.served_on(self.acc)
        plan = inference_search(self.catalog, self.work, self.arch, self.params, t, self.factors,
                                weights=w).plan(self.acc, own_unit(self.acc, n), with_notes=False)
        return (isinstance(plan, Plan) and plan.meets_tpot and plan.meets_ttft and plan.meets_latency
                and plan.meets_failover and (plan.tensor_parallel <= 4 or plan.link != "pcie"))

    def _train(self, n: int, targets: TrainingTargets | None = None, weights: Precision | None = None) -> Plan | None:
        t = targets or training_targets(self.work, self.compute)
        search = (training_search(self.catalog, self.work, self.arch, self.params, t, self.factors)
                  if weights is None else TrainingSearch(self.arch, self.params, weights, t, self.factors))
        plan = search.plan(self.acc, own_unit(self.acc, n), with_notes=False)
        return plan if isinstance(plan, Plan) else None

    def _works(self, n: int, no_fit: bool) -> tuple[bool, str]:
        """Whether the job works on `n` of the GPUs, and a detail when it only half works: a training run that did
        not fit and now fits but misses the deadline says its days (the deadline is its own constraint)."""
        if self.training:
            plan = self._train(n)
            if plan is None:
                return False, ""
            if plan.meets_deadline:
                return True, ""
            return (True, f", the run taking {plan.training_days or 0:,.1f} days") if no_fit else (False, "")
        return self._serve(n), ""

    # --- levers --------------------------------------------------------------------------------------------------
    def levers(self, rules: set[str], no_fit: bool, config: Fact, option: Fact) -> list[str]:
        """What would make the GPUs work, cheapest to act on first; each lever checked by planning."""
        out: list[str] = []
        for rule in sorted(rules & set(ANSWER_LEVERS)):
            out.append(ANSWER_LEVERS[rule].format(**{**config, **option, "count": config.get("count", self.count)}))
        if "SLA.failover" in rules and self._serve(self.count, targets=replace(
                serving_targets(self.work, self.demand), failover=False)):
            out.append("declare failover off (inference.failover = false): one machine then serves")
        if "D.deadline" in rules and config.get("training_days"):
            out.extend(self._deadline(float(config["training_days"])))
        if rules & SLA_RULES:
            out.extend(_relaxed(config, rules))
        if "B.monthly" in rules and option.get("usd_per_month") is not None:
            out.append(f"raise budget.monthly_usd to ${math.ceil(float(option['usd_per_month'])):,} (their power)")
        if no_fit or rules & (FORMAT_RULES | SLA_RULES | {"SLA.failover"}):
            out.extend(self._formats())
        if no_fit:
            out.extend(self._load())
        if no_fit and self.training:
            out.extend(self._methods())
        if no_fit or rules & (SLA_RULES | {"SLA.failover", "D.deadline", "C.tp-over-pcie"}):
            more = self._more(no_fit, rules)
            # "not even a full machine holds it" is said only when nothing else would work
            out.extend(m for m in more if not (out and m.startswith(NOT_EVEN)))
        return list(dict.fromkeys(out))

    def _more(self, no_fit: bool, rules: set[str]) -> list[str]:
        """'1 more H100 (2 in all): failover, with a spare replica': the fewest GPUs of the same part, in the same
        machine (up to the part's `max_per_node`), that make the plan work. Beyond one machine the owned unit is
        not a model of what would be bought (a second server and its network): the purchase and rental options
        show that, so no lever is offered."""
        if no_fit and not self._memory_bound():
            return []
        top = min(MAX_OWN_GPUS, max(self.count, self.acc.max_per_node))
        counts = _counts(self.count, top)
        fit_only: tuple[int, str] | None = None
        for n in counts:
            works, detail = self._works(n, no_fit)
            if works and not detail:
                return [f"{n - self.count:,} more {self.name} ({n:,} in all): {self._what(no_fit, rules)}"]
            if works and fit_only is None:
                fit_only = (n, detail)  # training that fits but misses the deadline: kept if nothing does both
        if fit_only is not None:
            n, detail = fit_only
            return [f"{n - self.count:,} more {self.name} ({n:,} in all): the job fits{detail}"]
        if no_fit and counts:
            return [f"{NOT_EVEN} {top:,} {self.name} holds it"]
        return []

    def _what(self, no_fit: bool, rules: set[str]) -> str:
        """What the added GPUs achieve, in words."""
        if no_fit:
            return "the load is served" if not self.training and self._fits_alone() else "the job fits"
        if rules == {"SLA.failover"}:
            return "failover, with a spare replica"
        if "D.deadline" in rules:
            return f"the {self.work.deadline_days:g}-day deadline is met"
        return "the service level is met"

    def _fits_alone(self) -> bool:
        """Whether one request alone, with no target and no failover, is served on the GPUs as they are: then what
        rules them out is the load, not memory."""
        base = serving_targets(self.work, self.demand)
        return self._serve(self.count, targets=replace(
            base, concurrency=1, tokens_per_s=0.0, requests_per_s=None, failover=False,
            min_tokens_per_s_per_user=None, ttft_max_s=None, latency_p95_s=None))

    def _memory_bound(self) -> bool:
        """Whether more of the part can help at all: a part that does not train or publishes no rate to size a run
        with is ruled out for that, not for its memory."""
        return not self.training or (self.acc.trains and bool(training_peak(self.acc, self.work.formats.weights)))

    def _load(self) -> list[str]:
        """A model that fits but cannot serve the requests in flight (a part with no published compute rate runs
        one sequence at a time): the most requests at once the GPUs serve, when no request rate was given, with
        failover declared off too when one machine cannot hold a spare."""
        if self.training:
            return []
        base = serving_targets(self.work, self.demand)
        if base.requests_per_s or base.concurrency <= 1:
            return []
        for targets, also in ((base, ""), (replace(base, failover=False), "declare failover off and ")):
            if also and not base.failover:
                break
            most = self._most_requests(targets)
            if most:
                s = "s" if most > 1 else ""
                off = ", inference.failover = false" if also else ""
                return [f"{also}serve at most {most:,} request{s} at once (inference.concurrent_requests = "
                        f"{most:,}{off})"]
        return []

    def _most_requests(self, targets: ServingTargets) -> int:
        """The largest concurrency below the asked one that the GPUs serve (0: not even one), by bisection."""
        lo, hi = 0, targets.concurrency
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._serve(self.count, targets=replace(targets, concurrency=mid, tokens_per_s=0.0)):
                lo = mid
            else:
                hi = mid
        return lo

    def _formats(self) -> list[str]:
        """'FP8 weights fit where BF16 does not': the largest smaller format the part runs that makes it work."""
        if self.training:
            return []
        current = self.work.formats.served_on(self.acc)
        for pid in SMALLER_FORMATS:
            p = self.catalog.precisions.get(pid)
            if p is None or p.bits_per_weight >= current.bits_per_weight or "weights" not in p.uses:
                continue
            if runs_on(p, self.acc) and self._serve(self.count, weights=p):
                return [f"{p.name} weights fit where {current.name} does not (precision.weights = \"{p.id}\")"]
        return []

    def _methods(self) -> list[str]:
        """Fine-tuning that does not fit in full: LoRA (frozen base, no optimizer states for it), then QLoRA (a 4-bit
        base), each planned on the GPUs as they are."""
        if self.work.workload != "finetune" or self.work.method == "qlora":
            return []
        base = training_targets(self.work, self.compute)
        nf4 = self.catalog.precisions.get("nf4")
        tries: list[tuple[str, TrainingTargets, Precision | None]] = []
        if self.work.method == "full":
            tries.append(("lora", replace(base, flops_factor="lora"), None))
        if nf4 is not None and runs_on(nf4, self.acc):
            tries.append(("qlora", replace(base, flops_factor="qlora"), nf4))
        for method, targets, weights in tries:
            plan = self._train(self.count, targets, weights)
            if plan is not None:
                words = "LoRA" if method == "lora" else "QLoRA (a 4-bit base)"
                return [f"{words} fits where {self.work.method} fine-tuning does not (finetune.method = "
                        f"\"{method}\", {plan.training_days or 0:,.1f} days)"]
        return []

    def _deadline(self, days: float) -> list[str]:
        """The deadline the run meets on the GPUs as they are (the plan keeps its schedule margin free)."""
        margin = self.factors.training_schedule_margin
        need = math.ceil(days / (1.0 - margin))
        plan = self._train(self.count, replace(training_targets(self.work, self.compute), deadline_days=float(need)))
        if plan is None or not plan.meets_deadline:
            return []
        return [f"extend training.deadline_days to {need:,} (the run takes {days:,.1f} days on them)"]


def _relaxed(config: Fact, rules: Iterable[str]) -> list[str]:
    """The service level relaxed to what the GPUs reach (their own figures)."""
    parts = []
    rules = set(rules)
    if "SLA.per-user" in rules and config.get("tokens_per_s_per_user"):
        speed = math.floor(float(config["tokens_per_s_per_user"]) * 10) / 10
        parts.append(f"inference.min_tokens_per_s_per_user to {speed:g}")
    if "SLA.ttft" in rules and config.get("ttft_s"):
        parts.append(f"inference.ttft_max_s to {math.ceil(float(config['ttft_s']) * 100) / 100:g} s")
    if "SLA.latency" in rules and config.get("latency_s"):
        parts.append(f"inference.latency_p95_s to {math.ceil(float(config['latency_s']) * 10) / 10:g} s")
    return [f"relax {', '.join(parts)} (what they reach)"] if parts else []


def _counts(have: int, top: int) -> list[int]:
    """GPU counts tried for "N more", up to `top`: one to seven more, then doublings."""
    out = {have + k for k in range(1, 8)}
    n = have * 2
    while n <= top:
        out.add(n)
        n *= 2
    return sorted(c for c in out if c <= top)
