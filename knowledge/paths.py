"""Where the knowledge base lives: the shipped data directory, the user's overlay directory and the data directory
that holds what gpuadvisor writes itself (the prices `gpuadvisor kb refresh` fetched, the TUI's state).

`GPUADVISOR_CONFIG_DIR` overrides the platform config directory and `GPUADVISOR_DATA_DIR` the data directory, so tests
(and users with several setups) can point gpuadvisor at another place without touching their real configuration.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_ENV = "GPUADVISOR_CONFIG_DIR"
CACHE_ENV = "GPUADVISOR_CACHE_DIR"
DATA_ENV = "GPUADVISOR_DATA_DIR"
REFRESHED_PRICES = "refreshed-prices.toml"


def data_dir() -> Path:
    """The directory of the shipped knowledge files (inside the installed package)."""
    return Path(__file__).resolve().parent / "data"


def config_dir() -> Path:
    """The user's gpuadvisor configuration directory (`$GPUADVISOR_CONFIG_DIR` wins over the platform default)."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs  # imported here: only needed when no override is set

    return platformdirs.user_config_path("gpuadvisor")


def overlay_dir() -> Path:
    """The directory whose `*.toml` files overlay the shipped knowledge base."""
    return config_dir() / "knowledge"


def cache_dir() -> Path:
    """Where parsed copies of the shipped knowledge files are kept (`$GPUADVISOR_CACHE_DIR` wins)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("gpuadvisor")


def user_data_dir() -> Path:
    """What gpuadvisor writes for itself (created on first write, not here): `$GPUADVISOR_DATA_DIR`, else the
    config override's `state/` subfolder (so a test that only moves the config never touches the real home), else
    the platform's user data directory."""
    if env := os.environ.get(DATA_ENV):
        return Path(env).expanduser()
    if env := os.environ.get(CONFIG_ENV):
        return Path(env).expanduser() / "state"
    import platformdirs

    return platformdirs.user_data_path("gpuadvisor", appauthor=False)


def refreshed_prices_path() -> Path:
    """The overlay `gpuadvisor kb refresh` writes (and each refresh replaces): live catalog prices, never the
    shipped files and never the user's own overlays."""
    return user_data_dir() / REFRESHED_PRICES
