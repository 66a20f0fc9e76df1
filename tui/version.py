"""The program's name and version as reports and `--version` print it, from the installed metadata."""

from __future__ import annotations

from importlib import metadata


def generator() -> str:
    """`gpuadvisor 0.1.0`; a source tree without an install is plain `gpuadvisor`."""
    try:
        return f"gpuadvisor {metadata.version('gpuadvisor')}"
    except metadata.PackageNotFoundError:
        return "gpuadvisor"
