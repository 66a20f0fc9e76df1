"""assumptions.toml and the Factors defaults are the same numbers, and every band contains its value."""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.estimate.consult import catalog_factors, factor_bounds
from gpuadvisor.rules.sizing.factors import Factors

TOML = Path(__file__).resolve().parents[2] / "knowledge" / "data" / "assumptions.toml"


def _assumptions() -> dict[str, dict[str, object]]:
    with TOML.open("rb") as fh:
        return {a["id"]: a for a in tomllib.load(fh)["assumption"]}


def test_every_factor_has_an_assumption_with_the_same_value() -> None:
    table = _assumptions()
    for f in fields(Factors):
        assert f.name in table, f"{f.name} missing from assumptions.toml"
        assert table[f.name]["value"] == pytest.approx(getattr(Factors(), f.name)), f.name


def test_bands_contain_values_and_have_sources() -> None:
    for a in _assumptions().values():
        low, high, value = a.get("low"), a.get("high"), a["value"]
        if low is not None and high is not None:
            assert low <= value <= high, a["id"]  # type: ignore[operator]
        assert a["sources"], a["id"]


def test_catalog_loads_assumptions_and_bounds_order() -> None:
    cat = load_catalog(user_dir=None)
    factors = catalog_factors(cat)
    assert factors == Factors()
    slow, fast = factor_bounds(cat, factors)
    assert slow.decode_bandwidth_efficiency < factors.decode_bandwidth_efficiency < fast.decode_bandwidth_efficiency
    assert slow.step_overhead_per_layer_us > factors.step_overhead_per_layer_us > fast.step_overhead_per_layer_us
    assert slow.training_mfu < factors.training_mfu < fast.training_mfu


def test_from_values_ignores_unknown_ids() -> None:
    f = Factors.from_values({"training_mfu": 0.5, "not_a_factor": 3.0})
    assert f.training_mfu == 0.5 and f.headroom_fraction == Factors().headroom_fraction
