"""Held-out error of the profiles fitted to rows of one family only (`own_family_only` rows of calibration.toml):
Blackwell GDDR cards under llama.cpp (RTX 5090, RTX 5060 Ti) and the DGX Spark under llama.cpp and vLLM/SGLang.

For each fold the fitter of engines.toml (tests/benchmarks/fit_engines.py) is run without the held-out rows and the
held-out rows are predicted with the profile their part would then get (its family's, or a pooled fallback when no
row of its family is left). Folds: leave one card out (the Blackwell GDDR cards), leave one source out (the Spark's
vLLM and SGLang rows), leave one row out (the Spark's three llama.cpp rows: two left cannot pin a per-layer cost,
fit_engines.OWN_OVERHEAD_MIN_ROWS). Prints in-sample and held-out signed errors and their medians.

usage: python tests/benchmarks/holdout_new_families.py   (minutes: each fold refits the engine's groups)
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpuadvisor.knowledge.loader import load_catalog  # noqa: E402
from gpuadvisor.rules.estimate.consult import catalog_factors  # noqa: E402
from tests import serving_calibration_model as serving  # noqa: E402
from tests.benchmarks.fit_engines import FIT_AS, efficiency_for, fit  # noqa: E402
from tests.calibration_model import CHECKED, Row, predict  # noqa: E402

NEW = [r for r in CHECKED if r.get("own_family_only")]


def folds() -> list[tuple[str, str, Callable[[Row], bool]]]:
    """(label, engine fitted, rows held out) of every fold."""
    out: list[tuple[str, str, Callable[[Row], bool]]] = []
    for gpu in ("nvidia-rtx-5090", "nvidia-rtx-5060-ti-16gb"):
        out.append((f"llama.cpp without {gpu}", "llama.cpp",
                    lambda r, g=gpu: bool(r.get("own_family_only")) and r.gpu == g and r.engine == "llama.cpp"))
    spark = [r for r in NEW if r.gpu == "nvidia-dgx-spark"]
    for source in sorted({r.source for r in spark if FIT_AS.get(r.engine, r.engine) == "vllm"}):
        out.append((f"vLLM/SGLang without {source}", "vllm",
                    lambda r, s=source: bool(r.get("own_family_only")) and r.source == s))
    for row in [r for r in spark if r.engine == "llama.cpp"]:
        out.append((f"llama.cpp without {row.model}", "llama.cpp", lambda r, x=row: r is x))
    return out


def main() -> int:
    catalog = load_catalog(user_dir=None)
    factors = catalog_factors(catalog)
    inputs = {k: float(v["input"]) for k, v in serving.CAL["dataset"].items()}
    print(f"{'row':<72} {'published':>9} {'in-sample':>10} {'held out':>9}  fold")
    ins: list[float] = []
    held: list[float] = []
    for label, engine, out in folds():
        fitted = fit(catalog, factors, dict(inputs), leave_out=lambda r, o=out: isinstance(r, Row) and o(r),
                     engines={engine, *(e for e, as_ in FIT_AS.items() if as_ == engine)})
        for r in [r for r in NEW if out(r)]:
            acc = catalog.accelerators[r.gpu]
            eff = efficiency_for(fitted, acc, FIT_AS.get(r.engine, r.engine))
            now = predict(r, catalog, factors) / r.measured - 1.0
            later = predict(r, catalog, factors, efficiency=eff) / r.measured - 1.0
            ins.append(now)
            held.append(later)
            print(f"{r.label[:72]:<72} {r.measured:>9.4g} {now:>+10.1%} {later:>+9.1%}  {label}")
    print(f"\nmedian |error|: in-sample {statistics.median(map(abs, ins)):.1%}, held out "
          f"{statistics.median(map(abs, held)):.1%} ({len(held)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
