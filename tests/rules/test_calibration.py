"""Calibration: every published measurement in tests/data/calibration.toml against the sizing engine.

For each row the engine predicts the measured quantity three times: at the central values, and at the pessimistic
and optimistic ends of the bands an estimate quotes (the serving engine's profile in engines.toml for decode and
generation rows, the `low`/`high` of assumptions.toml otherwise). Each measurement must lie between the
pessimistic and optimistic predictions, so the bands the estimate reports and the data they rest on cannot drift
apart. The medians and p90 per engine and family are printed by tests/benchmarks/bench_calibration.py.
"""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.engine_names import ENGINE_CHOICES
from gpuadvisor.rules.estimate.consult import catalog_factors
from gpuadvisor.rules.sizing.params import count_parameters
from tests.calibration_model import ARCHS, CAL, CHECKED, ROWS, Row, bounds, predict, profile_id


def test_table_covers_every_measure_engine_and_enough_hardware(catalog: Catalog) -> None:
    measures = {r.measures for r in ROWS}
    assert {"decode_tokens_per_s", "prefill_tokens_per_s", "ttft_s", "generation_tokens_per_s",
            "training_gpu_hours", "training_tokens_per_s_per_gpu"} <= measures
    decode = [r for r in CHECKED if r.kind == "decode"]
    assert len(decode) >= 150
    assert {"llama.cpp", "vllm", "tensorrt-llm-engine", "mlx"} <= {r.engine for r in decode}
    gpus = {r.gpu for r in decode}
    assert len(gpus) >= 12
    assert {catalog.accelerators[g].vendor for g in gpus} >= {"nvidia", "amd", "apple"}
    assert len([r for r in CHECKED if r.kind == "training"]) >= 12


def test_decode_rows_have_an_engine_profile(catalog: Catalog) -> None:
    """Every decode row is predicted with a calibrated profile of its own engine, not the engine-blind factors."""
    for row in CHECKED:
        if row.kind == "decode":
            assert row.engine in ENGINE_CHOICES, row.label
            assert profile_id(row, catalog) is not None, row.label


BANDED = [r for r in CHECKED if r.measures != "training_speed_ratio"]
"""Rows of one part's figure: a speed ratio between two parts is fitted, not quoted (an estimate's band is of one
part's figure); test_speed_ratio_rows checks those."""
RATIOS = [r for r in CHECKED if r.measures == "training_speed_ratio"]


@pytest.mark.parametrize("row", BANDED, ids=[r.label for r in BANDED])
def test_measurement_inside_band(row: Row, catalog: Catalog) -> None:
    """Each published figure lies between the pessimistic and optimistic predictions the estimate quotes."""
    central, low, high = bounds(row, catalog)
    assert low <= row.measured <= high, (
        f"{row.label}: measured {row.measured:g}, predicted {central:.4g}, band [{low:.4g}, {high:.4g}]")


@pytest.mark.parametrize("row", RATIOS, ids=[r.label for r in RATIOS])
def test_speed_ratio_rows(row: Row, catalog: Catalog) -> None:
    """AMD's published MI355X / B200 training ratios (1.0-1.16) are predicted within 15 % with the fitted ROCm share
    (in-sample median 5.8 %, worst 8.8 %: tests/benchmarks/fit_training.py); at the CUDA share they are 8-22 % low."""
    predicted = predict(row, catalog, catalog_factors(catalog))
    assert abs(predicted / row.measured - 1) < 0.15, (
        f"{row.label}: measured {row.measured:g}, predicted {predicted:.3g}")


def test_rows_cite_sources() -> None:
    for row in ROWS:
        assert row.source in CAL["source"], row.label
        assert row.get("excluded") is None or len(row.excluded) > 40, f"{row.label}: say why it is excluded"
        assert CAL["source"][row.source]["url"].startswith("https://")
    for arch in CAL["arch"].values():
        assert arch["source"].startswith("https://")


def test_inline_architectures_match_models_toml(catalog: Catalog) -> None:
    """The shapes copied into calibration.toml agree with the knowledge base where it has the model."""
    for key, arch in ARCHS.items():
        model = catalog.models.get(key)
        if model is None:
            continue
        assert count_parameters(model.architecture).total == count_parameters(arch).total, key
