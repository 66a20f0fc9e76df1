"""Time and peak memory of `gpuadvisor kb refresh --from` on a large catalog (issue 31): a gpuhunt `runpod.csv` of
N rows (default 1,000,000, about 75 MB: under the 256 MiB size cap), built from the sample catalog's rows with varied
regions and prices, read by a fresh `gpuadvisor` process with its own data directory.

Prints the file's size, the wall time, the child's peak resident memory (getrusage ru_maxrss) and the summary's
first lines. Before issue 31 this case took 184 s and 967 MB (every row's GPU name matched again); the names are
now matched once per distinct name. Exits 1 if the refresh does not exit 0.

usage: python tests/benchmarks/bench_refresh_rows.py [ROWS]
"""

from __future__ import annotations

import csv
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "gpuhunt" / "runpod.csv"


def build(path: Path, rows: int) -> None:
    """`rows` data rows: the sample's GPU rows in turn, each in one of 400 regions at a price that varies by cents."""
    reader = csv.DictReader(io.StringIO(SAMPLE.read_text(encoding="utf-8")))
    header = reader.fieldnames or []
    sample = [r for r in reader if r["gpu_count"] != "0"]
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        for i in range(rows):
            row = dict(sample[i % len(sample)])
            row["location"] = f"REGION-{i % 400}"
            row["price"] = f"{float(row['price']) + (i % 97) / 100:.2f}"
            writer.writerow(row)


def main() -> int:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-bench-refresh-") as tmp:
        folder = Path(tmp) / "catalogs"
        folder.mkdir()
        catalog = folder / "runpod.csv"
        build(catalog, rows)
        (folder / "version").write_text("20261120-7\n", encoding="utf-8")
        env = {**os.environ, "GPUADVISOR_DATA_DIR": str(Path(tmp) / "data"),
               "GPUADVISOR_CONFIG_DIR": str(Path(tmp) / "config"), "GPUADVISOR_CACHE_DIR": str(Path(tmp) / "cache")}
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "gpuadvisor.tui", "kb", "refresh", "--from", str(folder)],
                              capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - started
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"catalog: {rows:,} rows, {catalog.stat().st_size / 1e6:,.1f} MB")
        print(f"kb refresh --from: exit {done.returncode}, {seconds:,.1f} s, peak memory "
              f"{peak_kib / 1024:,.0f} MiB" + (" (an earlier child's peak)" if peak_kib == before and before else ""))
        for line in (done.stdout or done.stderr).splitlines()[:3]:
            print("  " + line)
        return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
