"""Integer search over a monotone predicate, shared by the sizing code (batch fixed points, decode batches,
replica counts), so each caller states its condition and not its loop."""

from __future__ import annotations

from collections.abc import Callable


def first_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest b in (lo, hi] with pred(b), for a pred that turns true once and stays true, given pred(lo)
    false and pred(hi) true (bisection: log2(hi - lo) probes, none at lo or hi)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi
