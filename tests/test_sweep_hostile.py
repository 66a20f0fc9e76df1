"""Run the hostile-input sweep (tests/sweep_hostile.py) as part of the test command: every case handled, none hung
(a case past 60 s is killed; below that the times are figures, printed), the tally printed (pytest -s shows it; a
failure shows it in the assertion)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SWEEP = Path(__file__).resolve().parent / "sweep_hostile.py"
KINDS = ("unbounded work", "tracebacks", "the TUI", "control bytes", "unclear messages", "the served app", "refresh",
         "Hub ids", "lifecycle files", "signals")


def test_the_hostile_sweep_handles_every_case() -> None:
    done = subprocess.run([sys.executable, str(SWEEP)], capture_output=True, text=True, timeout=1800, check=False)
    print(done.stdout)
    tally = re.search(r"^sweep: (\d+) cases in (\d+) kinds \((.*)\); (\d+) handled, (\d+) failed$", done.stdout,
                      flags=re.M)
    assert tally is not None, done.stdout[-2000:] + done.stderr[-2000:]
    cases, kinds, listing, handled, failed = tally.groups()
    assert failed == "0" and handled == cases, done.stdout
    assert re.search(r"^times: [\d.]+ s in all, median [\d.]+ s, slowest [\d.]+ s", done.stdout, flags=re.M)
    assert int(cases) >= 50 and kinds == str(len(KINDS)) and all(k in listing for k in KINDS)
    assert done.returncode == 0 and done.stderr == ""
