"""The split engines' published serving recipes run a model at: the fewest GPUs a replica that practitioners use.

A recipe (engines.toml `[[serving_recipe]]`) is how an engine's maintainers, or the part's vendor, publish serving
one model in one weights format on one part: vLLM and SGLang run DeepSeek-V3/R1 in FP8 at tensor parallel 8 on one
8-GPU H200, B200 or MI300X node and over 2 × 8 H100s. The planner's own physics (weights, the KV cache of the load in
flight, the engine's memory fraction) lets a smaller split fit a low load — DeepSeek-V3 on 4 MI300X holds 4 requests —
but such a split leaves each GPU a sliver for the KV cache (16 GB of 206 at vLLM's 0.9, against 100 GB at TP 8),
which the engines' maintainers do not run or tune for: the recipes are the practice, and they are data.

Which recipes bind a part follows from memory alone, so no table of parts is needed: a part with no more memory per GPU
than a recipe's part, split over fewer GPUs, leaves less room for the KV cache than that recipe does, so it needs at
least the recipe's GPUs a replica (`recipe_split`). A part with more memory than every recipe's part (MI325X, MI355X
for DeepSeek-V3 FP8) is left to the physics. The planner prefers a layout at the recipe's split over a smaller one of
the same unit (rules/planning/search.py); a plan that stays below it (a GPU cap, the GPUs you own) carries rule
W3.recipe.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, ServingRecipe
from gpuadvisor.rules.planning.search import InferenceSearch, Plan
from gpuadvisor.rules.sizing.units import GB


@dataclass(frozen=True)
class RecipeSplit:
    """The fewest GPUs a replica the published recipes run a model at on a part, and the recipe that says so."""

    gpus: int
    recipe: ServingRecipe
    part: Accelerator
    """The recipe's part (at least as much memory per GPU as the part planned)."""
    engines: tuple[str, ...]
    """Every engine whose recipes run the model at this split on parts of this memory or more (vllm, sglang)."""

    def words(self) -> str:
        """'the SGLang and vLLM recipes run tensor parallel 8 on 8 × AMD Instinct MI300X'."""
        r = self.recipe
        split = f"tensor parallel {r.tensor_parallel}" + (f" × {r.pipeline_parallel} pipeline stages"
                                                           if r.pipeline_parallel > 1 else "")
        who = " and ".join(self.engines) + (" recipes run" if len(self.engines) > 1 else " recipe runs")
        return f"the {who} {split} on {self.gpus} × {self.part.name}"


def recipe_split(catalog: Catalog, model: str, weights: str, acc: Accelerator) -> RecipeSplit | None:
    """The published split that binds `acc` for `model` in `weights` (None: no recipe names a part with at least
    its memory). Among the recipes of parts with at least `acc`'s memory per GPU, the one with the most GPUs a
    replica (each is a floor: less memory split as far leaves even less room); ties go to the part closest in
    memory."""
    mem = acc.memory_gb.value
    rows = []
    for r in catalog.serving_recipes.values():
        part = catalog.accelerators.get(r.accelerator)
        if r.model != model or r.weights != weights or part is None or part.memory_gb.value < mem:
            continue
        rows.append((r.tensor_parallel * r.pipeline_parallel, -part.memory_gb.value, r, part))
    if not rows:
        return None
    gpus, _, top, part = max(rows, key=lambda row: (row[0], row[1], row[2].id))
    engines = tuple(sorted({catalog.engines[r.engine].name if r.engine in catalog.engines else r.engine
                            for g, _, r, p in rows if g == gpus and p.id == part.id}))
    return RecipeSplit(gpus=gpus, recipe=top, part=part, engines=engines)


def below_recipe(catalog: Catalog, search: InferenceSearch, acc: Accelerator, plan: Plan, model: str) -> str:
    """'' when the plan's replica is at or above the recipes' split on `acc`; else what the recipe runs and why, in
    the part's own figures: the KV-cache room each GPU keeps at the plan's split and at the recipe's (W3.recipe)."""
    gpus = max(plan.tensor_parallel, plan.expert_parallel) * plan.pipeline_parallel
    if plan.recipe_gpus <= gpus:
        return ""
    found = recipe_split(catalog, model, search.weights.id, acc)
    if found is None:
        return ""
    r = found.recipe
    mine = search.kv_room_gb(acc, plan.tensor_parallel, plan.pipeline_parallel, plan.expert_parallel)
    theirs = search.kv_room_gb(acc, r.tensor_parallel, r.pipeline_parallel)
    return (f"a replica over {gpus} GPU{'s' if gpus > 1 else ''}, where {found.words()}: at this split each GPU "
            f"keeps {max(0.0, mine):,.0f} GB of its {acc.memory_bytes() / GB:,.0f} GB for the KV cache, at the "
            f"recipe's {theirs:,.0f} GB")
