"""The cheapest ways to equip a lifecycle's phases, found by dynamic programming over the phases (issue 31).

Each phase runs on one of its options: a rental, a purchase, or a purchase an earlier phase made ("reuse"). Costing
every combination grows as the product of the options (2^n fleets for n phases with one rental and one purchase
each: 16 phases took 48 s and 1.9 GB). Here the phases are taken in order and each partial fleet is reduced to the
only things its future depends on, its *state*:

- `t`, the month the last phase ended (a phase without a start_month starts then; its months, runs, site rent and
  serving months follow from its start);
- the purchases a later phase can still run on, each with the runs already on it (start, months, accelerators: a
  later phase must start after the purchase and fit beside the runs it overlaps), and no other purchase;
- the fleet's kind so far (purchases 0, 1 or more; any reuse, rental or own hardware), so the best fleet of each
  kind (one fleet, split, rent, own) is found too.

Two partial fleets in the same state have the same possible futures at the same future costs, because every cost
and every check of a later phase reads only these (`Step` is computed from the phase's option and `t`; `fits`
from the purchase's runs). So in each state it is enough to keep the cheapest few (`keep`, for the runners-up)
and, under a purchase cap, those no other beats on both cost and money spent on purchases: a pruned partial fleet
is matched or beaten, on total and on purchases, by a kept one with the very same futures. The cheapest fleet, the
cheapest within the purchase cap, the `keep` cheapest overall and the cheapest of each kind are therefore exact.

The work is the number of states times the options of a phase, not the number of fleets. States are bounded by
the phases' options: with reuse (at most MAX_REUSE_PHASES phases, rules/lifecycle/consult.py) at most 5,040 fleets exist
(one rental and one purchase per phase from the fourth phase on), and without reuse a state is `t` and the kind,
at most 2^(n-1) times 24 for the n <= 12 phases a lifecycle may have; `search` also counts every feasible fleet
(exactly, by adding the counts of the states merged), which the explanation quotes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

Pick = tuple[str, int, int]
"""(choice, k, owner): the k-th rental or purchase of the phase (owner 0; "buy" holds it to the end of the horizon,
"sell" sells it when the phase ends), or ("reuse", k, owner): the k-th purchase of phase `owner` (1-based)."""
TIME_DIGITS = 9
"""Months are compared at this many decimals (sums of floats that should be equal then are)."""


@dataclass(frozen=True)
class Step:
    """What one phase costs on one option, started after a previous phase that ended at month `t`."""

    start: float
    months: float
    count: int
    """Accelerators the phase uses (on a purchase: how much of it)."""
    cost: float
    """Everything the phase adds to the fleet's total: rental, power, site rent and a purchase's price."""
    capex: float
    own: bool = False
    """Hardware the user already owns (for the fleet's kind)."""


@dataclass(frozen=True)
class Use:
    start: float
    months: float
    count: int


@dataclass(frozen=True)
class Held:
    """A purchase a later phase may still run on: who bought it (phase, k-th purchase), how many accelerators it
    has, and every run on it so far (the buyer's first)."""

    owner: int
    k: int
    size: int
    uses: tuple[Use, ...]


def fits(held: Held) -> bool:
    """No run starts before the purchase does, and the runs under way at any run's start fit in it together."""
    buyer = held.uses[0]
    if any(u.start < buyer.start - 1e-9 for u in held.uses[1:]):
        return False
    for u in held.uses:
        at = u.start + 1e-9
        if sum(q.count for q in held.uses if q.start <= at < q.start + max(q.months, 1e-9)) > held.size:
            return False
    return True


Kind = tuple[int, bool, bool, bool]
"""(purchases: 0, 1 or 2 for more; any reuse; any rental or free option; any own hardware)."""


@dataclass(frozen=True)
class Partial:
    cost: float
    capex: float
    picks: tuple[Pick, ...]


State = tuple[float, tuple[Held, ...], Kind]


@dataclass
class SearchResult:
    fleets: list[Partial]
    """Complete fleets kept: the `keep` cheapest, the cheapest within the cap, the cheapest of each kind (and
    others the pruning happened to keep), in no particular order."""
    count: int
    """How many feasible fleets exist (every combination whose reuses and side-by-side runs fit)."""
    states: int
    """States visited over all phases (the work done, for tests and benchmarks)."""


StepFn = Callable[[int, Pick, float], "Step | None"]
"""step(phase index from 0, pick, t) → the phase's Step on that option after a phase ending at month t; None when
that option cannot run then."""


def search(options: Sequence[Sequence[Pick]], step: StepFn, reusable: Callable[[int, int, int], bool], *,
           keep: int, capex_cap: float | None = None) -> SearchResult:
    """The fleets worth listing, by dynamic programming over the phases (see the module docstring for why it is
    exact). `reusable(j, owner, k)`: phase j (from 0) or a later one can run on phase `owner`'s k-th purchase."""
    start: State = (0.0, (), (0, False, False, False))
    layer: dict[State, tuple[list[Partial], int]] = {start: ([Partial(0.0, 0.0, ())], 1)}
    visited = 1
    for j, opts in enumerate(options):
        following: dict[State, tuple[list[Partial], int]] = {}
        for (t, held, kind), (partials, count) in layer.items():
            for pick in opts:
                moved = _move(j, pick, t, held, kind, step, reusable)
                if moved is None:
                    continue
                state, s = moved
                kept, n = following.get(state, ([], 0))
                kept += [Partial(p.cost + s.cost, p.capex + s.capex, (*p.picks, pick)) for p in partials]
                following[state] = (kept, n + count)
        layer = {state: (_prune(kept, keep, capex_cap), n) for state, (kept, n) in following.items()}
        visited += len(layer)
    fleets = [p for partials, _ in layer.values() for p in partials]
    return SearchResult(fleets, sum(n for _, n in layer.values()), visited)


def _move(j: int, pick: Pick, t: float, held: tuple[Held, ...], kind: Kind, step: StepFn,
          reusable: Callable[[int, int, int], bool]) -> tuple[State, Step] | None:
    """The state after phase j runs on `pick`, and its step; None when it cannot (no such purchase, no room)."""
    choice, k, owner = pick
    target = next((h for h in held if (h.owner, h.k) == (owner, k)), None) if choice == "reuse" else None
    if choice == "reuse" and target is None:
        return None  # that purchase is not in this fleet
    s = step(j, pick, t)
    if s is None:
        return None
    run = Use(s.start, s.months, s.count)
    now = list(held)
    if target is not None:
        grown = Held(target.owner, target.k, target.size, (*target.uses, run))
        if not fits(grown):
            return None
        now[now.index(target)] = grown
    elif choice == "buy":  # "sell": bought and sold within its phase, so no later phase can run on it
        now.append(Held(j + 1, k, s.count, (run,)))
    live = tuple(sorted((h for h in now if reusable(j + 1, h.owner, h.k)), key=lambda h: (h.owner, h.k)))
    buys, reuse, other, own = kind
    kind = (min(buys + (choice in ("buy", "sell")), 2), reuse or choice == "reuse",
            other or (choice == "rent" and not s.own), own or s.own)
    return (round(s.start + s.months, TIME_DIGITS), live, kind), s


def _prune(partials: list[Partial], keep: int, capex_cap: float | None) -> list[Partial]:
    """The `keep` cheapest, and under a cap the partials no other beats on both cost and capex within the cap."""
    ranked = sorted(partials, key=lambda p: (p.cost, p.capex, p.picks))
    out = ranked[:keep]
    if capex_cap is not None:
        best_capex = float("inf")
        for p in ranked:
            if p.capex <= capex_cap + 1e-6 and p.capex < best_capex - 1e-9:
                best_capex = p.capex
                if p not in out:
                    out.append(p)
    return out

