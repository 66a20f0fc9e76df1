"""Derive `sustained_compute_ratio` (knowledge/data/accelerators.toml) from published MLPerf per-GPU ratios.

A power-limited card (H100 PCIe at 350 W, H100 NVL at 400 W, L40S at 350 W) cannot hold its datasheet tensor clock
through a long, full serving load; the full-power module of the same generation (H100/H200 SXM at 700 W, B200 at
1,000 W) can. In the same MLPerf round, with the same benchmark and engine, both run the same software, so the
ratio of their per-GPU throughputs is what the hardware alone does. The model already accounts for the datasheet
differences (peak, bandwidth, memory, links); what it misses is the sustained share s of the card's peak:

    s solves   predicted(card, s) / measured(card) = predicted(module) / measured(module)

for every (card row, module row) pair of one round, benchmark, scenario (Offline) and engine: the card is left with
the same relative error as its module, so s carries only what separates the card from the module. The value is the
median over the pairs; the pairs are printed, and the rows are the sources the TOML field names.

Rounds: the rounds the engine profiles are fitted on (MLPerf v5.0 / v5.1) where they have the card; otherwise the
held-out round (MLPerf v4.1), and then bench_serving.py reports the held-out error with and without those rows.

usage: python tests/benchmarks/derive_sustained.py
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpuadvisor.knowledge.loader import load_catalog  # noqa: E402
from tests.serving_calibration_model import ROWS, Row, predict  # noqa: E402

REFERENCE = {
    "nvidia-h100-pcie": ("nvidia-h100-sxm5",),
    "nvidia-h100-nvl": ("nvidia-h100-sxm5",),
    "nvidia-h200-nvl": ("nvidia-h200-sxm",),
    "nvidia-l40s": ("nvidia-h100-sxm5", "nvidia-h200-sxm"),
    "nvidia-rtx-pro-6000-blackwell-server": ("nvidia-b200",),
}
"""The RTX PRO 6000 pairs are printed but give the part no field: its two NVFP4 rows imply s ≈ 0.55 while its FP8
Mixtral row is matched at s = 1, so what separates it from the B200 is its FP4 rate, not its power limit."""
"""Card → the full-power modules its rows are paired with (same round, benchmark, scenario and engine)."""


def solve(row: Row, catalog: object, target: float) -> float:
    """The sustained share s in (0.05, 1] at which the card's prediction is `target` tokens/s (bisection; the
    prediction grows with s). 1 when even the datasheet rate does not reach the target."""
    lo, hi = 0.05, 1.0
    if predict(row, catalog, sustained=hi) <= target:  # type: ignore[arg-type]
        return 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if predict(row, catalog, sustained=mid) > target:  # type: ignore[arg-type]
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def key(r: Row) -> tuple[str, str, str, str]:
    return (r.raw["round"], r.raw["model"], r.scenario, r.raw["engine"])


Pair = tuple[float, Row, Row, float]


def pairs_for(card: str, catalog: object) -> list[Pair]:
    """(s, card row, module row, measured per-GPU ratio) for every pairing of `card` (see the module docstring)."""
    mlperf = [r for r in ROWS if r.raw["round"].startswith("mlperf") and r.scenario == "Offline"]
    modules: dict[tuple[str, str, str, str, str], list[Row]] = defaultdict(list)
    for r in mlperf:
        modules[(*key(r), r.gpu)].append(r)
    pairs = []
    for r in (r for r in mlperf if r.gpu == card):
        for ref_gpu in REFERENCE[card]:
            for m in modules.get((*key(r), ref_gpu), []):
                module_error = predict(m, catalog, sustained=1.0) / m.measured  # type: ignore[arg-type]
                s = solve(r, catalog, module_error * r.measured)
                pairs.append((s, r, m, r.measured / r.gpus / (m.measured / m.gpus)))
    return pairs


def main() -> int:
    catalog = load_catalog(user_dir=None)
    for card in REFERENCE:
        pairs = pairs_for(card, catalog)
        if not pairs:
            print(f"{card}: no paired rows")
            continue
        by_round: dict[str, list[float]] = defaultdict(list)
        for s, r, _, _ in pairs:
            by_round[r.raw["round"]].append(s)
        print(f"{card}: median s = {statistics.median(p[0] for p in pairs):.3f} over {len(pairs)} pairs; "
              + ", ".join(f"{k} {statistics.median(v):.3f} ({len(v)})" for k, v in sorted(by_round.items())))
        for s, r, m, per_card in pairs:
            print(f"  s = {s:.3f}  per-GPU ratio {per_card:.3f}  {r.label}  {r.measured:g} "
                  f"vs {m.gpu} ×{m.gpus} {m.measured:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
