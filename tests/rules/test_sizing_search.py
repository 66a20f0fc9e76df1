"""The shared monotone search (rules/sizing/search.py)."""

from __future__ import annotations

from gpuadvisor.rules.sizing.search import first_true


def test_first_true_finds_the_turning_point_with_log2_probes() -> None:
    probes: list[int] = []

    def at_least_37(b: int) -> bool:
        probes.append(b)
        return b >= 37

    assert first_true(at_least_37, 0, 1024) == 37
    assert len(probes) == 10 and 0 not in probes and 1024 not in probes  # log2(1024), never the given ends
    assert first_true(lambda b: b >= 5, 4, 5) == 5  # already bracketed: no probe
    assert first_true(lambda b: b * b >= 50, 1, 100) == 8
