"""Triage of a consultation's findings: one per rule, the recommended plan's first, the few that matter shown.

The rules engine concludes one warning per rule and per option it concerns (a PCIe penalty fires for every PCIe
card), so a consultation that lists 15 options can carry dozens of lines that say the same thing about different
parts. A person reads a handful. Triage turns them into findings a person can act on:

- one finding per rule (per plan for plan-wide rules), listing every option it concerns; the message is the one
  about the best-ranked of them and `details` keeps each other option's own message;
- the price-age and undated-price notes become one line about the prices the ranking rests on;
- the findings that bear on the recommended option come first — about it, about the hardware the user has (the
  baseline it is weighed against), or a risk to the whole plan — then plan-wide advice, and last the other
  options' findings, each group by severity (risk, advice, note) and then by the rank of the best option concerned;
- `shown` marks the few shown by default (risks and advice first, at most `SHOWN_BY_DEFAULT`); screens and reports
  offer the rest on request, the JSON keeps them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpuadvisor.rules.consultation.result import SEVERITY_ORDER, Recommendation, Warning

SHOWN_BY_DEFAULT = 5
"""How many findings the results and the reports show before "show all": a handful a person reads."""
PRICE_RULES = frozenset({"P.stale-price", "P.undated-price"})
"""The rules that say a price is old or undated: collapsed into one line about the prices that decide the ranking."""
PRICE_FINDING = "P.prices"


def triage(warnings: Sequence[Warning], ranked: Sequence[Recommendation]) -> list[Warning]:
    """The findings in the order a person should read them, merged per rule, with `shown` set on the first few."""
    rank = {r.option: r.rank for r in ranked}
    top = ranked[0].option if ranked else None
    merged = _merge((w for w in warnings if w.rule not in PRICE_RULES and w.id not in PRICE_RULES), rank)
    price = _prices([w for w in warnings if w.rule in PRICE_RULES or w.id in PRICE_RULES], ranked)
    if price is not None:
        merged.append(price)
    for w in merged:
        w.options.sort(key=lambda o: (rank.get(o, 10**6), o))

    def key(w: Warning) -> tuple[int, int, int, str]:
        best = min((rank.get(o, 10**6) for o in w.options), default=0)
        return (bearing(w, top), SEVERITY_ORDER[w.severity], best, w.id)

    ordered = sorted(merged, key=key)
    shown = 0
    for w in ordered:
        about_top = bearing(w, top) != OTHERS
        if shown < SHOWN_BY_DEFAULT and (w.severity != "note" or about_top):
            w.shown = True
            shown += 1
    return ordered


PICK, PLAN_ADVICE, OTHERS = 0, 1, 2
"""How much a finding bears on the recommended option, most first: about it, about the hardware the user has
(which every option is weighed against) or a risk to the whole plan (so to it too); then plan-wide advice and notes;
then other options'."""
OWN_RULES = "OWN."
"""Rules about the user's own hardware (rules/packs/45-owned.toml): the baseline every option is compared with."""


def bearing(w: Warning, top: str | None) -> int:
    """The finding's place by how much it bears on the pick (`PICK` … `OTHERS`)."""
    if (w.options and w.options[0] == top) or w.rule.startswith(OWN_RULES) or (not w.options and w.severity == "risk"):
        return PICK
    return PLAN_ADVICE if not w.options else OTHERS


def _merge(warnings: Iterable[Warning], rank: dict[str, int]) -> list[Warning]:
    """One finding per rule: the most severe message about the best-ranked option leads (a plan-wide one before
    any option's), every option concerned is listed once."""
    groups: dict[str, list[Warning]] = {}
    for w in warnings:
        groups.setdefault(w.rule, []).append(w)
    out = []
    for group in groups.values():
        group.sort(key=lambda w: (SEVERITY_ORDER[w.severity], min((rank.get(o, 10**6) for o in w.options), default=0)))
        lead = group[0]
        options = list(dict.fromkeys(o for w in group for o in w.options))
        details = [w.message for w in group[1:] if w.message != lead.message]
        out.append(lead.model_copy(update={"options": options, "details": details, "shown": False}))
    return out


def _prices(warnings: Sequence[Warning], ranked: Sequence[Recommendation]) -> Warning | None:
    """The price-age notes as one line naming each price, in rank order, with its kind and age."""
    if not warnings:
        return None
    concerned = {o for w in warnings for o in w.options}
    recs = [r for r in ranked if r.option in concerned]
    if not recs:
        return None
    parts = [f"{price_subject(r)} ({price_age(r)})" for r in recs]
    lead = min(warnings, key=lambda w: min((r.rank for r in recs if r.option in w.options), default=10**6))
    message = (f"The ranking rests on {len(parts)} price{'s' if len(parts) != 1 else ''} that may have moved: "
               f"{'; '.join(parts)}. Check today's price before you decide.")
    return Warning(id=PRICE_FINDING, rule=lead.rule, category="advice", severity="note", message=message,
                   options=[r.option for r in recs], why=lead.why)


def price_subject(rec: Recommendation) -> str:
    """`NVIDIA L4 purchase price (msrp)`, `AWS p5.48xlarge on-demand price`: what the price is of."""
    kind = rec.cost.price_kind or "list"
    if kind == "quote":  # the buyer's own: `NVIDIA H100 SXM5 price (your quote of 2026-11-20)`
        what = rec.instance.label if rec.instance is not None else rec.accelerator.name
        return f"{what} price (your quote of {rec.cost.price_as_of or 'undated'})"
    if rec.instance is not None:
        return f"{rec.instance.label} {kind} price"
    return f"{rec.accelerator.name} {kind} price"


def price_age(rec: Recommendation) -> str:
    """`undated`, or `2023-03, 44 months old`."""
    c = rec.cost
    if not c.price_as_of:
        return "undated"
    age = f", {c.price_age_months} months old" if c.price_age_months is not None else ""
    return f"{c.price_as_of}{age}"
