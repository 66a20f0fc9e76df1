"""Resolve the answers against the catalog before the engine runs: which model, which formats, which defaults.

Loose names are matched here (so an unknown model is reported with its closest names before any rule fires), and
the answers that only make sense together are checked together, naming the fields involved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AdvisorError, AmbiguousNameError, InputError, UnknownNameError
from gpuadvisor.knowledge.lookup import find_accelerator, find_model, find_precision
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.knowledge.schema import Accelerator, Architecture, Model, Precision, served_format
from gpuadvisor.rules.inputs.answers import (
    ALL_PROVIDERS,
    LOCAL_SERVING_FORMAT,
    PRODUCTION_SERVING_FORMAT,
    QLORA_BASE_FORMAT,
    Answers,
)
from gpuadvisor.rules.inputs.formats import Formats
from gpuadvisor.rules.inputs.owned_parts import variant_id

if TYPE_CHECKING:
    from gpuadvisor.knowledge.hf_hub import HubModel

DEFAULT_MODEL = "llama-3.1-8b"


@dataclass(frozen=True)
class ResolvedModel:
    """The model a consultation sizes, however the user named it."""

    id: str
    name: str
    source: str
    """Where the architecture came from, e.g. 'knowledge: models.toml llama-3.1-70b' or 'config.json at …'."""
    architecture: Architecture
    synthesized: bool = False
    published_format: str | None = None
    """Precision id the published checkpoint is stored in when it is a low-precision one (a Hub checkpoint's fp8 or
    mxfp4, a knowledge-base model's `published_weights`): served that way by default, like gpt-oss's MXFP4
    experts."""
    read_notes: tuple[str, ...] = ()
    """How the architecture was read (a config.json's fields read through aliases, a Hub snapshot's revision)."""


class Chosen(NamedTuple):
    """A value resolution chose for an answer the user did not give, and why (listed with the defaults)."""

    value: Any
    why: str


@dataclass(frozen=True)
class Resolved:
    model: ResolvedModel
    formats: Formats
    """The weights' and the KV cache's formats, chosen here once (rules/inputs/formats.py)."""
    notes: list[str] = field(default_factory=list)
    """What resolution found and says beside the defaults: a detection, how a Hub model was read, an unknown own
    GPU (one `key = …` line each)."""
    chosen: dict[str, Chosen] = field(default_factory=dict)
    """Answers resolution chose itself, by dotted key: the model when none was named, the weights format a QLoRA
    base, a published checkpoint or the stage implies."""
    owned: tuple[Accelerator, int] | None = None
    """The knowledge-base part and count of current.gpu, the hardware the user already has (None: none, or a part
    the knowledge base does not know)."""
    baseline: str | None = None
    """How the owned machine was made to run the job when the default did not fit it, for the headline: 'in AWQ
    4-bit weights, which fit them where BF16 does not' (rules/owned/baseline.py); None when nothing was changed."""

    @property
    def weights(self) -> Precision:
        return self.formats.weights

    @property
    def kv_cache(self) -> Precision:
        return self.formats.kv_cache


def resolve(answers: Answers, catalog: Catalog) -> Resolved:
    from gpuadvisor.rules.inputs.current_gpu import detection_note

    notes: list[str] = []
    chosen: dict[str, Chosen] = {}
    check_providers(answers, catalog)
    model = _model(answers, catalog, notes, chosen)
    weights = _published_weights(answers, catalog, model, chosen) or _weights(answers, catalog, chosen)
    kv = _lookup_precision(catalog, answers.precision.kv_cache, "precision.kv_cache")
    if "kv_cache" not in kv.uses:
        raise InputError(f"precision.kv_cache = {answers.precision.kv_cache!r}: {kv.name} is not a KV-cache format "
                         f"(use fp16, bf16, fp8 or int8)")
    note = detection_note(answers)
    if note:
        notes.append(note)
    formats = Formats.chosen(weights, kv, catalog.precisions, training=answers.workload != "inference",
                             weights_given="weights" in answers.precision.model_fields_set)
    return Resolved(model=model, formats=formats, notes=notes, chosen=chosen, owned=_owned(answers, catalog, notes))


def check_providers(answers: Answers, catalog: Catalog) -> None:
    """Every provider named must be one the advisor knows (the answers' list, or one the knowledge base and its
    overlays price): a misspelt `aws ` or `lamda` would otherwise rule out every offer without a word."""
    known = {*ALL_PROVIDERS, *(i.provider for i in catalog.instances.values()),
             *(t.provider for t in catalog.free_tiers.values())}
    unknown = [p for p in answers.deployment.providers if p not in known]
    if unknown:
        more = f" (and {len(unknown) - 1:,} more)" if len(unknown) > 1 else ""
        raise InputError(f"deployment.providers: unknown provider {shorten(repr(unknown[0]))}{more}; known: "
                         f"{', '.join(sorted(known))}")


def _owned(answers: Answers, catalog: Catalog, notes: list[str]) -> tuple[Accelerator, int] | None:
    """current.gpu as a knowledge-base part; an unknown part is named in the notes, never replaced by a guess."""
    c = answers.current
    name = (c.gpu or "").strip()
    if not name or name.lower() in {"auto", "none"}:
        return None
    if name in catalog.accelerators:
        acc = catalog.accelerators[name]
    else:
        try:
            acc = find_accelerator(catalog, name)
        except AdvisorError as exc:
            notes.append(f"current.gpu = {name!r}: not offered as your own hardware ({exc})")
            return None
    if c.gpu_memory_gb is not None:  # the memory size you have (rules/inputs/owned_parts.py), when the catalog holds it
        acc = catalog.accelerators.get(variant_id(acc, c.gpu_memory_gb), acc)
    return acc, c.gpu_count or 1


def _model(answers: Answers, catalog: Catalog, notes: list[str], chosen: dict[str, Chosen]) -> ResolvedModel:
    m = answers.model
    if m.config is not None:
        from gpuadvisor.knowledge.hf_config import read_hf_config

        path = Path(m.config).expanduser()
        cfg = read_hf_config(path)
        return ResolvedModel(id=f"config:{path.name}", name=f"{path.parent.name or path.name} (config.json)",
                             source=f"your config.json at {path}", architecture=cfg.architecture,
                             read_notes=tuple(cfg.notes))
    if m.params_b is not None:
        from gpuadvisor.rules.sizing.shape import synthesize_architecture

        try:
            arch = synthesize_architecture(m.params_b * 1e9)
        except ValueError as exc:
            raise InputError(f"model.params_b = {m.params_b:g}: {exc}") from None
        return ResolvedModel(id=f"size:{m.params_b:g}b", name=f"{m.params_b:g}B-parameter model",
                             source=f"your answer model.params_b = {m.params_b:g} (Llama-like shape synthesized)",
                             architecture=arch, synthesized=True)
    name = m.name
    if name is None:
        name = DEFAULT_MODEL
        chosen["model.name"] = Chosen(DEFAULT_MODEL, "no model given")
    entry: Model | HubModel | None = _catalog_model(catalog, name)
    if entry is None:
        from gpuadvisor.knowledge.hf_hub import find_model_or_hub

        try:
            entry = find_model_or_hub(catalog, name)
        except AdvisorError as exc:
            raise InputError(f"model.name: {exc}") from None
    if not isinstance(entry, Model):
        from gpuadvisor.knowledge.hf_hub import describe_hub, stored_format

        _hub_notes(entry, notes)
        return ResolvedModel(id=f"hf:{entry.spec}", name=entry.spec, source=describe_hub(entry),
                             architecture=entry.config.architecture, published_format=stored_format(entry),
                             read_notes=(describe_hub(entry), *entry.notes))
    return ResolvedModel(id=entry.id, name=entry.name, source=f"knowledge: models.toml {entry.id}",
                         architecture=entry.architecture, published_format=entry.published_weights)


def _catalog_model(catalog: Catalog, name: str) -> Model | None:
    """The knowledge-base model `name` names, when it has no @revision (one always goes to the Hub), else None.

    The common case, found without importing the Hub reader (knowledge.hf_hub and hf_config, ~2.5 ms of every
    `recommend`); None sends the name through `find_model_or_hub`, which looks it up again the same way and then
    tries the Hub, or raises the same unknown/ambiguous error with its suggestions."""
    if "@" in name:
        return None
    try:
        return find_model(catalog, name)
    except (UnknownNameError, AmbiguousNameError):
        return None


def _hub_notes(entry: HubModel, notes: list[str]) -> None:
    """What reading a Hub model decided: where the config came from, and its stored count against the sized one."""
    from gpuadvisor.rules.sizing.params import count_parameters

    sized = count_parameters(entry.config.architecture).total
    line = f"model.name = {entry.spec}: sized from its Hugging Face config.json ({sized:,} parameters)"
    if entry.parameters is not None and abs(entry.parameters - sized) > 0.01 * sized:
        line += (f"; the checkpoint stores {entry.parameters:,} (quantization scales, a vision tower or extra "
                 "prediction layers the text model does not use)")
    notes.append(line)
    notes.extend(f"model.name = {entry.spec}: {n}" for n in entry.notes)


def _lookup_precision(catalog: Catalog, name: str, field_name: str) -> Precision:
    try:
        return find_precision(catalog, name)
    except AdvisorError as exc:
        raise InputError(f"{field_name}: {exc}") from None


def _published_weights(answers: Answers, catalog: Catalog, model: ResolvedModel,
                       chosen: dict[str, Chosen]) -> Precision | None:
    """Serving a model published with its routed experts in a format of their own (gpt-oss: MXFP4) defaults to that
    checkpoint rather than a bf16 copy; None when the user chose a format, or trains, or the model has none."""
    native = served_format(model.architecture, model.published_format)
    if native is None or answers.workload != "inference" or "weights" in answers.precision.model_fields_set:
        return None
    what = "its experts" if model.architecture.expert_weights_format else "its weights"
    chosen["precision.weights"] = Chosen(native, f"{model.name} is published with {what} in {native}")
    return _lookup_precision(catalog, native, "precision.weights")


def _weights(answers: Answers, catalog: Catalog, chosen: dict[str, Chosen]) -> Precision:
    given = "weights" in answers.precision.model_fields_set
    method = answers.method
    implied = answers.implied().get("precision.weights")
    if implied is not None and not given:
        why = {QLORA_BASE_FORMAT: "QLoRA default: 4-bit NormalFloat base",
               PRODUCTION_SERVING_FORMAT: "production serving: FP8 where the part runs it, as NVIDIA NIM's H100 "
                                          "profiles; BF16 on parts without FP8",
               LOCAL_SERVING_FORMAT: "a local model: the 4-bit GGUF K-quant Ollama and LM Studio serve by default"}
        chosen["precision.weights"] = Chosen(implied, why.get(implied, "default"))
        return _lookup_precision(catalog, implied, "precision.weights")
    p = _lookup_precision(catalog, answers.precision.weights, "precision.weights")
    problem = weights_problem(p, method)
    if problem is not None:
        said = f"finetune.method = {method!r} with " if method in ("lora", "qlora") else ""
        raise InputError(f"{said}precision.weights = {answers.precision.weights!r}: {problem}")
    return p


QLORA_MAX_BITS = 4.6
"""A QLoRA base is 4-bit: NF4 is 4.127 bits per weight with double quantization and 4.5 without; 4.6 admits both
and no 5-bit or wider format."""


def weights_problem(p: Precision, method: str | None) -> str | None:
    """Why weights in format `p` cannot serve `method` (None or "none": inference; "full", "lora", "qlora"), or None.
    One rule for the consultation and `gpuadvisor estimate`; each caller names the fields its user typed."""
    if "weights" not in p.uses:
        return f"{p.name} is not a weight format (try bf16, fp8, awq, nf4, q4_k_m)"
    if method == "qlora" and p.bits_per_weight > QLORA_MAX_BITS:
        return "QLoRA keeps the frozen base weights in 4-bit (nf4); use method lora for a 16-bit base"
    if method == "lora" and p.bits_per_weight < 8 and p.training_recipe is None:
        return "LoRA on a 4-bit base is QLoRA (use method qlora)"
    if method == "full" and "training" not in p.uses:
        return (f"full training needs a training format (bf16, fp16, fp32, fp8, or nvfp4 / mxfp4 with their "
                f"published recipes), not {p.name}; for adapters on a quantized base use workload finetune with "
                "method qlora")
    return None
