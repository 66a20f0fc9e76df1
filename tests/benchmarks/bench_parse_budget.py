"""Print what the parse budget (knowledge/budget.py) costs and saves: not a test, figures only.

    .venv/bin/python tests/benchmarks/bench_parse_budget.py

1. The scan is linear where tomllib is not: a dotted key of n parts, doubled, takes the scan about twice as long and
   tomllib about four times (each part re-walks the parts before it).
2. The issue's repros, each in a fresh process (time and peak memory, VmHWM): a dotted key of 100,000 parts (200 KB), an
   answers file of a million empty tables (10 MB), a number of 5,000 digits; all refused before parsing.
3. Overlays: complete accelerators over four files, loaded (first: parsed; again: from the parse cache), per entry;
   and 50,000 accelerators over four files each under the 8 MiB cap, refused by the overlay set's budget.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from gpuadvisor.knowledge.budget import KNOWLEDGE, BudgetError, check_text

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = """[[accelerator]]
id = "x-{i}"
name = "X {i}"
vendor = "nvidia"
architecture = "a"
market = "datacenter"
form_factor = "f"
memory_type = "m"
memory_gb = {{ value = 24, sources = ["doc-002"] }}
memory_bandwidth_gbs = {{ value = 300, sources = ["doc-002"] }}
interconnect = "pcie"
interconnect_kind = "pcie"
ecc = true
bf16_support = true
fp8_support = false
fp4_support = false
flash_attention_2 = "yes"
software_stack = "cuda"
sources = ["doc-002"]
"""


def timed(fn: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t)
    return best


def refused(text: str) -> None:
    try:
        check_text(text, "x", KNOWLEDGE)
    except BudgetError:
        return
    raise AssertionError("not refused")


def linearity() -> None:
    print("1. a dotted key of n parts: the scan (which refuses it) against tomllib (which parses it)")
    for what, sizes, fn in (("scan", (25_000, 50_000, 100_000), refused),
                            ("tomllib", (2_000, 4_000, 8_000), tomllib.loads)):
        times = []
        for n in sizes:
            text = "a" + ".a" * (n - 1) + " = 1\n"
            times.append(timed(lambda t=text, f=fn: f(t), 3 if what == "scan" else 1))  # type: ignore[misc]
        shown = ", ".join(f"{n:,} parts {t * 1000:.1f} ms" for n, t in zip(sizes, times, strict=True))
        print(f"   {what:8} {shown}; x4 the parts: x{times[-1] / times[0]:.1f} the time")


REPRO = """
import sys, time
from pathlib import Path
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.rules.inputs.answers import load_answers
t = time.perf_counter()
try:
    load_answers(Path(sys.argv[1]))
    said = "read"
except AdvisorError as exc:
    said = str(exc).split(": ", 1)[1][:90]
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(f"{time.perf_counter() - t:.3f} {peak // 1024} {said}")
"""


def repros(folder: Path) -> None:
    print("2. the issue's repros as answers files, each in a fresh process")
    for name, text in (("a plain answers file", '[model]\nname = "gpt2"\n'),
                       ("dotted key, 100,000 parts", "a" + ".a" * 99_999 + " = 1\n"),
                       ("a million empty tables", "".join(f"[t{i}]\n" for i in range(1_000_000))),
                       ("an integer of 5,000 digits", "[inference]\nrequests_per_minute = " + "9" * 5000 + "\n")):
        path = folder / "a.toml"
        path.write_text(text, encoding="utf-8")
        out = subprocess.run([sys.executable, "-c", REPRO, str(path)], capture_output=True, text=True, check=True)
        seconds, mib, said = out.stdout.split(" ", 2)
        print(f"   {name:28} {len(text) / 1e6:5.1f} MB: {float(seconds):6.3f} s, peak {mib:>4} MiB: {said.strip()}")


LOAD = """
import sys, time
from pathlib import Path
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.loader import load_catalog
load_catalog(user_dir=None)
t = time.perf_counter()
try:
    n = len(load_catalog(user_dir=Path(sys.argv[1]), refreshed=None).accelerators)
except AdvisorError as exc:
    n = "refused: " + str(exc).split(": ", 1)[1][:80]
print(f"{time.perf_counter() - t:.3f} {n}")
"""


def overlays(folder: Path) -> None:
    print("3. overlay accelerators over four files (complete entries of ~440 bytes)")
    env = {**os.environ, "GPUADVISOR_CACHE_DIR": str(folder / "cache")}
    per_entry = []
    for n in (500, 5_000, 50_000):
        sub = folder / f"k{n}"
        sub.mkdir()
        for f in range(4):
            (sub / f"o{f}.toml").write_text("".join(MINIMAL.format(i=f"{f}-{i}") for i in range(n // 4)),
                                            encoding="utf-8")
        size = max(p.stat().st_size for p in sub.iterdir()) / 2**20
        runs = [subprocess.run([sys.executable, "-c", LOAD, str(sub)], capture_output=True, text=True, env=env,
                               check=True).stdout.split(" ", 1) for _ in range(2)]
        (first, what), (again, _) = runs
        if what.startswith("refused"):
            print(f"   {n:>6,} ({size:.1f} MiB a file): {float(first):6.2f} s, {what.strip()}")
            continue
        per_entry.append((n, float(first) / n, float(again) / n))
        print(f"   {n:>6,} ({size:.1f} MiB a file): first {float(first):6.2f} s ({float(first) / n * 1000:.2f} ms an "
              f"entry), again {float(again):6.2f} s ({float(again) / n * 1000:.2f} ms an entry, parse cached)")
    (n0, f0, a0), (n1, f1, a1) = per_entry[0], per_entry[-1]
    print(f"   per entry at {n1:,} / at {n0:,}: first x{f1 / f0:.2f}, again x{a1 / a0:.2f} (1.0 = linear)")


def main() -> None:
    linearity()
    with tempfile.TemporaryDirectory() as tmp:
        repros(Path(tmp))
        overlays(Path(tmp))


if __name__ == "__main__":
    main()
