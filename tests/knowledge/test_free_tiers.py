"""Free notebook GPUs (Colab, Kaggle, SageMaker Studio Lab): loaded with the catalog, on real accelerators, with the
published session and quota limits, and overridable by a user overlay like every other entry."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import KnowledgeError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import FreeTier


def test_free_tiers_load_on_real_accelerators(shipped: Catalog) -> None:
    assert {"colab-free", "kaggle-p100", "kaggle-t4x2", "sagemaker-studio-lab"} <= set(shipped.free_tiers)
    for tier in shipped.free_tiers.values():
        assert tier.accelerator in shipped.accelerators, tier.id
        assert tier.sources and set(tier.sources) <= set(shipped.sources), tier.id


@pytest.mark.parametrize(("tier_id", "acc", "count", "session", "per_week", "guaranteed"), [
    ("colab-free", "nvidia-t4", 1, 12, None, False),  # FAQ: at most 12 h; limits dynamic, not guaranteed
    ("kaggle-p100", "nvidia-p100", 1, 12, 30, True),  # 12 h sessions, ~30 GPU-hours a week
    ("kaggle-t4x2", "nvidia-t4", 2, 12, 30, True),
    ("sagemaker-studio-lab", "nvidia-t4", 1, 4, 7 * 4, False),  # 4 h per session, 4 h per 24 h
])
def test_limits(shipped: Catalog, tier_id: str, acc: str, count: int, session: float, per_week: float | None,
                guaranteed: bool) -> None:
    tier = shipped.free_tiers[tier_id]
    assert (tier.accelerator, tier.accelerator_count, tier.session_hours) == (acc, count, session)
    assert tier.hours_per_week() == per_week
    assert tier.guaranteed is guaranteed


def test_dates_only_where_the_source_gives_one(shipped: Catalog) -> None:
    assert shipped.free_tiers["sagemaker-studio-lab"].as_of == "2023-07-06"  # the team's dated comment
    assert shipped.free_tiers["colab-free"].as_of is None  # the FAQ is undated


def test_session_cannot_exceed_the_daily_quota() -> None:
    with pytest.raises(ValidationError, match="session_hours 6.0 exceeds daily_hours 4.0"):
        FreeTier.model_validate({"id": "x", "name": "X", "provider": "x", "provider_name": "X",
                                 "accelerator": "nvidia-t4", "session_hours": 6, "daily_hours": 4,
                                 "guaranteed": False, "sources": ["s"]})


def test_overlay_changes_a_quota(overlay_dir: Path) -> None:
    (overlay_dir / "kaggle.toml").write_text('[[free_tier]]\nid = "kaggle-t4x2"\nweekly_hours = 20\n')
    catalog = load_catalog()
    assert catalog.free_tiers["kaggle-t4x2"].weekly_hours == 20
    assert catalog.free_tiers["kaggle-t4x2"].session_hours == 12  # shallow merge keeps the rest
    assert catalog.overlay_status("free_tier", "kaggle-t4x2") == "overridden"


def test_unknown_accelerator_names_file_line_and_field(overlay_dir: Path) -> None:
    text = ('[[free_tier]]\nid = "lab"\nname = "Lab"\nprovider = "lab"\nprovider_name = "Lab"\n'
            'accelerator = "nvidia-t5"\nsession_hours = 2\nguaranteed = false\nsources = ["colab-faq"]\n')
    (overlay_dir / "lab.toml").write_text(text)
    with pytest.raises(KnowledgeError) as info:
        load_catalog()
    message = str(info.value)
    assert message.startswith(f"{overlay_dir / 'lab.toml'}:6: free_tier 'lab': accelerator: unknown accelerator")
    assert "nvidia-t4" in message  # the closest id is suggested
