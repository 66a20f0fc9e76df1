"""Python callbacks of the derivation rules (rules/packs/10-derivations.toml): the math behind S1-S12 and H1.

Each callback reads the facts its rule matched, calls the pure sizing functions, and concludes new facts with a
`text` that says what the figure is and how it was obtained. The knowledge base is reached through the catalog the
callbacks were built with; per-consultation settings (power price, PUE, lifetime) come from the workload fact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Architecture, Instance, InstancePrice
from gpuadvisor.rules.consultation.facts import flagship
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.engine.actions import reads_only
from gpuadvisor.rules.inputs.fact_kinds import ConfigFact, Fact, LibrarySupport, MigSlices, SplitFields
from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.rules.inputs.usage import Usage, read_usage, spot_hours, usage_values
from gpuadvisor.rules.inputs.user_load import user_load_values
from gpuadvisor.rules.inputs.workload import Workload, workload_of
from gpuadvisor.rules.planning.planned import Planned
from gpuadvisor.rules.planning.profile import (
    catalog_factors,
    compute_need_fact,
    consultation_factors,
    deadline_start,
    demand_fact,
    inference_search,
    serving_targets,
    training_search,
    training_targets,
    workload_profile,
)
from gpuadvisor.rules.planning.recipes import below_recipe
from gpuadvisor.rules.planning.search import (
    Disaggregation,
    InferenceSearch,
    NoFit,
    Plan,
    TrainingSearch,
    spot_wall_hours,
)
from gpuadvisor.rules.planning.splits import slow_split
from gpuadvisor.rules.planning.topology import SCALE_UP_KINDS, Link
from gpuadvisor.rules.planning.units import Unit, own_unit, unit_table
from gpuadvisor.rules.pricing.decision_cost import (
    COMMITMENTS,
    SHORT_RESERVATION,
    DecisionCost,
    Ownership,
    lifetime_hours,
    owning,
    priced,
)
from gpuadvisor.rules.pricing.economics import Economics, PartAge, accelerator_age, economics, format_native
from gpuadvisor.rules.pricing.price import Buy, Rent, Run, Window, break_even_utilization, for_life
from gpuadvisor.rules.pricing.price import price as price_of
from gpuadvisor.rules.pricing.price_age import age_months, as_of_label, today
from gpuadvisor.rules.pricing.purchases import purchase_bill
from gpuadvisor.rules.sizing.cost import COST_PARTS, usd_per_million_tokens
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.kvcache import (
    attention_kind,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    request_kv_tokens,
)
from gpuadvisor.rules.sizing.memory import (
    Recompute,
    WeightFormat,
    embedding_params,
    fused_attention,
    inference_memory,
    mig_slice_bytes,
    per_model_bytes,
    training_memory,
    weight_format,
)
from gpuadvisor.rules.sizing.params import ParameterCount, count_parameters
from gpuadvisor.rules.sizing.peak import half_precision_tflops
from gpuadvisor.rules.sizing.units import GB, HOURS_PER_MONTH, HOURS_PER_YEAR

LIST_SOURCE_KINDS = frozenset({"vendor price file", "vendor-page", "vendor-docs", "vendor page", "vendor docs"})
"""Sources that are the provider's own price list (a rental price read there is its list price)."""
TRANSCRIBED_SOURCE_KINDS = frozenset({"derived-data", "press", "price catalog"})
"""Datasets that transcribe providers' list prices row by row, each with its URL and date (a `kb refresh` price
catalog too), and announcements that report them (a GA announcement, a news item on a price change)."""
PURCHASE_BASIS = {"msrp": "list", "street": "street", "used": "used", "estimate": "estimate",
                  "system-share": "system share", "quote": "your quote"}
"""A purchase price's kind in the words of its basis (issue 39: list, street, used, aggregator, buyer's quote)."""
LARGE_CLUSTER_GPUS = 1000
"""From this size a training cluster is a procurement project of its own (reserved capacity, a fabric)."""


@lru_cache(maxsize=64)
def _count(arch_json: str) -> ParameterCount:
    return count_parameters(Architecture.model_validate_json(arch_json))


@lru_cache(maxsize=64)
def _arch(arch_json: str) -> Architecture:
    return Architecture.model_validate_json(arch_json)


def arch_of(model: Fact) -> Architecture:
    return _arch(str(model["arch_json"]))


def params_of(model: Fact) -> ParameterCount:
    return _count(str(model["arch_json"]))


def _recompute(work: Workload) -> Recompute:
    """The recomputation a run's memory need is stated at: the user's, or with recomputation allowed the most
    (the plans then take the least that fits)."""
    return "full" if work.recompute == "auto" else work.recompute


def _gb(x: float) -> float:
    return round(x / GB, 4)


class Derivations:
    """The callbacks, bound to one catalog (their knowledge base)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.base_factors = catalog_factors(catalog)
        self.cheapest_rent = _cheapest_rent_per_gpu_hour(catalog)
        self.units = unit_table(catalog)
        self.economics = economics(catalog)
        self.lead_weeks = {k.removeprefix("lead_time_weeks_"): v.value for k, v in catalog.assumptions.items()
                           if k.startswith("lead_time_weeks_")}
        self.usage_values = usage_values(catalog)
        self.user_load_values = user_load_values(catalog)
        self._spot_hours = spot_hours(catalog)
        self._prices: dict[tuple[str, str], tuple[InstancePrice, str] | None] = {}  # catalog-derived, see _price

    def table(self) -> dict[str, Callback]:
        return {name: getattr(self, name) for name in (
            "workload_profile", "parameters", "weights", "kv_cache", "demand", "compute_need", "intensity",
            "memory_inference", "memory_training", "memory_adapter", "plan_inference", "plan_training",
            "price_rental", "price_purchase")}

    # --- helpers -------------------------------------------------------------------------------------------------
    def factors(self, work: Workload, ctx: RuleContext | None = None) -> Factors:
        """The catalog's factors with the consultation's power price, PUE and lifetime (built once per
        consultation when `ctx` is given)."""
        key = ("factors", work.pue, work.power_usd_per_kwh, work.lifetime_years, work.site_usd_per_kw_month)
        found = ctx.scratch.get(key) if ctx is not None else None
        if found is None:
            found = consultation_factors(self.base_factors, work)
            if ctx is not None:
                ctx.scratch[key] = found
        return found

    def _precision(self, ctx: RuleContext, role: str) -> tuple[int, Formats]:
        """The `precision` input fact of `role` and the formats record beside it (consult.profile_inputs)."""
        for fid, f in ctx.read("precision", as_premises=False):
            if f["role"] == role:
                formats = ctx.attachment(fid)
                if not isinstance(formats, Formats):
                    raise LookupError(f"no formats record beside the {role} precision fact")
                return fid, formats
        raise LookupError(f"no {role} precision among the inputs")

    def _model(self, ctx: RuleContext) -> tuple[int, Fact]:
        found = ctx.read("model", as_premises=False)
        if not found:
            raise LookupError("no model among the inputs")
        return found[0]

    # --- stratum 0: profile --------------------------------------------------------------------------------------
    def workload_profile(self, ctx: RuleContext, model: Fact) -> None:
        answers = {str(f["key"]): (fid, f["value"]) for fid, f in ctx.facts("answer", as_premises=False)}
        given_ids = {fid for fid, f in ctx.facts("answer", as_premises=False) if f["given"]}
        used: list[int] = []

        def a(key: str) -> Any:
            fid, value = answers[key]
            used.append(fid)
            return value

        wid, formats = self._precision(ctx, "weights")  # the record resolution chose, beside its facts
        kid, _ = self._precision(ctx, "kv_cache")
        used += [wid, kid]
        work = workload_profile(a, lambda key: answers[key][1], lambda key: answers[key][0] in given_ids,
                                model_name=str(model["name"]), params=params_of(model), moe=bool(model.get("moe")),
                                formats=formats, usage_values=self.usage_values,
                                user_load_values=self.user_load_values)
        work = deadline_start(work, self.catalog)
        ctx.conclude(work.fact(), also_from=used, attachment=work)  # the engine's edge: the fact, the Workload beside

    def parameters(self, ctx: RuleContext, model: Fact) -> None:
        p = params_of(model)
        moe = f"; {p.active:,} active per token" if p.moe_layers else ""
        ctx.conclude({"kind": "parameters", "ref": "parameters", "total": p.total, "active": p.active,
                      "total_b": round(p.total / 1e9, 4), "active_b": round(p.active / 1e9, 4),
                      "text": f"{model['name']}: {p.total:,} parameters{moe} (counted from the architecture)"})

    # --- stratum 1 -----------------------------------------------------------------------------------------------
    def weights(self, ctx: RuleContext, params: Fact, prec: Fact, work: Fact) -> None:
        _, model = self._model(ctx)
        p = self._precision(ctx, "weights")[1].weights
        fmt = weight_format(arch_of(model), p)
        rest_bytes, experts = fmt.bytes_per_weight, fmt.experts
        n_bytes = fmt.total_bytes(params_of(model))
        ctx.conclude({"kind": "weights", "ref": "weights", "bytes": round(n_bytes), "gb": _gb(n_bytes),
                      "precision": p.id, "bits": p.bits_per_weight,
                      "gb_4bit": _gb(n_bytes * self.catalog.precisions["awq"].bits_per_weight / p.bits_per_weight),
                      "text": (_weights_words(params_of(model), p.name, fmt, n_bytes) if experts is None else
                               f"Weights as published: {experts.params:,} routed-expert parameters × "
                               f"{p.bytes_per_weight:g} bytes ({p.name}) + {params['total'] - experts.params:,} "
                               f"others × {rest_bytes:g} bytes (bf16) = {n_bytes / GB:,.1f} GB")})

    def kv_cache(self, ctx: RuleContext, model: Fact, prec: Fact, work: Fact) -> None:
        w = workload_of(ctx)
        arch = arch_of(model)
        p = w.formats.kv_cache
        per_token = kv_bytes_per_token(arch, p.bytes_per_weight)
        seqs, context = w.concurrency, w.context
        prompt, output = w.input_tokens, w.output_tokens
        tokens = request_kv_tokens(context, prompt, output)
        per_seq = kv_bytes_per_sequence(arch, p.bytes_per_weight, tokens)  # local layers capped at their window
        kind = attention_kind(arch)
        formula = (f"layers {arch.num_hidden_layers} × (latent {arch.mla.kv_lora_rank} + rope "
                   f"{arch.mla.qk_rope_head_dim})"
                   if arch.mla else f"2 × layers {arch.num_hidden_layers} × KV heads {arch.kv_heads} × head dim "
                                    f"{arch.head_size}")
        per_option = w.per_option_batch
        ctx.conclude({"kind": "kv_cache", "ref": "kv_cache", "bytes_per_token": per_token,
                      "gb_per_sequence": _gb(per_seq), "gb_total": _gb(per_seq * seqs), "sequences": seqs,
                      "context": context, "tokens_per_sequence": tokens, "per_option": per_option,
                      "text": f"KV cache ({kind}): {formula} × {p.bytes_per_weight:g} B = {per_token:,.0f} B per "
                              "token; "
                              f"× {tokens:,} tokens a request (prompt {prompt:,} + output {output:,}"
                              + (f", capped by the {context:,}-token context" if tokens < prompt + output else "")
                              + "; one request at the full context is checked to fit)"
                              + (f" ({arch.local_layers} local layers hold at most {arch.sliding_window:,})"
                                 if arch.local_layers else "")
                              + (f" = {per_seq / GB:,.2f} GB a sequence; each option holds as many as its batch "
                                 "at the request rate (its layout)" if per_option else
                                 f" × {seqs} sequences = {per_seq * seqs / GB:,.1f} GB")})

    def demand(self, ctx: RuleContext, work: Fact) -> None:
        ctx.conclude(demand_fact(workload_of(ctx), self.base_factors.burst_headroom))

    def compute_need(self, ctx: RuleContext, params: Fact, work: Fact) -> None:
        ctx.conclude(compute_need_fact(float(params["active"]), workload_of(ctx)))

    def intensity(self, ctx: RuleContext, weights: Fact, work: Fact) -> None:
        # serving decodes the requests in flight together (continuous batching): the batch is the concurrency
        w = workload_of(ctx)
        batch = w.concurrency if w.inference else w.batch
        value = 2.0 * batch / (float(weights["bits"]) / 8.0)
        ridges = sorted(tflops * 1e3 / a.memory_bandwidth_gbs.value
                        for a in self.catalog.accelerators.values() if (tflops := half_precision_tflops(a)))
        low = ridges[len(ridges) // 10] if ridges else 100.0
        bound = "bandwidth" if value < low else "compute"
        per_option = w.per_option_batch
        ctx.conclude({"kind": "intensity", "ref": "intensity", "phase": "decode", "flop_per_byte": round(value, 3),
                      "bound": bound, "batch": batch, "per_option": per_option,
                      "text": ("Decode batch: formed by each option at the request rate (its layout); at the "
                               "least, batch 1: " if per_option else "")
                              + f"Decode at batch {batch}: 2 FLOPs per weight per sequence ÷ "
                              f"{float(weights['bits']) / 8:g} "
                              f"bytes per weight = {value:.1f} FLOP/byte, "
                              f"{'below' if bound == 'bandwidth' else 'at or above'} the ridge points of the "
                              f"catalogued GPUs (from {low:.0f} FLOP/byte up) → {bound}-bound"})

    # --- stratum 2: memory needs ---------------------------------------------------------------------------------
    def memory_inference(self, ctx: RuleContext, weights: Fact, kv: Fact, work: Fact) -> None:
        _, model = self._model(ctx)
        w = workload_of(ctx)
        wp, kp = w.formats.weights, w.formats.kv_cache
        fmt = weight_format(arch_of(model), wp)
        tokens = request_kv_tokens(w.context, w.input_tokens, w.output_tokens)
        mem = inference_memory(arch_of(model), params_of(model), weight_bytes_per_param=fmt.bytes_per_weight,
                               kv_bytes_per_value=kp.bytes_per_weight, context=tokens,
                               batch=w.concurrency, embedding_bytes=fmt.embedding_bytes,
                               factors=self.factors(w, ctx), experts=fmt.experts)
        self._conclude_need(ctx, "inference", mem, float(weights["gb"]))

    def memory_training(self, ctx: RuleContext, params: Fact, model: Fact, work: Fact) -> None:
        w = workload_of(ctx)
        wp = w.formats.weights
        mem = training_memory(arch_of(model), params_of(model), method="full", optimizer=w.optimizer,
                              weight_bits=32.0 if wp.bits_per_weight >= 32 else 16.0, seq=w.context,
                              micro_batch=w.batch, recompute=_recompute(w),
                              factors=self.factors(w, ctx))
        self._conclude_need(ctx, "training", mem, float(params["total"]) * 2 / GB)

    def memory_adapter(self, ctx: RuleContext, weights: Fact, model: Fact, work: Fact) -> None:
        w = workload_of(ctx)
        method = w.method
        mem = training_memory(arch_of(model), params_of(model), method=method,  # type: ignore[arg-type]
                              optimizer=w.optimizer,
                              weight_bits=float(weights["bits"]), seq=w.context, micro_batch=w.batch,
                              recompute=_recompute(w), lora_rank=w.lora_rank,
                              factors=self.factors(w, ctx))
        self._conclude_need(ctx, method, mem, float(weights["gb"]))

    def _conclude_need(self, ctx: RuleContext, mode: str, mem: Any, weights_gb: float) -> None:
        total = mem.total / GB
        parts = [("weights", mem.weights), ("KV cache", mem.kv_cache), ("activations", mem.activations),
                 ("gradients", mem.gradients), ("optimizer states", mem.optimizer_states),
                 ("runtime", mem.runtime_overhead)]
        listing = ", ".join(f"{name} {v / GB:,.1f}" for name, v in parts if v > 0)
        extra_gb = mem.weights / GB - weights_gb
        adapters = (f"; weights = the {weights_gb:,.1f} GB base + {extra_gb:,.2f} GB of fp32 adapters"
                    if mode in ("lora", "qlora") and extra_gb >= 0.05 else "")  # adapters sit beside the base
        ctx.conclude({
            "kind": "memory_need", "ref": "memory_need", "mode": mode, "total_gb": round(total, 4),
            "weights_gb": _gb(mem.weights), "kv_cache_gb": _gb(mem.kv_cache), "activations_gb": _gb(mem.activations),
            "gradients_gb": _gb(mem.gradients), "optimizer_gb": _gb(mem.optimizer_states),
            "overhead_gb": _gb(mem.runtime_overhead),
            "ratio_to_weights": round(total / weights_gb, 3) if weights_gb > 0 else 0.0,
            "text": f"Memory needed on one GPU before any splitting: {total:,.1f} GB ({listing} GB){adapters}",
        }, attachment={"notes": [n.text for n in mem.notes]})

    # --- stratum 3: configurations (H1) ----------------------------------------------------------------------------
    def _unit(self, ctx: RuleContext, unit: Fact) -> Unit:
        """The deployable unit a `unit` fact stands for (the user's own machine is built from its `owned` fact)."""
        shape = str(unit["key"])
        if shape.startswith("own:"):
            _, acc_id, count = shape.split(":")
            return own_unit(self.catalog.accelerators[acc_id], int(count))
        return self.units.by_shape[shape]

    @reads_only
    def plan_inference(self, ctx: RuleContext, unit: Fact, acc: Fact, need: Fact, demand: Fact) -> None:
        wid, work = self._work(ctx)
        mid, model = self._model(ctx)
        u = self._unit(ctx, unit)
        a = self.catalog.accelerators[u.accelerator]
        weights = work.formats.served_on(a)
        key = ("inference-search", wid, mid, ctx.premise_ids["demand"], weights.id)
        search = ctx.scratch.get(key)
        if search is None:  # one search per format: memory curves are shared by every accelerator
            targets = serving_targets(work, demand)
            search = ctx.scratch[key] = inference_search(self.catalog, work, arch_of(model), params_of(model),
                                                         targets, self.factors(work, ctx), weights=weights,
                                                         model=str(model["key"]))
        plan = search.plan(a, u, with_notes=False)
        split = search.disaggregated(a, u, plan) if isinstance(plan, Plan) else None
        recipe = below_recipe(self.catalog, search, a, plan, str(model["key"])) if isinstance(plan, Plan) else ""
        self._conclude_plan(ctx, a, u, str(unit["key"]), plan, work, search, float(demand["tokens_per_s"]),
                            _split_fields(split), recipe=recipe)

    @reads_only
    def plan_training(self, ctx: RuleContext, unit: Fact, acc: Fact, need: Fact, compute: Fact) -> None:
        wid, work = self._work(ctx)
        mid, model = self._model(ctx)
        u = self._unit(ctx, unit)
        a = self.catalog.accelerators[u.accelerator]
        key = ("training-search", wid, mid, ctx.premise_ids["compute"])
        search = ctx.scratch.get(key)
        if search is None:  # one search per consultation: layouts' memory is shared by every accelerator
            targets = training_targets(work, compute)
            search = ctx.scratch[key] = training_search(self.catalog, work, arch_of(model), params_of(model),
                                                        targets, self.factors(work, ctx))
        self._conclude_plan(ctx, a, u, str(unit["key"]), search.plan(a, u, with_notes=False), work, search)

    def _work(self, ctx: RuleContext) -> tuple[int, Workload]:
        fid = ctx.read("workload")[0][0]  # registered as a premise: every configuration depends on the profile
        return fid, workload_of(ctx)

    def _conclude_plan(self, ctx: RuleContext, a: Accelerator, u: Unit, shape: str, plan: Plan | NoFit, work: Workload,
                       search: InferenceSearch | TrainingSearch, need_tps: float = 0.0,
                       split: SplitFields | None = None, recipe: str = "") -> None:
        if isinstance(plan, NoFit):
            ctx.conclude({"kind": "ruled_out", "ref": f"out:{shape}", "target": f"acc:{a.id}", "name": a.name,
                          "reason": plan.reason, "rule": ctx.rule.id, "shape": shape, "text": plan.reason})
            return
        fact = config_fact(self.catalog, a, u, shape, plan, work, models=int(getattr(search, "models", 1)),
                           need_tps=need_tps, split=split, weights=search.weights.id, recipe=recipe)
        ctx.conclude(fact, attachment=Planned(plan, a, u, search))  # the plan beside its fact, read by the result

    # --- stratum 4: options (S8/S9) ----------------------------------------------------------------------------
    @reads_only
    def price_rental(self, ctx: RuleContext, config: Fact, inst: Fact, work: Fact) -> None:
        i = self.catalog.instances[str(inst["key"])]
        a = self.catalog.accelerators[str(config["accelerator"])]
        u = self.units.units[f"inst:{i.id}"]
        w = workload_of(ctx)
        training = w.training
        machines, count = int(config["machines"]), int(config["count"])
        usage = read_usage(ctx)
        f = self.factors(w, ctx)
        kinds = ("on-demand", "spot", SHORT_RESERVATION) if training else ("on-demand", "spot", *COMMITMENTS)
        for pricing in kinds:
            found = self._price(i, pricing)
            if found is None:
                continue
            price, sources = found
            hourly = machines * price.usd_per_hour
            what = f"{machines:,} × {i.provider_name} {i.instance} {pricing}"
            extra: dict[str, Any] = {
                "purchase": False, "acquisition": "rent", "instance": f"{i.provider_name} {i.instance}",
                "instance_id": i.id, "instances": machines, "provider": i.provider,
                "provider_name": i.provider_name, "instance_name": i.instance,
                "provider_kind": i.provider_kind, "pricing": pricing, "usd_per_hour": round(hourly, 4),
                "price_known": True, "price_as_of": price.as_of, "price_kind": pricing,
                "price_basis": self._basis(price), "node_known": i.node_known,
                "price_age_months": age_months(price.as_of), "price_source": sources,
                "provider_allowed": i.provider in w.providers,
                "over_hourly": w.hourly_usd is not None and hourly > w.hourly_usd,
                "unit_name": u.name, "unit_kind": u.kind, "title": u.describe(machines, count),
            }
            rent = Rent(hourly, pricing, what, price.term)
            if training:
                wall = float(config.get("training_days") or 0) * 24
                if pricing == "spot":
                    extra["spot_run_too_long"] = wall > self._spot_hours
                    extra["spot_hours"] = self._spot_hours
                    wall, what = self._spot_wall(wall, machines, f, w, extra, what)
                    rent = replace(rent, what=what)
                paid = price_of(rent, Run(wall, usage.rented_hours_per_run(wall)), f)
                if paid is None:
                    continue  # longer than one short reservation can be booked for
                if pricing == SHORT_RESERVATION:
                    extra["reserved_days"] = round(paid.billed_hours / 24.0)
                cost, monthly = paid.cost, paid.option.usd_per_month
                extra.update({"usd_per_run": round(cost.total, 4), "usd_per_month": round(monthly, 2),
                              "usage_hours": round(paid.billed_hours, 3)})
            else:
                paid = price_of(rent, for_life(f, usage.utilization, usage.rented_hours_per_month()), f)
                assert paid is not None  # a service is always priced
                cost, monthly = paid.cost, paid.option.usd_per_month
                extra.update({"usd_per_month": round(monthly, 2), "usage_hours": round(paid.billed_hours, 3),
                              "usd_per_million_tokens": _r(self._per_million(monthly, config, usage.hours_per_month,
                                                                             w))})
                extra["pd_usd_per_month"] = self._split_rent(rent, price.usd_per_hour, config, usage, f)
            extra["over_monthly"] = w.monthly_usd is not None and monthly > w.monthly_usd
            label = (f"{extra['title']} {pricing} at ${price.usd_per_hour:,.2f}/h each (as of "
                     f"{as_of_label(price.as_of)}); {self._usage_words(usage, training, extra)}")
            self._conclude_option(ctx, config, a, w, extra, label, cost)

    @staticmethod
    def _split_rent(rent: Rent, usd_per_machine_hour: float, config: Fact, usage: Usage, f: Factors) -> float | None:
        """A month of the disaggregated layout on the rented unit: the same rental, `pd_machines` of the machines,
        priced as the colocated rental is (price)."""
        pd = int(config.get("pd_machines") or 0)
        if not pd:
            return None
        split = price_of(replace(rent, usd_per_hour=pd * usd_per_machine_hour),
                         for_life(f, usage.utilization, usage.rented_hours_per_month()), f)
        return round(split.option.usd_per_month, 2) if split is not None else None

    def _spot_wall(self, wall: float, machines: int, f: Factors, work: Workload, extra: dict[str, Any],
                   what: str) -> tuple[float, str]:
        """A run's wall time on spot machines: every reclaim of any of them costs the job a restart and the work
        since its checkpoint (planning.spot_wall_hours), so the run takes longer and is billed longer than on
        demand; `spot_misses_deadline` when that eats the plan's schedule margin (rule D.spot-deadline)."""
        stretched = spot_wall_hours(wall, machines, self._spot_hours, f)
        reclaims = machines * wall / self._spot_hours
        sized = work.deadline_days * 24 * (1.0 - f.training_schedule_margin)
        extra["spot_misses_deadline"] = stretched > sized * (1 + 1e-9)
        if math.isinf(stretched):
            return wall, what
        extra["training_days"] = round(stretched / 24, 4)
        return stretched, (f"{what}, {reclaims:,.0f} expected reclaims ({machines:,} machine"
                           f"{'s' if machines != 1 else ''} × one per {self._spot_hours:g} h) at "
                           f"{f.training_loss_per_interruption_hours:g} h of the job each: {wall:,.1f} h of work "
                           f"take {stretched:,.1f} h")

    @staticmethod
    def _usage_words(usage: Usage, training: bool, extra: Mapping[str, Any]) -> str:
        if training:
            return f"billed {extra['usage_hours']:,.1f} h per run incl. {usage.session_overhead_hours:g} h set-up"
        return f"billed {extra['usage_hours']:,.0f} h a month"

    def _per_million(self, monthly: float, config: Fact, hours: float, work: Workload) -> float | None:
        """$ per 1M tokens over the month: at the load described, or at full capacity when none was given."""
        tps = work.served_tokens_per_s or _f(config.get("capacity_tokens_per_s"))
        if not tps or hours <= 0:
            return None
        return usd_per_million_tokens(monthly / hours, tps)

    def _basis(self, price: InstancePrice) -> str:
        """What a rental price is (price_basis): the provider's list price, read from its own price file or page
        ('list') or transcribed with its date by a dataset ('list, transcribed'), or a third party's figure
        ('aggregator': a quote in an article, a price tracker)."""
        kinds = {self.catalog.sources[s].kind if s in self.catalog.sources else "" for s in price.sources}
        if kinds & LIST_SOURCE_KINDS and kinds <= LIST_SOURCE_KINDS | TRANSCRIBED_SOURCE_KINDS:
            return "list"
        if kinds and kinds <= LIST_SOURCE_KINDS | TRANSCRIBED_SOURCE_KINDS:
            return "list, transcribed"
        return "aggregator"

    def _price(self, i: Instance, pricing: str) -> tuple[InstancePrice, str] | None:
        """The instance's current price of a type and its sources joined (read from the catalog once)."""
        key = (i.id, pricing)
        if key not in self._prices:
            price = i.current_price(pricing)
            self._prices[key] = None if price is None else (price, ", ".join(price.sources))
        return self._prices[key]

    @reads_only
    def price_purchase(self, ctx: RuleContext, config: Fact, sys: Fact, work: Fact) -> None:
        u = self.units.units[str(sys["key"])]
        a = self.catalog.accelerators[u.accelerator]
        system = self.catalog.systems[str(sys["system"])]
        machines, count = int(config["machines"]), int(config["count"])
        w = workload_of(ctx)
        training = w.training
        title = "Buy " + u.describe(machines, count)
        slots = w.pc_slots or 0
        if system.existing and slots == 0:
            return  # no computer of the user's to put a card in (current.pc_slots)
        if a.purchase_price_usd is None and not (system.price is not None and system.price.includes_accelerators):
            self._conclude_option(ctx, config, a, w, {
                "purchase": True, "acquisition": "buy", "instance": "purchase", "provider": "on-prem",
                "provider_kind": "owned", "pricing": "purchase", "provider_allowed": True, "price_known": False,
                "unit_name": u.name, "unit_kind": u.kind, "title": title, "instances": machines,
            }, f"{title}: no purchase price known for {a.name}", None)
            return
        spans = training or int(config["tensor_parallel"]) * int(config["pipeline_parallel"]) > int(config["fill"])
        bill = purchase_bill(self.catalog, system, a, machines, count, joined=machines > 1 and spans)
        usage = read_usage(ctx)
        f = self.factors(w, ctx)
        site_kw = 0.0 if system.desk_side else bill.power_w / 1000.0
        owned = owning(bill, site_kw=site_kw)
        age = accelerator_age(a, today(), bill.kind)
        life_h = lifetime_hours(f)
        busy_note = ""
        rest = bill.capex_usd - bill.accelerators_usd
        kept: dict[str, Any] = {}
        sold = self._sold_after_life(owned, age, f)  # held for the hardware's life, then sold
        share_left = sold.ownership.resale_share
        if training:
            run_h = float(config.get("training_days") or 0) * 24
            if w.utilization_given is None and w.hours_per_month_given is None:
                # nothing else is known to keep the machines busy: bought for this run, then kept or sold
                years = run_h / HOURS_PER_YEAR
                share_left, host_left = self.economics.resale_shares(age, years)
                sells = w.after_run == "sell"
                paid = price_of(Buy(replace(owned, resale_share=share_left if sells else 0.0,
                                            host_resale_share=host_left if sells else 0.0),
                                    f" when the run ends ({_resale_words(self.economics, age, years)})"),
                                Window(run_h, run_h, None), f)
                resale = bill.accelerators_usd * share_left + rest * host_left
                total = paid.cost.total if paid is not None else 0.0
                kept = {"after_run": "sell" if sells else "keep", "resale_at_end_usd": round(resale, 2),
                        "resale_at_end_share": round(share_left, 4),
                        "sold_age_years": round(age.age_years + years, 2),
                        "kept_usd": round(total + (resale if sells else 0.0), 2),
                        "sold_usd": round(total - (0.0 if sells else resale), 2)}
                util = 1.0
                busy_note = (" (bought for this run and sold when it ends: deployment.after_run = \"sell\")" if sells
                             else " (bought for this run and kept: its resale is not counted unless you sell, "
                                  "deployment.after_run = \"sell\"; set deployment.utilization if other work will "
                                  "keep the machines busy)")
            else:
                util = usage.utilization
                paid = price_of(sold, Window(life_h, run_h, None, min(1.0, run_h / (life_h * util)) if util > 0
                                             else 1.0), f)
        else:
            util = usage.utilization
            paid = price_of(sold, for_life(f, util), f)
        assert paid is not None  # a purchase is always priced
        cost = paid.cost
        busy_hours = (float(config.get("training_days") or 0) * 24 if training else life_h * util) or 1.0
        # a run shorter than a month spends its whole cost within one month (as a rented run's monthly does);
        # spreading it over the run's hours priced a 3-hour run as a month at that rate
        shown = priced(cost, busy_hours)
        monthly = shown.usd_per_month
        rent = self.cheapest_rent.get(a.id)
        be = break_even_utilization(sold, rent * count, f) if rent else None
        # the hardware's life at the usage profile's busy share, kept (no resale): what owning it costs (tco_usd)
        held = price_of(Buy(owned), for_life(f, util), f)
        assert held is not None
        lifetime = held.cost
        lifetime_power, lifetime_site = lifetime.usd("power"), lifetime.usd("site")
        extra: dict[str, Any] = {
            "purchase": True, "acquisition": "buy", "instance": "purchase", "provider": "on-prem",
            "provider_kind": "owned", "pricing": "purchase", "provider_allowed": True, "price_known": True,
            "capex_usd": round(bill.capex_usd, 2), "usd_per_hour": round(shown.usd_per_hour, 4),
            "usd_per_month": round(monthly, 2), "price_as_of": bill.as_of, "price_kind": bill.kind,
            "price_basis": PURCHASE_BASIS.get(bill.kind, bill.kind),
            "price_age_months": age_months(bill.as_of), "price_source": bill.sources,
            "capex_beyond_accelerators_usd": _r(bill.beyond_usd, 2), "host_usd": round(bill.host_usd, 2),
            "fabric_usd": round(bill.fabric_usd, 2), "power_w": round(bill.power_w, 1),
            "power_known": bill.power_known,
            "tco_usd": round(bill.capex_usd + lifetime_power + lifetime_site, 2),
            "horizon_years": f.hardware_lifetime_years, "site_usd": round(lifetime_site, 2),
            "power_share": round(lifetime_power / bill.capex_usd, 4),
            "resale_usd": round(-cost.usd("resale"), 2), "resale_share": round(share_left, 4),
            "age_years": round(age.age_years, 2), **kept, **self._lead_time(system.kind, config, w, f),
            "over_capex": w.capex_usd is not None and bill.capex_usd > w.capex_usd,
            "over_monthly": w.monthly_usd is not None and monthly > w.monthly_usd,
            "unit_name": u.name, "unit_kind": u.kind, "title": title,
            "units_bought": count, "instances": machines, "existing_host": system.existing,
            "pc_fits": not system.existing or count <= slots, "pc_slots": slots,
        }
        if training:
            extra["usd_per_run"] = _r(cost.total)
        else:
            extra["usd_per_million_tokens"] = _r(self._per_million(monthly, config, HOURS_PER_MONTH * util, w))
            if config.get("pd_machines"):
                extra.update(self._split_purchase(system, a, config, sold, util, f))
        if be is not None:
            extra.update({"break_even_utilization": round(be, 4), "buy_pays_off": util >= be})
        elif rent:
            extra.update({"break_even_utilization": 1.0, "buy_pays_off": False})
        site = (f"; site ${f.colocation_usd_per_kw_month:,.0f} per kW a month" if site_kw else "")
        label = (f"{extra['title']}: ${bill.capex_usd:,.0f} ({bill.words}); {bill.power_w / 1000:,.1f} kW{site}; "
                 + (f"busy {util:.1%} of the time over {f.hardware_lifetime_years:g} years" if not training or
                    not busy_note else "held for the run") + busy_note)
        self._conclude_option(ctx, config, a, w, extra, label, cost)

    def _sold_after_life(self, owned: Ownership, age: PartAge, f: Factors) -> Buy:
        """A purchase held for the hardware's life and then sold: its accelerators and hosts at the resale shares of
        a part of its age after deployment.lifetime_years (economics.resale_shares)."""
        years = f.hardware_lifetime_years
        cards, hosts = self.economics.resale_shares(age, years)
        return Buy(replace(owned, resale_share=cards, host_resale_share=hosts),
                   f" after {years:g} years ({_resale_words(self.economics, age, years)})")

    def _split_purchase(self, system: Any, a: Accelerator, config: Fact, colocated: Buy, util: float,
                        f: Factors) -> dict[str, Any]:
        """The disaggregated layout bought: `pd_machines` machines, joined by fabric (the KV cache crosses it),
        priced as the colocated purchase is: its power, site and resale shares (the same parts of the same age)."""
        machines = int(config["pd_machines"])
        bill = purchase_bill(self.catalog, system, a, machines, machines * int(config["fill"]), joined=True)
        site_kw = 0.0 if system.desk_side else bill.power_w / 1000.0
        split = owning(bill, site_kw=site_kw, resale_share=colocated.ownership.resale_share,
                       host_resale_share=colocated.ownership.host_resale_share)
        owned = price_of(replace(colocated, ownership=split), for_life(f, util), f)
        assert owned is not None
        return {"pd_usd_per_month": round(owned.option.usd_per_month, 2), "pd_capex_usd": round(bill.capex_usd, 2)}

    def _lead_time(self, kind: str, config: Fact, work: Workload, f: Factors) -> dict[str, Any]:
        """When a purchase arrives (lead_time_weeks_<kind>) and, for a training run whose stated deadline counts from
        today (training.deadline_from), whether the run still ends inside the deadline's schedule margin (rule
        D.lead-time rules it out when it cannot)."""
        weeks = self.lead_weeks.get(kind)
        if weeks is None:
            return {}
        days = weeks * 7.0
        out: dict[str, Any] = {"lead_time_days": round(days, 1), "lead_time_id": f"lead_time_weeks_{kind}"}
        if work.training:
            run = float(config.get("training_days") or 0.0)
            sized = work.deadline_days * (1.0 - f.training_schedule_margin)
            # a stated deadline counted from today binds; a default one is a planning target (A.delivery says
            # when the run would then end)
            binds = work.deadline_given and work.deadline_from == "today"
            out.update({"ready_days": round(days + run, 1), "lead_time_binds": binds,
                        "arrives_too_late": binds and days + run > sized * (1 + 1e-9)})
        return out

    def _conclude_option(self, ctx: RuleContext, config: Fact, a: Accelerator, work: Workload, extra: dict[str, Any],
                         label: str, cost: DecisionCost | None) -> None:
        key = "buy:" + str(config["shape"]) if extra["purchase"] else f"{extra['instance_id']}:{extra['pricing']}"
        conclude_option(ctx, option_fact(config, a, work, key, extra, label, cost=cost), cost)


def _resale_words(econ: Economics, age: PartAge, held_years: float) -> str:
    """How a resale was priced: the market it was read from (the part's own observed trend, or its class curve)
    and its age from launch when bought and when sold."""
    own = econ.own_trend_words(age)
    if own:
        return f"{own}; {age.words(held_years)}; resale_share_host"
    return f"{age.cls} parts, {age.words(held_years)}; resale_share_{age.cls}_*, resale_share_host"


def config_fact(catalog: Catalog, a: Accelerator, u: Unit, shape: str, plan: Plan, work: Workload, *, models: int = 1,
                need_tps: float = 0.0, split: SplitFields | None = None,
                weights: str | None = None, recipe: str = "") -> ConfigFact:
    """A plan as the `config` fact the rules test: one flattening of `planning.Plan`, for the configuration
    search's rule (H1) and for `gpuadvisor estimate`'s layout alike; `weights` is the format the plan serves in
    when it is not the consultation's (`Formats.served_on`)."""
    served = weights or work.weights_precision
    layout = (f"EP {plan.expert_parallel} (experts split, attention data-parallel)" if plan.expert_parallel > 1
              else f"TP {plan.tensor_parallel}") + (f" × PP {plan.pipeline_parallel}" if plan.pipeline_parallel > 1
                                                    else "")
    # the plan is the shape's, shared by every unit of it (an instance type and a server alike): say the shape
    per = plan.count // max(1, plan.machines)
    where = (f"{plan.count:,} × {a.name}" + (f" on {plan.machines:,} machines of {per}" if plan.machines > 1
                                             else ""))
    if work.inference:
        capacity = plan.capacity_tokens_per_s or 0.0
        load = (f"capacity {capacity:,.0f} tokens/s = {capacity / need_tps:,.1f}× the {need_tps:,.0f} needed"
                if need_tps > 0 else f"capacity {capacity:,.0f} tokens/s")
        spare = plan.replicas - plan.replicas_for_load
        spares = (f" ({plan.replicas_for_load} for the load, {spare} more to survive a machine loss or fill "
                  "the machines)" if spare > 0 else "")
        perf = (f"{plan.replicas} replica(s) of {layout}{spares}, batch {plan.batch_per_replica} each: "
                f"{plan.tokens_per_s or 0:,.0f} tokens/s total, {plan.tokens_per_s_per_user or 0:,.1f} per user, "
                f"first token in {plan.ttft_s or 0:.2f} s; {load}")
    else:
        zero = f", ZeRO-{plan.zero_stage}" if plan.zero_stage else ""
        perf = (f"{layout}{zero}, data parallel {plan.replicas} (synchronising over "
                f"{_link_name(plan.sync_link)}): {plan.training_days or 0:,.1f} days "
                f"({plan.training_gpu_hours or 0:,.0f} GPU-hours)")
    topo = u.topology
    return {
        "kind": "config", "ref": f"cfg:{shape}", "shape": shape, "accelerator": a.id, "accelerator_name": a.name,
        "count": plan.count, "nodes": plan.machines, "machines": plan.machines, "fill": plan.fill,
        "tensor_parallel": plan.tensor_parallel, "expert_parallel": plan.expert_parallel,
        "pipeline_parallel": plan.pipeline_parallel, "replicas": plan.replicas, "zero_stage": plan.zero_stage,
        "replicas_for_load": plan.replicas_for_load,
        "batch_per_replica": plan.batch_per_replica, "memory_gb_per_gpu": round(plan.memory_gb_per_gpu, 3),
        "memory_utilization": round(plan.memory_utilization, 4), "fits_single_gpu": plan.fits_single_gpu,
        "bound": plan.bound, "tokens_per_s": _r(plan.tokens_per_s),
        "tokens_per_s_per_user": _r(plan.tokens_per_s_per_user),
        "ttft_s": _r(plan.ttft_s), "latency_s": _r(plan.latency_s), "training_days": _r(plan.training_days),
        "training_gpu_hours": _r(plan.training_gpu_hours),
        "capacity_tokens_per_s": _r(plan.capacity_tokens_per_s),
        "headroom": _r(plan.capacity_tokens_per_s / need_tps) if plan.capacity_tokens_per_s and need_tps > 0
        else None, "desk_side": u.desk_side or a.market in ("consumer", "workstation"),
        "meets_tpot": plan.meets_tpot, "meets_ttft": plan.meets_ttft, "meets_latency": plan.meets_latency,
        "meets_deadline": plan.meets_deadline, "within_max_gpus": plan.within_max_gpus,
        "meets_failover": plan.meets_failover,
        "link": plan.link, "sync_link": plan.sync_link, "interconnect_kind": plan.link,
        "scale_up_kind": topo.scale_up.kind, "unit_kind": u.kind, "topology": topo.describe(),
        "scale_out_kind": topo.scale_out.kind if topo.scale_out is not None else "none",
        "slow_split": slow_split(tensor_parallel=plan.tensor_parallel, pipeline_parallel=plan.pipeline_parallel,
                                 expert_parallel=plan.expert_parallel, link=plan.link, per_machine=plan.fill,
                                 scale_out_kind=topo.scale_out.kind if topo.scale_out is not None else "none"),
        "below_recipe": recipe,
        "market": a.market, "vendor": a.vendor, "ecc": a.ecc, "trains": a.trains,
        "software_stack": a.software_stack, "flash_attention_2": a.flash_attention_2,
        "format_native": format_native(served, a),
        "fused_attention": fused_attention(a), "throttled": plan.throttled,
        "mig": int(a.mig_max_instances.value) if a.mig_max_instances else 0, "memory_gb": a.memory_gb.value,
        **_mig_slices(a, plan, models),
        "flagship": flagship(a),
        "vendor_allowed": a.vendor in work.vendors,
        **library_support(catalog, a, served),
        "precision_fallback": "" if served == work.weights_precision else f"{work.weights_precision} → {served}",
        "text": f"{where}: {plan.memory_gb_per_gpu:,.1f} of {plan.capacity_gb:,.1f} GB per GPU "
                f"({plan.memory_utilization:.0%}); {perf}",
        **(split if split is not None else SplitFields()),
    }


def _weights_words(params: ParameterCount, name: str, fmt: WeightFormat, n_bytes: float) -> str:
    """The weights' arithmetic as the memory model does it: a quantized checkpoint keeps its embedding tables in
    16-bit (memory.embedding_bytes), so the total is not simply parameters × the format's bytes."""
    if fmt.embedding_bytes is None:
        return (f"Weights: {params.total:,} parameters × {fmt.bytes_per_weight:g} bytes ({name}) = "
                f"{n_bytes / GB:,.1f} GB")
    emb = embedding_params(params)
    return (f"Weights: {params.total - emb:,} parameters × {fmt.bytes_per_weight:g} bytes ({name}) + {emb:,} "
            f"embedding parameters × {fmt.embedding_bytes:g} bytes (kept in 16-bit) = {n_bytes / GB:,.1f} GB")


def library_support(catalog: Catalog, a: Accelerator, precision_id: str) -> LibrarySupport:
    """Whether the weight format's kernels run on this part (compute capability and software stack, H9)."""
    p = catalog.precisions[precision_id]
    # a compute-capability floor is NVIDIA's numbering: it binds CUDA parts; other stacks are judged by `software`
    cc_ok = (p.min_compute_capability is None or a.software_stack != "cuda"
             or (a.cc is not None and a.cc >= p.min_compute_capability))
    stack_ok = not p.software or a.software_stack in p.software
    kernels = f"the {p.id} kernels ({p.library})" if p.library else f"the {p.id} format"
    if not stack_ok:
        verb = "run" if p.library else "runs"
        why = f"{kernels} {verb} on {', '.join(p.software)}; this part runs {a.software_stack}"
    elif not cc_ok:
        has = f"has {a.cc:g}" if a.cc is not None else "has none"
        why = f"{kernels} need CUDA compute capability ≥ {p.min_compute_capability:g}; this part {has}"
    else:
        why = ""
    return {"weights_precision": p.id, "library": p.library or "", "library_ok": cc_ok and stack_ok,
            "min_cc": p.min_compute_capability or 0.0, "cc": a.cc or 0.0, "library_why": why}


def _link_name(kind: str) -> str:
    return {"local": "nothing (one GPU)"}.get(kind, Link("scale-up", kind, None).name if kind in SCALE_UP_KINDS
                                                    else Link("network", kind, None).name if kind != "pcie" else
                                                    "PCIe")


def option_fact(config: Fact, a: Accelerator, work: Workload, key: str, extra: Mapping[str, Any], label: str, *,
                text: str | None = None, cost: DecisionCost | None = None) -> dict[str, Any]:
    """One way to acquire a configuration (a rental, a purchase, a free tier, your own hardware): the fields every
    option shares, then `extra`, then its decision cost (`decision_usd` and a `cost_<part>_usd` field for each part,
    so rules can test them); `text` is the label with the figure that ranks it, unless given. None values are left
    out (the engine sees them as absent)."""
    fact = {
        "kind": "option", "ref": f"opt:{a.id}:{key}", "config": config["ref"], "accelerator": a.id,
        "accelerator_name": a.name, "count": config["count"], "accelerators_paid": config["count"],
        "nodes": config["nodes"], "machines": config.get("machines", config["nodes"]),
        "tensor_parallel": config["tensor_parallel"], "market": a.market, "vendor": a.vendor, "ecc": a.ecc,
        "software_stack": a.software_stack, "interconnect_kind": config.get("link", a.interconnect_kind),
        "link": config.get("link"), "sync_link": config.get("sync_link"), "topology": config.get("topology"),
        "scale_out_kind": config.get("scale_out_kind"), "desk_side": config.get("desk_side"),
        "replicas": config.get("replicas"), "replicas_for_load": config.get("replicas_for_load"),
        "meets_failover": config.get("meets_failover"),
        "tokens_per_s_per_user": config.get("tokens_per_s_per_user"), "ttft_s": config.get("ttft_s"),
        "latency_s": config.get("latency_s"),
        "training_days": config.get("training_days"), "tokens_per_s": config.get("tokens_per_s"),
        "capacity_tokens_per_s": config.get("capacity_tokens_per_s"), "headroom": config.get("headroom"),
        "memory_utilization": config["memory_utilization"], "flagship": config["flagship"],
        "memory_gb": a.memory_gb.value,
        "stage": work.stage, "large_cluster": int(config["count"]) >= LARGE_CLUSTER_GPUS,
        "gpu_hours": _f(config.get("training_gpu_hours")),
        **{k: v for k, v in config.items() if k.startswith("pd_")},
        "over_capex": False, "over_hourly": False, "over_monthly": False, **extra,
    }
    if cost is not None:
        fact["decision_usd"] = round(cost.total, 2)
        fact["horizon_months"] = cost.months
        for part in COST_PARTS:
            if any(p.part == part for p in cost.parts):
                fact[f"cost_{part}_usd"] = round(cost.usd(part), 2)
    if text is None:
        metric = ""
        if cost is not None:
            metric = f": ${cost.total:,.0f} {cost.horizon}"
        elif fact.get("usd_per_run") is not None:
            metric = f": ${fact['usd_per_run']:,.0f} per run"
        elif fact.get("usd_per_month") is not None:
            metric = f": ${fact['usd_per_month']:,.2f} a month"
        text = label + metric
    fact["text"] = text
    return {k: v for k, v in fact.items() if v is not None}


def conclude_option(ctx: RuleContext, fact: dict[str, Any], cost: DecisionCost | None) -> None:
    """Conclude an option fact with its decision cost attached (the parts, each with its arithmetic, for the
    ranking and the reports)."""
    ctx.conclude(fact, attachment={"cost": cost} if cost is not None else None)


def _cheapest_rent_per_gpu_hour(catalog: Catalog) -> dict[str, float]:
    """Per accelerator, the lowest current on-demand price per GPU-hour among the instances (rent vs buy, H15)."""
    best: dict[str, float] = {}
    for i in catalog.instances.values():
        p = i.current_price("on-demand")
        if p is not None:
            per_gpu = p.usd_per_hour / i.accelerator_count
            best[i.accelerator] = min(per_gpu, best.get(i.accelerator, per_gpu))
    return best


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, nd)


def _f(x: Any) -> float | None:
    return None if x is None else float(x)


def _i(x: Any) -> int | None:
    return None if x is None else int(x)


def _mig_slices(a: Accelerator, plan: Plan, models: int) -> MigSlices:
    """Several models on one GPU: the MIG instance each would get (`mig_slice_gb`) and whether each model, alone in
    its instance with the headroom kept, fits it (`mig_fits`, rule H12)."""
    if a.mig_max_instances is None or plan.tensor_parallel * plan.pipeline_parallel > 1 or models < 2:
        return {"mig_fits": False, "mig_slice_gb": None}
    slice_bytes = mig_slice_bytes(a.memory_gb.value * GB, int(a.mig_max_instances.value), models)
    if slice_bytes is None:
        return {"mig_fits": False, "mig_slice_gb": None}
    need = per_model_bytes(plan.memory, models)
    return {"mig_fits": need <= plan.memory.usable(slice_bytes), "mig_slice_gb": round(slice_bytes / GB, 1),
            "mig_model_gb": round(need / GB, 2)}



def _split_fields(split: Disaggregation | str | None) -> SplitFields:
    """The disaggregated layout weighed for a configuration, as `pd_*` fields of its fact (rules PD.split and
    PD.considered read them): nothing when it was not weighed, only the reason when it is not possible."""
    if split is None:
        return {}
    if isinstance(split, str):
        return {"pd_offer": False, "pd_reason": split}
    return {
        "pd_offer": split.offered, "pd_reason": split.reason, "pd_machines": split.machines,
        "pd_prefill_machines": split.prefill_machines, "pd_decode_machines": split.decode_machines,
        "pd_prefill_replicas": split.prefill.replicas, "pd_decode_replicas": split.decode.replicas,
        "pd_decode_batch": split.decode.batch, "pd_ttft_s": _r(split.prefill.ttft_p95_s),
        "pd_tokens_per_s_per_user": _r(split.decode.tokens_per_s_per_user),
        "pd_kv_gb_per_request": _r(split.transfer.bytes_per_request / GB),
        "pd_transfer_ms": _r(split.transfer.seconds * 1e3, 2), "pd_network": split.network,
        "pd_colocated_machines": split.colocated_machines,
    }
