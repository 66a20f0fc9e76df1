"""What the user entered, turned into an answers dict and validated by the `Answers` model itself.

The questionnaire keeps raw entries (text as typed, so Back and Next never lose even an invalid entry); this module
builds the partial answers dict from the questions that apply, validates it with pydantic and maps every error back
to the question it concerns. Answers the questionnaire does not ask (loaded from a file) are carried through unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuadvisor.tui.questionnaire.questions import QUESTIONS, TEXT_KINDS, Question, Raw, applicable_steps

if TYPE_CHECKING:
    from pydantic import ValidationError

    from gpuadvisor.rules.inputs.answers import Answers

NONE = "none"
"""Typed as the current GPU: no GPU of one's own (and no detected default)."""
GLOBAL = ""
"""Error key of a problem that concerns several answers (a contradiction between them)."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[bB]?\s*$")


def model_answer(text: str) -> dict[str, Any]:
    """Read the model entry: `70` or `70b` is a bare size, a path to a .json file or folder a config, else a name
    (a knowledge-base name or a Hugging Face id such as `Qwen/Qwen3-32B`, when no such path exists)."""
    from gpuadvisor.knowledge.hf_hub import parse_hub_id

    text = text.strip()
    if not text:
        return {}
    m = _SIZE.match(text)
    if m:
        return {"params_b": float(m.group(1))}
    from gpuadvisor.tui import served

    if served.current() is not None:  # the shared app: the server's files are neither tested nor read
        looks_like_path = parse_hub_id(text) is None and ("/" in text or "\\" in text or text.lower().endswith(".json"))
        return {"config": text} if looks_like_path else {"name": text}  # a config is refused in words later
    path = Path(text).expanduser()
    # os.path's tests return False for any path the system refuses (a name over 255 bytes, a NUL byte): whatever
    # was typed or pasted, the field never crashes the app; the consultation then names the problem
    is_dir = os.path.isdir(path)
    hub_id = parse_hub_id(text) is not None and not os.path.exists(path)  # org/name: a Hugging Face model id
    if text.lower().endswith(".json") or is_dir or (("/" in text or "\\" in text) and not hub_id):
        if is_dir:
            path = path / "config.json"
        return {"config": str(path)}
    return {"name": text}


def number_text(text: str) -> str:
    """Drop thousands separators and spaces so `1,000` and `1 000` read as 1000 (pydantic parses the rest)."""
    return re.sub(r"[,_\s]", "", text)


def _count(text: str) -> str | float:
    """A count in billions read as the flag reads it ('500M' → 0.5, '2T' → 2000, '7e9' → 7, '70' → 70); anything
    else as typed, for the answers model to name as wrong."""
    from gpuadvisor.rules.sizing.units import parse_billions

    try:
        return parse_billions(text)
    except ValueError:
        return text


def _amount(text: str) -> str | float:
    """A number read as the flags read it ('2M' → 2,000,000, '250k' → 250,000: rules/sizing/units, the one parser);
    anything else as typed, for the answers model to name as wrong (or to take as it is: an int field's '16')."""
    from gpuadvisor.rules.sizing.units import parse_amount

    if text[-1:].upper() not in ("K", "M", "B", "T"):
        return text  # a plain number: the answers model parses and range-checks it (an int stays an int)
    try:
        value = parse_amount(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() else value


def _put(d: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        d = d.setdefault(p, {})
    d[leaf] = value


def visible_questions(raw: Raw) -> list[Question]:
    return [q for s in applicable_steps(raw) for q in s.visible(raw)]


@dataclass
class AnswerState:
    """The answers of one consultation as entered. `extra` holds given answers no question covers."""

    raw: dict[str, object] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    model_id: str | None = None
    """Knowledge-base id the model entry resolved to (so an ambiguous loose name cannot change meaning later)."""
    detected: dict[str, Any] = field(default_factory=dict)
    """`current.*` answers the GPUs detected on this machine stand for (rules/current_gpu.detected_answers): the
    defaults of the current-GPU questions, applied while the current-GPU entry is left empty."""
    native_weights: str | None = None
    """The weight format the chosen model is published in when it has its own (gpt-oss: MXFP4): the default
    precision for serving it (rules/answers.contextual_defaults)."""
    model_from: int | None = None
    """In a lifecycle entered with "and then?": the earlier phase whose trained model this phase uses."""

    def copy(self) -> AnswerState:
        return AnswerState(dict(self.raw), dict(self.extra), self.model_id, dict(self.detected),
                           native_weights=self.native_weights, model_from=self.model_from)

    def with_model_format(self, catalog: Any) -> AnswerState:
        """Set the model's own weight format (gpt-oss: MXFP4) from the knowledge base, which the precision's
        default depends on; returns self."""
        model = catalog.models.get(self.model_id or str(self.raw.get("model", ""))) if catalog is not None else None
        self.native_weights = model.checkpoint_format if model is not None else None
        return self

    def uses_detection(self) -> bool:
        """The current-GPU entry is empty and detection found a GPU: the detected answers apply."""
        entry = str(self.raw.get("current.gpu") or "").strip()
        return not entry and "current.gpu_name" in self.detected and "current.gpu" not in self.extra

    # --- raw -> answers dict ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The partial answers dict: given values of the questions that apply, plus the carried-through extras."""
        data: dict[str, Any] = {}
        visible = visible_questions(self.raw)
        asked = {q.key for q in visible}
        for dotted, value in self.extra.items():
            if dotted not in asked:  # a loaded answer whose question is asked now: the entry decides
                _put(data, dotted, value)
        for q in visible:
            if q.key not in self.raw:
                continue
            value = self.raw[q.key]
            if q.kind == "model":
                model = model_answer(str(value))
                if "name" in model and self.model_id:
                    model["name"] = self.model_id
                if model:
                    data["model"] = model
            elif q.kind in TEXT_KINDS:
                text = number_text(str(value))
                if text:
                    _put(data, q.key, _count(text) if q.count else _amount(text))
            elif q.kind == "text":
                text = str(value).strip()
                if text and text.lower() != NONE:
                    _put(data, q.key, text)
            else:
                _put(data, q.key, value)
        if self.uses_detection():
            for dotted, value in self.detected.items():
                if dotted == "current.gpu_count" and number_text(str(self.raw.get(dotted) or "")):
                    continue  # a count the user typed wins over the detected one
                _put(data, dotted, value)
        return data

    def validate(self) -> tuple[Answers | None, dict[str, str]]:
        """Validate with the Answers model; errors keyed by question key (GLOBAL for contradictions)."""
        from pydantic import ValidationError

        from gpuadvisor.rules.inputs.answers import Answers

        try:
            return Answers.model_validate(self.to_dict()), {}
        except ValidationError as exc:
            return None, errors_by_question(exc)

    # --- answers -> raw -----------------------------------------------------------------------------------------
    @classmethod
    def from_answers(cls, answers: Answers, detected: Mapping[str, Any] | None = None) -> AnswerState:
        """Entries that reproduce `answers` exactly: asked keys go to raw (numbers as text); given answers that no
        question covers, or whose question the skip logic would not ask, are also carried through in `extra`.
        `detected` (this machine's GPUs as `current.*` answers): when the answers' current GPU is exactly what was
        detected, it stays the detected default (an empty entry), as it was entered."""
        state = cls(detected=dict(detected or {}))
        given = answers.given()
        current = given.get("current", {})
        found = {k.removeprefix("current."): v for k, v in state.detected.items()}
        if "gpu_name" in found and current and all(found.get(k) == v for k, v in current.items()):
            given.pop("current")
        model = given.pop("model", {})
        if "name" in model:
            state.raw["model"] = str(model["name"])
        elif "params_b" in model:
            state.raw["model"] = f"{model['params_b']:g}"
        elif "config" in model:
            state.raw["model"] = str(model["config"])
        from gpuadvisor.rules.inputs.answers import flatten_dotted

        for dotted, value in flatten_dotted(given):
            q = QUESTIONS.get(dotted)
            if q is None:
                state.extra[dotted] = value
            elif q.kind in TEXT_KINDS:
                state.raw[dotted] = _number_to_text(value)
            else:
                state.raw[dotted] = value
        asked = {q.key for q in visible_questions(state.raw)}
        for key in [k for k in state.raw if k not in asked]:
            state.extra[key] = _flat_get(given, key)  # sent while its question is skipped; shown if it is asked
        return state


def _flat_get(d: Mapping[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        d = d[part]
    return d


def _number_to_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def errors_by_question(exc: ValidationError) -> dict[str, str]:
    """Map pydantic errors to question keys: `model.*` → `model`, contradictions between answers → GLOBAL."""
    out: dict[str, str] = {}
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        dotted = ".".join(loc)
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling)"
        if dotted in QUESTIONS:
            key = dotted
        elif loc and loc[0] == "model":
            key = "model"
        else:
            key = GLOBAL
        out.setdefault(key, f"{dotted}: {msg}" if dotted else msg)
    return out


def detected_hint(key: str, detected: Mapping[str, Any]) -> str | None:
    """The placeholder a current-GPU question shows for what was detected (None: keep its usual one)."""
    if not detected:
        return None
    found = "current.gpu_name" in detected
    if key == "current.gpu":
        if not found:
            return "none detected (empty: none)"
        gpu = detected.get("current.gpu")
        if gpu:
            return f"detected: {gpu}"
        memory = detected.get("current.gpu_memory_gb")
        return f"detected: unknown {detected['current.gpu_name']}" + (f" ({memory:g} GB)" if memory else "")
    if key == "current.gpu_count" and found:
        return f"detected: {detected['current.gpu_count']}"
    return None


def default_text(q: Question, raw: Mapping[str, Any] | None = None, native: str | None = None) -> str:
    """The placeholder of a number field: its default, or an example when it has none."""
    value = default_value(q.key, raw, native)
    if value is None:
        return q.example or "optional"
    return f"default: {_number_to_text(value)}"


def empty_entry(q: Question, raw: Mapping[str, Any] | None = None, native: str | None = None) -> str:
    """What an empty entry of a field means, for its why-line, from the source its box's placeholder has
    (`default_text` → `default_value`): a default the answers so far imply (rules/inputs/answers.py
    contextual_defaults) with why they imply it, else the example's "(empty: …)" for this workload, which describes
    the field's own default. Issue 42: production serving's "Peak concurrent requests" read "default: 32" in the box
    and "Empty: the batch size" under it."""
    from gpuadvisor.rules.inputs.answers import IMPLIED_WHY, contextual_defaults

    _, sep, rest = q.example.partition(" (empty: ")
    implied = contextual_defaults(dict(raw or {}), native)
    if q.kind in {"int", "float"} and implied.get(q.key) is not None:
        why = IMPLIED_WHY.get(q.key)
        return _number_to_text(implied[q.key]) + (f" ({why})" if why else "")
    return empty_meaning(rest.removesuffix(")"), (raw or {}).get("workload")) if sep else ""


WORKLOAD_CLAUSES = {"training": " from scratch", "finetune": " fine-tuning"}
"""How an "(empty: …)" text names the workload each of its clauses is for: `20 per parameter from scratch, 0.1
fine-tuning`."""


def empty_meaning(text: str, workload: object) -> str:
    """What an empty entry means to this workload: of `20 per parameter from scratch, 0.1 fine-tuning` someone
    fine-tuning reads `0.1 (fine-tuning)`, someone training `20 per parameter (from scratch)`; a text whose clauses
    do not each name a workload, or a workload none names, is kept whole."""
    clauses = text.split(", ")
    tails = tuple(WORKLOAD_CLAUSES.values())
    if len(clauses) < 2 or not all(c.endswith(tails) for c in clauses):
        return text
    tail = WORKLOAD_CLAUSES.get(str(workload))
    mine = next((c for c in clauses if tail and c.endswith(tail)), None)
    return text if mine is None or tail is None else f"{mine.removesuffix(tail)} ({tail.strip()})"


@cache
def _defaults() -> dict[str, Any]:
    from gpuadvisor.rules.inputs.answers import Answers

    return Answers().flat()


def native_weights_of(state: AnswerState, catalog: Any) -> str | None:
    """The weight format the state's model is published in (gpt-oss: MXFP4), from the knowledge base: what the
    questionnaire sets when a model is typed, for a state rebuilt from answers (a file, Recent) that lacks it."""
    models = getattr(catalog, "models", None)
    name = state.model_id or state.raw.get("model")
    model = models.get(str(name)) if models is not None and name else None
    return model.checkpoint_format if model is not None else None


def default_value(key: str, raw: Mapping[str, Any] | None = None, native: str | None = None) -> Any:
    """The default the consultation will apply to a dotted key, given the answers so far (`raw`) and the model's
    own weight format (`native`): a default implied by them (QLoRA → NF4, gpt-oss → MXFP4) first, else the
    `Answers` default (None when optional)."""
    if raw or native:
        from gpuadvisor.rules.inputs.answers import contextual_defaults

        implied = contextual_defaults(raw or {}, native)
        if key in implied:
            return implied[key]
    return _defaults().get(key)
