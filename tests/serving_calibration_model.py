"""The sizing engine's `throughput_tokens_per_s` for every published large-batch row of
tests/data/serving_calibration.toml.

Shared by the benchmark (tests/benchmarks/bench_serving.py), the tests (tests/rules/test_serving_calibration.py)
and the engine-profile fitter (tests/benchmarks/fit_engines.py), so the three agree on what a row means: the
configuration's generated tokens/s at the batch the engine forms (the KV cache of the mean request filling the
memory the engine leaves for it, up to `MAX_BATCH`), every prompt processed (rules/sizing/serving_load.py).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.schema import Accelerator
from gpuadvisor.rules.estimate.consult import catalog_factors, embedding_bytes
from gpuadvisor.rules.planning.serving import engine_efficiency
from gpuadvisor.rules.planning.topology import device_for
from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.kvcache import kv_bytes_per_sequence, read_replication
from gpuadvisor.rules.sizing.memory import routed_expert_bytes, split_weight_format
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.rules.sizing.serving_load import LoadLatency, latency_at_concurrency, serving_rate
from gpuadvisor.rules.sizing.speed import DecodeCurve, EngineEfficiency, PrefillModel
from gpuadvisor.rules.sizing.units import GB
from tests.calibration_model import ARCHS

DATA = Path(__file__).resolve().parent / "data" / "serving_calibration.toml"
JUDGES = Path(__file__).resolve().parent / "data" / "judges"
"""External judges, never fitted: MLPerf Inference v6.0 and later (`mlperf_v*.toml`, rows of the same form as
serving_calibration.toml's) and NVIDIA NIM's published LLM benchmarking tables (`nim_latency.toml`). They live in their
own folder, apart from serving_calibration.toml, which is all the fitter reads (a test checks no judge row reaches
it), so that anyone can rerun the judgement."""
JUDGE_ROUNDS = ("mlperf-v6.0", "mlperf-v6.1", "nim")
"""Rounds that are external judges: a row of serving_calibration.toml may never carry one (a test checks)."""
HELD_OUT = ("mlperf-v5.0",)
"""The round the fit never sees: MLPerf v5.0 (April 2025), other submissions on the same datasets, in the same
software generation as the fitted rounds (MLPerf v5.1 and the TensorRT-LLM 1.0 perf overview, both mid-2025). It
carries H100, H200, B200, GB200 NVL72, GH200 and MI325X rows, Llama 2 70B and 405B, so it tests the hardware model
across vendors and memory kinds, which is what the planner sizes with."""
OLDER_SOFTWARE = ("mlperf-v4.1",)
"""Rounds neither fitted nor held to the target: MLPerf v4.1 (August 2024) ran software a year older, and the same
hardware runs up to 1.5× faster in the later rounds (H100 SXM ×16 Llama 2 70B: 41,672 tokens/s in v4.1, 62,352 in
v5.1; ×8: 24,217 in v4.1, 31,307 in v5.0; MI300X ×8 +18 %; H200 ×8 +9 %). The planner sizes what current software
does, so a model right for v5.x reads v4.1 as 20-40 % too fast: bench_serving.py prints those rows, their
same-configuration pairs, and the error with the newer round's software gain taken out. The sustained share of H100
PCIe and NVL comes from this round (no later round has them), which is why its rows are still read."""
OLDER_SOFTWARE_MODELS = {("mlperf-v5.1", "deepseek-r1")}
"""Rows of a fitted round whose model ran on an older software path than the round's others: MLPerf v5.1's
DeepSeek-R1 rows were TensorRT-LLM's first DeepSeek submission (the PyTorch backend with attention data-parallel and
wide expert parallelism, September 2025). The profile fitted without them (on the dense rows of the same release, the
perf overview's trtllm-bench 1.0) puts them 45-100 % slower than the same physics predicts, while the project's
2026 TensorRT-LLM DeepSeek-R1 runs (`inferencex`, TensorRT-LLM 1.3, fitted to nothing) come out 17-22 % faster than
it: the gap is the young MoE path of that release, not the hardware the planner sizes. Printed, neither fitted nor a
target (the same reasoning as `OLDER_SOFTWARE`)."""
REPORTED = ("sglang-published", "inferencex")
"""Rounds printed beside the others but neither fitted nor a target, published by third parties. `sglang-published`:
SGLang runs with finite prompt sets, 2024-2025 versions. SGLang has no profile of its own (it carries vLLM's,
engines.toml), so these rows test that carry-over: dense Llama rows within about 10 % median, DeepSeek-V3/R1 at TP8
at 256-2,400 prompts 1.7-10x slower than predicted. `inferencex`: DeepSeek-R1 on 2026 SGLang and TensorRT-LLM at a
fixed concurrency of 8-128, the dashboard's means as its maintainers quote them."""
TARGET_ROUND = HELD_OUT[0]
HELD_OUT_SUSTAINED_SOURCES = {"mlperf-v5.0": ("mlperf-inference-v5.0-llm-results",),
                              "mlperf-v4.1": ("mlperf-inference-v4.1-llm-results",)}
"""accelerators.toml sources that carry a round's rows: a part whose `sustained_compute_ratio` cites one was derived
from that round, so its rows there are not held out for it (none cites v5.0)."""
MAX_BATCH = 4096
"""Sequences per replica the engines schedule at most in these runs (MLPerf submitters raise max_num_seqs /
max_batch_size to what memory holds: up to 3,450 in AMD's v5.1 configs, 6,144 in NVIDIA's); a row's `max_batch`
(the prompts of a finite run) lowers it."""
KV_FRACTION = 0.95
"""Memory the engine gives its KV cache (TensorRT-LLM kv_cache_free_gpu_mem_fraction 0.95 in these runs)."""


def _load() -> dict[str, Any]:
    with DATA.open("rb") as fh:
        return tomllib.load(fh)


CAL = _load()


@dataclass(frozen=True)
class Row:
    raw: dict[str, Any]

    def get(self, name: str, default: Any = None) -> Any:
        return self.raw.get(name, default)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.raw[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def held_out(self) -> bool:
        return self.raw["round"] in HELD_OUT

    @property
    def older_software(self) -> bool:
        return self.raw["round"] in OLDER_SOFTWARE or (self.raw["round"], self.raw["model"]) in OLDER_SOFTWARE_MODELS

    @property
    def reported(self) -> bool:
        return self.raw["round"] in REPORTED

    @property
    def judge(self) -> bool:
        """An external judge's row (never fitted, never a calibration row)."""
        return str(self.raw["round"]).startswith(JUDGE_ROUNDS)

    @property
    def moe_profile_fit(self) -> bool:
        """A row SGLang's ROCm MoE profile is fitted to (`overhead_per_moe_layer_us`, fit_engines.py); it stays a
        reported row for everything else."""
        return bool(self.raw.get("moe_profile_fit"))

    @property
    def fitted(self) -> bool:
        """A row the engine profiles and dataset inputs are fitted on."""
        return not self.held_out and not self.older_software and not self.reported and not self.judge

    @property
    def scenario(self) -> str:
        return str(self.raw.get("scenario", "Offline"))

    def lengths(self, inputs: dict[str, float] | None = None) -> tuple[int, int]:
        """(mean input, mean output) tokens: the row's own, else its dataset's (`inputs` overrides the dataset's
        input, for the fitter)."""
        ds = CAL["dataset"].get(self.raw.get("dataset", ""), {})
        found = self.raw.get("input")
        if found is None:
            found = (inputs or {}).get(self.raw["dataset"], ds.get("input"))
        out = self.raw.get("output", ds.get("output"))
        return int(round(float(found))), max(1, int(round(float(out))))

    @property
    def label(self) -> str:
        i, o = self.lengths()
        scen = f" {self.scenario}" if self.get("scenario") else ""
        scen = (f" ep{self.raw['ep']}" if self.get("ep") else "") + scen
        scen = (f" at {self.raw['power_limit_w']} W" if self.get("power_limit_w") else "") + scen
        return (f"{self.raw['round']} [{self.raw['engine']}] {self.raw['model']} {self.raw['precision']} "
                f"{self.raw['gpu']} ×{self.raw['gpus']} {i}/{o}{scen}")


ROWS = [Row(r) for r in CAL["row"]]


def judge_rows() -> list[Row]:
    """The external judges' throughput rows (tests/data/judges/mlperf_v*.toml)."""
    rows: list[Row] = []
    for path in sorted(JUDGES.glob("mlperf_v*.toml")) if JUDGES.is_dir() else []:
        with path.open("rb") as fh:
            rows += [Row(r) for r in tomllib.load(fh).get("row", [])]
    return rows


def judge_latency_tables() -> list[dict[str, Any]]:
    """The external judges' latency-under-load tables (tests/data/judges/nim_latency.toml)."""
    path = JUDGES / "nim_latency.toml"
    if not path.is_file():
        return []
    with path.open("rb") as fh:
        return list(tomllib.load(fh).get("table", []))


def replica_tp(row: Row, acc: Accelerator, weight_bytes: float) -> int:
    """The row's tensor-parallel degree, else the smallest power of two whose share of the weights leaves at
    least a third of each GPU for the KV cache (what the submitters run: 70B FP8 on 80 GB parts is TP2)."""
    if row.get("tp"):
        return int(row.tp)
    tp = 1
    while weight_bytes / tp > acc.memory_gb.value * GB * 2 / 3 and tp < row.gpus:
        tp *= 2
    return tp


class Replica(NamedTuple):
    """One replica of a row's configuration as the model sees it, and how many the row runs."""

    curve: DecodeCurve
    prompt_flops: float
    batch: int
    input_tokens: int
    output_tokens: int
    replicas: int
    chunk_tokens: float


def predict(row: Row, catalog: Catalog, factors: Factors | None = None,
            efficiency: EngineEfficiency | None | str = "profile", inputs: dict[str, float] | None = None,
            sustained: float | None = None) -> float:
    """Whole-configuration generated tokens/s the engine would publish for the row (`sustained` overrides the
    part's sustained share of its peak, for tests/benchmarks/derive_sustained.py)."""
    r = replica(row, catalog, factors, efficiency, inputs, sustained)
    rate = serving_rate(r.curve, r.prompt_flops, batch=r.batch, input_tokens=r.input_tokens,
                        output_tokens=r.output_tokens, chunk_tokens=r.chunk_tokens)
    return r.replicas * rate.tokens_per_s


def load_latency(row: Row, catalog: Catalog, efficiency: EngineEfficiency | None | str = "profile") -> LoadLatency:
    """TTFT and TPOT of a row run at a fixed client concurrency (its `batch`): a closed loop with every slot busy,
    its clients started together as a benchmark's are (`efficiency` overrides the engine profile, for the fitter)."""
    r = replica(row, catalog, efficiency=efficiency)
    return latency_at_concurrency(r.curve, r.prompt_flops, concurrency=r.batch, slots=r.batch,
                                  input_tokens=r.input_tokens, output_tokens=r.output_tokens,
                                  chunk_tokens=r.chunk_tokens, clients_in_step=True)


def replica(row: Row, catalog: Catalog, factors: Factors | None = None,
            efficiency: EngineEfficiency | None | str = "profile", inputs: dict[str, float] | None = None,
            sustained: float | None = None) -> Replica:
    """The row's replica: its decode curve, one prompt's FLOPs and the batch it runs (the row's, else what memory
    holds up to `MAX_BATCH` or the row's prompts)."""
    factors = factors or catalog_factors(catalog)
    acc = catalog.accelerators[row.gpu]
    if row.get("power_limit_w") and sustained is None:  # an MLPerf MaxQ run: the part at its published limit
        acc = acc.at_power_limit(int(row.power_limit_w))
    prec = catalog.precisions[row.precision]
    kv = catalog.precisions[row.get("kv_precision", "fp16")]
    arch = ARCHS[row.model]
    params = count_parameters(arch)
    eff = engine_efficiency(catalog, acc, row.engine) if efficiency == "profile" else efficiency
    assert not isinstance(eff, str)
    w_bytes, experts = split_weight_format(arch, prec)
    emb = embedding_bytes(prec)
    weight_total = params.total * w_bytes
    tp = replica_tp(row, acc, weight_total)
    ep = int(row.get("ep") or 1)
    ranks = max(tp, ep)
    replicas = max(1, row.gpus // ranks)
    if ep > 1:  # the non-expert weights are replicated in each of the ep ÷ tp attention groups
        routed = routed_expert_bytes(params, arch, w_bytes, experts)
        weight_total = routed + (weight_total - routed) * ep / tp
    i, o = row.lengths(inputs)
    device = device_for(acc, prec.compute, efficiency=eff)
    if sustained is not None:
        device = dataclasses.replace(device, sustained=sustained)
    curve = DecodeCurve(arch, params, device, bytes_per_weight=w_bytes, kv_bytes_per_value=kv.bytes_per_weight,
                        context=i + o // 2, tp=tp, embedding_bytes=emb, factors=factors, experts=experts, ep=ep)
    flops = PrefillModel(arch, params, bytes_per_weight=w_bytes, prompt_tokens=max(1, i), factors=factors,
                         experts=experts).flops
    free = ranks * acc.memory_gb.value * GB * KV_FRACTION - weight_total
    # a replicated cache (an MLA latent on every rank of a tensor-parallel group) fills each rank as a whole one would
    per_seq = kv_bytes_per_sequence(arch, kv.bytes_per_weight, i + o // 2) * read_replication(arch, tp)
    batch = int(row.get("batch") or max(1, min(int(row.get("max_batch") or MAX_BATCH), math.floor(free / per_seq))))
    return Replica(curve, flops, batch, i, o, replicas, factors.prefill_chunk_tokens)


def error(predicted: float, measured: float) -> float:
    """Signed relative error (positive: the estimate is too fast)."""
    return predicted / measured - 1.0
