"""Fit the training-step constants to the training rows of tests/data/calibration.toml and report in-sample,
leave-one-family-out and leave-one-source-out errors.

Fitted (least squares on log(predicted / published), Nelder-Mead), each with a physical meaning
(rules/sizing/training.py):
  training_stack_efficiency      share of the part's achievable matmul rate a CUDA/ROCm stack's GEMMs reach
  training_attention_cost        cost of a causal attention FLOP relative to a GEMM FLOP
  training_elementwise_bytes     elementwise traffic per token per layer per hidden unit (bytes)
  training_comm_overlap          share of the compute beside a collective that hides it
  training_xla_stack_efficiency  the stack share on TPUs (MaxText), fitted on the TPU rows alone
  training_rocm_stack_efficiency the stack share on AMD Instinct (ROCm), fitted on AMD's MI355X/B200 ratios
  training_synapseai_stack_efficiency  the stack share on Intel Gaudi (SynapseAI), on Intel's and Optimum Habana's rows
Each non-CUDA stack's share is fitted on its own rows with the CUDA constants held; a stack with no rows (held out)
takes the CUDA share.
Held out: each accelerator family (its rows predicted with the constants fitted on the others), and each source.
Copy the printed values into knowledge/data/assumptions.toml and rules/sizing/factors.py (a test keeps the two
equal). MLPerf Training v5.0 and later are the external judge: they are not in the file and never fitted.

usage: python tests/benchmarks/fit_training.py [--quick]   (--quick: in-sample only)
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpuadvisor.knowledge.catalog import Catalog  # noqa: E402
from gpuadvisor.knowledge.loader import load_catalog  # noqa: E402
from gpuadvisor.rules.estimate.consult import catalog_factors  # noqa: E402
from gpuadvisor.rules.planning.training_plan import STACK_SHARES  # noqa: E402
from gpuadvisor.rules.sizing.factors import Factors  # noqa: E402
from tests.benchmarks.fit_engines import nelder_mead  # noqa: E402
from tests.calibration_model import CHECKED, Row, error, family, predict, quantiles  # noqa: E402

FITTED = ("training_stack_efficiency", "training_attention_cost", "training_elementwise_bytes",
          "training_comm_overlap")


def training_rows() -> list[Row]:
    return [r for r in CHECKED if r.kind == "training"]


def stack(row: Row, catalog: Catalog) -> str:
    """The software stack whose share the row calibrates ("cuda" for every stack without a share of its own)."""
    name = catalog.accelerators[row.gpu].software_stack
    return name if name in STACK_SHARES else "cuda"


def fit(rows: Sequence[Row], catalog: Catalog, base: Factors, names: Sequence[str] = FITTED,
        steps: int = 600) -> Factors:
    """Factors with `names` fitted to `rows` (log-parameterised, so each stays positive)."""
    if not rows:
        return base

    def factors(x: Sequence[float]) -> Factors:
        values = {n: math.exp(v) for n, v in zip(names, x, strict=True)}
        if "training_comm_overlap" in values:
            values["training_comm_overlap"] = min(1.0, values["training_comm_overlap"])
        return replace(base, **values)

    def loss(x: Sequence[float]) -> float:
        f = factors(x)
        return sum(math.log(1 + error(predict(r, catalog, f), r.measured, r.measures)) ** 2 for r in rows)

    x = nelder_mead(loss, [math.log(getattr(base, n)) for n in names], steps=steps)
    return factors(x)


def fit_all(rows: Sequence[Row], catalog: Catalog, base: Factors, steps: int = 600) -> Factors:
    """The constants on the CUDA rows, then each other stack's share on its own rows with them held (the CUDA share
    where a stack has no rows)."""
    f = fit([r for r in rows if stack(r, catalog) == "cuda"], catalog, base, steps=steps)
    for name, share in STACK_SHARES.items():
        own = [r for r in rows if stack(r, catalog) == name]
        f = fit(own, catalog, f, (share,), steps=80) if own else replace(f, **{share: f.training_stack_efficiency})
    return f


def errors(rows: Sequence[Row], catalog: Catalog, f: Factors) -> list[float]:
    return [error(predict(r, catalog, f), r.measured, r.measures) for r in rows]


def held_out(rows: Sequence[Row], catalog: Catalog, base: Factors, key: Callable[[Row], str], steps: int
             ) -> dict[str, list[float]]:
    """Errors of each group's rows predicted with the constants fitted on the other groups."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    out: dict[str, list[float]] = {}
    for name, members in sorted(groups.items()):
        others = [r for r in rows if key(r) != name]
        out[name] = errors(members, catalog, fit_all(others, catalog, base, steps))
    return out


def report(title: str, groups: dict[str, list[float]]) -> None:
    print(title)
    every: list[float] = []
    for name, errs in groups.items():
        med, p90, n = quantiles(errs)
        every += errs
        print(f"  {name:<40} {n:>4} rows  median {med:6.1%}  p90 {p90:6.1%}")
    med, p90, n = quantiles(every)
    print(f"  {'all':<40} {n:>4} rows  median {med:6.1%}  p90 {p90:6.1%}")


def main(argv: list[str]) -> int:
    catalog = load_catalog(user_dir=None)
    base = catalog_factors(catalog)
    rows = training_rows()
    best = fit_all(rows, catalog, base)
    print("fitted: " + ", ".join(f"{n} = {getattr(best, n):.4g}" for n in (*FITTED, *STACK_SHARES.values())))
    by_source: dict[str, list[float]] = defaultdict(list)
    for r, e in zip(rows, errors(rows, catalog, best), strict=True):
        by_source[r.source].append(e)
    report("in-sample, by source:", dict(sorted(by_source.items())))
    by_stack: dict[str, list[float]] = defaultdict(list)
    for r, e in zip(rows, errors(rows, catalog, best), strict=True):
        by_stack[stack(r, catalog)].append(e)
    report("in-sample, by software stack:", dict(sorted(by_stack.items())))
    if "--quick" in argv:
        return 0
    report("leave one accelerator family out (fitted without it):",
           held_out(rows, catalog, base, lambda r: family(catalog.accelerators[r.gpu]), 250))
    report("leave one source out (fitted without it):", held_out(rows, catalog, base, lambda r: r.source, 250))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
