"""The consultation's number formats as one typed record, chosen once and carried down every floor.

Resolution (rules/inputs/resolve.py) picks the weights' and the KV cache's formats (the user's, or the default a QLoRA
base, a published checkpoint or the stage implies); `Formats` keeps them with what follows: the bytes each value is
stored in, the format the math runs in (`compute`, one rule for serving and training), and what an option serves in
on a part that cannot run the chosen weights (`served_on`: BF16, FP16 on a part without BF16). The engine sees the
formats as `precision` facts with this record beside them; the Workload, the searches, the result and estimate read
the record, never a format id looked up again or a "bf16" written as a fallback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.schema import Accelerator, Precision


def training_compute(weights: Precision) -> str:
    """The precision training's matmuls run at: a low-precision recipe's (NVFP4, MXFP4: FP4; FP8), FP32 weights in
    TF32, the rest in BF16."""
    if weights.training_recipe is not None:
        return weights.training_recipe.compute
    if weights.compute == "fp8":
        return "fp8"
    if weights.bits_per_weight >= 32:
        return "tf32"
    return "bf16"


def runs_on(p: Precision, acc: Accelerator) -> bool:
    """Whether `acc` runs the format natively: its tensor rates (`requires`), its software stack, its compute
    capability (the kernels' minimum)."""
    if not all(getattr(acc, need) for need in p.requires):
        return False
    if p.software and acc.software_stack not in p.software:
        return False
    return p.min_compute_capability is None or (acc.cc is not None and acc.cc >= p.min_compute_capability)


@dataclass(frozen=True, slots=True)
class Formats:
    """The weights' and the KV cache's formats of one consultation, and the fallback a part that cannot run the
    weights' format serves in."""

    weights: Precision
    kv_cache: Precision
    weights_given: bool
    """The user chose the weights' format: kept on every part (the rules say where it cannot run)."""
    training: bool
    """Training or fine-tuning: the math runs in the training format (`compute`), and no part falls back."""
    fallback: Precision
    """What serving falls back to on a part that cannot run a default format: BF16 …"""
    fallback_no_bf16: Precision
    """… or FP16 on a part without BF16 (the T4, the V100)."""

    @property
    def weight_bytes(self) -> float:
        """Bytes a weight is stored in, scales included."""
        return self.weights.bytes_per_weight

    @property
    def kv_bytes(self) -> float:
        """Bytes a KV-cache value is stored in."""
        return self.kv_cache.bytes_per_weight

    @property
    def compute(self) -> str:
        """The format the matmuls run in: training's (FP8 recipes in FP8, FP32 weights in TF32, the rest BF16),
        or the weights' own compute format when serving."""
        return training_compute(self.weights) if self.training else self.weights.compute

    def served_on(self, acc: Accelerator) -> Precision:
        """The weights format an option serves in: the user's, or the default (FP8 for production, a 4-bit K-quant
        for a local model, the checkpoint's own) where the part runs it, else BF16 (FP16 on a part without BF16) —
        what the deployment would run. A format the user chose is kept, and the rules say when the part cannot run
        it; training keeps its format (a part that cannot train in it is ruled out by the packs)."""
        if self.weights_given or self.training or runs_on(self.weights, acc):
            return self.weights
        return self.fallback if acc.bf16_support else self.fallback_no_bf16

    @classmethod
    def chosen(cls, weights: Precision, kv_cache: Precision, precisions: Mapping[str, Precision], *,
               weights_given: bool, training: bool) -> Formats:
        """The record for formats resolution chose, with the catalog's BF16 and FP16 as the fallbacks."""
        return cls(weights, kv_cache, weights_given, training, precisions["bf16"], precisions["fp16"])

    @classmethod
    def of_answers(cls, effective: Mapping[str, Any], given: Mapping[str, Any],
                   precisions: Mapping[str, Precision]) -> Formats | None:
        """The formats a published result was sized in, read back from its effective answers (which always hold
        the resolved formats; `given` says whether the user typed the weights' format); None when this knowledge
        base lacks one (a report made with another)."""
        used = effective.get("precision") or {}
        weights, kv = precisions.get(str(used.get("weights"))), precisions.get(str(used.get("kv_cache")))
        if weights is None or kv is None:
            return None
        return cls.chosen(weights, kv, precisions, training=effective.get("workload") != "inference",
                          weights_given="weights" in (given.get("precision") or {}))
