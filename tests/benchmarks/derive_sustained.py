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

Rounds: the fitted round (MLPerf v5.1) where it has the card; otherwise the older-software round (MLPerf v4.1),
whose module rows ran the same older software as the card's.

A share at one precision (`sustained_compute_ratio_by_precision`): where a card holds its rate at one precision but
not at a denser one, the reference is the card itself. s at the dense precision solves

    predicted(card row at P, s) / measured = median over the card's rows at the reference precision R of
                                             predicted / measured   (same round and engine, s = the general share)

so what is left is what separates P from R on one board, one round and one engine (PRECISION_REFERENCE).

A share at a power limit (`power_limits`, MLPerf MaxQ): the capped system against itself at full power, same
round and software. s solves

    predicted(capped row, s) / measured(capped) = predicted(same row at full power) / measured(full power)

(POWER_LIMITS).

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
    "amd-mi300x": ("amd-mi325x",),
}
"""Card → the full-power modules its rows are paired with (same round, benchmark, scenario and engine). The RTX PRO
6000 pairs are printed but give the part no general share: its FP8 Mixtral row is matched at s = 1, and only its
NVFP4 rows fall short, so the field it gets is per precision (PRECISION_REFERENCE). The MI300X is the MI325X's die
(CDNA 3, 304 CUs, the same 2.1 GHz peak) at 750 W against 1,000 W: the full-power module is the MI325X."""
PRECISION_REFERENCE = {
    ("nvidia-rtx-pro-6000-blackwell-server", "nvfp4"): "fp8",
}
"""(card, precision whose share is derived) → the card's own reference precision."""


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


def precision_shares(card: str, precision: str, catalog: object) -> list[tuple[float, Row, float]]:
    """(s, card row at `precision`, the relative error it is matched to) per Offline MLPerf row of `card` at
    `precision`, the reference being the median relative error of the card's rows at PRECISION_REFERENCE
    (same round and engine)."""
    reference = PRECISION_REFERENCE[(card, precision)]
    mlperf = [r for r in ROWS if r.raw["round"].startswith("mlperf") and r.scenario == "Offline" and r.gpu == card]
    out = []
    for r in (r for r in mlperf if r.precision == precision):
        refs = [predict(m, catalog) / m.measured for m in mlperf  # type: ignore[arg-type]
                if m.precision == reference and m.raw["round"] == r.raw["round"] and m.engine == r.engine]
        if refs:
            target = statistics.median(refs)
            out.append((solve(r, catalog, target * r.measured), r, target))
    return out


def power_limit_shares(card: str, watts: int, catalog: object) -> list[tuple[float, Row]]:
    """(s, capped row) per Offline MLPerf row of `card` run at a `watts` power limit (MaxQ): s leaves the capped
    row with the relative error of the same system at full power (`reference_measured`, same round and software)."""
    out = []
    for r in ROWS:
        if r.gpu == card and r.scenario == "Offline" and r.get("power_limit_w") == watts:
            full = predict(r, catalog, sustained=catalog.accelerators[card].sustained_share(  # type: ignore[attr-defined]
                catalog.precisions[r.precision].compute))  # type: ignore[attr-defined]
            out.append((solve(r, catalog, full / float(r.reference_measured) * r.measured), r))
    return out


POWER_LIMITS = {("nvidia-h200-sxm", 500)}
"""(card, watts) pairs with published capped rows (MLPerf v4.1 H200 MaxQ; none in v5.0 or v5.1)."""


def main() -> int:
    catalog = load_catalog(user_dir=None)
    for card, watts in sorted(POWER_LIMITS):
        shares = power_limit_shares(card, watts, catalog)
        print(f"{card} at a {watts} W power limit: median s = {statistics.median(s for s, _ in shares):.3f} over "
              f"{len(shares)} rows")
        for s, r in shares:
            print(f"  s = {s:.3f}  {r.label}  {r.measured:g} against {float(r.reference_measured):g} at full power "
                  f"(ratio {r.measured / float(r.reference_measured):.3f})")
    for (card, precision), reference in PRECISION_REFERENCE.items():
        shares = precision_shares(card, precision, catalog)
        if not shares:
            print(f"{card} at {precision}: no rows with a {reference} reference")
            continue
        print(f"{card} at {precision} (reference: its own {reference} rows): median s = "
              f"{statistics.median(p[0] for p in shares):.3f} over {len(shares)} rows")
        for share, r, target in shares:
            print(f"  s = {share:.3f}  {r.label}  {r.measured:g}, matched to the {reference} rows' "
                  f"predicted/measured {target:.3f}")
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
