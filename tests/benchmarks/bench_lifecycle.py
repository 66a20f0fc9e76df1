"""Time and peak memory of whole lifecycle consultations (issue 31): files of 2, 6 and 12 phases (a training run,
then serving and monthly fine-tunes of its model) and the refusal of 13 and 1,000, each a fresh `gpuadvisor
recommend --answers` process with its own directories.

Before issue 31 every rent/buy combination was costed: 16 phases took 48 s and 1.9 GB, 24 did not finish in 30 s,
1,000 were neither planned nor refused. Now a lifecycle holds at most 12 phases and the fleet is found by dynamic
programming over them (rules/lifecycle/fleet_search.py); most of the time left is the phases' own consultations.

usage: python tests/benchmarks/bench_lifecycle.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def lifecycle(phases: int) -> str:
    lines = ['stage = "prototyping"', "[budget]", "capex_usd = 2_000_000", "[lifecycle]", "horizon_months = 36"]
    for i in range(phases):
        lines.append("[[phase]]")
        if i == 0:
            lines += ['name = "pretrain"', 'workload = "training"', "model = { params_b = 1 }",
                      "training = { tokens_b = 20 }"]
        elif i % 2:
            lines += [f'name = "serve-{i}"', 'workload = "inference"', 'model = "phase:1"', f"start_month = {i}",
                      "months = 3", f"inference = {{ requests_per_minute = {30 * i} }}"]
        else:
            lines += [f'name = "tune-{i}"', 'workload = "finetune"', 'model = "phase:1"',
                      'finetune = { method = "lora" }', "training = { tokens_b = 0.05 }", f"start_month = {i}",
                      "months = 2", "runs_per_month = 1"]
    return "\n".join(lines) + "\n"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-bench-lifecycle-") as tmp:
        env = {**os.environ, "GPUADVISOR_DATA_DIR": f"{tmp}/data", "GPUADVISOR_CONFIG_DIR": f"{tmp}/config",
               "GPUADVISOR_CACHE_DIR": f"{tmp}/cache", "GPUADVISOR_TODAY": "2026-11-25"}
        bad = 0
        for phases in (2, 6, 12, 13, 1000):
            path = Path(tmp) / f"lifecycle-{phases}.toml"
            path.write_text(lifecycle(phases), encoding="utf-8")
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "gpuadvisor.tui", "recommend", "--answers", str(path),
                                   "--format", "json"], capture_output=True, text=True, env=env, check=False,
                                  timeout=600)
            seconds = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            expected = (0, 3) if phases <= 12 else (2,)
            ok = done.returncode in expected
            bad += not ok
            what = done.stderr.strip()[:110] if done.returncode == 2 else f"{len(done.stdout):,} bytes of JSON"
            print(f"{phases:5,} phases: exit {done.returncode}{'' if ok else ' (unexpected)'}, {seconds:5.1f} s, "
                  f"peak memory so far {peak:,.0f} MiB; {what}")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
