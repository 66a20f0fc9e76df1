"""Which serving engine runs on an accelerator, and what it achieves there (engines.toml).

Why: llama.cpp, vLLM, SGLang, TensorRT-LLM and MLX reach very different fractions of the memory bandwidth, and the
same engine differs between an HBM data-centre part and a GDDR desk-side card. Each `engine@family` profile of
engines.toml holds values fitted to published measurements with bands equal to the residuals; this module picks
the profile for an accelerator and turns it into the `EngineEfficiency` the speed model takes through `Device`.
"""

from __future__ import annotations

import re
from typing import Literal

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.engine_names import canonical_engine
from gpuadvisor.knowledge.schema import Accelerator, Band, Engine, EngineProfile, ModelSplit
from gpuadvisor.rules.sizing.speed import EngineEfficiency
from gpuadvisor.rules.sizing.units import GB

MIB = 2.0**20
"""Bytes in a MiB: the unit engines and drivers size device memory in (nvidia-smi, SGLang's server arguments)."""
_ARCH_WORDS = ("blackwell", "hopper", "ada", "ampere", "turing", "volta", "pascal", "cdna 3", "cdna 2", "rdna")


def memory_kind(acc: Accelerator) -> str:
    """hbm, gddr or unified: what separates a data-centre part from a desk-side one for decode kernels."""
    text = acc.memory_type.lower()
    if "hbm" in text:
        return "hbm"
    if "unified" in text or "lpddr" in text:
        return "unified"
    return "gddr"


def architecture_word(acc: Accelerator) -> str:
    """'ampere', 'ada', 'hopper', 'cdna3', 'silicon' (Apple) ... from the accelerator's architecture text."""
    if acc.vendor == "apple":
        return "silicon"
    text = acc.architecture.lower()
    for word in _ARCH_WORDS:
        if word in text:
            return word.replace(" ", "")
    return re.sub(r"[^a-z0-9]+", "-", text.split("(")[0].strip()).strip("-") or "other"


def family_keys(acc: Accelerator) -> tuple[str, ...]:
    """Profile family keys for `acc`, most specific first: vendor-architecture-memory, vendor-memory, vendor, any."""
    mem = memory_kind(acc)
    return (f"{acc.vendor}-{architecture_word(acc)}-{mem}", f"{acc.vendor}-{mem}", acc.vendor, "any")


def auto_engine(acc: Accelerator) -> str:
    """The engine a deployment on `acc` most likely runs: MLX on Apple silicon, llama.cpp on desk-side cards
    (consumer and workstation GDDR parts: Ollama, LM Studio), vLLM on servers (data-centre and cloud parts)."""
    if acc.vendor == "apple" or acc.software_stack == "metal":
        return "mlx"
    if acc.market in ("consumer", "workstation"):
        return "llama.cpp"
    return "vllm"


def profile_for(catalog: Catalog, acc: Accelerator, engine: str) -> EngineProfile | None:
    """The most specific engines.toml profile of `engine` for `acc`, or None when the engine has none."""
    for key in family_keys(acc):
        found = catalog.engine_profiles.get(f"{engine}@{key}")
        if found is not None:
            return found
    return None


def resolve_engine(acc: Accelerator, requested: str | None) -> str:
    """The engine id used on `acc`: the user's choice, or `auto_engine` for None/'auto'."""
    name = canonical_engine(requested) if requested else "auto"
    return auto_engine(acc) if name == "auto" else name


def engine_memory(catalog: Catalog, acc: Accelerator, requested: str | None = None) -> tuple[tuple[str, float], ...]:
    """The memory factors the chosen (or automatic) engine sets on `acc`, as (factor id, value) pairs: its free
    margin (`headroom_fraction`), its own footprint (`runtime_overhead_gb`) and the tokens its activations are
    reserved for (`prefill_chunk_tokens`); empty when engines.toml gives none (the assumptions then apply)."""
    engine = catalog.engines.get(resolve_engine(acc, requested))
    if engine is None:
        return ()
    pairs = (("headroom_fraction", engine.memory_headroom), ("runtime_overhead_gb", engine.runtime_overhead_gb),
             ("prefill_chunk_tokens", engine.activation_tokens), *_reserve_factors(engine, acc))
    return tuple((k, v) for k, v in pairs if v is not None)


def _reserve_factors(engine: Engine, acc: Accelerator) -> tuple[tuple[str, float], ...]:
    """The memory factors of an engine's default reserve on `acc` (`StaticMemory`, SGLang's mem_fraction_static):
    the reserve of a one-GPU replica, its growth per further GPU and from 4-way tensor parallelism, in GB, so that
    `sizing.memory.activation_reserve` gives `StaticMemory.reserve_mib` for any split."""
    static = engine.static_memory
    if static is None:
        return ()
    mib = acc.memory_bytes() / MIB
    one, wide = static.reserve_mib(mib, 1, 1), static.reserve_mib(mib, 4, 1)
    return (("activation_reserve_gb", one * MIB / GB), ("activation_reserve_per_gpu_gb", static.mib_per_gpu * MIB / GB),
            ("activation_reserve_wide_gb", (wide - one - 3 * static.mib_per_gpu) * MIB / GB))


def engine_splits(catalog: Catalog, acc: Accelerator, requested: str | None = None) -> tuple[ModelSplit, ...]:
    """How the chosen (or automatic) engine spreads one model over several GPUs of `acc` (engines.toml
    `model_split`): llama.cpp splits by layers only; an engine the knowledge base does not describe is searched in
    both ways."""
    engine = catalog.engines.get(resolve_engine(acc, requested))
    return ("tensor", "pipeline") if engine is None else tuple(engine.model_split)


Which = Literal["value", "slow", "fast"]


def engine_efficiency(catalog: Catalog, acc: Accelerator, requested: str | None = None,
                      which: Which = "value") -> EngineEfficiency | None:
    """What the chosen (or automatic) engine achieves on `acc` at the profile's value or at the pessimistic
    ('slow') / optimistic ('fast') end of its calibrated band; None when engines.toml has no profile for it (the
    speed model then uses the engine-blind assumptions)."""
    engine = resolve_engine(acc, requested)
    profile = profile_for(catalog, acc, engine)
    if profile is None:
        return None
    return efficiency_of(profile, which)


def efficiency_of(profile: EngineProfile, which: Which = "value") -> EngineEfficiency:
    """A profile's figures at its value or at one end of its band: slow is a rate's low end (bandwidth, compute)
    and a cost's high end (the overheads, the GEMM ramp); fast the other way round."""
    def rate(band: Band) -> float:
        return _at(band, which, cost=False)

    def cost(band: Band | None) -> float:
        return 0.0 if band is None else _at(band, which, cost=True)

    comp = profile.compute_efficiency
    return EngineEfficiency(profile.engine, rate(profile.bandwidth_efficiency), rate(profile.kv_efficiency),
                            cost(profile.overhead_per_layer_us), None if comp is None else rate(comp), profile.id,
                            cost(profile.overhead_per_sequence_us), gemm_ramp_us=cost(profile.gemm_ramp_us),
                            overhead_per_moe_layer_us=cost(profile.overhead_per_moe_layer_us),
                            expert_bandwidth_efficiency=(None if profile.expert_bandwidth_efficiency is None
                                                         else rate(profile.expert_bandwidth_efficiency)),
                            overhead_per_sequence_layer_us=cost(profile.overhead_per_sequence_layer_us),
                            release=profile.release)


def _at(band: Band, which: Which, *, cost: bool) -> float:
    """The band's value, or its slow or fast end (a cost is slow at its high end, a rate at its low one)."""
    if which == "value":
        return band.value
    return band.high if (which == "slow") == cost else band.low


def efficiency_bounds(catalog: Catalog, acc: Accelerator, requested: str | None = None
                      ) -> tuple[EngineEfficiency | None, EngineEfficiency | None, EngineEfficiency | None]:
    """(value, pessimistic, optimistic) efficiencies of the engine on `acc` (all None without a profile)."""
    return (engine_efficiency(catalog, acc, requested), engine_efficiency(catalog, acc, requested, "slow"),
            engine_efficiency(catalog, acc, requested, "fast"))
