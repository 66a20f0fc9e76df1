"""Calibration report: every published measurement of tests/data/calibration.toml against the sizing engine.

Prints, per row, the published figure, the estimate, the signed error and the band the estimate quotes; then the
median and p90 |error| per engine, per accelerator family and per measure (decode = batch-1 decode and static-batch
generation; training = GPU-hours and tokens/s/GPU). Targets (issue 11): decode median ≤ 10 %, p90 ≤ 25 %;
training median ≤ 15 %. Exits 1 when a target is missed. Excluded rows are printed, not counted.

usage: python tests/benchmarks/bench_calibration.py [--rows]   (--rows: the per-row table too)
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpuadvisor.knowledge.loader import load_catalog  # noqa: E402
from tests.calibration_model import ROWS, bounds, error, family, quantiles  # noqa: E402

TARGETS = {"decode": (0.10, 0.25), "training": (0.15, None)}


def main(argv: list[str]) -> int:
    catalog = load_catalog(user_dir=None)
    by: dict[str, dict[str, list[float]]] = {"engine": defaultdict(list), "family": defaultdict(list),
                                             "kind": defaultdict(list), "measure": defaultdict(list),
                                             "source": defaultdict(list)}
    lines = [f"{'row':<100} {'published':>10} {'estimate':>10} {'error':>7}  band"]
    for row in ROWS:
        central, low, high = bounds(row, catalog)
        err = error(central, row.measured, row.measures)
        mark = "  excluded" if row.get("excluded") else ""
        lines.append(f"{row.label[:100]:<100} {row.measured:>10.4g} {central:>10.4g} {err:>+7.1%}  "
                     f"[{low:.4g}, {high:.4g}]{mark}")
        if mark:
            continue
        kind = row.kind
        by["kind"][kind].append(err)
        by["measure"][row.measures].append(err)
        by["source"][f"{kind}: {row.source}"].append(err)
        if kind != "training":
            by["engine"][f"{kind}: {row.get('engine', 'n/a')}"].append(err)
            by["family"][f"{kind}: {family(catalog.accelerators[row.gpu])}"].append(err)
        else:
            by["family"][f"training: {family(catalog.accelerators[row.gpu])}"].append(err)
    if "--rows" in argv:
        print("\n".join(lines))
        print()
    failed = False
    for title, groups in by.items():
        print(f"|error| by {title}:")
        print(f"  {'group':<44} {'rows':>5} {'median':>8} {'p90':>8}")
        for name in sorted(groups):
            med, p90, n = quantiles(groups[name])
            print(f"  {name:<44} {n:>5} {med:>8.1%} {p90:>8.1%}")
        print()
    for kind, (med_target, p90_target) in TARGETS.items():
        med, p90, n = quantiles(by["kind"][kind])
        ok = med <= med_target and (p90_target is None or p90 <= p90_target)
        failed |= not ok
        target = f"median ≤ {med_target:.0%}" + (f", p90 ≤ {p90_target:.0%}" if p90_target else "")
        print(f"{kind}: {n} rows, median {med:.1%}, p90 {p90:.1%} (target {target}): {'met' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
