"""Consultation speed: in-process median on the shipped knowledge base and on one ten times larger, and the whole
`gpuadvisor recommend --format json` process. Prints figures against the targets (50 ms, 300 ms, 0.5 s); not a test.
The ten-times knowledge base adds nine variants of every accelerator and instance with memory, bandwidth, TFLOPS
and prices scaled per copy, so every copy is sized and priced on its own (nothing can be deduplicated).

    python tests/benchmarks/bench_consult.py [--runs 15] [--process-only]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import replace

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import Accelerator, Instance, Measure
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers

CASES = {
    "inference 70B": {"workload": "inference", "model": {"name": "llama-3.1-70b"},
                      "inference": {"requests_per_minute": 1000, "concurrent_requests": 32}},
    "training 8B": {"workload": "training", "model": {"name": "llama-3.1-8b"}},
    "qlora 8B": {"workload": "finetune", "model": {"name": "llama-3.1-8b"}, "finetune": {"method": "qlora"}},
}


def _scaled(m: Measure | None, factor: float) -> Measure | None:
    return None if m is None else m.model_copy(update={"value": m.value * factor})


def _copy_accelerator(a: Accelerator, k: int) -> Accelerator:
    """Copy k of an accelerator with memory, bandwidth, every TFLOPS figure and the price moved by deterministic,
    copy-specific factors, so no copy is result-identical to another (nothing can be deduplicated)."""
    mem, bw, tf, price = 1 + 0.037 * k, 1 - 0.029 * k, 1 + 0.021 * k * (-1) ** k, 1 + 0.043 * k * (-1) ** (k + 1)
    update: dict[str, object] = {
        "id": f"{a.id}-x{k}", "name": f"{a.name} (copy {k})",
        "memory_gb": _scaled(a.memory_gb, mem), "memory_bandwidth_gbs": _scaled(a.memory_bandwidth_gbs, bw),
    }
    for name in ("fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops", "int8_tops"):
        update[name] = _scaled(getattr(a, name), tf)
    if a.purchase_price_usd is not None:
        update["purchase_price_usd"] = a.purchase_price_usd.model_copy(
            update={"value": a.purchase_price_usd.value * price})
    return a.model_copy(update=update)


def _copy_instance(i: Instance, k: int) -> Instance:
    rent = 1 + 0.031 * k * (-1) ** k
    prices = [p.model_copy(update={"usd_per_hour": p.usd_per_hour * rent, "usd_per_accelerator_hour":
                                   None if p.usd_per_accelerator_hour is None else p.usd_per_accelerator_hour * rent})
              for p in i.price]
    return i.model_copy(update={"id": f"{i.id}-x{k}", "accelerator": f"{i.accelerator}-x{k}", "price": prices})


def tenfold(catalog: Catalog) -> Catalog:
    """The shipped catalog with nine synthetic variants of every accelerator and instance (ids suffixed -x1 … -x9):
    memory, bandwidth, TFLOPS and prices scaled per copy, so every copy is sized and priced on its own."""
    accs = dict(catalog.accelerators)
    insts = dict(catalog.instances)
    for k in range(1, 10):
        for a in catalog.accelerators.values():
            accs[f"{a.id}-x{k}"] = _copy_accelerator(a, k)
        for i in catalog.instances.values():
            insts[f"{i.id}-x{k}"] = _copy_instance(i, k)
    return replace(catalog, accelerators=accs, instances=insts, version=catalog.version + "+x10")


WARM_UP = 3
"""Consultations run before timing: the first few in a process are slower (the interpreter specializes hot code
as it runs, caches fill)."""


def median_ms(advisor: Advisor, answers: dict[str, object], runs: int) -> tuple[float, float]:
    """Median wall-clock and CPU milliseconds of `advisor.consult` after `WARM_UP` consultations.

    CPU time (this process only) is the steadier figure on a machine shared with other jobs."""
    a = parse_answers(answers)
    for _ in range(WARM_UP):
        advisor.consult(a)
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        advisor.consult(a)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--process-only", action="store_true", help="only the start-up figures (fresh processes)")
    args = parser.parse_args()
    if not args.process_only:
        in_process(args.runs)
    process()


def in_process(runs: int) -> None:
    """The in-process consultation medians, on the shipped and the tenfold knowledge base."""
    shipped = load_catalog(user_dir=None)
    big = tenfold(shipped)
    small_adv = Advisor(shipped, include_user_packs=False)
    big_adv = Advisor(big, include_user_packs=False)
    print(f"knowledge base: {len(shipped.accelerators)} accelerators / {len(shipped.instances)} instances; "
          f"10x: {len(big.accelerators)} / {len(big.instances)}")
    for name, answers in CASES.items():
        small, small_cpu = median_ms(small_adv, answers, runs)
        large, large_cpu = median_ms(big_adv, answers, max(5, runs // 3))
        print(f"{name:15s} shipped {small:7.1f} ms (target 50, ratio {small / 50:.2f}; CPU {small_cpu:.1f} ms)   "
              f"10x {large:7.1f} ms (target 300, ratio {large / 300:.2f}; CPU {large_cpu:.1f} ms)")


def process() -> None:
    """`recommend` as a user runs it: whole fresh processes against bare Python and the engines' bare import."""
    # A user's install has bytecode (pip compiles it, or the first run writes it); PYTHONDONTWRITEBYTECODE=1 (set
    # in some sandboxes and CI images) would time compiling ~90 modules from source on every run instead.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "gpuadvisor.tui", "recommend", "--model", "llama-3.1-70b", "--format", "json"]
    subprocess.run(cmd, capture_output=True, check=False, env=env)  # warm the parse cache and the bytecode
    walls, cpus = _process_times(cmd, env)
    bare_walls, bare_cpus = _process_times([sys.executable, "-c", "pass"], env)
    w, c = statistics.median(walls), statistics.median(cpus)
    print(f"gpuadvisor recommend --format json: {w * 1000:.0f} ms wall, {c * 1000:.0f} ms CPU per process "
          f"(target 500: ratio {w / 0.5:.2f} wall, {c / 0.5:.2f} CPU); "
          f"bare python {statistics.median(bare_walls) * 1000:.0f}"
          f" ms wall, {statistics.median(bare_cpus) * 1000:.0f} ms CPU")
    # issue 40's second target: the process within 4x a bare import of its two engines (what no code of ours adds)
    engine_walls, engine_cpus = _process_times(
        [sys.executable, "-c", "import pydantic, durable.engine, durable_rules_engine"], env)
    ew, ec = statistics.median(engine_walls), statistics.median(engine_cpus)
    print(f"bare import of pydantic + durable-rules: {ew * 1000:.0f} ms wall, {ec * 1000:.0f} ms CPU; recommend is "
          f"{w / ew:.1f}x wall, {c / ec:.1f}x CPU (target 4x)")
    phases(cmd[cmd.index("recommend") + 1:], env)


PHASES = """
import gc, time
gc.disable()  # as tui.cli does for a one-shot command
T = time.process_time
t0 = T()
import pydantic, durable.engine, durable_rules_engine
t1 = T()
from gpuadvisor.tui.cli import build_parser
args = build_parser(only="recommend").parse_args(["recommend", *ARGV])
import gpuadvisor.knowledge.loader, gpuadvisor.rules.consult
from gpuadvisor.tui.commands import recommend
t2 = T()
catalog = gpuadvisor.knowledge.loader.load_catalog()
t3 = T()
advisor = gpuadvisor.rules.consult.get_advisor(catalog)
t4 = T()
result = advisor.consult(recommend.answers_from(args), top=args.top)
t5 = T()
from gpuadvisor.tui.report import render
render(result, "json", contents=recommend.Contents.of(args), columns=None)
t6 = T()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)
"""
"""One `recommend` run in a fresh interpreter, phase by phase (CPU seconds): where start-up goes."""
PHASE_NAMES = ("engines' import", "our imports + parser", "catalog", "rule packs + engine", "consultation",
               "json report")


def phases(argv: list[str], env: dict[str, str], runs: int = 7) -> None:
    """Print the median CPU milliseconds of each phase of `recommend` (fresh processes, bytecode cached)."""
    code = PHASES.replace("ARGV", repr(argv))
    rows = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env, text=True)
        rows.append([float(x) for x in done.stdout.split()])
    medians = [statistics.median(col) * 1000 for col in zip(*rows, strict=True)]
    print(f"recommend by phase, CPU ms (median of {runs} fresh processes): " +
          " · ".join(f"{name} {ms:.0f}" for name, ms in zip(PHASE_NAMES, medians, strict=True)))


def _process_times(cmd: list[str], env: dict[str, str], runs: int = 7) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system of the child) seconds per run: on a shared machine the CPU figure is the steadier."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False, env=env)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus

if __name__ == "__main__":
    main()
