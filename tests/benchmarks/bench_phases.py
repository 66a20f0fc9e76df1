"""Where `gpuadvisor recommend --model llama-3.1-70b --format json` spends its time, phase by phase.

Each run is a fresh process (imports are most of the cost, and only a fresh process pays them), with the cycle
collector off as the command runs it; the median of `--runs` per phase is printed, with the total and the share of
the 0.5 s target. See docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import gc, json, time
gc.disable()
marks = [("start", time.perf_counter())]
def mark(name): marks.append((name, time.perf_counter()))
import pydantic; mark("import pydantic")
from gpuadvisor.rules.inputs import answers; mark("import the answers model")
from gpuadvisor.rules.consult import consult, get_advisor; mark("import the consultation")
from gpuadvisor.tui.report import jsonfmt; mark("import the report writers")
from gpuadvisor.knowledge.loader import load_catalog
catalog = load_catalog(); mark("load the catalog")
a = answers.parse_answers({"workload": "inference", "model": {"name": "llama-3.1-70b"}}); mark("validate the answers")
get_advisor(catalog); mark("compile the rule packs")
result = consult(a, catalog); mark("the consultation")
jsonfmt.to_json(result); mark("write JSON")
print(json.dumps({b[0]: (b[1] - a[1]) * 1000 for a, b in zip(marks, marks[1:])}))
'''


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", CHILD], capture_output=True, check=True, env=env)  # bytecode, parse cache
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD], capture_output=True, check=True, env=env,
                                      text=True).stdout) for _ in range(args.runs)]
    total = 0.0
    for phase in runs[0]:
        ms = statistics.median(r[phase] for r in runs)
        total += ms
        print(f"{phase:28s} {ms:7.1f} ms")
    print(f"{'total (after start-up)':28s} {total:7.1f} ms ({total / 500:.2f} of the 0.5 s target)")


if __name__ == "__main__":
    main()
