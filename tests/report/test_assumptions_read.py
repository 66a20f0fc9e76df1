"""Assumptions recorded as read only when they can change a figure (issue 40): the decision is the rules' (the
consultation's `assumptions`), so the TUI's detail panel and every report list the same ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.sizing.factors import ENGINE_SET, changes_a_figure
from gpuadvisor.tui.report import render
from gpuadvisor.tui.report.common import assumptions_used
from gpuadvisor.tui.screens.detail import assumptions_text
from tests.report import TODAY

MIXTRAL = {"workload": "inference", "model": {"name": "mixtral-8x7b"}, "precision": {"weights": "fp8"},
           "inference": {"requests_per_minute": 600, "min_tokens_per_s_per_user": 20, "ttft_max_s": 2.0}}
"""The golden consultation whose options include SGLang (its reserve is engine-set: engines.toml static_memory)."""


def test_an_engine_set_default_at_zero_changes_no_figure() -> None:
    assert ENGINE_SET == ("activation_reserve_gb", "activation_reserve_per_gpu_gb", "activation_reserve_wide_gb")
    assert not changes_a_figure("activation_reserve_gb", 0.0)
    assert changes_a_figure("activation_reserve_gb", 1.5)  # an overlay's reserve is read by every engine
    assert changes_a_figure("pue", 0.0)  # only the engine-set factors: any other 0 is a figure


def test_every_screen_and_report_lists_the_same_assumptions() -> None:
    catalog = load_catalog(user_dir=None)
    result = Advisor(catalog, include_user_packs=False).consult(parse_answers(MIXTRAL))
    ids = {a.id for a in result.assumptions}
    assert not ids & set(ENGINE_SET)
    assert len(ids) == len(catalog.assumptions) - 3  # the three reserves at 0, nothing else
    panel = assumptions_text(result).plain
    listed = assumptions_used([result])
    markdown = render(result, "md", today=TODAY)
    for a in listed:  # the panel and the report list the same ones
        assert f"{a.title}: " in panel
    assert panel.count(" — ") == len(listed)
    assert "reserve" not in panel.lower()
    assert "reserve per further GPU" not in markdown and "4-way tensor parallelism up" not in markdown


def test_a_reserve_an_overlay_sets_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "assumptions.toml").write_text(
        '[[assumption]]\nid = "activation_reserve_gb"\ntitle = "Engine reserve"\nvalue = 1.5\nunit = "GB"\n'
        'sources = ["eng-sglang-server-args"]\n', encoding="utf-8")
    catalog = load_catalog(user_dir=tmp_path)
    assert catalog.assumptions["activation_reserve_gb"].value == pytest.approx(1.5)
    result = Advisor(catalog, include_user_packs=False).consult(parse_answers(MIXTRAL))
    ids = {a.id for a in result.assumptions}
    assert "activation_reserve_gb" in ids
    assert not ids & {"activation_reserve_per_gpu_gb", "activation_reserve_wide_gb"}
