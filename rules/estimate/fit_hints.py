"""What would make a configuration `gpuadvisor estimate` sized fit its GPUs: the same estimate rerun with one change
at a time, least disruptive first, each kept with the memory per GPU it needs.

Why rerun rather than scale: the parts move differently (ZeRO-3 divides weights, gradients and optimizer states by
the data-parallel ranks but not the activations; tensor parallelism divides weights and activations; a 4-bit format
shrinks the weights only), and the one pipeline that sized the configuration is the one that can say whether the
change fits (docs/architecture.md: one function per physical quantity).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.rules.estimate.consult import EstimateRequest, estimate
from gpuadvisor.rules.estimate.result import EstimateResult, FitOption

if TYPE_CHECKING:
    from gpuadvisor.knowledge.catalog import Catalog

MAX_HINTS = 3
"""Changes listed: the first of each kind that fits, least disruptive first."""
COVERED_BY = {"split": ("zero",), "gpus": ("zero", "split"), "stages": ("split",)}
"""A change that only adds to one that already fits is not the news: a training split adds tensor parallelism to
ZeRO-3, more GPUs add ranks to it; serving stages add machines to a split that fits in one."""
MAX_TP = 8
"""Widest tensor-parallel split suggested: one NVLink/NVSwitch machine (H5: TP stays inside a node)."""
MAX_GPUS = 4096
"""Most GPUs a "more GPUs" suggestion goes to (doubling): beyond, the answer is another plan, not a flag."""


@dataclass(frozen=True)
class Change:
    """One change to try: its kind (one suggestion a kind: a wider split after ZeRO-3 fits says nothing new), the
    flags a user would add, what it does, and the request it makes."""

    kind: str
    flags: str
    what: str
    request: EstimateRequest


def estimate_with_fit_options(req: EstimateRequest, catalog: Catalog) -> EstimateResult:
    """`gpuadvisor estimate`: the configuration sized, and when it does not fit its GPUs, the changes that would
    (`fit_options`), each sized again by the same estimate."""
    result = estimate(req, catalog)
    result.fit_options = [
        FitOption(flags=change.flags, change=change.what, total_gb=other.memory_gb.total,
                  usable_gb=other.memory_gb.usable or 0.0)
        for change, other in fit_changes(req, result, lambda r: estimate(r, catalog))]
    return result


def fit_changes(req: EstimateRequest, result: EstimateResult, run: Callable[[EstimateRequest], EstimateResult],
                ) -> list[tuple[Change, EstimateResult]]:
    """The first change of each kind whose estimate fits, at most MAX_HINTS, with their results (none when it
    already fits, or when no GPU was given: there is no capacity to fit)."""
    if result.fits is not False:
        return []
    found: list[tuple[Change, EstimateResult]] = []
    for change in _candidates(req, result):
        kinds = {c.kind for c, _ in found}
        if change.kind in kinds or kinds & set(COVERED_BY.get(change.kind, ())):
            continue
        try:
            other = run(change.request)
        except AdvisorError:  # a split the model's shape refuses (heads not divisible): not a suggestion
            continue
        if other.fits:
            found.append((change, other))
            if len(found) == MAX_HINTS:
                break
    return found


def _candidates(req: EstimateRequest, result: EstimateResult) -> Iterator[Change]:
    s = result.setup
    if s.workload != "inference":
        if s.data_parallel > 1 and s.zero_stage < 3:
            what = (f"shard weights, gradients and optimizer states over the {s.data_parallel} data-parallel GPUs "
                    "(FSDP / DeepSpeed ZeRO-3)")
            yield Change("zero", "--zero 3", what, replace(req, zero=3))
        if s.gradient_checkpointing is False:
            yield Change("checkpointing", "(drop --no-checkpointing)", "recompute activations in the backward pass",
                         replace(req, checkpointing=True))
        for tp in _wider_splits(s.tensor_parallel, s.gpus):
            zero = 3 if s.gpus // tp > 1 else None
            flags = f"--tp {tp}" + (" --zero 3" if zero else "")
            what = f"split every layer over {tp} GPUs" + (", ZeRO-3 across the rest" if zero else "")
            yield Change("split", flags, what, replace(req, tp=tp, zero=zero))
        gpus = s.gpus * 2
        while gpus <= MAX_GPUS:  # the job as given, over more data-parallel ranks, sharded
            yield Change("gpus", f"--gpus {gpus} --zero 3", f"shard over {gpus} GPUs (ZeRO-3)",
                         replace(req, gpus=gpus, zero=3))
            gpus *= 2
        if s.workload == "finetune" and s.method == "full":  # from scratch has no base to adapt
            yield Change("method", "--method lora", "train low-rank adapters on frozen weights",
                         replace(req, method="lora"))
        if s.workload == "finetune" and s.method in ("full", "lora"):
            yield Change("method", "--method qlora", "adapters on a 4-bit (NF4) frozen base",
                         replace(req, method="qlora", precision=None))
        return
    if result.precision.weights_bits > 8.5:
        yield Change("precision", "--precision fp8", "8-bit weights (where the GPU runs FP8; INT8 otherwise)",
                     replace(req, precision="fp8"))
    if result.precision.weights_bits > 4.5:
        yield Change("precision", "--precision int4", "4-bit weights (AWQ/GPTQ-class quantisation)",
                     replace(req, precision="int4"))
    for tp in _wider_splits(s.tensor_parallel, None):
        gpus = tp * s.pipeline_parallel
        yield Change("split", f"--gpus {gpus} --tp {tp}", f"split the model over {tp} GPUs",
                     replace(req, tp=tp, gpus=gpus))
    for pp in (2, 4, 8):  # past one machine: pipeline stages of MAX_TP-way splits
        if pp > s.pipeline_parallel:
            gpus = MAX_TP * pp
            yield Change("stages", f"--gpus {gpus} --tp {MAX_TP} --pp {pp}",
                         f"{pp} pipeline stages of {MAX_TP} GPUs", replace(req, tp=MAX_TP, pp=pp, gpus=gpus))
    if s.batch > 1:
        fewer = max(1, s.batch // 4)
        yield Change("batch", f"--batch {fewer}", "fewer sequences in flight: a quarter of the KV cache",
                     replace(req, batch=fewer))


def _wider_splits(tp: int, gpus: int | None) -> Iterator[int]:
    """Tensor-parallel degrees above `tp`, doubling up to MAX_TP (and dividing `gpus` when the count is fixed)."""
    wider = tp * 2
    while wider <= MAX_TP:
        if gpus is None or gpus % wider == 0:
            yield wider
        wider *= 2
