"""What you have is the baseline: the user's own machine is tried with what would make it run the job before anything
is bought (seed 003, "start with what you have").

A person who owns two RTX 4090s and asks about a 70B model does not buy a Mac Studio because BF16 weights (141 GB)
do not fit 48 GB: they run a 4-bit checkpoint on the cards they have (vLLM serves an AWQ Llama 3 70B over two 24 GB
cards in tensor parallel 2; Ollama's default llama3.1:70b tag is a 43 GB q4_K_M). So when the user left the weights
format unset and the owned machine cannot run the job in the default one, the consultation's default becomes the
largest smaller format the owned part runs that makes it work — planned on the owned machine exactly as the
consultation plans it — and every other option is sized in that format too, so they are compared like for like.
A stated production service keeps 8-bit weights at least (FP8/INT8: NVIDIA NIM's production profiles): 4-bit is what a
learner or a prototype accepts, not a default for a service. A format the user typed is never replaced (the owned
machine's remedies then say what would make it work: rules/owned/levers.py).
"""

from __future__ import annotations

from dataclasses import replace

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Precision
from gpuadvisor.rules.inputs.answers import Answers
from gpuadvisor.rules.inputs.formats import Formats, runs_on
from gpuadvisor.rules.inputs.resolve import Chosen, Resolved
from gpuadvisor.rules.inputs.usage import usage_values
from gpuadvisor.rules.inputs.user_load import user_load_values
from gpuadvisor.rules.inputs.workload import Workload
from gpuadvisor.rules.planning.profile import (
    catalog_factors,
    consultation_factors,
    demand_fact,
    inference_search,
    serving_targets,
    workload_profile,
)
from gpuadvisor.rules.planning.search import Plan
from gpuadvisor.rules.planning.units import own_unit
from gpuadvisor.rules.sizing.params import count_parameters

SMALLER_FORMATS = ("fp8", "int8", "awq", "q4_k_m")
"""Weights formats tried on the owned machine, largest first, where the part runs them (`profile.runs_on`)."""
PRODUCTION_MIN_BITS = 8.0
"""A production service is not defaulted below 8-bit weights (FP8/INT8 are NVIDIA NIM's production profiles)."""


def fitted_to_owned(answers: Answers, resolved: Resolved, catalog: Catalog) -> Resolved:
    """`resolved` with the weights format that lets the user's own machine run the job when the default does not
    (and the user gave none): a note says why, and `baseline` holds the headline's clause. Unchanged otherwise."""
    if (resolved.owned is None or answers.workload != "inference" or answers.deployment.where == "cloud"
            or "weights" in answers.precision.model_fields_set):
        return resolved
    acc, count = resolved.owned
    job = _OwnedJob(answers, resolved, catalog, acc, count)
    current = resolved.formats.served_on(acc)
    if job.runs(current):
        return resolved
    stated_production = "stage" in answers.given_keys() and answers.stage == "production"
    floor = PRODUCTION_MIN_BITS if stated_production else 0.0
    for pid in SMALLER_FORMATS:
        p = catalog.precisions.get(pid)
        if (p is None or "weights" not in p.uses or p.bits_per_weight >= current.bits_per_weight
                or p.bits_per_weight < floor or not runs_on(p, acc)):
            continue
        if job.runs(p):
            why = (f"your own {count:,}× {acc.name} run {resolved.model.name} in {p.name}, where {current.name} "
                   "does not fit them")
            return replace(resolved, formats=job.formats(p), chosen={**resolved.chosen,
                                                                     "precision.weights": Chosen(p.id, why)},
                           baseline=f"with {short_name(p)} weights, which fit them where {short_name(current)} "
                                    "does not")
    return resolved


class _OwnedJob:
    """The consultation's serving job planned on the owned machine alone, in a given weights format."""

    def __init__(self, answers: Answers, resolved: Resolved, catalog: Catalog, acc: Accelerator, count: int) -> None:
        self.answers, self.resolved, self.catalog, self.acc, self.count = answers, resolved, catalog, acc, count
        self.effective = answers.effective()
        self.given = answers.given_keys()
        self.params = count_parameters(resolved.model.architecture)

    def formats(self, weights: Precision) -> Formats:
        """The consultation's formats with `weights` as its (default, not given) weights format."""
        return replace(self.resolved.formats, weights=weights)

    def work(self, weights: Precision) -> Workload:
        """The Workload the consultation would derive with `weights` as its format (rules/planning/profile.py)."""
        arch = self.resolved.model.architecture
        return workload_profile(self.effective.__getitem__, self.effective.__getitem__, self.given.__contains__,
                                model_name=self.resolved.model.name, params=self.params, moe=arch.moe is not None,
                                formats=self.formats(weights), usage_values=usage_values(self.catalog),
                                user_load_values=user_load_values(self.catalog))

    def runs(self, weights: Precision) -> bool:
        """Whether the owned machine serves the job in `weights`, every target and service level met."""
        work = self.work(weights)
        base = catalog_factors(self.catalog)
        factors = consultation_factors(base, work)
        targets = serving_targets(work, demand_fact(work, base.burst_headroom))
        plan = inference_search(self.catalog, work, self.resolved.model.architecture, self.params, targets, factors,
                                weights=weights).plan(self.acc, own_unit(self.acc, self.count), with_notes=False)
        return (isinstance(plan, Plan) and plan.meets_tpot and plan.meets_ttft and plan.meets_latency
                and plan.meets_failover)


def short_name(p: Precision) -> str:
    """'AWQ 4-bit', 'BF16', 'GGUF Q4_K_M': a format's name without its parenthesis or group size, for a sentence."""
    return p.name.split(" (")[0].split(",")[0]
