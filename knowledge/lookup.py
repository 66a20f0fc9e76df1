"""Resolve the loose names people type ("4090", "H100 SXM", "llama 3 8b", "Q4_K_M") to knowledge-base entries.

Order: exact id; then a normalized match of id, name or alias (case-insensitive, spaces/underscores/hyphens folded);
then a unique substring or all-tokens match. Several matches raise AmbiguousNameError listing them (so "H100" asks
which H100); none raises UnknownNameError with the closest names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from difflib import get_close_matches
from typing import TypeVar

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AmbiguousNameError, UnknownNameError
from gpuadvisor.knowledge.schema import Accelerator, Instance, Model, Precision

T = TypeVar("T")

_FOLD = re.compile(r"[\s_\-]+")
_TOKEN = re.compile(r"[a-z0-9.]+")


def normalize(text: str) -> str:
    """Case-folded with spaces, underscores and hyphens removed: 'RTX-4090' and 'rtx 4090' -> 'rtx4090'."""
    return _FOLD.sub("", text.casefold())


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


def natural_key(text: str) -> tuple[str | float, ...]:
    """Sort key reading the numbers in a name as numbers: qwen2.5-3b before qwen2.5-14b, B200 before B1000 (a
    plain sort puts 14B before 3B); text and numbers alternate, so keys always compare."""
    parts = _NUMBER.split(text.casefold())
    return tuple(float(x) if i % 2 else x for i, x in enumerate(parts))


def _tokens(text: str) -> set[str]:
    return {t.strip(".") for t in _TOKEN.findall(text.casefold()) if t.strip(".")}


def find(what: str, entries: Mapping[str, T], names: Callable[[T], Iterable[str]], query: str,
         display: Callable[[T], str]) -> T:
    """Generic lookup: `names(entry)` lists the strings an entry answers to besides its id."""
    q = query.strip()
    for key, entry in entries.items():
        if key.casefold() == q.casefold():
            return entry
    nq = normalize(q)
    if not nq:
        raise UnknownNameError(what, query, [])
    labels = {key: [key, *names(entry)] for key, entry in entries.items()}
    normalized = {key: {normalize(n) for n in ns} for key, ns in labels.items()}
    exact = [key for key, ns in normalized.items() if nq in ns]
    if not exact:
        qtokens = _tokens(q)
        exact = [key for key, ns in normalized.items()
                 if any(nq in n for n in ns) or (qtokens and qtokens <= set().union(*map(_tokens, labels[key])))]
    if len(exact) == 1:
        return entries[exact[0]]
    if exact:
        raise AmbiguousNameError(what, query, [(key, display(entries[key])) for key in sorted(exact, key=natural_key)])
    by_name = {normalize(n): key for key, ns in labels.items() for n in ns}
    close = get_close_matches(nq, list(by_name), n=8, cutoff=0.6)
    suggestions = list(dict.fromkeys(by_name[c] for c in close))[:5]
    raise UnknownNameError(what, query, suggestions)


def find_accelerator(catalog: Catalog, query: str) -> Accelerator:
    """An accelerator by id, name or alias ("nvidia-h100-sxm5", "H100 SXM", "4090", "TPU v5e")."""
    return find("accelerator", catalog.accelerators, lambda a: [a.name, *a.aliases], query, lambda a: a.name)


def find_model(catalog: Catalog, query: str) -> Model:
    """A model by id, name, alias or Hugging Face repo ("llama-3.1-8b", "meta-llama/Llama-3.1-8B")."""
    def names(m: Model) -> list[str]:
        return [m.name, *m.aliases, *([m.hf_repo, m.hf_repo.split("/")[-1]] if m.hf_repo else [])]

    return find("model", catalog.models, names, query, lambda m: m.name)


def find_precision(catalog: Catalog, query: str) -> Precision:
    """A precision by id, name or alias ("bf16", "bfloat16", "Q4_K_M", "awq")."""
    return find("precision", catalog.precisions, lambda p: [p.name, *p.aliases], query, lambda p: p.name)


def find_instance(catalog: Catalog, query: str) -> Instance:
    """A cloud instance by id or instance name ("aws-p5.48xlarge", "p5.48xlarge", "lambda 8x H100 SXM")."""
    def names(i: Instance) -> list[str]:
        return [i.instance, f"{i.provider} {i.instance}", f"{i.provider_name} {i.instance}"]

    return find("instance", catalog.instances, names, query, lambda i: f"{i.provider_name} {i.instance}")
