"""Restricted message templates: `{alias.field}` and `{alias.field:spec}` over the facts a rule matched.

Only dict lookups of one field of one matched fact are allowed: no attribute or index access, no positional `{0}`,
no conversions (`!r`), no nested fields in the spec, and the spec itself a standard one with a width of at most
`MAX_WIDTH` and a precision of at most `MAX_PRECISION` (so a message can never ask for gigabytes). `{{` and `}}` are
literal braces. This keeps user-written rule packs from reaching into Python objects, and lets the pack lint check
every alias and field at load time.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.rules.engine.errors import TemplateError

_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\Z")
_SPEC = re.compile(r"(?:[^{}]?[<>=^])?[+\- ]?z?#?0?(?P<width>\d+)?[,_]?(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?\Z",
                   re.DOTALL)
MAX_WIDTH = 200
"""Widest field a template may ask for: `{x.name:>999999999}` would ask for gigabytes before failing."""
MAX_PRECISION = 20


@dataclass(frozen=True)
class Placeholder:
    alias: str
    field: str
    spec: str

    def __str__(self) -> str:
        return f"{{{self.alias}.{self.field}{':' + self.spec if self.spec else ''}}}"


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text and placeholders, alternating."""

    text: str
    parts: tuple[str | Placeholder, ...]

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(p for p in self.parts if isinstance(p, Placeholder))

    @property
    def single(self) -> Placeholder | None:
        """The placeholder when the template is exactly one `{alias.field}` without spec (its value keeps its type)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Placeholder) and not self.parts[0].spec:
            return self.parts[0]
        return None

    def value(self, facts: Mapping[str, Mapping[str, Any]]) -> Any:
        """The raw value of a single-placeholder template, else the rendered string."""
        single = self.single
        return lookup(single, facts) if single is not None else self.render(facts)

    def render(self, facts: Mapping[str, Mapping[str, Any]]) -> str:
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = lookup(part, facts)
            try:
                out.append(format(value, part.spec))
            except (ValueError, TypeError) as e:
                raise TemplateError(f"template field {part}: cannot format {value!r}: {e}") from e
        return "".join(out)


def _check_spec(field_name: str, spec: str) -> None:
    """Only a standard format spec with a bounded width and precision (checked at load, not when a rule fires)."""
    m = _SPEC.match(spec)
    shown = spec if len(spec) <= 40 else spec[:39] + "…"
    if not m:
        raise TemplateError(f"placeholder {{{field_name}:{shown}}}: not a format spec such as ',.1f', '>8' or '.0%'")
    if m["width"] and (len(m["width"]) > 3 or int(m["width"]) > MAX_WIDTH):
        raise TemplateError(f"placeholder {{{field_name}:{shown}}}: width over {MAX_WIDTH}")
    if m["precision"] and (len(m["precision"]) > 2 or int(m["precision"]) > MAX_PRECISION):
        raise TemplateError(f"placeholder {{{field_name}:{shown}}}: precision over {MAX_PRECISION}")


def lookup(ph: Placeholder, facts: Mapping[str, Mapping[str, Any]]) -> Any:
    """The value of `alias.field`; a missing alias, field or a None value is an error naming the field."""
    fact = facts.get(ph.alias)
    if fact is None:
        raise TemplateError(f"template field {ph.alias}.{ph.field}: no matched fact named {ph.alias!r}")
    value = fact.get(ph.field)
    if value is None:
        raise TemplateError(f"template field {ph.alias}.{ph.field}: the {fact.get('kind')!r} fact has no value for it")
    return value


def parse_template(text: str) -> Template:
    """Parse `text`; raises TemplateError saying which placeholder is not allowed."""
    if not isinstance(text, str):
        raise TemplateError(f"a template must be a string, got {type(text).__name__}")
    parts: list[str | Placeholder] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as e:
        raise TemplateError(f"malformed template {shorten(repr(text))}: {e}") from e  # a hostile one is long
    for literal, field_name, spec, conversion in parsed:
        if literal:
            parts.append(literal)
        if field_name is None:
            continue
        if conversion is not None:
            raise TemplateError(f"placeholder {{{field_name}!{conversion}}}: conversions are not allowed")
        m = _FIELD.match(field_name)
        if not m:
            raise TemplateError(
                f"placeholder {{{field_name}}}: only {{alias.field}} or {{alias.field:format}} is allowed"
            )
        if spec and ("{" in spec or "}" in spec):
            raise TemplateError(f"placeholder {{{field_name}:{spec}}}: nested fields in a format spec are not allowed")
        if spec:
            _check_spec(field_name, spec)
        parts.append(Placeholder(m[1], m[2], spec or ""))
    return Template(text=text, parts=tuple(parts))
