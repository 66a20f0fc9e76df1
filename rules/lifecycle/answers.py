"""Answers with several workloads: `[[phase]]` tables under one budget (issue 21).

A lifecycle file lists its workloads as `[[phase]]` tables, each holding the fields of a one-workload answers file
(`workload`, `model`, `training`, `inference`, `precision`…) plus four of its own: `name`, `start_month`, `months` and
`runs_per_month`. The top level holds what every phase shares — `budget` (only there: one budget for the whole),
`deployment`, `constraints`, `framework`, `current`, `stage` — and `[lifecycle]` (`horizon_months`). A phase's own
keys win over the shared ones, key by key.

A phase serves or fine-tunes the model an earlier phase trained by naming it: `model = "phase:1"` (by number, from
1) or `model = "phase:pretrain"` (by the phase's `name`); it then inherits that phase's `[model]` table.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.rules.inputs.answers import (
    Answers,
    describe_validation_error,
    parse_answers,
    put_dotted,
    read_answers_source,
)

SHARED_SECTIONS = ("budget", "deployment", "constraints", "framework", "current", "stage")
"""Top-level tables (and `stage`) that apply to every phase of a lifecycle file."""
PHASE_KEYS = ("name", "start_month", "months", "runs_per_month")
"""A phase's own keys, beside the fields of a one-workload answers file."""
MODEL_REF_PREFIX = "phase:"
MAX_PHASES = 12
"""Most phases a lifecycle file may hold: a year of monthly phases. Each phase is a whole consultation (about half
a second), and the fleet search's states grow with the phases (rules/lifecycle/fleet_search.py); a repeated workload is
one phase with `runs_per_month`."""
DAYS_PER_MONTH = 365.25 / 12


class LifecycleSettings(BaseModel):
    """The `[lifecycle]` table."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    horizon_months: float | None = Field(default=None, gt=0, le=240, description=(
        "months the whole plan is costed over (purchases are held, serving runs, until its end); unset = "
        "deployment.lifetime_years × 12"))


class PhaseSettings(BaseModel):
    """A phase's own keys."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str | None = Field(default=None, min_length=1, max_length=60, description="a short name, e.g. pretrain")
    start_month: float | None = Field(default=None, ge=0, le=240, description=(
        "month the phase starts (0 = the start of the horizon); unset = when the previous phase ends (side by "
        "side: give the same start_month)"))
    months: float | None = Field(default=None, gt=0, le=240, description=(
        "how long the phase runs; unset = one run for training or fine-tuning, the rest of the horizon for "
        "serving"))
    runs_per_month: float | None = Field(default=None, gt=0, le=1000, description=(
        "training or fine-tuning repeated every month for `months` (e.g. a monthly fine-tune while serving); "
        "unset = one run"))


SHARED_ONLY = ("budget",)
"""Answers a lifecycle holds only at its top level (one budget for the whole): a change to a phase's goes there."""


@dataclass(frozen=True)
class Phase:
    """One workload of a lifecycle, with the answers a one-workload consultation of it takes."""

    index: int
    """1-based, in file order."""
    name: str
    answers: Answers
    settings: PhaseSettings
    model_from: int | None
    """The phase whose model this one uses (`model = "phase:N"`), else None."""

    @property
    def label(self) -> str:
        """`phase 1 (pretrain)`."""
        return f"phase {self.index} ({self.name})"


@dataclass(frozen=True)
class LifecycleAnswers:
    """A lifecycle file, validated: its phases in order, the shared answers and the horizon."""

    phases: tuple[Phase, ...]
    settings: LifecycleSettings
    shared: Mapping[str, Any]
    """The top-level tables as given (budget, deployment…)."""
    data: Mapping[str, Any]
    """The file as given (what reports embed and `--answers report.json` reruns)."""

    def given(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.data))

    def with_changes(self, index: int, changes: Mapping[str, Any], where: str = "what-if") -> LifecycleAnswers:
        """The lifecycle with phase `index`'s answers changed (dotted key → value, None to remove): the budget in
        the shared table, the rest in the phase's own table (a phase's keys win over the shared ones). Validated as
        a file is; InputError names the phase and field."""
        data = self.given()
        phase = data["phase"][index - 1]
        for dotted, value in changes.items():
            section = dotted.split(".")[0]
            target = data if section in SHARED_ONLY else phase
            put_dotted(target, dotted, value)
            if value is None and target is phase and section in data:
                put_dotted(data, dotted, None)  # removed from the phase: the shared value would come back merged
        return parse_lifecycle(data, where)

    def to_toml(self) -> str:
        import tomli_w

        header = "# gpuadvisor lifecycle answers file: reopen with `gpuadvisor --answers FILE` (format: see README)\n"
        return header + tomli_w.dumps(self.given())

    @property
    def lifetime_years(self) -> float:
        return float(self.phases[0].answers.deployment.lifetime_years)

    @property
    def horizon_months(self) -> float:
        """The stated horizon, else the hardware's life (purchases are amortized over it)."""
        h = self.settings.horizon_months
        return float(h) if h is not None else self.lifetime_years * 12.0


def is_lifecycle(data: Mapping[str, Any]) -> bool:
    """Whether answers data is a lifecycle file (it has `[[phase]]` tables)."""
    return "phase" in data


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _model_ref(value: str, where: str, index: int, names: list[str | None]) -> int:
    """The 1-based index of the earlier phase a `model = "phase:…"` names; InputError naming the field otherwise."""
    ref = value[len(MODEL_REF_PREFIX):].strip()
    listing = ", ".join(f"{i + 1} '{n}'" if n else f"{i + 1}" for i, n in enumerate(names)) or "none"
    target: int | None = None
    if ref.isdigit():
        target = int(ref)
    elif ref in names:
        target = names.index(ref) + 1
    if target is None or not 1 <= target < index:
        raise InputError(f"{where}: phase[{index}].model: {value!r} names no earlier phase (earlier phases: "
                         f"{listing}); write model = \"phase:N\" with N from 1, or the phase's name")
    return target


def parse_lifecycle(data: Mapping[str, Any], where: str = "answers") -> LifecycleAnswers:
    """Validate a lifecycle file: every problem names the phase, the field and the file."""
    phases_raw = data.get("phase")
    if not isinstance(phases_raw, list) or not phases_raw:
        raise InputError(f"{where}: phase: must be a list of [[phase]] tables (at least one)")
    if len(phases_raw) > MAX_PHASES:
        raise InputError(f"{where}: phase: {len(phases_raw):,} [[phase]] tables; a lifecycle holds at most "
                         f"{MAX_PHASES} (a year of monthly phases): give a repeated workload once with "
                         "runs_per_month and months, or plan the rest in a second file")
    if not all(isinstance(p, Mapping) for p in phases_raw):
        raise InputError(f"{where}: phase: must be a list of [[phase]] tables (at least one)")
    misplaced = [k for k in data if k not in (*SHARED_SECTIONS, "phase", "lifecycle")]
    if misplaced:
        raise InputError(f"{where}: {misplaced[0]}: in a file with [[phase]] tables each phase holds its own "
                         f"{misplaced[0]}; the top level holds only what all phases share: "
                         f"{', '.join(SHARED_SECTIONS)} and [lifecycle]")
    try:
        settings = LifecycleSettings.model_validate(data.get("lifecycle", {}))
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, f"{where}: lifecycle")) from None
    shared = {k: data[k] for k in SHARED_SECTIONS if k in data}
    phases: list[Phase] = []
    names: list[str | None] = []
    models: list[Any] = []
    for n, raw in enumerate(phases_raw, start=1):
        here = f"{where}: phase[{n}]"
        if "budget" in raw:
            raise InputError(f"{here}: budget: the budget is shared by all phases: set [budget] at the top level")
        if "workload" not in raw:
            raise InputError(f"{here}: workload: every phase names its workload (training | finetune | inference)")
        own = {k: raw[k] for k in PHASE_KEYS if k in raw}
        try:
            ps = PhaseSettings.model_validate(own)
        except ValidationError as exc:
            raise InputError(describe_validation_error(exc, here)) from None
        body = {k: v for k, v in raw.items() if k not in PHASE_KEYS}
        model_from = None
        model = body.get("model")
        if isinstance(model, str):
            if not model.startswith(MODEL_REF_PREFIX):
                raise InputError(f"{here}: model: a phase's model is a [model] table or a reference to an earlier "
                                 f"phase, \"phase:N\" (got {model!r})")
            model_from = _model_ref(model, where, n, names)
            body["model"] = copy.deepcopy(models[model_from - 1])
        merged = _merge(shared, body)
        answers = parse_answers(merged, here)
        if ps.runs_per_month is not None and answers.workload == "inference":
            raise InputError(f"{here}: runs_per_month: only a training or fine-tuning phase repeats in runs")
        name = ps.name or f"{answers.workload}"
        if ps.name is not None and ps.name in names:
            raise InputError(f"{here}: name: {ps.name!r} is the name of an earlier phase too")
        names.append(ps.name)
        models.append(body.get("model", {}))
        phases.append(Phase(index=n, name=name, answers=answers, settings=ps, model_from=model_from))
    return LifecycleAnswers(phases=tuple(phases), settings=settings, shared=shared, data=copy.deepcopy(dict(data)))


def load_any(path: Path) -> Answers | LifecycleAnswers:
    """An answers file of one workload, or a lifecycle file ([[phase]] tables), validated."""
    data, text = read_answers_source(path)
    if is_lifecycle(data):
        return parse_lifecycle(data, str(path))
    return parse_answers(data, str(path), text)


def parse_any(data: Mapping[str, Any], where: str = "answers") -> Answers | LifecycleAnswers:
    """`parse_answers` or `parse_lifecycle`, by the shape of the data."""
    return parse_lifecycle(data, where) if is_lifecycle(data) else parse_answers(dict(data), where)


def lifecycle_file_model() -> type[BaseModel]:
    """A model of the lifecycle file for its JSON Schema (`gpuadvisor schema lifecycle`); validation itself is
    `parse_lifecycle`, which also resolves the phase references and names the phase in its messages."""
    from pydantic import create_model

    from gpuadvisor.rules.inputs.answers import ModelAnswer

    own = {name: (info.annotation, info) for name, info in PhaseSettings.model_fields.items()}
    fields = {name: (info.annotation, info) for name, info in Answers.model_fields.items()
              if name not in ("budget", "model")}
    ref = Field(default=None, description='a [model] table, or "phase:N" / "phase:NAME": the model an earlier '
                                          "phase trains (N from 1)")
    phase = create_model("Phase", __config__=ConfigDict(extra="forbid"),  # type: ignore[call-overload]
                         model=(ModelAnswer | str | None, ref), **own, **fields)
    shared = {name: (info.annotation, info) for name, info in Answers.model_fields.items()
              if name in SHARED_SECTIONS}
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        "LifecycleFile", __config__=ConfigDict(extra="forbid"),
        phase=(list[phase], Field(min_length=1, max_length=MAX_PHASES,
                                  description="the workloads, in order: each holds the fields of a one-workload "
                                              f"answers file (no budget) and its own; at most {MAX_PHASES}")),
        lifecycle=(LifecycleSettings, Field(default_factory=LifecycleSettings)), **shared)
    return model
