"""What the model entry refers to, said in one line: parameters, layers and KV heads once they are known.

Runs on the UI thread: the catalog is in memory and a config.json is small, so a lookup takes well under a
millisecond (the catalog itself is loaded by a worker; until then the entry is only parsed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.tui.questionnaire.answers_state import model_answer
from gpuadvisor.tui.widgets.format import params

MAX_MATCHES = 30
"""Most matches listed under the model entry (the list shows six at a time and scrolls); a longer list says how many
more match, so the user types more of the name."""


@dataclass
class ModelLookup:
    info: str = ""
    error: str = ""
    """Set when the entry cannot be used (unknown or ambiguous name, unreadable config): blocks Next."""
    model_id: str | None = None
    matches: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        """What is shown comes from data (overlay names, a config's model_type, an error echoing the entry): through
        the one sanitiser, and shortened."""
        self.info = shorten(self.info, 400)
        self.error = shorten(self.error, 400)
        self.matches = [(mid, shorten(name)) for mid, name in self.matches]  # ids match the pattern [a-z0-9.-_]


def _shape(arch: Any) -> str:
    from gpuadvisor.rules.sizing.params import count_parameters

    count = count_parameters(arch)
    kv = "MLA latent" if arch.mla is not None else f"{arch.kv_heads} KV heads"
    active = f" ({params(count.active)} active)" if count.moe_layers else ""
    return (f"{params(count.total)} parameters{active} · {arch.num_hidden_layers} layers · {kv} · "
            f"hidden {arch.hidden_size}")


def search_models(catalog: Any, text: str) -> list[tuple[str, str]]:
    """Knowledge-base models whose id, name or alias contains every word of `text` (case-insensitive)."""
    words = text.lower().replace("_", "-").split()
    if not words:
        return []
    from gpuadvisor.knowledge.lookup import natural_key

    found: list[tuple[str, str]] = []
    for mid, model in catalog.models.items():
        hay = " ".join([mid, model.name, *model.aliases]).lower()
        if all(w in hay or w.replace("-", " ") in hay for w in words):
            found.append((mid, model.name))
    return sorted(found, key=lambda m: natural_key(m[0]))[:MAX_MATCHES]


def _find(catalog: Any, text: str) -> Any:
    """The model a loose name means (knowledge.lookup when present; else exact id/name/alias)."""
    try:
        from gpuadvisor.knowledge.lookup import find_model
    except ImportError:  # pragma: no cover - the lookup module is written by another part of the project
        key = text.strip().lower()
        for mid, model in catalog.models.items():
            if key in {mid, model.name.lower(), *(a.lower() for a in model.aliases)}:
                return model
        from gpuadvisor.knowledge.errors import UnknownNameError

        raise UnknownNameError("model", text, [m for m, _ in search_models(catalog, text)]) from None
    return find_model(catalog, text)


def lookup_model(text: str, catalog: Any | None) -> ModelLookup:
    """Describe the model entry; `catalog` None means the knowledge base is still loading."""
    from gpuadvisor.knowledge.errors import AdvisorError, AmbiguousNameError

    answer = model_answer(text)
    if not answer:
        return ModelLookup()
    if "params_b" in answer:
        return ModelLookup(info=f"{answer['params_b']:g} B parameters (a bare size: the shape is estimated)")
    if "config" in answer:
        from gpuadvisor.tui import served

        if served.current() is not None:
            return ModelLookup(error=f"model: {served.NO_SERVER_PATHS}")
        path = Path(answer["config"])
        try:
            from gpuadvisor.knowledge.hf_config import read_hf_config

            cfg = read_hf_config(path)
        except AdvisorError as exc:
            return ModelLookup(error=str(exc))
        notes = f" ({'; '.join(cfg.notes)})" if cfg.notes else ""
        return ModelLookup(info=f"{cfg.model_type} from {path.name}: {_shape(cfg.architecture)}{notes}")
    if catalog is None:
        return ModelLookup(info="looking it up as soon as the knowledge base has loaded…")
    matches = search_models(catalog, text)
    from gpuadvisor.knowledge.hf_hub import HubModel, NotCachedError, find_model_or_hub, parse_hub_id

    if parse_hub_id(text) is not None:  # a Hugging Face id: the knowledge base first, else the local cache only
        try:
            found = find_model_or_hub(catalog, text.strip(), local_only=True)
        except NotCachedError:
            return ModelLookup(info=f"Hugging Face model {text.strip()}: not cached yet, its config.json is read "
                                    "from the Hub when the consultation runs")
        except AdvisorError as exc:
            return ModelLookup(error=str(exc))
        if isinstance(found, HubModel):
            return ModelLookup(info=f"{found.spec} ({found.config.model_type}, Hugging Face cache): "
                                    f"{_shape(found.config.architecture)}")
        return ModelLookup(info=f"{found.name}: {_shape(found.architecture)}", model_id=found.id)
    try:
        model = _find(catalog, text)
    except AmbiguousNameError as exc:
        n = len(exc.candidates)
        more = f" (the first {MAX_MATCHES}: type more of the name)" if n > MAX_MATCHES else ""
        return ModelLookup(error=f"{text!r} matches {n} models: pick one below{more}",
                           matches=list(exc.candidates[:MAX_MATCHES]))
    except AdvisorError as exc:
        return ModelLookup(error=str(exc), matches=matches)
    return ModelLookup(info=f"{model.name}: {_shape(model.architecture)}", model_id=model.id)
