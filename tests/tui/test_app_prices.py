"""The welcome screen says how old the prices in use are and refreshes them (`kb refresh`) in a worker; the model
field reads a Hugging Face id from the local cache only (a screen must not wait on the network)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from textual.widgets import Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.tui.app import GpuAdvisorApp
from gpuadvisor.tui.questionnaire.model_lookup import lookup_model

from ..knowledge.test_price_refresh import _server, _zip
from .conftest import NO_GPU, THEME, make_app, settle, wait_until


def _status(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#price-status", Static).render())


async def test_welcome_shows_the_age_of_the_prices_and_refreshes_them(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real loader (it reads what the refresh wrote) and the day the refresh is dated (GPUADVISOR_TODAY).
    app = GpuAdvisorApp(None, catalog_fn=load_catalog, today=date(2026, 11, 25), theme=THEME,
                        detect_fn=lambda _catalog: NO_GPU)
    files = {"/runpod/version": b"20261124-3", "/runpod/20261124-3/catalog.zip": _zip("runpod.csv")}
    with _server(files) as url:
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", url)
        monkeypatch.setattr("gpuadvisor.knowledge.price_refresh.providers_of", lambda names, settings=None: ["runpod"])
        async with app.run_test() as pilot:
            await settle(pilot)
            assert _status(app) == ("Prices in use: as shipped, dated 2020-10 to 2026-10-13. Press r to fetch "
                                    "current cloud prices.")
            await pilot.press("r")
            await wait_until(pilot, lambda: "refreshed" in _status(app))
            assert _status(app) == ("Prices in use: cloud prices refreshed 2026-11-25 (today, catalogs dated "
                                    "2026-11-24), the rest as shipped; all dated 2020-10 to 2026-11-24. Press r to "
                                    "refresh again.")
            assert app.catalog.instances["runpod-rtx-4090"].current_price("on-demand").usd_per_hour == 0.59


async def test_a_failed_refresh_is_reported_and_changes_nothing(catalog: Catalog,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", "http://127.0.0.1:9")  # discard port: nothing answers
    app = make_app(catalog)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: any(n.title == "Prices not refreshed" for n in app._notifications))
        await wait_until(pilot, lambda: _status(app).startswith("Prices in use: as shipped"))


def test_the_model_field_reads_a_hub_id_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ..knowledge.test_hf_hub import CONFIGS, _cache

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # were it asked, nothing would answer
    _cache(tmp_path / "hub", "Qwen/Qwen3-32B", CONFIGS / "qwen3-32b.json")
    catalog = load_catalog(user_dir=None)
    found = lookup_model("Qwen/Qwen3-32B@main", catalog)
    assert found.info == ("Qwen/Qwen3-32B@main (qwen3, Hugging Face cache): 32.8 B parameters · 64 layers · 8 KV "
                          "heads · hidden 5120") and not found.error
    later = lookup_model("mistralai/Devstral-Small-2505", catalog)
    assert later.info.startswith("Hugging Face model mistralai/Devstral-Small-2505: not cached yet") and not later.error
    assert lookup_model("Qwen/Qwen3-32B", catalog).model_id == "qwen3-32b"  # the knowledge base first
    shutil.rmtree(tmp_path / "hub")
