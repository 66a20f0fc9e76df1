"""Fixtures the rules tests share: the shipped knowledge base and an advisor over it, without user overlays or rule
packs, built once a test module (as each module built them before)."""

from __future__ import annotations

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import Advisor


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(user_dir=None)


@pytest.fixture(scope="module")
def advisor(catalog: Catalog) -> Advisor:
    return Advisor(catalog, include_user_packs=False)
