"""Rule packs: rules as TOML data, compiled to durable-rules JSON and linted at load.

Format (one file per pack)::

    pack = "core"                     # pack id, unique across the loaded packs
    description = "…"                 # optional

    [[rule]]
    id = "W3"                         # unique across all loaded packs; [A-Za-z0-9][A-Za-z0-9_.:-]*
    heuristic = "W3"                  # optional: HEURISTICS.md id or a user's own id ("" when absent)
    title = "Consumer GPUs for NVLink-dependent work"          # required
    explain = "Longer why-text shown in explanations."         # optional
    stratum = 3                       # engine priority 0..65535, lower fires first; default 10
    source = { document = "doc-002", section = "Common Mistakes › …" }   # optional; section optional

    [rule.when]                       # alias = pattern; several aliases = a join of several DISTINCT facts
    option = { kind = "option", interconnect_kind = "pcie", tensor_parallel = { gt = 1 } }
    stage  = { kind = "answer", key = "stage", value = { in = ["learning", "prototyping"] } }

    [rule.then]
    action = "warn"                   # warn | advise | rule_out | add_cost | derive | call
    severity = "warning"              # warn/advise (required there): info | warning | critical
    target = "option"                 # alias whose fact has a `ref`; rule_out/add_cost: required, warn/advise:
                                      # optional; the conclusion carries target = that ref ("" when absent)
    part = "engineering"              # add_cost only (required): the cost part (see rules/pricing/decision_cost.py)
    usd = "{port.usd}"                # add_cost only (required): dollars, a number or one {alias.field}
    message = "{option.accelerator_name}: … {option.memory_gb_per_gpu:.1f} GB"
                                      # warn/advise/rule_out/add_cost: required; call: optional (ctx.render())
    fact = { kind = "profile_flag", name = "moe", value = "{model.moe}" }   # derive only (required)
    call = "kv_cache"                 # call only: name of a Python callback (required)

    [[rule.example]]                  # optional, any number; `expect` = "fire" | "quiet", other keys are free
    expect = "fire"                   # and interpreted by the caller's example runner
    answers = { workload = "inference" }

Patterns. Each alias maps to a table that must test `kind` with a plain string; the kind must be in `fact_schemas`
and every tested field must be one of its fields (`kind` is always allowed, `id`/`sid` never). A field's condition is
either a plain value (equality) or a table of operators: `eq`, `ne`, `gt`, `gte`, `lt`, `lte` (numbers only), `in`,
`not_in` (non-empty lists), `exists` (true/false). Several operators on one field all apply (`{ gte = 2, lt = 8 }`).
A string `"@alias.field"` (plain or with `eq`) joins on equality with another alias's field; any other operator with a
reference is refused (durable-rules crashes on cross-fact comparisons, gotcha G14: do such maths in a `call` rule).
`"@@x"` is the literal string "@x".

Semantics inherited from the engine, worth knowing when writing conditions:
- conditions only see scalar fields (strings, numbers, booleans); list/table fields and None look absent;
- `ne`, `not_in` and comparisons are false when the field is absent (use `exists` to test presence);
- the engine coerces on comparison: `1`, `1.0`, `"1"` and `true` can compare equal, and `"20" > 10` holds, so keep
  each field's type consistent;
- within a stratum the firing order is unspecified; a rule should only rely on facts of lower strata being complete.

Generic actions build their conclusions (see `actions.py` for the shapes); `call` runs a named Python callback as
`then(ctx, **facts_by_alias)`. Templates (`message`, string values of a derive `fact`) may only use `{alias.field}`
and `{alias.field:format}` with aliases of the rule and fields of their kinds; `{{`/`}}` are literal braces. A derive
value that is exactly one `{alias.field}` copies the value with its type (a boolean stays a boolean).

Loading lints everything above and reports every problem as `file:line: rule 'ID': field.path: message` in one
`PackError`. Line numbers are found by searching the file text and may point at the enclosing table.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.budget import PACK
from gpuadvisor.knowledge.files import PACK_MAX_BYTES, FileReadError, read_text_file
from gpuadvisor.knowledge.nesting import NestingError
from gpuadvisor.knowledge.parsecache import parse_toml
from gpuadvisor.rules.engine.actions import ACTIONS, SEVERITIES, ActionSpec, build_then
from gpuadvisor.rules.engine.conditions import compile_when
from gpuadvisor.rules.engine.errors import FactError, PackError, PackProblem, RuleDefinitionError, TemplateError
from gpuadvisor.rules.engine.model import DEFAULT_STRATUM, Callback, Example, Rule, Source
from gpuadvisor.rules.engine.safety import MAX_STRATUM, RULE_ID, engine_definition
from gpuadvisor.rules.engine.templates import Template, parse_template
from gpuadvisor.rules.engine.values import FIELD_NAME, RESERVED_KEYS, check_scalar
from gpuadvisor.rules.sizing.cost import COST_PARTS

TOP_KEYS = ("pack", "description", "rule")
RULE_KEYS = ("id", "heuristic", "title", "explain", "stratum", "source", "when", "then", "example")
SOURCE_KEYS = ("document", "section")
# action -> (required keys, optional keys) of [rule.then], besides `action`
ACTION_KEYS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    "warn": (frozenset({"severity", "message"}), frozenset({"target"})),
    "advise": (frozenset({"severity", "message"}), frozenset({"target"})),
    "rule_out": (frozenset({"target", "message"}), frozenset()),
    "add_cost": (frozenset({"target", "part", "usd", "message"}), frozenset()),
    "derive": (frozenset({"fact"}), frozenset()),
    "call": (frozenset({"call"}), frozenset({"message"})),
}
THEN_KEYS = ("action", "severity", "target", "part", "usd", "message", "fact", "call")
"""The parts of a decision's cost (rules/pricing/decision_cost.py) an add_cost rule may add to."""
REMOVED_ACTIONS = {"adjust_score": "adjust_score was removed: options are ranked by what they cost in dollars, not "
                                   "by points; add a priced cost (add_cost), a constraint (rule_out) or advice "
                                   "(advise)"}
_TOML_LINE = re.compile(r"at line (\d+)")
_RULE_HEADER = re.compile(r"^\s*\[\[\s*rule\s*\]\]")
_EXAMPLE_HEADER = re.compile(r"^\s*\[\[\s*rule\s*\.\s*example\s*\]\]")


class _Lines:
    """Finds the line of a rule or of a key inside it by searching the file text (tomllib gives no positions)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.rule_starts = [i for i, line in enumerate(self.lines) if _RULE_HEADER.match(line)]

    def block(self, rule_index: int | None) -> tuple[int, int]:
        if rule_index is None or rule_index >= len(self.rule_starts):
            return 0, len(self.lines)
        start = self.rule_starts[rule_index]
        end = self.rule_starts[rule_index + 1] if rule_index + 1 < len(self.rule_starts) else len(self.lines)
        return start, end

    def rule_line(self, rule_index: int) -> int | None:
        return self.rule_starts[rule_index] + 1 if rule_index < len(self.rule_starts) else None

    def find(self, rule_index: int | None, path: Sequence[str]) -> int | None:
        """1-based line of the deepest component of `path` found in order inside the rule's block."""
        start, end = self.block(rule_index)
        found: int | None = None
        pos = start
        for part in path:
            key = re.compile(r"(?:^|[\s{,.\[])\"?" + re.escape(part) + r"\"?\s*(?:=|\]|\.)")
            hit = next((i for i in range(pos, end) if key.search(self.lines[i])), None)
            if hit is None:
                break
            found = pos = hit
        if found is None:
            return start + 1 if rule_index is not None and rule_index < len(self.rule_starts) else None
        return found + 1

    def example_line(self, rule_index: int, example_index: int) -> int | None:
        start, end = self.block(rule_index)
        heads = [i for i in range(start, end) if _EXAMPLE_HEADER.match(self.lines[i])]
        if example_index < len(heads):
            return heads[example_index] + 1
        return self.find(rule_index, ["example"])


class _PackLinter:
    """Lints and compiles one pack file, collecting problems instead of stopping at the first."""

    def __init__(
        self,
        file: str,
        text: str,
        callbacks: Mapping[str, Callback],
        schemas: Mapping[str, Collection[str]],
    ) -> None:
        self.file = file
        self.lines = _Lines(text)
        self.callbacks = callbacks
        self.schemas = schemas
        self.problems: list[PackProblem] = []
        self.pack_id = ""

    def problem(self, rule_index: int | None, rule_id: str | None, path: Sequence[str], message: str) -> None:
        line = self.lines.find(rule_index, path) if path or rule_index is not None else None
        self.problems.append(PackProblem(self.file, line, rule_id, ".".join(path) or None, message))

    def lint(self, data: Mapping[str, Any]) -> list[Rule]:
        for key in data:
            if key not in TOP_KEYS:
                self.problem(None, None, [key], f"unknown top-level key (allowed: {', '.join(TOP_KEYS)})")
        pack = data.get("pack")
        if not isinstance(pack, str) or not RULE_ID.match(pack):
            self.problem(None, None, ["pack"], 'required: the pack id, a string like "core"')
        else:
            self.pack_id = pack
        if not isinstance(data.get("description", ""), str):
            self.problem(None, None, ["description"], "must be a string")
        raw_rules = data.get("rule", [])
        if not isinstance(raw_rules, list) or not all(isinstance(r, dict) for r in raw_rules):
            self.problem(None, None, ["rule"], "rules are [[rule]] tables")
            return []
        rules = []
        for index, raw in enumerate(raw_rules):
            rule = _RuleLinter(self, index, raw).lint()
            if rule is not None:
                rules.append(rule)
        return rules


class _RuleLinter:
    """Lints one [[rule]] table and builds its Rule."""

    def __init__(self, pack: _PackLinter, index: int, raw: Mapping[str, Any]) -> None:
        self.pack = pack
        self.index = index
        self.raw = raw
        rid = raw.get("id")
        self.rule_id = rid if isinstance(rid, str) else f"#{index + 1}"
        self.ok = True
        self.kinds: dict[str, str] = {}

    def fail(self, path: Sequence[str], message: str) -> None:
        self.ok = False
        self.pack.problem(self.index, self.rule_id, path, message)

    def text(self, key: str, required: bool) -> str:
        value = self.raw.get(key)
        if value is None:
            if required:
                self.fail([key], "required")
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.fail([key], "must be a non-empty string" if required else "must be a string")
            return ""
        return value

    def lint(self) -> Rule | None:
        raw = self.raw
        for key in raw:
            if key not in RULE_KEYS:
                self.fail([key], f"unknown key (allowed: {', '.join(RULE_KEYS)})")
        rid = raw.get("id")
        if not isinstance(rid, str) or not RULE_ID.match(rid):
            self.fail(["id"], "required: a string matching [A-Za-z0-9][A-Za-z0-9_.:-]*")
        heuristic = self.text("heuristic", False)
        title = self.text("title", True)
        explain = self.text("explain", False)
        stratum = raw.get("stratum", DEFAULT_STRATUM)
        if isinstance(stratum, bool) or not isinstance(stratum, int) or not 0 <= stratum <= MAX_STRATUM:
            self.fail(["stratum"], f"must be an integer in 0..{MAX_STRATUM} (the engine priority), got {stratum!r}")
        source = self.source()
        compiled = None
        if "when" not in raw:
            self.fail(["when"], "required: [rule.when] with at least one alias = { kind = ... }")
        else:
            compiled = compile_when(raw["when"], self.pack.schemas, lambda path, msg: self.fail(path, msg))
            if compiled is not None:
                self.kinds = compiled.kinds
        then, action, severity, message = self.then(compiled is not None)
        examples = self.examples()
        if not self.ok or compiled is None or then is None or not isinstance(rid, str):
            return None
        rule = Rule(
            id=rid,
            when=compiled.patterns,
            then=then,
            stratum=stratum,
            heuristic=heuristic,
            title=title,
            explain=explain,
            source=source,
            pack=self.pack.pack_id,
            file=self.pack.file,
            line=self.pack.lines.rule_line(self.index),
            examples=examples,
            action=action,
            severity=severity,
            message=message,
        )
        try:
            engine_definition(rule)  # the engine's own safety check, so a bad rule fails at load, not at startup
        except RuleDefinitionError as e:
            self.fail(["when"], str(e))
            return None
        return rule

    def source(self) -> Source | None:
        raw = self.raw.get("source")
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.fail(["source"], 'must be a table { document = "...", section = "..." }')
            return None
        for key in raw:
            if key not in SOURCE_KEYS:
                self.fail(["source", key], f"unknown key (allowed: {', '.join(SOURCE_KEYS)})")
        doc, section = raw.get("document"), raw.get("section", "")
        if not isinstance(doc, str) or not doc:
            self.fail(["source", "document"], "required: the document id")
            return None
        if not isinstance(section, str):
            self.fail(["source", "section"], "must be a string")
            return None
        return Source(document=doc, section=section)

    def examples(self) -> tuple[Example, ...]:
        raw = self.raw.get("example", [])
        if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
            self.fail(["example"], "examples are [[rule.example]] tables")
            return ()
        out = []
        for i, ex in enumerate(raw):
            expect = ex.get("expect")
            if expect not in ("fire", "quiet"):
                self.ok = False
                line = self.pack.lines.example_line(self.index, i)
                self.pack.problems.append(
                    PackProblem(
                        self.pack.file,
                        line,
                        self.rule_id,
                        f"example[{i}].expect",
                        f'must be "fire" or "quiet", got {expect!r}',
                    )
                )
                continue
            data = {k: v for k, v in ex.items() if k != "expect"}
            out.append(Example(expect=expect, data=data, line=self.pack.lines.example_line(self.index, i)))
        return tuple(out)

    # ---- [rule.then] -------------------------------------------------------------------------------------------
    def then(self, when_ok: bool) -> tuple[Callback | None, str, str, str]:
        raw = self.raw.get("then")
        if not isinstance(raw, dict):
            self.fail(["then"], "required: [rule.then] with an action")
            return None, "", "", ""
        action = raw.get("action")
        if action not in ACTIONS:
            removed = REMOVED_ACTIONS.get(action) if isinstance(action, str) else None
            self.fail(["then", "action"], removed or f"must be one of {', '.join(ACTIONS)}, got {action!r}")
            return None, "", "", ""
        required, optional = ACTION_KEYS[action]
        for key in raw:
            if key == "action":
                continue
            if key not in THEN_KEYS:
                self.fail(["then", key], f"unknown key (allowed: {', '.join(THEN_KEYS)})")
            elif key not in required and key not in optional:
                self.fail(["then", key], f"not used by action {action!r}")
        for key in sorted(required - raw.keys()):
            self.fail(["then", key], f"required by action {action!r}")
        severity = raw.get("severity", "")
        if "severity" in raw and severity not in SEVERITIES:
            self.fail(["then", "severity"], f"must be one of {', '.join(SEVERITIES)}, got {severity!r}")
        message_text = raw.get("message", "")
        message = self.template(["then", "message"], message_text, when_ok) if "message" in raw else None
        target = self.target(raw.get("target"), when_ok) if "target" in raw else None
        part = self.part(raw.get("part")) if "part" in raw else ""
        usd = self.usd(raw.get("usd"), when_ok) if "usd" in raw else None
        fact = self.fact(raw.get("fact"), when_ok) if "fact" in raw else None
        if action == "call":
            name = raw.get("call")
            fn = self.pack.callbacks.get(name) if isinstance(name, str) else None
            if "call" in raw and (fn is None or not callable(fn)):
                self.fail(
                    ["then", "call"], f"no callback named {name!r} (known: {', '.join(sorted(self.pack.callbacks))})"
                )
            return fn, action, "", message_text if isinstance(message_text, str) else ""
        if not self.ok or not when_ok:
            return None, action, "", ""
        spec = ActionSpec(
            rule_id=str(self.raw["id"]),
            heuristic=str(self.raw.get("heuristic", "")),
            action=action,
            severity=str(severity),
            target=target,
            part=part,
            usd=usd,
            message=message,
            fact=fact,
        )
        return build_then(spec), action, str(severity), str(message_text)

    def template(self, path: list[str], text: Any, when_ok: bool) -> Template | None:
        if not isinstance(text, str):
            self.fail(path, "must be a string")
            return None
        try:
            tmpl = parse_template(text)
        except TemplateError as e:
            self.fail(path, str(e))
            return None
        if when_ok:
            for ph in tmpl.placeholders:
                kind = self.kinds.get(ph.alias)
                if kind is None:
                    self.fail(path, f"{ph}: unknown alias {ph.alias!r} (aliases: {', '.join(self.kinds)})")
                elif ph.field != "kind" and ph.field not in self.pack.schemas.get(kind, ()):
                    self.fail(path, f"{ph}: unknown field {ph.field!r} of fact kind {kind!r}")
        return tmpl

    def target(self, alias: Any, when_ok: bool) -> str | None:
        if not isinstance(alias, str):
            self.fail(["then", "target"], "must be the name of an alias of [rule.when]")
            return None
        if when_ok:
            kind = self.kinds.get(alias)
            if kind is None:
                self.fail(["then", "target"], f"unknown alias {alias!r} (aliases: {', '.join(self.kinds)})")
            elif "ref" not in self.pack.schemas.get(kind, ()):
                self.fail(["then", "target"], f"fact kind {kind!r} of alias {alias!r} has no `ref` field")
        return alias

    def part(self, value: Any) -> str:
        if value not in COST_PARTS:
            self.fail(["then", "part"], f"must be one of {', '.join(COST_PARTS)}, got {value!r}")
            return ""
        return str(value)

    def usd(self, value: Any, when_ok: bool) -> Template | float | None:
        """A number of dollars, or a template that is exactly one `{alias.field}` (the field's number)."""
        if isinstance(value, str):
            tmpl = self.template(["then", "usd"], value, when_ok)
            if tmpl is not None and tmpl.single is None:
                self.fail(["then", "usd"], "must be a number or exactly one {alias.field} (a field holding dollars)")
                return None
            return tmpl
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(["then", "usd"], f"must be a number or one {{alias.field}}, got {value!r}")
            return None
        try:
            check_scalar(value, "value")
        except FactError as e:
            self.fail(["then", "usd"], str(e).removeprefix("value: "))
            return None
        return float(value)

    def fact(self, raw: Any, when_ok: bool) -> dict[str, Any] | None:
        path = ["then", "fact"]
        if not isinstance(raw, dict):
            self.fail(path, 'must be a table { kind = "...", field = value or "{alias.field}" }')
            return None
        kind = raw.get("kind")
        if not isinstance(kind, str) or not kind or "{" in kind:
            self.fail([*path, "kind"], "required: a plain string (no template)")
            return None
        if kind not in self.pack.schemas:
            self.fail([*path, "kind"], f"unknown fact kind {kind!r}")
            return None
        out: dict[str, Any] = {}
        for key, value in raw.items():
            fpath = [*path, str(key)]
            if not isinstance(key, str) or not FIELD_NAME.match(key) or key in RESERVED_KEYS:
                self.fail(fpath, "reserved or not a plain identifier")
                continue
            if key != "kind" and key not in self.pack.schemas[kind]:
                self.fail(fpath, f"unknown field of fact kind {kind!r}")
                continue
            if isinstance(value, str) and key != "kind":
                out[key] = self.template(fpath, value, when_ok)
            else:
                out[key] = self.literal(fpath, value)
        return out

    def literal(self, path: list[str], value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.literal([*path, str(k)], v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.literal([*path, str(i)], v) for i, v in enumerate(value)]
        try:
            check_scalar(value, "value")
        except FactError as e:
            self.fail(path, str(e).removeprefix("value: "))
        return value


def _read(path: Path, problems: list[PackProblem], refresh: bool = False) -> tuple[str, dict[str, Any]] | None:
    """The pack's text and parsed document. The parse comes from the content-addressed cache the knowledge files use
    (knowledge.parsecache: tomllib is pure Python and the packs are ~40 % of a CLI run's TOML); `refresh` parses the
    text itself, as load_packs does before blaming a file whose cached document failed to lint."""
    file = str(path)
    try:
        text = read_text_file(path, what="rule pack", max_bytes=PACK_MAX_BYTES)
    except FileReadError as e:
        problems.append(PackProblem(file, None, None, None, e.reason))
        return None
    try:
        digest = hashlib.sha256(text.encode()).hexdigest()
        return text, parse_toml(text, digest, use_cache=True, source=file, refresh=refresh, budget=PACK)
    except NestingError as e:
        problems.append(PackProblem(file, e.line, None, None, e.reason))
        return None
    except tomllib.TOMLDecodeError as e:
        m = _TOML_LINE.search(str(e))
        problems.append(PackProblem(file, int(m[1]) if m else None, None, None, f"invalid TOML: {e}"))
        return None


def load_packs(
    paths: Sequence[Path],
    *,
    callbacks: Mapping[str, Callable[..., object]],
    fact_schemas: Mapping[str, Collection[str]],
) -> list[Rule]:
    """Load, lint and compile rule packs; returns their rules sorted by (stratum, id).

    `callbacks` maps the names usable in `call = "..."` to Python callables; `fact_schemas` maps every fact kind a
    pattern or a derive may use to its allowed fields. Raises PackError listing every problem found in every file.
    """
    problems: list[PackProblem] = []
    rules: list[Rule] = []
    first_rule: dict[str, Rule] = {}
    first_pack: dict[str, str] = {}
    for path in paths:
        read = _read(Path(path), problems)
        if read is None:
            continue
        text, data = read
        linter = _PackLinter(str(path), text, callbacks, fact_schemas)
        pack_rules = linter.lint(data)
        if linter.problems:  # never blame a file for a cache entry: lint a fresh parse of its text
            fresh = _read(Path(path), problems, refresh=True)
            if fresh is None:
                continue
            linter = _PackLinter(str(path), text, callbacks, fact_schemas)
            pack_rules = linter.lint(fresh[1])
        problems.extend(linter.problems)
        if linter.pack_id:
            if linter.pack_id in first_pack:
                problems.append(
                    PackProblem(
                        str(path),
                        linter.lines.find(None, ["pack"]),
                        None,
                        "pack",
                        f"duplicate pack id {linter.pack_id!r} (also in {first_pack[linter.pack_id]})",
                    )
                )
            else:
                first_pack[linter.pack_id] = str(path)
        for rule in pack_rules:
            earlier = first_rule.get(rule.id)
            if earlier is not None:
                problems.append(
                    PackProblem(
                        rule.file,
                        rule.line,
                        rule.id,
                        "id",
                        f"duplicate rule id (first defined at {earlier.file}:{earlier.line})",
                    )
                )
                continue
            first_rule[rule.id] = rule
            rules.append(rule)
    if problems:
        raise PackError(problems)
    return sorted(rules, key=lambda r: (r.stratum, r.id))
