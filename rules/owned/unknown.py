"""Hardware the user owns that the knowledge base does not know: sized by what is given, never dropped.

Detection (or the user) may report a GPU by its name and memory only — a laptop's "NVIDIA GeForce RTX 4060 Laptop
GPU" with 8 GB — that no knowledge-base entry matches. Without its bandwidth and compute rates its speed cannot be
sized, and a guess would be worse than saying so; but its memory is known, and memory is what decides whether a
model runs on it at all (seed 000: memory capacity first). Rule OWN.unknown compares the job's memory on one GPU
(the `memory_need` fact, split over the cards the user has) with what the cards hold less the headroom kept free,
and concludes one finding: try it first, or what would make the model fit it (4-bit weights). The headline says so
when it holds the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.engine import Callback, RuleContext
from gpuadvisor.rules.engine.actions import reads_only
from gpuadvisor.rules.inputs.answers import Answers
from gpuadvisor.rules.inputs.fact_kinds import OwnedUnknownFact
from gpuadvisor.rules.planning.profile import catalog_factors

Fact = Mapping[str, Any]


def owned_unknown_fact(answers: Answers) -> OwnedUnknownFact | None:
    """The user's own part known only by name and memory (`current.gpu_name` or an unknown `current.gpu`, with
    `current.gpu_memory_gb`), or None. Call it only when resolution found no knowledge-base part."""
    c = answers.current
    name = (c.gpu_name or c.gpu or "").strip()
    if not name or name.lower() in {"auto", "none"} or c.gpu_memory_gb is None:
        return None
    count = c.gpu_count or 1
    return {"kind": "owned_unknown", "ref": "owned-unknown", "name": name, "memory_gb": float(c.gpu_memory_gb),
            "count": count, "text": f"You have {count}× {name} with {c.gpu_memory_gb:g} GB each (current.gpu_name, "
                                    "current.gpu_memory_gb), a part the knowledge base does not know"}


class OwnedUnknownRules:
    """The callback of rule OWN.unknown."""

    def __init__(self, catalog: Catalog) -> None:
        self.headroom = catalog_factors(catalog).headroom_fraction

    def table(self) -> dict[str, Callback]:
        return {"own_unknown_fit": self.own_unknown_fit}

    @reads_only
    def own_unknown_fit(self, ctx: RuleContext, own: Fact, need: Fact, weights: Fact) -> None:
        count, memory = int(own["count"]), float(own["memory_gb"])
        usable = memory * (1.0 - self.headroom)
        per_gpu = per_gpu_need(need, count)
        cards = f"{count}× {own['name']} ({memory:g} GB{' each' if count > 1 else ''})"
        if per_gpu <= usable:
            message = (f"Your own {cards} is not in the knowledge base, but by its memory it holds this job: "
                       f"{per_gpu:,.1f} GB a GPU of the {usable:,.1f} GB usable. Try it before buying or renting "
                       "anything; its speed is not sized (give current.gpu as a knowledge-base part to size it)")
            fits = True
        else:
            lever = _lever(need, weights, count, per_gpu, usable)
            message = (f"Your own {cards} is not in the knowledge base; by its memory it does not hold this job: "
                       f"{per_gpu:,.1f} GB a GPU against {usable:,.1f} GB usable{lever}")
            fits = False
        # a note when it holds the job (the headline says so), a risk when it does not
        ctx.conclude({"kind": "warning", "rule": ctx.rule.id, "heuristic": ctx.rule.heuristic or "",
                      "category": "advice" if fits else "warning", "severity": "info" if fits else "warning",
                      "message": message + ".", "target": ""})


def _lever(need: Fact, weights: Fact, count: int, per_gpu: float, usable: float) -> str:
    """What would make the job fit the cards, when one change would: for serving, 4-bit weights; for training and
    fine-tuning, shorter sequences (activations grow with the tokens a micro-batch holds; the weights, adapters,
    gradients and optimizer states do not)."""
    if need["mode"] == "inference":
        smaller = per_gpu - (float(need["weights_gb"]) - float(weights.get("gb_4bit") or need["weights_gb"])) / count
        return (f"; 4-bit weights would bring it to {smaller:,.1f} GB, which fits (precision.weights = \"q4_k_m\")"
                if smaller <= usable else "")
    fixed = per_gpu - float(need["activations_gb"]) / count
    if fixed < usable:
        return (f"; without activations it needs {fixed:,.1f} GB, so shorter sequences (precision.context_tokens) "
                "or a micro-batch of 1 with gradient checkpointing may fit")
    return (f"; its weights, gradients, optimizer states and runtime alone take {fixed:,.1f} GB, so no shorter "
            "sequence fits: a smaller model or a larger GPU does")


def per_gpu_need(need: Fact, count: int) -> float:
    """The job's memory on each of `count` cards: weights, KV cache and activations split, each card's runtime
    overhead whole (the split the planner makes, without its layout search)."""
    overhead = float(need["overhead_gb"])
    return (float(need["total_gb"]) - overhead) / max(1, count) + overhead
