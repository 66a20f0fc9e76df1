"""The questionnaire as data: steps, the order of the questions and their skip logic.

The words of each question (label, "why this matters" line, unit, example, choice labels) are the answers model's
own field metadata (rules/inputs/answers.py `ask`), the same that names the command-line flags and fills the JSON
Schema, so a question, its flag and the answers file cannot drift apart. One generic screen renders these specs (see
`questionnaire.py`); asking one more answer means adding `ask(key)` to a step here. Each `why` line cites the seed
document and the HEURISTICS.md id it comes from, so the user can look it up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

Kind = Literal["radio", "select", "int", "float", "bool", "model", "multi", "text"]
Raw = Mapping[str, object]
"""What the user entered, by dotted answers key: text for number fields, the value for choices and switches."""

TEXT_KINDS: frozenset[str] = frozenset({"int", "float", "model"})
"""Number and model entries kept as typed text (`text` questions are free text and kept as they are)."""


@dataclass(frozen=True)
class Choice:
    value: str | int
    label: str


def _always(raw: Raw) -> bool:
    return True


def workload_of(raw: Raw) -> str:
    """The chosen workload (the answers' default when none was chosen yet)."""
    value = raw.get("workload", "inference")
    return value if isinstance(value, str) else "inference"


def _inference(raw: Raw) -> bool:
    return workload_of(raw) == "inference"


def _trains(raw: Raw) -> bool:
    return workload_of(raw) != "inference"


def _finetune(raw: Raw) -> bool:
    return workload_of(raw) == "finetune"


def _adapter(raw: Raw) -> bool:
    return _finetune(raw) and raw.get("finetune.method", "lora") != "full"


def _where(raw: Raw) -> str:
    value = raw.get("deployment.where", "either")
    return value if isinstance(value, str) else "either"


def _may_rent(raw: Raw) -> bool:
    return _where(raw) != "on_prem"


def _may_reserve(raw: Raw) -> bool:
    """Reservations are priced in the cloud: 1- and 3-year terms for serving, short reserved clusters for a run."""
    return _may_rent(raw)


def _may_buy_for_a_run(raw: Raw) -> bool:
    """Bought hardware for a training or fine-tuning run: its delivery and what happens to it after the run."""
    return _may_buy(raw) and _trains(raw)


def _may_buy(raw: Raw) -> bool:
    return _where(raw) != "cloud"


@dataclass(frozen=True)
class Question:
    """One answer to ask for. `key` is the dotted answers key (`model` stands for model.name|params_b|config)."""

    key: str
    label: str
    kind: Kind
    why: str | Mapping[str, str]
    """One line: why the answer matters, with its source (document, heuristic id); per workload when a mapping.
    `{buy:ID*N}` stands for the knowledge base's purchase price of N × accelerator ID (`resolve_prices`)."""
    choices: tuple[Choice, ...] = ()
    unit: str = ""
    example: str = ""
    """Shown as the placeholder of an optional number field that has no default."""
    applies: Callable[[Raw], bool] = _always
    count: bool = False
    """A count in billions that also takes a suffix (500M, 2T), as the answer's flag does."""

    @property
    def input_id(self) -> str:
        return "q-" + self.key.replace(".", "-").replace("_", "-")

    def why_for(self, raw: Raw, catalog: Any | None = None) -> str:
        """The why line for the answers so far, its prices read from `catalog` (see `resolve_prices`)."""
        why = self.why if isinstance(self.why, str) else self.why.get(workload_of(raw), next(iter(self.why.values())))
        return resolve_prices(why, catalog)


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    short: str
    intro: str
    questions: tuple[Question, ...] = ()
    applies: Callable[[Raw], bool] = _always
    review: bool = False

    def visible(self, raw: Raw) -> list[Question]:
        """The questions of this step that apply to the answers so far (the skip logic)."""
        return [q for q in self.questions if q.applies(raw)]


KINDS: dict[str, Kind] = {"choice": "radio", "bool": "bool", "int": "int", "float": "float", "list": "multi",
                          "str": "text"}
"""The control each kind of answer gets, unless its metadata names another (`widget`)."""


def ask(key: str, applies: Callable[[Raw], bool] = _always, *, as_key: str | None = None) -> Question:
    """The question of an answer field, in the words its metadata gives (rules/inputs/answers.py: the one vocabulary).
    `as_key` names the question differently from the field (`model` stands for model.name|params_b|config)."""
    from gpuadvisor.rules.inputs.answers import answer_fields

    field = next(f for f in answer_fields() if f.key == key)
    if field.question is None:
        raise ValueError(f"{key}: the answers model gives it no question")
    kind = cast(Kind, field.widget or KINDS[field.kind])
    choices = tuple(Choice(v, label) for v, label in field.choices.items())
    return Question(as_key or key, field.question, kind, field.hint, choices, field.unit, field.example, applies,
                    count=field.count)


STEPS: tuple[Step, ...] = (
    Step("workload", "Workload", "Workload", "What will the hardware do?",
         (ask("workload"), ask("stage"), ask("finetune.method", _finetune), ask("finetune.lora_rank", _adapter))),
    Step("model", "Model", "Model", "Which model? A knowledge-base name, a bare size in billions, or a path to "
                                    "config.json.",
         (ask("model.name", as_key="model"),)),
    Step("precision", "Precision & context", "Precision",
         "How the numbers are stored, and how much text each request holds.",
         (ask("precision.weights"), ask("precision.kv_cache", _inference), ask("precision.context_tokens"),
          ask("precision.batch_size"))),
    Step("targets", "Targets", "Targets", "What the hardware must deliver.",
         (ask("inference.requests_per_minute", _inference), ask("inference.input_tokens", _inference),
          ask("inference.output_tokens", _inference), ask("inference.concurrent_requests", _inference),
          ask("inference.daily_active_users", _inference),
          ask("inference.latency_p95_s", _inference), ask("inference.min_tokens_per_s_per_user", _inference),
          ask("inference.failover", _inference), ask("inference.models_per_gpu", _inference),
          ask("inference.engine", _inference),
          ask("training.tokens_b", _trains), ask("training.deadline_days", _trains),
          ask("training.deadline_from", _may_buy_for_a_run), ask("training.global_batch", _trains),
          ask("training.optimizer", _trains), ask("training.checkpointing", _trains))),
    Step("budget", "Budget", "Budget", "Leave empty what does not limit you.",
         (ask("budget.capex_usd", _may_buy), ask("budget.hourly_usd", _may_rent), ask("budget.monthly_usd"))),
    # what decides early comes first: the hardware you have may be the answer, then where the rest comes from
    Step("deployment", "Deployment & framework", "Deploy", "What you have, where the rest runs, and its software.",
         (ask("current.gpu"), ask("current.gpu_count"), ask("deployment.where"), ask("current.pc_slots", _may_buy),
          ask("deployment.hours_per_month"), ask("deployment.utilization", _may_buy),
          ask("deployment.lifetime_years"), ask("deployment.after_run", _may_buy_for_a_run),
          ask("deployment.spot", _may_rent),
          ask("deployment.reservations", _may_reserve), ask("deployment.sensitive_data", _may_rent),
          ask("framework.name"), ask("framework.porting"), ask("constraints.max_gpus"), ask("constraints.vendors"),
          ask("deployment.providers", _may_rent), ask("deployment.power_usd_per_kwh", _may_buy))),
    Step("review", "Review", "Review", "Check the answers, then get the results.", review=True),
)

QUESTIONS: dict[str, Question] = {q.key: q for step in STEPS for q in step.questions}


PRICE = re.compile(r"\{buy:([\w.-]+)(?:\*(\d+))?\}")


def resolve_prices(text: str, catalog: Any | None) -> str:
    """`{buy:nvidia-rtx-4090}` → the knowledge base's purchase price (`$1,599`), `{buy:ID*8}` eight of them; "a
    price" while the knowledge base is loading or when it has none."""
    def price(m: re.Match[str]) -> str:
        acc = catalog.accelerators.get(m.group(1)) if catalog is not None else None
        value = acc.purchase_price_usd.value if acc is not None and acc.purchase_price_usd else None
        return "a price" if value is None else f"${value * int(m.group(2) or 1):,.0f}"

    return PRICE.sub(price, text)


def applicable_steps(raw: Raw) -> list[Step]:
    """Steps that have at least one applicable question (and the review)."""
    return [s for s in STEPS if s.review or (s.applies(raw) and s.visible(raw))]
