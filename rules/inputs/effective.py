"""The effective answers: every answer as the consultation used it, built once, shown by every screen and report.

The answers model holds what the user gave plus static defaults; the consultation then decides more: the model's
native checkpoint format (gpt-oss is sized in MXFP4, not the BF16 default), QLoRA's NF4 base, the training tokens a
run is sized for when none were given, the hours a month and the busy fraction that price every option, the
concurrency a server is sized for. A label that says BF16 while the sizing used NF4 misleads, so the result carries
the values that were used (`answers_effective`) and, for each answer the user did not give, `key = value (why)`
(`defaults_applied`), one line per key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuadvisor.rules.inputs.answers import IMPLIED_WHY, Answers, flatten_dotted
from gpuadvisor.rules.inputs.resolve import Resolved
from gpuadvisor.rules.inputs.user_load import ANSWER_KEYS as USER_ANSWER_KEYS
from gpuadvisor.rules.inputs.workload import Workload

IRRELEVANT: dict[str, tuple[str, ...]] = {
    "inference": ("training.", "finetune."),
    "training": ("inference.", "finetune.", "precision.kv_cache"),
    "finetune": ("inference.", "precision.kv_cache"),
}
"""Answers a workload never reads: left out of the defaults list (they would only be noise)."""
SILENT_WHEN_UNSET = frozenset({"current.gpu_name", "current.detection", "current.gpu_memory_gb",
                               "current.gpu_utilization", "current.gpu_count", "inference.daily_active_users",
                               "inference.sessions_per_user_per_day", "inference.requests_per_session",
                               "inference.peak_to_average"})
"""Answers set by detection or meaningful only with another one (the daily-users load and its factors, an
alternative to requests_per_minute): not listed as "not set"."""


def effective_answers(answers: Answers, resolved: Resolved, work: Workload | None,
                      usage: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(`answers_effective`, `defaults_applied`) from the answers, the resolution, the workload and the derived usage
    fact (`work` None, `usage` empty: the consultation stopped before deriving them)."""
    eff = answers.model_dump(mode="json")
    workload = answers.workload
    given = set(_given(answers))
    used: dict[str, tuple[Any, str]] = {}  # dotted key -> (value used, why), for answers not given
    model = resolved.model
    if "model.name" not in given and "model.params_b" not in given and "model.config" not in given:
        used["model.name"] = (model.id, "no model given")
    eff["precision"]["weights"] = resolved.weights.id
    eff["precision"]["kv_cache"] = resolved.kv_cache.id
    for key, chosen in resolved.chosen.items():  # QLoRA's NF4, a published MXFP4: the resolution's own reason
        if key.startswith("precision."):
            used[key] = (chosen.value, chosen.why)
    if work is not None:
        _from_workload(work, given, eff, used)
    if usage:
        if "deployment.hours_per_month" not in given:
            hours = float(usage["hours_per_month"])
            eff["deployment"]["hours_per_month"] = hours
            used["deployment.hours_per_month"] = (hours, _usage_why(answers, "hours"))
        if "deployment.utilization" not in given:
            util = float(usage["utilization"])
            eff["deployment"]["utilization"] = util
            used["deployment.utilization"] = (util, _usage_why(answers, "utilization"))
    for key, value in answers.implied().items():  # the service level of production, a hobbyist's own desktop
        if key in IMPLIED_WHY and key not in used:  # the resolution's own reason (QLoRA's NF4 …) is the precise one
            section, _, leaf = key.partition(".")
            eff[section][leaf] = value
            used[key] = (value, IMPLIED_WHY[key])
    others = [n for n in resolved.notes if n.partition(" = ")[0] not in used]  # detection, an unknown own GPU
    return eff, _defaults(answers, eff, used, workload, others)


def _from_workload(work: Workload, given: set[str], eff: dict[str, Any], used: dict[str, tuple[Any, str]]) -> None:
    """What the workload decided that no answer said: the training tokens, the concurrency, a daily-users load."""
    if work.training and "training.tokens_b" not in given and work.tokens_b is not None:
        tokens = float(work.tokens_b)
        eff["training"]["tokens_b"] = tokens
        used["training.tokens_b"] = (tokens, (work.tokens_default or "default").replace(" (", ", ").rstrip(")"))
    if work.inference and "inference.concurrent_requests" not in given and work.per_option_batch:
        # a request rate was asked: each option batches what the rate needs, so no single figure was assumed
        used["inference.concurrent_requests"] = ("each option's batch", "as many as the request rate keeps in flight")
    elif work.inference and "inference.concurrent_requests" not in given and work.concurrency:
        eff["inference"]["concurrent_requests"] = work.concurrency
        used["inference.concurrent_requests"] = (work.concurrency, IMPLIED_WHY["inference.concurrent_requests"]
                                                 if work.production_stated and not work.load_given else
                                                 "the batch size")
    if work.inference and work.load_from_users and "inference.requests_per_minute" not in given \
            and work.requests_per_minute is not None:
        rpm = float(work.requests_per_minute)
        eff["inference"]["requests_per_minute"] = rpm
        used["inference.requests_per_minute"] = (rpm, f"from {work.load_from_users.rsplit(' = ', 1)[0]}")
        for leaf, asm in USER_ANSWER_KEYS.items():
            value = getattr(work, leaf)
            if f"inference.{leaf}" not in given and value is not None:
                eff["inference"][leaf] = float(value)
                used[f"inference.{leaf}"] = (float(value), f"assumptions.toml {asm}")
    if work.training and not work.deadline_from_given and work.deadline_from in ("today", "delivery"):
        eff["training"]["deadline_from"] = work.deadline_from  # auto: what the answers allow (issue 39)
        used["training.deadline_from"] = (work.deadline_from, work.deadline_from_why)


def _usage_why(answers: Answers, what: str) -> str:
    d = answers.deployment
    if what == "hours" and d.utilization is not None:
        return "from deployment.utilization × 730 h"
    if what == "utilization" and d.hours_per_month is not None:
        return "from deployment.hours_per_month ÷ 730 h"
    if answers.stage != "production":
        return f"typical while {answers.stage}"
    return "production: always on" if what == "hours" else "production: owned hardware assumed busy this share"


def _given(answers: Answers) -> list[str]:
    defaults = set(answers.defaults_applied())
    return [k for k in answers.flat() if k not in defaults]


def _defaults(answers: Answers, eff: dict[str, Any], used: dict[str, tuple[Any, str]], workload: str,
              notes: list[str]) -> list[str]:
    """`key = value` (with `(why)` when the consultation decided it) for every answer the user did not give."""
    flat = dict(flatten_dotted(eff))
    out = []
    for key in answers.defaults_applied():
        if key.startswith("model.") or key.startswith(IRRELEVANT.get(workload, ())):
            continue
        if key in used:
            value, why = used[key]
            out.append(f"{key} = {show(value)} ({why})")
            continue
        value = flat.get(key)
        if value is None and key in SILENT_WHEN_UNSET:
            continue
        out.append(f"{key} = {show(value)}")
    if "model.name" in used:
        value, why = used["model.name"]
        out.append(f"model.name = {value} ({why})")
    return sorted(out + notes)


def show(value: Any) -> str:
    """A value as the defaults list prints it: lists joined, floats without trailing zeros, None as not set."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"  # never scientific notation
    return str(value)
