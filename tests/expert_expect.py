"""Expectation checker for expert cases (`../shared/expert-cases.toml`, `tests/data/expert_cases.toml`).

A case's `expect` table is checked against a consultation result as printed by
`gpuadvisor recommend --format json` (a plain dict). The keys are the ones documented at the top of the shared file;
this module is the single place that says what each key means, so the shared and our own cases are judged alike.

Conventions (documented here because the key list is terse):
- "top 3" = the first three recommendations; "every recommendation" = all recommendations in the result.
- Keys about recommendations fail when there are none: an expectation about the options cannot hold of no options.
- `warnings_any`: a warning id matches a heuristic id when it equals it or continues with a non-digit (so "H1" does
  not match "H13", but "H13" matches "H13" and "H13a").
- Regexes are searched (`re.search`); `message_any` is case-insensitive, id regexes are as written (ids are lower case).

Keys added by our own suite (tests/data/expert_cases.toml documents them too):
- `top3_instance_none` regex: none of the top 3 is a rental whose instance id or provider matches (case-insensitive).
- `top3_no_spot` bool: true = none of the top 3 is a spot rental; false = at least one of them is.
- `top1_max_tensor_parallel` int: rank 1 splits one replica over at most this many accelerators (tensor × pipeline).

Lifecycle cases (answers with `[[phase]]` tables, issue 21):
- `phase` list of tables: the i-th table holds expectations (any key above) about phase i's own consultation
  (`phases[i]` of the result); a failure is reported as `phase[i]: ...`. An empty table expects nothing.
- `lifecycle_within_budget` bool: the chosen fleet is (or is not) within the budget.
- `lifecycle_max_total_usd` number: the chosen fleet's total cost over the horizon is at most this.
- `lifecycle_choice_any` list: the fleet choice is one of these (one-fleet | split | rent | buy | own).
- `lifecycle_plan` list of regexes: phase i of the chosen fleet is rented, bought or reused as its regex says
  (matched against the plan's `choice`: rent | buy | reuse | own | free; "" = anything).
- `lifecycle_warnings_any` / `lifecycle_warnings_none` lists of ids: some / none of the findings about how the
  phases interact (the result's top-level `warnings`) carries one of these ids (L1-L4, matched as `warnings_any`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Result = Mapping[str, Any]
Check = Callable[[Result, Any], str | None]


def _recs(result: Result) -> list[Mapping[str, Any]]:
    return list(result.get("recommendations") or [])


def _acc_id(rec: Mapping[str, Any]) -> str:
    return str(rec["accelerator"]["id"])


def _label(rec: Mapping[str, Any]) -> str:
    inst = rec.get("instance")
    where = f"{inst['id']}×{inst['count']}" if inst else "purchase"
    return f"#{rec.get('rank')} {rec['count']}× {_acc_id(rec)} ({where})"


def _none_msg(key: str) -> str:
    return f"{key}: no recommendations"


def _feasible(result: Result, want: Any) -> str | None:
    got = bool(result.get("feasible"))
    return None if got == bool(want) else f"feasible: expected {bool(want)}, got {got}"


def _top_any(result: Result, pattern: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top_any")
    if any(re.search(pattern, _acc_id(r)) for r in top):
        return None
    return f"top_any: no top-3 accelerator matches /{pattern}/ (got {[_acc_id(r) for r in top]})"


def _top1_not(result: Result, pattern: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_not")
    return f"top1_not: rank 1 {_acc_id(recs[0])} matches /{pattern}/" if re.search(pattern, _acc_id(recs[0])) else None


def _top3_none(result: Result, pattern: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top3_none")
    bad = [_label(r) for r in top if re.search(pattern, _acc_id(r))]
    return f"top3_none: top-3 options match /{pattern}/: {bad}" if bad else None


def _top1_rental(result: Result, want: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_rental")
    got = recs[0].get("instance") is not None
    return None if got == bool(want) else f"top1_rental: expected {bool(want)}, rank 1 is {_label(recs[0])}"


def _top1_purchase(result: Result, want: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_purchase")
    got = bool(recs[0].get("purchase"))
    return None if got == bool(want) else f"top1_purchase: expected {bool(want)}, rank 1 is {_label(recs[0])}"


def _top1_max_count(result: Result, n: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_max_count")
    return None if recs[0]["count"] <= n else f"top1_max_count: rank 1 uses {recs[0]['count']} > {n}"


def _top3_max_count(result: Result, n: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top3_max_count")
    bad = [_label(r) for r in top if r["count"] > n]
    return f"top3_max_count: top-3 options use more than {n}: {bad}" if bad else None


def _min_count(result: Result, n: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("min_count")
    bad = [_label(r) for r in recs if r["count"] < n]
    return f"min_count: options use fewer than {n}: {bad}" if bad else None


def _min_total_memory_gb(result: Result, gb: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("min_total_memory_gb")
    # GB = 10^9 bytes of device memory (memory.capacity: an "48 GB" card holds 48 GiB = 51.5e9 bytes, issue 44)
    def total(r: Mapping[str, Any]) -> float:
        return float(r["count"] * ((r.get("memory") or {}).get("capacity") or r["accelerator"]["memory_gb"]))

    bad = [f"{_label(r)} = {total(r):g} GB" for r in recs if total(r) < gb]
    return f"min_total_memory_gb: options below {gb} GB: {bad}" if bad else None


def _min_tokens_per_s(result: Result, tps: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("min_tokens_per_s")
    bad = [f"{_label(r)} = {r.get('tokens_per_s')} tok/s" for r in recs
           if r.get("tokens_per_s") is None or r["tokens_per_s"] < tps]
    return f"min_tokens_per_s: options below {tps} tok/s: {bad}" if bad else None


def _top3_instance_none(result: Result, pattern: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top3_instance_none")
    bad = [_label(r) for r in top if r.get("instance") is not None
           and (re.search(pattern, str(r["instance"]["id"]), re.IGNORECASE)
                or re.search(pattern, str(r["instance"].get("provider", "")), re.IGNORECASE))]
    return f"top3_instance_none: top-3 rentals match /{pattern}/i: {bad}" if bad else None


def _is_spot(rec: Mapping[str, Any]) -> bool:
    inst = rec.get("instance")
    return inst is not None and inst.get("pricing") == "spot"


def _top3_no_spot(result: Result, want: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top3_no_spot")
    spot = [_label(r) for r in top if _is_spot(r)]
    if want and spot:
        return f"top3_no_spot: top-3 options on spot: {spot}"
    if not want and not spot:
        return "top3_no_spot: expected a spot rental in the top 3, found none"
    return None


def _paid_equals_used(result: Result, want: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("paid_equals_used")
    bad = [f"{_label(r)} pays for {r.get('accelerators_paid')}" for r in recs
           if r.get("accelerators_paid") != r["count"]]
    if want and bad:
        return f"paid_equals_used: options that pay for other than what they use: {bad}"
    if not want and not bad:
        return "paid_equals_used: expected an option that pays for more than it uses, found none"
    return None


def _top1_min_replicas(result: Result, n: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_min_replicas")
    got = int(recs[0].get("replicas") or 0)
    return None if got >= n else f"top1_min_replicas: rank 1 {_label(recs[0])} serves with {got} replica(s) < {n}"


def _min_user_tps(result: Result, tps: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("min_user_tps")
    bad = [f"{_label(r)} = {r.get('tokens_per_s_per_user')} tok/s per user" for r in recs
           if r.get("tokens_per_s_per_user") is None or r["tokens_per_s_per_user"] < tps]
    return f"min_user_tps: options below {tps} tok/s per user: {bad}" if bad else None


def _warnings_none(result: Result, pattern: Any) -> str | None:
    texts = [str(w.get("message", "")) for w in result.get("warnings") or []]
    bad = [t for t in texts if re.search(pattern, t, re.IGNORECASE)]
    return f"warnings_none: warnings match /{pattern}/i: {bad[:3]}" if bad else None


def _first_warning_not(result: Result, pattern: Any) -> str | None:
    warnings = list(result.get("warnings") or [])
    if not warnings:
        return None
    first = str(warnings[0]["id"])
    return f"first_warning_not: the first warning {first} matches /{pattern}/" if re.search(pattern, first) else None


SEVERE = {"warning", "critical", "risk"}
"""Severities counted by `max_warnings` ("warning or worse"; "risk" is the name issue 19 gives the top level)."""


def _max_warnings(result: Result, n: Any) -> str | None:
    severe = [str(w["id"]) for w in result.get("warnings") or [] if w.get("severity") in SEVERE]
    return None if len(severe) <= n else f"max_warnings: {len(severe)} findings of severity warning or worse > {n}: " \
        f"{severe[:12]}"


WHOLE_UNIT_KINDS = frozenset({"rack", "appliance"})
"""Units priced whole, with no published split between accelerators and the rest (`purchase_has_host` exempts them)."""


def _purchase_has_host(result: Result, want: Any) -> str | None:
    recs = [r for r in _recs(result) if r.get("purchase")]
    if not recs:
        return None if not want else "purchase_has_host: no purchase among the recommendations"
    # a unit priced whole (a GB200 NVL72 rack, a Mac Studio) is exempt, as the shared file's key list says
    bad = [_label(r) for r in recs if not (r.get("cost") or {}).get("capex_beyond_accelerators_usd")
           and (r.get("unit") or {}).get("kind") not in WHOLE_UNIT_KINDS]
    if want and bad:
        return f"purchase_has_host: purchases priced without their host, network or rack: {bad}"
    return None


def _min_pflops(result: Result, pflops: Any) -> str | None:
    """count × dense BF16 (else FP16) TFLOPS ÷ 1000 of every recommendation, read from the shipped knowledge base
    (the JSON names the accelerator, not its datasheet)."""
    recs = _recs(result)
    if not recs:
        return _none_msg("min_pflops")
    from gpuadvisor.knowledge.loader import load_catalog

    catalog = load_catalog(user_dir=None)
    bad = []
    for r in recs:
        acc = catalog.accelerators[_acc_id(r)]
        tflops = acc.dense_tflops("bf16") or acc.dense_tflops("fp16") or 0.0
        if r["count"] * tflops / 1000 < pflops:
            bad.append(f"{_label(r)} = {r['count'] * tflops / 1000:,.1f} PFLOPS")
    return f"min_pflops: options below {pflops} dense BF16 PFLOPS: {bad}" if bad else None


def heuristic_matches(warning_id: str, heuristic: str) -> bool:
    """'H13' matches H13 and H13a-style ids, never H130 or (for 'H1') H13."""
    if not warning_id.startswith(heuristic):
        return False
    rest = warning_id[len(heuristic):]
    return not rest or not rest[0].isdigit()


def _warnings_any(result: Result, ids: Any) -> str | None:
    got = [str(w["id"]) for w in result.get("warnings") or []]
    if any(heuristic_matches(w, h) for w in got for h in ids):
        return None
    return f"warnings_any: none of {list(ids)} among warnings {got}"


def _message_any(result: Result, pattern: Any) -> str | None:
    texts = [str(w.get("message", "")) for w in result.get("warnings") or []]
    texts += [str(r.get("title", "")) for r in _recs(result)]
    if any(re.search(pattern, t, re.IGNORECASE) for t in texts):
        return None
    return f"message_any: no warning message or option title matches /{pattern}/i"


def _top1_max_tensor_parallel(result: Result, n: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_max_tensor_parallel")
    split = int(recs[0].get("tensor_parallel") or 1) * int(recs[0].get("pipeline_parallel") or 1)
    return None if split <= n else f"top1_max_tensor_parallel: rank 1 {_label(recs[0])} splits a replica over {split}"


def _fabric_priced(result: Result, want: Any) -> str | None:
    """Every purchase of more than one machine prices its cluster network (cost.fabric_usd > 0)."""
    recs = [r for r in _recs(result) if r.get("purchase") and int((r.get("unit") or {}).get("machines") or 1) > 1]
    bad = [f"{_label(r)} fabric ${(r.get('cost') or {}).get('fabric_usd')}" for r in recs
           if not (r.get("cost") or {}).get("fabric_usd")]
    if want and bad:
        return f"fabric_priced: multi-machine purchases without a priced cluster network: {bad}"
    return None


def _top3_max_replica_count(result: Result, n: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top3_max_replica_count")
    bad = [f"{_label(r)} = {r['count'] / max(1, int(r.get('replicas') or 1)):g} per replica" for r in top
           if r["count"] / max(1, int(r.get("replicas") or 1)) > n]
    return f"top3_max_replica_count: top-3 options use more than {n} accelerators per replica: {bad}" if bad else None


def _top3_unit_kind_not(result: Result, pattern: Any) -> str | None:
    top = _recs(result)[:3]
    if not top:
        return _none_msg("top3_unit_kind_not")
    bad = [f"{_label(r)} is a {(r.get('unit') or {}).get('kind')}" for r in top
           if re.search(pattern, str((r.get("unit") or {}).get("kind") or ""))]
    return f"top3_unit_kind_not: top-3 units of kind /{pattern}/: {bad}" if bad else None


def _top1_acquisition(result: Result, pattern: Any) -> str | None:
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_acquisition")
    got = str(recs[0].get("acquisition") or "")
    if re.search(pattern, got):
        return None
    return f"top1_acquisition: rank 1 {_label(recs[0])} is {got!r}, not /{pattern}/"


def _top1_pricing(result: Result, pattern: Any) -> str | None:
    """Rank 1 is a rental at this pricing (on-demand, spot, reserved-1y, reserved-3y)."""
    recs = _recs(result)
    if not recs:
        return _none_msg("top1_pricing")
    got = str((recs[0].get("instance") or {}).get("pricing") or "")
    if got and re.fullmatch(pattern, got):
        return None
    return f"top1_pricing: rank 1 {_label(recs[0])} is priced {got or 'as no rental'!r}, not /{pattern}/"


def _precision_default(result: Result, pattern: Any) -> str | None:
    got = str(((result.get("answers_effective") or {}).get("precision") or {}).get("weights") or "")
    return None if re.search(pattern, got) else f"precision_default: weights assumed {got!r}, not /{pattern}/"


def _deadline_slack(result: Result, slack: Any) -> str | None:
    """Every training recommendation finishes by deadline_days × (1 − slack)."""
    recs = _recs(result)
    if not recs:
        return _none_msg("deadline_slack")
    deadline = ((result.get("answers_effective") or {}).get("training") or {}).get("deadline_days")
    if deadline is None:
        return "deadline_slack: no training deadline in answers_effective"
    limit = float(deadline) * (1.0 - float(slack))
    bad = [f"{_label(r)} takes {r.get('training_days')} days" for r in recs
           if r.get("training_days") is None or float(r["training_days"]) > limit]
    return f"deadline_slack: options later than {limit:,.1f} of {float(deadline):g} days: {bad}" if bad else None


def _life(result: Result) -> Mapping[str, Any] | None:
    life = result.get("lifecycle")
    return life if isinstance(life, Mapping) else None


def _lifecycle_within_budget(result: Result, want: Any) -> str | None:
    life = _life(result)
    if life is None:
        return "lifecycle_within_budget: not a lifecycle result"
    got = bool(life.get("within_budget"))
    return None if got == bool(want) else (f"lifecycle_within_budget: expected {bool(want)}, got {got} "
                                           f"(total ${life.get('total_cost_usd'):,.0f})")


def _lifecycle_max_total_usd(result: Result, usd: Any) -> str | None:
    life = _life(result)
    if life is None or not life.get("plan"):
        return "lifecycle_max_total_usd: no lifecycle plan"
    total = float(life["total_cost_usd"])
    return None if total <= usd else f"lifecycle_max_total_usd: ${total:,.0f} > ${usd:,.0f}"


def _lifecycle_choice_any(result: Result, choices: Any) -> str | None:
    life = _life(result)
    got = life.get("fleet_choice") if life else None
    return None if got in list(choices) else f"lifecycle_choice_any: fleet choice {got!r} not in {list(choices)}"


def _lifecycle_plan(result: Result, patterns: Any) -> str | None:
    life = _life(result)
    plan = list(life.get("plan") or []) if life else []
    if len(plan) != len(patterns):
        return f"lifecycle_plan: {len(plan)} phases planned, {len(patterns)} patterns given"
    bad = [f"phase {p['phase']} {p['choice']} !~ /{pat}/" for p, pat in zip(plan, patterns, strict=True)
           if pat and not re.search(pat, str(p["choice"]))]
    return f"lifecycle_plan: {bad} (plan: {life.get('description') if life else ''})" if bad else None


def _lifecycle_warnings_any(result: Result, ids: Any) -> str | None:
    got = [str(w["id"]) for w in result.get("warnings") or []] if _life(result) else []
    if any(heuristic_matches(w, h) for w in got for h in ids):
        return None
    return f"lifecycle_warnings_any: none of {list(ids)} among the lifecycle findings {got}"


def _lifecycle_warnings_none(result: Result, ids: Any) -> str | None:
    got = [str(w["id"]) for w in result.get("warnings") or []] if _life(result) else []
    bad = [w for w in got for h in ids if heuristic_matches(w, h)]
    return f"lifecycle_warnings_none: lifecycle findings {bad}" if bad else None


CHECKS: dict[str, Check] = {
    "feasible": _feasible,
    "top_any": _top_any,
    "top1_not": _top1_not,
    "top3_none": _top3_none,
    "top1_rental": _top1_rental,
    "top1_purchase": _top1_purchase,
    "top1_max_count": _top1_max_count,
    "top3_max_count": _top3_max_count,
    "min_count": _min_count,
    "min_total_memory_gb": _min_total_memory_gb,
    "min_tokens_per_s": _min_tokens_per_s,
    "warnings_any": _warnings_any,
    "message_any": _message_any,
    "top3_instance_none": _top3_instance_none,
    "top3_no_spot": _top3_no_spot,
    "paid_equals_used": _paid_equals_used,
    "top1_min_replicas": _top1_min_replicas,
    "min_user_tps": _min_user_tps,
    "warnings_none": _warnings_none,
    "first_warning_not": _first_warning_not,
    "max_warnings": _max_warnings,
    "purchase_has_host": _purchase_has_host,
    "min_pflops": _min_pflops,
    "top1_max_tensor_parallel": _top1_max_tensor_parallel,
    "fabric_priced": _fabric_priced,
    "top3_max_replica_count": _top3_max_replica_count,
    "top3_unit_kind_not": _top3_unit_kind_not,
    "top1_acquisition": _top1_acquisition,
    "top1_pricing": _top1_pricing,
    "precision_default": _precision_default,
    "deadline_slack": _deadline_slack,
    "lifecycle_within_budget": _lifecycle_within_budget,
    "lifecycle_max_total_usd": _lifecycle_max_total_usd,
    "lifecycle_choice_any": _lifecycle_choice_any,
    "lifecycle_plan": _lifecycle_plan,
    "lifecycle_warnings_any": _lifecycle_warnings_any,
    "lifecycle_warnings_none": _lifecycle_warnings_none,
}
PHASE_KEY = "phase"
"""A list of expectation tables, one per phase of a lifecycle case (checked against `phases[i]`)."""


def unknown_keys(expect: Mapping[str, Any]) -> list[str]:
    """Expectation keys this checker does not know (a typo must fail, not pass silently), in phases too."""
    bad = set(expect) - set(CHECKS) - {PHASE_KEY}
    for i, table in enumerate(expect.get(PHASE_KEY) or [], start=1):
        bad |= {f"phase[{i}].{k}" for k in unknown_keys(table)}
    return sorted(bad)


def check(result: Result, expect: Mapping[str, Any]) -> list[str]:
    """Every failed expectation, one line each; empty when the result satisfies them all."""
    failures = [f"unknown expectation key {k!r}" for k in unknown_keys(expect)]
    for key, want in expect.items():
        if key in CHECKS:
            problem = CHECKS[key](result, want)
            if problem:
                failures.append(problem)
    phases = list(result.get("phases") or [])
    for i, table in enumerate(expect.get(PHASE_KEY) or [], start=1):
        if i > len(phases):
            failures.append(f"phase[{i}]: the result has {len(phases)} phase(s)")
            continue
        failures += [f"phase[{i}]: {f}" for f in check(phases[i - 1], table) if not f.startswith("unknown")]
    return failures


def top3_summary(result: Result) -> list[str]:
    """The first three recommendations as (id, count, instance, score) lines, for failure messages."""
    lines = []
    for r in _recs(result)[:3]:
        inst = r.get("instance")
        inst_text = f"{inst['id']} ×{inst['count']} ({inst['pricing']})" if inst else "purchase"
        lines.append(f"{r.get('rank')}. {_acc_id(r)} count={r['count']} instance={inst_text} "
                     f"score={r.get('score', float('nan')):.3g}")
    return lines or ["(no recommendations)"]


def describe(case_id: str, source: str, result: Result, failures: Sequence[str]) -> str:
    """A failure message that makes the case diagnosable without re-running it."""
    lines = [f"expert case {case_id!r} failed", f"  source: {source}", "  failures:"]
    lines += [f"    - {f}" for f in failures]
    lines.append(f"  feasible: {result.get('feasible')}")
    lines.append("  top 3 (id, count, instance, score):")
    lines += [f"    {t}" for t in top3_summary(result)]
    hints = result.get("to_make_feasible") or []
    if hints:
        lines.append(f"  to_make_feasible: {list(hints)[:3]}")
    warn_ids = [w.get("id") for w in result.get("warnings") or []]
    lines.append(f"  warnings: {warn_ids}")
    life = _life(result)
    if life is not None:
        lines.append(f"  lifecycle: {life.get('description')} — ${float(life.get('total_cost_usd') or 0):,.0f}, "
                     f"within budget: {life.get('within_budget')}")
        for p in result.get("phases") or []:
            lines.append(f"  phase {p.get('phase')} ({p.get('name')}) top 3:")
            lines += [f"    {t}" for t in top3_summary(p)]
    return "\n".join(lines)
