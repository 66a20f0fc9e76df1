"""The sizing engine's prediction for every published measurement of tests/data/calibration.toml.

Shared by tests/rules/test_calibration.py (each row inside the band the estimate quotes), the calibration report
(tests/benchmarks/bench_calibration.py) and the fitter of engines.toml (tests/benchmarks/fit_engines.py), so the
three cannot disagree about what a row means.
"""

from __future__ import annotations

import statistics
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator, Architecture
from gpuadvisor.rules.estimate.consult import catalog_factors, embedding_bytes, factor_bounds
from gpuadvisor.rules.planning.search import TrainingSearch, TrainingTargets, goodput
from gpuadvisor.rules.planning.serving import Which, engine_efficiency, family_keys, profile_for
from gpuadvisor.rules.planning.topology import ScaleOut, Topology, accelerator_topology, device_for
from gpuadvisor.rules.planning.units import Unit
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.memory import Parallelism, fused_attention
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import (
    DecodeCurve,
    EngineEfficiency,
    generation_throughput,
    prefill,
)
from gpuadvisor.rules.sizing.training import attention_flops_per_token, default_virtual_stages

DATA = Path(__file__).resolve().parent / "data" / "calibration.toml"
DECODE_MEASURES = ("decode_tokens_per_s", "generation_tokens_per_s")
TRAINING_MEASURES = ("training_gpu_hours", "training_tokens_per_s_per_gpu", "training_model_tflops_per_gpu",
                     "training_speed_ratio")
"""training_speed_ratio: the row's tokens/s/GPU over the same run's on `reference_gpu` (a vendor's published ratio
against another vendor's part, with no absolute figure): it calibrates one stack's share against another's."""


def load() -> dict[str, Any]:
    with DATA.open("rb") as fh:
        return tomllib.load(fh)


CAL = load()
ARCHS = {k: Architecture(**{f: v for f, v in a.items() if f != "source"}) for k, a in CAL["arch"].items()}


@dataclass(frozen=True)
class Row:
    raw: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.raw[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.raw.get(name, default)

    @property
    def label(self) -> str:
        split = "".join(f" {k}{self.get(k)}" for k in ("tp", "pp") if self.get(k))
        shape = f" b{self.get('batch')}" if self.get("batch") else ""
        ctx = f" c{self.get('context')}" if self.get("context") else ""
        ctx += f" p{self.get('prompt')}" if self.get("prompt") else ""
        ctx += f" s{self.get('seq')}" if self.get("seq") else ""
        gpus = f" ×{self.get('gpus')}" if self.get("gpus") else ""
        engine = f" [{self.get('engine')}]" if self.get("engine") else ""
        return (f"{self.source}{engine}: {self.model} {self.precision} {self.gpu}{split}{gpus}{shape}{ctx} "
                f"{self.measures}")

    @property
    def kind(self) -> str:
        """decode, prefill or training: the family the report groups by."""
        if self.measures in DECODE_MEASURES:
            return "decode"
        return "training" if self.measures in TRAINING_MEASURES else "prefill"


ROWS = [Row(r) for r in CAL["row"]]
CHECKED = [r for r in ROWS if not r.get("excluded")]


def family(acc: Accelerator) -> str:
    """The most specific family key of an accelerator (what the report groups by)."""
    return family_keys(acc)[0]


def _efficiency(row: Row, catalog: Catalog, which: Which) -> EngineEfficiency | None:
    engine = row.get("engine")
    if engine is None:
        return None
    return engine_efficiency(catalog, catalog.accelerators[row.gpu], engine, which)


def predict(row: Row, catalog: Catalog, factors: Factors, which: Which = "value",
            efficiency: EngineEfficiency | None | str = "profile") -> float:
    """The engine's figure for the quantity the row measured, with the row's engine at its profile's value or band
    end (`which`), or with an explicit `efficiency` (the fitter's trial values)."""
    acc = catalog.accelerators[row.gpu]
    prec = catalog.precisions[row.precision]
    kind = row.measures
    if kind in TRAINING_MEASURES:
        return predict_training(row, catalog, factors)
    arch = ARCHS[row.model]
    params = count_parameters(arch)
    kv = catalog.precisions[row.get("kv_precision", "fp16")]
    eff = _efficiency(row, catalog, which) if efficiency == "profile" else efficiency
    assert not isinstance(eff, str)
    device = device_for(acc, prec.compute, efficiency=eff)
    tp, pp = row.get("tp", 1), row.get("pp", 1)
    emb = embedding_bytes(prec)
    if kind == "decode_tokens_per_s":
        curve = DecodeCurve(arch, params, device, bytes_per_weight=prec.bytes_per_weight,
                            kv_bytes_per_value=kv.bytes_per_weight, context=row.context, tp=tp, pp=pp,
                            embedding_bytes=emb, factors=factors)
        return row.batch / curve.seconds(row.batch)
    if kind == "prefill_tokens_per_s":
        return prefill(arch, params, device, bytes_per_weight=prec.bytes_per_weight, prompt_tokens=row.prompt,
                       batch=row.batch, tp=tp, embedding_bytes=emb, factors=factors,
                       with_notes=False).tokens_per_s
    if kind == "ttft_s":
        return prefill(arch, params, device, bytes_per_weight=prec.bytes_per_weight, prompt_tokens=row.prompt,
                       tp=tp, embedding_bytes=emb, factors=factors, with_notes=False).seconds
    if kind == "generation_tokens_per_s":
        return generation_throughput(arch, params, device, bytes_per_weight=prec.bytes_per_weight,
                                     kv_bytes_per_value=kv.bytes_per_weight, input_tokens=row.prompt,
                                     output_tokens=row.output, batch=row.batch, tp=tp, embedding_bytes=emb,
                                     factors=factors)
    raise AssertionError(f"unknown measure {kind!r}")


GPT_HEAD_SIZE = 128
GPT_NEOX_VOCAB = 50368
"""MPT's vocabulary (the GPT-NeoX tokenizer padded to 50,368, llm-foundry's yamls)."""


def training_arch(row: Row) -> Architecture:
    """The row's architecture: a [arch] entry, or a GPT-style decoder built from `params`/`hidden`/`layers` (MPT:
    128-wide heads, a plain 4h MLP, the GPT-NeoX vocabulary; `vocab` and `heads` when the row gives them)."""
    if not row.get("params"):
        return ARCHS[row.model]
    h = int(row.hidden)
    return Architecture(vocab_size=int(row.get("vocab", GPT_NEOX_VOCAB)), hidden_size=h, intermediate_size=4 * h,
                        num_hidden_layers=int(row.layers),
                        num_attention_heads=int(row.get("heads", h // GPT_HEAD_SIZE)),
                        mlp="plain", norm="layernorm", alibi=True)


def training_unit(acc: Accelerator, row: Row) -> Unit:
    """Machines of the row's system: the part's own board (an 8-GPU HGX/OAM node, a 4-GPU GB200 tray in its NVL72
    domain, a TPU host in its slice) joined by `network_gbs` per node (default: a 400 Gb/s NIC per GPU)."""
    topo = accelerator_topology(acc)
    net = float(row.get("network_gbs", 50.0 * topo.node))
    topo = Topology(topo.node, topo.scale_up, topo.pcie_gbs_per_direction, ScaleOut("infiniband", net))
    return Unit(id=f"cal:{acc.id}", acquisition="buy", accelerator=acc.id, name=acc.name, kind="part", topology=topo,
                fills=(topo.node,), machine_cost=0.0, accelerator_cost=1.0, desk_side=False)


def training_search(row: Row, catalog: Catalog, factors: Factors) -> TrainingSearch:
    arch = training_arch(row)
    seq = int(row.get("seq", 2048))
    batch = row.get("global_batch")
    if batch is None and row.get("batch_tokens"):
        batch = max(1, round(float(row.batch_tokens) / seq))
    zero = row.get("zero")
    targets = TrainingTargets(tokens=float(row.get("tokens", 1e9)), flops_factor=row.get("method", "full"),
                              seq=seq, micro_batch=int(row.get("micro_batch", 1)), deadline_days=30.0,
                              optimizer="adamw", zero_stage=None if zero is None else int(zero), lora_rank=16,
                              max_gpus=None, pretraining=row.get("method", "full") == "full",
                              global_batch=None if batch is None else int(batch),
                              context_parallel=row.get("cp"), recompute=row.get("recompute", "auto"))
    return TrainingSearch(arch, count_parameters(arch), catalog.precisions[row.precision], targets, factors)


def predict_training(row: Row, catalog: Catalog, factors: Factors) -> float:
    """GPU-hours, tokens/s/GPU or a speed ratio of a training row: the row's layout when it gives one (tp, pp, cp, vp,
    zero and its recomputation, else the least that fits), else the planner's fastest layout of its GPUs."""
    if row.measures == "training_speed_ratio":
        per_gpu = {**row.raw, "measures": "training_tokens_per_s_per_gpu"}
        return predict_training(Row(per_gpu), catalog, factors) / predict_training(
            Row({**per_gpu, "gpu": row.reference_gpu}), catalog, factors)
    acc = catalog.accelerators[row.gpu]
    search = training_search(row, catalog, factors)
    unit = training_unit(acc, row)
    gpus = int(row.get("gpus", 8))
    if row.get("tp") is not None or row.get("pp") is not None:
        tp, pp, cp = int(row.get("tp", 1)), int(row.get("pp", 1)), int(row.get("cp", 1))
        layers = search.arch.num_hidden_layers
        vp = int(row.get("vp", default_virtual_stages(layers, pp)))
        zero = int(row.get("zero", 1))
        dp = gpus // (tp * pp * cp)
        par = Parallelism(tp=tp, pp=pp, cp=cp, dp=dp, vp=vp, zero=zero if dp * cp > 1 else 0)
        _, tt = search.evaluate(acc, unit, par)
        assert tt is not None
    else:
        best = search.best(acc, unit, gpus, fused_attention(acc), acc.memory_bytes())
        assert best is not None, f"no layout of {gpus} GPUs fits: {row.label}"
        tt, _ = search._time(acc, max(1, gpus // unit.node), gpus, best[2], False)
    if row.measures == "training_gpu_hours":
        # a card's hours are the run's wall clock × its GPUs: the time lost to interruptions included, as a plan's
        return tt.gpu_hours / goodput(gpus, factors)
    if row.measures == "training_model_tflops_per_gpu":
        flops = 6.0 * float(search.params.active) + attention_flops_per_token(search.arch, search.t.seq)
        return tt.tokens_per_s / gpus * flops / 1e12
    return tt.tokens_per_s / gpus


def bounds(row: Row, catalog: Catalog) -> tuple[float, float, float]:
    """(central, low, high) prediction: the assumptions' values, and their pessimistic and optimistic ends with
    the engine profile's band ends."""
    factors = catalog_factors(catalog)
    slow, fast = factor_bounds(catalog, factors)
    if row.kind == "decode" and _efficiency(row, catalog, "value") is not None:
        # the engine profile's band (its calibration residuals) is the whole band of a decode figure
        slow = fast = factors
    central = predict(row, catalog, factors)
    a, b = predict(row, catalog, slow, "slow"), predict(row, catalog, fast, "fast")
    return central, min(a, b), max(a, b)


def profile_id(row: Row, catalog: Catalog) -> str | None:
    engine = row.get("engine")
    if engine is None:
        return None
    found = profile_for(catalog, catalog.accelerators[row.gpu], engine)
    return found.id if found else None


def error(central: float, measured: float, measures: str) -> float:
    """Signed relative error of a prediction (for times, of the implied rate, so the sign means 'too fast')."""
    if measures in ("ttft_s", "training_gpu_hours"):
        return measured / central - 1.0
    return central / measured - 1.0


def quantiles(errors: Iterable[float]) -> tuple[float, float, int]:
    """(median, p90, n) of |error|."""
    values = sorted(abs(e) for e in errors)
    if not values:
        return 0.0, 0.0, 0
    p90 = values[min(len(values) - 1, max(0, round(0.9 * len(values)) - 1))]
    return statistics.median(values), p90, len(values)
