"""Number and label formatting shared by the tables, panels and charts (plain strings, no widgets)."""

from __future__ import annotations

from gpuadvisor.rules.sizing.units import usd_text

SEVERITY_LABEL = {"risk": "⚠ RISK", "advice": "➜ ADVICE", "note": "ℹ NOTE"}
"""Severity is always spelled out in text, so it never depends on colour alone."""

DASH = "—"


def severity(level: str) -> str:
    return SEVERITY_LABEL.get(level, level.upper())


def horizon(words: str) -> str:
    """A decision's horizon after a figure: 'for one run', 'over 36 months'."""
    return f"for {words}" if words == "one run" else words


def money(usd: float | None) -> str:
    """`$3.59`, `$2,621`, `$0.738`, `−$6,564` (a resale); a dash when unknown. The units module prints it, as every
    report does (narrow cells abbreviate with `short_money`)."""
    return DASH if usd is None else usd_text(usd)


def short_money(usd: float | None) -> str:
    """`$5.27`, `$950`, `$15k`, `$1.2M`: for narrow table cells; under $1,000 three significant figures (totals of
    $5.27, $5.69 and $5.73 read "$5 / $6 / $6" at 80 columns: issue 42)."""
    if usd is None:
        return DASH
    # each step where the figure rounds to the next one's first value: $9,951 is $10k, not $10.0k
    if abs(usd) >= 999_500:
        return f"${usd / 1e6:,.1f}M"
    if abs(usd) >= 9_950:
        return f"${usd / 1e3:,.0f}k"
    if abs(usd) >= 999.5:
        return f"${usd / 1e3:,.1f}k"
    if usd == 0 or abs(usd) >= 99.95:
        return f"${usd:,.0f}"
    return f"${usd:#.3g}".rstrip(".")


def number(value: float | None, digits: int = 1) -> str:
    """Thousands separators, fixed decimals; large values without decimals; a dash when unknown."""
    if value is None:
        return DASH
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def gb(value: float | None) -> str:
    return DASH if value is None else f"{value:,.1f} GB"


def params(total: int) -> str:
    """Parameter count in billions (or millions below 1 B)."""
    if total >= 1_000_000_000:
        return f"{total / 1e9:,.1f} B"
    return f"{total / 1e6:,.0f} M"


def percent(fraction: float | None) -> str:
    return DASH if fraction is None else f"{fraction * 100:.0f}%"


def seconds(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:,.1f} s"


def duration_days(days: float | None) -> str:
    """A run's wall time in the unit that reads best: `12 min`, `5.3 h`, `2.4 days`."""
    if days is None:
        return DASH
    hours = days * 24
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{days:,.1f} days"


def price_kind_text(kind: str | None, as_of: str | None) -> str:
    """A price kind as a reader says it: the buyer's own quote is `your quote (2026-11-20)`, the rest their kind."""
    if kind == "quote":
        return f"your quote ({as_of or 'undated'})"
    return kind or DASH


def price_label(kind: str | None, as_of: str | None, age_months: int | None) -> str:
    """What a price is and how old: `spot · 2 mo`, `msrp · 22 mo`, `street · undated`, `free`, `owned`, and the
    buyer's own `your quote (2026-11-20)`."""
    if kind in (None, "free", "owned"):
        return kind or DASH
    if kind == "quote":
        return price_kind_text(kind, as_of)
    short = {"on-demand": "on-demand"}.get(kind, kind)
    if not as_of:
        return f"{short} · undated"
    return f"{short} · {months(age_months)}" if age_months is not None else f"{short} · {as_of}"


def price_age(kind: str | None, as_of: str | None, age_months: int | None) -> str:
    """How old a price is, for a narrow column: `2 mo`, `undated`, `free`, `owned` (the kind is in the detail);
    the buyer's own quote always says so: `your quote (2026-11-20)`."""
    if kind in (None, "free", "owned"):
        return kind or DASH
    if kind == "quote":
        return price_kind_text(kind, as_of)
    if not as_of:
        return "undated"
    return months(age_months) if age_months is not None else as_of


def months(age: int) -> str:
    """`2 mo`; a price read this month is `< 1 mo`, not `0 mo`."""
    return f"{age} mo" if age > 0 else "< 1 mo"


def headroom(value: float) -> str:
    """Capacity ÷ demand: `1.3×`, `12×`."""
    return f"{value:.1f}×" if value < 10 else f"{value:,.0f}×"


def yes_no(value: bool) -> str:
    return "✔ yes" if value else "✖ no"


def ordinal_move(old_rank: int | None, new_rank: int) -> str:
    """How an option moved in a what-if: `▲2`, `▼1`, `new`, or empty when it stayed."""
    if old_rank is None:
        return "new"
    if old_rank == new_rank:
        return ""
    return f"▲{old_rank - new_rank}" if new_rank < old_rank else f"▼{new_rank - old_rank}"
