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
from gpuadvisor.rules.estimate import catalog_factors, embedding_bytes, factor_bounds
from gpuadvisor.rules.serving import Which, engine_efficiency, family_keys, profile_for
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.speed import (
    DecodeCurve,
    EngineEfficiency,
    TrainingShape,
    generation_throughput,
    prefill,
    training_time,
)
from gpuadvisor.rules.topology import device_for, peak_tflops

DATA = Path(__file__).resolve().parent / "data" / "calibration.toml"
DECODE_MEASURES = ("decode_tokens_per_s", "generation_tokens_per_s")
TRAINING_MEASURES = ("training_gpu_hours", "training_tokens_per_s_per_gpu")


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
    method = row.get("method", "full")
    if kind in TRAINING_MEASURES:
        peak, _ = peak_tflops(acc, prec.compute)
        assert peak is not None
        if row.get("params"):
            active, hidden, layers = float(row.params), int(row.hidden), int(row.layers)
        else:
            arch = ARCHS[row.model]
            active, hidden, layers = float(count_parameters(arch).active), arch.hidden_size, arch.num_hidden_layers
        shape = TrainingShape(hidden=hidden, layers=layers, seq=int(row.get("seq", 2048)),
                              fp8=prec.compute == "fp8", model_parallel=int(row.get("model_parallel", 1)),
                              batch_tokens=row.get("batch_tokens"), network_gbs=row.get("network_gbs"))
        gpus = int(row.get("gpus", 8))
        tokens = float(row.get("tokens", 1e9))
        tt = training_time(active, tokens, gpus=gpus, peak_tflops=peak, method=method, factors=factors,
                           shape=shape, with_notes=False)
        return tt.gpu_hours if kind == "training_gpu_hours" else tt.tokens_per_s / gpus
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
