"""One line naming a consultation, for the recent list and report titles (the app and the save dialog share it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuadvisor.rules.consultation.result import RecommendResult
    from gpuadvisor.rules.inputs.answers import Answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers


def consultation_title(answers: Answers | LifecycleAnswers, result: RecommendResult | None = None,
                       what_if: str | None = None) -> str:
    """One line naming a consultation (recent list, report titles): workload, model, precision — the precision the
    consultation used (`result`: QLoRA's NF4, a model's native format) when it is known; a lifecycle's phases; a
    what-if's change (two what-ifs of one consultation are two distinct entries, and what is saved from one is
    listed under the same name as its consultation)."""
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers  # imported when first needed (light start-up)

    if isinstance(answers, LifecycleAnswers):
        phases = " → ".join(p.name for p in answers.phases)
        title = f"lifecycle · {phases} · {consultation_title(answers.phases[0].answers)}"
        return title + (f" · what-if: {what_if}" if what_if else "")
    model = answers.model
    name = model.name or (f"{model.params_b:g}B" if model.params_b else Path(model.config or "?").parent.name)
    weights = result.answers_effective.get("precision", {}).get("weights") if result is not None else None
    parts = [answers.workload, name, str(weights or answers.precision.weights), *_given_targets(answers)]
    return " · ".join(parts + ([f"what-if: {what_if}"] if what_if else []))


def _given_targets(answers: Answers) -> list[str]:
    """The answers that tell two consultations of one model apart, when given: the load or the training tokens,
    the context, where it runs."""
    out: list[str] = []
    inf, training = answers.inference, answers.training
    if answers.workload == "inference":
        if inf.requests_per_minute is not None:
            out.append(f"{inf.requests_per_minute:,g} req/min")
        elif inf.concurrent_requests is not None:
            out.append(f"{inf.concurrent_requests:,} in flight")
    elif "tokens_b" in training.model_fields_set and training.tokens_b is not None:
        out.append(f"{training.tokens_b:g}B tokens")
    if "context_tokens" in answers.precision.model_fields_set:
        out.append(f"context {answers.precision.context_tokens:,}")
    if answers.deployment.where != "either":
        out.append(answers.deployment.where.replace("_", "-"))
    return out
