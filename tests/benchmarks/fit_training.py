"""Fit the training-MFU assumptions (training_mfu, training_fp8_mfu_ratio, training_attention_cost) to the training
rows of tests/data/calibration.toml, and print the band of training_mfu that covers every row.

Least squares on log(predicted / published) with `speed.scaled_mfu` and `speed.sync_slowdown`.
training_mfu_loss_per_doubling and training_comm_overlap are not fitted (no published run with a known cluster,
batch and network loses enough to the gradient synchronisation to identify the overlap: the report prints the
error for a few values of each). Copy the printed values
into knowledge/data/assumptions.toml and rules/sizing/factors.py (a test keeps the two equal).

usage: python tests/benchmarks/fit_training.py
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpuadvisor.knowledge.loader import load_catalog  # noqa: E402
from gpuadvisor.rules.estimate import catalog_factors  # noqa: E402
from gpuadvisor.rules.sizing.factors import Factors  # noqa: E402
from tests.benchmarks.fit_engines import nelder_mead  # noqa: E402
from tests.calibration_model import CHECKED, error, predict, quantiles  # noqa: E402


def main() -> int:
    catalog = load_catalog(user_dir=None)
    base = catalog_factors(catalog)
    rows = [r for r in CHECKED if r.kind == "training"]

    def factors(x: list[float]) -> Factors:
        return replace(base, training_mfu=math.exp(x[0]), training_fp8_mfu_ratio=math.exp(x[1]),
                       training_attention_cost=math.exp(x[2]))

    def errors(f: Factors) -> list[float]:
        return [error(predict(r, catalog, f), r.measured, r.measures) for r in rows]

    x = nelder_mead(lambda v: sum(math.log(1 + e) ** 2 for e in errors(factors(v))),
                    [math.log(base.training_mfu), math.log(base.training_fp8_mfu_ratio),
                     math.log(base.training_attention_cost)], steps=1500)
    best = factors(x)
    errs = errors(best)
    med, p90, n = quantiles(errs)
    print(f"training_mfu = {best.training_mfu:.4f}, training_fp8_mfu_ratio = {best.training_fp8_mfu_ratio:.4f}, "
          f"training_attention_cost = {best.training_attention_cost:.4f}, "
          f"training_comm_overlap = {best.training_comm_overlap:.4f}")
    print(f"{n} rows: median |error| {med:.1%}, p90 {p90:.1%}")
    print(f"band covering every row: low {best.training_mfu / (1 + max(errs)):.4f}, "
          f"high {best.training_mfu / (1 + min(errs)):.4f}")
    for overlap in (0.0, 0.25, 0.5, 1.0):
        m, p, _ = quantiles(errors(replace(best, training_comm_overlap=overlap)))
        print(f"  with training_comm_overlap = {overlap}: median {m:.1%}, p90 {p:.1%}")
    for loss in (0.0, 0.01, 0.02, 0.05):
        m, p, _ = quantiles(errors(replace(best, training_mfu_loss_per_doubling=loss)))
        print(f"  with training_mfu_loss_per_doubling = {loss}: median {m:.1%}, p90 {p:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
