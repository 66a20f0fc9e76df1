"""Keep every test away from the developer's own configuration, cache and data directories."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_SESSION_HOME = Path(tempfile.mkdtemp(prefix="gpuadvisor-tests-"))
# Set at import time so that module-level catalog loads in test modules see them too.
os.environ.setdefault("GPUADVISOR_CACHE_DIR", str(_SESSION_HOME / "cache"))
os.environ.setdefault("GPUADVISOR_DATA_DIR", str(_SESSION_HOME / "data"))
os.environ["GPUADVISOR_CONFIG_DIR"] = str(_SESSION_HOME / "config-empty")
# Price ages ("23 months old") are measured from today: tests and recorded consultations fix the day.
os.environ.setdefault("GPUADVISOR_TODAY", "2026-11-25")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker of the expert cases, so a run can leave them out while the decision model catches up."""
    config.addinivalue_line("markers", "expert: a published expert case run through the real consultation "
                                       "(deselect with -m 'not expert')")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the session's scratch home (cache and data dirs) so test runs leave nothing in /tmp."""
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No user overlay or rule pack leaks in unless a test writes one into its own config dir."""
    monkeypatch.setenv("GPUADVISOR_CONFIG_DIR", str(tmp_path / "config"))
    yield


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only the stub tools a test writes (so a real GPU tool on this machine is never run)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder
