"""Wall time of a whole `gpuadvisor` process refusing a file it must not read, against a bare `python -c pass`.

The target is well under 1 s per process: a FIFO, /dev/zero and a 200 MB (sparse) answers file are refused from their
stat, before anything is opened or read. Each command runs under a 10 s timeout so a regression shows as a failure,
not a hang. Prints the median of N runs of each; exits 1 if a run does not exit 2 with the expected reason.

usage: python tests/benchmarks/bench_refuse_files.py [RUNS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(argv: list[str], runs: int, expect: str) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=10)
        except subprocess.TimeoutExpired:
            sys.exit(f"hung (killed after 10 s): {' '.join(argv)}")
        times.append(time.perf_counter() - start)
        if done.returncode != 0 and (done.returncode != 2 or expect not in done.stderr):
            sys.exit(f"unexpected ({done.returncode}): {' '.join(argv)}\n{done.stderr}")
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        fifo, big = Path(tmp, "fifo.toml"), Path(tmp, "big.toml")
        os.mkfifo(fifo)
        with big.open("wb") as fh:
            fh.truncate(200 * 1000 * 1000)
        gpuadvisor = [sys.executable, "-m", "gpuadvisor.tui"]
        cases = {
            "python -c pass": ([sys.executable, "-c", "pass"], ""),
            "recommend --answers FIFO": ([*gpuadvisor, "recommend", "--answers", str(fifo)], "named pipe"),
            "recommend --answers /dev/zero": ([*gpuadvisor, "recommend", "--answers", "/dev/zero"], "character device"),
            "recommend --answers 200 MB": ([*gpuadvisor, "recommend", "--answers", str(big)], "over the"),
            "report --from FIFO": ([*gpuadvisor, "report", "--from", str(fifo)], "named pipe"),
            "estimate --model-config 200 MB": ([*gpuadvisor, "estimate", "--gpu", "4090", "--model-config", str(big)],
                                               "over the"),
        }
        for name, (argv, expect) in cases.items():
            print(f"{name:34s} {_time(argv, runs, expect) * 1000:7.0f} ms (median of {runs})")


if __name__ == "__main__":
    main()
